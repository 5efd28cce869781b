"""Commitments: the ways to buy capacity and what each commits you to, one model for the mix, TCO and
reconciliation.

Every purchase option has a kind (:data:`OptionKind`); the committed kinds are paid every hour of
their term, used or not, on one of two bases (:data:`BASIS`), the same two FOCUS names in
``CommitmentDiscountType``:

* **resource** (FOCUS ``Usage``; reserved instances, GCP resource-based CUDs, provisioned throughput,
  owned servers): commit ``n`` units; each hour pays ``n x committed_rate`` and covers up to ``n`` units,
  the rest runs on demand::

      cost_h = n x committed_rate + max(0, units_h - n) x on_demand_rate

* **spend** (FOCUS ``Spend``; AWS Savings Plans, GCP spend-based CUDs): commit ``S`` per hour of
  discounted-rate spend; eligible usage is charged at its discounted rate ``r`` against ``S``, so ``S``
  covers up to ``S / r`` units each hour; the rest runs on demand, and the part of ``S`` left unused is
  paid all the same::

      cost_h = S + max(0, units_h - S / r) x on_demand_rate

In one pool (one instance type in one region) a spend commitment ``S`` is capacity ``S / r`` at ``r`` a
unit-hour, so the single-pool mix finds it on the same duration curve as a reservation and reports it
as ``S`` (:mod:`finops.mix`: in steps of one unit's rate ``r``); across pools one ``S`` covers every
pool's eligible usage at that pool's rate (:mod:`finops.mix.lp`, in steps of 0.001 per hour). A steady
fleet of ``n`` units on a savings plan commits ``S = n x r`` (:mod:`finops.tco.compare`). A bill says
which basis a commitment has by its ``CommitmentDiscountType`` (:func:`basis_of`), or by its unit:
hours for a resource commitment, a currency for a spend one.

The price book names a price's model (``reserved_1y``, ``savings_plan_3y``, ``cud_1y``, ...); its kind is
:data:`KIND_OF_PRICING_MODEL`.

>>> BASIS["savings_plan"], BASIS["reserved"], KIND_OF_PRICING_MODEL["savings_plan_3y"]
('spend', 'resource', 'savings_plan')
>>> from finops.money import Money
>>> out = spend_commitment_cost([1, 3], Money.of(4, "USD"), Money.of(2, "USD"), Money.of(5, "USD"))
>>> str(out.cost), out.utilization, out.coverage    # S = 4/h covers 2 units: hour 1 leaves 2/h unused
('13.00 USD', 0.75, 0.75)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, get_args

from .checks import money, positive, whole
from .errors import InputError
from .money import MONEY_CONTEXT, Money, Number, to_decimal

__all__ = ["BASIS", "COMMITTED_KINDS", "KIND_OF_PRICING_MODEL", "OPTION_KINDS", "CommitmentBasis",
           "CommitmentOutcome", "OptionKind", "basis_of", "commitment_per_hour", "resource_commitment_cost",
           "spend_capacity",
           "spend_commitment_cost", "spend_per_hour"]

#: How capacity is bought. ``cud``: a GCP committed-use discount (resource-based, per machine);
#: ``provisioned_throughput``: a managed API's throughput bought for a term (Bedrock model units, Vertex AI
#: GSUs; a resource commitment), priced per demand unit by :mod:`finops.mix.provisioned_throughput`.
OptionKind = Literal["owned", "reserved", "savings_plan", "cud", "provisioned_throughput", "on_demand",
                     "spot"]
OPTION_KINDS: tuple[str, ...] = get_args(OptionKind)
CommitmentBasis = Literal["resource", "spend"]

#: Committed kind -> its basis (module docstring); on-demand and spot are not commitments.
BASIS: dict[str, CommitmentBasis] = {
    "owned": "resource",
    "reserved": "resource",
    "cud": "resource",
    "provisioned_throughput": "resource",
    "savings_plan": "spend",
}
COMMITTED_KINDS: frozenset[str] = frozenset(BASIS)

#: The price book's ``pricing_model`` -> the kind of option it prices.
KIND_OF_PRICING_MODEL: dict[str, OptionKind] = {
    "on_demand": "on_demand", "spot": "spot",
    "reserved_1y": "reserved", "reserved_3y": "reserved",
    "savings_plan_1y": "savings_plan", "savings_plan_3y": "savings_plan",
    "cud_1y": "cud", "cud_3y": "cud",
}

#: FOCUS ``CommitmentDiscountType`` -> basis.
_FOCUS_TYPES: dict[str, CommitmentBasis] = {"spend": "spend", "usage": "resource"}


def basis_of(commitment_type: str | None, unit: str | None = None) -> CommitmentBasis | None:
    """The basis of a billed commitment: from its FOCUS ``CommitmentDiscountType`` (``Spend`` / ``Usage``),
    else from its ``CommitmentDiscountUnit`` (``Hours``: resource; a currency code: spend); ``None`` when
    the bill says neither.

    >>> basis_of("Spend"), basis_of("Usage"), basis_of(None, "Hours"), basis_of("", "USD"), basis_of(None)
    ('spend', 'resource', 'resource', 'spend', None)
    """
    found = _FOCUS_TYPES.get((commitment_type or "").strip().lower())
    if found is not None:
        return found
    unit = (unit or "").strip()
    if unit.lower() == "hours":
        return "resource"
    return "spend" if len(unit) == 3 and unit.isalpha() and unit.isupper() else None


def spend_capacity(commit_per_hour: Number, discounted_rate: Number) -> Decimal:
    """Units a spend commitment covers each hour: ``S / r``.

    >>> spend_capacity("34.40", "4.30")
    Decimal('8')
    """
    rate = to_decimal(discounted_rate)
    if rate <= 0:
        raise InputError(f"discounted_rate must be > 0, got {discounted_rate}")
    return MONEY_CONTEXT.divide(to_decimal(commit_per_hour), rate)


def commitment_per_hour(kind: str, units: Number, rate: Money) -> Money:
    """What ``units`` of a committed ``kind`` at ``rate`` a unit-hour commit you to each hour, on either
    basis: ``units x rate`` for a resource commitment, and for a spend one the ``S`` that covers ``units``
    (:func:`spend_per_hour`); the same figure, named for what is bought.

    >>> str(commitment_per_hour("savings_plan", 8, Money.of("4.30", "USD")))
    '34.40 USD'
    >>> str(commitment_per_hour("cud", 2, Money.of(3, "USD")))
    '6.00 USD'
    """
    if kind not in BASIS:
        raise InputError(f"{kind!r} is not a commitment", hint=f"committed kinds: {', '.join(sorted(BASIS))}")
    return spend_per_hour(units, rate) if BASIS[kind] == "spend" else rate * to_decimal(units)


def spend_per_hour(units: Number, discounted_rate: Money) -> Money:
    """The spend commitment ``S = units x r`` that covers ``units`` each hour at discounted rate ``r``.

    >>> str(spend_per_hour(3, Money.of("4.30", "USD")))
    '12.90 USD'
    """
    return discounted_rate * to_decimal(units)


@dataclass(frozen=True)
class CommitmentOutcome:
    """What a commitment cost over a usage profile, and how well it was used."""

    cost: Money                  # commitment fee + on-demand overflow
    commitment: Money            # the fee paid for the commitment over the profile
    overflow: Money              # usage above the commitment, at on-demand rates
    on_demand_only: Money        # the same usage all at on-demand rates
    utilization: float           # share of the commitment consumed
    coverage: float              # share of the usage (unit-hours) the commitment covered

    @property
    def savings(self) -> Money:
        return self.on_demand_only - self.cost


def _usage(units: float | Sequence[float], hours: int | None) -> list[float]:
    if isinstance(units, (int, float, Decimal)):
        profile = [float(units)] * whole(hours, "hours")  # type: ignore[arg-type]
    else:
        profile = [float(u) for u in units]
    if not profile:
        raise InputError("the usage profile is empty", hint="give hourly units, or units and hours")
    for h, u in enumerate(profile):
        if not math.isfinite(u) or u < 0:
            raise InputError(f"usage units must be finite and >= 0, got {u!r} in hour {h}")
    return profile


def _outcome(profile: list[float], capacity: float, fee: Money, on_demand_rate: Money) -> CommitmentOutcome:
    """Cost a profile against ``capacity`` units committed each hour for ``fee`` in total."""
    covered = math.fsum(min(u, capacity) for u in profile)
    overflow_units = math.fsum(max(0.0, u - capacity) for u in profile)
    total_units = math.fsum(profile)
    overflow = on_demand_rate * repr(overflow_units)
    return CommitmentOutcome(
        cost=fee + overflow, commitment=fee, overflow=overflow,
        on_demand_only=on_demand_rate * repr(total_units),
        utilization=covered / (capacity * len(profile)) if capacity else 0.0,
        coverage=covered / total_units if total_units else 1.0)


def resource_commitment_cost(usage_units: float | Sequence[float], committed_units: Number, committed_rate: Money,
                             on_demand_rate: Money, *, hours: int | None = None) -> CommitmentOutcome:
    """Cost of committing ``committed_units`` (paid every hour) with on-demand overflow.

    ``usage_units`` is units needed per hour, or one steady figure with ``hours``.

    >>> out = resource_commitment_cost([2, 4, 6], 4, Money.of(3, "USD"), Money.of(5, "USD"))
    >>> str(out.cost), round(out.utilization, 4), round(out.coverage, 4), str(out.savings)
    ('46.00 USD', 0.8333, 0.8333, '14.00 USD')
    """
    money(committed_rate, "committed_rate")
    money(on_demand_rate, "on_demand_rate", committed_rate.currency)
    units = positive(committed_units, "committed_units", allow_zero=True)
    profile = _usage(usage_units, hours)
    return _outcome(profile, float(units), committed_rate * units * len(profile), on_demand_rate)


def spend_commitment_cost(usage_units: float | Sequence[float], commit_per_hour: Money, discounted_rate: Money,
                          on_demand_rate: Money, *, hours: int | None = None) -> CommitmentOutcome:
    """Cost of a spend commitment (``commit_per_hour`` of discounted-rate usage) with on-demand overflow.

    The commitment covers ``commit_per_hour / discounted_rate`` units each hour and is paid in full.

    >>> out = spend_commitment_cost(8, Money.of("34.40", "USD"), Money.of("4.30", "USD"), Money.of("6.88", "USD"),
    ...                             hours=730)
    >>> str(out.cost), out.utilization                 # 8 units at 4.30 commit 34.40/h: a month of it
    ('25,112.00 USD', 1.0)
    """
    money(commit_per_hour, "commit_per_hour")
    money(discounted_rate, "discounted_rate", commit_per_hour.currency)
    money(on_demand_rate, "on_demand_rate", commit_per_hour.currency)
    if discounted_rate.amount <= 0:
        raise InputError(f"discounted_rate must be > 0, got {discounted_rate}")
    profile = _usage(usage_units, hours)
    capacity = float(spend_capacity(commit_per_hour.amount, discounted_rate.amount))
    return _outcome(profile, capacity, commit_per_hour * len(profile), on_demand_rate)
