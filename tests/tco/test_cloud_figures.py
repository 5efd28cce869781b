"""finops/tco/cloud.py figure by figure, each worked by hand from the pricing models' formulas:

* effective hourly = recurring + upfront / term hours (FOCUS 1.2 EffectiveCost amortizes the upfront);
* a month is 730 hours (AWS and GCP price pages); the upfront is billed in the first month (BilledCost);
* resource commitment: each hour pays n x committed rate + max(0, units - n) x on-demand rate;
* spend commitment: c per hour covers c / discounted rate units, the rest at on-demand rates;
* spot: (1 - fallback) x spot / (1 - lost work) + fallback x on-demand.
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.money import Money, to_decimal
from finops.price_book import PriceRow
from finops.tco import (
    amortized_hourly,
    blended_hourly,
    recurring_hourly,
    reserved_schedule,
    resource_commitment_cost,
    spend_commitment_cost,
    spot_effective_hourly,
)


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def row(model: str, option: str, hourly: str, upfront: str) -> PriceRow:
    return PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, model, option, to_decimal(hourly),
                    to_decimal(upfront), "USD", "2026-07-01", "test")


@pytest.mark.parametrize("upfront,recurring,hours,expected", [
    ("8760", "0.5", 8760, "1.5"),                 # 0.5 + 8,760 / 8,760
    ("26280", "2", 26280, "3"),                   # a 3-year term: 2 + 26,280 / 26,280
    ("1000", "0", 8, "125"),                      # all upfront
    ("0", "4.25", 8760, "4.25"),                  # no upfront
])
def test_amortized_hourly_adds_the_upfront_spread_over_the_term(upfront, recurring, hours, expected):
    assert amortized_hourly(usd(upfront), usd(recurring), hours) == usd(expected)


@pytest.mark.parametrize("model,option,hourly,upfront,expected", [
    ("on_demand", "", "55.04", "0", "55.04"),                     # no term: the rate as it is
    ("spot", "", "20", "0", "20"),
    ("reserved_1y", "partial_upfront", "30", "131400", "15"),     # 30 - 131,400 / 8,760
    ("reserved_3y", "all_upfront", "30", "788400", "0"),          # 30 - 788,400 / 26,280
    ("savings_plan_1y", "no_upfront", "40", "0", "40"),
])
def test_recurring_hourly_is_the_effective_rate_less_the_amortized_upfront(model, option, hourly, upfront, expected):
    assert recurring_hourly(row(model, option, hourly, upfront)) == usd(expected)


def test_a_reservation_schedule_month_by_month():
    # 2 units, 8,760 upfront each, 1/h recurring, 12 months of 730 h:
    # billed month 1 = 2 x 8,760 + 2 x 730 x 1 = 18,980; later months 1,460;
    # effective each month = (1 + 8,760 / 8,760) x 730 x 2 = 2,920
    rows = reserved_schedule(usd(8760), usd(1), 12, units=2)
    assert [r.month for r in rows] == [f"2026-{m:02d}" for m in range(1, 13)]   # the default start: 2026-01
    assert [r.billed for r in rows] == [usd(18_980)] + [usd(1460)] * 11
    assert [r.effective for r in rows] == [usd(2920)] * 12
    assert rows[0].billed.currency == rows[1].billed.currency == "USD"
    assert sum(r.billed.amount for r in rows) == sum(r.effective.amount for r in rows) == Decimal(35_040)


def test_a_schedule_starting_late_in_the_year_runs_into_the_next():
    rows = reserved_schedule(usd(0), usd("2.5"), 3, units=1, start="2026-11")
    assert [r.month for r in rows] == ["2026-11", "2026-12", "2027-01"]
    assert [r.billed for r in rows] == [usd(1825)] * 3                         # 2.5 x 730
    assert [r.effective for r in rows] == [usd(1825)] * 3


@pytest.mark.parametrize("usage,committed,cost,commitment,overflow,on_demand,utilization,coverage", [
    # units per hour; 3 USD committed, 5 USD on-demand per unit-hour
    ([2, 4, 6], 4, 46, 36, 10, 60, 10 / 12, 10 / 12),     # fee 4 x 3 x 3; overflow 2 x 5; covered 2 + 4 + 4
    ([1, 1, 1, 1], 2, 24, 24, 0, 20, 4 / 8, 1.0),         # half the commitment idle
    ([0, 7], 3, 38, 18, 20, 35, 3 / 6, 3 / 7),            # fee 3 x 3 x 2; overflow 4 x 5
    ([0, 0], 1, 6, 6, 0, 0, 0.0, 1.0),                    # nothing used: all idle, nothing uncovered
    ([5, 5], 0, 50, 0, 50, 50, 0.0, 0.0),                 # nothing committed
])
def test_resource_commitment_figures(usage, committed, cost, commitment, overflow, on_demand, utilization,
                                     coverage):
    out = resource_commitment_cost(usage, committed, usd(3), usd(5))
    assert (out.cost, out.commitment, out.overflow, out.on_demand_only) == (
        usd(cost), usd(commitment), usd(overflow), usd(on_demand))
    assert out.savings == usd(on_demand - cost)
    assert out.utilization == pytest.approx(utilization, abs=1e-15)
    assert out.coverage == pytest.approx(coverage, abs=1e-15)


@pytest.mark.parametrize("units", [3, 3.0, Decimal(3)])
def test_steady_resource_usage_over_some_hours(units):
    # 3 units for 4 hours on 2 committed at 3 USD: fee 2 x 3 x 4 = 24, overflow 1 x 5 x 4 = 20
    out = resource_commitment_cost(units, 2, usd(3), usd(5), hours=4)
    assert (out.cost, out.commitment, out.overflow, out.on_demand_only) == (usd(44), usd(24), usd(20), usd(60))
    assert out.utilization == 1.0 and out.coverage == pytest.approx(2 / 3, abs=1e-15)


def test_a_fractional_commitment_and_usage():
    # 1.5 units committed at 2 USD over [0.5, 2.5]: fee 1.5 x 2 x 2 = 6; overflow 1 x 4; covered 0.5 + 1.5
    out = resource_commitment_cost((0.5, 2.5), "1.5", usd(2), usd(4))
    assert (out.cost, out.overflow, out.on_demand_only) == (usd(10), usd(4), usd(12))
    assert out.utilization == pytest.approx(2 / 3, abs=1e-15) and out.coverage == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.parametrize("usage,commit,discounted,on_demand,cost,overflow,utilization,coverage", [
    ([1, 3], "4", "2", "5", "13", "5", 3 / 4, 3 / 4),             # covers 2 units; 1 over at 5
    ([0, 2, 5], "1", "0.5", "1.25", "6.75", "3.75", 4 / 6, 4 / 7),  # covers 2 units; 3 over at 1.25
    ([4, 4], "3", "1", "2", "10", "4", 1.0, 6 / 8),               # exactly 1: covers 3; 1 over each hour at 2
    ([1, 1], "10", "4", "5", "20", "0", 2 / 5, 1.0),              # covers 2.5 units; 0.5 idle each hour
])
def test_spend_commitment_figures(usage, commit, discounted, on_demand, cost, overflow, utilization, coverage):
    out = spend_commitment_cost(usage, usd(commit), usd(discounted), usd(on_demand))
    assert (out.cost, out.commitment, out.overflow) == (usd(cost), usd(commit) * len(usage), usd(overflow))
    assert out.on_demand_only == usd(on_demand) * sum(usage)
    assert out.utilization == pytest.approx(utilization, abs=1e-15)
    assert out.coverage == pytest.approx(coverage, abs=1e-15)


def test_steady_spend_usage_over_a_year():
    # 10 units; 20 USD/h at 2.5 covers 8; 2 over at 5 USD: (20 + 10) x 8,760
    out = spend_commitment_cost(10, usd(20), usd("2.5"), usd(5), hours=8760)
    assert (out.cost, out.commitment, out.overflow) == (usd(262_800), usd(175_200), usd(87_600))
    assert out.on_demand_only == usd(438_000) and out.savings == usd(175_200)


@pytest.mark.parametrize("kwargs,expected", [
    ({}, "2"),                                                   # no interruptions, no fallback
    ({"lost_work_share": 0.5}, "4"),                             # 2 / 0.5
    ({"fallback_share": 0.25}, "3"),                             # 0.75 x 2 + 0.25 x 6
    ({"lost_work_share": 0.2, "fallback_share": 0.1}, "2.85"),   # 0.9 x 2 / 0.8 + 0.1 x 6
    ({"lost_work_share": "0.75", "fallback_share": "0.5"}, "7"),  # 0.5 x 2 / 0.25 + 0.5 x 6
])
def test_spot_effective_rate(kwargs, expected):
    assert spot_effective_hourly(usd(2), usd(6), **kwargs) == usd(expected)


@pytest.mark.parametrize("spot_share,max_share,expected", [
    (0, 1, "6"),
    (1, 1, "2"),                   # everything on spot, the default cap allows it
    (0.25, 0.25, "5"),             # at the cap: 0.75 x 6 + 0.25 x 2
    (0.5, 0.75, "4"),
])
def test_blended_rate(spot_share, max_share, expected):
    assert blended_hourly(usd(6), usd(2), spot_share=spot_share, max_share=max_share) == usd(expected)
    if max_share == 1:
        assert blended_hourly(usd(6), usd(2), spot_share=spot_share) == usd(expected)
