"""Uncertain demand: weighted scenarios solved exactly on the pooled duration curve, and stress tests.

The expected cost of a commitment under scenarios s with weights p_s (summing to 1) is
sum_s p_s cost_s(x) = fixed cost + sum over the pooled hours of p_s x the flexible cost of that hour,
so the expected-cost optimum is the single-pool optimum of all scenarios' hours laid side by side
with hour weights p_s: the same exact duration-curve DP, on the pooled curve. The conservative
alternative commits to the low scenario's optimum and reports its expected cost; a stress test
re-costs a chosen mix under demand x 0.7 and x 1.5 so finance sees the downside before signing.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> options = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
>>> base = np.full(100, 10.0)
>>> plan = plan_scenarios([Scenario("low", 0.3, base * 0.5), Scenario("base", 0.5, base),
...                        Scenario("high", 0.2, base * 1.5)], options)
>>> plan.expected.units, plan.commit_to_low.units   # 10 units run in 70 % of the outcomes > 60 %
({'ri': 10}, {'ri': 5})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .dispatch import as_demand, cost_mix
from .optimize import optimize_mix
from .options import MixOption
from .result import MixResult

__all__ = ["STRESS_FACTORS", "Scenario", "ScenarioPlan", "plan_scenarios", "stress_test"]

STRESS_FACTORS = (0.7, 1.5)


@dataclass(frozen=True)
class Scenario:
    """One demand outcome with its probability weight (weights are normalized to sum to 1)."""

    name: str
    weight: float
    demand: np.ndarray


@dataclass(frozen=True)
class ScenarioPlan:
    """The expected-cost optimum, the commit-to-low alternative (expected cost) and each under each scenario."""

    expected: MixResult
    commit_to_low: MixResult
    per_scenario: dict[str, dict[str, MixResult]]  # plan name -> scenario name -> result

    def to_dict(self) -> dict[str, object]:
        return {"expected": self.expected.to_dict(), "commit_to_low": self.commit_to_low.to_dict(),
                "per_scenario": {plan: {name: r.to_dict()["total_cost"] for name, r in rows.items()}
                                 for plan, rows in self.per_scenario.items()}}


def plan_scenarios(scenarios: Sequence[Scenario], options: Sequence[MixOption]) -> ScenarioPlan:
    """Solve the weighted scenarios exactly; the lowest-total scenario is "low"."""
    if not scenarios:
        raise InputError("no scenarios given")
    lengths = {len(s.demand) for s in scenarios}
    total_weight = sum(s.weight for s in scenarios)
    if len(lengths) != 1 or total_weight <= 0 or any(s.weight < 0 for s in scenarios):
        raise InputError("scenarios need profiles of the same length and non-negative weights, not all zero")
    pooled = np.concatenate([as_demand(s.demand)[0] for s in scenarios])
    weights = np.concatenate([np.full(len(s.demand), s.weight / total_weight) for s in scenarios])
    expected = optimize_mix(pooled, options, weights)
    low = min(scenarios, key=lambda s: float(np.sum(s.demand)))
    low_units = optimize_mix(low.demand, options).units
    commit_to_low = cost_mix(pooled, options, low_units, weights)
    per_scenario = {plan: {s.name: cost_mix(s.demand, options, units) for s in scenarios}
                    for plan, units in (("expected", expected.units), ("commit_to_low", low_units))}
    return ScenarioPlan(expected, commit_to_low, per_scenario)


def stress_test(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption], units: Mapping[str, int],
                factors: Sequence[float] = STRESS_FACTORS) -> dict[float, MixResult]:
    """The mix ``units`` re-costed with demand scaled by each factor (-30 % and +50 % by default).

    >>> from decimal import Decimal
    >>> options = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
    >>> {f: str(r.total_cost) for f, r in stress_test([10.0] * 10, options, {"ri": 10}).items()}
    {0.7: '600.00 USD', 1.5: '1,100.00 USD'}
    """
    values, _ = as_demand(demand)
    return {factor: cost_mix(values * factor, options, units) for factor in factors}
