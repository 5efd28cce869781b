"""Cloud pricing models: on-demand, reserved with upfront, spend and resource commitments, spot.

Formulas:

* **Reserved / committed use with an upfront payment** (AWS RIs no/partial/all upfront): the effective
  hourly rate is ``recurring hourly fee + upfront / term hours``, as FOCUS 1.2 ``EffectiveCost``
  amortizes the upfront over the term; the cash (``BilledCost``) view pays the upfront in the first month.
* **Spend commitment** (AWS Savings Plans): commit ``c`` per hour of discounted-rate spend; each hour
  pays ``c`` plus the usage the commitment does not cover at on-demand rates:
  ``cost_h = c + max(0, units_h - c / discounted_rate) x on_demand_rate``.
* **Resource commitment** (GCP resource-based committed use discounts, reserved capacity): commit
  ``n`` units; each hour pays ``n x committed_rate + max(0, units_h - n) x on_demand_rate``.
* **Spot** (AWS Spot, GCP Spot VMs): work lost to interruptions is redone, and part of the intended
  spot hours falls back to on-demand when capacity is missing::

      spot effective = (1 - fallback) x spot / (1 - lost_work) + fallback x on_demand

  and at most ``max_share`` of the demand may run on spot.

>>> from finops.money import Money
>>> amortized_hourly(Money.of(26_280, "USD"), Money.of(0, "USD"), 26_280)
Money(amount=Decimal('1'), currency='USD')
>>> spot_effective_hourly(Money.of(2, "USD"), Money.of(6, "USD"), lost_work_share=0.2, fallback_share=0.1)
Money(amount=Decimal('2.85'), currency='USD')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..depreciation import month_index, month_label
from ..errors import InputError
from ..money import MONEY_CONTEXT, Money, Number
from ..price_book import PriceRow
from ._inputs import HOURS_PER_MONTH, money, positive, share, whole

__all__ = ["CloudMonth", "CommitmentOutcome", "amortized_hourly", "blended_hourly", "recurring_hourly",
           "reserved_schedule", "resource_commitment_cost", "spend_commitment_cost", "spot_effective_hourly"]


def amortized_hourly(upfront: Money, recurring_hourly: Money, term_hours: int) -> Money:
    """Effective cost of one committed hour: ``recurring_hourly + upfront / term_hours`` (FOCUS EffectiveCost).

    >>> amortized_hourly(Money.of(100_000, "USD"), Money.of("2.5", "USD"), 8760).rounded()
    Money(amount=Decimal('13.92'), currency='USD')
    """
    money(upfront, "upfront")
    money(recurring_hourly, "recurring_hourly", upfront.currency)
    whole(term_hours, "term_hours")
    return recurring_hourly + upfront / term_hours


def recurring_hourly(row: PriceRow) -> Money:
    """The hourly fee billed each hour for a price-book row: its effective rate less the amortized upfront.

    >>> from finops.money import to_decimal
    >>> row = PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, "reserved_1y", "partial_upfront",
    ...                to_decimal("30"), to_decimal("131400"), "USD", "2026-07-01", "example")
    >>> recurring_hourly(row)
    Money(amount=Decimal('15'), currency='USD')
    """
    effective = Money.of(row.hourly_cost, row.currency)
    if not row.term_hours:
        return effective
    return effective - Money.of(row.upfront_cost, row.currency) / row.term_hours


@dataclass(frozen=True)
class CloudMonth:
    """One month of a cloud purchase: cash billed (FOCUS BilledCost) and amortized (EffectiveCost)."""

    month: str
    billed: Money
    effective: Money


def reserved_schedule(upfront: Money, recurring: Money, term_months: int, units: int,
                      start: str = "2026-01") -> list[CloudMonth]:
    """Month by month cost of ``units`` reservations over their term (730 hours a month).

    The upfront is billed in the first month and amortized evenly over the term; both columns sum to
    the same total.

    >>> rows = reserved_schedule(Money.of(8760, "USD"), Money.of(1, "USD"), 12, units=2)
    >>> str(rows[0].billed), str(rows[0].effective), str(rows[1].billed)
    ('18,980.00 USD', '2,920.00 USD', '1,460.00 USD')
    """
    money(upfront, "upfront")
    money(recurring, "recurring", upfront.currency)
    whole(term_months, "term_months")
    whole(units, "units")
    first = month_index(start)
    monthly_fee = recurring * (HOURS_PER_MONTH * units)
    effective = amortized_hourly(upfront, recurring, term_months * HOURS_PER_MONTH) * (HOURS_PER_MONTH * units)
    return [CloudMonth(month_label(first + k), monthly_fee + (upfront * units if k == 0 else
                                                              Money.zero(upfront.currency)), effective)
            for k in range(term_months)]


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
        cost=fee + overflow, commitment=fee, overflow=overflow, on_demand_only=on_demand_rate * repr(total_units),
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

    >>> out = spend_commitment_cost([1, 3], Money.of(4, "USD"), Money.of(2, "USD"), Money.of(5, "USD"))
    >>> str(out.cost), out.utilization, out.coverage
    ('13.00 USD', 0.75, 0.75)
    """
    money(commit_per_hour, "commit_per_hour")
    money(discounted_rate, "discounted_rate", commit_per_hour.currency)
    money(on_demand_rate, "on_demand_rate", commit_per_hour.currency)
    if discounted_rate.amount <= 0:
        raise InputError(f"discounted_rate must be > 0, got {discounted_rate}")
    profile = _usage(usage_units, hours)
    capacity = float(MONEY_CONTEXT.divide(commit_per_hour.amount, discounted_rate.amount))
    return _outcome(profile, capacity, commit_per_hour * len(profile), on_demand_rate)


def spot_effective_hourly(spot_rate: Money, on_demand_rate: Money, *, lost_work_share: Number = 0,
                          fallback_share: Number = 0) -> Money:
    """Cost of one useful spot unit-hour, counting redone work and on-demand fallback.

    ``(1 - fallback) x spot / (1 - lost_work) + fallback x on_demand``.

    >>> spot_effective_hourly(Money.of(3, "USD"), Money.of(10, "USD"), lost_work_share=0.25)
    Money(amount=Decimal('4'), currency='USD')
    """
    money(spot_rate, "spot_rate")
    money(on_demand_rate, "on_demand_rate", spot_rate.currency)
    lost = share(lost_work_share, "lost_work_share", below_one=True)
    fallback = share(fallback_share, "fallback_share")
    return spot_rate * (1 - fallback) / (1 - lost) + on_demand_rate * fallback


def blended_hourly(base_rate: Money, spot_effective: Money, *, spot_share: Number, max_share: Number = 1) -> Money:
    """Average rate when ``spot_share`` of the demand runs on spot and the rest on ``base_rate``.

    A share above the cap ``max_share`` fails rather than being silently clipped.

    >>> blended_hourly(Money.of(6, "USD"), Money.of(2, "USD"), spot_share=0.25, max_share=0.3)
    Money(amount=Decimal('5.00'), currency='USD')
    """
    money(base_rate, "base_rate")
    money(spot_effective, "spot_effective", base_rate.currency)
    s = share(spot_share, "spot_share")
    cap = share(max_share, "max_share")
    if s > cap:
        raise InputError(f"spot_share {spot_share} is above the spot cap max_share {max_share}",
                         hint="lower spot_share or raise the cap")
    return base_rate * (1 - s) + spot_effective * s
