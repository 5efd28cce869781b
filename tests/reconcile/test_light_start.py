"""`finops reconcile` starts light: in a fresh process it loads nothing of the add-in, xlwings or pandas,
and reads only the plan's tables (openpyxl read-only)."""

from __future__ import annotations

import json
import subprocess
import sys

from finops.reconcile.sample_bills import sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE

RUN = """
import json, sys
from finops.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted({name.split(".")[0] for name in sys.modules})}))
"""


def test_reconcile_loads_no_addin_xlwings_or_pandas(tmp_path):
    args = ["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", "2026-05", "--out", str(tmp_path), "--quiet",
            "--bills", *map(str, sample_bill_paths())]
    out = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["code"] == 0 and (tmp_path / "budget-review-2026-05.xlsx").is_file()
    assert {"addin", "xlwings", "pandas"}.isdisjoint(result["modules"])
    assert "duckdb" in result["modules"]  # the command did run its scan in this process
