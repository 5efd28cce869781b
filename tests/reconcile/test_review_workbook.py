"""The budget-review workbook: sheets, native formulas, charts, text-only bill strings, determinism."""

from __future__ import annotations

import json
import re
import zipfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

from .conftest import write_bill

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
DOC = Path(__file__).parents[2] / "docs" / "reconcile.md"
HOSTILE = {"sub": "=HYPERLINK(\"http://evil.example\",\"x\")", "service": "+SUM(1,2)", "region": "-2+3",
           "tag": "@cmd|' /C calc'!A0"}


@pytest.fixture
def review(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "may.csv", [
        {"x_InstanceType": "p5.48xlarge", "EffectiveCost": "100", "BilledCost": "100"},
        {"SubAccountName": HOSTILE["sub"], "ServiceName": HOSTILE["service"], "RegionId": HOSTILE["region"],
         "Tags": json.dumps({"owner": HOSTILE["tag"]}), "EffectiveCost": "7.25",
         "BilledCost": "7.25"}])
    rec, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / "out", run_at=RUN_AT)
    return rec, path


def sheet_xml(path, name):
    with zipfile.ZipFile(path) as z:
        book = z.read("xl/workbook.xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        rid = re.search(rf'<sheet name="{re.escape(name)}" sheetId="\d+" r:id="(rId\d+)"', book).group(1)
        target = re.search(rf'Id="{rid}" Type="[^"]+" Target="([^"]+)"', rels).group(1)
        return z.read("xl/" + target).decode()


def test_sheets_charts_and_name(review):
    _, path = review
    assert path.name == "budget-review-2026-05.xlsx"
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "Variance", "P&L and cash", "Commitments", "GPU usage", "Unmapped",
                               "Glossary"]
    with zipfile.ZipFile(path) as z:
        charts = sorted(n for n in z.namelist() if n.startswith("xl/charts/chart"))
    # plan against actual by line and the waterfall; the month-over-month chart needs two months
    assert len(charts) == 2


def test_variance_rows_are_native_formulas_with_cached_values(review):
    rec, path = review
    values = openpyxl.load_workbook(path, data_only=True)["Variance"]
    formulas = openpyxl.load_workbook(path)["Variance"]
    header = [c.value for c in values[4]]
    rows = {values.cell(r, 1).value: r for r in range(5, 5 + len(rec.lines))}
    gpu = rows["gpu"]
    col = {h: i + 1 for i, h in enumerate(header)}
    assert formulas.cell(gpu, col["Variance"]).value == f"=$E${gpu}-$D${gpu}"
    assert formulas.cell(gpu, col["Variance %"]).value == f'=IF($D${gpu}=0,"",$G${gpu}/ABS($D${gpu}))'
    assert values.cell(gpu, col["Planned"]).value == 100
    assert values.cell(gpu, col["P&L actual"]).value == 100
    assert values.cell(rows["onprem"], col["Variance"]).value == 200  # 1,200 depreciation vs 1,000 planned
    assert values.cell(rows["onprem"], col["Flag"]).value == "over"
    assert values.cell(rows["Unmapped"], col["P&L actual"]).value == 7.25


def test_strings_from_bills_stay_text(review):
    _, path = review
    xml = sheet_xml(path, "Unmapped")
    formulas = re.findall(r"<f>(.*?)</f>", xml)
    assert formulas and all(f.startswith("SUM(") for f in formulas)
    ws = openpyxl.load_workbook(path)["Unmapped"]
    texts = {ws.cell(5, c).value: ws.cell(5, c).data_type for c in range(1, 7)}
    for value in (HOSTILE["sub"], HOSTILE["service"], HOSTILE["region"]):
        assert texts[value] == "s"
    assert HOSTILE["tag"] in next(v for v in texts if v and v.startswith("{"))


def test_two_runs_are_identical_apart_from_the_run_timestamp(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "may.csv", [{"x_InstanceType": "p5.48xlarge"}, {"ServiceName": "AmazonS3"}])
    paths = [reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / f"out{i}", run_at=RUN_AT)[1]
             for i in range(2)]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    later = reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / "out2",
                                  run_at=datetime(2026, 6, 3, 8, 0, 0))[1]
    with zipfile.ZipFile(paths[0]) as a, zipfile.ZipFile(later) as b:
        assert a.namelist() == b.namelist()
        differ = [n for n in a.namelist() if a.read(n) != b.read(n)]
        # the run timestamp (Summary cell, page footers, creation date), nothing else
        assert {n for n in differ if not n.startswith("xl/worksheets/")} == {"docProps/core.xml",
                                                                             "xl/sharedStrings.xml"}
        for name in differ:
            first = re.sub(rb"2026-06-02[ T]07:30", b"RUN", a.read(name))
            assert first == re.sub(rb"2026-06-03[ T]08:00", b"RUN", b.read(name)), name


def test_demo_template_and_sample_bills(tmp_path, template_plan):
    """The planning template as built by the workbook face, reconciled against both bundled samples."""
    rec, path = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, tmp_path / "out", run_at=RUN_AT)
    assert rec.billed_cost.amount == Decimal("67941.200509") + Decimal("89655.530162")
    assert sum((line.actual.amount for line in rec.lines), Decimal(0)) == rec.actual.amount
    summary = openpyxl.load_workbook(path, data_only=True)["Summary"]
    figures = {summary.cell(r, 1).value: summary.cell(r, 2).value for r in range(1, summary.max_row + 1)}
    assert figures["Cash: cloud billed (BilledCost)"] == pytest.approx(157596.730671, abs=1e-9)
    assert figures["P&L actual"] == pytest.approx(float(rec.actual.amount), abs=1e-9)
    documented = re.search(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL).group(1)
    assert json.loads(documented, parse_float=Decimal) == rec.totals()  # the --json example in docs/reconcile.md


def test_every_formula_recomputes_to_its_cached_value(review):
    """An independent engine (the `formulas` package) recalculates the review: nothing depends on the add-in."""
    formulas = pytest.importorskip("formulas")
    _, path = review
    solution = formulas.ExcelModel().loads(str(path)).finish().calculate()
    book, cached = openpyxl.load_workbook(path), openpyxl.load_workbook(path, data_only=True)
    checked = 0
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    value = solution[f"'[{path.name}]{ws.title.upper()}'!{cell.coordinate}"].value[0, 0]
                    expected = cached[ws.title][cell.coordinate].value
                    if expected is None:
                        assert value == "", (ws.title, cell.coordinate)
                    else:
                        assert value == pytest.approx(expected, abs=1e-9), (ws.title, cell.coordinate)
                    checked += 1
    assert checked >= 15
