"""Invariants that hold for any bill: nothing is dropped or counted twice between the views."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from finops.money import Money
from finops.reconcile import BudgetLine, MappingRule, Plan, reconcile_groups
from finops.reconcile.aggregation import DIMENSIONS, MEASURES, ChargeGroup

money = st.decimals(min_value=Decimal(-1000), max_value=Decimal(100000), places=6, allow_nan=False,
                    allow_infinity=False)
group = st.builds(
    lambda line, provider, service, itype, invoice, category, status, billed, effective: ChargeGroup.from_row(tuple({
        "plan_line": line, **dict.fromkeys(DIMENSIONS), **dict.fromkeys(MEASURES),
        "provider_name": provider, "billing_currency": "USD", "invoice_id": invoice, "service_name": service,
        "instance_type": itype, "charge_category": category, "commitment_status": status,
        "commitment_id": None if status is None else "c-1", "billed_cost": billed, "effective_cost": effective, "row_count": 1,
    }.values())),
    st.sampled_from(["gpu", "storage", "other", None]), st.sampled_from(["AWS", "Google Cloud"]), st.sampled_from(["AmazonEC2", "Compute Engine", "AmazonS3", None]),
    st.sampled_from(["p5.48xlarge", "a3-highgpu-8g", None]), st.sampled_from(["INV-1", "INV-2", None]),
    st.sampled_from(["Usage", "Purchase", "Tax"]), st.sampled_from([None, "Used", "Unused"]), money, money)

PLAN = Plan(budget=(BudgetLine("2026-05", "gpu", "cc", "OPEX", "", Money.of(5000, "USD")),
                    BudgetLine("2026-05", "storage", "cc", "OPEX", "", Money.of(100, "USD"))),
            mapping=(MappingRule(1, "gpu", instance_type="p5.*"), MappingRule(2, "gpu", instance_type="a3-*"),
                     MappingRule(3, "storage", service_name="AmazonS3")))


@settings(max_examples=150, deadline=None)
@given(st.lists(group, min_size=1, max_size=40))
def test_views_add_up(groups):
    rec = reconcile_groups(PLAN, groups, "2026-05")
    effective = sum((g.effective_cost for g in groups), Decimal(0))
    billed = sum((g.billed_cost for g in groups), Decimal(0))
    assert rec.effective_cost.amount == effective and rec.billed_cost.amount == billed
    assert sum((line.actual.amount for line in rec.lines), Decimal(0)) == rec.actual.amount
    assert sum((line.actual_cash.amount for line in rec.lines), Decimal(0)) == rec.cash.amount
    assert sum((i.billed_cost.amount for i in rec.invoices), Decimal(0)) == billed
    assert sum((p.effective_cost.amount for p in rec.providers), Decimal(0)) == effective
    assert sum((u.effective_cost.amount for u in rec.unmapped), Decimal(0)) == rec.unmapped_effective_cost.amount
    assert sum((line.planned.amount for line in rec.lines), Decimal(0)) == rec.planned.amount
    for line in rec.lines:
        assert line.variance.amount == line.actual.amount - line.planned.amount
