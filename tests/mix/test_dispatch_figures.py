"""``cost_mix`` and ``hourly_dispatch`` on a six-hour profile dispatched by hand, and their input checks.

Options (merit order: zero-variable-cost reservation at the bottom, owned servers with a power cost above,
then spot tiers cheapest first, then the cheapest on-demand):

* ``ri``: 2 units, 6/h.   * ``own``: 2 units, 1/h + 2 per unit-hour served, 100 upfront.
* ``spot``: 4 per unit-hour, at most 0.75 x 0.5 x demand each hour (0.375 d).
* ``spot-b``: 5 per unit-hour, at most 1 unit each hour.  * ``spot-dear``: 12, dearer than on-demand: never used.
* ``od``: 10, ``od-dear``: 11 (never used: the cheapest on-demand takes the rest).

Demand 0, 1.5, 3, 5, 8, 16 units, worked hour by hour:

=====  ====  ===  =====  ======  ==
d      ri    own  spot   spot-b  od
=====  ====  ===  =====  ======  ==
0      0     0    0      0       0
1.5    1.5   0    0      0       0
3      2     1    0      0       0
5      2     2    1      0       0      (spot cap 1.875)
8      2     2    3      1       0      (spot cap 3)
16     2     2    6      1       5      (spot cap 6)
=====  ====  ===  =====  ======  ==
"""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption, cost_mix, optimize_mix
from finops.mix.dispatch import as_demand, cheapest_on_demand, hourly_dispatch

DEMAND = np.array([0.0, 1.5, 3.0, 5.0, 8.0, 16.0])
OPTIONS = [
    MixOption("od-dear", "on_demand", Decimal(11)),
    MixOption("own", "owned", Decimal(1), variable_cost=Decimal(2), upfront=Decimal(100)),
    MixOption("spot-dear", "spot", Decimal(12)),
    MixOption("spot-b", "spot", Decimal(5), max_units=1),
    MixOption("ri", "reserved", Decimal(6)),
    MixOption("spot", "spot", Decimal(4), max_share=0.5, availability=0.75),
    MixOption("od", "on_demand", Decimal(10)),
]
UNITS = {"ri": 2, "own": 2}
SERVED = {"ri": [0, 1.5, 2, 2, 2, 2], "own": [0, 0, 1, 2, 2, 2], "spot": [0, 0, 0, 1, 3, 6],
          "spot-b": [0, 0, 0, 0, 1, 1], "od": [0, 0, 0, 0, 0, 5]}


def test_each_hour_is_served_in_merit_order():
    served = hourly_dispatch(DEMAND, OPTIONS, UNITS)
    assert {name: amount.tolist() for name, amount in served.items()} == SERVED


def test_the_cost_of_the_mix_worked_by_hand():
    result = cost_mix(DEMAND, OPTIONS, UNITS)
    # ri 2 x 6 x 6 h = 72; own 2 x 1 x 6 h + 2 x 7 unit-hours = 26; spot 4 x 10 = 40; spot-b 5 x 2 = 10; od 10 x 5 = 50
    costs = {o.name: o.cost.amount for o in result.outcomes}
    assert costs == {"od-dear": 0, "own": 26, "spot-dear": 0, "spot-b": 10, "ri": 72, "spot": 40, "od": 50}
    assert [o.name for o in result.outcomes] == [o.name for o in OPTIONS]
    assert {o.name: o.unit_hours for o in result.outcomes} == {
        "od-dear": 0.0, "own": 7.0, "spot-dear": 0.0, "spot-b": 2.0, "ri": 9.5, "spot": 10.0, "od": 5.0}
    assert {o.name: o.units for o in result.outcomes} == {
        "od-dear": None, "own": 2, "spot-dear": None, "spot-b": None, "ri": 2, "spot": None, "od": None}
    assert [o.kind for o in result.outcomes] == [o.kind for o in OPTIONS]
    assert result.total_cost.amount == 198 and result.total_cost.currency == "USD"
    assert result.on_demand_only_cost.amount == Decimal("335.0")      # 33.5 unit-hours x 10
    assert (result.hours, result.demand_unit_hours, result.currency) == (6.0, 33.5, "USD")
    assert result.upfront.amount == 200                                 # 2 owned units x 100 at signing
    assert {o.name: o.upfront for o in result.outcomes}["ri"].amount == 0
    assert result.utilization == {"own": 7 / 12, "ri": 9.5 / 12}


def test_weights_count_hours_as_many_times_as_they_weigh():
    # the 16-unit hour twice: 7 hours; ri 2 x 6 x 7 = 84; own 2 x 7 + 2 x 9 = 32; spot 4 x 16; spot-b 5 x 3; od 10 x 10
    result = cost_mix(DEMAND, OPTIONS, UNITS, weights=[1, 1, 1, 1, 1, 2])
    assert {o.name: o.cost.amount for o in result.outcomes if o.cost.amount} == {
        "own": 32, "spot-b": 15, "ri": 84, "spot": 64, "od": 100}
    assert result.hours == 7.0 and result.demand_unit_hours == 49.5
    assert result.on_demand_only_cost.amount == Decimal("495.0")


