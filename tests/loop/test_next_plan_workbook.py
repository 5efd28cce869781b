"""``plan next`` keeps the workbook whole: the input's package with parts added, not a re-saved copy.

Checked against the committed template's own parts (read with ``zipfile``, not with the writer):
every part the writer has no reason to touch is byte-identical in the next plan (the charts and their
drawings, the styles, every sheet but Budget), the formulas keep their cached values, Budget keeps
its rows and data validation and gains the next month's below them, and the Changes sheet's figures
follow from the observed month (the demo plan's Usage table, which the sample metrics were drawn
from) and the growth: million tokens after = before x 1.1, ChangePct = after / before - 1.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import zipfile
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from finops.cli import main
from finops.reconcile.sample_bills import sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE
from templates.demo_plan import USAGE

#: The parts the next plan may change; every other part of the template is copied byte for byte.
CHANGED = {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml", "xl/sharedStrings.xml",
           "xl/worksheets/sheet6.xml", "xl/tables/table5.xml",    # Budget and its tblBudget (template order)
           "xl/styles.xml"}    # the added sheets' number formats, appended (the plan's own formats unchanged)
GROWTH = 1.1


def _plan_next(plan: Path, out: Path, metric_files: list[Path], serving_csv: Path) -> None:
    args = ["plan", "next", "--plan", str(plan), "--history", str(out.parent / "history"), "--month", "2026-05",
            "--serving", str(serving_csv), "--growth", str(GROWTH), "--out", str(out), "--quiet"]
    args += [a for p in metric_files for a in ("--metrics", str(p))]
    args += [a for p in sample_bill_paths() for a in ("--bills", str(p))]
    assert main(args) == 0


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, metric_files: list[Path], serving_csv: Path) -> Path:
    before = hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest()
    out = tmp_path_factory.mktemp("next") / "plan-next.xlsx"
    _plan_next(DEFAULT_TEMPLATE, out, metric_files, serving_csv)
    assert hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest() == before      # the input is untouched
    return out


def _rows(path: Path, sheet: str) -> list[dict[str, object]]:
    """The rows of an added sheet's table (header in row 3) as dicts."""
    ws = openpyxl.load_workbook(path, read_only=True, data_only=True)[sheet]
    rows = list(ws.iter_rows(min_row=3, values_only=True))
    return [dict(zip(rows[0], r)) for r in rows[1:] if r[0] is not None]


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as package:
        return {name: package.read(name) for name in package.namelist()}


def test_every_untouched_part_is_the_templates_byte_for_byte(written: Path) -> None:
    template, nxt = _parts(DEFAULT_TEMPLATE), _parts(written)
    charts = [p for p in template if p.startswith(("xl/charts/", "xl/drawings/"))]
    assert len([p for p in charts if p.startswith("xl/charts/chart")]) == 3
    for name, body in template.items():
        if name not in CHANGED:
            assert nxt[name] == body, name
    # the sheets that hold the charts still point at their drawings
    assert b"<drawing " in nxt["xl/worksheets/sheet4.xml"] and b"<drawing " in nxt["xl/worksheets/sheet5.xml"]


def test_the_added_sheets_are_formatted_and_print_like_the_plans(written: Path) -> None:
    """Changes' ChangePct reads as a percentage (0.520715 shows 52.1%, not 0.5207), money with two decimals and a
    thousands separator; every added sheet prints landscape A4 at 75 % or more with its header on every page,
    and its title and header take the plan's own styles."""
    book = openpyxl.load_workbook(written)
    budget = book["Budget"]
    for name in ("Serving", "Demand", "Fleet", "Changes"):
        ws = book[name]
        assert ws.page_setup.orientation == "landscape" and ws.page_setup.paperSize == 9, name
        assert 75 <= ws.page_setup.scale <= 100, name
        assert ws.print_title_rows == "$3:$3", name
        assert ws["A1"].font.b and ws["A1"].font.sz == budget["A1"].font.sz, name
        assert ws["A3"].fill.fgColor.rgb == budget["A3"].fill.fgColor.rgb, name
    changes = book["Changes"]
    header = [c.value for c in changes[3]]
    pct = [changes.cell(r, header.index("ChangePct") + 1) for r in range(4, changes.max_row + 1)]
    assert pct and all(c.number_format == "0.0%" for c in pct)
    fleet = book["Fleet"]
    header = [c.value for c in fleet[3]]
    assert fleet.cell(4, header.index("MonthlyCost") + 1).number_format == "#,##0.00"
    assert fleet.cell(4, header.index("GpusNext") + 1).number_format == "#,##0"


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_the_next_plan_prints_at_8_pt_or_more_in_libreoffice(written: Path, tmp_path: Path) -> None:
    """Every page of the next plan, the plan's sheets and the added ones, as LibreOffice prints it."""
    from tests.workbook.test_libreoffice import smallest_text

    profile = (tmp_path / "lo-profile").as_uri()
    subprocess.run(["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf", "--outdir",
                    str(tmp_path), str(written)], check=True, capture_output=True, timeout=300)
    pdf = tmp_path / written.with_suffix(".pdf").name
    assert smallest_text(pdf) == []
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    for sheet in ("Serving", "Demand", "Fleet", "Changes"):
        assert re.search(rf"^\s*{sheet}\s+Page \d+ of", text, re.MULTILINE), sheet


