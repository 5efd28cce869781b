"""Weighted scenarios and stress tests on flat profiles whose optima and costs are worked by hand.

On-demand 10, reserved 6 (break-even share 0.6). Low: 2 units for 10 hours (weight 0.25), high: 6 units
(weight 0.75): layers 1-2 run in every outcome, layers 3-6 in 75 % of them (> 60 %), so the expected-cost
optimum reserves 6; the low scenario's own optimum is 2.
"""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption
from finops.mix.scenarios import STRESS_FACTORS, Scenario, plan_scenarios, stress_test

OPTIONS = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
LOW, HIGH = Scenario("low", 0.25, np.full(10, 2.0)), Scenario("high", 0.75, np.full(10, 6.0))


@pytest.mark.parametrize("scenarios", [[LOW, HIGH], [HIGH, LOW]])
def test_expected_cost_optimum_and_commit_to_low(scenarios):
    plan = plan_scenarios(scenarios, OPTIONS)
    assert plan.expected.units == {"ri": 6} and plan.commit_to_low.units == {"ri": 2}
    # 6 x 6 x 10 h in every outcome
    assert plan.expected.total_cost.amount == 360 and plan.expected.hours == 10.0
    # 2 x 6 x 10 h, plus in the high outcome (0.75) 4 units x 10 h x 10 on-demand
    assert plan.commit_to_low.total_cost.amount == 120 + Decimal("0.75") * 400
    assert {plan: {name: r.total_cost.amount for name, r in rows.items()} for plan, rows in plan.per_scenario.items()} \
        == {"expected": {"low": 360, "high": 360}, "commit_to_low": {"low": 120, "high": 520}}
    assert plan.to_dict()["per_scenario"] == {"expected": {"low": Decimal("360.00"), "high": Decimal("360.00")},
                                              "commit_to_low": {"low": Decimal("120.00"), "high": Decimal("520.00")}}
    assert plan.to_dict()["expected"] == plan.expected.to_dict()
    assert plan.to_dict()["commit_to_low"] == plan.commit_to_low.to_dict()


def test_weights_are_probabilities_as_given():
    # a low scenario that weighs more: layers 3-6 run in 1 / 3 of outcomes (< 60 %): reserve 2
    plan = plan_scenarios([Scenario("low", 2 / 3, LOW.demand), Scenario("high", 1 / 3, HIGH.demand)], OPTIONS)
    assert plan.expected.units == {"ri": 2}
    assert float(plan.expected.total_cost.amount) == pytest.approx(120 + 400 / 3)
    zero = plan_scenarios([Scenario("low", 0.0, LOW.demand), Scenario("high", 1.0, HIGH.demand)], OPTIONS)
    assert zero.expected.units == {"ri": 6} and zero.commit_to_low.units == {"ri": 2}
    # float sums that miss 1 by rounding alone are sums of 1
    assert plan_scenarios([Scenario(n, w, LOW.demand) for n, w in (("a", 0.1), ("b", 0.2), ("c", 0.7))], OPTIONS)


#: Scenarios that do not make a plan -> the message, which names every weight and the sum.
REFUSED = [
    ([LOW, Scenario("high", 0.75, np.full(11, 6.0))], "demand profiles of the same length: low 10 hours, high 11"),
    ([Scenario("low", 1.0, LOW.demand), Scenario("high", 3.0, HIGH.demand)], "sum to 1: low 1, high 3 sum to 4"),
    ([Scenario("low", 0.5, LOW.demand), Scenario("high", 0.6, HIGH.demand)], "low 0.5, high 0.6 sum to 1.1"),
    ([Scenario("low", -0.25, LOW.demand), Scenario("high", 1.25, HIGH.demand)], "0 or more: low -0.25, high 1.25"),
    ([Scenario("low", float("nan"), LOW.demand), HIGH], "0 or more: low nan, high 0.75"),
    ([Scenario("low", float("inf"), LOW.demand), HIGH], "0 or more: low inf"),
    ([Scenario("low", 0.0, LOW.demand), Scenario("high", 0.0, HIGH.demand)], "low 0, high 0 sum to 0"),
]


@pytest.mark.parametrize(("scenarios", "message"), REFUSED)
def test_scenarios_that_do_not_fit_together(scenarios, message):
    """Weights are never scaled to fit: 0.5 and 0.6 is a typing error, not 45 % and 55 %."""
    with pytest.raises(InputError, match=message):
        plan_scenarios(scenarios, OPTIONS)


def test_no_scenarios_and_a_bad_profile_are_refused():
    with pytest.raises(InputError) as caught:
        plan_scenarios([], OPTIONS)
    assert caught.value.message == "no scenarios given"
    with pytest.raises(InputError, match="demand at hour 0 is -1.0"):
        plan_scenarios([Scenario("bad", 0.25, np.full(10, -1.0)), HIGH], OPTIONS)


def test_stress_recosts_the_mix_under_scaled_demand():
    assert STRESS_FACTORS == (0.7, 1.5)
    stressed = stress_test(np.full(10, 10.0), OPTIONS, {"ri": 10})
    # 0.7: 7 units, all on the 10 reserved (600); 1.5: 600 + 5 units x 10 h x 10
    assert {f: r.total_cost.amount for f, r in stressed.items()} == {0.7: 600, 1.5: 1100}
    assert stressed[0.7].utilization["ri"] == pytest.approx(0.7) and stressed[1.5].units == {"ri": 10}
    assert {f: r.total_cost.amount for f, r in stress_test([4.0, 8.0], OPTIONS, {"ri": 4}, (0.5, 2.0)).items()} \
        == {0.5: 48, 2.0: 48 + (4 + 12) * 10}
    with pytest.raises(InputError):
        stress_test([], OPTIONS, {"ri": 1})
