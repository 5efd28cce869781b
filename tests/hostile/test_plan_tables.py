"""The hostile desk, plan tables: a plan table is found by its role or refused, never silently left out.

Each case edits a small plan the way a hurried user or Excel itself does (a table renamed on copy and
paste, a formula never computed, merged cells) and runs ``finops reconcile --json``. A case that must be
read gives the figures worked out by hand below; a case that must be refused gives exit 2 and the places
the one message names; in both, the plan and the bill stay byte for byte as they were.

Worked by hand (the fixture below):

* the bill: three EC2 charges of 10.00 USD and two S3 charges of 10.00 USD, May 2026, all AWS;
* rule 1 maps EC2 to ``gpu``, rule 2 maps S3 to ``storage``: ``gpu`` 30.00, ``storage`` 20.00, unmapped 0;
* the server: cost 73,000, residual 1,000, 60 months in service from 2026-01-02:
  (73,000 - 1,000) / 60 = 1,200.00 USD of depreciation in May (CAPEX);
* with the Mapping table lost, all 50.00 is unmapped; with the assets lost, CAPEX is 0.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from finops.cli import main
from tests.reconcile.conftest import write_bill, write_plan

ROOT = Path(__file__).resolve().parents[2]
CAPEX = Decimal("1200.00")


def _plan(path: Path) -> Path:
    return write_plan(
        path,
        budget=[("2026-05", "gpu", "cc-1", "OPEX", "AWS", 100, "USD", None),
                ("2026-05", "storage", "cc-1", "OPEX", "AWS", 50, "USD", None),
                ("2026-05", "onprem", "cc-2", "CAPEX", "On-prem", 1000, "USD", None)],
        assets=[("SRV-1", "8x H100", "onprem", "cc-2", "h100-sxm", 8, date(2025, 12, 20), date(2026, 1, 2),
                 73_000, 1_000, 60, "USD")],
        mapping=[(1, "gpu", "AWS", "", "AmazonEC2", "", "", "", ""),
                 (2, "storage", "AWS", "", "AmazonS3", "", "", "", "")])


def _bill(path: Path) -> Path:
    rows = [{"InvoiceId": "I1", "ServiceName": "AmazonEC2"}] * 3 + [{"InvoiceId": "I1", "ServiceName": "AmazonS3"}] * 2
    return write_bill(path, rows)


def _edit(path: Path, change: Callable[[openpyxl.Workbook], None]) -> None:
    book = openpyxl.load_workbook(path)
    change(book)
    book.save(path)


def _rename(sheet: str, old: str, new: str) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        tables = book[sheet].tables
        table = tables.pop(old)
        table.name = table.displayName = new
        tables[new] = table
    return change


def _move(sheet: str, to: str) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        book[sheet].title = to
    return change


def _both(*changes: Callable[[openpyxl.Workbook], None]) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        for one in changes:
            one(book)
    return change


def _cell(sheet: str, ref: str, value: object) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        book[sheet][ref] = value
    return change


def _merge(sheet: str, ref: str) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        book[sheet].merge_cells(ref)
    return change


def _header(sheet: str, ref: str, name: str) -> Callable[[openpyxl.Workbook], None]:
    """Rename a header cell and the table column it heads (as Excel does when the header is typed over)."""
    def change(book: openpyxl.Workbook) -> None:
        ws = book[sheet]
        old = ws[ref].value
        ws[ref] = name
        for table in ws.tables.values():
            for column in table.tableColumns:
                if column.name == old:
                    column.name = name
    return change


def _unlist(sheet: str) -> Callable[[openpyxl.Workbook], None]:
    """Excel's Convert to Range: the cells stay, the table goes."""
    def change(book: openpyxl.Workbook) -> None:
        book[sheet].tables.clear()
    return change


def _drop(sheet: str) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        book.remove(book[sheet])
    return change


def _second_assets(book: openpyxl.Workbook) -> None:
    """A copy of the Assets table under another name on a sheet of its own (both unnamed tblAssets)."""
    from openpyxl.worksheet.table import Table

    ws = book.create_sheet("Assets (2)")
    for row in book["Assets"].iter_rows(values_only=True):
        ws.append(list(row))
    ws.add_table(Table(displayName="Table7", ref="A2:L3"))


def _shrink(sheet: str) -> Callable[[openpyxl.Workbook], None]:
    """The sheet's table no longer covers its last row (a resize, or a program writing rows past it)."""
    def change(book: openpyxl.Workbook) -> None:
        from openpyxl.utils.cell import range_boundaries

        for table in book[sheet].tables.values():
            max_row = range_boundaries(table.ref)[3]
            table.ref = f"{table.ref.split(':')[0]}:{table.ref.split(':')[1].rstrip('0123456789')}{max_row - 1}"
            table.autoFilter = None
    return change


def _under(sheet: str, *values: object) -> Callable[[openpyxl.Workbook], None]:
    """A row typed right under the sheet's table, which did not grow over it."""
    def change(book: openpyxl.Workbook) -> None:
        ws = book[sheet]
        ws.append(list(values))
    return change


