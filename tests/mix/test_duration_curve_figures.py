"""The duration-curve pieces on profiles worked by hand, and the optimum against brute force over unit grids.

The flexible cost above a level L is the hour-by-hour dispatch of what L committed units leave over:
spot tiers cheapest first up to each hour's cap, then on-demand (Stoft, *Power System Economics*, 2002,
ch. 3-4: the screening curve). ``flexible_above`` below is that dispatch written out per hour.
"""

from decimal import Decimal
from itertools import product

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption, cost_mix, optimize_mix
from finops.mix.duration_curve import (
    MAX_LAYERS,
    area_above,
    flexible_cost_curve,
    flexible_tiers,
    layer_values,
    merit_order,
    sliding_min,
    solve_units,
)

OD = MixOption("od", "on_demand", Decimal(10))
SPOT = MixOption("spot", "spot", Decimal(4), max_share=0.5)


def flexible_above(demand, weights, options, level):
    """sum_t w_t (cost of serving max(d_t - L, 0) with spot tiers, cheapest first, then on-demand)."""
    od = min(float(o.hourly_cost) for o in options if o.kind == "on_demand")
    spots = sorted((o for o in options if o.kind == "spot" and float(o.hourly_cost) < od),
                   key=lambda o: float(o.hourly_cost))
    total = 0.0
    for d, w in zip(demand, weights):
        left = max(d - level, 0.0)
        for spot in spots:
            cap = d * (1.0 if spot.max_share is None else spot.max_share)
            cap = spot.availability * (cap if spot.max_units is None else min(cap, spot.max_units))
            taken = min(left, cap)
            total += w * taken * float(spot.hourly_cost)
            left -= taken
        total += w * left * od
    return total


@pytest.mark.parametrize("values, weights, levels, expected", [
    ([1.0, 4.0], [1.0, 1.0], [0, 1, 2, 3, 4, 5], [5.0, 3.0, 2.0, 1.0, 0.0, 0.0]),
    ([4.0, 1.0], [1.0, 2.0], [0, 1, 2, 3, 4], [6.0, 3.0, 2.0, 1.0, 0.0]),        # unsorted, weighted
    ([3.0, 1.0, 2.0], [1.0, 1.0, 1.0], [0, 1, 2, 3], [6.0, 3.0, 1.0, 0.0]),      # the sort moves the weights too
    ([2.0, 2.0, 2.0], [1.0, 0.5, 0.5], [0, 1, 2, 3], [4.0, 2.0, 0.0, 0.0]),      # ties
    ([3.0, 2.0, 0.5], [2.0, 1.0, 3.0], [0.5, 2.5], [6.5, 1.0]),
])
def test_area_above_each_level(values, weights, levels, expected):
    got = area_above(np.array(values), np.array(weights), np.array(levels, dtype=float))
    assert got.tolist() == expected


def test_flexible_cost_curve_worked_by_hand():
    # d = 1, 4; spot at 4 for half of each hour, on-demand 10. L = 0: hour 1 0.5 x 4 + 0.5 x 10 = 7,
    # hour 2 2 x 4 + 2 x 10 = 28; L = 1: 2 x 4 + 1 x 10 = 18; L = 2: 2 x 4; L = 3: 1 x 4; L = 4: 0
    levels = np.arange(5, dtype=float)
    curve = flexible_cost_curve(np.array([1.0, 4.0]), np.ones(2), [OD, SPOT], levels)
    assert curve.tolist() == [35.0, 18.0, 8.0, 4.0, 0.0]
    weighted = flexible_cost_curve(np.array([4.0, 1.0]), np.array([1.0, 2.0]), [SPOT, OD], levels)
    assert weighted.tolist() == [42.0, 18.0, 8.0, 4.0, 0.0]
    assert flexible_cost_curve(np.array([1.0, 4.0]), np.ones(2), [OD], levels).tolist() == [50, 30, 20, 10, 0]


@pytest.mark.parametrize("seed", range(6))
def test_flexible_cost_curve_equals_the_hourly_dispatch(seed):
    rng = np.random.default_rng(seed)
    demand = rng.uniform(0, 9, 12).round(2)
    weights = rng.uniform(0.5, 2, 12).round(2)
    options = [MixOption("od", "on_demand", Decimal("9.5")), MixOption("od-2", "on_demand", Decimal(12)),
               MixOption("s1", "spot", Decimal(5), max_share=0.3, availability=0.9),
               MixOption("s0", "spot", Decimal(3), max_units=2),
               MixOption("s2", "spot", Decimal("9.5"), max_share=0.9),       # as dear as on-demand: unused
               MixOption("s3", "spot", Decimal(7), max_share=0.4, max_units=1)]
    levels = np.arange(11, dtype=float)
    curve = flexible_cost_curve(demand, weights, options, levels)
    assert curve == pytest.approx([flexible_above(demand, weights, options, L) for L in levels], rel=1e-12, abs=1e-9)


