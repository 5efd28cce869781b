"""The ladder on 2-hour "months", where each layer's shortest path over months is worked by hand.

On-demand costs 10 a unit-hour, so a unit layer used h hours of a month is worth 10 h flexibly. A tranche
of option j bought in month t costs its price x its hours inside the horizon, plus, for each month it
runs past the horizon, its monthly price less what that month is worth to the layer then (the last
month's flexible value, at most the cheapest term's monthly price): ``finops/mix/ladder.py``.
"""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import InputError, Location
from finops.mix import MixOption
from finops.mix.ladder import plan_ladder

OD = MixOption("od", "on_demand", Decimal(10))


def reserved(name, price, months, **fields):
    return MixOption(name, "reserved", Decimal(price), term_hours=2 * months, **fields)


def test_growing_demand_buys_a_tranche_as_each_layer_starts():
    """Demand 1, 2, 3 units in months 0, 1, 2; 1y = 6/h for 2 months, 3y = 3.5/h (7 a month) for 3.

    Layer 1 (worth 20 every month): 3y at month 0 costs 21 for all three; the 1y path 24 + 7 = 31, flexible 60.
    Layer 2 (0, 20, 20): flexible in month 0, then 3y at month 1: 14 inside + 1 month past at 7 - 7.
    Layer 3 (0, 0, 20): 3y at month 2: 7 inside, 2 months past at 7 - 7 = 0; flexible 20.
    """
    plan = plan_ladder(np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0]),
                       [OD, reserved("1y", 6, 2), reserved("3y", "3.5", 3)], month_hours=2)
    assert plan.months == 3
    assert repr(plan.purchases) == "{'1y': [0, 0, 0], '3y': [1, 1, 1]}"    # whole units, as the JSON shows them
    assert repr(plan.active) == "{'1y': [0, 0, 0], '3y': [1, 2, 3]}"
    assert [m.amount for m in plan.monthly_cost] == [7, 14, 21]
    assert plan.total_cost.amount == 42 and plan.on_demand_only_cost.amount == 120 and plan.savings.amount == 78
    # the month-1 tranche runs 1 month past the horizon, the month-2 one 2: 3 unit-months x 3.5 x 2 h
    assert plan.outstanding.amount == 21
    assert plan.to_dict() == {
        "months": 3, "purchases": {"1y": [0, 0, 0], "3y": [1, 1, 1]}, "active": {"1y": [0, 0, 0], "3y": [1, 2, 3]},
        "monthly_cost": [Decimal("7.00"), Decimal("14.00"), Decimal("21.00")], "total_cost": Decimal("42.00"),
        "on_demand_only_cost": Decimal("120.00"), "savings": Decimal("78.00"), "outstanding": Decimal("21.00"),
        "currency": "USD"}


def test_a_bump_is_covered_by_the_shorter_term():
    """Demand 2, 2, 1 units; 1y = 6/h (12 a month) for 2 months, 3y = 4.5/h (9 a month) for 3.

    Layer 1 (20 a month): 3y at month 0 for 27, against 1y + 3y-at-month-2 (24 + 9) or flexible 60.
    Layer 2 (20, 20, 0): 1y at month 0 for 24, against 3y 27 or flexible 40.
    """
    plan = plan_ladder(np.array([2.0, 2.0, 2.0, 2.0, 1.0, 1.0]),
                       [OD, reserved("1y", 6, 2), reserved("3y", "4.5", 3)], month_hours=2)
    assert plan.purchases == {"1y": [1, 0, 0], "3y": [1, 0, 0]}
    assert plan.active == {"1y": [1, 1, 0], "3y": [1, 1, 1]}
    assert [m.amount for m in plan.monthly_cost] == [21, 21, 9]
    assert plan.total_cost.amount == 51 and plan.on_demand_only_cost.amount == 100 and plan.outstanding.amount == 0


