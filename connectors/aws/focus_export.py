"""Normalize AWS's own FOCUS Data Export rows (1.0 to 1.4): typed cells plus the ``x_`` GPU columns.

AWS already maps CUR to FOCUS in this export, so the FOCUS columns are kept as they are (money as exact
decimals, periods as UTC datetimes, ``Tags`` / ``SkuPriceDetails`` as JSON text), a 1.3 or 1.4 export's provider
read from ``ServiceProviderName`` (:func:`~connectors.focus_table.export_value`); AWS's own ``x_`` columns beyond
this product's are dropped. The GPU columns are derived:

- ``x_InstanceType``: ``SkuPriceDetails.InstanceType``, else the suffix of an instance usage type
  (``x_UsageType = USE1-BoxUsage:p5.48xlarge``);
- ``x_PurchaseOption``: ``PricingCategory`` Dynamic -> ``spot``; Committed -> ``reserved`` / ``savings_plan``
  with the term (``_1y`` / ``_3y``) when ``CommitmentDiscountName`` or ``SkuPriceDetails.x_PurchaseTerm`` says
  it; Standard instance usage -> ``on_demand``;
- ``x_GpuHours`` = ``ConsumedQuantity`` in Hours x GPUs per instance, for used (not Unused) usage rows.

>>> row, = focus_rows_from_focus([{"ChargeCategory": "Usage", "PricingCategory": "Committed",
...     "CommitmentDiscountType": "Savings Plan", "CommitmentDiscountName": "ComputeSavingsPlan-3yr-NoUpfront",
...     "ConsumedQuantity": "1.5", "ConsumedUnit": "Hours", "BilledCost": "0", "EffectiveCost": "41.2", "BillingCurrency": "USD",
...     "SkuPriceDetails": '{"InstanceType": "p5.48xlarge"}'}], gpu_of=lambda t: ("h100-sxm", 8))
>>> row["x_PurchaseOption"], row["x_GpuHours"], row["EffectiveCost"]
('savings_plan_3y', Decimal('12.0'), Decimal('41.2'))
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from connectors.focus_table import (
    KINDS,
    NAMES,
    cell,
    export_value,
    gpu_columns,
    record,
    unreadable_cell,
    with_money_checked,
)
from finops.errors import InputError, Location

from .cur import GpuOf, usage_kind
from .mapping import LEASE_TERMS, USAGE_KINDS

__all__ = ["focus_rows_from_focus"]

#: FOCUS CommitmentDiscountType -> x_PurchaseOption kind
COMMITMENT_TYPES: dict[str, str] = {"Reserved Instance": "reserved", "Savings Plan": "savings_plan"}
_FOCUS_NAMES = tuple(name for name in NAMES if not name.startswith("x_"))
_FOCUS_KINDS = {name: KINDS[name] for name in _FOCUS_NAMES}
_TERM = re.compile(r"(?<![0-9])([13])\s*-?\s*(yr|y|year)", re.IGNORECASE)


def _term(*texts: str) -> str | None:
    for text in texts:
        match = _TERM.search(text or "")
        if match:
            return LEASE_TERMS.get(f"{match.group(1)}yr")
    return None


def _gpu_fields(row: Mapping[str, Any], raw: Mapping[str, Any], gpu_of: GpuOf) -> dict[str, Any]:
    details = json.loads(row["SkuPriceDetails"]) if row["SkuPriceDetails"] else {}
    usage = usage_kind(str(raw.get("x_UsageType") or ""))
    instance_type = details.get("InstanceType") or (
        str(raw["x_UsageType"]).rpartition(":")[2] if usage in USAGE_KINDS else None)
    kind = COMMITMENT_TYPES.get(row["CommitmentDiscountType"] or "")
    if row["PricingCategory"] == "Dynamic" or usage == "SpotUsage":
        option: str | None = "spot"
    elif kind:
        term = _term(row["CommitmentDiscountName"] or "", str(details.get("x_PurchaseTerm", "")))
        option = f"{kind}_{term}" if term else kind
    elif instance_type and row["ChargeCategory"] == "Usage":
        option = "on_demand"
    else:
        option = None
    used = row["ChargeCategory"] == "Usage" and row["CommitmentDiscountStatus"] != "Unused"
    hours = row["ConsumedQuantity"] if used and row["ConsumedUnit"] == "Hours" else None
    gpu = gpu_of(instance_type) if instance_type else None
    return gpu_columns(instance_type, hours, option, gpu)


def focus_rows_from_focus(records: Iterable[Mapping[str, Any]], *, gpu_of: GpuOf, file: str | None = None,
                          first_row: int = 1) -> list[dict[str, Any]]:
    """Typed FOCUS records with the GPU columns, one per export row; a cell that does not read as its
    column's type fails with its file, row (counting from ``first_row``) and column."""
    rows = []
    for number, raw in enumerate(records, start=first_row):
        try:
            row = {name: cell(name, export_value(raw, name)) for name in _FOCUS_NAMES}
        except (ValueError, TypeError, InputError) as error:
            raise unreadable_cell(raw, _FOCUS_KINDS, file=file, row=number) or InputError(
                f"FOCUS row does not read: {error}", where=Location(file=file, row=number),
                hint="fix the row or export the file again") from error
        try:
            with_money_checked(row)
        except InputError as error:  # an amount or the currency missing: named with the row
            raise InputError(error.message, where=replace(error.where or Location(), file=file, row=number),
                             hint=error.hint) from None
        try:
            rows.append(record(**row, **_gpu_fields(row, raw, gpu_of)))
        except (ValueError, TypeError, InputError) as error:
            raise unreadable_cell(raw, _FOCUS_KINDS, file=file, row=number) or InputError(
                f"FOCUS row does not read: {error}", where=Location(file=file, row=number),
                hint="fix the row or export the file again") from error
    return rows
