"""Normalize CUR 2.0 line items to FOCUS 1.2 records (pure: records in, records out).

The rules are the tables of :mod:`connectors.aws.mapping`; the module docstring there shows them. A CUR
record is a mapping of CUR 2.0 column names to cells as Parquet or CSV gives them (numbers or numeric
text, datetimes or ISO text, the ``product`` / ``resource_tags`` maps as mappings, pairs or JSON text).

>>> rows = focus_rows_from_cur([{"line_item_line_item_type": "Usage", "line_item_product_code": "AmazonEC2",
...     "line_item_usage_type": "USE1-BoxUsage:p5.48xlarge", "product_instance_type": "p5.48xlarge",
...     "line_item_usage_amount": "2", "pricing_unit": "Hrs", "line_item_unblended_cost": "110.08",
...     "line_item_currency_code": "USD", "line_item_usage_start_date": "2026-05-01T00:00:00Z"}],
...     gpu_of=lambda t: ("h100-sxm", 8))
>>> rows[0]["BilledCost"], rows[0]["EffectiveCost"], rows[0]["x_GpuHours"], rows[0]["x_PurchaseOption"]
(Decimal('110.08'), Decimal('110.08'), Decimal('16'), 'on_demand')
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

from connectors.focus_table import (
    conform,
    currency_code,
    decimal_or_none,
    focus_unit,
    gpu_columns,
    record,
    service_subcategory,
    timestamp,
    unreadable_cell,
)
from finops.errors import InputError, Location
from finops.money import MONEY_CONTEXT

from .mapping import (
    COMMITMENT_KINDS,
    COST_BASES,
    CUR_CELL_KINDS,
    CUR_DECIMAL_COLUMNS,
    CUR_TEXT_COLUMNS,
    LEASE_TERMS,
    LEGACY_CUR_MARKER,
    LINE_ITEM_TYPES,
    NET_BASIS_MARKER,
    RESOURCE_TYPES,
    SERVICE_CATEGORIES,
    SERVICE_SUBCATEGORIES,
    USAGE_KINDS,
    CostBasis,
    CostBasisName,
    LineItemRule,
)

__all__ = ["GpuOf", "cost_basis", "cur2_name", "focus_rows_from_cur", "usage_kind"]

#: instance type -> (GPU model, GPUs per instance), or ``None`` for an instance without GPUs / unknown.
GpuOf = Callable[[str], "tuple[str, int] | None"]
_ZERO = Decimal(0)


def usage_kind(usage_type: str) -> str:
    """The kind of a usage type, without region prefix and resource suffix.

    >>> usage_kind("USE1-SpotUsage:p5.48xlarge"), usage_kind("BoxUsage:g6.xlarge"), usage_kind("")
    ('SpotUsage', 'BoxUsage', '')
    """
    head = usage_type.partition(":")[0]
    return head.rpartition("-")[2] if "-" in head else head


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _mapping(value: Any) -> dict[str, str]:
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, str):
        parsed = json.loads(value)
        items = parsed.items() if isinstance(parsed, Mapping) else []
    else:  # Parquet map cells arrive as a list of (key, value) pairs
        items = list(value)
    return {str(k): str(v) for k, v in items if v not in (None, "")}


def _money(rec: Mapping[str, Any], column: str) -> Decimal:
    value = decimal_or_none(rec.get(column))
    return _ZERO if value is None else value


def cur2_name(legacy: str) -> str:
    """The CUR 2.0 name of a legacy CUR column: category and column in snake case, every capital letter
    starting a word (so ``ARN`` becomes ``a_r_n``, as in CUR 2.0).

    >>> cur2_name("lineItem/UnblendedCost"), cur2_name("savingsPlan/SavingsPlanARN"), cur2_name("product/regionCode")
    ('line_item_unblended_cost', 'savings_plan_savings_plan_a_r_n', 'product_region_code')
    """
    category, _, column = legacy.partition("/")
    return "_".join(re.sub(r"(?<!^)([A-Z])", r"_\1", part).lower() for part in (category, column) if part)


def cost_basis(columns: Iterable[str]) -> CostBasisName:
    """The cost basis of an export from its columns: ``net`` when it has the net columns, else ``gross``.

    >>> cost_basis(["line_item_unblended_cost", "line_item_net_unblended_cost"]), cost_basis(["line_item_unblended_cost"])
    ('net', 'gross')
    """
    return "net" if NET_BASIS_MARKER in columns else "gross"


_GROSS = COST_BASES["gross"]


def _basis_money(rec: Mapping[str, Any], column: str, gross_column: str, empty: Decimal | None = None) -> Decimal:
    """A basis column's value; an empty cell reads as ``empty`` if given, else as its gross twin (or 0)."""
    value = decimal_or_none(rec.get(column))
    if value is not None:
        return value
    return empty if empty is not None else _money(rec, gross_column)


