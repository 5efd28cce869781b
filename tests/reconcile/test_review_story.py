"""The review tells the month's story: a headline with the result and its main cause, flags as formulas over
materiality inputs (share of plan and amount), favourable or not, volume and rate, the commitment tie-out,
and a waterfall chart from plan to actual on the Summary."""

from __future__ import annotations

import zipfile
from datetime import datetime
from decimal import Decimal

import formulas
import openpyxl
import pytest

from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from finops.reconcile.story import material_flag

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, template_plan):
    out = tmp_path_factory.mktemp("story")
    return reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)


def _table(ws, first_header: str) -> tuple[dict[str, int], dict[str, int]]:
    """Column by header and row by first cell of the table whose header row starts with ``first_header``."""
    top = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == first_header)
    cols = {ws.cell(top, c).value: c for c in range(1, ws.max_column + 1) if ws.cell(top, c).value}
    rows = {}
    for r in range(top + 1, ws.max_row + 2):
        if ws.cell(r, 1).value in (None, ""):
            break
        rows[ws.cell(r, 1).value] = r
    return cols, rows


def test_the_headline_names_the_result_and_its_main_cause(demo):
    rec, path = demo
    summary = openpyxl.load_workbook(path, data_only=True)["Summary"]
    text = summary["A3"].value
    # 95 % of the overrun is cost no plan line covers: the sentence says so, with the month's result
    unmapped = next(line for line in rec.lines if line.plan_line == "Unmapped").actual.amount
    share = unmapped / rec.variance.amount
    assert text.startswith(f"{SAMPLE_MONTH}: P&L actual {rec.actual.rounded().amount:,.2f} USD against a plan of "
                           f"{rec.planned.rounded().amount:,.2f} USD")
    assert "over plan, unfavourable" in text
    assert f"the main cause: cost no plan line covers (Unmapped), {unmapped.quantize(Decimal('0.01')):,} USD over" in text
    assert f"({share:.0%} of the variance)" in text and share > Decimal("0.9")


def test_the_tie_out_flags_a_schedule_the_bills_do_not_amortize(demo):
    rec, path = demo
    summary = openpyxl.load_workbook(path, data_only=True)["Summary"]
    figures = {summary.cell(r, 1).value: summary.cell(r, 2).value for r in range(1, summary.max_row + 1)}
    scheduled = sum((line.scheduled_monthly.amount for line in rec.commitment_lines if line.scheduled_monthly),
                    Decimal(0))
    assert figures["Scheduled amortization this month (purchase / term)"] == pytest.approx(float(scheduled))
    assert figures["Amortized in the bills (used + unused commitment)"] == pytest.approx(
        float(rec.commitments.used.amount + rec.commitments.unused.amount))
    assert round(scheduled, 2) == Decimal("10023.53")      # bought this month, 1- and 3-year terms
    assert figures["Tie-out"].startswith("check: the bills amortize less than the schedule")


def test_the_summary_holds_a_waterfall_from_plan_to_actual(demo):
    rec, path = demo
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
        drawing_rels = z.read("xl/worksheets/_rels/sheet1.xml.rels").decode()
    waterfall = next(x for x in charts if "Plan to P&amp;L actual" in x)
    assert "<c:grouping val=\"stacked\"/>" in waterfall and "<a:noFill/>" in waterfall   # the invisible base
    assert "drawing" in drawing_rels                                                    # on the Summary (sheet 1)
    summary = openpyxl.load_workbook(path, data_only=True)["Summary"]
    cols, rows = _table(summary, "Step")
    start = summary.cell(rows["Start: the plan"], cols["Total"]).value
    end = summary.cell(rows["End: P&L actual"], cols["Total"]).value
    steps = [summary.cell(r, cols["Change"]).value for name, r in rows.items() if not name.startswith(("Start", "End"))]
    assert start == pytest.approx(float(rec.planned.amount)) and end == pytest.approx(float(rec.actual.amount))
    assert start + sum(steps) == pytest.approx(end)
    assert list(rows)[1] == "cost no plan line covers (Unmapped)"     # the largest mover first


