"""The figures of a reconciliation on a small bill whose answers are worked out by hand."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError
from finops.reconcile import reconcile_month
from templates.plan_reader import read_plan

from .conftest import write_bill

P5 = {"x_InstanceType": "p5.48xlarge", "x_GpuModel": "h100-sxm", "x_GpuHours": "8"}
ROWS = [
    {**P5, "EffectiveCost": "100", "BilledCost": "100", "ListCost": "100"},
    {**P5, "EffectiveCost": "30", "BilledCost": "0", "ListCost": "50", "PricingCategory": "Committed",
     "CommitmentDiscountId": "ri-1", "CommitmentDiscountStatus": "Used"},
    {**P5, "x_GpuHours": "0", "EffectiveCost": "10", "BilledCost": "0", "ListCost": "10",
     "CommitmentDiscountId": "ri-1", "CommitmentDiscountStatus": "Unused"},
    {**P5, "x_GpuHours": "", "ChargeCategory": "Purchase", "EffectiveCost": "0", "BilledCost": "360",
     "CommitmentDiscountId": "ri-1", "ChargeFrequency": "One-Time"},
    {**P5, "EffectiveCost": "20", "BilledCost": "20", "PricingCategory": "Dynamic"},
    {"ServiceName": "AmazonS3", "EffectiveCost": "40", "BilledCost": "40"},
    {"ServiceName": "", "ChargeCategory": "Tax", "EffectiveCost": "5", "BilledCost": "5", "InvoiceId": "INV-2"},
    {**P5, "ChargePeriodStart": "2026-06-02T00:00:00Z", "EffectiveCost": "999", "BilledCost": "999"},
]


@pytest.fixture
def rec(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "may.csv", ROWS)
    return reconcile_month(read_plan(simple_plan), [bill], "2026-05")


def usd(value):
    return Decimal(value)


def test_totals_and_views(rec):
    assert (rec.effective_cost.amount, rec.billed_cost.amount) == (usd(205), usd(525))
    assert (rec.opex.amount, rec.capex.amount, rec.actual.amount) == (usd(205), usd(1200), usd(1405))
    assert (rec.planned.amount, rec.variance.amount) == (usd(1150), usd(255))
    assert rec.cash.amount == usd(525)  # the server was bought in 2025-12: no asset cash this month
    assert [(i.invoice_id, i.billed_cost.amount) for i in rec.invoices] == [("INV-1", usd(520)), ("INV-2", usd(5))]
    assert rec.bill_rows == 7  # the June row is not May's


def test_variance_per_line_with_flags_and_unit_costs(rec):
    got = {line.plan_line: (line.planned.amount, line.actual.amount, line.variance.amount, line.variance_pct,
                            line.flag) for line in rec.lines}
    # flagged beyond both 10 % of the plan and the 100 USD materiality amount: gpu's +60 and storage's -10 are
    # under the amount, whatever their share
    assert got == {
        "gpu": (usd(100), usd(160), usd(60), Decimal("0.6"), ""),
        "storage": (usd(50), usd(40), usd(-10), Decimal("-0.2"), ""),
        "onprem": (usd(1000), usd(1200), usd(200), Decimal("0.2"), "over"),
        "Unmapped": (usd(0), usd(5), usd(5), None, ""),
    }
    gpu = rec.lines[0]
    assert (gpu.actual_cash.amount, gpu.planned_unit_cost.amount, gpu.actual_unit_cost.amount) == (
        usd(480), usd(10), usd(40))
    assert [line.plan_line for line in rec.lines_over(Decimal(25))] == ["gpu", "Unmapped"]
    assert [line.plan_line for line in rec.lines_over(Decimal(10))] == ["gpu", "onprem", "Unmapped"]


def test_commitments_spot_and_gpu_hours(rec):
    c = rec.commitments
    assert (c.purchases.amount, c.used.amount, c.unused.amount, c.savings.amount) == (usd(360), usd(30), usd(10),
                                                                                      usd(20))
    assert (c.utilization, c.coverage) == (Decimal("0.75"), Decimal("0.2"))
    assert rec.spot_share == Decimal("0.1")
    assert [(g.gpu_model, g.hours, g.source) for g in rec.gpu_hours] == [("h100-sxm", usd(24), "bill")]


def test_capex_from_assets(rec):
    assert [(a.asset_id, a.plan_line, a.depreciation.amount, a.purchase_cash.amount) for a in rec.assets] == [
        ("SRV-1", "onprem", usd(1200), usd(0))]


def test_forecast_and_plan_cover_the_same_months(tmp_path, simple_plan):
    """May's P&L actual is 205 of cloud cost + 1,200 depreciation = 1,405; the plan holds May (1,150)
    and June (100) only, so the year-end forecast is May's actual + one month of run rate, against
    1,250; the six months after June have no plan and are forecast apart."""
    bill = write_bill(tmp_path / "may.csv", ROWS)
    plan = read_plan(simple_plan)
    alone = reconcile_month(plan, [bill], "2026-05").forecast
    assert alone.planned_months == ("2026-05", "2026-06")
    assert (alone.months_known, alone.run_rate.amount, alone.actual_to_date.amount, alone.months_to_forecast,
            alone.year_end.amount, alone.year_plan.amount) == (1, usd(1405), usd(1405), 1, usd(2810), usd(1250))
    assert (alone.unplanned_actual.amount, alone.unplanned_forecast.amount) == (0, usd(1405 * 6))
    past = {"2025-12": usd(5), "2026-03": usd(1000), "2026-04": usd(1300)}
    f = reconcile_month(plan, [bill], "2026-05", past_actuals=past).forecast
    assert (f.months_known, f.actual_to_date.amount, f.run_rate.amount, f.year_end.amount) == (
        3, usd(1405), usd(1235), usd(1405 + 1235))  # run rate (1,000 + 1,300 + 1,405) / 3
    assert (f.unplanned_actual.amount, f.unplanned_forecast.amount) == (usd(2300), usd(1235 * 6))


def test_run_rate_leaves_out_one_off_purchases(tmp_path, simple_plan):
    """A 60 support fee bought in May (a Purchase with its EffectiveCost) is in May's actual, not in
    the run rate; April's history says 300 of its 1,300 were one-off."""
    bill = write_bill(tmp_path / "may.csv", ROWS + [{"ServiceName": "AWSSupport", "ChargeCategory": "Purchase",
                                                      "ChargeFrequency": "One-Time", "EffectiveCost": "60",
                                                      "BilledCost": "60"}])
    rec = reconcile_month(read_plan(simple_plan), [bill], "2026-05", past_actuals={"2026-04": usd(1300)},
                          past_one_off={"2026-04": usd(300)})
    assert rec.actual.amount == usd(1465) and rec.one_off_cost.amount == usd(60)
    assert rec.forecast.run_rate.amount == usd((1000 + 1405) / 2)
    assert rec.forecast.actual_to_date.amount == usd(1465)  # the actual itself keeps the purchase