def _effective(rec: Mapping[str, Any], rule: LineItemRule, basis: CostBasis, billed: Decimal,
               commitment_id: str | None) -> Decimal:
    """EffectiveCost of a line item on the month's cost basis (the table in :mod:`connectors.aws.mapping`)."""
    if rule.effective == "basis" or (rule.effective == "commitment_fee" and not commitment_id):
        return _basis_money(rec, basis.cost, _GROSS.cost)
    if rule.effective == "discount":
        return _basis_money(rec, basis.cost, _GROSS.cost, _ZERO if basis.discount_in_usage else None)
    if rule.effective == "reservation":
        return _basis_money(rec, basis.reservation, _GROSS.reservation)
    if rule.effective == "savings_plan":
        return _basis_money(rec, basis.savings_plan, _GROSS.savings_plan)
    return _ZERO if rule.effective == "commitment_fee" else billed


def _purchase_option(kind: str, rec: Mapping[str, Any], usage: str) -> str | None:
    if kind:
        _, _, _, term_column = COMMITMENT_KINDS[kind]
        term = LEASE_TERMS.get(str(rec.get(term_column) or "").strip().lower())
        return f"{kind.replace('reservation', 'reserved')}_{term}" if term else kind.replace("reservation", "reserved")
    return USAGE_KINDS.get(usage)