def test_volume_and_rate_add_up_to_the_variance_from_the_token_counts(demo):
    rec, path = demo
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    cols, rows = _table(ws, "Plan line")
    line = next(x for x in rec.lines if x.plan_line == "aws-inference-prod")
    r = rows["aws-inference-prod"]
    volume, rate = ws.cell(r, cols["Volume"]).value, ws.cell(r, cols["Rate"]).value
    planned_rate = line.planned.amount / line.planned_mtokens           # 10 USD for 1,200 M tokens
    assert volume == pytest.approx(float((line.actual_mtokens - line.planned_mtokens) * planned_rate))
    assert rate == pytest.approx(float((line.actual.amount / line.actual_mtokens - planned_rate) * line.actual_mtokens))
    assert volume + rate == pytest.approx(float(line.variance.amount))
    untokened = rows["aws-storage"]
    assert ws.cell(untokened, cols["Volume"]).value is None and ws.cell(untokened, cols["Rate"]).value is None
    assert ws.cell(r, cols["Favourable"]).value == ("unfavourable" if line.variance.amount > 0 else "favourable")


def test_flags_are_formulas_over_the_materiality_inputs(demo, tmp_path):
    """The cached flags follow the rule; recomputed by a spreadsheet engine with other thresholds, they move."""
    rec, path = demo
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    cols, rows = _table(ws, "Plan line")
    pct, amount = ws["B3"].value, ws["D3"].value
    for line in rec.lines:
        expected = material_flag(line.variance.amount, line.planned.amount, Decimal(str(pct)) * 100,
                                 Decimal(str(amount)))
        assert (ws.cell(rows[line.plan_line], cols["Flag"]).value or "") == expected, line.plan_line
    # the small-amount line over 10 % is not flagged; a large one under 10 % is not either
    small = [x for x in rec.lines if x.variance_pct and abs(x.variance_pct) > Decimal("0.1")
             and abs(x.variance.amount) < amount]
    assert small and all(not ws.cell(rows[x.plan_line], cols["Flag"]).value for x in small)
    model = formulas.ExcelModel().loads(str(path)).finish()
    book = path.name
    flag_col = openpyxl.utils.get_column_letter(cols["Flag"])
    solution = model.calculate(inputs={f"'[{book}]VARIANCE'!D3": 1.0, f"'[{book}]VARIANCE'!B3": 0.0})
    recomputed = {x.plan_line: solution[f"'[{book}]VARIANCE'!{flag_col}{rows[x.plan_line]}"].value[0, 0]
                  for x in rec.lines}
    for line in rec.lines:    # 1 USD and any share: every line that moved a dollar is flagged
        want = "" if abs(line.variance.amount) < 1 else ("over" if line.variance.amount > 0 else "under")
        assert recomputed[line.plan_line] == want, line.plan_line


def test_owner_and_action_typed_into_the_review_survive_a_re_run(tmp_path, simple_plan):
    from .conftest import write_bill

    bill = write_bill(tmp_path / "may.csv", [{"x_InstanceType": "p5.48xlarge", "EffectiveCost": "100",
                                             "BilledCost": "100"}])
    _, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / "out", run_at=RUN_AT)
    book = openpyxl.load_workbook(path)
    ws = book["Variance"]
    cols, rows = _table(ws, "Plan line")
    ws.cell(rows["onprem"], cols["Owner"]).value = "Platform lead"
    ws.cell(rows["onprem"], cols["Action"]).value = "Move the L40S batch to spot"
    ws.cell(rows["onprem"], cols["Comment"]).value = "Depreciation of the new server"
    book.save(path)
    _, again = reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / "out", run_at=RUN_AT)
    ws = openpyxl.load_workbook(again)["Variance"]
    r = rows["onprem"]
    assert (ws.cell(r, cols["Owner"]).value, ws.cell(r, cols["Action"]).value, ws.cell(r, cols["Comment"]).value) == (
        "Platform lead", "Move the L40S batch to spot", "Depreciation of the new server")


