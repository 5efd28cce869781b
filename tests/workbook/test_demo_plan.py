"""The template's demo plan fits the bundled FOCUS samples: reconcile reads it and maps most rows."""

from __future__ import annotations

import csv
import gzip
import io
from collections import defaultdict
from decimal import Decimal

import pytest

from finops.depreciation import monthly_depreciation
from finops.money import Money
from finops.reconcile.engine import reconcile_month
from finops.reconcile.sample_bills import sample_bill_paths
from templates import demo_plan
from templates.builder import DEFAULT_TEMPLATE
from templates.plan_reader import read_plan


@pytest.fixture(scope="module")
def reconciled():
    return reconcile_month(read_plan(DEFAULT_TEMPLATE), sample_bill_paths(), demo_plan.DEMO_MONTH)


def _billed_by_provider() -> dict[str, Decimal]:
    """An independent sum of the sample bills' BilledCost (csv module, not the engine)."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for path in sample_bill_paths():
        for row in csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())):
            totals[row["ProviderName"]] += Decimal(row["BilledCost"])
    return totals


def test_budgets_sit_near_each_providers_billed_total():
    billed = _billed_by_provider()
    assert billed["AWS"].quantize(Decimal("0.01")) == Decimal("67941.20")
    assert billed["Google Cloud"].quantize(Decimal("0.01")) == Decimal("89655.53")
    planned: dict[str, Decimal] = defaultdict(Decimal)
    for month, _line, _cc, category, provider, amount, *_ in demo_plan.BUDGET:
        if category == "OPEX":
            planned[provider] += Decimal(amount)
    for provider in ("AWS", "Google Cloud"):
        assert abs(planned[provider] / billed[provider] - 1) < Decimal("0.10"), provider


def test_mapping_covers_most_but_not_all_of_the_bills(reconciled):
    billed = sum(_billed_by_provider().values())
    unmapped = sum((u.billed_cost.amount for u in reconciled.unmapped), Decimal(0))
    assert Decimal("0.01") < unmapped / billed < Decimal("0.15")
    mapped_lines = {line.plan_line for line in reconciled.lines if line.actual.amount > 0}
    assert {row[1] for row in demo_plan.MAPPING} <= mapped_lines  # every rule catches something


def test_capex_is_the_assets_depreciation_for_the_month(reconciled):
    expected = sum(
        (
            monthly_depreciation(
                Money.of(cost, cur), Money.of(residual, cur), life, in_service or bought, demo_plan.DEMO_MONTH
            ).amount
            for *_, bought, in_service, cost, residual, life, cur in demo_plan.ASSETS
        ),
        Decimal(0),
    )
    assert reconciled.capex.amount == expected
    capex_budget = next(row[5] for row in demo_plan.BUDGET if row[3] == "CAPEX")
    assert Decimal(capex_budget) == expected
