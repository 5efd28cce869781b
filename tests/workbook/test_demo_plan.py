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


def _sum_by_provider(column: str) -> dict[str, Decimal]:
    """An independent sum of one money column of the sample bills (csv module, not the engine)."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for path in sample_bill_paths():
        for row in csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())):
            totals[row["ProviderName"]] += Decimal(row[column] or 0)
    return totals


def test_the_samples_totals_are_the_published_ones():
    billed = _sum_by_provider("BilledCost")
    assert billed["AWS"].quantize(Decimal("0.01")) == Decimal("67941.20")
    assert billed["Google Cloud"].quantize(Decimal("0.01")) == Decimal("89655.53")


def test_budgets_sit_near_each_lines_amortized_actual_with_some_flagged(reconciled):
    effective = sum(_sum_by_provider("EffectiveCost").values())
    assert reconciled.opex.amount == effective  # the P&L view the budgets are written in
    planned = {row[1]: Decimal(row[5]) for row in demo_plan.BUDGET}
    ratios = {line.plan_line: line.actual.amount / planned[line.plan_line] - 1
              for line in reconciled.lines if line.plan_line in planned}
    assert set(ratios) == set(planned)
    assert all(abs(r) < Decimal("0.15") for r in ratios.values()), ratios
    assert any(abs(r) > Decimal("0.10") for r in ratios.values())  # the review has something to flag


def test_mapping_covers_most_but_not_all_of_the_bills(reconciled):
    billed = sum(_sum_by_provider("BilledCost").values())
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