def test_year_to_date_and_full_year_come_from_the_history(tmp_path, simple_plan):
    """April (no plan) and May reconciled into one folder: May's review adds April's actual from the history to
    the year to date; the full year is the plan's May and June, forecast as actual to date + June's plan."""
    from .conftest import write_bill

    actual = {}
    for month, cost in (("2026-04", "30"), ("2026-05", "100")):
        bill = write_bill(tmp_path / f"{month}.csv", [{"x_InstanceType": "p5.48xlarge", "EffectiveCost": cost,
                                                       "BilledCost": cost, "ChargePeriodStart": f"{month}-10T00:00:00Z"}])
        rec, path = reconcile_to_workbook(simple_plan, [bill], month, tmp_path / "out", run_at=RUN_AT)
        actual[month] = next(x for x in rec.lines if x.plan_line == "gpu").actual.amount
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    ref = ws.tables["tblYear"].ref
    cells = ws[ref]
    header = [c.value for c in cells[0]]
    rows = {r[0].value: {h: c.value for h, c in zip(header, r)} for r in cells[1:]}
    gpu = rows["gpu"]
    assert gpu["YTD plan"] == 100                                   # May's plan; April has none
    assert gpu["YTD actual"] == pytest.approx(float(actual["2026-04"] + actual["2026-05"]))
    assert gpu["Full-year plan"] == 200                             # May and June
    assert gpu["Full-year forecast"] == pytest.approx(gpu["YTD actual"] + 100)
    assert gpu["Full-year variance"] == pytest.approx(gpu["Full-year forecast"] - 200)
    formulas_ws = openpyxl.load_workbook(path)["Variance"]
    forecast_cell = formulas_ws[ref.split(":")[0]].offset(row=list(rows).index("gpu") + 1, column=5)
    assert str(forecast_cell.value).startswith("=")


def test_flag_amount_on_the_command_line_sets_the_review_input_and_the_flags(tmp_path, template_plan, capsys):
    """``--flag-amount`` is the materiality amount: the review's FlagAmount starts from it and the cached flags
    follow it (a line over 10 % of plan but under the amount is not flagged); a negative amount exits 2."""
    from finops.cli import main

    bills = [a for p in sample_bill_paths() for a in ("--bills", str(p))]
    base = ["reconcile", "--plan", str(template_plan), "--month", SAMPLE_MONTH, "--quiet", *bills]
    assert main([*base, "--out", str(tmp_path / "a"), "--flag-amount", "1000"]) == 0
    path = tmp_path / "a" / f"budget-review-{SAMPLE_MONTH}.xlsx"
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    assert ws["D3"].value == 1000
    cols, rows = _table(ws, "Plan line")
    flags = {name: ws.cell(r, cols["Flag"]).value or "" for name, r in rows.items() if name in rows}
    variances = {name: ws.cell(r, cols["Variance"]).value for name, r in rows.items()}
    planned = {name: ws.cell(r, cols["Planned"]).value for name, r in rows.items()}
    judged = [n for n in flags if isinstance(variances[n], int | float) and isinstance(planned[n], int | float)]
    assert judged
    for name in judged:   # the rule by hand: at least 1,000 USD and more than 10 % of plan (or no plan)
        v, p = variances[name], planned[name]
        want = "" if abs(v) < 1000 or (p and abs(v) <= 0.1 * abs(p)) else ("over" if v > 0 else "under")
        assert flags[name] == want, name
    assert main([*base, "--out", str(tmp_path / "b"), "--flag-amount", "-5"]) == 2
    assert "--flag-amount" in capsys.readouterr().err
    assert not (tmp_path / "b" / f"budget-review-{SAMPLE_MONTH}.xlsx").exists()