def test_formulas_keep_their_cached_values_and_budget_its_validation(written: Path) -> None:
    template, nxt = _parts(DEFAULT_TEMPLATE), _parts(written)

    def cached(parts: dict[str, bytes]) -> int:
        return sum(len(re.findall(rb"</f><v>", b)) for n, b in parts.items() if n.startswith("xl/worksheets/sheet"))
    # the plan's formulas keep their values; the next month's PlannedGpuHours of every resized line, and the Amount
    # of every one bought in the cloud, are formulas over the Fleet sheet
    over_fleet = sum(len(re.findall(rb"<f>SUMIFS\('Fleet'!", b)) for n, b in nxt.items()
                     if n.startswith("xl/worksheets/sheet"))
    fleet = _rows(written, "Fleet")
    fleet_lines = {r["PlanLine"] for r in fleet}
    priced = fleet_lines - {r["PlanLine"] for r in fleet if r["MonthlyCost"] is None}
    assert over_fleet == len(fleet_lines) + len(priced) and priced
    assert cached(nxt) == cached(template) + over_fleet > 900
    assert b"fullCalcOnLoad" not in nxt["xl/workbook.xml"]
    validation = re.search(rb"<dataValidations.*?</dataValidations>", template["xl/worksheets/sheet6.xml"]).group(0)
    assert validation in nxt["xl/worksheets/sheet6.xml"]


def test_budget_keeps_its_rows_and_gains_the_next_months(written: Path) -> None:
    def rows(path: Path) -> list[tuple]:
        ws = openpyxl.load_workbook(path, read_only=True, data_only=True)["Budget"]
        return [r for r in ws.iter_rows(min_row=4, max_col=8, values_only=True) if r[0] is not None]
    old, new = rows(DEFAULT_TEMPLATE), rows(written)
    assert new[:len(old)] == old
    added = new[len(old):]
    assert [r[1] for r in added] == [r[1] for r in old if r[0] == "2026-05"] and {r[0] for r in added} == {"2026-06"}
    table = openpyxl.load_workbook(written)["Budget"].tables["tblBudget"]
    assert table.ref == f"A3:I{3 + len(new)}"    # Month ... PlannedGpuHours


def test_the_changes_sheet_follows_the_observed_month_and_the_growth(written: Path) -> None:
    ws = openpyxl.load_workbook(written, read_only=True, data_only=True)["Changes"]
    table = list(ws.iter_rows(min_row=3, values_only=True))
    assert table[0] == ("PlanLine", "ServingLine", "What", "Before", "After", "ChangePct", "Why")
    changes = [dict(zip(table[0], r)) for r in table[1:]]
    served = {line: mtokens for _, line, mtokens in USAGE}
    tokens = {c["PlanLine"]: c for c in changes if c["What"] == "million tokens"}
    assert set(tokens) == set(served)
    for line, mtokens in served.items():
        assert tokens[line]["Before"] == pytest.approx(mtokens, rel=1e-6)
        assert tokens[line]["After"] == pytest.approx(mtokens * GROWTH, rel=1e-4)
    for c in changes:
        if isinstance(c["Before"], int | float) and isinstance(c["After"], int | float) and c["Before"]:
            assert c["ChangePct"] == pytest.approx(c["After"] / c["Before"] - 1, abs=1e-4)
        assert c["Why"]


def test_a_next_plan_planned_again_replaces_its_months_rows(written: Path, tmp_path: Path, metric_files: list[Path],
                                                             serving_csv: Path) -> None:
    again = tmp_path / "again.xlsx"
    _plan_next(written, again, metric_files, serving_csv)
    def june(path: Path) -> list[tuple]:
        ws = openpyxl.load_workbook(path, read_only=True, data_only=True)["Budget"]
        return [r for r in ws.iter_rows(min_row=4, max_col=8, values_only=True) if r[0] == "2026-06"]
    assert len(june(again)) == len(june(written))
    assert [n for n in openpyxl.load_workbook(again, read_only=True).sheetnames].count("Changes") == 1


