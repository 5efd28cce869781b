"""Outputs say what they are and replace only their own: a writer refuses an ``--out`` whose suffix contradicts the
format it writes (a JSON calibration as ``c.txt``, a CSV demand profile as ``x.parquet``), before any work, and
replaces a file already there only when this tool wrote it (its own earlier calibration or demand CSV), as the
budget review does; anything else there is never replaced."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from .desk import Case, check, text_file, write_bill

ROOT = Path(__file__).resolve().parents[2]
LOAD_TEST = ROOT / "tests" / "sizing" / "fixtures" / "vllm-bench-serve.json"
NOT_OURS = "not a {} this tool wrote"


def _calibrate(folder: Path, out: Path) -> list[object]:
    return ["calibrate", LOAD_TEST, "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
            "--precision", "fp8", "--out", out]


def _generate(out: Path) -> list[object]:
    return ["mix", "generate", "--out", out, "--peak", "8", "--hours", "48"]


def _profile(folder: Path, out: Path) -> list[object]:
    bill = write_bill(folder / "bill.csv", [{"InvoiceId": f"I{i}", "x_GpuHours": "1"} for i in range(2)])
    return ["mix", "profile", "--bills", bill, "--out", out]


def _twice(argv: Sequence[object]) -> Sequence[object]:
    """``argv`` run once here (its output written), then given again for the case."""
    from finops.cli import main

    assert main([str(a) for a in argv]) == 0
    return argv


CASES: dict[str, Case] = {
    "calibrate --out c.txt": Case(lambda d: _calibrate(d, d / "c.txt"), names=("c.txt", "JSON", "--out c.json")),
    "calibrate --out c.csv": Case(lambda d: _calibrate(d, d / "c.csv"), names=("c.csv", ".json")),
    "calibrate --out without a suffix": Case(lambda d: _calibrate(d, d / "calibration"), names=("calibration", ".json")),
    "calibrate --out a folder": Case(lambda d: _calibrate(d, d), names=("--out is a folder",)),
    "calibrate --out a JSON file of someone else": Case(
        lambda d: _calibrate(d, text_file(d, "notes.json", '{"owner": "finance", "q3": [1, 2]}\n')),
        names=("notes.json", NOT_OURS.format("calibration"))),
    "calibrate --out a load-test result it was not given": Case(
        lambda d: _calibrate(d, text_file(d, "other-bench.json", LOAD_TEST.read_text())),
        names=("other-bench.json", NOT_OURS.format("calibration"))),
    "calibrate --out an empty file": Case(lambda d: _calibrate(d, text_file(d, "c.json", "")),
                                          names=("c.json", NOT_OURS.format("calibration"))),
    "mix generate --out x.parquet": Case(lambda d: _generate(d / "x.parquet"), names=("x.parquet", "CSV", "--out x.csv")),
    "mix generate --out demand.xlsx": Case(lambda d: _generate(d / "demand.xlsx"), names=("demand.xlsx", ".csv")),
    "mix generate --out a CSV of someone else": Case(
        lambda d: _generate(text_file(d, "demand.csv", "month,amount\n2026-05,100\n")),
        names=("demand.csv", NOT_OURS.format("demand CSV"))),
    "mix generate --out a demand CSV with a header of another tool": Case(
        lambda d: _generate(text_file(d, "demand.csv", "timestamp,gpus\n0,1\n")),
        names=("demand.csv", NOT_OURS.format("demand CSV"))),
    "mix generate --out a binary file named .csv": Case(
        lambda d: _generate(d / "demand.csv") if (d / "demand.csv").write_bytes(b"\x89PNG\r\n\x1a\n\0\0") else [],
        names=("demand.csv", NOT_OURS.format("demand CSV"))),
    "mix generate --out a folder": Case(lambda d: _generate(d), names=("--out is a folder",)),
    "mix profile --out prices.parquet": Case(lambda d: _profile(d, d / "prices.parquet"), names=("prices.parquet",)),
    "mix profile --out a CSV of someone else": Case(
        lambda d: _profile(d, text_file(d, "usage.csv", "Month,PlanLine,ActualMTokens\n2026-05,gpu,1\n")),
        names=("usage.csv", NOT_OURS.format("demand CSV"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_output_says_what_it_is_and_replaces_only_its_own(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)


RERUNS = {
    "calibrate over its own calibration": (lambda d: _twice(_calibrate(d, d / "c.json")), "c.json", "{"),
    "mix generate over its own demand CSV": (lambda d: _twice(_generate(d / "demand.csv")), "demand.csv",
                                             "hour,accelerators"),
    "mix generate over the demand CSV of mix profile": (
        lambda d: _generate(d / "demand.csv") if _twice(_profile(d, d / "demand.csv")) else [], "demand.csv",
        "hour,accelerators"),
}


@pytest.mark.parametrize("name", sorted(RERUNS))
def test_a_rerun_replaces_its_own_output(name, tmp_path, capsys, monkeypatch):
    build, output, first = RERUNS[name]

    def verify(folder: Path, out: str, err: str) -> None:
        text = (folder / output).read_text()
        assert text.startswith(first)
        if output.endswith(".json"):
            assert json.loads(text)["source"].startswith("load tests")

    check(Case(build, exit=0, unchanged=False, verify=verify), tmp_path, capsys, monkeypatch)
