"""Bounded by design: every line read has a length limit and every inflation a size limit
(finops/limits.py, docs/durability.md), a retry stops within its budget, and a full disk leaves nothing
behind and says so, with exit 2 and the file that could not be written."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from finops import limits

from .desk import MONTH, OPTIONS_CSV, REPO, SERVING_CSV, Case, bill, check, plan, reconcile_argv, text_file

LINE = "longer than 2 MiB"
#: One gzip member inflating to 16 MiB of "a" (no newline), ~16 KiB compressed; members concatenate.
_MEMBER = gzip.compress(b"a" * (16 << 20), compresslevel=9, mtime=0)


def _bomb(folder: Path, name: str, inflated_mib: int, head: bytes = b"") -> Path:
    """A gzip file of ``head`` then ``inflated_mib`` MiB with no newline, in 16 MiB members."""
    path = folder / name
    with path.open("wb") as out:
        out.write(gzip.compress(head, mtime=0))
        for _ in range(inflated_mib // 16):
            out.write(_MEMBER)
    return path


def _long_line(folder: Path, name: str, head: str = "", size: int = limits.MAX_LINE_BYTES + 10) -> Path:
    path = folder / name
    with path.open("w") as out:
        out.write(head)
        out.write("x" * size)
    return path


def _options(folder: Path) -> Path:
    return text_file(folder, "options.csv", OPTIONS_CSV)


CASES: dict[str, Case] = {
    "gzip bill whose header never ends": Case(
        lambda d: reconcile_argv(d, plan(d), _bomb(d, "bill.csv.gz", 64)), names=("bill.csv.gz", "row 1", LINE)),
    "gzip bill with a row that never ends": Case(
        lambda d: reconcile_argv(d, plan(d), _bomb(d, "bill.csv.gz", 32, b"BilledCost,EffectiveCost\n1,1\n")),
        names=("bill.csv.gz", "row 3", LINE)),
    "CSV bill whose header never ends": Case(
        lambda d: reconcile_argv(d, plan(d), _long_line(d, "bill.csv")), names=("bill.csv", "row 1", LINE)),
    "usage CSV with a line past the limit": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _long_line(
            d, "usage.csv", "Month,PlanLine,ActualMTokens\n")]), names=("usage.csv", "row 2", LINE)),
    "mix demand CSV with a line past the limit": Case(
        lambda d: ["mix", "--demand", _long_line(d, "demand.csv", "hour,units\n0,1\n"), "--options", _options(d)],
        names=("demand.csv", "row 3", LINE)),
    "offer CSV with a line past the limit": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", _long_line(d, "offer.csv"), "--out", d / "p.parquet"],
        names=("offer.csv", "row 1", LINE)),
    "saved Prometheus answer that inflates past the limit": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--serving",
                   _serving(d), "--metrics", _bomb(d, "m.json.gz", 48), "--out", d / "next.xlsx"],
        names=("m.json.gz", "inflates to more than 32 MiB")),
    "price book CSV that inflates past the limit": Case(
        lambda d: ["template", "build", "--prices", _bomb(d, "prices.csv.gz", 48), "--out", d / "plan.xlsx"],
        names=("prices.csv.gz", "inflates to more than 32 MiB")),
}


def _serving(folder: Path) -> Path:
    return text_file(folder, "serving.csv", SERVING_CSV)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_line_and_inflation_is_bounded(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(limits, "MAX_INFLATED_BYTES", 32 << 20)  # the in-memory bound, smaller for speed
    check(CASES[name], tmp_path, capsys, monkeypatch)


_PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, peak_kib, sep="\\n")
print(done.stderr, file=sys.stderr)
"""


def _peak_mib(argv: list[str]) -> tuple[int, float, str]:
    done = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-m", "finops", *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    code, peak_kib = done.stdout.split()
    return int(code), int(peak_kib) / 1024, done.stderr


