"""The load-shaping lever through the mix, on a square day worked by hand."""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import InputError
from finops.mix import MixOption
from finops.mix.levers import load_shaping

OPTIONS = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
# a week of days at 2 units for 12 hours and 10 for 12: reserve 2 (layers 3-10 run half the time < 60 %)
WEEK = np.tile(np.r_[np.full(12, 2.0), np.full(12, 10.0)], 7)


def test_moving_batch_work_off_peak_saves_what_the_flatter_curve_allows():
    """Share 0.3 keeps 1.4 and 7 units and fills the night with 0.3 x 144 = 43.2 unit-hours: 12 (L - 1.4)
    = 43.2 -> L = 5 (below 7). Reserve 5: 5 x 6 x 168 = 5,040 plus 2 units x 84 h x 10 on-demand = 6,720;
    before: 2 x 6 x 168 = 2,016 plus 8 x 84 x 10 = 8,736."""
    effect = load_shaping(WEEK, OPTIONS, 0.3)
    assert effect.before.units == {"ri": 2} and effect.after.units == {"ri": 5}
    assert effect.before.total_cost.amount == 8736 and effect.after.total_cost.amount == Decimal("6720.0")
    assert effect.saved.amount == Decimal("2016.0")
    assert effect.to_dict() == {"batch_share": 0.3, "units_before": {"ri": 2}, "units_after": {"ri": 5},
                                "cost_before": Decimal("8736.00"), "cost_after": Decimal("6720.00"),
                                "saved": Decimal("2016.00")}


def test_no_shaping_saves_nothing():
    effect = load_shaping(WEEK, OPTIONS, 0.0)
    assert effect.before == effect.after and effect.saved.amount == 0


@pytest.mark.parametrize("share", [1.0, -0.1, 1.5])
def test_a_share_outside_0_to_1_is_refused(share):
    with pytest.raises(InputError) as caught:
        load_shaping(WEEK, OPTIONS, share)
    assert caught.value.message == f"batch share must be in [0, 1), got {share}"