def test_missing_names_buy_no_units():
    # ri alone: residual 0, 0, 1, 3, 6, 14; spot 0, 0, 1, 1.875, 3, 6 (11.875); spot-b 0, 0, 0, 1, 1, 1 (3);
    # od 0, 0, 0, 0.125, 2, 7 (9.125): 72 + 4 x 11.875 + 5 x 3 + 10 x 9.125
    result = cost_mix(DEMAND, OPTIONS, {"ri": 2})
    assert result.units == {"own": 0, "ri": 2}
    assert result.total_cost.amount == Decimal("225.75")
    # nothing committed: spot 0.375 d (12.5625), spot-b min(0.625 d, 1) (4.9375), od the rest (16)
    assert cost_mix(DEMAND, OPTIONS, {}).total_cost.amount == Decimal("234.9375")


def test_the_cheapest_on_demand_option_serves_the_rest():
    assert cheapest_on_demand(OPTIONS).name == "od"
    assert cheapest_on_demand(OPTIONS[::-1]).name == "od"


@pytest.mark.parametrize("demand, message", [
    ([], "demand must be a non-empty list of hourly units"),
    ([[1.0, 2.0]], "demand must be a non-empty list of hourly units"),
    ([1.0, 2.0, float("nan")], "demand at hour 2 is nan; units must be finite and >= 0"),
    ([1.0, -1.0, -2.0], "demand at hour 1 is -1.0; units must be finite and >= 0"),
    ([float("inf")], "demand at hour 0 is inf; units must be finite and >= 0"),
])
def test_bad_demand_is_refused_naming_the_hour(demand, message):
    with pytest.raises(InputError) as caught:
        cost_mix(demand, OPTIONS, UNITS)
    assert caught.value.message == message
    with pytest.raises(InputError):
        optimize_mix(demand, OPTIONS)


@pytest.mark.parametrize("weights", [[1.0, 1.0], [1.0, 1.0, float("inf")], [1.0, -0.5, 1.0], [0.0, 0.0, 0.0],
                                     [1.0, float("nan"), 1.0]])
def test_bad_weights_are_refused(weights):
    with pytest.raises(InputError) as caught:
        as_demand([1.0, 2.0, 3.0], weights)
    assert caught.value.message == "weights must be one finite non-negative number per hour, not all zero"


def test_good_inputs_pass_through_as_floats():
    values, weights = as_demand([0, 2, 3], [0, 1, 2])
    assert values.tolist() == [0.0, 2.0, 3.0] and weights.tolist() == [0.0, 1.0, 2.0]
    assert values.dtype == np.float64 and weights.dtype == np.float64
    assert as_demand([4])[1].tolist() == [1.0]


def test_a_demand_and_weights_given_as_decimals():
    """Decimal unit counts (as a spreadsheet or a bill gives them) are read as numbers."""
    result = cost_mix([Decimal(d) for d in ("0", "1.5", "3", "5", "8", "16")], OPTIONS, UNITS,
                      weights=[Decimal(1)] * 5 + [Decimal(2)])
    assert result.total_cost.amount == 295 and result.hours == 7.0


def test_units_for_what_cannot_be_bought_are_refused():
    with pytest.raises(InputError) as caught:
        cost_mix(DEMAND, OPTIONS, {"ri": 1, "spot": 1, "nope": 2})
    assert caught.value.message == "units given for ['nope', 'spot'], which are not committed options"
    with pytest.raises(InputError) as caught:
        cost_mix(DEMAND, OPTIONS, {"ri": 1, "own": -1})
    assert caught.value.message == "negative units for 'own'"


def test_a_fractional_weight_horizon_is_rounded_up_for_terms():
    """Weights summing to 1.5 hours admit a 2-hour term (the horizon rounds up), not a 3-hour one."""
    termed = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6), term_hours=2)]
    assert cost_mix([1.0, 1.0], termed, {"ri": 1}, weights=[1.0, 0.5]).total_cost.amount == Decimal("9.0")
    with pytest.raises(InputError, match="term of 3 hours"):
        cost_mix([1.0, 1.0], [termed[0], MixOption("ri", "reserved", Decimal(6), term_hours=3)], {},
                 weights=[1.0, 0.5])


def test_money_is_in_the_options_currency():
    in_euros = [MixOption(o.name, o.kind, o.hourly_cost, currency="EUR", variable_cost=o.variable_cost,
                          upfront=o.upfront, max_share=o.max_share, max_units=o.max_units,
                          availability=o.availability) for o in OPTIONS]
    result = cost_mix(DEMAND, in_euros, UNITS)
    assert {o.name: (o.cost.currency, o.upfront.currency if o.upfront else None) for o in result.outcomes} == {
        "od-dear": ("EUR", None), "own": ("EUR", "EUR"), "spot-dear": ("EUR", None), "spot-b": ("EUR", None),
        "ri": ("EUR", "EUR"), "spot": ("EUR", None), "od": ("EUR", None)}
    assert str(result.total_cost) == "198.00 EUR" and str(result.upfront) == "200.00 EUR"
    assert result.on_demand_only_cost.currency == "EUR"


def test_a_term_longer_than_the_profile_is_refused_before_solving():
    termed = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6), term_hours=7)]
    with pytest.raises(InputError, match="has a term of 7 hours, longer than the 6-hour demand profile"):
        optimize_mix(DEMAND, termed)
    # 6.5 weighted hours round up to 7: the term fits. Layer 3 runs in 4.5 of 6.5 hours (> 0.6), layer 4 in 3.5
    assert optimize_mix(DEMAND, termed, weights=[1, 1, 1, 1, 1, 1.5]).units == {"ri": 3}
