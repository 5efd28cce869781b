"""Whole-or-nothing writes: units of several files, recovery after a kill, the history lock, symbolic links
and unique, bounded backups of ``--in-place``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime

import pytest

from finops.errors import InputError
from finops.files import locked, one_unit, recover, replacing, write_atomically
from templates import plan_actuals

from .conftest import run_cli, write_bill, write_plan

MONTH = "2026-05"


def _dead_pid() -> int:
    """The id of a process that has ended (so its leftovers count as a killed writer's)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_unit_changes_every_file_or_none(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    write_atomically(first, b"old a")
    write_atomically(second, b"old b")
    with pytest.raises(RuntimeError), one_unit():
        write_atomically(first, b"new a")
        assert first.read_bytes() == b"old a"  # nothing takes effect before the unit ends
        raise RuntimeError("killed between the two files")
    assert (first.read_bytes(), second.read_bytes()) == (b"old a", b"old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    with one_unit():
        write_atomically(first, b"new a")
        write_atomically(second, b"new b")
    assert (first.read_bytes(), second.read_bytes()) == (b"new a", b"new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_recover_finishes_a_journal_a_kill_interrupted_and_removes_leftovers(tmp_path):
    pid = _dead_pid()
    review, history = tmp_path / "review.xlsx", tmp_path / "history.duckdb"
    review.write_bytes(b"old review")
    history.write_bytes(b"old history")
    new_review = tmp_path / f".review.xlsx.{pid}.aaaa0000.tmp"
    new_review.write_bytes(b"new review")
    (tmp_path / f".history.duckdb.{pid}.bbbb0000.tmp").write_bytes(b"new history")
    journal = tmp_path / f".finops-commit.{pid}.cccc0000.json"
    journal.write_text(json.dumps([[str(new_review), str(review)],
                                   [str(tmp_path / f".history.duckdb.{pid}.bbbb0000.tmp"), str(history)]]))
    os.replace(new_review, review)  # the kill came after the first rename
    stray = tmp_path / f".other.csv.{pid}.dddd0000.tmp"
    stray.write_bytes(b"half")
    (tmp_path / f".history.duckdb.{pid}.eeee0000.tmp.wal").write_bytes(b"wal")
    mine = tmp_path / f".mine.csv.{os.getpid()}.ffff0000.tmp"  # a live writer's: kept
    mine.write_bytes(b"writing")
    recover(tmp_path)
    assert (review.read_bytes(), history.read_bytes()) == (b"new review", b"new history")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["review.xlsx", "history.duckdb", mine.name])


def test_a_write_removes_what_a_killed_write_of_the_same_file_left(tmp_path):
    pid = _dead_pid()
    left = tmp_path / f".demand.csv.{pid}.abcd0123.tmp"
    other = tmp_path / f".other.csv.{pid}.abcd0123.tmp"
    left.write_bytes(b"half")
    other.write_bytes(b"half")
    write_atomically(tmp_path / "demand.csv", b"whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["demand.csv", other.name])


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    real = tmp_path / "real" / "plan.csv"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "plan.csv"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_writing_onto_a_folder_or_an_unwritable_place_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="folder"):
        write_atomically(tmp_path, b"x")
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(InputError, match="cannot write"):
        write_atomically(tmp_path / "file" / "below.csv", b"x")
    with pytest.raises(InputError, match="cannot write"), replacing(tmp_path / "x.csv") as temporary:
        raise OSError(28, "No space left on device", str(temporary))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_lock_waits_bounded_then_says_so(tmp_path):
    lock = tmp_path / ".lock"
    code = ("import sys, time; from finops.files import locked\n"
            "with locked(sys.argv[1], wait_s=1):\n    print('held', flush=True); time.sleep(float(sys.argv[2]))\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock), "1.5"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    messages: list[str] = []
    with pytest.raises(InputError, match="still holds"), locked(lock, wait_s=0.3, on_wait=messages.append):
        pass
    assert messages and "waiting up to 0.3 s" in messages[0]
    started = time.monotonic()
    with locked(lock, wait_s=10):  # the holder ends within 1.5 s: the wait ends then
        assert time.monotonic() - started < 5
    holder.wait()


def test_a_second_reconcile_of_the_same_history_waits_for_the_first(tmp_path, capsys):
    plan = write_plan(tmp_path / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)])
    bill = write_bill(tmp_path / "bill.csv", [{}])
    out = tmp_path / "out"
    out.mkdir()
    code = ("import sys, time; from finops.files import locked\n"
            "with locked(sys.argv[1], wait_s=1):\n    print('held', flush=True); time.sleep(1.0)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out / ".reconcile-history.lock")],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    status, _, err = run_cli(["reconcile", "--plan", plan, "--month", MONTH, "--bills", bill, "--out", out,
                              "--quiet"], capsys)
    holder.wait()
    assert status == 0, err
    assert "waiting up to" in err and (out / "reconcile-history.duckdb").is_file()


def test_in_place_backups_are_unique_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(plan_actuals, "BACKUPS_KEPT", 3)
    plan = tmp_path / "plan.xlsx"
    same_second = datetime(2026, 6, 1, 2, 0, 0)
    contents = []
    for i in range(5):
        plan.write_bytes(f"version {i}".encode())
        contents.append(plan.read_bytes())
        plan_actuals._keep_backup(plan, same_second)
    backups = sorted(tmp_path.glob("plan.backup-*.xlsx"), key=lambda p: p.read_bytes())
    assert [p.read_bytes() for p in backups] == contents[-3:]
    assert len({p.name for p in backups}) == 3


def test_in_place_on_a_symbolic_link_updates_the_workbook_and_keeps_the_link(tmp_path, capsys):
    real = write_plan(tmp_path / "real.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)])
    link = tmp_path / "plan.xlsx"
    link.symlink_to(real)
    bill = write_bill(tmp_path / "bill.csv", [{}])
    before = real.read_bytes()
    status, _, err = run_cli(["reconcile", "--plan", link, "--month", MONTH, "--bills", bill, "--out",
                              tmp_path / "out", "--quiet", "--in-place"], capsys)
    assert status == 0, err
    assert link.is_symlink() and real.read_bytes() != before
    assert [p.read_bytes() for p in tmp_path.glob("real.backup-*.xlsx")] == [before]
