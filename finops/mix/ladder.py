"""Multi-year terms on growing demand: a staggered ladder of 1-year and 3-year commitments.

Cut the profile into months (730 hours) and the demand into unit-high layers. In month t, layer m
served flexibly costs G_t,m (its flexible saving, see :mod:`finops.mix.duration_curve`); a tranche of
option j bought in month t covers the layer for its whole term L_j at price c_j x hours. With
zero-variable-cost, uncapped commitments the layers are independent, so each layer's cheapest plan is
a shortest path over months: dp_m(t) = min(G_t,m + dp_m(t+1), min_j [c_j x hours(t .. t+L_j-1) +
dp_m(t + L_j)]). This is the ladder rule: a 3-year layer is worth it when its value over its whole
term, each year capped by what a 1-year tranche would cost, exceeds its price; on growing demand it
puts fewer 3-year units under the base than this year's optimum would, and adds tranches as the
demand rises. Months after the profile are assumed to repeat its last month (demand flat after the
horizon); each month there is worth to a layer what it would then cost (its flexible cost, at most the
cheapest term's monthly price), so a tranche bought near the end is judged on its whole term; what
it still owes after the horizon is reported as ``outstanding``.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> demand = np.repeat([10.0, 20.0, 30.0], 8760)           # three years, +10 units a year
>>> options = [MixOption("od", "on_demand", Decimal(10)), MixOption("1y", "reserved", Decimal(6), term_hours=8760),
...            MixOption("3y", "reserved", Decimal("3.5"), term_hours=26280)]
>>> plan = plan_ladder(demand, options)
>>> {name: [m for m, n in enumerate(bought) if n] for name, bought in plan.purchases.items()}
{'1y': [], '3y': [0, 12, 24]}
>>> plan.active["3y"][0], plan.active["3y"][35]
(10, 30)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from ..money import Money, quantize
from .dispatch import as_demand, cost_mix
from .duration_curve import layer_values
from .options import MixOption, check_options
from .result import HOURS_PER_MONTH

__all__ = ["LadderPlan", "plan_ladder"]


@dataclass(frozen=True)
class LadderPlan:
    """Units bought and active per committed option and month, with the horizon's exact cost."""

    months: int
    purchases: dict[str, list[int]]
    active: dict[str, list[int]]
    monthly_cost: list[Money]
    on_demand_only_cost: Money
    outstanding: Money

    @property
    def total_cost(self) -> Money:
        return Money.total(self.monthly_cost, self.on_demand_only_cost.currency)

    @property
    def savings(self) -> Money:
        return self.on_demand_only_cost - self.total_cost

    def to_dict(self) -> dict[str, object]:
        return {"months": self.months, "purchases": self.purchases, "active": self.active,
                "monthly_cost": [quantize(m.amount) for m in self.monthly_cost],
                "total_cost": quantize(self.total_cost.amount),
                "on_demand_only_cost": quantize(self.on_demand_only_cost.amount),
                "savings": quantize(self.savings.amount), "outstanding": quantize(self.outstanding.amount),
                "currency": self.on_demand_only_cost.currency}