@dataclass(frozen=True)
class Case:
    """An edit of the plan -> the exit code, the texts the message names, and (exit 0) the figures."""

    edit: Callable[[openpyxl.Workbook], None]
    exit: int = 0
    names: tuple[str, ...] = ()
    capex: Decimal = CAPEX
    unmapped: Decimal = Decimal("0.00")


CASES = {
    # read as the template's tables (the figures worked by hand)
    "as built": Case(lambda book: None),
    "tblAssets renamed tblAssets2 on copy": Case(_rename("Assets", "tblAssets", "tblAssets2")),
    "tblAssets renamed Table3": Case(_rename("Assets", "tblAssets", "Table3")),
    "tblAssets renamed and its sheet too": Case(_both(_rename("Assets", "tblAssets", "Table3"), _move("Assets", "Kit"))),
    "tblMapping renamed Table3": Case(_rename("Mapping", "tblMapping", "Table3")),
    "tblBudget renamed Table1": Case(_rename("Budget", "tblBudget", "Table1")),
    "table names in another case": Case(_rename("Mapping", "tblMapping", "TBLMAPPING")),
    # refused: the message names the table, sheet or cell, never a review with CAPEX 0 or all unmapped
    "tblBudget gone": Case(_both(_rename("Budget", "tblBudget", "Table1"), _header("Budget", "F2", "Amt"),
                                 _move("Budget", "Plan")), exit=2,
                           names=("tblBudget not found", "Table1 (sheet Plan)", "tblAssets (sheet Assets)")),
    "budget look-alike lacks a column": Case(_both(_rename("Budget", "tblBudget", "Table1"),
                                                   _header("Budget", "F2", "Amt")), exit=2,
                                             names=("Table1", "sheet Budget", "Amount")),
    "look-alike assets table lacks a column": Case(
        _both(_rename("Assets", "tblAssets", "Table3"), _header("Assets", "K2", "Life")), exit=2,
        names=("Table3", "sheet Assets", "LifeMonths")),
    "two unnamed assets tables": Case(_both(_rename("Assets", "tblAssets", "Table3"), _second_assets), exit=2,
                                      names=("tblAssets", "Table3 (sheet Assets)", "Table7 (sheet Assets (2))")),
    "mapping table converted to a range": Case(_unlist("Mapping"), exit=2,
                                               names=("sheet Mapping holds no table", "tblMapping")),
    "assets sheet deleted": Case(_drop("Assets"), capex=Decimal("0.00")),
    "mapping formula never computed": Case(_cell("Mapping", "E3", '="AmazonEC2"'), exit=2,
                                           names=("sheet Mapping", "cell E3", "never computed")),
    "mapping cells merged": Case(_merge("Mapping", "E3:E4"), exit=2, names=("sheet Mapping", "E3:E4", "merged")),
    "mapping cell holds an Excel error": Case(_cell("Mapping", "C4", "#REF!"), exit=2, names=("cell C4", "#REF!")),
    "a budget line typed under tblBudget, outside it (was exit 0: planned short by it)": Case(
        _under("Budget", "2026-05", "gpu2", "cc-1", "OPEX", "AWS", 500, "USD"), exit=2,
        names=("sheet Budget", "cell A6", "right below table tblBudget", "reads as a row", "Resize")),
    "tblBudget shrunk off its last line (was exit 0: the CAPEX line's 1,000 not planned)": Case(
        _shrink("Budget"), exit=2, names=("sheet Budget", "cell A5", "tblBudget (A2:")),
    "a mapping rule typed under tblMapping, outside it": Case(
        _under("Mapping", 3, "gpu", "AWS", "", "AmazonEC2"), exit=2, names=("sheet Mapping", "cell A5", "tblMapping")),
    "an asset typed under tblAssets, outside it": Case(
        _under("Assets", "SRV-2", "8x H100", "onprem", "cc-2", "h100-sxm", 8, date(2025, 12, 20), None, 73_000,
               1_000, 60, "USD"), exit=2, names=("sheet Assets", "cell A4", "tblAssets")),
    "a totals row under tblBudget is a note, not a line": Case(
        _both(_cell("Budget", "A6", "Total"), _cell("Budget", "F6", 1150))),
    "a note under tblMapping is a note": Case(_cell("Mapping", "A5", "Rules are matched in order")),
    "asset cost a formula never computed": Case(_cell("Assets", "I3", "=70000+3000"), exit=2,
                                                names=("sheet Assets", "cell I3")),
}


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("name", CASES)
def test_plan_tables(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[name]
    plan, bill = _plan(tmp_path / "plan.xlsx"), _bill(tmp_path / "bill.csv")
    _edit(plan, case.edit)
    before = _digests(tmp_path)
    capsys.readouterr()
    code = main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--bills", str(bill),
                 "--out", str(tmp_path / "out"), "--json"])
    out, err = capsys.readouterr()
    assert code == case.exit, err
    assert "Traceback" not in out + err
    assert _digests(tmp_path) == before
    if case.exit:
        assert len(err.splitlines()) >= 1 and err.startswith("error:"), err
        for text in case.names:
            assert text in err, f"{text!r} not in {err}"
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
        return
    totals = json.loads(out, parse_float=Decimal)
    assert (totals["capex"], totals["unmapped_effective_cost"]) == (case.capex, case.unmapped)
    assert totals["opex"] == Decimal("50.00")


