"""``kill -9`` at random moments of the writing commands: every file is then the old one or a complete new
one, and the review and the history change together (after the next run's :func:`~finops.files.recover`).

Each command first runs whole once to learn how long it takes; then it is started again and again, each
time killed after a random share of that time (seeded, a bounded number of tries).
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import duckdb

from finops.files import recover

from .conftest import write_bill, write_plan

MONTH = "2026-05"
TRIES = 5
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
