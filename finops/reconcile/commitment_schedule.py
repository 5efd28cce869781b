"""The commitments of a month, one row per ``CommitmentDiscountId``: purchase, term, amortization, balance.

FOCUS 1.2 amortizes a commitment in the standard way, and this module reads it that way, whichever
provider wrote the bill: the purchase (``ChargeCategory = Purchase``) carries the cash in BilledCost
and EffectiveCost 0; every usage row it covers carries its amortized share in EffectiveCost
(``CommitmentDiscountStatus = Used``), and the part left unused is its own row
(``CommitmentDiscountStatus = Unused``); all of them carry the ``CommitmentDiscountId``. So, per id:

* purchased = sum of BilledCost of its Purchase rows; purchase date = their first ChargePeriodStart;
* amortized this month = sum of EffectiveCost of its Used and Unused rows;
* term (months) from the purchase row's ``SkuPriceDetails`` (:data:`TERM_MONTHS`), end = purchase + term;
* scheduled monthly amortization = purchased / term for an upfront purchase (``ChargeFrequency
  One-Time``), the fee itself for a recurring one;
* balance left = purchased - amortized this month (prepaid cost not yet in the P&L), known only
  for commitments bought in these bills.

The query runs on the same view as the aggregation (:data:`finops.reconcile.bills.VIEW`), locally.

>>> term_months('{"x_PurchaseTerm":"3yr","x_PaymentOption":"AllUpfront"}'), term_months('{"x_Plan":"TWELVE_MONTH"}')
(36, 12)
"""

from __future__ import annotations

import calendar
import json
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import duckdb

from ..depreciation import month_index, month_label
from ..money import Money
from .aggregation import MonthBasis, month_filter
from .result import CommitmentLine

__all__ = ["TERM_MONTHS", "commitment_lines", "commitment_rows", "term_months"]

#: SkuPriceDetails key -> {value (lower case) -> term in months}, as the providers' FOCUS exports write them.
TERM_MONTHS: dict[str, dict[str, int]] = {
    "x_PurchaseTerm": {"1yr": 12, "3yr": 36, "1 year": 12, "3 years": 36},  # AWS
    "x_Plan": {"twelve_month": 12, "thirty_six_month": 36},  # Google Cloud
}
#: ChargeFrequency of the purchase -> how the review names the payment.
PAYMENT = {"one-time": "upfront", "recurring": "monthly fee"}

_SQL = """
SELECT CommitmentDiscountId, ANY_VALUE(ProviderName), ANY_VALUE(BillingCurrency),
       ANY_VALUE(CommitmentDiscountType),
       ANY_VALUE(CASE WHEN ChargeCategory = 'Purchase' THEN ChargeFrequency END),
       ANY_VALUE(CASE WHEN ChargeCategory = 'Purchase' THEN CAST(SkuPriceDetails AS VARCHAR) END),
       MIN(CASE WHEN ChargeCategory = 'Purchase' THEN ChargePeriodStart END),
       SUM(CASE WHEN ChargeCategory = 'Purchase' THEN BilledCost ELSE 0 END),
       SUM(CASE WHEN lower(CommitmentDiscountStatus) IN ('used', 'unused') THEN EffectiveCost ELSE 0 END),
       SUM(CASE WHEN lower(CommitmentDiscountStatus) = 'unused' THEN EffectiveCost ELSE 0 END)
FROM {view}
WHERE CommitmentDiscountId IS NOT NULL AND {month}
GROUP BY CommitmentDiscountId, BillingCurrency
ORDER BY 2, 1
"""


def term_months(sku_price_details: str | None) -> int | None:
    """The commitment term in months from a purchase row's SkuPriceDetails JSON, ``None`` when it does not say."""
    try:
        details = json.loads(sku_price_details or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(details, dict):
        return None
    for key, terms in TERM_MONTHS.items():
        months = terms.get(str(details.get(key, "")).strip().lower())
        if months is not None:
            return months
    return None


def commitment_rows(con: duckdb.DuckDBPyConnection, view: str, month: str,
                    basis: MonthBasis = "invoice") -> list[tuple[Any, ...]]:
    """One row per commitment id (and billing currency) of ``month`` (chosen on ``basis``, as the
    aggregation chooses it: :func:`~finops.reconcile.aggregation.month_filter`) in ``view``."""
    return con.execute(_SQL.format(view=view, month=month_filter(month, basis))).fetchall()


def commitment_lines(rows: list[tuple[Any, ...]],
                     money: Callable[[Decimal, str | None], Money]) -> tuple[CommitmentLine, ...]:
    """:class:`CommitmentLine` from :func:`commitment_rows`; ``money`` converts into the plan currency."""
    lines = []
    for cid, provider, currency, kind, frequency, details, bought_at, purchased, amortized, unused in rows:
        paid = money(Decimal(purchased or 0), currency)
        bought = _day(bought_at)
        term = term_months(details)
        payment = PAYMENT.get((frequency or "").lower(), "")
        scheduled = None
        if bought is not None and payment == "monthly fee":
            scheduled = paid
        elif bought is not None and term:
            scheduled = paid / term
        amortized_money = money(Decimal(amortized or 0), currency)
        lines.append(CommitmentLine(
            commitment_id=cid, provider_name=provider or "", kind=kind or "", payment=payment,
            purchase_date=bought, term_months=term,
            end_date=_add_months(bought, term) if bought is not None and term else None,
            purchased=paid, amortized=amortized_money, unused=money(Decimal(unused or 0), currency),
            scheduled_monthly=scheduled, balance_left=paid - amortized_money if bought is not None else None))
    return tuple(lines)


def _day(value: Any) -> date | None:
    if value is None:
        return None
    return value.date() if isinstance(value, datetime) else date.fromisoformat(str(value)[:10])


def _add_months(day: date, months: int) -> date:
    """``day`` plus whole months (the last day of a shorter month when the day does not exist there)."""
    label = month_label(month_index(f"{day.year:04d}-{day.month:02d}") + months)
    year, month = int(label[:4]), int(label[5:])
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))