def test_planned_gpu_hours_of_a_resized_line_is_a_formula_over_the_fleet_sheet(written: Path) -> None:
    """A line the next plan resizes keeps its volume in GPU-hours: PlannedGpuHours = its serving lines' GpusPaid x
    HoursPerMonth, a formula that a spreadsheet engine recomputes to the value stored with it."""
    import formulas

    fleet = _rows(written, "Fleet")
    book = openpyxl.load_workbook(written)
    ws, values = book["Budget"], openpyxl.load_workbook(written, data_only=True)["Budget"]
    sheet, cell = book.defined_names["HoursPerMonth"].value.split("!")
    hours = openpyxl.load_workbook(written, data_only=True)[sheet.strip("'")][cell.replace("$", "")].value
    rows = {ws.cell(r, 2).value: r for r in range(4, ws.max_row + 1) if ws.cell(r, 1).value == "2026-06"}
    solution = formulas.ExcelModel().loads(str(written)).finish().calculate()
    for line in {r["PlanLine"] for r in fleet}:
        r = rows[line]
        assert str(ws.cell(r, 9).value).startswith("=SUMIFS('Fleet'!"), line
        paid = sum(f["GpusPaid"] for f in fleet if f["PlanLine"] == line)
        assert values.cell(r, 9).value == pytest.approx(paid * hours), line
        recomputed = solution[f"'[{written.name}]BUDGET'!I{r}"].value[0, 0]
        assert recomputed == pytest.approx(values.cell(r, 9).value), line


def test_the_amount_of_a_line_bought_in_the_cloud_is_a_formula_over_the_fleet_sheet(written: Path) -> None:
    """A resized cloud line's Amount = its serving lines' MonthlyCost + SunkAmortization on the Fleet sheet, a formula
    that a spreadsheet engine recomputes to the value stored with it and that the plan reader reads to the cent; a
    line not bought in the cloud keeps this month's typed Amount."""
    import formulas

    from templates.plan_reader import read_plan

    fleet = _rows(written, "Fleet")
    ws, values = openpyxl.load_workbook(written)["Budget"], openpyxl.load_workbook(written, data_only=True)["Budget"]
    rows = {ws.cell(r, 2).value: r for r in range(4, ws.max_row + 1) if ws.cell(r, 1).value == "2026-06"}
    may = {ws.cell(r, 2).value: values.cell(r, 6).value for r in range(4, ws.max_row + 1)
           if ws.cell(r, 1).value == "2026-05"}
    priced = {r["PlanLine"] for r in fleet} - {r["PlanLine"] for r in fleet if r["MonthlyCost"] is None}
    solution = formulas.ExcelModel().loads(str(written)).finish().calculate()
    budget = {b.plan_line: b.amount for b in read_plan(written).budget_for("2026-06")}
    for line, r in rows.items():
        formula, stored = ws.cell(r, 6).value, values.cell(r, 6).value
        if line not in priced:
            assert not str(formula).startswith("=") and stored == may[line], line
            continue
        assert str(formula).startswith("=SUMIFS('Fleet'!$J$4:") and "'Fleet'!$K$4:" in str(formula), line
        cost = sum(round(f["MonthlyCost"] + f["SunkAmortization"], 2) for f in fleet if f["PlanLine"] == line)
        assert stored == pytest.approx(cost, abs=0.005), line
        assert solution[f"'[{written.name}]BUDGET'!F{r}"].value[0, 0] == pytest.approx(stored, abs=1e-6), line
        assert budget[line].amount == round(Decimal(repr(cost)), 2), line


def test_libreoffice_recalculates_the_budget_over_the_fleet_sheet_to_its_stored_values(written: Path,
                                                                                        tmp_path: Path) -> None:
    """A real spreadsheet engine, without the add-in, recomputes every Budget formula over the Fleet sheet (Amount
    and PlannedGpuHours of the resized lines) to what the file stores."""
    from tests.workbook.test_libreoffice import _probe

    copy = tmp_path / "plan-next.xlsx"
    shutil.copy(written, copy)
    report, _ = _probe(copy)
    over_fleet = [c for c in report["recalculated"] if c["sheet"] == "Budget" and "$Fleet." in c["formula"]]
    stored = {(c["row"], c["col"]): c["value"] for c in report["stored"] if c["sheet"] == "Budget"}
    assert {c["col"] for c in over_fleet} == {5, 8}    # Amount (F) and PlannedGpuHours (I)
    for c in over_fleet:
        assert not c["error"] and c["value"] == pytest.approx(stored[c["row"], c["col"]], abs=1e-6), c["formula"]
