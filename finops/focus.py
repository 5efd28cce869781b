"""FOCUS 1.2 cost-and-usage rows: the one normalized table every bill becomes.

Connectors map a provider's export (CUR 2.0, a GCP billing export, Cost Explorer) to these columns;
reconcile reads only these. Money columns are exact decimals (``DECIMAL(38, 10)`` in DuckDB and
Parquet). The ``x_`` columns are this product's extensions for GPU fleets (FOCUS reserves the ``x_``
prefix for custom columns).

Source: FinOps Open Cost and Usage Specification 1.2 (https://focus.finops.org/focus-specification/v1-2/),
column list as in the FinOps Foundation's FOCUS-Sample-Data for 1.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from .errors import InputError, Location

__all__ = [
    "ALLOWED_VALUES",
    "CHARGE_CATEGORIES",
    "COLUMNS",
    "FOCUS_VERSION",
    "GPU_COLUMNS",
    "LATER_COLUMNS",
    "MANDATORY",
    "MONEY_COLUMNS",
    "NOT_NULL_VALUES",
    "SUCCESSORS",
    "ChargeCategory",
    "Column",
    "allowed_value_hint",
    "duckdb_schema",
    "outside_vocabulary",
]

FOCUS_VERSION = "1.2"

ChargeCategory = Literal["Usage", "Purchase", "Tax", "Credit", "Adjustment"]
CHARGE_CATEGORIES: tuple[str, ...] = get_args(ChargeCategory)

#: The closed vocabularies of FOCUS that the money logic branches on: column -> its allowed values, exactly as
#: written (FOCUS values are case-sensitive; the FinOps Foundation's validator compares them as they are). A value
#: outside them (``Usgae``, ``usage``, ``Refund``) would silently leave a charge out of the GPU hours, the
#: commitments or the one-off cost, so a bill holding one is refused with its row. Source: FOCUS specification,
#: columns ``chargecategory``, ``chargeclass``, ``chargefrequency``, ``pricingcategory``,
#: ``commitmentdiscountstatus`` ("Allowed values"), versions 1.0 to 1.4,
#: https://github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec (specification/datasets/cost_and_usage/columns).
ALLOWED_VALUES: dict[str, tuple[str, ...]] = {
    "ChargeCategory": CHARGE_CATEGORIES,
    "ChargeClass": ("Correction",),
    "ChargeFrequency": ("One-Time", "Recurring", "Usage-Based"),
    "PricingCategory": ("Standard", "Dynamic", "Committed", "Other"),
    "CommitmentDiscountStatus": ("Used", "Unused"),
}
#: The columns of :data:`ALLOWED_VALUES` that FOCUS never allows to be null (the others are null where they do not
#: apply: a charge that is no correction, no commitment's).
NOT_NULL_VALUES: tuple[str, ...] = ("ChargeCategory",)


def allowed_value_hint(column: str, value: str) -> str:
    """What to write instead of ``value`` in ``column`` (:data:`ALLOWED_VALUES`): the allowed value it misspells
    in case or spaces, else the list.

    >>> allowed_value_hint("ChargeCategory", " usage")
    "write 'Usage': FOCUS values are case-sensitive"
    >>> allowed_value_hint("ChargeClass", "Refund")
    'ChargeClass is empty or Correction in FOCUS'
    """
    allowed = ALLOWED_VALUES[column]
    near = [v for v in allowed if v.lower() == " ".join(value.split()).lower()]
    if near:
        return f"write {near[0]!r}: FOCUS values are case-sensitive"
    listed = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
    return f"{column} is {'' if column in NOT_NULL_VALUES else 'empty or '}{listed} in FOCUS"

def outside_vocabulary(name: str, value: Any) -> InputError | None:
    """The error of a value outside the closed FOCUS vocabulary of column ``name`` (:data:`ALLOWED_VALUES`; none where
    FOCUS requires one, :data:`NOT_NULL_VALUES`), naming the column; ``None`` for an allowed value or a column of no
    closed vocabulary. A misspelt category would leave its charge out of the usage, the commitments or the one-off
    cost with no word said.

    >>> str(outside_vocabulary("ChargeCategory", "usage"))
    "column ChargeCategory: 'usage' is not a FOCUS ChargeCategory value (Usage, Purchase, Tax, Credit, Adjustment). Hint: write 'Usage': FOCUS values are case-sensitive"
    """
    allowed = ALLOWED_VALUES.get(name)
    if allowed is None or value in allowed or (value is None and name not in NOT_NULL_VALUES):
        return None
    return InputError(f"{'no value' if value is None else repr(value)} is not a FOCUS {name} value "
                      f"({', '.join(allowed)})", where=Location(column=name),
                      hint=allowed_value_hint(name, "" if value is None else str(value)))


Kind = Literal["string", "decimal", "timestamp", "json", "integer"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    mandatory: bool


_M, _O = True, False
COLUMNS: tuple[Column, ...] = tuple(Column(n, k, m) for n, k, m in [
    ("ProviderName", "string", _M), ("PublisherName", "string", _M), ("InvoiceIssuerName", "string", _M),
    ("InvoiceId", "string", _O), ("BillingAccountId", "string", _M), ("BillingAccountName", "string", _M),
    ("BillingAccountType", "string", _O), ("SubAccountId", "string", _O), ("SubAccountName", "string", _O),
    ("SubAccountType", "string", _O), ("BillingPeriodStart", "timestamp", _M), ("BillingPeriodEnd", "timestamp", _M),
    ("ChargePeriodStart", "timestamp", _M), ("ChargePeriodEnd", "timestamp", _M), ("ChargeCategory", "string", _M),
    ("ChargeClass", "string", _M), ("ChargeDescription", "string", _M), ("ChargeFrequency", "string", _O),
    ("BilledCost", "decimal", _M), ("EffectiveCost", "decimal", _M), ("ListCost", "decimal", _M),
    ("ContractedCost", "decimal", _M), ("ListUnitPrice", "decimal", _O), ("ContractedUnitPrice", "decimal", _O),
    ("PricingCategory", "string", _O), ("PricingQuantity", "decimal", _M), ("PricingUnit", "string", _M),
    ("PricingCurrency", "string", _O), ("PricingCurrencyContractedUnitPrice", "decimal", _O),
    ("PricingCurrencyEffectiveCost", "decimal", _O), ("PricingCurrencyListUnitPrice", "decimal", _O),
    ("BillingCurrency", "string", _M), ("ConsumedQuantity", "decimal", _O), ("ConsumedUnit", "string", _O),
    ("ServiceName", "string", _M), ("ServiceCategory", "string", _M), ("ServiceSubcategory", "string", _O),
    ("SkuId", "string", _O), ("SkuMeter", "string", _O), ("SkuPriceId", "string", _O),
    ("SkuPriceDetails", "json", _O), ("ResourceId", "string", _O), ("ResourceName", "string", _O),
    ("ResourceType", "string", _O), ("RegionId", "string", _O), ("RegionName", "string", _O),
    ("AvailabilityZone", "string", _O), ("CommitmentDiscountId", "string", _O),
    ("CommitmentDiscountName", "string", _O), ("CommitmentDiscountCategory", "string", _O),
    ("CommitmentDiscountType", "string", _O), ("CommitmentDiscountStatus", "string", _O),
    ("CommitmentDiscountQuantity", "decimal", _O), ("CommitmentDiscountUnit", "string", _O),
    ("CapacityReservationId", "string", _O), ("CapacityReservationStatus", "string", _O),
    ("Tags", "json", _O),
])

#: Extensions for GPU fleets, filled by the connectors from the instance catalog.
GPU_COLUMNS: tuple[Column, ...] = (
    Column("x_InstanceType", "string", _O), Column("x_GpuModel", "string", _O), Column("x_GpuCount", "integer", _O),
    Column("x_GpuHours", "decimal", _O), Column("x_PurchaseOption", "string", _O),
)

#: Columns FOCUS 1.3 added and 1.4 kept, read from the bills that have them (the connectors write 1.2, without them).
#: ``ServiceProviderName`` succeeds ``ProviderName`` (deprecated in 1.3, removed in 1.4, which drops
#: ``PublisherName`` too); ``HostProviderName`` names the infrastructure under a service provider's offer. The
#: ``Allocated*`` columns are set on the charges a provider split from a shared cost (provider-calculated split
#: cost allocation: the allocated charges sum to the origin charge and keep its Tags); ``ContractApplied`` ties a
#: charge to the Contract Commitment dataset. Source: FOCUS specification, columns ``serviceprovidername``,
#: ``hostprovidername``, ``allocated*``, ``contractapplied`` ("Introduced (version) 1.3"),
#: https://github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec (specification/datasets/cost_and_usage/columns).
LATER_COLUMNS: tuple[Column, ...] = tuple(Column(n, k, _O) for n, k in [
    ("ServiceProviderName", "string"), ("HostProviderName", "string"), ("AllocatedMethodId", "string"),
    ("AllocatedMethodDetails", "json"), ("AllocatedResourceId", "string"), ("AllocatedResourceName", "string"),
    ("AllocatedTags", "json"), ("ContractApplied", "json"),
])

#: A column a bill lacks -> the columns that succeed it or stand for it, read in this order (COALESCE): a
#: 1.4 bill's ServiceProviderName is its ProviderName, so Mapping rules written against ProviderName keep
#: matching; FOCUS 1.2 defines PublisherName as the provider when no other entity produced the service. A 1.3 bill
#: holds both names; its ProviderName, deprecated, may be empty where ServiceProviderName is set.
SUCCESSORS: dict[str, tuple[str, ...]] = {
    "ProviderName": ("ProviderName", "ServiceProviderName"),
    "PublisherName": ("PublisherName", "ServiceProviderName"),
    "ServiceProviderName": ("ServiceProviderName", "ProviderName"),
}

MANDATORY: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.mandatory)
MONEY_COLUMNS: tuple[str, ...] = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost")

_DUCKDB_TYPES = {"string": "VARCHAR", "decimal": "DECIMAL(38, 10)", "timestamp": "TIMESTAMP",
                 "json": "VARCHAR", "integer": "INTEGER"}


def duckdb_schema(include_gpu: bool = True, include_later: bool = True) -> dict[str, str]:
    """Column name -> DuckDB type, in FOCUS order (the 1.3 columns, then the GPU extensions, last).

    >>> duckdb_schema()["BilledCost"], duckdb_schema()["AllocatedTags"]
    ('DECIMAL(38, 10)', 'VARCHAR')
    """
    cols = COLUMNS + (LATER_COLUMNS if include_later else ()) + (GPU_COLUMNS if include_gpu else ())
    return {c.name: _DUCKDB_TYPES[c.kind] for c in cols}
