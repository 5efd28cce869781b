"""The FOCUS aggregation: one SQL query that folds a month of bills into a few charge groups.

Every figure of a reconciliation (totals, invoices, commitments, spot share, GPU-hours, mapping to
plan lines) is a sum over rows that share the same dimensions, so the bill is read exactly once, by
the engine that holds it (DuckDB locally, BigQuery or Athena remotely, see
:mod:`finops.reconcile.dialects`), and only the groups come back. This module holds that one SQL
source, written in DuckDB's dialect over a relation with the FOCUS 1.2 columns of
:mod:`finops.focus`, and the :class:`ChargeGroup` each result row becomes.

A charge belongs to the month of its invoice, ``BillingPeriodStart`` (FOCUS: the billing period the
charge is invoiced in), so a month's review ties to that month's invoices and a charge whose usage
straddles a month edge is in exactly one month; ``basis="usage"`` takes the month of its
``ChargePeriodStart`` instead (usage-month accrual), see :func:`month_filter`;
the instance type is ``x_InstanceType`` when the connector filled it, else ``SkuPriceDetails.InstanceType``.
Every mandatory FOCUS column with a type (money, quantities, timestamps) is read by the query, so a
value that does not cast is found in the same single scan.

>>> sql = aggregation_sql("focus_bills", "2026-05")
>>> "BillingPeriodStart < TIMESTAMP '2026-06-01 00:00:00'" in sql
True
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, get_args

from ..depreciation import month_index, month_label

__all__ = ["DIMENSIONS", "MEASURES", "MONTH_BASES", "MONTH_COLUMNS", "ChargeGroup", "MonthBasis", "aggregation_sql",
           "month_bounds", "month_filter", "regroup_sql"]

#: Which month a charge belongs to: its invoice's (billing period) or its usage's (charge period).
MonthBasis = Literal["invoice", "usage"]
MONTH_BASES: tuple[str, ...] = get_args(MonthBasis)
#: month basis -> the FOCUS column whose month is the charge's month
MONTH_COLUMNS: dict[str, str] = {"invoice": "BillingPeriodStart", "usage": "ChargePeriodStart"}

#: Group-by dimensions: result name -> expression over FOCUS columns.
DIMENSIONS: dict[str, str] = {
    "provider_name": "ProviderName",
    "billing_currency": "BillingCurrency",
    "invoice_id": "InvoiceId",
    "billing_period_start": "BillingPeriodStart",
    "billing_period_end": "BillingPeriodEnd",
    "sub_account_id": "SubAccountId",
    "sub_account_name": "SubAccountName",
    "service_name": "ServiceName",
    "region_id": "RegionId",
    "instance_type": "COALESCE(x_InstanceType, JSON_EXTRACT_STRING(SkuPriceDetails, '$.InstanceType'))",
    "tags": "Tags",
    "charge_category": "ChargeCategory",
    "pricing_category": "PricingCategory",
    "commitment_status": "CommitmentDiscountStatus",
    "committed": "CommitmentDiscountId IS NOT NULL",
    "gpu_model": "x_GpuModel",
    "purchase_option": "x_PurchaseOption",
    "consumed_unit": "ConsumedUnit",
}

#: Measures: result name -> aggregate. Money sums stay exact decimals in every engine.
MEASURES: dict[str, str] = {
    "billed_cost": "SUM(BilledCost)",
    "effective_cost": "SUM(EffectiveCost)",
    "list_cost": "SUM(ListCost)",
    "contracted_cost": "SUM(ContractedCost)",
    "pricing_quantity": "SUM(PricingQuantity)",
    "consumed_quantity": "SUM(ConsumedQuantity)",
    "gpu_hours": "SUM(x_GpuHours)",
    "last_charge_end": "MAX(ChargePeriodEnd)",
    "row_count": "COUNT(*)",
}


def month_bounds(month: str) -> tuple[str, str]:
    """First instant of ``month`` and of the month after, as SQL timestamp text.

    >>> month_bounds("2026-12")
    ('2026-12-01 00:00:00', '2027-01-01 00:00:00')
    """
    index = month_index(month)
    return f"{month_label(index)}-01 00:00:00", f"{month_label(index + 1)}-01 00:00:00"


def month_filter(month: str, basis: MonthBasis = "invoice") -> str:
    """The SQL condition selecting the charges of ``month``: by ``BillingPeriodStart`` (the invoice month,
    the default) or by ``ChargePeriodStart`` (``basis="usage"``, usage-month accrual). On the invoice basis
    ``ChargePeriodStart`` is still read (a condition true for every timestamp), so a value that does not cast
    fails the scan and is located, as on the usage basis.

    >>> month_filter("2026-05", "usage")
    "ChargePeriodStart >= TIMESTAMP '2026-05-01 00:00:00' AND ChargePeriodStart < TIMESTAMP '2026-06-01 00:00:00'"
    """
    start, end = month_bounds(month)
    column = MONTH_COLUMNS[basis]
    chosen = f"{column} >= TIMESTAMP '{start}' AND {column} < TIMESTAMP '{end}'"
    if basis == "usage":
        return chosen
    return f"{chosen} AND (ChargePeriodStart IS NULL OR ChargePeriodStart >= TIMESTAMP '0001-01-01 00:00:00')"


def aggregation_sql(relation: str, month: str, *, per: str | None = None, basis: MonthBasis = "invoice") -> str:
    """The aggregation over ``relation`` for ``month``, in DuckDB's dialect.

    ``relation`` is a table or view name with the FOCUS columns (``focus_bills`` locally, a fully
    qualified table remotely). Columns come out in :data:`DIMENSIONS` then :data:`MEASURES` order.
    ``per`` adds one more group-by column after the dimensions: locally, the bill file, so the same
    scan gives each file's groups (:mod:`finops.reconcile.fingerprint` compares them, and
    :func:`regroup_sql` then folds the files together).

    >>> aggregation_sql("t", "2026-05").splitlines()[0]
    'SELECT'
    >>> aggregation_sql("t", "2026-05", per="f").splitlines()[-1]
    'GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19'
    """
    dimensions = {**DIMENSIONS, **({per: per} if per else {})}
    select = [f"  {expr} AS {name}" for name, expr in {**dimensions, **MEASURES}.items()]
    ordinals = ", ".join(str(i + 1) for i in range(len(dimensions)))
    return ("SELECT\n" + ",\n".join(select) + f"\nFROM {relation}\n"
            f"WHERE {month_filter(month, basis)}\n"
            f"GROUP BY {ordinals}")


#: How the measures of finer groups combine into coarser ones: sums and counts add up, maxima take the max.
_REGROUP = {"SUM": "SUM", "COUNT": "SUM", "MAX": "MAX"}


def regroup_sql(relation: str) -> str:
    """The groups of :func:`aggregation_sql` from finer ones: ``relation`` holds the result of
    ``aggregation_sql(..., per=...)``, and its rows sharing every dimension fold into one group
    (same columns, same order; a NULL sum stays NULL, as in the single query).

    >>> regroup_sql("g").splitlines()[-4:-1]
    ['  MAX(last_charge_end) AS last_charge_end,', '  SUM(row_count) AS row_count', 'FROM g']
    """
    select = [f"  {name}" for name in DIMENSIONS]
    select += [f"  {_REGROUP[expr.split('(')[0]]}({name}) AS {name}" for name, expr in MEASURES.items()]
    ordinals = ", ".join(str(i + 1) for i in range(len(DIMENSIONS)))
    return "SELECT\n" + ",\n".join(select) + f"\nFROM {relation}\nGROUP BY {ordinals}"


@dataclass(frozen=True)
class ChargeGroup:
    """One result row of the aggregation: charges sharing every dimension, with their sums.

    Money is exact :class:`~decimal.Decimal` in ``billing_currency``; quantities are Decimal too
    (hours and GPU-hours are summed exactly, then reported).
    """

    provider_name: str | None
    billing_currency: str | None
    invoice_id: str | None
    billing_period_start: datetime | None
    billing_period_end: datetime | None
    sub_account_id: str | None
    sub_account_name: str | None
    service_name: str | None
    region_id: str | None
    instance_type: str | None
    tags: str | None
    charge_category: str | None
    pricing_category: str | None
    commitment_status: str | None
    committed: bool
    gpu_model: str | None
    purchase_option: str | None
    consumed_unit: str | None
    billed_cost: Decimal
    effective_cost: Decimal
    list_cost: Decimal
    contracted_cost: Decimal
    pricing_quantity: Decimal
    consumed_quantity: Decimal
    gpu_hours: Decimal | None
    last_charge_end: datetime | None
    row_count: int

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ChargeGroup:
        """Build from a result row in :data:`DIMENSIONS` + :data:`MEASURES` order (NULL sums -> 0).

        >>> g = ChargeGroup.from_row(("AWS", "USD") + (None,) * 12 + (False,) + (None,) * 3
        ...                          + (Decimal("1.5"), None, None, None, None, None, None, None, 2))
        >>> g.billed_cost, g.effective_cost, g.gpu_hours, g.row_count
        (Decimal('1.5'), Decimal('0'), None, 2)
        """
        values = dict(zip(list(DIMENSIONS) + list(MEASURES), row, strict=True))
        for name in ("billed_cost", "effective_cost", "list_cost", "contracted_cost", "pricing_quantity",
                     "consumed_quantity"):
            values[name] = _decimal(values[name])
        if values["gpu_hours"] is not None:
            values["gpu_hours"] = _decimal(values["gpu_hours"])
        values["committed"] = _flag(values["committed"])
        values["row_count"] = int(values["row_count"])
        for name in ("billing_period_start", "billing_period_end", "last_charge_end"):
            values[name] = _timestamp(values[name])
        return cls(**values)


def _flag(value: Any) -> bool:
    """Booleans as engines return them: ``True``, ``1`` or the text ``'true'`` (Athena's result rows)."""
    return value.strip().lower() == "true" if isinstance(value, str) else bool(value)


def _timestamp(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace(" UTC", "").replace("Z", ""))


def _decimal(value: Any) -> Decimal:
    if value is None:
        return Decimal(0)
    if isinstance(value, Decimal):
        return value
    return Decimal(str(value))
