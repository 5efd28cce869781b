"""The FinOps Foundation's focus-validator over every FOCUS file the connectors write from the fixtures
(``scripts/focus_conformance.sh``): only the validator's own bugs (docs/focus.md) may fail.

The validator needs Python 3.12 or newer and its own virtual environment (``FOCUS_VALIDATOR_VENV``, default
``.venv-focus-validator``, created by running the script once where PyPI can be reached). Without them this
test is skipped, saying which is missing; it never installs anything itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("FOCUS_VALIDATOR_VENV", ROOT / ".venv-focus-validator"))


def test_the_validator_passes_everything_the_connectors_write(tmp_path):
    if not (VENV / "bin" / "focus-validator").exists():
        pytest.skip(f"focus-validator is not installed in {VENV} (it needs Python 3.12+): "
                    "run scripts/focus_conformance.sh once to create it")
    result = subprocess.run([str(ROOT / "scripts" / "focus_conformance.sh"), str(tmp_path)], capture_output=True,
                            text=True, env={**os.environ, "FOCUS_VALIDATOR_VENV": str(VENV), "PYTHON": sys.executable},
                            timeout=600, check=False)
    if result.returncode == 3:
        pytest.skip(result.stderr.strip())
    report = (tmp_path / "report.txt").read_text()
    assert result.returncode == 0, report + result.stderr
    assert report.count("ours: none") == len(list((tmp_path / "files").glob("*.parquet"))) == 6


def _helper():
    import importlib.util

    spec = importlib.util.spec_from_file_location("focus_conformance", ROOT / "scripts" / "focus_conformance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_parent_failing_only_through_validator_bugs_is_known_and_ours_are_reported():
    helper = _helper()
    report = "\n".join([
        "❌ InvoiceId-C-004-C: FAIL  (violations=14, msg=InvoiceId MUST be NULL., 2.3ms)",
        "❌ InvoiceId-C-000-M: FAIL  (violations=1, msg=InvoiceId-C-000-M: AND failed - failed child rules: "
        "[InvoiceId-C-004-C])",
        "❌ PricingQuantity-C-004-C: FAIL  (violations=1, msg=PricingQuantity MUST be NULL., 5.8ms)",
        "❌ PricingQuantity-C-000-M: FAIL  (violations=1, msg=PricingQuantity-C-000-M: AND failed - failed child "
        "rules: [PricingQuantity-C-004-C, InvoiceId-C-004-C])",
        "✅ BilledCost-C-001-M: PASS"])
    failed = helper.failures(report)
    assert sorted(failed) == ["InvoiceId-C-000-M", "InvoiceId-C-004-C", "PricingQuantity-C-000-M",
                              "PricingQuantity-C-004-C"]
    assert helper.unexplained(failed) == ["PricingQuantity-C-000-M", "PricingQuantity-C-004-C"]