def test_flexible_tiers_are_the_spot_options_below_on_demand_cheapest_first():
    options = [MixOption("od", "on_demand", Decimal(9)), MixOption("od-cheap", "on_demand", Decimal(8)),
               MixOption("b", "spot", Decimal(5)), MixOption("at-od", "spot", Decimal(8)),
               MixOption("a", "spot", Decimal(2)), MixOption("between", "spot", Decimal("8.5")),
               MixOption("ri", "reserved", Decimal(1))]
    assert [o.name for o in flexible_tiers(options)] == ["a", "b"]


def test_merit_order_by_variable_cost_then_price_then_name():
    options = [MixOption("od", "on_demand", Decimal(9)), MixOption("own-b", "owned", Decimal(1), variable_cost=Decimal(2)),
               MixOption("ri-b", "reserved", Decimal(5)), MixOption("own-a", "owned", Decimal(1), variable_cost=Decimal(2)),
               MixOption("ri-a", "reserved", Decimal(5)), MixOption("sp", "savings_plan", Decimal(4)),
               MixOption("own-c", "owned", Decimal("0.5"), variable_cost=Decimal(3)),
               MixOption("spot", "spot", Decimal(3))]
    assert [o.name for o in merit_order(options)] == ["sp", "ri-a", "ri-b", "own-a", "own-b", "own-c"]


def test_layer_values_worked_by_hand():
    layers = layer_values(np.array([4.0, 1.0]), np.array([1.0, 2.0]), [OD, SPOT])
    assert layers.top == 4 and layers.hours == 3.0
    assert layers.area.tolist() == [6.0, 3.0, 2.0, 1.0, 0.0]
    assert layers.flexible.tolist() == [42.0, 18.0, 8.0, 4.0, 0.0]
    assert layers.prefix_energy.tolist() == [0.0, 3.0, 4.0, 5.0, 6.0]
    assert layers.prefix_saving.tolist() == [0.0, 24.0, 34.0, 38.0, 42.0]
    plain = layer_values(np.array([1.0, 3.5]), None, [OD])
    assert plain.top == 4 and plain.hours == 2.0 and plain.area.tolist() == [4.5, 2.5, 1.5, 0.5, 0.0]


def test_the_layer_count_is_bounded():
    assert layer_values(np.array([0.0, float(MAX_LAYERS)]), None, [OD]).top == MAX_LAYERS
    with pytest.raises(InputError) as caught:
        layer_values(np.array([1.0, MAX_LAYERS + 0.5]), None, [OD])
    assert caught.value.message == ("demand peaks at 2,000,001 units; the optimizer works in whole units up to "
                                    "2,000,000")
    assert caught.value.hint == "count demand in larger units (servers rather than GPUs)"


@pytest.mark.parametrize("window", [1, 2, 3, 4, 5, 6, 9])
def test_sliding_minimum_against_brute_force(window):
    values = np.array([5.0, 3.0, 4.0, 1.0, 2.0, 7.0, 0.5, 6.0])
    brute = [values[max(0, i - window + 1):i + 1].min() for i in range(len(values))]
    assert sliding_min(values, window).tolist() == brute


# ten hours: demand 1, 2, ..., 10, so layer m is used in (11 - m) of 10 hours
RAMP = np.arange(1.0, 11.0)
ONE_YEAR = MixOption("1y", "reserved", Decimal(6))
THREE_YEAR = MixOption("3y", "reserved", Decimal(4), max_units=3)


def units_for(demand, options):
    return solve_units(layer_values(demand, None, options), options)


def brute_force(demand, options, ranges, weights=None):
    """The cheapest units over a grid (cost_mix dispatches each candidate hour by hour)."""
    names = [o.name for o in options if o.committed]
    grid = [dict(zip(names, counts)) for counts in product(*ranges)]
    return min(grid, key=lambda units: (cost_mix(demand, options, units, weights).total_cost.amount,
                                        sum(units.values())))


