"""Ladder, recommenders, scenarios and stress tests on profiles whose answers are known."""

from dataclasses import replace
from decimal import Decimal
from itertools import product

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption, cost_mix, optimize_mix
from finops.mix.ladder import plan_ladder
from finops.mix.recommenders import aws_lookback_units, compare_recommenders, gcp_stable_units
from finops.mix.scenarios import Scenario, plan_scenarios, stress_test

OD = MixOption("od", "on_demand", Decimal(10))
RI = MixOption("ri", "reserved", Decimal(6))
ONE_YEAR = MixOption("1y", "reserved", Decimal(6), term_hours=8760)
THREE_YEAR = MixOption("3y", "reserved", Decimal("3.5"), term_hours=26280)


def daily(low, high, days):
    """A square day: ``high`` for 12 hours, ``low`` for 12."""
    return np.tile(np.r_[np.full(12, float(low)), np.full(12, float(high))], days)


def test_ladder_on_flat_demand_is_the_single_pool_optimum_at_the_3y_price():
    demand = np.tile(daily(4, 9, 365), 3)
    plan = plan_ladder(demand, [OD, ONE_YEAR, THREE_YEAR])
    flat = optimize_mix(demand, [OD, replace(THREE_YEAR, term_hours=None)])
    assert plan.purchases["3y"][0] == flat.units["3y"] == 9 and sum(plan.purchases["3y"][1:]) == 0
    assert plan.total_cost == flat.total_cost and plan.outstanding.amount == 0


def test_ladder_staggers_3y_tranches_on_growth_unlike_this_years_base():
    demand = np.linspace(10, 40, 3 * 8760)
    plan = plan_ladder(demand, [OD, ONE_YEAR, THREE_YEAR])
    months_buying = [m for m, n in enumerate(plan.purchases["3y"]) if n]
    assert len(months_buying) > 12 and months_buying[0] == 0
    this_years_base = optimize_mix(demand[:8760], [OD, replace(THREE_YEAR, term_hours=None)]).units["3y"]
    assert plan.purchases["3y"][0] != this_years_base
    assert plan.active["3y"][-1] > plan.active["3y"][0]
    assert plan.savings.amount > 0 and plan.outstanding.amount > 0


def test_ladder_rejects_what_it_cannot_model():
    with pytest.raises(InputError, match="term_hours"):
        plan_ladder(np.ones(100), [OD, RI])
    with pytest.raises(InputError, match="max_units"):
        plan_ladder(np.ones(100), [OD, replace(ONE_YEAR, max_units=3)])


def test_recommenders_under_commit_on_growing_demand():
    growing = np.linspace(10, 30, 8760) + daily(0, 2, 365)
    rows = {r.name: r for r in compare_recommenders(growing, [OD, RI])}
    ours = rows.pop("ours")
    for name, row in rows.items():
        assert row.units["ri"] < ours.units["ri"], name
        assert row.extra_cost.amount > 0, name
        assert row.result.total_cost == ours.result.total_cost + row.extra_cost


def test_recommenders_match_ours_on_steady_demand():
    steady = daily(5, 8, 365)
    rows = {r.name: r for r in compare_recommenders(steady, [OD, RI])}
    assert {name: row.units["ri"] for name, row in rows.items()} == {
        "ours": 5, "aws-7d": 5, "aws-30d": 5, "aws-60d": 5, "gcp-30d": 5}


def test_recommender_rules():
    demand = np.r_[daily(3, 7, 30), daily(20, 20, 30)]
    cheap = MixOption("cheap", "reserved", Decimal(5), max_units=2)
    owned = MixOption("own", "owned", Decimal(1))
    assert gcp_stable_units(demand, [OD, RI, cheap, owned], 30) == {"cheap": 2, "ri": 1}
    assert aws_lookback_units(demand, [OD, RI, owned], 7) == {"ri": 3}   # owned is not a cloud offer
    assert aws_lookback_units(demand, [OD, RI], 60)["ri"] > 3


def test_scenarios_expected_cost_is_the_brute_force_optimum():
    base = daily(4, 10, 7)
    scenarios = [Scenario("low", 0.2, base * 0.5), Scenario("base", 0.5, base), Scenario("high", 0.3, base * 1.6)]
    options = [OD, RI, MixOption("own", "owned", Decimal(4), variable_cost=Decimal(1), max_units=3)]
    plan = plan_scenarios(scenarios, options)

    def expected(units):
        return sum(s.weight * float(cost_mix(s.demand, options, units).total_cost.amount) for s in scenarios)

    grid = [{"ri": r, "own": o} for r, o in product(range(17), range(4))]
    best = min(grid, key=expected)
    assert expected(plan.expected.units) == pytest.approx(expected(best), rel=1e-12)
    assert float(plan.expected.total_cost.amount) == pytest.approx(expected(plan.expected.units), rel=1e-12)
    assert plan.commit_to_low.units == optimize_mix(base * 0.5, options).units
    assert float(plan.commit_to_low.total_cost.amount) == pytest.approx(expected(plan.commit_to_low.units), rel=1e-12)
    assert plan.commit_to_low.total_cost.amount >= plan.expected.total_cost.amount
    assert plan.per_scenario["expected"]["high"] == cost_mix(base * 1.6, options, plan.expected.units)


def test_stress_recosts_the_chosen_mix():
    demand = daily(4, 10, 30)
    chosen = optimize_mix(demand, [OD, RI])
    stressed = stress_test(demand, [OD, RI], chosen.units)
    assert set(stressed) == {0.7, 1.5}
    for factor, result in stressed.items():
        assert result.units == chosen.units
        assert result.total_cost == cost_mix(demand * factor, [OD, RI], chosen.units).total_cost
    assert stressed[0.7].utilization["ri"] < chosen.utilization["ri"]


def test_load_shaping_lever_is_the_difference_of_two_optima():
    from finops.mix.levers import load_shaping
    from finops.mix.profile import shift_batch_off_peak

    demand = daily(2, 10, 28)
    effect = load_shaping(demand, [OD, RI], 0.3)
    assert effect.before == optimize_mix(demand, [OD, RI])
    assert effect.after == optimize_mix(shift_batch_off_peak(demand, 0.3), [OD, RI])
    assert effect.after.units["ri"] > effect.before.units["ri"] and effect.saved.amount > 0
    assert load_shaping(demand, [OD, RI], 0.0).saved.amount == 0
    with pytest.raises(InputError):
        load_shaping(demand, [OD, RI], 1.0)
