"""Inputs are sacred: no writer replaces a file the run reads, whatever the output option, the spelling of
the path, a symbolic or a hard link; the review replaces only a review this tool wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .desk import MONTH, Case, bill, check, plan, reconcile_argv, text_file

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
    "prices pull --out is the offer file": Case(
        lambda d: ["prices", "pull", "--offer-file", _offer(d), "--out", d / "offer.csv"],
        names=("offer.csv", INPUT)),
}


def _after_a_run(folder: Path, extra: list[object]) -> list[object]:
    """A reconcile of May into ``folder/out`` (its history and review there), then the argv of another."""
    from finops.cli import main

    assert main([str(a) for a in reconcile_argv(folder, plan(folder), bill(folder))]) == 0
    return reconcile_argv(folder, folder / "plan.xlsx", folder / "bill.csv", extra=extra)


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