def test_the_renamed_budget_table_is_the_one_found_and_read(tmp_path: Path) -> None:
    """The table playing tblBudget, whatever Excel named it, is the one read (and the one ``plan next`` grows):
    100 + 50 + 1,000 = 1,150 USD planned for May."""
    from templates.plan_reader import read_plan
    from templates.plan_tables import BUDGET, find_table, workbook_tables

    plan = _plan(tmp_path / "plan.xlsx")
    _edit(plan, _rename("Budget", "tblBudget", "Table1"))
    found = find_table(workbook_tables(plan), BUDGET, str(plan))
    assert found is not None and (found.name, found.sheet) == ("Table1", "Budget")
    assert sum(b.amount.amount for b in read_plan(plan).budget) == Decimal(1150)


def test_the_serving_table_is_found_by_its_columns_when_renamed(tmp_path: Path) -> None:
    """The Serving table ``plan next`` writes into the next plan is read back under the name Excel gives a copy."""
    from finops.serving import read_serving_lines
    from templates.builder import DEFAULT_TEMPLATE
    from templates.plan_next_writer import read_serving_sheet

    serving = ROOT / "finops" / "data" / "metrics" / "serving-lines.csv"
    metrics = ROOT / "finops" / "data" / "metrics" / "2026-05-aws-inference-prod.json.gz"
    (tmp_path / "serving.csv").write_text("\n".join(serving.read_text().splitlines()[:2]) + "\n")
    assert main(["plan", "next", "--plan", str(DEFAULT_TEMPLATE), "--history", str(tmp_path / "history"),
                 "--month", "2026-05", "--serving", str(tmp_path / "serving.csv"), "--metrics", str(metrics),
                 "--out", str(tmp_path / "next.xlsx"), "--quiet"]) == 0
    _edit(tmp_path / "next.xlsx", _rename("Serving", "tblServing", "tblServing2"))
    assert read_serving_sheet(tmp_path / "next.xlsx") == read_serving_lines(tmp_path / "serving.csv")


def test_the_templates_mapping_with_a_formula_never_computed_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The planning template's rule 1 (aws-inference-prod: AWS, sub-account prod-platform, EC2) with its
    sub-account typed as a formula by a program: read as blank it matched every AWS EC2 charge (181.44 USD
    instead of 11.19 on the bundled May bills); it is refused with its cell."""
    import re
    import zipfile

    from finops.reconcile.sample_bills import sample_bill_paths
    from templates.builder import DEFAULT_TEMPLATE
    from templates.plan_tables import MAPPING, find_table, workbook_tables

    # The cell is rewritten in the sheet's XML, as a program writing the formula without computing it leaves
    # it (no <v>); every other cell keeps its stored value, the Budget's formulas included (a save through
    # openpyxl would drop them all, and the first one read would be refused instead).
    part = find_table(workbook_tables(DEFAULT_TEMPLATE), MAPPING, str(DEFAULT_TEMPLATE)).part  # type: ignore[union-attr]
    plan = tmp_path / "plan.xlsx"
    with zipfile.ZipFile(DEFAULT_TEMPLATE) as source, zipfile.ZipFile(plan, "w") as edited:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == part:
                data, count = re.subn(rb'<c r="D4"[^>]*>.*?</c>', b'<c r="D4" t="str"><f>"prod-platform"</f></c>', data)
                assert count == 1
            edited.writestr(item, data)
    before = _digests(tmp_path)
    code = main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--bills", *map(str, sample_bill_paths()),
                 "--out", str(tmp_path / "out"), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "sheet Mapping, cell D4" in err and "tblMapping" in err, err
    assert _digests(tmp_path) == before


@pytest.mark.parametrize("old, new", [('r="C3"', 'r="3C"'), ("</sheetData>", "</sheetDat>")])
def test_a_damaged_plan_sheet_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         old: str, new: str) -> None:
    import zipfile

    from templates.plan_tables import MAPPING, find_table, workbook_tables

    plan, bill = _plan(tmp_path / "built.xlsx"), _bill(tmp_path / "bill.csv")
    part = find_table(workbook_tables(plan), MAPPING, str(plan)).part  # type: ignore[union-attr]
    with zipfile.ZipFile(plan) as source, zipfile.ZipFile(tmp_path / "plan.xlsx", "w") as damaged:
        for item in source.infolist():
            data = source.read(item)
            damaged.writestr(item, data.decode().replace(old, new, 1).encode() if item.filename == part else data)
    before = _digests(tmp_path)
    code = main(["reconcile", "--plan", str(tmp_path / "plan.xlsx"), "--month", "2026-05", "--bills", str(bill),
                 "--out", str(tmp_path / "out"), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "plan.xlsx" in err and "damaged" in err and "Traceback" not in err, err
    assert _digests(tmp_path) == before