def test_instance_catalog_gives_gpu_hours_when_the_bill_has_none(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "may.csv", [
        {"SkuPriceDetails": '{"InstanceType":"p5.48xlarge"}', "ConsumedQuantity": "3"},
        {"SkuPriceDetails": '{"InstanceType":"m6i.large"}', "ConsumedQuantity": "5"}])
    rec = reconcile_month(read_plan(simple_plan), [bill], "2026-05")  # the bundled instance catalog
    assert [(g.gpu_model, g.hours, g.source) for g in rec.gpu_hours] == [("h100-sxm", usd(24), "catalog")]
    own = reconcile_month(read_plan(simple_plan), [bill], "2026-05",
                          instance_gpus=lambda provider, itype: ("l4", 1) if itype == "m6i.large" else None)
    assert [(g.gpu_model, g.hours) for g in own.gpu_hours] == [("l4", usd(5))]


def test_second_currency_without_rate_names_file_row_and_column(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "mixed.csv", [{}, {}, {"BillingCurrency": "EUR"}])
    with pytest.raises(InputError) as err:
        reconcile_month(read_plan(simple_plan), [bill], "2026-05")
    assert (err.value.where.file, err.value.where.row, err.value.where.column) == (str(bill), 4, "BillingCurrency")


def test_rates_convert_into_the_plan_currency(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "mixed.csv", [{"BilledCost": "1.5", "EffectiveCost": "1.5"},
                                               {"BillingCurrency": "EUR", "BilledCost": "2", "EffectiveCost": "2"}])
    rec = reconcile_month(read_plan(simple_plan), [bill], "2026-05", rates={"EUR": Decimal("1.1")})
    assert rec.billed_cost.amount == Decimal("3.7")


def test_a_third_currency_without_a_rate_is_named_not_the_rated_one(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "mixed.csv", [{}, {"BillingCurrency": "EUR"}, {"BillingCurrency": "GBP"}])
    with pytest.raises(InputError) as err:
        reconcile_month(read_plan(simple_plan), [bill], "2026-05", rates={"EUR": Decimal("1.1")})
    assert err.value.message == "no rate from GBP into USD (rates given for EUR)"
    assert (err.value.where.file, err.value.where.row, err.value.where.column) == (str(bill), 4, "BillingCurrency")


def test_bills_in_another_currency_than_the_plan_need_a_rate(tmp_path, simple_plan):
    bill = write_bill(tmp_path / "eur.csv", [{"BillingCurrency": "EUR"}])
    with pytest.raises(CurrencyMismatchError, match="bills are in EUR but the plan is in USD") as err:
        reconcile_month(read_plan(simple_plan), [bill], "2026-05")
    assert (err.value.where.file, err.value.where.column) == (str(bill), "BillingCurrency")


def test_progress_is_reported_up_to_100_percent(tmp_path, simple_plan):
    seen: list[float] = []
    reconcile_month(read_plan(simple_plan), [write_bill(tmp_path / "may.csv", [{}])], "2026-05",
                    on_progress=seen.append)
    assert seen and seen[-1] == 100.0 and all(0 <= p <= 100 for p in seen)


def test_a_timestamp_offset_decides_the_month_in_utc(tmp_path, simple_plan):
    """23:30 at UTC-1 on 30 April is 00:30 UTC on 1 May; 00:30 at UTC+2 on 1 May is still April in UTC."""
    bill = write_bill(tmp_path / "offsets.csv", [
        {"ChargePeriodStart": "2026-04-30T23:30:00-01:00", "EffectiveCost": "7", "BilledCost": "7"},
        {"ChargePeriodStart": "2026-05-01T00:30:00+02:00", "EffectiveCost": "100", "BilledCost": "100"}])
    rec = reconcile_month(read_plan(simple_plan), [bill], "2026-05", basis="usage")
    assert (rec.bill_rows, rec.effective_cost.amount) == (1, usd(7))
