"""Straight-line depreciation of owned hardware, month by month, with a residual value.

Formula (straight-line, IAS 16 paragraphs 50-62 and ASC 360-10-35): the depreciable amount
``cost - residual`` is spread evenly over ``life_months``::

    monthly charge  = round_cent((cost - residual) / life_months)
    last month      = (cost - residual) - monthly charge x (life_months - 1)   # absorbs the rounding
    net book value  = cost - depreciation charged up to and including the month

Conventions, stated once:

* **Full-month convention.** The in-service month carries a full month of depreciation, whatever its
  day, and the life ends ``life_months`` months later (depreciation starts when the asset is available
  for use, IAS 16 paragraph 55; the full-month convention is the common ERP default, for example SAP's
  and Oracle's "full month" prorate conventions). Months before the in-service month and after the
  last month of the life carry zero.
* **Default life: 60 months (5 years)** for GPU servers, :data:`DEFAULT_LIFE_MONTHS`. Hyperscalers
  book servers over 5-6 years in their 10-K filings (Alphabet and Microsoft 6 years since fiscal 2023;
  Meta 5.5 years since 2025; Amazon shortened a subset of its servers from 6 to 5 years in 2025,
  citing the faster pace of AI technology). For GPU servers, whose economic life is shorter than
  general-purpose servers', 5 years is the conservative end of that practice.
* **Rounding.** Each month is rounded half-up to the cent and the last month absorbs the remainder,
  so the schedule sums exactly to ``cost - residual``. When rounding up would leave the last month
  negative (tiny amounts over long lives), the monthly charge is rounded down instead.

>>> from datetime import date
>>> cost, residual = Money.of(100_000, "USD"), Money.of(0, "USD")
>>> monthly_depreciation(cost, residual, 60, date(2026, 1, 15), "2026-01")
Money(amount=Decimal('1666.67'), currency='USD')
>>> monthly_depreciation(cost, residual, 60, date(2026, 1, 15), "2030-12")   # the last month absorbs rounding
Money(amount=Decimal('1666.47'), currency='USD')
>>> net_book_value(cost, residual, 60, date(2026, 1, 15), "2026-12")
Money(amount=Decimal('79999.96'), currency='USD')
"""

from __future__ import annotations

import decimal
import re
import unicodedata
from datetime import date

from .errors import InputError, Location, require
from .money import CENT, MONEY_CONTEXT, Money

__all__ = ["DEFAULT_LIFE_MONTHS", "depreciation_schedule", "month_index", "month_label", "monthly_depreciation",
           "net_book_value", "parse_month"]

#: Default useful life of a GPU server (5 years; see the module docstring for the sources).
DEFAULT_LIFE_MONTHS = 60

_MONTH = re.compile(r"^(\d{4})-(\d{2})$", re.ASCII)  # ASCII digits only: "２０２６-０５" is not a label
#: The years a month typed by a user may fall in: plans, bills and horizons of up to 100 years stay inside dates.
_FIRST_YEAR, _LAST_YEAR = 1900, 2999


def parse_month(text: object, *, where: Location | None = None) -> str:
    """Loose month text as the ASCII label ``'YYYY-MM'``: Unicode NFKC first (full-width digits and
    hyphen become ASCII), then checked, so one month never gets two labels.

    >>> parse_month(" ２０２６－０５ "), parse_month("2026-05")
    ('2026-05', '2026-05')
    """
    label = unicodedata.normalize("NFKC", str(text)).strip()
    try:
        month_index(label)
    except InputError as exc:
        raise InputError(exc.message, hint=exc.hint, where=where) from None
    if not _FIRST_YEAR <= int(label[:4]) <= _LAST_YEAR:  # year 0 has no date; 9999 has no next month
        raise InputError(f"month {label!r} is outside the years {_FIRST_YEAR} to {_LAST_YEAR}", where=where,
                         hint="for example '2026-05'")
    return label


def month_index(month: str) -> int:
    """Months since year 0 for a ``'YYYY-MM'`` label, so that consecutive months differ by one.

    >>> month_index("2026-03") - month_index("2025-12")
    3
    """
    match = _MONTH.match(str(month).strip())
    if not match or not 1 <= int(match.group(2)) <= 12:
        raise InputError(f"month must be 'YYYY-MM', got {str(month)[:40]!r}", hint="for example '2026-05'")
    return int(match.group(1)) * 12 + int(match.group(2)) - 1


