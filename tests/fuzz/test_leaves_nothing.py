"""A run that fails leaves the file system as it was: no folder it made, no file it made, no lock file;
a clean run leaves only its outputs. Every writing command, failing on its first run into folders that do
not exist yet (bad input, or a step that fails after earlier files were written)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from finops.reconcile.history import HISTORY_FILE, History
from templates.builder import DEFAULT_TEMPLATE

from .conftest import run_cli, snapshot, write_bill, write_plan

MONTH = "2026-05"
ROOT = Path(__file__).resolve().parents[2]
AWS_OFFER = ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.csv"
GCP_EXPORT = ROOT / "tests" / "gcp" / "fixtures" / "billing_export_detailed.jsonl"
BENCH = ROOT / "tests" / "sizing" / "fixtures" / "vllm-bench-serve.json"
SERVING = ROOT / "finops" / "data" / "metrics" / "serving-lines.csv"


def tree(folder: Path) -> dict[str, str]:
    """Every file (with its hash) and every folder under ``folder``, hidden ones too."""
    return snapshot(folder) | {str(p.relative_to(folder)) + "/": "folder" for p in folder.rglob("*") if p.is_dir()}


def _inputs(tmp: Path) -> dict[str, Path]:
    inputs = tmp / "inputs"
    inputs.mkdir()
    plan = write_plan(inputs / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)])
    bill = write_bill(inputs / "bill.csv", [{}])
    bad_bill = inputs / "bad.csv"
    bad_bill.write_bytes(bill.read_bytes().replace(b"\n", b"\n\xff\xfe", 1))  # not UTF-8
    bad_bench = inputs / "bench.json"
    bad_bench.write_text('{"not": "a benchmark"}')
    return {"plan": plan, "bill": bill, "bad_bill": bad_bill, "bad_bench": bad_bench}


#: command -> argv failing on bad input, with outputs under new/deeper/ (a folder that does not exist yet).
FAILING = {
    "reconcile": lambda i, new: ["reconcile", "--plan", i["plan"], "--month", MONTH, "--bills", i["bad_bill"],
                                 "--out", new, "--unmapped-csv", new / "unmapped.csv", "--quiet"],
    "mix generate": lambda i, new: ["mix", "generate", "--peak", "nan", "--out", new / "demand.csv"],
    "prices pull": lambda i, new: ["prices", "pull", "--provider", "aws", "--offer-file", i["bad_bill"],
                                   "--out", new / "book.parquet"],
    "template build": lambda i, new: ["template", "build", "--prices", i["bad_bill"], "--out", new / "plan.xlsx"],
    "bills pull": lambda i, new: ["bills", "pull", "--provider", "gcp", "--source", GCP_EXPORT, "--month", "2025-01",
                                  "--out", new / "may.parquet"],
    "calibrate": lambda i, new: ["calibrate", i["bad_bench"], "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu",
                                 "h100-sxm", "--precision", "bf16", "--out", new / "cal.json"],
    "plan next": lambda i, new: ["plan", "next", "--plan", DEFAULT_TEMPLATE, "--history", new / "history",
                                 "--month", MONTH, "--serving", i["bad_bill"], "--out", new / "next.xlsx"],
}


@pytest.mark.parametrize("command", FAILING)
def test_a_failing_first_run_leaves_no_folder_and_no_file(tmp_path, capsys, command):
    inputs = _inputs(tmp_path)
    before = tree(tmp_path)
    code, _, err = run_cli(FAILING[command](inputs, tmp_path / "new" / "deeper"), capsys)
    assert code == 2, err
    assert tree(tmp_path) == before


def test_prices_pull_failing_on_its_second_file_removes_the_first(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "book.csv").mkdir(parents=True)  # the .csv written beside the .parquet cannot be: a folder is there
    before = tree(tmp_path)
    argv = ["prices", "pull", "--provider", "aws", "--offer-file", AWS_OFFER, "--out", out / "book.parquet"]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "a folder is there" in err  # refused before anything is written
    assert tree(tmp_path) == before
    (out / "book.csv").rmdir()
    before = tree(tmp_path)
    import finops.price_book

    real = finops.price_book.PriceBook.write_csv

    def disk_full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    finops.price_book.PriceBook.write_csv = disk_full  # the second file fails after the first was written
    try:
        code, _, err = run_cli(argv, capsys)
    finally:
        finops.price_book.PriceBook.write_csv = real
    assert code in (1, 2) and "nothing was written" in err
    assert tree(tmp_path) == before  # book.parquet was written, then removed


def test_reconcile_failing_in_its_unit_or_after_it_leaves_no_review_history_or_folder(tmp_path, capsys, monkeypatch):
    inputs = _inputs(tmp_path)
    argv = ["reconcile", "--plan", inputs["plan"], "--month", MONTH, "--bills", inputs["bill"],
            "--out", tmp_path / "new" / "deeper", "--quiet"]
    before = tree(tmp_path)

    def fails(*_: object, **__: object) -> None:
        raise RuntimeError("disk pulled out")

    with monkeypatch.context() as patch:  # between the review and the history
        patch.setattr(History, "record", fails)
        assert run_cli(argv, capsys)[0] == 1
    assert tree(tmp_path) == before
    import templates.plan_actuals

    with monkeypatch.context() as patch:  # after the unit: --in-place fails
        patch.setattr(templates.plan_actuals, "write_in_place", fails)
        assert run_cli([*argv, "--in-place"], capsys)[0] == 1
    assert tree(tmp_path) == before


def test_a_clean_reconcile_leaves_only_the_review_and_the_history(tmp_path, capsys):
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    argv = ["reconcile", "--plan", inputs["plan"], "--month", MONTH, "--bills", inputs["bill"], "--out", out,
            "--quiet"]
    for _ in range(2):  # the first run makes the folder; the second runs under the folder's lock
        code, _, err = run_cli(argv, capsys)
        assert code == 0, err
        assert sorted(p.name for p in out.iterdir()) == [f"budget-review-{MONTH}.xlsx", HISTORY_FILE]


def test_two_concurrent_reconciles_of_one_folder_take_turns_and_leave_no_lock(tmp_path):
    """Each run holds the lock from before it reads the history to after it wrote it: run together, the
    second waits, then keeps its month beside the first's (both months are in the history, neither lost)."""
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"  # not there yet: the first of the two makes it, under the lock
    plan = write_plan(tmp_path / "inputs" / "plan2.xlsx",
                      budget=[(m, "gpu", "cc", "OPEX", "AWS", 100, "USD", None) for m in ("2026-05", "2026-06")])
    june = write_bill(tmp_path / "inputs" / "june.csv", [{"BillingPeriodStart": "2026-06-01T00:00:00Z",
                                                           "BillingPeriodEnd": "2026-07-01T00:00:00Z",
                                                           "ChargePeriodStart": "2026-06-03T00:00:00Z",
                                                           "ChargePeriodEnd": "2026-06-03T01:00:00Z"}])
    runs = [subprocess.Popen([sys.executable, "-c", "import sys; from finops.cli import main; "
                              "sys.exit(main(sys.argv[1:]))", "reconcile", "--plan", str(plan), "--month", month,
                              "--bills", str(bill), "--out", str(out), "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for month, bill in (("2026-05", inputs["bill"]), ("2026-06", june))]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs]
    assert [code for code, _ in results] == [0, 0], results
    history = History(out / HISTORY_FILE)
    assert [m.month for m in history.months("USD")] == ["2026-05", "2026-06"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["budget-review-2026-05.xlsx", "budget-review-2026-06.xlsx", HISTORY_FILE])


def test_mix_generate_into_a_missing_folder_succeeds_whole(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "demand.csv"
    code, _, err = run_cli(["mix", "generate", "--peak", "40", "--hours", "48", "--out", out], capsys)
    assert code == 0, err
    assert sorted(tree(tmp_path)) == ["new/", "new/deeper/", "new/deeper/demand.csv"]
    assert out.read_text().splitlines()[0].startswith("hour") and len(out.read_text().splitlines()) == 49


def test_a_demo_failing_at_its_last_step_removes_every_file_and_folder_it_made(tmp_path, capsys, monkeypatch):
    """Steps 1-5 write sizing, TCO, mix, both workbooks and the history; step 6 (plan next) then fails on
    serving lines that are not there: the demo's folder and all it held are gone, one message said."""
    import finops.cli.demo

    monkeypatch.setattr(finops.cli.demo, "SAMPLE_SERVING", tmp_path / "missing-serving-lines.csv")
    before = tree(tmp_path)
    code, _, err = run_cli(["demo", "--out", tmp_path / "new" / "demo", "--quiet"], capsys)
    assert code == 2 and "missing-serving-lines.csv" in err, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [err.splitlines()[0]], err
    assert tree(tmp_path) == before
