"""AWS bills built here, line item by line item, -> FOCUS: one cost basis a month, every discount counted once,
and a commitment's amortized EffectiveCost over its term equal to what it cost.

Expected figures are computed in each test from the line items it builds (plain Decimal arithmetic on the
CUR columns, as AWS's CUR user guide defines them), never read back from the code under test.
"""

from __future__ import annotations

import calendar
from decimal import Decimal

import pytest

from connectors.aws.cur import focus_rows_from_cur
from connectors.aws.mapping import LINE_ITEM_TYPES

D = Decimal
RI_ARN = "arn:aws:ec2:us-east-1:222222222222:reserved-instances/ri-term-test"
SP_ARN = "arn:aws:savingsplans::222222222222:savingsplan/sp-term-test"
DISCOUNT_TYPES = ("EdpDiscount", "PrivateRateDiscount", "BundledDiscount", "SppDiscount", "DistributorDiscount",
                  "RiVolumeDiscount")


def _line(kind: str, unblended: str | Decimal, *, net: bool, month: str = "2026-05", **columns: object) -> dict:
    """One CUR 2.0 line item; ``net`` exports carry ``line_item_net_unblended_cost`` (given in ``columns``)."""
    start = f"{month}-01T00:00:00Z"
    row = {"line_item_line_item_type": kind, "line_item_unblended_cost": str(unblended),
           "line_item_currency_code": "USD", "line_item_usage_start_date": start, "line_item_usage_end_date": start,
           "bill_billing_period_start_date": start, "bill_invoice_id": f"INV-{month}",
           "line_item_product_code": "AmazonEC2", "line_item_usage_type": "BoxUsage:p5.48xlarge",
           "line_item_line_item_description": kind}
    if net:
        row.setdefault("line_item_net_unblended_cost", "")
    row.update({k: str(v) for k, v in columns.items()})
    return row


def _totals(rows):
    return sum(r["BilledCost"] for r in rows), sum(r["EffectiveCost"] for r in rows)


def test_every_line_item_type_of_the_issue_has_a_rule():
    for kind in ("EdpDiscount", "PrivateRateDiscount", "BundledDiscount", "SppDiscount", "DistributorDiscount",
                 "Credit", "Refund", "Tax", "Fee", "RIFee", "DiscountedUsage", "SavingsPlanUpfrontFee",
                 "SavingsPlanRecurringFee", "SavingsPlanCoveredUsage", "SavingsPlanNegation"):
        assert kind in LINE_ITEM_TYPES


@pytest.mark.parametrize("discount", DISCOUNT_TYPES)
def test_a_discount_is_counted_once_on_the_net_basis(discount, gpu_of):
    # the issue's month: Usage 100 (net 90) and a -10 discount (net 0): BilledCost 90, EffectiveCost 90, not 80
    rows = focus_rows_from_cur([_line("Usage", "100", net=True, line_item_net_unblended_cost="90"),
                                _line(discount, "-10", net=True, line_item_net_unblended_cost="0")], gpu_of=gpu_of)
    assert _totals(rows) == (D(90), D(90))
    assert [r["EffectiveCost"] for r in rows] == [D(90), D(0)]


@pytest.mark.parametrize("discount", DISCOUNT_TYPES)
def test_a_discount_is_counted_once_on_the_gross_basis(discount, gpu_of):
    # an export without the net columns: usage at unblended, the discount line carries the discount
    rows = focus_rows_from_cur([_line("Usage", "100", net=False), _line(discount, "-10", net=False)], gpu_of=gpu_of)
    assert _totals(rows) == (D(90), D(90))
    assert [r["EffectiveCost"] for r in rows] == [D(100), D(-10)]


def test_an_empty_net_cell_reads_as_no_discount_except_on_a_discount_line(gpu_of):
    rows = focus_rows_from_cur([_line("Usage", "40", net=True), _line("Usage", "100", net=True,
                                                                     line_item_net_unblended_cost="95"),
                                _line("EdpDiscount", "-5", net=True), _line("Tax", "7", net=True)], gpu_of=gpu_of)
    assert _totals(rows) == (D(142), D(142))


def test_covered_usage_is_not_counted_twice(gpu_of):
    # A Savings Plan covers 600 + 380 of on-demand usage at 424 + 250 effective: each covered line and its
    # negation bill nothing together; the plan's fee (744) is billed once and amortized into the covered
    # usage (674) and its unused part (744 - 674 = 70).
    sp = {"savings_plan_savings_plan_a_r_n": SP_ARN, "savings_plan_purchase_term": "1yr"}
    rows = focus_rows_from_cur([
        _line("SavingsPlanRecurringFee", "744", net=False, savings_plan_total_commitment_to_date="744",
              savings_plan_used_commitment="674", **sp),
        _line("SavingsPlanCoveredUsage", "600", net=False, savings_plan_savings_plan_effective_cost="424", **sp),
        _line("SavingsPlanCoveredUsage", "380", net=False, savings_plan_savings_plan_effective_cost="250", **sp),
        _line("SavingsPlanNegation", "-600", net=False, **sp),
        _line("SavingsPlanNegation", "-380", net=False, **sp)], gpu_of=gpu_of)
    assert _totals(rows) == (D(744), D(744))
    statuses = sorted((r["CommitmentDiscountStatus"] or "", r["EffectiveCost"]) for r in rows)
    assert statuses == [("", D(0)), ("Unused", D(70)), ("Used", D(250)), ("Used", D(424))]


