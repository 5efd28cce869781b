"""The exact single-pool optimum: table-driven rules, and equality with HiGHS milp on random instances."""

from decimal import Decimal

import numpy as np
import pytest
from reference import hourly_milp

from finops.mix import MixOption, cost_mix, optimize_mix
from finops.mix.duration_curve import area_above, sliding_min

OD = MixOption("od", "on_demand", Decimal(10))


def ri(price, name="ri", **kw):
    return MixOption(name, "reserved", Decimal(str(price)), **kw)


# 10 hours: 10 units in 2 hours, 6 in 3 more, 2 in the other 5 -> share of hours above 2 is 0.5, above 6 is 0.2
STEPPED = np.array([10, 10, 6, 6, 6, 2, 2, 2, 2, 2], dtype=float)


@pytest.mark.parametrize("options, expected", [
    ([OD, ri(4.9)], {"ri": 6}),                       # break-even 0.49 < 0.5: commit up to 6
    ([OD, ri(5.1)], {"ri": 2}),                       # 0.51 > 0.5: only the always-on 2
    ([OD, ri(1.9)], {"ri": 10}),                      # 0.19 < 0.2: the peak too
    ([OD, ri(10.5)], {"ri": 0}),                      # dearer than on-demand
    ([OD, ri(3, max_units=4), ri(4.5, "ri-b")], {"ri": 4, "ri-b": 2}),     # a cap: the next tier takes over
    ([OD, ri(1, max_units=0), ri(4.5, "ri-b")], {"ri": 0, "ri-b": 6}),
    # owned: 1/h fixed + 6/h power; break-even share 1 / (10 - 6) = 0.25: above the 2 reserved units it
    # takes the layers up to 6 (run 50 % of hours), not those above (20 %)
    ([OD, ri(4.9, max_units=2),
      MixOption("own", "owned", Decimal(1), variable_cost=Decimal(6))], {"ri": 2, "own": 4}),
    # spot at 4 for 30 % of each hour: the top 30 % is worth only 4, below that 10
    ([OD, ri(4.9), MixOption("spot", "spot", Decimal(4), max_share=0.3)], {"ri": 4}),
])
def test_layers_follow_the_break_even_rule(options, expected):
    assert optimize_mix(STEPPED, options).units == expected


def test_result_costs_are_exact_decimals_from_the_units():
    result = optimize_mix(STEPPED, [OD, ri(4.9)])
    # 6 units x 4.9 x 10 h + on-demand (4 + 4) unit-hours x 10
    assert result.total_cost.amount == Decimal("294.0") + Decimal(80)
    assert result.on_demand_only_cost.amount == Decimal(10) * Decimal(int(STEPPED.sum()))
    assert result.savings.amount == result.on_demand_only_cost.amount - result.total_cost.amount
    assert result.share == pytest.approx({"ri": 40 / 48, "od": 8 / 48})
    assert result.utilization["ri"] == pytest.approx(40 / 60)
    assert result.cost_per_month.amount == result.total_cost.amount * 73


def test_weights_equal_repeated_hours():
    options = [OD, ri(4.9), MixOption("spot", "spot", Decimal(4), max_share=0.3)]
    weighted = optimize_mix(np.array([10.0, 6.0, 2.0]), options, weights=[2, 3, 5])
    assert weighted.units == optimize_mix(STEPPED, options).units
    assert weighted.total_cost == optimize_mix(STEPPED, options).total_cost


def test_area_and_sliding_window_helpers():
    values = np.array([0.5, 2.5, 4.0])
    levels = np.arange(5, dtype=float)
    assert area_above(values, np.ones(3), levels).tolist() == [7.0, 4.5, 2.5, 1.0, 0.0]
    rng = np.random.default_rng(0)
    data = rng.normal(size=50)
    for window in (1, 3, 7, 50, 80):
        brute = [data[max(0, i - window + 1):i + 1].min() for i in range(50)]
        assert sliding_min(data, window).tolist() == brute


def random_options(rng):
    options = [MixOption("od", "on_demand", Decimal(str(round(rng.uniform(5, 10), 2))))]
    for j in range(int(rng.integers(0, 4))):
        kind = str(rng.choice(["reserved", "owned", "savings_plan"]))
        variable = Decimal(str(round(rng.uniform(0, 1.5), 2))) if kind == "owned" else Decimal(0)
        cap = int(rng.integers(0, 8)) if rng.random() < 0.5 else None
        options.append(MixOption(f"c{j}", kind, Decimal(str(round(rng.uniform(1, 8), 2))), variable_cost=variable,
                                 max_units=cap))
    for j in range(int(rng.integers(0, 3))):
        options.append(MixOption(
            f"s{j}", "spot", Decimal(str(round(rng.uniform(1.6, 11), 2))),
            max_share=float(round(rng.uniform(0, 1), 2)) if rng.random() < 0.8 else None,
            max_units=int(rng.integers(0, 6)) if rng.random() < 0.4 else None,
            availability=float(round(rng.uniform(0.5, 1), 2))))
    return options


@pytest.mark.parametrize("seed", range(60))
def test_fast_path_equals_highs_milp(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    demand = rng.uniform(0, 12, n) * (rng.random(n) < 0.9)
    weights = rng.uniform(0.2, 2, n) if seed % 3 == 0 else None
    options = random_options(rng)
    reference, _ = hourly_milp(demand, options, weights)
    ours = optimize_mix(demand, options, weights)
    assert float(ours.total_cost.amount) == pytest.approx(reference, rel=1e-6, abs=1e-6)


def test_cost_mix_matches_the_milp_dispatch_for_given_units():
    rng = np.random.default_rng(99)
    demand = rng.uniform(0, 12, 40)
    options = [OD, ri(4, max_units=3), MixOption("own", "owned", Decimal(2), variable_cost=Decimal(1)),
               MixOption("spot", "spot", Decimal(3), max_share=0.5, availability=0.8)]
    fixed = [o if not o.committed else MixOption(o.name, o.kind, o.hourly_cost, variable_cost=o.variable_cost,
                                                 max_units=2) for o in options]
    reference, units = hourly_milp(demand, fixed)
    assert units == {"ri": 2, "own": 2}
    assert float(cost_mix(demand, options, units).total_cost.amount) == pytest.approx(reference, rel=1e-9)
