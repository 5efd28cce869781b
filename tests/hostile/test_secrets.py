"""Secrets in URLs are redacted wherever a URL is shown: the user information before ``@`` and the values of
query or fragment parameters named as secrets, in every error message and on the review."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from finops.errors import redacted

from .desk import MONTH, SERVING_CSV, Case, bill, check, plan, reconcile_argv, text_file

SECRETS = ("hunter2", "tok-123", "sig-456", "cred-789", "key-000")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _url(port: int | str) -> str:
    return f"http://bob:hunter2@127.0.0.1:{port}/prom?access_token=tok-123&sig=sig-456#key=key-000"


def _metrics_free_reconcile(folder: Path, url: str) -> list[object]:
    return reconcile_argv(folder, plan(folder), bill(folder), extra=["--prometheus", url,
                                                                     "--serving", _serving(folder)])


def _serving(folder: Path) -> Path:
    return text_file(folder, "serving.csv", SERVING_CSV)


CASES: dict[str, Case] = {
    "reconcile --prometheus that refuses, with a password and tokens": Case(
        lambda d: _metrics_free_reconcile(d, _url(_closed_port())), hidden=SECRETS, names=("127.0.0.1",)),
    "plan next --prometheus that refuses, with a password and tokens": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--serving",
                   _serving(d), "--prometheus", _url(_closed_port()), "--out", d / "next.xlsx"],
        hidden=SECRETS, names=("127.0.0.1",)),
    "--prometheus whose port is not a number, with a password": Case(
        lambda d: _metrics_free_reconcile(d, _url("9o90")), hidden=SECRETS, names=("--prometheus",)),
    "--prometheus that is not http, with a password": Case(
        lambda d: _metrics_free_reconcile(d, "ftp://bob:hunter2@h/?X-Amz-Credential=cred-789"),
        hidden=SECRETS, names=("--prometheus",)),
    "FINOPS_PRICE_BOOK a URL with a password (was shown: a path keeps one slash of https://)": Case(
        lambda d: ["tco", "--no-owned", "--json"], env={"FINOPS_PRICE_BOOK": _url(443)}, hidden=SECRETS,
        names=("price book", "does not exist")),
    "tco --price-book a URL with a password": Case(
        lambda d: ["tco", "--no-owned", "--json", "--price-book", _url(443)], hidden=SECRETS,
        names=("price book", "does not exist")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_secret_of_a_url_is_shown(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("connectors.prometheus.transport._BACKOFF_S", 0.01)
    check(CASES[name], tmp_path, capsys, monkeypatch)


#: text -> what is shown (secrets from the signing schemes of S3, GCS, Azure SAS, OAuth and API keys).
REDACTIONS = {
    "https://bob:hunter2@h:9090/x": "https://***@h:9090/x",
    "https://ghp_abc@github.com/o/r": "https://***@github.com/o/r",
    "s3://b/k?X-Amz-Algorithm=A&X-Amz-Credential=AK%2F1&X-Amz-Signature=ff&X-Amz-Security-Token=t":
        "s3://b/k?X-Amz-Algorithm=A&X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***",
    "https://storage.googleapis.com/b/o?X-Goog-Signature=aa&X-Goog-Credential=c&alt=media":
        "https://storage.googleapis.com/b/o?X-Goog-Signature=***&X-Goog-Credential=***&alt=media",
    "https://a.blob.core.windows.net/c?sv=2022&sig=abc%3D&se=2026": "https://a.blob.core.windows.net/c?sv=2022&sig=***&se=2026",
    "http://h/cb#access_token=abc&token_type=bearer": "http://h/cb#access_token=***&token_type=***",
    "http://h/?api_key=1&key=2&apikey=3&password=4&client_secret=5&code=6&step=60":
        "http://h/?api_key=***&key=***&apikey=***&password=***&client_secret=***&code=***&step=60",
    "error at 'https://u:p@h' (quoted)": "error at 'https://***@h' (quoted)",
    "price book https:/u:p@h/b.csv (a URL through a path)": "price book https:/***@h/b.csv (a URL through a path)",
    "plan.xlsx, row 3: no URL here; key=value stays": "plan.xlsx, row 3: no URL here; key=value stays",
}


@pytest.mark.parametrize("text", sorted(REDACTIONS))
def test_redacted(text):
    assert redacted(text) == REDACTIONS[text]