def plan_ladder(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption],
                month_hours: int = HOURS_PER_MONTH) -> LadderPlan:
    """The cheapest staggered ladder of term commitments for ``demand`` (exact per unit layer)."""
    values, _ = as_demand(demand)
    currency = check_options(options, hours=sys.maxsize)
    committed = [o for o in options if o.committed]
    for option in committed:
        if option.term_hours is None or option.variable_cost or option.max_units is not None:
            raise InputError(f"option {option.name!r}: the ladder needs term_hours and no variable_cost or "
                             "max_units on committed options", where=option.origin,
                             hint="give each commitment its term; use optimize_mix for owned or capped options")
    months = math.ceil(len(values) / month_hours)
    terms = [math.ceil(o.term_hours / month_hours) for o in committed]  # type: ignore[operator]
    top = int(np.ceil(values.max()))
    saving, hours = _monthly_layers(values, options, months, month_hours, top)
    cumulative = np.concatenate([[0.0], np.cumsum(hours)])
    # a month after the horizon is worth to a layer what it would cost then: flexible, or the cheapest term
    cheapest_month = min((float(o.hourly_cost) for o in committed), default=np.inf) * month_hours
    tail_value = np.minimum(saving[-1] * month_hours / hours[-1], cheapest_month)

    # each layer's cheapest plan from month t on, from the last month back. Candidate 0 serves month t
    # flexibly, candidate j + 1 buys a tranche of option j there; a tranche must be cheaper by 1e-9 (a tie
    # stays flexible, and of two tied options the first is bought)
    lead = np.r_[0.0, np.full(len(committed), 1e-9)][:, None]
    layers = np.arange(top)
    best = {months: np.zeros(top)}
    choice: dict[int, np.ndarray] = {}
    for t in reversed(range(months)):
        candidates = [saving[t] + best[t + 1]]
        for option, term in zip(committed, terms):
            end = min(t + term, months)
            price = float(option.hourly_cost)
            candidates.append(price * (cumulative[end] - cumulative[t]) + best[end]
                              + (t + term - end) * (price * month_hours - tail_value))
        costs = np.array(candidates)
        choice[t] = np.argmin(costs + lead, axis=0)
        best[t] = costs[choice[t], layers]

    purchases = np.zeros((len(committed), months), dtype=int)
    active = np.zeros((len(committed), months), dtype=int)
    free_from = np.zeros(top)  # the month each layer's last tranche ends
    for t in range(months):
        for j, term in enumerate(terms):
            starting = (free_from <= t) & (choice[t] == j + 1)
            count = int(starting.sum())
            if count:
                purchases[j, t] = count
                active[j, t:t + term] += count
                free_from[starting] = t + term
    return _costed(values, options, committed, purchases, active, months, month_hours, currency)


def _monthly_layers(values: np.ndarray, options: Sequence[MixOption], months: int, month_hours: int,
                    top: int) -> tuple[np.ndarray, np.ndarray]:
    """Flexible saving of each unit layer (columns) in each month (rows), and each month's hours."""
    saving = np.zeros((months, top))
    hours = np.zeros(months)
    for m in range(months):
        chunk = values[m * month_hours:(m + 1) * month_hours]
        layers = layer_values(np.append(chunk, float(top)), np.append(np.ones(len(chunk)), 0.0), options)
        saving[m] = np.diff(layers.prefix_saving)[:top]
        hours[m] = len(chunk)
    return saving, hours


def _costed(values: np.ndarray, options: Sequence[MixOption], committed: list[MixOption], purchases: np.ndarray,
            active: np.ndarray, months: int, month_hours: int, currency: str) -> LadderPlan:
    """Exact Decimal cost of each month from the active units; commitments owed after the horizon."""
    untermed = [replace(o, term_hours=None) for o in options]
    monthly, on_demand = [], Money.zero(currency)
    for m in range(months):
        chunk = values[m * month_hours:(m + 1) * month_hours]
        result = cost_mix(chunk, untermed, {o.name: int(active[j, m]) for j, o in enumerate(committed)})
        monthly.append(result.total_cost)
        on_demand = on_demand + result.on_demand_only_cost
    outstanding = Money.zero(currency)
    for j, option in enumerate(committed):
        started_inside = _owed_after(purchases[j], math.ceil(option.term_hours / month_hours), months)  # type: ignore[operator]
        outstanding = outstanding + Money(option.hourly_cost, currency) * (started_inside * month_hours)
    return LadderPlan(months, {o.name: purchases[j].tolist() for j, o in enumerate(committed)},
                      {o.name: active[j].tolist() for j, o in enumerate(committed)},
                      monthly, on_demand, outstanding)


def _owed_after(bought: np.ndarray, term: int, months: int) -> int:
    """Unit-months still to pay after the horizon for tranches bought inside it."""
    return int(sum(count * max(0, t + term - months) for t, count in enumerate(bought)))