def _charge(rec: Mapping[str, Any], rule: LineItemRule, basis: CostBasis, gpu_of: GpuOf) -> dict[str, Any]:
    values: dict[str, Any] = {focus: _text(rec.get(cur)) for cur, focus in CUR_TEXT_COLUMNS.items()}
    for column in ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"):
        values[column] = timestamp(values[column])
    values.update({focus: decimal_or_none(rec.get(cur)) for cur, focus in CUR_DECIMAL_COLUMNS.items()})
    values["PricingUnit"] = focus_unit(values["PricingUnit"])
    arn_column = COMMITMENT_KINDS[rule.commitment][0] if rule.commitment else ""
    commitment_id = _text(rec.get(arn_column)) if arn_column else None
    kind = rule.commitment if commitment_id else ""
    unblended = decimal_or_none(rec.get("line_item_unblended_cost"))
    if unblended is None:  # every line item carries its cost (0 for none): an empty one is not read as 0
        raise InputError("line_item_unblended_cost is empty", where=Location(column="line_item_unblended_cost"),
                         hint="every CUR line item carries its cost (0 for none); export the month again")
    values["BillingCurrency"] = currency_code(values["BillingCurrency"], "line_item_currency_code")
    billed = _ZERO if rule.billed_is_zero else unblended
    effective = _effective(rec, rule, basis, billed, commitment_id)
    list_cost = values["ListCost"] if values["ListCost"] is not None else billed
    is_usage = rule.charge_category == "Usage"
    covered = is_usage and bool(kind)
    usage = usage_kind(str(rec.get("line_item_usage_type") or ""))
    product = _mapping(rec.get("product"))
    instance_type = _text(rec.get("product_instance_type")) or product.get("instance_type")
    option = _purchase_option(kind, rec, usage) if (usage in USAGE_KINDS or not is_usage) else None
    quantity = values["PricingQuantity"]
    hours = quantity if is_usage and usage in USAGE_KINDS and values["PricingUnit"] == "Hours" else None
    if covered:
        pricing: str | None = "Committed"
    elif usage == "SpotUsage":
        pricing = "Dynamic"
    else:
        pricing = "Standard" if rule.charge_category in ("Usage", "Purchase") else None
    product_code = values["ServiceName"] or ""
    details = {k: v for k, v in (("x_InstanceType", instance_type),
                                 ("x_UsageType", _text(rec.get("line_item_usage_type"))),
                                 ("x_Operation", _text(rec.get("line_item_operation")))) if v}
    resource_id = values["ResourceId"] or ""
    resource_type = next((kind for prefix, kind in RESOURCE_TYPES.items() if resource_id.startswith(prefix)),
                         f"{product_code} resource") if resource_id else None
    category = SERVICE_CATEGORIES.get(product_code, "Other")
    tags = _mapping(rec.get("resource_tags"))
    commitment = COMMITMENT_KINDS[kind] if kind else None
    values.update(
        ProviderName="AWS", PublisherName=values["PublisherName"] or "AWS",
        # an export without account names (a legacy CUR) names each account by its id, as FOCUS needs a name
        BillingAccountName=values["BillingAccountName"] or values["BillingAccountId"],
        SubAccountName=values["SubAccountName"] or values["SubAccountId"],
        InvoiceIssuerName=values["InvoiceIssuerName"] or "AWS",
        BillingAccountType="Payer Account" if values["BillingAccountId"] else None,
        SubAccountType="Linked Account" if values["SubAccountId"] else None,
        ChargeCategory=rule.charge_category, ChargeClass=None, ChargeFrequency=rule.charge_frequency,
        ChargeDescription=values["ChargeDescription"] or str(rec.get("line_item_line_item_type")),
        BilledCost=billed, EffectiveCost=effective, ListCost=list_cost,
        ContractedCost=list_cost if covered else unblended, PricingCategory=pricing,
        PricingQuantity=quantity if quantity is not None else _ZERO, PricingUnit=values["PricingUnit"] or "Units",
        PricingCurrency=values["PricingCurrency"] or values["BillingCurrency"],
        ConsumedQuantity=quantity if is_usage else None, ConsumedUnit=values["PricingUnit"] if is_usage else None,
        ServiceCategory=category, ServiceSubcategory=service_subcategory(SERVICE_SUBCATEGORIES, product_code, category),
        ResourceType=resource_type, SkuMeter=_text(rec.get("line_item_usage_type")) if values["SkuId"] else None,
        SkuPriceDetails=json.dumps(details, sort_keys=True) if details else None,
        Tags=json.dumps(tags, sort_keys=True) if tags else None,
        CommitmentDiscountId=commitment_id if kind else None,
        CommitmentDiscountName=commitment_id.rpartition("/")[2] if kind and commitment_id else None,
        CommitmentDiscountCategory=commitment[1] if commitment else None,
        CommitmentDiscountType=commitment[2] if commitment else None,
        CommitmentDiscountStatus="Used" if covered else None,
    )
    gpu = gpu_of(instance_type) if instance_type else None
    return record(**values, **gpu_columns(instance_type, hours, option, gpu))


def _savings_plan_scale(rec: Mapping[str, Any], basis: CostBasis) -> Decimal:
    """The basis's commitment for the billing period / the gross one (1 on the gross basis or when unknown)."""
    gross = sum((_money(rec, c) for c in _GROSS.savings_plan_commitment), _ZERO)
    if basis is _GROSS or gross == 0:
        return Decimal(1)
    pairs = zip(basis.savings_plan_commitment, _GROSS.savings_plan_commitment, strict=True)
    return MONEY_CONTEXT.divide(sum((_basis_money(rec, c, g) for c, g in pairs), _ZERO), gross)


