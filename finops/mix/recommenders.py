"""What users get today: the cloud recommenders' rules, replayed on the same profile and costed in full.

* **AWS Cost Explorer** (reservation and Savings Plans recommendations) looks back 7, 30 or 60 days
  over on-demand usage and recommends the commitment that would have saved the most over that window
  (AWS Cost Management user guide, "Accessing Reserved Instance recommendations" and "Savings Plans
  recommendations"). Replayed here: the exact optimum over the first ``days`` of the profile using
  only the cloud commitments (reserved, savings plan) against on-demand.
* **GCP** committed-use discount recommendations commit to the stable minimum of the last 30 days
  (Google Cloud docs, "Committed use discount recommendations"). Replayed here: the floor of the
  minimum hourly demand over the first 30 days, placed in the cheapest cloud commitment (respecting
  ``max_units``, then the next cheapest).

The recommender sees the window at the start of the profile, as if it ran on the day of purchase;
each recommendation is then costed over the whole horizon with the same dispatch as ours. On a
growing profile both windows see the lowest demand of the horizon, so they under-commit.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> growing = np.linspace(10, 30, 8760)
>>> options = [MixOption("od", "on_demand", Decimal(10)), MixOption("ri", "reserved", Decimal(6))]
>>> [(r.name, r.units["ri"]) for r in compare_recommenders(growing, options)]
[('ours', 18), ('aws-7d', 10), ('aws-30d', 11), ('aws-60d', 11), ('gcp-30d', 10)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..money import Money
from .dispatch import as_demand, cost_mix
from .optimize import optimize_mix
from .options import MixOption
from .result import MixResult

__all__ = ["RECOMMENDERS", "Recommendation", "aws_lookback_units", "compare_recommenders", "gcp_stable_units",
           "recommenders_for"]

_CLOUD_COMMITMENTS = ("reserved", "savings_plan", "cud")
#: name -> (rule, lookback days)
RECOMMENDERS: dict[str, tuple[str, int]] = {
    "aws-7d": ("aws", 7), "aws-30d": ("aws", 30), "aws-60d": ("aws", 60), "gcp-30d": ("gcp", 30)}


@dataclass(frozen=True)
class Recommendation:
    """A rule's units and their cost over the whole horizon; ``extra_cost`` is against ours."""

    name: str
    units: dict[str, int]
    result: MixResult
    extra_cost: Money

    def to_dict(self) -> dict[str, object]:
        summary = self.result.to_dict()
        return {"name": self.name, "units": self.units, "total_cost": summary["total_cost"],
                "extra_cost": self.extra_cost.rounded().amount,
                "savings": summary["savings"]}


def aws_lookback_units(demand: np.ndarray, options: Sequence[MixOption], days: int) -> dict[str, int]:
    """Units AWS Cost Explorer would recommend from the first ``days`` of on-demand usage."""
    window = demand[: days * 24]
    # the window is shorter than the terms: the rule extrapolates it, so terms are not checked against it
    cloud = [replace(o, term_hours=None) for o in options if o.kind == "on_demand" or o.kind in _CLOUD_COMMITMENTS]
    return optimize_mix(window, cloud).units  # {} when the cloud sells no commitment here


def gcp_stable_units(demand: np.ndarray, options: Sequence[MixOption], days: int) -> dict[str, int]:
    """Units GCP would recommend: the floor of the minimum hourly demand of the first ``days`` days."""
    stable = int(np.floor(demand[: days * 24].min()))
    units: dict[str, int] = {}
    for option in sorted((o for o in options if o.kind in _CLOUD_COMMITMENTS), key=lambda o: o.hourly_cost):
        take = stable if option.max_units is None else min(stable, option.max_units)
        units[option.name] = take
        stable -= take
    return units


def recommenders_for(provider: str | None) -> tuple[str, ...]:
    """The recommender rules of one provider's demand (``None``: every rule, the provider unknown).

    >>> recommenders_for("gcp"), recommenders_for("AWS")
    (('gcp-30d',), ('aws-7d', 'aws-30d', 'aws-60d'))
    """
    return tuple(name for name, (rule, _) in RECOMMENDERS.items() if provider is None or rule == provider.lower())


def compare_recommenders(demand: Sequence[float] | np.ndarray, options: Sequence[MixOption],
                         names: Sequence[str] = tuple(RECOMMENDERS)) -> list[Recommendation]:
    """Our optimum first, then each recommender's units costed over the whole profile."""
    values, _ = as_demand(demand)
    ours = optimize_mix(values, options)
    rows = [Recommendation("ours", ours.units, ours, Money.zero(ours.currency))]
    for name in names:
        rule, days = RECOMMENDERS[name]
        picked = aws_lookback_units(values, options, days) if rule == "aws" else gcp_stable_units(values, options, days)
        units = {o.name: picked.get(o.name, 0) for o in options if o.committed}
        result = cost_mix(values, options, units)
        rows.append(Recommendation(name, units, result, result.total_cost - ours.total_cost))
    return rows