def test_a_tranche_past_the_horizon_is_charged_what_the_layer_is_worth_then():
    """Demand 1, 1 then 0.25, 0.25: the layer is worth 20 in month 0, 5 in month 1 and 5 a month after
    (below the cheapest term's 9). 1y = 12 a month for 2 months: 24. 3y = 9 a month for 4 months:
    18 inside + 2 months past at 9 - 5 = 26. Flexible: 25. The 1y tranche wins by 1."""
    plan = plan_ladder(np.array([1.0, 1.0, 0.25, 0.25]),
                       [OD, reserved("1y", 6, 2), reserved("3y", "4.5", 4)], month_hours=2)
    assert plan.purchases == {"1y": [1, 0], "3y": [0, 0]}
    assert plan.total_cost.amount == 24 and plan.on_demand_only_cost.amount == 25 and plan.outstanding.amount == 0


def test_a_tranche_that_only_ties_the_flexible_cost_is_not_bought():
    plan = plan_ladder(np.array([1.0, 1.0]), [OD, reserved("1y", 10, 1)], month_hours=2)
    assert plan.purchases == {"1y": [0]} and plan.total_cost.amount == 20
    plan = plan_ladder(np.array([1.0, 1.0]), [OD, reserved("1y", "9.99", 1)], month_hours=2)
    assert plan.purchases == {"1y": [1]} and plan.total_cost.amount == Decimal("19.98")


def test_a_partial_last_month_is_costed_on_its_own_hours():
    """Five hours in 2-hour months: the third month has one hour. 3y (3.5/h, 3 months) on the 1-unit
    base from month 0 costs 3.5 x 5 h inside the horizon and 1 hour's worth of the last month after it."""
    plan = plan_ladder(np.ones(5), [OD, reserved("3y", "3.5", 3)], month_hours=2)
    assert plan.months == 3 and plan.purchases == {"3y": [1, 0, 0]} and plan.active == {"3y": [1, 1, 1]}
    assert [m.amount for m in plan.monthly_cost] == [7, 7, Decimal("3.5")]
    assert plan.on_demand_only_cost.amount == 50 and plan.outstanding.amount == 0


def test_without_commitments_the_ladder_is_on_demand():
    plan = plan_ladder(np.array([1.0, 3.0, 2.0]), [OD], month_hours=2)
    assert plan.purchases == {} and plan.active == {} and plan.total_cost.amount == 60 and plan.outstanding.amount == 0


@pytest.mark.parametrize("fields", [{"term_hours": None}, {"max_units": 3},
                                    {"kind": "owned", "variable_cost": Decimal(1)}])
def test_what_the_ladder_cannot_model_is_refused(fields):
    option = MixOption(**{"name": "ri", "kind": "reserved", "hourly_cost": Decimal(6), "term_hours": 4,
                          "origin": Location(file="o.csv", row=3), **fields})
    with pytest.raises(InputError) as caught:
        plan_ladder(np.ones(4), [OD, option], month_hours=2)
    assert caught.value.message == ("option 'ri': the ladder needs term_hours and no variable_cost or max_units on "
                                    "committed options")
    assert caught.value.where == Location(file="o.csv", row=3)
    assert caught.value.hint == "give each commitment its term; use optimize_mix for owned or capped options"


def test_a_bad_demand_is_refused_before_planning():
    with pytest.raises(InputError, match="demand at hour 1 is -1.0"):
        plan_ladder([1.0, -1.0], [OD, reserved("1y", 6, 1)], month_hours=2)


def test_of_two_options_at_one_price_the_first_is_bought():
    plan = plan_ladder(np.ones(4), [OD, reserved("a", 5, 2), reserved("b", 5, 2)], month_hours=2)
    assert plan.purchases == {"a": [1, 0], "b": [0, 0]}
    plan = plan_ladder(np.ones(4), [OD, reserved("b", 5, 2), reserved("a", 5, 2)], month_hours=2)
    assert plan.purchases == {"b": [1, 0], "a": [0, 0]}


def test_a_layer_renews_its_tranche_when_the_last_one_ends():
    """Flat at 1 unit for 6 months; a 2-month term at 6/h (24) against 40 flexible: bought at months 0, 2, 4."""
    plan = plan_ladder(np.ones(12), [OD, reserved("1y", 6, 2)], month_hours=2)
    assert plan.purchases == {"1y": [1, 0, 1, 0, 1, 0]} and plan.active == {"1y": [1] * 6}
    assert plan.total_cost.amount == 72 and plan.outstanding.amount == 0
