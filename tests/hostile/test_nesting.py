"""Bounded by design, nesting: a JSON or TOML input nested past what the parser reads (Python's recursion
limit, about 1,000 levels; the files the tool reads nest fewer than 10) is refused with exit 2 naming the
file (it was exit 1, "internal error RecursionError"), whichever reader meets it (finops/limits.py,
``json_document``)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from .desk import MONTH, SERVING_CSV, Case, bill, check, plan, reconcile_argv, text_file

#: 100,000 levels of arrays, and of objects: far past any parser's recursion, a few hundred kB.
ARRAYS = "[" * 100_000 + "]" * 100_000
OBJECTS = '{"a":' * 100_000 + "1" + "}" * 100_000
DEEP = "deeper than about 1,000 levels"


def _metrics(folder: Path, text: str) -> Path:
    path = folder / "m.json.gz"
    path.write_bytes(gzip.compress(text.encode()))
    return path


def _serving(folder: Path) -> Path:
    return text_file(folder, "serving.csv", SERVING_CSV)


def _calibrate(folder: Path, load_test: Path) -> list[object]:
    return ["calibrate", load_test, "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
            "--precision", "fp8"]


def _estimate(*extra: object) -> list[object]:
    return ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--isl", "100",
            "--osl", "100", "--concurrency", "4", *extra]


def _plan_next(folder: Path, *extra: object) -> list[object]:
    return ["plan", "next", "--plan", plan(folder), "--history", folder / "h", "--month", MONTH, "--serving",
            _serving(folder), "--out", folder / "next.xlsx", "--quiet", *extra]


CASES: dict[str, Case] = {
    "saved Prometheus answer of nested arrays (reconcile)": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--serving", _serving(d), "--metrics",
                                                            _metrics(d, ARRAYS)]), names=("m.json.gz", DEEP)),
    "saved Prometheus answer of nested objects (plan next)": Case(
        lambda d: _plan_next(d, "--metrics", _metrics(d, OBJECTS)), names=("m.json.gz", DEEP)),
    "throughput corrections nested (size --corrections)": Case(
        lambda d: ["size", "--preset", "seed002-financial-copilot", "--gpus", "h100-sxm", "--corrections",
                   text_file(d, "throughput-corrections.json", ARRAYS)], names=("throughput-corrections.json", DEEP)),
    "load-test result nested": Case(lambda d: _calibrate(d, text_file(d, "bench.json", ARRAYS)),
                                    names=("bench.json", DEEP)),
    "calibration nested": Case(lambda d: _estimate("--calibration", text_file(d, "cal.json", OBJECTS)),
                               names=("cal.json", DEEP)),
    "model config.json nested": Case(
        lambda d: ["estimate", "--model", text_file(d, "config.json", OBJECTS), "--gpu", "h100-sxm", "--precision",
                   "fp8", "--isl", "100", "--osl", "100", "--concurrency", "4"], names=("config.json", DEEP)),
    "workload JSON nested": Case(lambda d: ["size", "--workload", text_file(d, "w.json", ARRAYS)],
                                 names=("w.json", DEEP)),
    "workload TOML of nested arrays": Case(
        lambda d: ["size", "--workload", text_file(d, "w.toml", "a = " + "[" * 50_000 + "]" * 50_000)],
        names=("w.toml", DEEP)),
    "contract commitments given a nested JSON (one field past the CSV limit)": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--contract-commitments",
                                                            text_file(d, "cc.json", ARRAYS)]),
        names=("cc.json", "row 1", "field limit")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_input_nested_past_the_parser_is_refused_naming_it(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)
