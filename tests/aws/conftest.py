"""Shared fixtures for the AWS connector: fake credentials, a moto server over HTTP, fixture data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

#: Fake credentials; test_secrets greps every output for them.
ACCESS_KEY = "AKIAFINOPSTESTKEY0001"
SECRET_KEY = "finopsTestSecretKey/DoNotLeak+0123456789abc"

@pytest.fixture
def gpu_of():
    """instance type -> (GPU model, count) or None: the instance catalog, as pull_bills uses it."""
    from connectors.aws import catalog_gpu

    return catalog_gpu


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


class ScriptedAwsJsonServer:
    """A tiny local HTTP server speaking the AWS JSON protocol (``X-Amz-Target`` + JSON body).

    ``responses`` is consumed in order, one ``(status, body)`` per request; every request's target and
    JSON body are recorded in ``requests`` (with the raw headers, to check what went over the wire)."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.responses: list[tuple[int, dict]] = []
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                import json

                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"target": self.headers.get("X-Amz-Target"), "body": body,
                                        "headers": dict(self.headers)})
                status, payload = server.responses.pop(0) if server.responses else (500, {"__type": "NoMore"})
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def json_server(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> ScriptedAwsJsonServer:
    """A scripted AWS JSON server, with ``AWS_ENDPOINT_URL`` pointing at it."""
    server = ScriptedAwsJsonServer()
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
    yield server
    server.close()