def _unused(rec: Mapping[str, Any], charge: dict[str, Any], basis: CostBasis) -> dict[str, Any] | None:
    """The Unused row of a commitment fee line item, or ``None`` when the whole commitment was used."""
    if charge["CommitmentDiscountType"] == "Reserved Instance":
        pairs = zip(basis.reservation_unused, _GROSS.reservation_unused, strict=True)
        amount = sum((_basis_money(rec, column, gross) for column, gross in pairs), _ZERO)
        quantity = _money(rec, "reservation_unused_quantity")
    elif charge["CommitmentDiscountType"] == "Savings Plan":
        gross_unused = MONEY_CONTEXT.subtract(_money(rec, "savings_plan_total_commitment_to_date"),
                                              _money(rec, "savings_plan_used_commitment"))
        quantity = gross_unused
        amount = MONEY_CONTEXT.multiply(gross_unused, _savings_plan_scale(rec, basis))
    else:
        return None
    if amount <= 0:
        return None
    return {**charge, "ChargeCategory": "Usage", "ChargeFrequency": "Usage-Based",
            "ChargeDescription": f"Unused {charge['CommitmentDiscountType']} commitment",
            "BilledCost": _ZERO, "EffectiveCost": amount, "ListCost": _ZERO, "ContractedCost": _ZERO,
            "PricingCategory": "Committed", "PricingQuantity": quantity, "ConsumedQuantity": None,
            "ConsumedUnit": None, "CommitmentDiscountStatus": "Unused", "x_GpuHours": None}


def focus_rows_from_cur(records: Iterable[Mapping[str, Any]], *, gpu_of: GpuOf, file: str | None = None,
                        first_row: int = 1, basis: CostBasisName | None = None) -> list[dict[str, Any]]:
    """FOCUS records for CUR 2.0 line items (dropped negations, added Unused commitment rows).

    A legacy CUR's records (``lineItem/LineItemType`` headers) are read under their CUR 2.0 names
    (:func:`cur2_name`). ``basis`` is the export's cost basis (:func:`cost_basis` of its columns); by default it is read from
    the first record's columns, which every record of an export shares.

    An unknown ``line_item_line_item_type``, or a cell that does not read as its type (a date that is not
    ISO 8601, a cost that is not a number), fails with its file, row (counting line items from
    ``first_row``, for a file read in batches) and column rather than being guessed."""
    rows: list[dict[str, Any]] = []
    records = list(records)
    if records and LEGACY_CUR_MARKER in records[0]:  # a legacy CUR: the same columns under their CUR 2.0 names
        records = [{cur2_name(k): v for k, v in rec.items()} for rec in records]
    chosen = COST_BASES[basis or cost_basis(records[0] if records else ())]
    for number, rec in enumerate(records, start=first_row):
        kind = str(rec.get("line_item_line_item_type") or "")
        if kind not in LINE_ITEM_TYPES:
            raise InputError(f"unknown CUR line item type {kind!r}",
                             where=Location(file=file, row=number, column="line_item_line_item_type"),
                             hint=f"known: {', '.join(LINE_ITEM_TYPES)}")
        rule = LINE_ITEM_TYPES[kind]
        if rule is None:
            continue
        try:
            charge = _charge(rec, rule, chosen, gpu_of)
            unused = _unused(rec, charge, chosen) if rule.emits_unused else None
        except (ValueError, TypeError, InputError) as error:
            if isinstance(error, InputError) and error.where is not None and error.where.column:  # it knows the column
                raise InputError(error.message, where=Location(file=file, row=number, column=error.where.column),
                                 hint=error.hint) from None
            raise unreadable_cell(rec, CUR_CELL_KINDS, file=file, row=number) or InputError(
                f"line item does not read: {error}", where=Location(file=file, row=number),
                hint="fix the row or export the file again") from error
        rows.append(conform(charge))
        if unused is not None:
            rows.append(conform(unused))
    return rows