def test_on_demand_one_year_three_year_break_even_on_a_ramp():
    """Break-even shares: 3y at 4 / 10 = 0.4, 1y at 6 / 10 = 0.6. The 3 capped 3y units and one 1y unit
    take the layers used in more than 60 % of hours (1.0, 0.9, 0.8, 0.7); the fifth (0.6) is a tie, and
    a tie buys fewer units."""
    options = [OD, ONE_YEAR, THREE_YEAR]
    units = units_for(RAMP, options)
    assert units == {"1y": 1, "3y": 3}
    assert units == brute_force(RAMP, options, [range(8), range(4)])
    result = optimize_mix(RAMP, options)
    # fixed 3 x 4 x 10 + 1 x 6 x 10 = 180; on-demand (55 - 34) x 10 = 210
    assert result.total_cost.amount == 390
    uncapped = [OD, ONE_YEAR, MixOption("3y", "reserved", Decimal(4))]
    assert units_for(RAMP, uncapped) == {"1y": 0, "3y": 6}        # layers used in 100 % ... 50 % of hours
    # STEPPED (2 always, 6 in half the hours, 10 in a fifth): ri at 4.9 a layer-hour, owned at 1 + 6 per
    # unit-hour. Layers used always: ri 49 < owned 70; used half the time: owned 10 + 30 < ri 49 < 50 saved;
    # used a fifth: owned 10 + 12 > 20 saved
    stepped = np.array([10, 10, 6, 6, 6, 2, 2, 2, 2, 2], dtype=float)
    owned = MixOption("own", "owned", Decimal(1), variable_cost=Decimal(6))
    assert units_for(stepped, [OD, MixOption("ri", "reserved", Decimal("4.9")), owned]) == {"ri": 2, "own": 4}


@pytest.mark.parametrize("seed", range(10))
def test_solve_units_equals_brute_force_on_small_grids(seed):
    rng = np.random.default_rng(seed)
    demand = rng.uniform(0, 6, 16).round(1)
    weights = rng.uniform(0.5, 2, 16).round(2) if seed % 2 else None
    options = [MixOption("od", "on_demand", Decimal(str(round(rng.uniform(6, 10), 2)))),
               MixOption("ri", "reserved", Decimal(str(round(rng.uniform(1, 6), 2))), max_units=int(rng.integers(1, 4))),
               MixOption("own", "owned", Decimal(str(round(rng.uniform(0.5, 3), 2))),
                         variable_cost=Decimal(str(round(rng.uniform(0.5, 1.5), 2)))),
               MixOption("spot", "spot", Decimal(str(round(rng.uniform(2, 5), 2))), max_share=0.4)]
    best = brute_force(demand, options, [range(options[1].max_units + 1), range(7)], weights)
    ours = optimize_mix(demand, options, weights)
    assert ours.total_cost == cost_mix(demand, options, best, weights).total_cost
    assert ours.units == best


def test_a_unit_on_a_layer_at_break_even_is_not_bought():
    # STEPPED-like: 2 units always, 4 in half the hours. ri at 5 = 0.5 x on-demand: layers 3-4 tie
    demand = np.array([2.0, 4.0] * 5)
    assert units_for(demand, [OD, MixOption("ri", "reserved", Decimal(5))]) == {"ri": 2}
    assert units_for(demand, [OD, MixOption("ri", "reserved", Decimal("4.99"))]) == {"ri": 4}
    owned = MixOption("own", "owned", Decimal(3), variable_cost=Decimal(4))   # 3 + 4 x 0.5 = 10 x 0.5: a tie
    assert units_for(demand, [OD, owned]) == {"own": 2}
    assert units_for(demand, [OD, MixOption("own", "owned", Decimal("2.9"), variable_cost=Decimal(4))]) == {"own": 4}


def test_empty_options_of_one_kind_buy_nothing():
    assert units_for(RAMP, [OD]) == {}
    assert units_for(np.zeros(5), [OD, ONE_YEAR]) == {"1y": 0}


@pytest.mark.parametrize("on_demand, reserved", [("12.9", "2.58"), ("12.2", "2.44"), ("12.9", "1.29")])
def test_a_tie_on_a_years_profile_buys_the_fewer_units_whatever_the_rounding(on_demand, reserved):
    """10 units every hour and 10 more in exactly the share of hours reserved / on-demand (0.2 or 0.1):
    committing the upper 10 costs what it saves (in decimals), so the base 10 are bought, and no more,
    though the floats of a year (costs near 10^6) round each layer's tie a little either way."""
    share = Decimal(reserved) / Decimal(on_demand)
    high = int(8760 * share)
    demand = np.r_[np.full(high, 20.0), np.full(8760 - high, 10.0)]
    options = [MixOption("od", "on_demand", Decimal(on_demand)), MixOption("ri", "reserved", Decimal(reserved))]
    assert units_for(demand, options) == {"ri": 10}
    ten, twenty = (cost_mix(demand, options, {"ri": n}).total_cost for n in (10, 20))
    assert ten == twenty
