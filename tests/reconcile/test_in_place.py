"""--in-place: Actuals and Variance written into the plan; every other part of the file kept as it was."""

from __future__ import annotations

import re
import zipfile
from datetime import date
from pathlib import Path

import openpyxl
import xlsxwriter

from finops.cli import main
from templates.plan_actuals import MARKER
from templates.plan_reader import read_plan

from .conftest import ASSETS_HEADERS, BUDGET_HEADERS, MAPPING_HEADERS, write_bill

CONTROL = {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml"}
ADDED = re.compile(r'<sheet name="(Actuals|Variance)"[^>]*/>|<Relationship Id="rIdFinops\w+"[^>]*/>'
                   r'|<Override PartName="/xl/worksheets/finops_\w+\.xml"[^>]*/>')


def plan_with_a_chart(path: Path, *, extra_sheet: str | None = None) -> Path:
    """A plan made by XlsxWriter with the three tables and a chart (which openpyxl would drop on save)."""
    wb = xlsxwriter.Workbook(str(path))
    for sheet, name, headers, rows in (
            ("Budget", "tblBudget", BUDGET_HEADERS, [["2026-05", "gpu", "cc", "OPEX", "AWS", 100, "USD", None],
                                                     ["2026-05", "onprem", "cc", "CAPEX", "", 1000, "USD", None]]),
            ("Assets", "tblAssets", ASSETS_HEADERS, [["S1", "srv", "onprem", "cc", "h100-sxm", 8, date(2026, 1, 1),
                                                      None, 61000, 1000, 60, "USD"]]),
            ("Mapping", "tblMapping", MAPPING_HEADERS, [[1, "gpu", "", "", "AmazonEC2", "", "", "", ""]])):
        ws = wb.add_worksheet(sheet)
        date_format = wb.add_format({"num_format": "yyyy-mm-dd"})
        ws.add_table(0, 0, len(rows), len(headers) - 1, {"name": name, "columns": [{"header": h} for h in headers]})
        for r, row in enumerate(rows, start=1):
            for c, value in enumerate(row):
                if isinstance(value, date):
                    ws.write_datetime(r, c, value, date_format)
                elif value is not None:
                    ws.write(r, c, value)
        if sheet == "Budget":
            chart = wb.add_chart({"type": "column"})
            chart.add_series({"categories": "=Budget!$B$2:$B$3", "values": "=Budget!$F$2:$F$3"})
            ws.insert_chart("J2", chart)
    if extra_sheet:
        wb.add_worksheet(extra_sheet).write_string(0, 0, "my own notes")
    wb.close()
    return path


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def reconcile(plan: Path, bill: Path, out: Path, *extra: str) -> int:
    return main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--bills", str(bill), "--out", str(out),
                 "--quiet", *extra])


def test_in_place_adds_two_sheets_and_keeps_every_other_part(tmp_path):
    plan = plan_with_a_chart(tmp_path / "plan.xlsx")
    bill = write_bill(tmp_path / "may.csv", [{"EffectiveCost": "120"}])
    before, original = parts(plan), plan.read_bytes()
    assert reconcile(plan, bill, tmp_path / "out", "--in-place") == 0
    after = parts(plan)

    assert any(n.startswith("xl/charts/") for n in before)
    for name, content in before.items():
        if name in CONTROL:
            assert ADDED.sub("", after[name].decode()) == content.decode()  # only insertions
        else:
            assert after[name] == content, name
    assert sorted(set(after) - set(before)) == ["xl/worksheets/finops_actuals.xml", "xl/worksheets/finops_variance.xml"]

    backups = list(tmp_path.glob("plan.backup-*.xlsx"))
    assert len(backups) == 1 and backups[0].read_bytes() == original
    book = openpyxl.load_workbook(plan, data_only=True)
    assert book.sheetnames == ["Budget", "Assets", "Mapping", "Actuals", "Variance"]
    variance = book["Variance"]
    assert variance["A1"].value == MARKER
    assert [c.value for c in variance[5]][:4] == ["gpu", "OPEX", 100, 120]
    actuals = [[c.value for c in row] for row in book["Actuals"].iter_rows(min_row=5, max_col=3)]
    assert actuals == [["2026-05", "gpu", 120], ["2026-05", "onprem", 1000]]  # 60,000 over 60 months
    assert len(read_plan(plan).budget) == 2  # still a readable plan


def test_variance_formulas_cache_what_they_compute(tmp_path):
    """Amounts are written to the cent; the cached variance and % are computed from those cells, so a
    viewer that shows cached values and Excel after recalculating show the same figures."""
    plan = plan_with_a_chart(tmp_path / "plan.xlsx")
    bill = write_bill(tmp_path / "may.csv", [{"EffectiveCost": "118.749"}])
    assert reconcile(plan, bill, tmp_path / "out", "--in-place") == 0
    values = openpyxl.load_workbook(plan, data_only=True)["Variance"]
    formulas = openpyxl.load_workbook(plan)["Variance"]
    assert [c.value for c in formulas[5]][4:6] == ["=D5-C5", '=IF(C5=0,"",E5/ABS(C5))']
    planned, actual, variance, pct = (values.cell(5, c).value for c in (3, 4, 5, 6))
    assert (planned, actual) == (100, 118.75)
    assert variance == actual - planned and pct == variance / abs(planned)  # 0.1875, not 0.18749


def test_second_run_replaces_only_the_two_sheets(tmp_path):
    plan = plan_with_a_chart(tmp_path / "plan.xlsx")
    bill = write_bill(tmp_path / "may.csv", [{"EffectiveCost": "120"}])
    assert reconcile(plan, bill, tmp_path / "out", "--in-place") == 0
    first = parts(plan)
    bill2 = write_bill(tmp_path / "may2.csv", [{"EffectiveCost": "130"}])
    assert reconcile(plan, bill2, tmp_path / "out", "--in-place") == 0
    second = parts(plan)
    assert set(first) == set(second)
    assert sorted(n for n in first if first[n] != second[n]) == ["xl/worksheets/finops_actuals.xml",
                                                                 "xl/worksheets/finops_variance.xml"]
    assert openpyxl.load_workbook(plan, data_only=True)["Variance"]["D5"].value == 130


def test_a_foreign_sheet_of_that_name_is_never_overwritten(tmp_path, capsys):
    plan = plan_with_a_chart(tmp_path / "plan.xlsx", extra_sheet="Variance")
    before = plan.read_bytes()
    bill = write_bill(tmp_path / "may.csv", [{}])
    assert reconcile(plan, bill, tmp_path / "out", "--in-place") == 2
    assert "sheet named Variance that llm-finops did not write" in capsys.readouterr().err.replace("\n", "")
    assert plan.read_bytes() == before
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("*.backup-*"))


def test_without_in_place_the_plan_is_untouched(tmp_path):
    plan = plan_with_a_chart(tmp_path / "plan.xlsx")
    before = plan.read_bytes()
    assert reconcile(plan, write_bill(tmp_path / "may.csv", [{}]), tmp_path / "out") == 0
    assert plan.read_bytes() == before
