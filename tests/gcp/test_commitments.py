"""GCP committed use discounts -> FOCUS 1.2: the fee a Purchase at EffectiveCost 0, covered usage carrying its
amortized share, the unused part its own row, CommitmentDiscountId on all; and the review's commitment summary.

Each month is built here from export rows (the detailed export's nested shape); expected figures are plain
Decimal arithmetic on those rows.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.gcp.bills import pull_bills, to_focus

D = Decimal
FIXTURES = Path(__file__).parent / "fixtures"
JSONL = FIXTURES / "billing_export_detailed.jsonl"
H100_CUD = "projects/123456789012/regions/us-central1/commitments/h100-1y"


def _row(description: str, cost: str, quantity: str, *, credits=(), start="2026-05-03 10:00:00 UTC", month="202605",
         region="us-central1") -> dict:
    return {"billing_account_id": "01A2B3-C4D5E6-F70819", "cost": cost, "currency": "USD", "cost_type": "regular",
            "invoice": {"month": month}, "usage_start_time": start, "usage_end_time": start,
            "service": {"description": "Compute Engine"}, "sku": {"description": description, "id": "SKU-" + cost},
            "location": {"location": region, "region": region},
            "usage": {"amount_in_pricing_units": quantity, "pricing_unit": "hour"},
            "credits": [{"type": kind, "amount": amount, "name": name, "id": ident, "full_name": name}
                        for kind, amount, name, ident in credits]}


def _fee(cost, quantity, subject="Nvidia H100 80GB GPU", **kw):
    return _row(f"Commitment v1: {subject} in Americas for 1 Year", cost, quantity, **kw)


def _covered(cost, quantity, credit, subject="Nvidia H100 80GB GPU", ident=H100_CUD, kind="COMMITTED_USAGE_DISCOUNT"):
    return _row(f"{subject} running in Americas", cost, quantity,
                credits=[(kind, credit, f"Committed use discount: {subject}", ident)])


def _totals(records):
    return sum(r["BilledCost"] for r in records), sum(r["EffectiveCost"] for r in records)


def test_a_fully_used_resource_commitment():
    # 8 GPU-hours committed at 6.79880857 per GPU-hour (54.39046856) and 8 used (on-demand 78.372404552, credited)
    records = to_focus([_fee("54.39046856", "8"), _covered("78.372404552", "8", "-78.372404552")], False)
    fee, usage, credit = records
    assert (fee["ChargeCategory"], fee["ChargeFrequency"], fee["BilledCost"], fee["EffectiveCost"]) == \
        ("Purchase", "Recurring", D("54.39046856"), D(0))
    assert (usage["BilledCost"], usage["EffectiveCost"], usage["CommitmentDiscountStatus"]) == \
        (D("78.372404552"), D("54.39046856"), "Used")
    assert (credit["ChargeCategory"], credit["EffectiveCost"], credit["CommitmentDiscountStatus"]) == ("Credit", 0, None)
    assert {r["CommitmentDiscountId"] for r in records} == {H100_CUD}
    assert _totals(records) == (D("54.39046856"), D("54.39046856"))


def test_a_partly_used_resource_commitment_has_an_unused_row():
    # 24 h x 4 GPUs = 96 GPU-hours committed at 7 per GPU-hour = 672; used: 40 GPU-hours fully covered, and one row
    # of 20 GPU-hours of which 10 are covered (credit -100 of cost 200): 50 used, 46 unused
    month = [_fee("672", "96"), _covered("400", "40", "-400"), _covered("200", "20", "-100")]
    records = to_focus(month, False)
    used = [r for r in records if r["CommitmentDiscountStatus"] == "Used"]
    unused = [r for r in records if r["CommitmentDiscountStatus"] == "Unused"]
    assert [r["EffectiveCost"] for r in used] == [D(40 * 7), D(100 + 10 * 7)]  # share + the uncovered 100
    assert [(r["ChargeCategory"], r["BilledCost"], r["EffectiveCost"], r["PricingQuantity"]) for r in unused] == \
        [("Usage", D(0), D(46 * 7), D(46))]
    assert unused[0]["CommitmentDiscountId"] == H100_CUD
    invoice = D(672) + 400 + 200 - 400 - 100
    assert _totals(records) == (invoice, invoice)
    # the fee is counted once: shares + unused = the fee
    assert sum(r["EffectiveCost"] for r in used) - 100 + unused[0]["EffectiveCost"] == D(672)


def test_a_spend_based_commitment_is_split_by_credit():
    kind = "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE"
    fee = _row("Commitment - dollar based v1: GCE for 1 Year", "30", "30")
    a = _covered("25", "5", "-20", subject="GCE", ident="spend-cud", kind=kind)
    b = _covered("10", "2", "-10", subject="GCE", ident="spend-cud", kind=kind)
    records = to_focus([fee, a, b], False)
    used = [r for r in records if r["CommitmentDiscountStatus"] == "Used"]
    assert [r["EffectiveCost"] for r in used] == [D(5) + D(30) * 20 / 30, D(0) + D(30) * 10 / 30]
    assert records[0]["CommitmentDiscountCategory"] == "Spend" and records[0]["EffectiveCost"] == 0
    assert _totals(records) == (D(35), D(35))


def test_commitments_in_other_regions_or_months_are_apart():
    records = to_focus([_fee("70", "10"), _covered("100", "10", "-100"),
                        _fee("70", "10", region="europe-west4"), _covered("50", "5", "-50", subject="Nvidia L4 GPU")],
                       False)
    unused = sorted((r["RegionId"], r["EffectiveCost"]) for r in records if r["CommitmentDiscountStatus"] == "Unused")
    assert unused == [("europe-west4", D(70))]  # its region has no covered usage; the L4 credit has no fee here
    assert _totals(records) == (D(140), D(140))


def test_the_fixture_month_and_the_review_commitments(tmp_path, simple_plan_for_gcp):
    from finops.reconcile import reconcile_month

    out = pull_bills(str(JSONL), "2026-05", tmp_path / "may.parquet")
    may = [json.loads(line) for line in JSONL.read_text().splitlines() if '"202605"' in line]
    fee = sum(D(str(r["cost"])) for r in may if r["sku"]["description"].startswith("Commitment"))
    covered_list = sum(D(str(r["cost"])) for r in may if any(c["type"] == "COMMITTED_USAGE_DISCOUNT" for c in r["credits"]))
    rec = reconcile_month(simple_plan_for_gcp, [out], "2026-05")
    c = rec.commitments
    assert (c.purchases.amount, c.used.amount, c.unused.amount, c.utilization) == (fee, fee, 0, 1)
    assert c.savings.amount == covered_list - fee  # on-demand 78.37 covered for the 54.39 fee: 23.98 saved


@pytest.fixture
def simple_plan_for_gcp():
    from finops.money import Money
    from finops.reconcile.plan import BudgetLine, MappingRule, Plan

    return Plan(budget=(BudgetLine("2026-05", "GCP", "cc", "OPEX", "gcp", Money.of(1000, "USD")),),
                mapping=(MappingRule(1, "GCP", provider_name="Google Cloud"),))
