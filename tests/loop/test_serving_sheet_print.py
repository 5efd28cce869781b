"""The review's Serving sheet reads on paper like the other review sheets: landscape A4 at 75 % or more,
nothing yellow (it has no input cells), words with units over each table's stable column names."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from finops.cli import main
from finops.cli.demo import SAMPLE_METRICS, SAMPLE_SERVING
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE

from .serving_sheet import serving_tables

LOAD_TEST = Path(__file__).resolve().parents[1] / "sizing" / "fixtures" / "vllm-bench-serve.json"
INPUT_FILL = "FFF7D6"      # templates/styles.py's input cells


@pytest.fixture(scope="module")
def review(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("serving-review")
    args = ["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", SAMPLE_MONTH, "--out", str(out), "--quiet",
            "--bills", *map(str, sample_bill_paths()), "--serving", str(SAMPLE_SERVING),
            "--load-test", f"aws-inference-prod={LOAD_TEST}"]
    for path in sorted(SAMPLE_METRICS.glob(f"{SAMPLE_MONTH}-*.json.gz")):
        args += ["--metrics", str(path)]
    assert main(args) == 0
    return out / f"budget-review-{SAMPLE_MONTH}.xlsx"


def test_serving_prints_landscape_at_a_readable_scale_with_no_input_cells(review):
    ws = openpyxl.load_workbook(review)["Serving"]
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.paperSize == 9      # A4
    # a fixed scale of 75 % or more: 11 pt text prints at 8 pt or more (wider than a page: across pages)
    assert not (ws.sheet_properties.pageSetUpPr and ws.sheet_properties.pageSetUpPr.fitToPage)
    assert 75 <= ws.page_setup.scale <= 100
    assert sorted(ws.tables) == ["tblServingCapacity", "tblServingLoadTests", "tblServingReview"]
    yellow = [c.coordinate for row in ws.iter_rows() for c in row
              if c.fill is not None and c.fill.fgColor is not None and str(c.fill.fgColor.rgb).endswith(INPUT_FILL)]
    assert yellow == []
    # printed width at 100 %: the columns' widths, within twice a landscape page (the fit scales it by >= 1/2)
    assert sum(ws.column_dimensions[c].width for c in "ABCDEFGHIJKLMN") < 2 * 134


def test_words_with_units_sit_over_the_stable_names(review):
    ws = openpyxl.load_workbook(review, read_only=True)["Serving"]
    rows = list(ws.iter_rows(values_only=True))
    over = {name: rows[i - 1][j] for i, row in enumerate(rows) if row and row[0] == "PlanLine"
            for j, name in enumerate(row) if name}
    assert over["MTokens"] == "Tokens served (millions)"
    assert over["TtftP99Ms"] == "First token P99 (ms)"
    assert over["CostPerMTokens"] == "Cost per million tokens served"
    assert over["File"] == "Load-test file"
    # and the tables still read by their names: five production lines in both, one load-test point
    traffic, capacity, tests = serving_tables(review)
    assert [r["PlanLine"] for r in traffic] == [r["PlanLine"] for r in capacity] and len(traffic) == 5
    assert tests[0]["File"] == LOAD_TEST.name
