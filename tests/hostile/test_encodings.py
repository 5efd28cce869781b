"""Wrong codes, encodings: a file saved by a Windows editor or Excel starts with a UTF-8 byte-order mark. A load
test, calibration or workload saved so was refused as "not JSON" ("Unexpected UTF-8 BOM") or "not valid TOML";
it reads as the same file without the mark. A file in another encoding (UTF-16) is still refused naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .desk import REPO, Case, check

BENCH = REPO / "tests" / "sizing" / "fixtures" / "vllm-bench-serve.json"
BOM = "\ufeff"


def _bench(folder: Path, encoding: str = "utf-8", mark: str = BOM) -> Path:
    path = folder / "bench.json"
    path.write_bytes((mark + BENCH.read_text()).encode(encoding))
    return path


def _calibrate(folder: Path, load_test: Path) -> list[object]:
    return ["calibrate", load_test, "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
            "--precision", "bf16", "--json", "--out", folder / "calibration.json"]


def _measured_as_the_file_says(folder: Path, out: str, err: str) -> None:
    """The one point measured is the fixture's own means, read here with ``json`` from the file without a mark."""
    source = json.loads(BENCH.read_text())
    point = json.loads(out)["points"][0]
    assert (point["ttft_ms"], point["tpot_ms"], point["concurrency"]) == (
        source["mean_ttft_ms"], source["mean_tpot_ms"], source["max_concurrency"]), point


def _workload(folder: Path) -> Path:
    path = folder / "w.toml"
    path.write_text(BOM + 'name = "chat"\nmodel = "llama-3.1-8b"\nisl = 100\nosl = 100\ndau = 1000\n'
                    "requests_per_user_per_hour = 2\n", encoding="utf-8")
    return path


CASES: dict[str, Case] = {
    "load test saved with a byte-order mark (was exit 2: 'Unexpected UTF-8 BOM')": Case(
        lambda d: _calibrate(d, _bench(d)), exit=0, may_write=("calibration.json",), verify=_measured_as_the_file_says),
    "load test in UTF-16": Case(lambda d: _calibrate(d, _bench(d, "utf-16", "")), names=("bench.json", "not JSON")),
    "calibration saved with a byte-order mark": Case(
        lambda d: ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--isl", "100",
                   "--osl", "100", "--concurrency", "4", "--calibration", _bom_calibration(d)], exit=0),
    "workload TOML saved with a byte-order mark (was exit 2: 'not valid TOML')": Case(
        lambda d: ["size", "--workload", _workload(d), "--json"], exit=0),
}


def _bom_calibration(folder: Path) -> Path:
    from finops.sizing.engine_constants import Calibration

    path = Calibration.bundled().write(folder / "cal.json")
    path.write_text(BOM + path.read_text())
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_byte_order_mark_is_no_part_of_the_file(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)
