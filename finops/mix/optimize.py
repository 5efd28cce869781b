"""``optimize_mix``: the cheapest whole-unit mix of committed and flexible options for one pool.

The units come from the exact duration-curve chain DP (:mod:`finops.mix.duration_curve`); the
reported costs are recomputed exactly from those units by hourly dispatch (:mod:`finops.mix.dispatch`).

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> demand = np.r_[np.full(6000, 8.0), np.full(2760, 20.0)]     # 8 units most hours, 20 in 2,760
>>> options = [MixOption("od", "on_demand", Decimal("6.88")), MixOption("ri-1y", "reserved", Decimal("4.30")),
...            MixOption("spot", "spot", Decimal("2.75"), max_share=0.3)]
>>> r = optimize_mix(demand, options)
>>> r.units, str(r.total_cost), str(r.savings)
({'ri-1y': 6}, '456,458.40 USD', '253,557.60 USD')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dispatch import as_demand, cost_mix
from .duration_curve import layer_values, solve_units
from .options import MixOption, check_options
from .result import MixResult

__all__ = ["optimize_mix"]


def optimize_mix(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption],
                 weights: Sequence[float] | np.ndarray | None = None) -> MixResult:
    """Whole committed units minimizing the total cost of serving ``demand`` (units per hour).

    ``weights`` (one per hour, default 1) turn the profile into an expectation, e.g. pooled scenarios.
    """
    values, w = as_demand(demand, weights)
    check_options(options, hours=int(np.ceil(w.sum())))
    units = solve_units(layer_values(values, w, options), options)
    return cost_mix(values, options, units, w)
