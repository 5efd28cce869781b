"""Cost a given mix exactly: dispatch each hour in merit order, then price the unit-hours in Decimal.

Each hour, committed units serve from the bottom in increasing variable cost (zero-variable-cost
reservations first, owned servers with a power cost above them), then spot tiers cheapest first up to
their hourly cap, then on-demand takes the rest. Unit-hours are summed in floats (pairwise; they are
physics); money is ``Decimal``: the commitment per hour x hours + variable_cost x unit-hours for committed
options (:func:`finops.commitments.commitment_per_hour`: units x hourly_cost, for a savings plan the spend
``S`` that covers those units at its discounted rate), hourly_cost x unit-hours for flexible ones.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> od = MixOption("od", "on_demand", Decimal(10))
>>> ri = MixOption("ri", "reserved", Decimal(6))
>>> r = cost_mix(np.array([1.0, 2.0, 3.0, 4.0]), [od, ri], {"ri": 2})
>>> str(r.total_cost), str(r.on_demand_only_cost), r.utilization["ri"]
('78.00 USD', '100.00 USD', 0.875)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..commitments import commitment_per_hour
from ..errors import InputError
from ..money import Money, to_decimal
from .duration_curve import flexible_tiers, merit_order
from .options import MixOption, check_options
from .result import MixResult, OptionOutcome

__all__ = ["as_demand", "cheapest_on_demand", "cost_mix", "hourly_dispatch"]


def as_demand(demand: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """Validate an hourly profile (1-D, finite, >= 0, not empty) and its weights (default 1 per hour)."""
    values = np.asarray(demand, dtype=float)
    if values.ndim != 1 or len(values) == 0:
        raise InputError("demand must be a non-empty list of hourly units")
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if len(bad):
        raise InputError(f"demand at hour {int(bad[0])} is {float(values[bad[0]])!r}; units must be finite and >= 0")
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != values.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError("weights must be one finite non-negative number per hour, not all zero")
    return values, w


def cost_mix(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption], units: Mapping[str, int],
             weights: Sequence[float] | np.ndarray | None = None) -> MixResult:
    """The exact cost and usage of buying ``units`` of each committed option (missing names = 0)."""
    values, w = as_demand(demand, weights)
    hours = float(np.sum(w))
    currency = check_options(options, hours=math.ceil(hours))
    unknown = set(units) - {o.name for o in options if o.committed}
    if unknown:
        raise InputError(f"units given for {sorted(unknown)}, which are not committed options")
    hours_paid = to_decimal(hours)
    for name, count in units.items():  # every name here is a committed option (checked above)
        if int(count) < 0:
            raise InputError(f"negative units for {name!r}")
    served = {name: float(np.sum(w * amount)) for name, amount in hourly_dispatch(values, options, units).items()}

    outcomes = []
    for option in options:
        energy = served.get(option.name, 0.0)
        if option.committed:
            count = int(units.get(option.name, 0))
            per_hour = commitment_per_hour(option.kind, count, Money(option.hourly_cost, currency))
            cost = per_hour * hours_paid + Money(option.variable_cost, currency) * to_decimal(energy)
            outcomes.append(OptionOutcome(option.name, option.kind, count, energy, cost,
                                          Money(option.upfront, currency) * count, per_hour))
        else:
            outcomes.append(OptionOutcome(option.name, option.kind, None, energy,
                                          Money(option.hourly_cost, currency) * to_decimal(energy)))
    demand_unit_hours = float(np.sum(w * values))
    on_demand = cheapest_on_demand(options)
    return MixResult(currency, hours, demand_unit_hours, tuple(outcomes),
                     Money(on_demand.hourly_cost, currency) * to_decimal(demand_unit_hours))


def cheapest_on_demand(options: Sequence[MixOption]) -> MixOption:
    """The on-demand option that serves what nothing else covers."""
    return min((o for o in options if o.kind == "on_demand"), key=lambda o: o.hourly_cost)


def hourly_dispatch(values: np.ndarray, options: Sequence[MixOption], units: Mapping[str, int]
                    ) -> dict[str, np.ndarray]:
    """Unit-hours each option serves in each hour: committed units bottom-up in merit order, then spot
    tiers cheapest first up to their caps, then the cheapest on-demand option."""
    served: dict[str, np.ndarray] = {}
    level = np.zeros(len(values))
    for option in merit_order(options):
        count = int(units.get(option.name, 0))
        served[option.name] = np.clip(values - level, 0.0, count)
        level = level + count
    residual = np.maximum(values - level, 0.0)
    for spot in flexible_tiers(options):
        served[spot.name] = np.minimum(residual, spot.spot_capacity(values))
        residual = residual - served[spot.name]
    served[cheapest_on_demand(options).name] = residual
    return served
