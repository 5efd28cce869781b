"""The load-shaping lever seen through the mix: what moving batch work off-peak saves, hour by hour.

``finops.tco.levers.load_shaping`` prices a fleet sized for its peak. With a commitment mix the
saving is different: shifting a share of each day's work into the night valleys (seed 000) flattens
the load-duration curve, so more of it is worth committing and less is bought on-demand at the
peak. Both sides are exact mix optima; the lever is the difference.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> day = np.r_[np.full(12, 2.0), np.full(12, 10.0)]
>>> options = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
>>> shaped = load_shaping(np.tile(day, 7), options, batch_share=0.3)
>>> shaped.before.units, shaped.after.units, str(shaped.saved)
({'ri': 2}, {'ri': 5}, '2,016.00 USD')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..money import Money
from .dispatch import as_demand
from .optimize import optimize_mix
from .options import MixOption
from .profile import shift_batch_off_peak
from .result import MixResult

__all__ = ["ShapingEffect", "load_shaping"]


@dataclass(frozen=True)
class ShapingEffect:
    """The optimal mix before and after shaping, and the money saved over the profile."""

    batch_share: float
    before: MixResult
    after: MixResult

    @property
    def saved(self) -> Money:
        return self.before.total_cost - self.after.total_cost

    def to_dict(self) -> dict[str, object]:
        return {"batch_share": self.batch_share, "units_before": self.before.units, "units_after": self.after.units,
                "cost_before": self.before.to_dict()["total_cost"], "cost_after": self.after.to_dict()["total_cost"],
                "saved": self.saved.rounded().amount}


def load_shaping(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption], batch_share: float
                 ) -> ShapingEffect:
    """Optimal mixes for ``demand`` and for it with ``batch_share`` of each day's work moved off-peak."""
    if not 0 <= batch_share < 1:
        raise InputError(f"batch share must be in [0, 1), got {batch_share}")
    values, _ = as_demand(demand)
    return ShapingEffect(batch_share, optimize_mix(values, options),
                         optimize_mix(shift_batch_off_peak(values, batch_share), options))
