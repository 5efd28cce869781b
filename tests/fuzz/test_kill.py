"""``kill -9`` at random moments of every writing command: every file is then the old one or a complete
new one, and the review and the history change together (after the next run's
:func:`~finops.files.recover`). ``tco``, ``size`` and ``mix`` only print (``--json`` to stdout); the rest
are here: reconcile, mix generate, prices pull, template build, bills pull, calibrate, plan next, demo.

Each command first runs whole once to learn how long it takes; then it is started again and again, each
time killed after a random share of that time (seeded, a bounded number of tries).
"""

from __future__ import annotations

import io
import random
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import duckdb
import pytest

from finops.files import recover
from finops.price_book import COLUMNS as PRICE_BOOK_COLUMNS
from templates.builder import DEFAULT_TEMPLATE

from .conftest import write_bill, write_plan

MONTH = "2026-05"
TRIES = 5
ROOT = Path(__file__).resolve().parents[2]
METRICS = ROOT / "finops" / "data" / "metrics"
_RUN = "import sys; from finops.cli import main; sys.exit(main(sys.argv[1:]))"


def _start(argv: list[object]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _RUN, *map(str, argv)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _timed(argv: list[object]) -> float:
    started = time.monotonic()
    assert _start(argv).wait(timeout=120) == 0, argv
    return time.monotonic() - started


def _kill_after(argv: list[object], seconds: float) -> None:
    process = _start(argv)
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()


def _billed(history: Path) -> float:
    con = duckdb.connect(str(history), read_only=True)
    try:
        return float(con.execute("SELECT billed_cost FROM months").fetchone()[0])
    finally:
        con.close()


def _complete_xlsx(path: Path) -> bool:
    with zipfile.ZipFile(path) as package:
        return package.testzip() is None and "xl/workbook.xml" in package.namelist()


def test_reconcile_killed_anywhere_leaves_review_and_history_old_or_new_together(tmp_path):
    plan = write_plan(tmp_path / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)])
    old_bill = write_bill(tmp_path / "old.csv", [{"BilledCost": "10", "EffectiveCost": "10"}])
    new_bill = write_bill(tmp_path / "new.csv", [{"BilledCost": "20", "EffectiveCost": "20"}] * 2000)
    out = tmp_path / "out"
    argv = ["reconcile", "--plan", plan, "--month", MONTH, "--out", out, "--quiet", "--in-place", "--bills"]
    _timed([*argv, old_bill])
    review, history = out / f"budget-review-{MONTH}.xlsx", out / "reconcile-history.duckdb"
    old = {path: path.read_bytes() for path in (review, history, plan)}
    whole = _timed([*argv, new_bill])
    rng = random.Random(14)
    for _ in range(TRIES):
        for path, data in old.items():  # back to the old state
            path.write_bytes(data)
        _kill_after([*argv, new_bill], rng.uniform(0.3, 1.1) * whole)
        recover(out)  # what the next run does first
        assert not [p for p in out.iterdir() if p.name.endswith((".tmp", ".json", ".wal"))]
        changed = review.read_bytes() != old[review]
        assert _complete_xlsx(review)
        assert _billed(history) == (40000.0 if changed else 10.0), "the review and the history disagree"
        assert plan.read_bytes() == old[plan] or _complete_xlsx(plan)
    assert len(list(tmp_path.glob("plan.backup-*.xlsx"))) <= 10


def test_mix_generate_killed_anywhere_leaves_the_old_file_or_the_whole_new_one(tmp_path):
    target = tmp_path / "demand.csv"
    target.write_text("hour,units\n0,1\n")
    argv = ["mix", "generate", "--peak", "40", "--hours", "60000", "--out", target]
    whole = _timed(argv)
    complete = target.read_bytes()
    target.write_text("hour,units\n0,1\n")
    rng = random.Random(14)
    for _ in range(TRIES):
        _kill_after(argv, rng.uniform(0.3, 1.1) * whole)
        recover(tmp_path)
        assert target.read_bytes() in (b"hour,units\n0,1\n", complete)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["demand.csv"]
        target.write_text("hour,units\n0,1\n")


def _complete(path: Path, reference: bytes) -> bool:
    """Whether ``path`` is a whole output like ``reference`` (the uninterrupted run's): an xlsx package with
    every part of the reference, a history database that opens with as many months, else the same bytes."""
    if path.suffix == ".xlsx":
        with zipfile.ZipFile(io.BytesIO(reference)) as whole:
            return _complete_xlsx(path) and set(zipfile.ZipFile(path).namelist()) == set(whole.namelist())
    if path.suffix == ".duckdb":
        con = duckdb.connect(str(path), read_only=True)
        try:
            return con.execute("SELECT count(*) FROM months").fetchone()[0] >= 1
        finally:
            con.close()
    return path.read_bytes() == reference