def _ri_month(year: int, month: int, used_hours: int, upfront: Decimal, hourly: Decimal, term_hours: int,
              edp: Decimal) -> tuple[list[dict], Decimal]:
    """One month of a one-instance partial-upfront RI as CUR line items (the upfront ``Fee`` in the first
    month), on the net basis with an ``edp`` discount rate on every RI fee; and that month's invoice."""
    label, hours = f"{year:04d}-{month:02d}", calendar.monthrange(year, month)[1] * 24
    amortized_rate = upfront / term_hours  # AWS: upfront fee / hours of the term, per reserved hour
    ri = {"reservation_reservation_a_r_n": RI_ARN, "pricing_lease_contract_length": "1yr"}
    net = 1 - edp
    unused = hours - used_hours
    lines = [
        _line("RIFee", hourly * hours, net=True, month=label, line_item_net_unblended_cost=hourly * hours * net,
              reservation_unused_quantity=unused,
              reservation_unused_amortized_upfront_fee_for_billing_period=amortized_rate * unused,
              reservation_unused_recurring_fee=hourly * unused,
              reservation_net_unused_amortized_upfront_fee_for_billing_period=amortized_rate * unused * net,
              reservation_net_unused_recurring_fee=hourly * unused * net, **ri),
        _line("DiscountedUsage", "0", net=True, month=label, line_item_net_unblended_cost="0",
              line_item_usage_amount=used_hours, pricing_unit="Hrs",
              reservation_effective_cost=(amortized_rate + hourly) * used_hours,
              reservation_net_effective_cost=(amortized_rate + hourly) * used_hours * net, **ri),
        _line("EdpDiscount", -hourly * hours * edp, net=True, month=label, line_item_net_unblended_cost="0")]
    invoice = hourly * hours * net
    if month == 1:
        lines += [_line("Fee", upfront, net=True, month=label, line_item_net_unblended_cost=upfront * net, **ri),
                  _line("EdpDiscount", -upfront * edp, net=True, month=label, line_item_net_unblended_cost="0")]
        invoice += upfront * net
    return lines, invoice


@pytest.mark.parametrize("edp", [D(0), D("0.05")])
def test_a_reserved_instance_amortizes_to_its_cost_over_its_term(edp, gpu_of):
    # 1-year partial-upfront RI from 2027-01-01 (365 days = 8,760 h): 87,600 upfront + 5 USD per hour,
    # used between 500 and 744 hours a month; each month is pulled (and mapped) on its own.
    upfront, hourly, term_hours = D(87600), D(5), 8760
    used = [744, 600, 700, 500, 744, 720, 744, 744, 650, 744, 720, 744]
    effective = billed = D(0)
    for month, hours in enumerate(used, start=1):
        lines, invoice = _ri_month(2027, month, hours, upfront, hourly, term_hours, edp)
        rows = focus_rows_from_cur(lines, gpu_of=gpu_of)
        month_billed, month_effective = _totals(rows)
        assert month_billed == invoice  # BilledCost of the month = its invoice
        billed += month_billed
        effective += month_effective
    cost = (upfront + hourly * term_hours) * (1 - edp)
    assert billed == cost
    assert effective == cost  # amortized over the term: exactly what the RI cost, discount counted once


def test_the_review_commitments_on_the_may_fixture(data, gpu_of, tmp_path):
    # the engine's commitment summary on the mapped May CUR: figures summed here from the CUR text
    import csv

    from connectors.focus_table import write_focus_parquet
    from finops.money import Money
    from finops.reconcile import reconcile_month
    from finops.reconcile.plan import BudgetLine, MappingRule, Plan

    with (data / "cur2-2026-05.csv").open(newline="") as handle:
        cur = list(csv.DictReader(handle))
    bill = write_focus_parquet(focus_rows_from_cur(cur, gpu_of=gpu_of), tmp_path / "may.parquet")
    plan = Plan(budget=(BudgetLine("2026-05", "AWS", "cc", "OPEX", "aws", Money.of(1000, "USD")),),
                mapping=(MappingRule(1, "AWS", provider_name="AWS"),))
    c = reconcile_month(plan, [bill], "2026-05").commitments

    def total(column, kinds):
        return sum((D(r[column] or 0) for r in cur if r["line_item_line_item_type"] in kinds), D(0))

    purchases = total("line_item_unblended_cost", {"Fee", "RIFee", "SavingsPlanRecurringFee"})
    used = total("reservation_net_effective_cost", {"DiscountedUsage"}) + total(
        "savings_plan_net_savings_plan_effective_cost", {"SavingsPlanCoveredUsage"})
    unused = total("reservation_net_unused_amortized_upfront_fee_for_billing_period", {"RIFee"}) + total(
        "reservation_net_unused_recurring_fee", {"RIFee"}) + total("savings_plan_total_commitment_to_date", {
            "SavingsPlanRecurringFee"}) - total("savings_plan_used_commitment", {"SavingsPlanRecurringFee"})
    on_demand = total("pricing_public_on_demand_cost", {"DiscountedUsage", "SavingsPlanCoveredUsage"})
    assert (c.purchases.amount, c.used.amount, c.unused.amount) == (purchases, used, unused) == \
        (D(87600 + 3720 + 744), D(10500 + 674), D(660 + 70))
    assert c.utilization.quantize(D("1e-20")) == (used / (used + unused)).quantize(D("1e-20"))
    assert c.savings.amount == on_demand - used
