"""Shared fixtures for the AWS connector: fake credentials, a moto server over HTTP, fixture data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

#: Fake credentials; test_secrets greps every output for them.
ACCESS_KEY = "AKIAFINOPSTESTKEY0001"
SECRET_KEY = "finopsTestSecretKey/DoNotLeak+0123456789abc"

#: An in-process GPU lookup implementing the connector's ``gpu_of`` interface for the fixtures.
FIXTURE_GPUS = {"p5.48xlarge": ("h100-sxm", 8), "p4d.24xlarge": ("a100-sxm-40gb", 8), "g6.xlarge": ("l4", 1),
                "g6e.xlarge": ("l40s", 1), "p5en.48xlarge": ("h200", 8)}


@pytest.fixture
def gpu_of():
    """instance type -> (GPU model, count) or None, as the connector's ``gpu_of`` parameter expects."""
    return FIXTURE_GPUS.get


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def secrets() -> tuple[str, str]:
    return ACCESS_KEY, SECRET_KEY


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials and no shared config: nothing on this machine is used, nothing real is reached."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_RETRY_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")


@pytest.fixture(scope="session")
def moto_url() -> str:
    """One moto server for the session, spoken to over HTTP by the real boto3 clients."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def moto(aws_env: None, moto_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``AWS_ENDPOINT_URL`` pointing at the moto server, with its state reset."""
    import urllib.request

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    urllib.request.urlopen(urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")).read()
    return moto_url
