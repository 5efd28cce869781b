"""The cloud recommender rules on a 60-day profile whose windows are worked by hand.

Hours 0-167 (the first 7 days) run 3 units, hours 168-719 (to day 30) 10 units, hours 720-1439 1 unit.
On-demand 10; a savings plan at 0.2 capped at 2 units and a reservation at 0.3 (break-even share 3 %);
owned servers at 0.1 (not a cloud offer, so no recommender sees them).
"""

from decimal import Decimal

import numpy as np
import pytest

from finops.mix import MixOption
from finops.mix.recommenders import (
    RECOMMENDERS,
    aws_lookback_units,
    compare_recommenders,
    gcp_stable_units,
    recommenders_for,
)

DEMAND = np.r_[np.full(168, 3.0), np.full(552, 10.0), np.full(720, 1.0)]
OD = MixOption("od", "on_demand", Decimal(10))
SP = MixOption("sp", "savings_plan", Decimal("0.2"), max_units=2, term_hours=8760)
RI = MixOption("ri", "reserved", Decimal("0.3"), term_hours=8760)
OWN = MixOption("own", "owned", Decimal("0.1"))
OPTIONS = [OD, OWN, RI, SP]             # 1-year terms: the lookback extrapolates its window past them
HORIZON = [OD, OWN, MixOption("ri", "reserved", Decimal("0.3")), MixOption("sp", "savings_plan", Decimal("0.2"),
                                                                       max_units=2)]


def test_aws_looks_back_over_its_window_only():
    # 7 days: 3 units all the time -> sp 2 (its cap) and ri 1. One hour more would see the 10-unit hours
    # (used 1 / 169 > 0.3 / 10 of the window) and commit to them.
    assert aws_lookback_units(DEMAND, OPTIONS, 7) == {"ri": 1, "sp": 2}
    # 30 days: 10 units in 552 of 720 hours; 60 days: 10 units in 552 of 1440 (38 % > 3 %)
    assert aws_lookback_units(DEMAND, OPTIONS, 30) == {"ri": 8, "sp": 2}
    assert aws_lookback_units(DEMAND, OPTIONS, 60) == {"ri": 8, "sp": 2}
    assert aws_lookback_units(DEMAND, [OD, OWN], 7) == {}                     # nothing the cloud sells


def test_gcp_commits_to_the_floor_of_the_windows_minimum_cheapest_first():
    assert gcp_stable_units(DEMAND, OPTIONS, 30) == {"sp": 2, "ri": 1}            # min 3 over 30 days
    assert gcp_stable_units(DEMAND, OPTIONS, days=31) == {"sp": 1, "ri": 0}   # day 31 runs 1 unit
    assert gcp_stable_units(DEMAND + 0.9, [OD, RI], 30) == {"ri": 3}              # floor of 3.9
    assert gcp_stable_units(DEMAND, [OD, OWN], 30) == {}


def test_the_comparison_costs_each_rule_over_the_whole_horizon():
    rows = {r.name: r for r in compare_recommenders(DEMAND, HORIZON)}
    assert list(rows) == ["ours", "aws-7d", "aws-30d", "aws-60d", "gcp-30d"]
    ours = rows["ours"]
    assert ours.units == {"own": 10, "ri": 0, "sp": 0} and ours.result.total_cost.amount == 10 * Decimal("0.1") * 1440
    assert ours.extra_cost.amount == 0 and ours.extra_cost.currency == "USD"
    # aws-7d and gcp-30d: sp 2 x 0.2 x 1440 + ri 1 x 0.3 x 1440 + the 7 units above 3 in 552 hours x 10
    for name in ("aws-7d", "gcp-30d"):
        assert rows[name].units == {"own": 0, "ri": 1, "sp": 2}
        assert rows[name].result.total_cost.amount == 576 + 432 + 38640
        assert rows[name].extra_cost.amount == 576 + 432 + 38640 - 1440
    # aws-30d: sp 576 + ri 8 x 0.3 x 1440, nothing on-demand
    assert rows["aws-30d"].result.total_cost.amount == 576 + 3456
    assert rows["aws-30d"].to_dict() == {"name": "aws-30d", "units": {"own": 0, "ri": 8, "sp": 2},
                                         "total_cost": Decimal("4032.00"), "extra_cost": Decimal("2592.00"),
                                         "savings": Decimal("63408.00")}   # 10 x (504 + 5,520 + 720) on-demand only


def test_a_chosen_set_of_rules():
    rows = compare_recommenders(DEMAND, HORIZON, names=("gcp-30d",))
    assert [r.name for r in rows] == ["ours", "gcp-30d"]


def test_extra_cost_is_rounded_to_cents():
    ri = MixOption("ri", "reserved", Decimal("0.3333"))
    rows = {r.name: r for r in compare_recommenders(DEMAND, [OD, ri], names=("aws-7d",))}
    extra = rows["aws-7d"].result.total_cost.amount - rows["ours"].result.total_cost.amount
    assert rows["aws-7d"].to_dict()["extra_cost"] == extra.quantize(Decimal("0.01"))
    assert rows["aws-7d"].to_dict()["extra_cost"] != extra


@pytest.mark.parametrize("provider, names", [
    ("gcp", ("gcp-30d",)), ("GCP", ("gcp-30d",)), ("aws", ("aws-7d", "aws-30d", "aws-60d")),
    (None, ("aws-7d", "aws-30d", "aws-60d", "gcp-30d")), ("azure", ()),
])
def test_rules_per_provider(provider, names):
    assert recommenders_for(provider) == names


def test_the_rule_table():
    assert RECOMMENDERS == {"aws-7d": ("aws", 7), "aws-30d": ("aws", 30), "aws-60d": ("aws", 60),
                            "gcp-30d": ("gcp", 30)}
