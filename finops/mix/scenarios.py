"""Uncertain demand: weighted scenarios solved exactly on the pooled duration curve, and stress tests.

The expected cost of a commitment under scenarios s with weights p_s (summing to 1) is
sum_s p_s cost_s(x) = fixed cost + sum over the pooled hours of p_s x the flexible cost of that hour,
so the expected-cost optimum is the single-pool optimum of all scenarios' hours laid side by side
with hour weights p_s: the same exact duration-curve DP, on the pooled curve. The conservative
alternative commits to the low scenario's optimum and reports its expected cost; a stress test
re-costs a chosen mix under demand x 0.7 and x 1.5 so finance sees the downside before signing.

Weights are probabilities: each a finite number of 0 or more, together summing to 1. Weights that sum to
anything else are refused with their sum, never scaled to fit: 0.5/0.3/0.3 is a typing error, and scaling
it would price a plan on outcomes nobody chose. :func:`probabilities` reads typed weights (fractions
summing to 1, or percentages summing to 100) at the edge.

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from ..errors import InputError
from .dispatch import as_demand, cost_mix
from .optimize import optimize_mix
from .options import MixOption
from .result import MixResult

__all__ = ["STRESS_FACTORS", "Scenario", "ScenarioPlan", "plan_scenarios", "probabilities", "stress_test"]

STRESS_FACTORS = (0.7, 1.5)


@dataclass(frozen=True)
class Scenario:
    """One demand outcome with its probability weight (the weights of a plan sum to 1)."""

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
    if len({len(s.demand) for s in scenarios}) != 1:
        raise InputError("scenarios need demand profiles of the same length: "
                         + ", ".join(f"{s.name} {len(s.demand)} hours" for s in scenarios))
    _check_probabilities(scenarios)
    pooled = np.concatenate([as_demand(s.demand)[0] for s in scenarios])
    weights = np.concatenate([np.full(len(s.demand), s.weight) for s in scenarios])
    expected = optimize_mix(pooled, options, weights)
    low = min(scenarios, key=lambda s: float(np.sum(s.demand)))
    low_units = optimize_mix(low.demand, options).units
    commit_to_low = cost_mix(pooled, options, low_units, weights)
    per_scenario = {plan: {s.name: cost_mix(s.demand, options, units) for s in scenarios}
                    for plan, units in (("expected", expected.units), ("commit_to_low", low_units))}
    return ScenarioPlan(expected, commit_to_low, per_scenario)


#: How far from 1 a sum of float weights may land by rounding alone (2/3 + 1/3, 0.1 + 0.2 + 0.7).
_ROUNDING = 1e-9


def _check_probabilities(scenarios: Sequence[Scenario]) -> None:
    """Refuse weights that are not probabilities: NaN, infinite or negative, or not summing to 1."""
    shown = ", ".join(f"{s.name} {s.weight:g}" for s in scenarios)
    if not all(math.isfinite(s.weight) and s.weight >= 0 for s in scenarios):
        raise InputError(f"scenario weights must be numbers of 0 or more: {shown}",
                         hint="give each scenario its probability, the weights summing to 1")
    total = math.fsum(s.weight for s in scenarios)
    if abs(total - 1) > _ROUNDING:
        raise InputError(f"scenario weights must sum to 1: {shown} sum to {total:g}",
                         hint="give each scenario its probability, e.g. 0.25, 0.5, 0.25")


def probabilities(typed: Sequence[str], where: str) -> list[float]:
    """Typed weights as probabilities: fractions summing to exactly 1, or percentages summing to exactly 100
    (each may end in ``%``, which then every one must); anything else is refused naming ``where`` and the sum.
    The sum is exact (decimal), so 0.1, 0.2, 0.7 sums to 1 and 0.333 three times to 0.999, refused.

    >>> probabilities(["0.25", "0.5", "0.25"], "--weights"), probabilities(["20%", "50%", "30%"], "--weights")
    ([0.25, 0.5, 0.25], [0.2, 0.5, 0.3])
    >>> probabilities(["0.5", "0.3", "0.3"], "--weights")
    Traceback (most recent call last):
    finops.errors.InputError: --weights 0.5, 0.3, 0.3 sum to 1.1, not 1 (nor 100 as percentages). Hint: ...
    """
    texts = [text.strip() for text in typed]
    percent = [text.endswith("%") for text in texts]
    hint = "weights of the scenarios summing to 1 (0.25,0.5,0.25) or to 100 as percentages (25,50,25)"
    shown = ", ".join(texts)
    if any(percent) and not all(percent):
        raise InputError(f"{where} {shown}: either every weight is a percentage or none is", hint=hint)
    values: list[Decimal] = []
    for text in texts:
        try:
            value = Decimal(text.removesuffix("%").strip())
        except ArithmeticError:
            value = Decimal("NaN")
        if not value.is_finite() or value < 0:
            raise InputError(f"{where} {shown}: a weight must be a number of 0 or more, got {text!r}", hint=hint)
        values.append(value)
    total = sum(values, Decimal(0))
    if total == 100:
        return [float(value / 100) for value in values]
    if total == 1 and not any(percent):
        return [float(value) for value in values]
    wanted = "100" if any(percent) else "1 (nor 100 as percentages)"
    written = f"{total:f}" if abs(total.adjusted()) < 16 else f"{total.normalize():g}"  # 1e400, not 401 digits
    raise InputError(f"{where} {shown} sum to {written}, not {wanted}", hint=hint)


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
