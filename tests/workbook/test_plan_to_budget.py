"""One chain from workload to budget: a Budget line that workloads name is a formula over the TCO sheet, and a
workload added in Excel reaches the budget through its Sizing and TCO rows.

The workbook is built with two seed workloads on one plan line and one on another, evaluated by the
``formulas`` package with the add-in's functions (tests/workbook/conftest.py), and read back by the plan
reader, which takes the values the workbook stores with its formulas."""

from __future__ import annotations

from decimal import Decimal

import openpyxl
import pytest

from finops.price_book import PriceBook
from templates import build_template
from templates.plan_reader import read_plan

from .conftest import Evaluated
from .test_template import Table

LINES = {"seed002-financial-copilot": "aws-inference-prod", "seed002-marketing-content": "aws-inference-prod",
         "seed002-translation": "gcp-inference-prod"}


@pytest.fixture(scope="module")
def lined(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    book = PriceBook.bundled().filter(region="us-central1")
    path = build_template(tmp_path_factory.mktemp("lined") / "plan.xlsx", prices=book, plan_lines=LINES)
    return Evaluated(path, book)


def _tco_by_workload(lined: Evaluated, header: str) -> dict[str, float]:
    book = openpyxl.load_workbook(lined.path, data_only=True)
    tco = Table(book, "tblTco")
    ws = book["TCO"]
    return {ws[tco.cell(i, "Workload")].value: ws[tco.cell(i, header)].value for i in range(tco.rows)
            if ws[tco.cell(i, "Workload")].value}


def _budget_cell(book: openpyxl.Workbook, line: str, header: str) -> str:
    budget = Table(book, "tblBudget")
    ws = book["Budget"]
    row = next(i for i in range(budget.rows) if ws[budget.cell(i, "PlanLine")].value == line)
    return budget.cell(row, header)


def test_a_line_workloads_name_is_the_sum_of_their_fleets_cost(lined):
    formulas_book = openpyxl.load_workbook(lined.path)
    monthly, mtokens = _tco_by_workload(lined, "CloudMonthly"), _tco_by_workload(lined, "MTokensPerMonth")
    plan = {b.plan_line: b for b in read_plan(lined.path).budget}
    for line in set(LINES.values()):
        names = [w for w, on in LINES.items() if on == line]
        amount, tokens = _budget_cell(formulas_book, line, "Amount"), _budget_cell(formulas_book, line, "PlannedMTokens")
        assert str(formulas_book["Budget"][amount].value).startswith("=IF(COUNTIFS(TCO!")
        expected = sum(monthly[n] for n in names)
        assert lined.value("Budget", amount) == pytest.approx(expected, rel=1e-12)      # recomputed
        assert float(plan[line].amount.amount) == pytest.approx(expected, rel=1e-12)     # what reconcile reads
        assert lined.value("Budget", tokens) == pytest.approx(sum(mtokens[n] for n in names), rel=1e-12)
        assert plan[line].planned_mtokens == pytest.approx(Decimal(str(sum(mtokens[n] for n in names))))
    # a line no workload names stays a typed input
    assert formulas_book["Budget"][_budget_cell(formulas_book, "aws-storage", "Amount")].value == 1_500


def test_a_workload_added_in_excel_reaches_the_budget(lined):
    formulas_book = openpyxl.load_workbook(lined.path)
    workloads, tco = Table(formulas_book, "tblWorkloads"), Table(formulas_book, "tblTco")
    typed = formulas_book["Workloads"]
    source = next(i for i in range(workloads.rows) if typed[workloads.cell(i, "Workload")].value == "seed000-doc-qa")
    new = workloads.rows
    inputs = {("Workloads", workloads.cell(new, h)): typed[workloads.cell(source, h)].value for h in workloads.headers}
    inputs[("Workloads", workloads.cell(new, "Workload"))] = "support-bot-eu"
    inputs[("Workloads", workloads.cell(new, "PlanLine"))] = "gcp-inference-prod"
    amount = _budget_cell(formulas_book, "gcp-inference-prod", "Amount")
    before = lined.value("Budget", amount)
    solution = lined.recalculate(inputs)
    added = lined.value("TCO", tco.cell(new, "CloudMonthly"), solution)
    assert isinstance(added, float) and added > 0
    assert lined.value("TCO", tco.cell(new, "PlanLine"), solution) == "gcp-inference-prod"
    assert lined.value("Budget", amount, solution) == pytest.approx(before + added, rel=1e-12)


def test_an_unpriced_workload_on_a_line_makes_its_budget_an_error_not_a_smaller_number(lined):
    """A configuration that misses its targets is priced nowhere (its cost cell says why): the line's Amount
    is #N/A, which the plan reader refuses with its cell, rather than the sum of the others."""
    formulas_book = openpyxl.load_workbook(lined.path)
    workloads = Table(formulas_book, "tblWorkloads")
    typed = formulas_book["Workloads"]
    row = next(i for i in range(workloads.rows) if typed[workloads.cell(i, "Workload")].value == "seed002-translation")
    solution = lined.recalculate({("Workloads", workloads.cell(row, "TtftTargetMs")): 1})     # 1 ms: unreachable
    amount = _budget_cell(formulas_book, "gcp-inference-prod", "Amount")
    assert str(lined.value("Budget", amount, solution)).startswith("#N/A")


def test_a_budget_formula_never_computed_is_refused_with_its_cell(lined, tmp_path):
    """A workbook saved by a program that does not calculate holds the formula with no value: the plan reader
    names the cell rather than reading the line as zero."""
    import re
    import zipfile

    from finops.errors import InputError

    formulas_book = openpyxl.load_workbook(lined.path)
    cell = _budget_cell(formulas_book, "gcp-inference-prod", "Amount")
    stripped = tmp_path / "never-computed.xlsx"
    with zipfile.ZipFile(lined.path) as src, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "xl/worksheets/sheet6.xml":     # Budget, the sixth sheet
                body, count = re.subn(rb'(<c r="' + cell.encode() + rb'"[^>]*>(?:<f>.*?</f>))<v>[^<]*</v>', rb"\1",
                                      body)
                assert count == 1
            out.writestr(item, body)
    with pytest.raises(InputError) as caught:
        read_plan(stripped)
    assert cell in str(caught.value.where) and "never computed" in caught.value.message


def test_sizing_and_tco_hold_room_for_fifty_workloads_and_the_last_row_sizes_and_budgets_itself(lined):
    """Sizing and TCO hold ROOM rows, whatever the plan's own count (docs/excel.md says how many): a workload
    typed into the last of them, far past the plan's seven, is sized, costed and reaches its Budget line."""
    from templates.sheets._table import ROOM

    formulas_book = openpyxl.load_workbook(lined.path)
    workloads, sizing, tco = (Table(formulas_book, name) for name in ("tblWorkloads", "tblSizing", "tblTco"))
    assert ROOM == 50 and sizing.rows == tco.rows == ROOM > workloads.rows
    typed = formulas_book["Workloads"]
    source = next(i for i in range(workloads.rows) if typed[workloads.cell(i, "Workload")].value == "seed000-doc-qa")
    last = ROOM - 1
    inputs = {("Workloads", workloads.cell(last, h)): typed[workloads.cell(source, h)].value for h in workloads.headers}
    inputs[("Workloads", workloads.cell(last, "Workload"))] = "support-bot-apac"
    inputs[("Workloads", workloads.cell(last, "PlanLine"))] = "gcp-inference-prod"
    amount = _budget_cell(formulas_book, "gcp-inference-prod", "Amount")
    before = lined.value("Budget", amount)
    assert lined.value("Sizing", sizing.cell(last, "Workload")) == ""      # blank until the workload is typed
    solution = lined.recalculate(inputs)
    copied = {h: lined.value("Sizing", sizing.cell(source, h)) for h in ("Gpus", "Instances", "HourlyCost")}
    assert {h: lined.value("Sizing", sizing.cell(last, h), solution) for h in copied} == copied
    added = lined.value("TCO", tco.cell(last, "CloudMonthly"), solution)
    assert added == pytest.approx(lined.value("TCO", tco.cell(source, "CloudMonthly")), rel=1e-12)
    assert lined.value("Budget", amount, solution) == pytest.approx(before + added, rel=1e-12)


def test_hours_per_month_moves_the_sizing_the_tco_and_the_budget(lined):
    """A month is the Start sheet's HoursPerMonth input: 672 hours (February) costs every fleet 672/730 of the
    730-hour month, on the Sizing sheet (planner's and cheapest configuration), the TCO sheet and the Budget, whose
    GPU-hours follow too."""
    formulas_book = openpyxl.load_workbook(lined.path)
    sheet, cell = next(formulas_book.defined_names["HoursPerMonth"].destinations)
    assert formulas_book[sheet][cell.replace("$", "")].value == 730
    sizing, tco = Table(formulas_book, "tblSizing"), Table(formulas_book, "tblTco")
    amount = _budget_cell(formulas_book, "aws-inference-prod", "Amount")
    gpu_hours = _budget_cell(formulas_book, "aws-inference-prod", "PlannedGpuHours")
    cells = [("Sizing", sizing.cell(0, "MonthlyCost")), ("Sizing", sizing.cell(0, "BestMonthlyCost")),
             ("TCO", tco.cell(0, "CloudMonthly")), ("Budget", amount), ("Budget", gpu_hours)]
    before = [lined.value(s, c) for s, c in cells]
    assert all(isinstance(v, float) and v > 0 for v in before)
    assert (f'{sizing.cell(0, "HourlyCost")}*HoursPerMonth,{sizing.cell(0, "WhyNot")})'
            in formulas_book["Sizing"][sizing.cell(0, "MonthlyCost")].value)
    solution = lined.recalculate({(sheet, cell.replace("$", "")): 672})
    after = [lined.value(s, c, solution) for s, c in cells]
    assert after == pytest.approx([v * 672 / 730 for v in before], rel=1e-12)
    hourly = lined.value("Sizing", sizing.cell(0, "HourlyCost"))
    assert before[0] == pytest.approx(hourly * 730, rel=1e-12)
    # the line's GPU-hours: its workloads' accelerators paid x 730
    paid = _tco_by_workload(lined, "GpusPaid")
    assert before[4] == sum(paid[w] for w, line in LINES.items() if line == "aws-inference-prod") * 730
