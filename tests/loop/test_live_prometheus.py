"""A live Prometheus (Debian's ``prometheus``, started here on loopback) scraping replayed samples.

The page replays six recorded hours (397-402) of the bundled ``aws-inference-prod`` month, one
recorded sample per 0.6 s, each held for three scrapes of 200 ms so that a range query at 200 ms
sees every one. Replica 1 restarts at hour 400, so its counters drop to what it counted since.
Expected increases follow Prometheus' reset rule worked by hand on the recorded values: without a
reset ``v[402] - v[397]``; with the reset ``(v[399] - v[397]) + v[402]``.
"""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

from connectors.prometheus import HttpTransport, pull_series
from finops.errors import ProviderError, TransientProviderError
from finops.serving import read_serving_lines, realize

from .replay_server import PROMETHEUS, ReplayPage, free_port, start_prometheus
from .serving_sheet import serving_lines

FIRST, LAST = 397, 402
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="the prometheus binary is not installed "
                                                          "(apt-get install -y prometheus)")


def _recorded(generator: ModuleType) -> list[tuple[str, dict[str, str], list[float]]]:
    spec = next(s for s in generator.SPECS if s.plan_line == "aws-inference-prod")
    out = []
    for item in generator.line_results(spec, generator.MONTH):
        labels = {k: v for k, v in item["metric"].items() if k not in ("__name__", "job")}
        out.append((item["metric"]["__name__"], labels, [float(v) for _, v in item["values"][FIRST:LAST + 1]]))
    return out


def _expected(recorded: list[tuple[str, dict[str, str], list[float]]], name: str) -> float:
    total = 0.0
    for metric, labels, v in recorded:
        if metric != name:
            continue
        restarted = labels.get("pod") == "aws-inference-prod-1"
        total += (v[399 - FIRST] - v[0]) + v[-1] if restarted else v[-1] - v[0]
    return total


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, generator: ModuleType):  # type: ignore[no-untyped-def]
    recorded = _recorded(generator)
    page = ReplayPage(recorded, hold=3)
    started = time.time()
    try:
        with start_prometheus(tmp_path_factory.mktemp("prometheus"), page.port, 0.2) as url:
            deadline = time.monotonic() + 60
            while not page.done and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(1.0)   # the last scrape is in the head block and queryable
            series = pull_series(url, started - 5, time.time(), step_s=0.2)
    finally:
        page.close()
    return recorded, series, started


def test_live_counters_follow_prometheus_resets(live, serving_csv: Path) -> None:
    recorded, series, started = live
    start = started // 3600 * 3600
    hours = int((time.time() - start) // 3600) + 1
    month = realize(read_serving_lines(serving_csv)[:1], series, "2026-05", window=(start, hours))
    line = month.line("aws-inference-prod")
    assert line.generation_tokens == _expected(recorded, "vllm:generation_tokens_total")
    assert line.prompt_tokens == _expected(recorded, "vllm:prompt_tokens_total")
    assert line.requests == _expected(recorded, "vllm:request_success_total")
    assert (line.replicas, line.gpus) == (2, 2)
    assert line.ttft_p_ok is not None and 0.9 < line.ttft_p_ok <= 1.0


def test_review_shows_the_live_figures(live, serving_csv: Path, tmp_path: Path) -> None:

    from finops.cli.reconcile import reconcile_to_workbook
    from finops.reconcile.sample_bills import sample_bill_paths
    from templates.builder import DEFAULT_TEMPLATE

    recorded, series, started = live
    start = started // 3600 * 3600
    window = (start, int((time.time() - start) // 3600) + 1)
    lines = read_serving_lines(serving_csv)[:1]
    _, review = reconcile_to_workbook(DEFAULT_TEMPLATE, sample_bill_paths(), "2026-05", tmp_path,
                                      serving=lambda rec: realize(lines, series, "2026-05", window=window,
                                                                  costs={r.plan_line: r.actual for r in rec.lines}))
    [row] = serving_lines(review).values()
    expected = (_expected(recorded, "vllm:prompt_tokens_total") + _expected(recorded, "vllm:generation_tokens_total"))
    assert row["PlanLine"] == "aws-inference-prod"
    assert row["MTokens"] == pytest.approx(expected / 1e6, abs=5e-4)
    assert row["Requests"] == round(_expected(recorded, "vllm:request_success_total"))


def test_server_that_does_not_answer_is_a_transient_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(TransientProviderError, match=r"did not answer /api/v1/query_range after 2 tries"):
        pull_series(HttpTransport(url, retries=2, backoff_s=0.01, timeout_s=1), 0, 60, step_s=60)


def test_bearer_token_is_sent_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            header = self.headers.get("Authorization", "")
            seen.append(header)
            body = ('{"status":"error","error":"token ' + header.removeprefix("Bearer ") + ' refused"}').encode()
            self.send_response(401)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("FINOPS_PROMETHEUS_TOKEN", "s3cr3t-token")
    try:
        with pytest.raises(ProviderError, match="HTTP 401") as caught:
            pull_series(f"http://127.0.0.1:{server.server_address[1]}", 0, 60, step_s=60)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["Bearer s3cr3t-token"]
    assert "s3cr3t-token" not in str(caught.value) and "***" in str(caught.value)
