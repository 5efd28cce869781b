"""`finops reconcile` starts light: in a fresh process it loads nothing of the add-in, xlwings or pandas,
none of the sizing, mix or TCO models nor the notebook API, and reads only the plan's tables (openpyxl
read-only). Neither importing the command line nor the run loads numpy (openpyxl would pull numpy in when it is
installed, ``openpyxl.compat.numbers``; the command imports openpyxl without it)."""

from __future__ import annotations

import json
import subprocess
import sys

from finops.reconcile.sample_bills import sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE

RUN = """
import json, sys
import finops.cli
after_import = sorted(sys.modules)
code = finops.cli.main(sys.argv[1:])
print(json.dumps({"code": code, "after_import": after_import, "after_run": sorted(sys.modules)}))
"""

#: What reconcile does not use: the models of the other commands and the notebook API over them.
OTHER_MODELS = {"finops.sizing", "finops.mix", "finops.tco", "finops.api"}


def _reconcile_in_fresh_process(tmp_path) -> dict:
    args = ["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", "2026-05", "--out", str(tmp_path), "--quiet",
            "--bills", *map(str, sample_bill_paths())]
    out = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_reconcile_loads_no_addin_xlwings_pandas_or_other_models(tmp_path):
    result = _reconcile_in_fresh_process(tmp_path)
    assert result["code"] == 0 and (tmp_path / "budget-review-2026-05.xlsx").is_file()
    top_level = {name.split(".")[0] for name in result["after_run"]}
    assert {"addin", "xlwings", "pandas", "numpy"}.isdisjoint(top_level)
    assert "openpyxl" in top_level  # the plan was read with openpyxl, imported without numpy
    assert "duckdb" in top_level  # the command did run its scan in this process
    assert OTHER_MODELS.isdisjoint(result["after_run"])
    # Importing the command line registers every command without loading numpy or any model.
    assert {"numpy", *OTHER_MODELS}.isdisjoint(result["after_import"])


def test_finops_api_names_still_resolve_lazily():
    """``from finops import size``, ``finops.tco`` (the function, even once the package is imported) and
    ``dir(finops)`` behave as the eager re-export did."""
    code = """
import json, sys, finops
light = "finops.api" not in sys.modules
import finops.tco
from finops import size, estimate
print(json.dumps({"light": light, "tco_callable": callable(finops.tco), "tco_is_api": finops.tco is sys.modules["finops.api"].tco,
                  "size": size is sys.modules["finops.api"].size, "dir": sorted(set(finops.__all__) - set(dir(finops)))}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"light": True, "tco_callable": True, "tco_is_api": True, "size": True, "dir": []}


def test_openpyxl_is_imported_without_numpy_and_numpy_stays_importable():
    code = """
import json, sys
from finops.cli.reconcile import _import_openpyxl_without_numpy
_import_openpyxl_without_numpy()
from openpyxl.compat.numbers import NUMPY
light = "numpy" not in sys.modules
import numpy
print(json.dumps({"light": light, "openpyxl_numpy": NUMPY, "numpy": numpy.__name__}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"light": True, "openpyxl_numpy": False, "numpy": "numpy"}


def test_with_numpy_imported_earlier_openpyxl_is_imported_as_usual():
    code = """
import json, sys
import numpy
from finops.cli.reconcile import _import_openpyxl_without_numpy
_import_openpyxl_without_numpy()
from openpyxl.compat.numbers import NUMPY
print(json.dumps({"openpyxl_numpy": NUMPY, "numpy": sys.modules["numpy"] is numpy}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"openpyxl_numpy": True, "numpy": True}
