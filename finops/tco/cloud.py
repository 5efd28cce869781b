"""Cloud pricing models: on-demand, reserved with upfront, spend and resource commitments, spot.

Formulas:

* **Reserved / committed use with an upfront payment** (AWS RIs no/partial/all upfront): the effective
  hourly rate is ``recurring hourly fee + upfront / term hours``, as FOCUS 1.2 ``EffectiveCost``
  amortizes the upfront over the term; the cash (``BilledCost``) view pays the upfront in the first month.
* **Spend and resource commitments** (savings plans; reservations and CUDs over a usage profile): the one
  model of :mod:`finops.commitments` (``spend_commitment_cost``, ``resource_commitment_cost``).
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

from dataclasses import dataclass

from ..depreciation import month_index, month_label
from ..errors import InputError
from ..money import Money, Number
from ..price_book import PriceRow
from ._inputs import HOURS_PER_MONTH, money, share, whole

__all__ = ["CloudMonth", "amortized_hourly", "blended_hourly", "recurring_hourly", "reserved_schedule",
           "spot_effective_hourly"]


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