def test_a_gzip_bomb_bill_stays_within_memory(tmp_path):
    """A 1 GiB line in 1 MiB of gzip: refused at the line bound, the process staying far below the
    inflated size (before the bound, the header's readline held all of it: 4.4 GB for a 2 GB bomb)."""
    bomb = _bomb(tmp_path, "bill.csv.gz", 1024)
    assert bomb.stat().st_size < 2 << 20
    normal = [str(a) for a in reconcile_argv(tmp_path, plan(tmp_path), bill(tmp_path), out=tmp_path / "a")]
    code, baseline_mib, err = _peak_mib(normal)
    assert code == 0, err
    argv = [str(a) for a in reconcile_argv(tmp_path, tmp_path / "plan.xlsx", bomb, out=tmp_path / "b")]
    code, peak_mib, err = _peak_mib(argv)
    assert code == 2 and LINE in err, err
    assert peak_mib < baseline_mib + 64, (peak_mib, baseline_mib)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_refused_bigquery_endpoint_is_given_up_within_the_retry_budget(tmp_path, capsys, monkeypatch):
    """The call retry and the job retry share one deadline (a refused endpoint took 221 s for 120). The time
    the command takes besides the retries (reading the plan, making the client) is measured with a budget
    that gives up at once, and taken off."""
    pytest.importorskip("google.cloud.bigquery")
    budget_s = 8.0  # long enough for the old nesting to show (it took 1.6 times the budget)
    monkeypatch.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    book = plan(tmp_path)

    def seconds(budget: float, out: str) -> float:
        monkeypatch.setenv("FINOPS_GCP_RETRY_TIMEOUT", str(budget))
        argv = ["reconcile", "--plan", book, "--month", MONTH, "--engine", "bigquery", "--table", "p.d.t",
                "--project", "p", "--out", tmp_path / out, "--quiet"]
        started = time.monotonic()
        check(Case(lambda d: argv, names=("BigQuery",)), tmp_path, capsys, monkeypatch)
        return time.monotonic() - started

    seconds(0.01, "warm")
    besides = seconds(0.01, "at-once")
    assert seconds(budget_s, "budget") - besides < budget_s * 1.5  # the old nesting: 1.7 times or more


class _SilentServer:
    """A TCP port that accepts every connection and never answers (a hung proxy, a black-holed service)."""

    def __enter__(self) -> str:
        import threading

        self._socket = socket.create_server(("127.0.0.1", 0))
        self._held: list[socket.socket] = []
        threading.Thread(target=self._hold, daemon=True).start()
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def _hold(self) -> None:
        while True:
            try:
                self._held.append(self._socket.accept()[0])
            except OSError:
                return

    def __exit__(self, *_: object) -> None:
        self._socket.close()
        for held in self._held:
            held.close()


#: Seconds one AWS call may take in the tests below (FINOPS_AWS_RETRY_TIMEOUT); botocore's own bounds took
#: five attempts of a 60 s read against a silent endpoint, over five minutes for one call.
AWS_BUDGET_S = 6.0
#: AWS commands that call an endpoint first thing -> what the message names.
AWS_CALLS: dict[str, tuple[Callable[[Path], list[object]], str]] = {
    "prices pull": (lambda d: ["prices", "pull", "--provider", "aws", "--regions", "us-east-1", "--instance-types",
                               "p5.48xlarge", "--out", d / "book.parquet"], "AWS pricing get_products"),
    "bills pull from S3": (lambda d: ["bills", "pull", "--provider", "aws", "--source", "s3://bucket/exports",
                                      "--month", MONTH, "--out", d / "focus.parquet"], "AWS s3 list_objects_v2"),
    "bills pull from Cost Explorer": (lambda d: ["bills", "pull", "--provider", "aws", "--source", "ce", "--month",
                                                 MONTH, "--out", d / "focus.parquet"], "AWS ce get_cost_and_usage"),
    "reconcile on Athena": (lambda d: ["reconcile", "--plan", plan(d), "--month", MONTH, "--engine", "athena",
                                       "--table", "focus.bills", "--output-location", "s3://results/q/",
                                       "--out", d / "out", "--quiet"], "AWS athena start_query_execution"),
}


def _aws_env(endpoint: str, tmp_path: Path) -> dict[str, str]:
    """Fake credentials, no shared config, no instance metadata: only ``endpoint`` is ever reached."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "AKIAFINOPSTESTKEY0001",
            "AWS_SECRET_ACCESS_KEY": "finopsTestSecret", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": str(tmp_path / "no-config"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-creds"),
            "AWS_EC2_METADATA_DISABLED": "true", "FINOPS_AWS_RETRY_TIMEOUT": str(AWS_BUDGET_S)}


def _aws_seconds(name: str, endpoint: str, folder: Path, capsys, monkeypatch) -> float:
    build, names = AWS_CALLS[name]
    for setting in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"):
        monkeypatch.delenv(setting, raising=False)
    case = Case(build, names=(names, "cannot reach the AWS endpoint", "AWS_ENDPOINT_URL"),
                env=_aws_env(endpoint, folder), subprocess=True, timeout_s=90)
    started = time.monotonic()
    check(case, folder, capsys, monkeypatch)
    return time.monotonic() - started


@pytest.mark.parametrize("name", sorted(AWS_CALLS))
def test_an_unreachable_aws_endpoint_is_given_up_within_the_retry_budget(name, tmp_path, capsys, monkeypatch):
    """A refused port fails every attempt at once; a port that accepts and never answers costs each attempt its
    read timeout, which the budget sets, and no retry starts that could not end within the budget. Both exit 2
    with the call, the budget and what to do; the start-up around the call is the refused run's time."""
    pytest.importorskip("boto3")
    besides = _aws_seconds(name, f"http://127.0.0.1:{_closed_port()}", tmp_path, capsys, monkeypatch)
    with _SilentServer() as silent:
        silent_s = _aws_seconds(name, silent, tmp_path, capsys, monkeypatch)
    assert besides < 30, besides  # five refused attempts: well under a second of backoff
    assert silent_s - besides < AWS_BUDGET_S, (silent_s, besides)


