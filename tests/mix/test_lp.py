"""Coupled pools: equal to an independent hourly MILP, exact hour merging, clustering close to the LP bound."""

from decimal import Decimal

import numpy as np
import pytest
from reference import coupled_milp

from finops.errors import InputError
from finops.mix import MixOption, optimize_mix
from finops.mix.lp import Pool, compress_hours, evaluate_pools, hourly_lp_bound, optimize_pools
from finops.money import Money


def random_pool(rng, name, hours):
    od = round(float(rng.uniform(5, 10)), 2)
    options = [MixOption("od", "on_demand", Decimal(str(od)))]
    if rng.random() < 0.7:
        options.append(MixOption("ri", "reserved", Decimal(str(round(float(rng.uniform(2, 7)), 2))),
                                 max_units=int(rng.integers(0, 6)) if rng.random() < 0.4 else None,
                                 upfront=Decimal(int(rng.integers(0, 100)))))
    if rng.random() < 0.4:
        options.append(MixOption("own", "owned", Decimal(str(round(float(rng.uniform(1, 5)), 2))),
                                 variable_cost=Decimal("0.5"), upfront=Decimal(int(rng.integers(50, 200)))))
    if rng.random() < 0.6:
        options.append(MixOption("spot", "spot", Decimal(str(round(float(rng.uniform(1, 6)), 2))), max_share=0.4))
    rate = Decimal(str(round(od * float(rng.uniform(0.5, 0.9)), 2))) if rng.random() < 0.8 else None
    return Pool(name, rng.uniform(0, 10, hours) * (rng.random(hours) < 0.85), tuple(options), rate)


@pytest.mark.parametrize("seed", range(12))
def test_coupled_pools_equal_the_hourly_milp(seed):
    rng = np.random.default_rng(seed)
    hours = int(rng.integers(4, 30))
    pools = [random_pool(rng, f"p{p}", hours) for p in range(int(rng.integers(1, 4)))]
    budget = float(rng.uniform(0, 500)) if seed % 3 == 0 else None
    reference, _, _ = coupled_milp(pools, True, budget)
    ours = optimize_pools(pools, shared_plan=True,
                          capex_budget=None if budget is None else Money.of(repr(budget), "USD"))
    # the plan is bought in steps of 0.001 per hour, rounded down
    assert float(ours.total_cost.amount) == pytest.approx(reference, abs=0.001 * hours + 1e-6 * reference)
    assert float(ours.total_cost.amount) >= reference - 1e-6 * reference


@pytest.mark.parametrize("seed", range(8))
def test_the_hourly_lp_bound_equals_the_reference_lp_relaxation(seed):
    rng = np.random.default_rng(100 + seed)
    hours = int(rng.integers(6, 40))
    pools = [random_pool(rng, f"p{p}", hours) for p in range(int(rng.integers(1, 4)))]
    budget = float(rng.uniform(0, 500)) if seed % 2 else None
    relaxed, _, _ = coupled_milp(pools, True, budget, integral=False)
    bound = hourly_lp_bound(pools, shared_plan=True,
                            capex_budget=None if budget is None else Money.of(repr(budget), "USD"))
    assert bound == pytest.approx(relaxed, rel=1e-6, abs=1e-6)


def test_without_coupling_pools_are_solved_one_by_one():
    rng = np.random.default_rng(5)
    pools = [random_pool(rng, f"p{p}", 48) for p in range(4)]
    result = optimize_pools(pools)
    singles = [optimize_mix(p.demand, p.options) for p in pools]
    assert result.units == {p.name: s.units for p, s in zip(pools, singles)}
    assert result.total_cost == Money.total([s.total_cost for s in singles], "USD")


def test_a_plan_shared_across_time_zones_pays_for_itself():
    od = MixOption("od", "on_demand", Decimal(10))
    day = np.r_[np.full(12, 8.0), np.zeros(12)]
    pools = [Pool("us", np.tile(day, 10), (od,), Decimal(7)), Pool("asia", np.tile(day[::-1], 10), (od,), Decimal(7))]
    result = optimize_pools(pools, shared_plan=True)
    assert result.plan_per_hour == Decimal("56.000") and result.plan_used == pytest.approx(1.0)
    assert result.total_cost.amount == Decimal(56 * 240)
    assert evaluate_pools(pools, result.units, Decimal(28)).total_cost.amount == Decimal(28 * 240 + 4 * 120 * 10 * 2)


def test_capex_budget_limits_owned_units():
    od = MixOption("od", "on_demand", Decimal(10))
    own = MixOption("own", "owned", Decimal(1), upfront=Decimal(1000))
    pools = [Pool("a", np.full(50, 5.0), (od, own)), Pool("b", np.full(50, 3.0), (od, own))]
    assert sum(sum(u.values()) for u in optimize_pools(pools, capex_budget=Money.of(10_000, "USD")).units.values()) == 8
    assert sum(sum(u.values()) for u in optimize_pools(pools, capex_budget=Money.of(4_500, "USD")).units.values()) == 4
    with pytest.raises(InputError, match="EUR"):
        optimize_pools(pools, capex_budget=Money.of(1, "EUR"))


def test_hour_compression():
    demand = np.array([[1.0, 2.0], [3.0, 0.0], [1.0, 2.0], [1.0, 2.0]])
    rows, weights = compress_hours(demand)
    assert rows.tolist() == [[1.0, 2.0], [3.0, 0.0]] and weights.tolist() == [3.0, 1.0]
    rng = np.random.default_rng(0)
    rows, weights = compress_hours(rng.uniform(0, 5, (500, 3)), representatives=20)
    assert len(rows) <= 20 and weights.sum() == 500


def test_clustered_hours_stay_close_to_the_full_lp_bound():
    rng = np.random.default_rng(11)
    t = np.arange(24 * 28)
    pools = []
    for p in range(6):
        shape = 10 + 6 * np.sin(2 * np.pi * (t + 4 * p) / 24) + rng.normal(0, 0.5, len(t))
        od = Decimal(str(round(float(rng.uniform(4, 9)), 2)))
        pools.append(Pool(f"p{p}", np.maximum(shape, 0), (MixOption("od", "on_demand", od),
                          MixOption("ri", "reserved", od * Decimal("0.62"))), od * Decimal("0.72")))
    bound = hourly_lp_bound(pools, shared_plan=True)
    clustered = optimize_pools(pools, shared_plan=True, representatives=40)
    assert clustered.solved_hours <= 40
    assert bound <= float(clustered.total_cost.amount) <= bound * 1.01