def _earlier_pull() -> bytes:
    """The bytes of an earlier ``bills pull`` with no rows: a FOCUS Parquet file a new pull replaces (the command
    replaces nothing else)."""
    import tempfile

    from connectors.focus_table import FocusParquetWriter

    with tempfile.TemporaryDirectory() as folder:
        with FocusParquetWriter(Path(folder) / "may.parquet") as writer:
            pass
        return writer.out.read_bytes()


def _earlier_next_plan() -> bytes:
    """The bytes of a workbook as an earlier ``plan next`` leaves one, known by its Fleet table: the only workbook
    the command replaces."""
    import tempfile

    import openpyxl
    from openpyxl.worksheet.table import Table

    book = openpyxl.Workbook()
    book.active.title = "Fleet"
    book.active.append(["PlanLine", "GPUs"])
    book.active.append(["gpu", 1])
    book.active.add_table(Table(displayName="tblFleet", ref="A1:B2"))
    with tempfile.TemporaryDirectory() as folder:
        book.save(Path(folder) / "next.xlsx")
        return (Path(folder) / "next.xlsx").read_bytes()


def _state(paths: list[Path]) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.exists() else None for path in paths}


def _restore(state: dict[Path, bytes | None]) -> None:
    for path, data in state.items():
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(data)


#: command -> (argv, outputs, an old version of the first output or None: absent before), with ``o`` the
#: output folder.
COMMANDS = {
    "prices pull": lambda o: (["prices", "pull", "--provider", "aws", "--offer-file",
                               ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.csv",
                               "--out", o / "book.parquet"], [o / "book.csv", o / "book.parquet"],
                              (",".join(PRICE_BOOK_COLUMNS) + "\n").encode()),  # an earlier, empty pull
    "template build": lambda o: (["template", "build", "--out", o / "plan.xlsx", "--replace"], [o / "plan.xlsx"],
                                 b"old"),
    "bills pull": lambda o: (["bills", "pull", "--provider", "gcp", "--source",
                              ROOT / "tests" / "gcp" / "fixtures" / "billing_export_detailed.jsonl",
                              "--month", MONTH, "--out", o / "may.parquet"], [o / "may.parquet"], _earlier_pull()),
    "calibrate": lambda o: (["calibrate", ROOT / "tests" / "sizing" / "fixtures" / "vllm-bench-serve.json",
                             "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision",
                             "bf16", "--out", o / "cal.json"], [o / "cal.json"],
                            b'{"source": "an earlier calibration"}'),
    "plan next": lambda o: (["plan", "next", "--plan", DEFAULT_TEMPLATE, "--history", o, "--month", MONTH,
                             "--serving", METRICS / "serving-lines.csv", "--growth", "1.1", "--out",
                             o / "next.xlsx", "--quiet",
                             *[a for m in sorted(METRICS.glob(f"{MONTH}-*.json.gz")) for a in ("--metrics", m)]],
                            [o / "next.xlsx", o / "throughput-corrections.json"], _earlier_next_plan()),
    "demo": lambda o: (["demo", "--out", o, "--quiet"],
                       [o / name for name in ("sizing.json", "tco.json", "mix.json", "llm-finops-plan.xlsx",
                                              f"budget-review-{MONTH}.xlsx", "reconcile-history.duckdb",
                                              "llm-finops-plan-next.xlsx", "throughput-corrections.json",
                                              "serving/serving-lines.csv",
                                              f"bills/demo-aws-{MONTH}.csv.gz", f"bills/demo-gcp-{MONTH}.csv.gz",
                                              f"focus-samples/budget-review-{MONTH}.xlsx")], None),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_writing_command_killed_anywhere_leaves_each_file_old_or_complete(tmp_path, command):
    out = tmp_path / "out"
    out.mkdir()
    argv, outputs, old_first = COMMANDS[command](out)
    if old_first is not None:
        outputs[0].write_bytes(old_first)
    old = _state(outputs)
    whole = _timed(argv)
    complete = _state(outputs)
    assert all(data is not None for data in complete.values()), complete.keys()
    rng = random.Random(14)
    for _ in range(3):
        _restore(old)
        _kill_after(argv, rng.uniform(0.2, 1.1) * whole)
        recover(out)  # what the next run of a folder-writing command (reconcile, demo's step) does first
        for path in outputs:
            assert not path.exists() and old[path] is None or path.exists() and (
                path.read_bytes() == old[path] or _complete(path, complete[path])), (command, path.name)
        assert not [p.name for p in out.iterdir() if p.name.endswith((".tmp", ".json.tmp", ".wal", ".lock"))
                    or p.name.startswith(".finops-commit.")], command