class _FlakyPriceList:
    """The AWS Price List API over its JSON wire protocol (``AWSPriceListService.GetProducts``), endless pages of
    which each answers only its third request: the first two get a 503 with ``x-amz-retry-after`` (the wait
    botocore then takes, to within its 0.05 s jitter). Every request's arrival is recorded (this clock)."""

    FAILS_PER_PAGE = 2
    RETRY_AFTER_S = 0.5

    def __enter__(self) -> str:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.arrivals: list[float] = []
        self.pages_served = 0
        tries: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.arrivals.append(time.monotonic())
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                page = str(body.get("NextToken", "page-0"))
                tries[page] = tries.get(page, 0) + 1
                if tries[page] <= server.FAILS_PER_PAGE:
                    status, payload = 503, {"__type": "ServiceUnavailableException", "Message": "try later"}
                else:
                    server.pages_served += 1
                    status, payload = 200, {"FormatVersion": "aws_v1", "PriceList": [],
                                            "NextToken": f"page-{int(page.split('-')[1]) + 1}"}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(data)))
                if status == 503:
                    self.send_header("x-amz-retry-after", str(int(server.RETRY_AFTER_S * 1000)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def test_a_pull_of_many_pages_from_a_flaky_endpoint_stops_within_one_budget(tmp_path, capsys, monkeypatch):
    """The budget is one deadline for the command, not one per call: a pull whose every page needs two retries
    (each page succeeds, so a budget per call let it run pages x budget: here until the pages ran out) stops
    within one budget of its first failure, exit 2 naming the call and the budget. The slack is what the
    schedule allows past the deadline: an attempt under way there and the wait before it (the server's
    retry-after, the longest backoff botocore takes here); the start-up around the pull is the refused run's."""
    pytest.importorskip("boto3")
    from connectors.aws.retry_budget import RetryBudget, longest_backoff

    budget = RetryBudget(AWS_BUDGET_S * 3)  # room for retries after the reserve of one whole attempt
    wait_s = longest_backoff(_FlakyPriceList.FAILS_PER_PAGE, throttled=False,
                             retry_after_s=_FlakyPriceList.RETRY_AFTER_S)
    besides = _aws_seconds("prices pull", f"http://127.0.0.1:{_closed_port()}", tmp_path, capsys, monkeypatch)
    server = _FlakyPriceList()
    with server as endpoint:
        build, _ = AWS_CALLS["prices pull"]
        case = Case(build, names=("AWS pricing get_products", "FINOPS_AWS_RETRY_TIMEOUT", "503"),
                    env={**_aws_env(endpoint, tmp_path), "FINOPS_AWS_RETRY_TIMEOUT": str(budget.seconds)},
                    subprocess=True, timeout_s=90)
        started = time.monotonic()
        check(case, tmp_path, capsys, monkeypatch)
        pull_s = time.monotonic() - started
    assert server.pages_served >= 2, server.pages_served  # a pull of pages, each after its retries
    assert server.arrivals[-1] - server.arrivals[0] <= budget.seconds + wait_s
    assert pull_s - besides <= budget.seconds + wait_s, (pull_s, besides)


#: A profile's credential_process -> what the message names: one that hangs (an SSO helper waiting for a
#: browser, a vault that does not answer) and one that answers what is no credential.
CREDENTIAL_PROCESSES = {
    "hangs": ("sleep 30", ("AWS credentials", "FINOPS_AWS_RETRY_TIMEOUT", "AWS_PROFILE")),
    "answers no JSON": ("echo not-json", ("AWS credentials", "credential_process")),
}


@pytest.mark.parametrize("name", sorted(CREDENTIAL_PROCESSES))
def test_a_credential_lookup_that_fails_or_never_ends_is_stopped_within_the_budget(name, tmp_path, capsys,
                                                                                    monkeypatch):
    """Finding the credentials counts in the budget: a profile whose credential_process hangs ends the command
    within the budget, exit 2 saying where the credentials were looked for, where before it waited as long as
    the process did (then failed with an internal error); one that answers no credentials is exit 2 too."""
    pytest.importorskip("boto3")
    process, names = CREDENTIAL_PROCESSES[name]  # the hanging one ends on its own after the test
    (tmp_path / "config").write_text(f"[profile slow]\ncredential_process = {process}\n")
    besides = _aws_seconds("prices pull", f"http://127.0.0.1:{_closed_port()}", tmp_path, capsys, monkeypatch)
    env = {**_aws_env(f"http://127.0.0.1:{_closed_port()}", tmp_path), "AWS_PROFILE": "slow",
           "AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    case = Case(AWS_CALLS["prices pull"][0], names=names, env=env, subprocess=True, timeout_s=60)
    started = time.monotonic()
    check(case, tmp_path, capsys, monkeypatch)
    assert time.monotonic() - started - besides < AWS_BUDGET_S


@pytest.mark.parametrize("value", ["two minutes", "-5", "0", "nan", "inf"])
def test_a_retry_budget_that_is_no_number_of_seconds_is_refused_naming_it(value, tmp_path, capsys, monkeypatch):
    pytest.importorskip("boto3")
    env = {**_aws_env(f"http://127.0.0.1:{_closed_port()}", tmp_path), "FINOPS_AWS_RETRY_TIMEOUT": value}
    check(Case(AWS_CALLS["prices pull"][0], names=("FINOPS_AWS_RETRY_TIMEOUT", repr(value)), env=env), tmp_path,
          capsys, monkeypatch)


def _tmpfs(folder: Path, size: str) -> Path:
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    return folder


#: tmpfs sizes that fill up at different writes: the history, the review, the unmapped CSV.
DISK_SIZES = ("64k", "300k", "600k", "900k")


@pytest.mark.parametrize("size", DISK_SIZES)
def test_a_full_disk_leaves_nothing_and_names_the_file(size, tmp_path, capsys, monkeypatch):
    disk = _tmpfs(tmp_path / "disk", size)
    try:
        def argv(d: Path) -> list[object]:
            return reconcile_argv(d, plan(d), bill(d, rows=2000, SubAccountId=""), out=disk / "new" / "out",
                                  extra=["--unmapped-csv", disk / "new" / "unmapped.csv"])

        def no_trace(folder: Path, out: str, err: str) -> None:
            assert sorted(os.listdir(disk)) == [], os.listdir(disk)
            assert "No space left" in err

        check(Case(argv, names=("disk is full",), may_write=("disk",), verify=no_trace), tmp_path, capsys,
              monkeypatch)
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_write_failing_for_room_is_undone_without_a_tmpfs(tmp_path, capsys, monkeypatch):
    """The same promise where no tmpfs can be mounted: every flush before a rename fails as a full disk
    would (a monkeypatched ``finops.files._flush``), and the new folder and every temporary go."""
    import errno

    from finops import files

    def full(path: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_flush", full)
    check(Case(lambda d: reconcile_argv(d, plan(d), bill(d), out=d / "new" / "out"),
               names=("No space left", "disk is full")), tmp_path, capsys, monkeypatch)


def test_the_bounds_are_stated_in_the_docs():
    text = (REPO / "docs" / "durability.md").read_text()
    for figure in ("2 MiB", "512 MiB", "64 GiB", "FINOPS_MAX_INFLATED_GIB"):
        assert figure in text, figure


def test_a_gzip_bomb_in_an_aws_export_stays_within_memory(tmp_path):
    """``bills pull`` of a local copy of a Data Exports delivery whose data file is a 1 GiB line in 1 MiB of
    gzip: refused at the line bound with the process far below the line's size (it held the line)."""
    import json

    period = "BILLING_PERIOD=2026-05"
    data = tmp_path / "x" / "data" / period
    data.mkdir(parents=True)
    _bomb(data, "x-00001.csv.gz", 1024)
    (tmp_path / "x" / "metadata" / period).mkdir(parents=True)
    (tmp_path / "x" / "metadata" / period / "x-Manifest.json").write_text(json.dumps(
        {"dataFiles": [f"s3://b/x/data/{period}/x-00001.csv.gz"]}))
    code, peak_mib, err = _peak_mib(["bills", "pull", "--provider", "aws", "--source", str(tmp_path), "--month",
                                     MONTH, "--out", str(tmp_path / "focus.parquet")])
    assert code == 2 and LINE in err, err
    assert peak_mib < 512, peak_mib
    assert not (tmp_path / "focus.parquet").exists()
