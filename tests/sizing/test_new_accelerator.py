"""Adding an accelerator is data only: a catalog row and its engine support, and the estimate says whose
measurements answered for it (``finops/catalog/data/README.md``).

The package is copied with the two data files edited, and a fresh interpreter estimates on it: no code
and no calibration file changes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import finops

PACKAGE = Path(finops.__file__).parent

ESTIMATE = """
import json
from finops.sizing import estimate
out = {}
for gpu in ("mi300x", "xpu-1", "mi301x"):
    e = estimate("llama-3.1-8b", gpu, precision="bf16", tp=1, isl=1024, osl=256, concurrency=16)
    out[gpu] = {"efficiency_source": e.efficiency_source, "calibrated": e.calibrated, "tpot_ms": e.tpot_ms,
                "ttft_ms": e.ttft_ms, "step_time_source": e.step_time_source}
print(json.dumps(out))
"""


def _copied_package(tmp_path: Path) -> Path:
    """The installed ``finops`` with two rows copied from AMD's MI300X: ``xpu-1`` of a vendor nothing
    measured, and ``mi301x`` of AMD (a renamed MI300X), both served by vLLM at BF16."""
    root = tmp_path / "site"
    shutil.copytree(PACKAGE, root / "finops",
                    ignore=shutil.ignore_patterns("__pycache__", "bills", "metrics", "cli"))
    data = root / "finops" / "catalog" / "data"
    table = list(csv.DictReader(io.StringIO((data / "accelerators.csv").read_text())))
    mi300x = next(r for r in table if r["id"] == "mi300x")
    rows = [*table, {**mi300x, "id": "xpu-1", "name": "Example XPU 1", "vendor": "example", "aliases": ""},
            {**mi300x, "id": "mi301x", "name": "AMD MI300X renamed", "aliases": ""}]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (data / "accelerators.csv").write_text(out.getvalue())
    support = json.loads((data / "engine_support.json").read_text())
    support["rows"].append({"engine": "vllm", "gpus": ["xpu-1", "mi301x"], "precisions": ["bf16"],
                            "source": "test row", "as_of": "2026-12-07"})
    (data / "engine_support.json").write_text(json.dumps(support))
    return root


def test_a_new_accelerator_row_estimates_and_says_whose_measurements_answered(tmp_path):
    site = _copied_package(tmp_path)
    result = subprocess.run([sys.executable, "-c", ESTIMATE], capture_output=True, text=True, cwd=tmp_path,
                            env={"PYTHONPATH": str(site), "PATH": ""}, check=False)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    # a vendor no calibration row or published result measured: nothing answers, and it says so
    assert got["xpu-1"]["efficiency_source"] == "none"
    assert got["xpu-1"]["calibrated"] is False
    assert got["xpu-1"]["tpot_ms"] > 0 and got["xpu-1"]["ttft_ms"] > 0
    # a new AMD part of the CDNA3 family: the family's published-results fit answers, as for the MI300X it was copied from (same datasheet,
    # so the same figures), and it is not a measurement of the part itself
    assert got["mi301x"] == {**got["mi300x"], "calibrated": False}
    assert got["mi301x"]["efficiency_source"] == "amd-cdna3:vllm"
    # the vendor fit's lower efficiencies make the AMD copy slower than the unmeasured vendor's identical part
    assert got["mi301x"]["tpot_ms"] > got["xpu-1"]["tpot_ms"]
