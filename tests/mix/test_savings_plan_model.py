"""A savings plan is one model everywhere (finops.commitments): a spend commitment S per hour, covering
S / r units each hour at its discounted rate r, the rest on demand, unused S paid.

The figures are worked by hand from that definition, not from the optimizers.
"""

from decimal import Decimal

import numpy as np

from finops.commitments import spend_commitment_cost
from finops.mix import MixOption, optimize_mix
from finops.mix.lp import Pool, optimize_pools
from finops.money import Money
from finops.price_book import PriceRow
from finops.tco import compare_options

OD, SP = MixOption("od", "on_demand", Decimal(10)), MixOption("sp", "savings_plan", Decimal(6))
DEMAND = np.array([1.0, 2.0, 3.0, 4.0])   # share of hours above 1, 2, 3 units: 3/4, 2/4, 1/4


def usd(x) -> Money:
    return Money.of(x, "USD")


def test_the_single_pool_mix_buys_spend_and_says_how_much():
    """Break-even 6 / 10: commit while the share of hours above the level exceeds 0.6, so 2 units' worth,
    S = 2 x 6 = 12 per hour. Cost: 12 x 4 hours + on-demand above 2 units (1 + 2 unit-hours) x 10 = 78."""
    result = optimize_mix(DEMAND, [OD, SP])
    sp = next(o for o in result.outcomes if o.name == "sp")
    assert sp.commitment_per_hour == usd(12)
    assert result.total_cost == usd(78)
    assert result.to_dict()["options"][1]["commitment_per_hour"] == Decimal("12.000")
    # the same S through the one cost function of a spend commitment
    assert spend_commitment_cost(list(DEMAND), usd(12), usd(6), usd(10)).cost == usd(78)


def test_a_pools_savings_plan_option_is_the_shared_plans_rate():
    """Two pools, each with a savings plan option at 6: one plan S covers pool a by day and b by night.
    S = 24 per hour covers 4 units at 6 in either hour: 2 hours x 24 = 48, against 80 all on demand."""
    pools = [Pool("a", np.array([4.0, 0.0]), (OD, SP)), Pool("b", np.array([0.0, 4.0]), (OD, SP))]
    result = optimize_pools(pools, shared_plan=True)
    assert (result.plan_per_hour, result.total_cost, result.on_demand_only_cost) == (Decimal("24.000"), usd(48),
                                                                                       usd(80))
    assert result.units == {"a": {}, "b": {}}      # a spend commitment buys no units per pool


def test_one_pool_under_a_shared_plan_costs_what_the_single_pool_mix_does():
    """Whole-unit demand: the plan's best S is a whole number of units' rate, so both answers agree (78)."""
    pooled = optimize_pools([Pool("a", DEMAND, (OD, SP))], shared_plan=True)
    assert (pooled.plan_per_hour, pooled.total_cost) == (Decimal("12.000"), optimize_mix(DEMAND, [OD, SP]).total_cost)


def test_tco_commits_the_fleets_spend():
    """16 GPUs on two 8-GPU instances at a 3-year plan's 4.30 per GPU-hour: S = 16 x 4.30 = 68.80 per hour,
    a month 68.80 x 730 = 50,224, charged the whole 36-month term on a 12-month horizon (1,808,064)."""
    row = PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, "savings_plan_3y", "no_upfront",
                   Decimal("34.40"), Decimal(0), "USD", "2026-07-01", "example")
    option = compare_options(16, 12, None, [row]).options[0]
    assert (option.kind, option.monthly, option.total) == ("savings_plan", usd("50224"), usd("1808064"))
