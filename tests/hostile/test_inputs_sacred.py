"""Inputs are sacred: no writer replaces a file the run reads, whatever the output option, the spelling of
the path, a symbolic or a hard link; the review replaces only a review this tool wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .desk import AWS_EXPORT_DATA, MONTH, Case, aws_export, bill, check, plan, reconcile_argv, text_file

REVIEW = f"budget-review-{MONTH}.xlsx"
INPUT = "is an input of this run"


def _linked(folder: Path, name: str, target: Path) -> Path:
    link = folder / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def _hard(folder: Path, name: str, target: Path) -> Path:
    os.link(target, folder / name)
    return folder / name


def _load_test(folder: Path) -> Path:
    path = folder / "bench.json"
    path.write_text(json.dumps({"backend": "vllm", "max_concurrency": 8, "mean_ttft_ms": 80.0,
                                "mean_tpot_ms": 12.0, "total_input_tokens": 100, "completed": 1}))
    return path


def _calibrate(folder: Path, *extra: object) -> list[object]:
    return ["calibrate", _load_test(folder), "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
            "--precision", "fp8", *extra]


def _gcp_export(folder: Path) -> Path:
    return text_file(folder, "export.csv", "cost,currency,invoice.month\n1.00,USD,202605\n")


CASES: dict[str, Case] = {
    "reconcile --unmapped-csv is the plan": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", d / "plan.xlsx"]),
        names=("plan.xlsx", INPUT, "--unmapped-csv")),
    "reconcile --unmapped-csv is a bill": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", d / "bill.csv"]),
        names=("bill.csv", INPUT)),
    "reconcile --unmapped-csv=the usage file": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _usage(d), f"--unmapped-csv={d / 'usage.csv'}"]),
        names=("usage.csv", INPUT)),
    "reconcile --unmapped-csv through a symbolic link to the plan": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", _linked(d, "u.csv", d / "plan.xlsx")]),
        names=("u.csv", INPUT)),
    "reconcile --unmapped-csv a hard link of the bill": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", _hard(d, "u.csv", d / "bill.csv")]),
        names=("u.csv", INPUT)),
    "reconcile --unmapped-csv the plan spelled another way": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", d / "out" / ".." / "plan.xlsx"]),
        names=(INPUT,)),
    "the plan kept in --out under the review's name": Case(
        lambda d: reconcile_argv(d, plan(d / "out", REVIEW), bill(d)), names=(REVIEW, INPUT)),
    "a link in --out under the review's name pointing at the plan": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d)) if _linked(d / "out", REVIEW, d / "plan.xlsx") else [],
        names=(REVIEW, INPUT)),
    "a workbook in --out under the review's name that no run wrote": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d)) if plan(d / "out", REVIEW) else [],
        names=(REVIEW, "not a review this tool wrote")),
    "a link in --out under the review's name pointing at another workbook": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d)) if _linked(d / "out", REVIEW, plan(d, "notes.xlsx")) else [],
        names=(REVIEW, "not a review this tool wrote")),
    "reconcile --unmapped-csv onto the history it keeps": Case(
        lambda d: _after_a_run(d, ["--unmapped-csv", d / "out" / "reconcile-history.duckdb"]),
        names=("reconcile-history.duckdb", INPUT)),
    "reconcile --unmapped-csv onto the review it replaces": Case(
        lambda d: _after_a_run(d, ["--unmapped-csv", d / "out" / REVIEW]), names=(REVIEW, INPUT)),
    "calibrate --out is its load test": Case(
        lambda d: _calibrate(d, "--out", d / "bench.json"), names=("bench.json", INPUT, "--out")),
    "calibrate --out is its --base": Case(
        lambda d: _calibrate(d, "--base", _base(d), "--out", d / "base.json"), names=("base.json", INPUT)),
    "bills pull --out is its source": Case(
        lambda d: ["bills", "pull", "--provider", "gcp", "--source", _gcp_export(d), "--month", MONTH,
                   "--out", d / "export.csv"], names=("export.csv", INPUT)),
    "mix profile --out is its bill": Case(
        lambda d: ["mix", "profile", "--bills", bill(d), "--out", d / "bill.csv"], names=("bill.csv", INPUT)),
    "plan next --out is a link to the plan": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--metrics",
                   _metrics(d), "--out", _linked(d, "next.xlsx", d / "plan.xlsx")], names=(INPUT,)),
    "template build --out is its --prices": Case(
        lambda d: ["template", "build", "--prices", _prices(d), "--out", d / "prices.csv"],
        names=("prices.csv", INPUT)),
    "reconcile --unmapped-csv through a folder not made yet and back (new/../plan.xlsx)": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", d / "new" / ".." / "plan.xlsx"]),
        names=("plan.xlsx", INPUT, "--unmapped-csv")),
    "reconcile --unmapped-csv=new/../bill.csv": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=[f"--unmapped-csv={d / 'new' / '..' / 'bill.csv'}"]),
        names=("bill.csv", INPUT)),
    "reconcile --out new/.. where the plan has the review's name": Case(
        lambda d: reconcile_argv(d, plan(d, REVIEW), bill(d), out=d / "new" / ".."), names=(REVIEW, INPUT)),
    "reconcile --out new/.. where a workbook no run wrote has the review's name": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), out=d / "new" / "..") if plan(d, REVIEW) else [],
        names=(REVIEW, "not a review this tool wrote")),
    "reconcile --unmapped-csv a named pipe": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", _fifo(d / "unmapped.csv")]),
        names=("unmapped.csv", "not a plain file"), verify=lambda d, out, err: _still_a_fifo(d / "unmapped.csv")),
    "template build --out new/../plan.xlsx, a workbook there (was exit 0: replaced)": Case(
        lambda d: ["template", "build", "--out", d / "new" / ".." / plan(d).name], names=("plan.xlsx", "already there")),
    "calibrate --out new/../ a JSON file of someone else": Case(
        lambda d: _calibrate(d, "--out", d / "new" / ".." / text_file(d, "notes.json", "{}").name),
        names=("notes.json", "not a calibration this tool wrote")),
    "calibrate --out new/../ its load test": Case(
        lambda d: _calibrate(d, "--out", d / "new" / ".." / "bench.json"), names=("bench.json", INPUT)),
    "mix profile --out new/../ its bill": Case(
        lambda d: ["mix", "profile", "--bills", bill(d), "--out", d / "new" / ".." / "bill.csv"],
        names=("bill.csv", INPUT)),
    "bills pull --out new/../ its source": Case(
        lambda d: ["bills", "pull", "--provider", "gcp", "--source", _gcp_export(d), "--month", MONTH,
                   "--out", d / "new" / ".." / "export.csv"], names=("export.csv", INPUT)),
    "demo --out a folder holding a plan of the template's name (was exit 0: replaced)": Case(
        lambda d: ["demo", "--out", d / "work", "--quiet"] if plan(d / "work", "llm-finops-plan.xlsx") else [],
        names=("work", "llm-finops-plan.xlsx", "no demo wrote")),
    "demo --out a folder holding someone's mix.json (was exit 0: replaced)": Case(
        lambda d: ["demo", "--out", text_file(d / "work", "mix.json", "{}").parent, "--quiet"],
        names=("mix.json", "no demo wrote")),
    "demo --out a file": Case(
        lambda d: ["demo", "--out", text_file(d, "notes.txt", "mine"), "--quiet"], names=("notes.txt", "is a file")),
    "bills pull --out a data file of the local AWS export it reads (was exit 0: replaced)": Case(
        lambda d: _aws_pull(d, aws_export(d) / AWS_EXPORT_DATA), names=("gpu-focus-00001.parquet", INPUT, "--source")),
    "bills pull --out a Parquet file no pull wrote (was exit 0: replaced)": Case(
        lambda d: _aws_pull(d, _parquet_of_someone(d / "mine.parquet")),
        names=("mine.parquet", "not a FOCUS bill this tool wrote")),
    "reconcile --unmapped-csv a CSV of someone else (was exit 0: replaced)": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--unmapped-csv", text_file(d, "notes.csv", "my,notes\n")]),
        names=("notes.csv", "not a list of unmapped charges this tool wrote")),
    "plan next --out a workbook of someone else (was exit 0: replaced)": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--metrics",
                   _metrics(d), "--out", plan(d, "notes.xlsx")], names=("notes.xlsx", "not a next plan this tool wrote")),
    "plan next --out a text file named .xlsx (was exit 0: replaced)": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--metrics",
                   _metrics(d), "--out", text_file(d, "n.xlsx", "mine")], names=("n.xlsx", "not a next plan")),
    "reconcile --in-place on a plan with its own sheet 'actuals' (was exit 0: a second 'Actuals' added)": Case(
        lambda d: reconcile_argv(d, _with_sheet(plan(d), "actuals"), bill(d), extra=["--in-place"]),
        names=("plan.xlsx", "sheet actuals", "did not write")),
    "reconcile --in-place on a plan with its own sheet 'VARIANCE'": Case(
        lambda d: reconcile_argv(d, _with_sheet(plan(d), "VARIANCE"), bill(d), extra=["--in-place"]),
        names=("plan.xlsx", "sheet VARIANCE", "did not write")),
    "prices pull --out is the offer file": Case(
        lambda d: ["prices", "pull", "--offer-file", _offer(d), "--out", d / "offer.csv"],
        names=("offer.csv", INPUT)),
}


def _after_a_run(folder: Path, extra: list[object]) -> list[object]:
    """A reconcile of May into ``folder/out`` (its history and review there), then the argv of another."""
    from finops.cli import main

    assert main([str(a) for a in reconcile_argv(folder, plan(folder), bill(folder))]) == 0
    return reconcile_argv(folder, folder / "plan.xlsx", folder / "bill.csv", extra=extra)


def _aws_pull(folder: Path, out: Path) -> list[object]:
    source = folder / "exports" if (folder / "exports").is_dir() else aws_export(folder)
    return ["bills", "pull", "--provider", "aws", "--source", source, "--month", MONTH, "--out", out]


def _parquet_of_someone(path: Path) -> Path:
    import duckdb

    duckdb.sql(f"COPY (SELECT 1 AS answer) TO '{path}' (FORMAT parquet)")
    return path


def _with_sheet(path: Path, title: str) -> Path:
    """The plan with a sheet of the user's own named ``title`` (Excel compares sheet names ignoring case)."""
    import openpyxl

    book = openpyxl.load_workbook(path)
    book.create_sheet(title)["A1"] = "typed by hand"
    book.save(path)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _still_a_fifo(path: Path) -> None:
    import stat

    assert stat.S_ISFIFO(os.lstat(path).st_mode), "the named pipe was replaced"


