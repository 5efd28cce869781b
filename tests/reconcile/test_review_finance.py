"""Finance's figures in the review: one row per commitment, the bridge from cash to the P&L, variance by
provider and by cost centre, and only the Comment cells as input, money formats in the currency.

Expected values are worked by hand from the bills written here, or summed by DuckDB straight from the
bundled sample bills, never by the code under test.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import duckdb
import openpyxl
import pytest

from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile import reconcile_month
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.plan_reader import read_plan

from .conftest import write_bill

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
P5 = {"x_InstanceType": "p5.48xlarge"}
#: ri-1: bought this month, 360 upfront for a year, 30 of it used and 10 unused this month;
#: cud-7: a 3-year commitment paid by a monthly fee of 50, 45 used; sp-9: bought before, 7 used.
COMMITMENT_ROWS = [
    {**P5, "ChargeCategory": "Purchase", "ChargeFrequency": "One-Time", "EffectiveCost": "0", "BilledCost": "360",
     "CommitmentDiscountId": "arn:aws:ec2:us-east-1::reservation/ri-1", "CommitmentDiscountType": "Reserved Instance",
     "SkuPriceDetails": '{"x_PurchaseTerm":"1yr","x_PaymentOption":"AllUpfront"}',
     "ChargePeriodStart": "2026-05-01T00:00:00Z", "ChargePeriodEnd": "2026-05-01T01:00:00Z"},
    {**P5, "EffectiveCost": "30", "BilledCost": "0", "CommitmentDiscountId": "arn:aws:ec2:us-east-1::reservation/ri-1",
     "CommitmentDiscountStatus": "Used"},
    {**P5, "EffectiveCost": "10", "BilledCost": "0", "CommitmentDiscountId": "arn:aws:ec2:us-east-1::reservation/ri-1",
     "CommitmentDiscountStatus": "Unused"},
    {**P5, "ProviderName": "Google Cloud", "ChargeCategory": "Purchase", "ChargeFrequency": "Recurring",
     "EffectiveCost": "0", "BilledCost": "50", "CommitmentDiscountId": "projects/p/commitments/cud-7",
     "SkuPriceDetails": '{"x_Plan":"THIRTY_SIX_MONTH"}', "ChargePeriodStart": "2026-05-31T00:00:00Z",
     "ChargePeriodEnd": "2026-05-31T01:00:00Z"},
    {**P5, "ProviderName": "Google Cloud", "EffectiveCost": "45", "BilledCost": "0",
     "CommitmentDiscountId": "projects/p/commitments/cud-7", "CommitmentDiscountStatus": "Used"},
    {**P5, "EffectiveCost": "7", "BilledCost": "0", "CommitmentDiscountId": "savingsplan/sp-9",
     "CommitmentDiscountStatus": "Used"},
    {**P5, "EffectiveCost": "100", "BilledCost": "100"},
]


def usd(value):
    return Decimal(value)


def test_one_row_per_commitment_with_term_end_and_balance(tmp_path, simple_plan):
    rec = reconcile_month(read_plan(simple_plan), [write_bill(tmp_path / "may.csv", COMMITMENT_ROWS)], "2026-05")
    got = {line.commitment_id.split("/")[-1]: (
        line.payment, line.purchase_date, line.term_months, line.end_date, line.paid_this_month.amount,
        None if line.scheduled_monthly is None else line.scheduled_monthly.amount, line.amortized.amount,
        line.unused.amount, None if line.balance_left is None else line.balance_left.amount)
        for line in rec.commitment_lines}
    assert got == {
        "ri-1": ("upfront", date(2026, 5, 1), 12, date(2027, 5, 1), usd(360), usd(30), usd(40), usd(10), usd(320)),
        "cud-7": ("monthly fee", date(2026, 5, 31), 36, date(2029, 5, 31), usd(50), usd(50), usd(45), usd(0),
                  usd(5)),
        # bought before these bills, with no term to say how much: no balance
        "sp-9": ("upfront", None, None, None, usd(0), None, usd(7), usd(0), None),
    }
    # the rows add up to the month's commitment totals
    assert sum(line.paid_this_month.amount for line in rec.commitment_lines) == rec.commitments.purchases.amount == 410
    assert sum(line.amortized.amount for line in rec.commitment_lines) == rec.commitments.amortization.amount == 92


def test_bridge_from_cash_to_pnl_on_the_sample_bills(tmp_path, template_plan):
    rec = reconcile_month(read_plan(template_plan), sample_bill_paths(), SAMPLE_MONTH)
    con = duckdb.connect()
    bills = ", ".join(f"'{p}'" for p in sample_bill_paths())
    committed, other, amortized = con.execute(f"""
        SELECT SUM(CASE WHEN ChargeCategory = 'Purchase' AND CommitmentDiscountId IS NOT NULL
                        THEN CAST(BilledCost AS DECIMAL(38, 10)) ELSE 0 END),
               SUM(CASE WHEN ChargeCategory = 'Purchase' AND CommitmentDiscountId IS NULL
                        THEN CAST(BilledCost AS DECIMAL(38, 10)) - CAST(EffectiveCost AS DECIMAL(38, 10)) ELSE 0 END),
               SUM(CASE WHEN CommitmentDiscountStatus IN ('Used', 'Unused')
                        THEN CAST(EffectiveCost AS DECIMAL(38, 10)) ELSE 0 END)
        FROM read_csv([{bills}], all_varchar = true)""").fetchone()
    steps = {step.label: step.amount.amount for step in rec.bridge()}
    assert steps == {
        "Cash paid this month": rec.billed_cost.amount,  # no hardware bought in May
        "less commitment purchases": -committed,
        "less other purchases with no P&L cost": -other,  # the samples' subscription fees carry EffectiveCost 0
        "plus commitment amortization": amortized,
        "less assets bought": usd(0),
        "plus depreciation": usd(11475),  # 2 x (320,000 - 32,000) / 60 + (95,000 - 5,000) / 48
        "other differences": usd(0),
    }
    assert sum(steps.values()) == rec.actual.amount
    prepaid = rec.commitments.prepaid()  # every sample commitment is bought in May, each with its term
    assert (prepaid.opening.amount, prepaid.closing.amount, prepaid.unknown) == (0, committed - amortized, 0)


def test_variance_by_provider_and_cost_centre(tmp_path, simple_plan):
    """simple_plan: gpu (AWS, cc-1) 100, storage (AWS, cc-1) 50, onprem (On-prem, cc-2) 1,000."""
    bill = write_bill(tmp_path / "may.csv", [{**P5, "EffectiveCost": "130"}, {"ServiceName": "AmazonS3",
                                             "EffectiveCost": "20"}, {"ServiceName": "AWSLambda", "EffectiveCost": "3"}])
    rec = reconcile_month(read_plan(simple_plan), [bill], "2026-05")
    assert [(g.name, g.planned.amount, g.actual.amount) for g in rec.by_provider()] == [
        ("AWS", usd(150), usd(150)), ("On-prem", usd(1000), usd(1200)), ("Unmapped", usd(0), usd(3))]
    assert [(g.name, g.variance.amount, g.variance_pct) for g in rec.by_cost_centre()] == [
        ("cc-1", usd(0), usd(0)), ("cc-2", usd(200), Decimal("0.2")), ("Unmapped", usd(3), None)]


def test_only_comment_cells_are_input_and_money_carries_the_currency(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "may.csv", COMMITMENT_ROWS)
    _, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", tmp_path / "out", run_at=RUN_AT)
    book = openpyxl.load_workbook(path)
    yellow = [(ws.title, cell.coordinate) for ws in book.worksheets for row in ws.iter_rows() for cell in row
              if cell.fill.fill_type == "solid" and cell.fill.fgColor.rgb == "FFFFF7D6"]
    variance = book["Variance"]
    inputs = {c.column_letter for c in variance[4] if c.value in ("Owner", "Action", "Comment")}
    thresholds = {"B3", "D3"}    # the materiality inputs: share of plan and amount
    assert yellow and all(sheet == "Variance" and (ref[0] in inputs or ref in thresholds) for sheet, ref in yellow)
    assert len(yellow) == 3 * 4 + 2  # owner, action and comment of gpu, storage, onprem, Unmapped
    summary = book["Summary"]
    planned = next(r for r in summary.iter_rows() if r[0].value == "Planned")[1]
    assert planned.number_format == '#,##0.00 "USD"'


@pytest.mark.parametrize("months, charts", [(["2026-05"], 2), (["2026-04", "2026-05"], 3)])
def test_month_over_month_chart_once_two_months_are_kept(tmp_path, simple_plan, months, charts):
    import zipfile

    for month in months:
        bill = write_bill(tmp_path / f"{month}.csv", [{**P5, "ChargePeriodStart": f"{month}-10T00:00:00Z"}])
        _, path = reconcile_to_workbook(simple_plan, [bill], month, tmp_path / "out", run_at=RUN_AT)
    with zipfile.ZipFile(path) as z:
        xml = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert len(xml) == charts      # by line and the waterfall, and month over month once two months are kept
    assert sum("Month over month" in x for x in xml) == charts - 2
    if charts == 3:
        trend = next(x for x in xml if "Month over month" in x)
        assert all(name in trend for name in ("Planned", "P&amp;L actual", "Cash", "'P&amp;L and cash'!$D$"))
