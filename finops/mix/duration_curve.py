"""The exact single-pool optimum: a stack of whole-unit layers on the load-duration curve.

Sort the hourly demand d_t (weights w_t, 1 for a plain profile) into its load-duration curve and
slice it into unit-high layers: layer m (between m-1 and m units) serves
E_m = sum_t w_t clip(d_t - (m-1), 0, 1) unit-hours. Committed capacity fills the bottom layers, so
the hourly cost of a mix is a sum over layers (the screening-curve method of power-system planning,
e.g. Stoft, *Power System Economics*, 2002, ch. 3-4):

* the flexible cost of the residual above level X is
  g(X) = sum_i q_i [A_{i-1}(X) - A_i(X)] + p A_n(X), with A_i(X) = sum_t w_t max(a_i,t - X, 0),
  a_0 = d and a_i = a_{i-1} - cap_i: spot tiers i in price order q_i, each capped each hour at
  availability x min(max_share x d_t, max_units), on-demand price p above them all. So layer m saves
  G_m = g(m-1) - g(m), which falls with m: the share of hours above a level shrinks as it rises.
* a committed unit of option k placed on layer m costs F_k + v_k E_m (F_k = hourly cost x hours,
  v_k its variable cost, e.g. power for owned servers).

A layer is worth committing when G_m > F_k + v_k E_m: for a zero-variable-cost reservation that is the
classic break-even rule "commit up to the level where the share of hours above it falls to
(reserved price / flexible price)". With several options, the cheapest assignment puts them in
increasing variable cost from the bottom (an exchange argument: (v_j - v_i)(E_m - E_m') >= 0), so
owned servers with a power cost sit above zero-variable-cost reservations. Caps (``max_units``) make
the choice of block sizes a chain dynamic programme over levels, one sliding-window minimum per
option: dp_k(L) = F_k L + v_k S_E(L) - S_G(L) + min_{L - cap_k <= J <= L} [dp_{k-1}(J) - F_k J - v_k S_E(J)
+ S_G(J)], with S_E, S_G the prefix sums of E and G. The result is the exact integer optimum of the
hourly model (``tests/mix`` checks it against HiGHS ``milp``).

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> demand = np.array([1.0, 2.0, 3.0, 4.0])       # share of hours above 1, 2, 3 units: 3/4, 2/4, 1/4
>>> od = MixOption("od", "on_demand", Decimal(10))
>>> ri = MixOption("ri", "reserved", Decimal(6))   # break-even ratio 6/10: commit while share > 0.6
>>> solve_units(layer_values(demand, None, [od, ri]), [od, ri])
{'ri': 2}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .options import MixOption

MAX_LAYERS = 2_000_000

__all__ = ["LayerValues", "area_above", "flexible_cost_curve", "flexible_tiers", "layer_values", "merit_order",
           "sliding_min", "solve_units"]


def area_above(values: np.ndarray, weights: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """A(L) = sum_t w_t max(values_t - L, 0) for every level L (the area of the duration curve above L).

    >>> area_above(np.array([3.0, 1.0]), np.ones(2), np.array([0, 1, 2, 3])).tolist()
    [4.0, 2.0, 1.0, 0.0]
    """
    order = np.argsort(values)
    values = values[order]
    # suffix sums over the sorted values, one past the end (no value above the top level): W_i and S_i
    top_weight = np.cumsum(np.append(weights[order], 0.0)[::-1])[::-1]
    top_area = np.cumsum(np.append(weights[order] * values, 0.0)[::-1])[::-1]
    first_above = np.searchsorted(values, levels)  # a value equal to L adds w (L - L) = 0 on either side
    return np.maximum(top_area[first_above] - levels * top_weight[first_above], 0.0)


def flexible_cost_curve(demand: np.ndarray, weights: np.ndarray, options: Sequence[MixOption],
                        levels: np.ndarray) -> np.ndarray:
    """g(L): cost of serving the demand above level L with spot tiers and on-demand (see module doc)."""
    on_demand = min(float(o.hourly_cost) for o in options if o.kind == "on_demand")
    below = area_above(demand, weights, levels)
    cost = np.zeros(len(levels))
    residual = demand
    for spot in flexible_tiers(options):
        residual = residual - spot.spot_capacity(demand)
        above = area_above(residual, weights, levels)
        cost += float(spot.hourly_cost) * (below - above)
        below = above
    return cost + on_demand * below


def flexible_tiers(options: Sequence[MixOption]) -> list[MixOption]:
    """Spot options cheaper than on-demand, cheapest first (dearer ones are never used)."""
    on_demand = min(o.hourly_cost for o in options if o.kind == "on_demand")
    return sorted((o for o in options if o.kind == "spot" and o.hourly_cost < on_demand),
                  key=lambda o: o.hourly_cost)


def merit_order(options: Sequence[MixOption]) -> list[MixOption]:
    """Committed options in dispatch order: lowest variable cost at the bottom, then cheapest fixed cost."""
    return sorted((o for o in options if o.committed), key=lambda o: (o.variable_cost, o.hourly_cost, o.name))


class LayerValues:
    """Per unit-high layer m = 1..M: energy E_m and flexible saving G_m, with prefix sums from level 0."""

    def __init__(self, demand: np.ndarray, weights: np.ndarray, options: Sequence[MixOption]) -> None:
        top = int(np.ceil(demand.max()))  # a profile has at least one hour (as_demand)
        if top > MAX_LAYERS:
            raise InputError(f"demand peaks at {top:,} units; the optimizer works in whole units up to "
                             f"{MAX_LAYERS:,}", hint="count demand in larger units (servers rather than GPUs)")
        levels = np.arange(top + 1)
        self.hours = float(weights.sum())
        self.area = area_above(demand, weights, levels)
        self.flexible = flexible_cost_curve(demand, weights, options, levels)
        self.prefix_energy = self.area[0] - self.area       # S_E(L)
        self.prefix_saving = self.flexible[0] - self.flexible  # S_G(L)

    @property
    def top(self) -> int:
        return len(self.area) - 1


def layer_values(demand: np.ndarray, weights: np.ndarray | None, options: Sequence[MixOption]) -> LayerValues:
    """Layer energies and savings for ``demand`` (float arrays, as :func:`~finops.mix.dispatch.as_demand`
    returns them; weights default to one per hour)."""
    return LayerValues(demand, np.ones(len(demand)) if weights is None else weights, options)


def sliding_min(values: np.ndarray, window: int) -> np.ndarray:
    """out[i] = min(values[max(0, i - window + 1) : i + 1]) in O(n) (van Herk / Gil-Werman blocks).

    >>> sliding_min(np.array([5.0, 3.0, 4.0, 1.0, 2.0]), 2).tolist()
    [5.0, 3.0, 3.0, 1.0, 1.0]
    """
    n = len(values)
    padded = np.concatenate([np.full(window - 1, np.inf), values])
    blocks = -(-len(padded) // window)
    padded = np.concatenate([padded, np.full(blocks * window - len(padded), np.inf)]).reshape(blocks, window)
    prefix = np.minimum.accumulate(padded, axis=1).ravel()
    suffix = np.minimum.accumulate(padded[:, ::-1], axis=1)[:, ::-1].ravel()
    return np.minimum(suffix[:n], prefix[window - 1:window - 1 + n])


def solve_units(layers: LayerValues, options: Sequence[MixOption]) -> dict[str, int]:
    """Whole units of each committed option minimizing the expected hourly cost (chain DP, exact) on the
    layers of a demand (:func:`layer_values`, with the hours' weights)."""
    committed = merit_order(options)
    levels = np.arange(layers.top + 1)
    best = np.where(levels == 0, 0.0, np.inf)
    history = []
    for option in committed:
        offset = (float(option.hourly_cost) * layers.hours * levels
                  + float(option.variable_cost) * layers.prefix_energy - layers.prefix_saving)
        cap = layers.top if option.max_units is None else min(option.max_units, layers.top)
        history.append((best, offset, cap))
        best = offset + sliding_min(best - offset, cap + 1)
    level = int(_near_min(best)[0])  # on a tie, the fewest units in all
    units: dict[str, int] = {}
    for option, (before, offset, cap) in zip(reversed(committed), reversed(history)):
        lowest = max(0, level - cap)
        window = before[lowest:level + 1] - offset[lowest:level + 1]
        start = lowest + int(_near_min(window)[-1])  # on a tie, the fewest units of this option
        units[option.name] = level - start
        level = start
    return {o.name: units[o.name] for o in options if o.committed}


def _near_min(values: np.ndarray) -> np.ndarray:
    """Indexes of the values within 1e-9 (relative) of the minimum: ties, whichever way rounding fell."""
    least = values.min()
    return np.flatnonzero(values <= least + 1e-9 * (1 + abs(least)))