def _usage(folder: Path) -> Path:
    return text_file(folder, "usage.csv", f"Month,PlanLine,ActualMTokens\n{MONTH},gpu,1\n")


def _base(folder: Path) -> Path:
    from finops.sizing.engine_constants import Calibration

    return Calibration.bundled().write(folder / "base.json")


def _metrics(folder: Path) -> Path:
    return text_file(folder, "m.json", '{"status": "success", "data": {"resultType": "matrix", "result": []}}')


def _prices(folder: Path) -> Path:
    from finops.price_book import PriceBook

    return PriceBook.current().write_csv(folder / "prices.csv")


def _offer(folder: Path) -> Path:
    return text_file(folder, "offer.csv", '"FormatVersion","v1.0"\n')


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_writer_replaces_an_input(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)


def _second_run(folder: Path) -> list[object]:
    """A review written by an earlier run is the tool's own: a rerun replaces it."""
    from finops.cli import main

    argv = reconcile_argv(folder, plan(folder), bill(folder))
    assert main([str(a) for a in argv]) == 0
    return argv


def test_a_rerun_replaces_its_own_review(tmp_path, capsys, monkeypatch):
    def newer(folder: Path, out: str, err: str) -> None:
        assert (folder / "out" / REVIEW).stat().st_size > 0

    check(Case(_second_run, exit=0, unchanged=False, verify=newer), tmp_path, capsys, monkeypatch)
    assert (tmp_path / "plan.xlsx").read_bytes()[:2] == b"PK"


def test_a_pull_replaces_its_own_earlier_pull(tmp_path, capsys, monkeypatch):
    """The Parquet file of an earlier ``bills pull`` is the tool's own: pulling the month again replaces it."""
    from finops.cli import main

    argv = [str(a) for a in _aws_pull(tmp_path, tmp_path / "may.parquet")]
    assert main(argv) == 0
    def pulled(folder: Path, out: str, err: str) -> None:
        import pyarrow.parquet as pq

        assert pq.read_metadata(folder / "may.parquet").num_rows > 0 and "wrote" in out

    check(Case(lambda d: argv, exit=0, unchanged=False, verify=pulled), tmp_path, capsys, monkeypatch)
