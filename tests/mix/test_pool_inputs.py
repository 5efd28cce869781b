"""Pools take demand as the user has it (a list of Decimals from a CSV, ints, a numpy array): the same
figures whichever, worked by hand; a bad hour is refused naming the pool."""

from decimal import Decimal as D

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption
from finops.mix.lp import Pool, evaluate_pools

OD, RI = MixOption("od", "on_demand", D("4.00")), MixOption("ri", "reserved", D("2.50"))
A_DAY, B_DAY = [D(5), D("3.5"), D(0)], [D(1), D(2), D(3)]


@pytest.mark.parametrize("as_given", [list, lambda day: [float(x) for x in day], np.array],
                         ids=["Decimals", "floats", "numpy"])
def test_demand_as_decimals_floats_or_an_array_costs_the_same(as_given):
    """Pool a: 2 reserved units at 2.50 over 30 hours = 150, on demand 4.00 x (3 + 1.5 + 0) x 10 = 180;
    pool b: on demand 4.00 x 6 x 10 = 240; a plan of 1.00 an hour at a rate of 2.00 covers half a unit-hour
    of on-demand (4.00) every hour: 30 paid, 2.00 x 30 = 60 displaced. 150 + 180 + 240 + 30 - 60 = 540;
    on demand only: 4.00 x (8.5 + 6) x 10 = 580."""
    pools = [Pool("a", as_given(A_DAY * 10), (OD, RI), D(2)), Pool("b", as_given(B_DAY * 10), (OD,), D(2))]
    result = evaluate_pools(pools, {"a": {"ri": 2}, "b": {}}, D(1))
    assert (result.total_cost.amount, result.on_demand_only_cost.amount, result.savings.amount) == (
        D(540), D(580), D(40))
    assert result.plan_used == 1.0


@pytest.mark.parametrize("day,message", [([D(1), D(-2)], "pool 'b': demand at hour 1 is -2.0; units must be "
                                          "finite and >= 0"),
                                         ([], "pool 'b': demand must be a non-empty list of hourly units")])
def test_a_bad_hour_names_its_pool(day, message):
    with pytest.raises(InputError) as caught:
        Pool("b", day, (OD,))
    assert caught.value.message == message