def month_label(index: int) -> str:
    """The ``'YYYY-MM'`` label of a :func:`month_index`.

    >>> month_label(month_index("2026-12") + 1)
    '2027-01'
    """
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _validate(cost: Money, residual: Money, life_months: int, in_service: date) -> None:
    if not isinstance(cost, Money):
        raise InputError(f"cost must be Money, got {type(cost).__name__}", hint="use Money.of(amount, currency)")
    if not isinstance(residual, Money):
        raise InputError(f"residual must be Money, got {type(residual).__name__}",
                         hint="use Money.of(amount, currency)")
    cost._same(residual, "depreciate")  # raises CurrencyMismatchError on two currencies
    require(not isinstance(life_months, bool) and isinstance(life_months, int) and life_months >= 1,
            f"life_months must be a whole number of months >= 1, got {life_months!r}",
            hint=f"a GPU server is commonly depreciated over {DEFAULT_LIFE_MONTHS} months")
    require(cost.amount >= 0, f"cost must not be negative, got {cost}")
    require(0 <= residual.amount <= cost.amount,
            f"residual must be between 0 and the cost ({cost}), got {residual}",
            hint="the residual value is what the asset is expected to fetch at the end of its life")
    require(isinstance(in_service, date), f"in_service must be a date, got {in_service!r}")


def _monthly_charge(depreciable: decimal.Decimal, life_months: int) -> decimal.Decimal:
    exact = MONEY_CONTEXT.divide(depreciable, decimal.Decimal(life_months))
    charge = exact.quantize(CENT, rounding=decimal.ROUND_HALF_UP, context=MONEY_CONTEXT)
    if charge * (life_months - 1) > depreciable:
        charge = exact.quantize(CENT, rounding=decimal.ROUND_DOWN, context=MONEY_CONTEXT)
    return charge


def _charge_in(cost: Money, residual: Money, life_months: int, in_service: date, offset: int) -> Money:
    """Depreciation in the ``offset``-th month of the life (0 = in-service month)."""
    if offset < 0 or offset >= life_months:
        return Money.zero(cost.currency)
    depreciable = cost.amount - residual.amount
    charge = _monthly_charge(depreciable, life_months)
    if offset == life_months - 1:
        return Money(depreciable - charge * (life_months - 1), cost.currency)
    return Money(charge, cost.currency)


def _offset(in_service: date, month: str) -> int:
    return month_index(month) - (in_service.year * 12 + in_service.month - 1)


def monthly_depreciation(cost: Money, residual: Money, life_months: int, in_service: date, month: str) -> Money:
    """Depreciation charged in ``month`` (``'YYYY-MM'``): zero before the in-service month and after the life.

    >>> monthly_depreciation(Money.of(1200, "EUR"), Money.of(0, "EUR"), 12, date(2026, 3, 31), "2026-02")
    Money(amount=Decimal('0'), currency='EUR')
    >>> monthly_depreciation(Money.of(1200, "EUR"), Money.of(0, "EUR"), 12, date(2026, 3, 31), "2026-03")
    Money(amount=Decimal('100.00'), currency='EUR')
    """
    _validate(cost, residual, life_months, in_service)
    return _charge_in(cost, residual, life_months, in_service, _offset(in_service, month))


def depreciation_schedule(cost: Money, residual: Money, life_months: int,
                          in_service: date) -> list[tuple[str, Money]]:
    """Every month of the life with its charge; the charges sum exactly to ``cost - residual``.

    >>> rows = depreciation_schedule(Money.of(1000, "USD"), Money.of(100, "USD"), 7, date(2026, 11, 2))
    >>> [(m, str(v)) for m, v in rows[:2] + rows[-1:]]
    [('2026-11', '128.57 USD'), ('2026-12', '128.57 USD'), ('2027-05', '128.58 USD')]
    >>> Money.total([v for _, v in rows], "USD")
    Money(amount=Decimal('900.00'), currency='USD')
    """
    _validate(cost, residual, life_months, in_service)
    first = in_service.year * 12 + in_service.month - 1
    return [(month_label(first + k), _charge_in(cost, residual, life_months, in_service, k))
            for k in range(life_months)]


def net_book_value(cost: Money, residual: Money, life_months: int, in_service: date, month: str) -> Money:
    """Book value at the end of ``month``: the cost less every charge up to and including that month.

    The cost before the in-service month, the residual after the life.

    >>> nbv = [net_book_value(Money.of(1200, "USD"), Money.of(200, "USD"), 10, date(2026, 1, 1), m)
    ...        for m in ("2025-12", "2026-01", "2026-10", "2027-06")]
    >>> [str(v) for v in nbv]
    ['1,200.00 USD', '1,100.00 USD', '200.00 USD', '200.00 USD']
    """
    _validate(cost, residual, life_months, in_service)
    elapsed = _offset(in_service, month) + 1
    if elapsed <= 0:
        return cost
    if elapsed >= life_months:
        return residual
    charge = _monthly_charge(cost.amount - residual.amount, life_months)
    return Money(cost.amount - charge * elapsed, cost.currency)
