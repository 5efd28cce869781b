"""GCP billing-export rows -> FOCUS 1.2 records with the ``x_`` GPU columns (pure; tables in ``mapping``).

An export row is a nested dict in the BigQuery shape (``service.description``, ``credits`` as a list
of ``{name, amount, full_name, id, type}``, ``labels`` as ``{key, value}`` pairs); :func:`nest` builds
it from a flat CSV row. :func:`export_row` turns one standard or detailed export row into its usage /
purchase / tax / adjustment record plus one Credit record per credit; :func:`focus_export_row` completes
a row of the FOCUS export with the GPU columns.

GPU columns: ``x_InstanceType`` is the VM's machine type (system label
``compute.googleapis.com/machine_spec``), ``x_GpuModel`` / ``x_GpuCount`` come from the instance
catalog, and ``x_GpuHours`` is set only on GPU and TPU SKU rows (GCP bills every GPU-hour on its own
SKU), so a VM's vCPU and RAM rows never count its GPU-hours twice. A FOCUS-export row priced per VM
(its ``SkuPriceDetails.InstanceType`` set and its description no component SKU) gets
``hours x GPUs per VM``.

>>> row = nest({"cost": "10.0", "currency": "USD", "cost_type": "regular", "invoice.month": "202605",
...             "sku.description": "Nvidia L4 GPU running in Americas", "usage.amount_in_pricing_units": "4",
...             "usage.pricing_unit": "hour", "credits": '[{"name": "Sustained usage discount", "amount": -2.0,'
...             ' "type": "SUSTAINED_USAGE_DISCOUNT", "id": "", "full_name": ""}]'})
>>> [(r["ChargeCategory"], r["BilledCost"], r["EffectiveCost"], r["x_GpuHours"]) for r in export_row(row)]
[('Usage', Decimal('10.0'), Decimal('8.0'), Decimal('4')), ('Credit', Decimal('-2.0'), Decimal('0'), None)]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from connectors.focus_table import (
    NAMES,
    cell,
    conform,
    currency_code,
    decimal_or_none,
    export_value,
    service_subcategory,
    timestamp,
    with_money_checked,
)
from connectors.focus_table import record as focus_record
from finops.depreciation import month_index
from finops.errors import InputError, Location, UnknownNameError
from finops.money import MONEY_CONTEXT

from . import mapping as m
from .commitments import Share, Unused
from .skus import match_rule

__all__ = ["billing_period", "credits_of", "export_row", "focus_export_row", "get", "invoice_month", "key_values",
           "month_period", "nest", "normalized", "unused_row"]

_ZERO = Decimal(0)
_HOUR_UNITS = ("hour", "hours", "h")


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat row (``service.description`` keys, repeated records as JSON text) as a nested export row."""
    row: dict[str, Any] = {}
    for key, value in flat.items():
        target = row
        *parents, leaf = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    for field in m.REPEATED_FIELDS:
        value = get(row, field)
        if isinstance(value, str):
            parent = get(row, field.rsplit(".", 1)[0]) if "." in field else row
            try:
                parent[field.rsplit(".", 1)[-1]] = json.loads(value) if value.strip() else []
            except json.JSONDecodeError:
                pass  # kept as text: refused with its row where the field is read (credits_of, key_values)
    return row


def get(row: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path, ``None`` when any part is missing."""
    value: Any = row
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def month_period(month: str) -> tuple[datetime, datetime]:
    """``YYYY-MM`` -> [its first day, the first day of the next month), naive UTC.

    >>> month_period("2026-12")
    (datetime.datetime(2026, 12, 1, 0, 0), datetime.datetime(2027, 1, 1, 0, 0))
    """
    index = month_index(month)
    return _first_day(index), _first_day(index + 1)


def _first_day(index: int) -> datetime:
    year, month = divmod(index, 12)
    return datetime(year, month + 1, 1)


def invoice_month(value: Any) -> str:
    """The export's ``invoice.month`` as ``YYYYMM``, whichever form it is written in: ``202605`` (as
    BigQuery holds it), ``2026-05`` (as a sheet or a hand-made export writes it), or the number 202605
    (as a JSON reader types it). Anything else is refused, naming the column.

    >>> invoice_month("202605"), invoice_month("2026-05"), invoice_month(202605)
    ('202605', '202605', '202605')
    """
    text = str(value if value is not None else "").strip()
    if len(text) == 7 and text[4] == "-":
        text = text[:4] + text[5:]
    if len(text) != 6 or not text.isdigit() or not 1 <= int(text[4:]) <= 12:
        raise InputError(f"invoice month must be YYYYMM or YYYY-MM, got {value!r}",
                         where=Location(column="invoice.month"),
                         hint="every row of a billing export names its invoice month, e.g. 202605")
    return text


def billing_period(month: Any) -> tuple[datetime, datetime]:
    """The export's ``invoice.month`` (:func:`invoice_month`'s forms) -> [first day, first day of the next month).

    >>> billing_period("202612")
    (datetime.datetime(2026, 12, 1, 0, 0), datetime.datetime(2027, 1, 1, 0, 0))
    """
    text = invoice_month(month)
    return month_period(f"{text[:4]}-{text[4:]}")


def _parsed(value: Any) -> Any:
    """A repeated field's value with JSON text parsed (text that is not JSON kept, to be refused with it); ``None``
    for no value (absent, or blank text)."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def credits_of(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The row's credits, in either shape an export gives them: a list of credit records (BigQuery's
    REPEATED RECORD) or one credit record alone (a hand-made export), either as JSON text too (a JSON
    reader that met both shapes in one file types the field as JSON). Each credit needs its ``amount``;
    anything else in ``credits`` is refused, naming the column.

    >>> [c["amount"] for c in credits_of({"credits": {"name": "Free tier", "amount": -1.5}})]
    [-1.5]
    """
    value = _parsed(row.get("credits"))  # JSON text: a reader that met both shapes
    if value is None:
        return []
    credits = [value] if isinstance(value, Mapping) else value
    if not isinstance(credits, list) or not all(isinstance(c, Mapping) for c in credits):
        raise InputError(f"credits must be a list of credit records, got {str(value)[:60]!r}",
                         where=Location(column="credits"),
                         hint='write credits as the export does: [{"name": ..., "amount": -1.5, "type": ...}]')
    for credit in credits:
        if decimal_or_none(credit.get("amount")) is None:
            raise InputError(f"credit {str(credit.get('name') or credit.get('type') or '?')!r} has no amount",
                             where=Location(column="credits.amount"),
                             hint="every credit of the export carries its amount (negative: it lowers the cost)")
    return credits


def normalized(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with its ``invoice.month`` as ``YYYYMM`` (:func:`invoice_month`) and its ``credits`` as a list
    (:func:`credits_of`), so every step after (commitment amortization, :func:`export_row`) sees one form;
    a row without its cost is refused here."""
    _cost(row)
    invoice = dict(row.get("invoice") or {})
    invoice["month"] = invoice_month(invoice.get("month"))
    return {**row, "invoice": invoice, "credits": credits_of(row)}


def _cost(row: Mapping[str, Any]) -> Decimal:
    """The row's ``cost``: every export row has one (0 for none), so an empty one is refused, not read as 0."""
    cost = decimal_or_none(row.get("cost"))
    if cost is None:
        raise InputError("cost is empty", where=Location(column="cost"),
                         hint="every row of a billing export carries its cost (0 for none); export the month again")
    return cost


def _text(value: Any) -> Any:
    return None if value is None or value == "" else value


def key_values(row: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    """The records of a repeated key/value field (``labels``, ``system_labels``, ``project.labels``, ``tags``) in
    the shape BigQuery exports write it: a list of ``{key, value}`` records (``tags`` adds ``namespace``), as JSON
    text too (a CSV's ``TO_JSON_STRING``, or a JSON reader that met several shapes in one file). Empty or absent
    is no labels. Anything else (an object of names to values, one text, a record without its key) is refused,
    naming the field: a label left out would leave its charge unmapped, or mapped to another plan line.

    >>> key_values({"labels": '[{"key": "team", "value": "ml"}]'}, "labels")
    [{'key': 'team', 'value': 'ml'}]
    >>> key_values({"labels": {"team": "ml"}}, "labels")
    Traceback (most recent call last):
    finops.errors.InputError: column labels: labels must be a list of {key, value} records, got {"team": "ml"}. Hint: write labels as the export does: [{"key": "team", "value": "ml"}]
    """
    value = _parsed(get(row, field))
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, Mapping) and _text(p.get("key")) is not None
                                              for p in value):
        raise InputError(f"{field} must be a list of {{key, value}} records, got {json.dumps(value, default=str)[:60]}",
                         where=Location(column=field),
                         hint=f'write {field} as the export does: [{{"key": "team", "value": "ml"}}]')
    return value


def _pairs(row: Mapping[str, Any], field: str) -> dict[str, str]:
    return {str(p["key"]): str(p.get("value") or "") for p in key_values(row, field)}


def _tags(row: Mapping[str, Any]) -> str | None:
    tags = _pairs(row, "project.labels")
    tags.update(_pairs(row, "labels"))
    for tag in key_values(row, "tags"):
        namespace = f"{tag['namespace']}/" if tag.get("namespace") else ""
        tags[f"{namespace}{tag['key']}"] = str(tag.get("value") or "")
    return json.dumps(tags, sort_keys=True) if tags else None


def _term(*texts: Any) -> str | None:
    lowered = " ".join(str(t or "") for t in texts).lower()
    return next((term for words, term in m.TERMS.items() if words in lowered), None)


def _machine(row: Mapping[str, Any]) -> Any:
    machine = _pairs(row, "system_labels").get(m.MACHINE_SPEC_LABEL)
    if not machine:
        return None
    from finops.catalog.instances import instance

    try:
        return instance("gcp", machine)
    except UnknownNameError:
        return machine  # a machine type without accelerators: keep its name only


def _gpu_columns(row: Mapping[str, Any], purchase: str, quantity: Decimal | None, usage: bool = True,
                 ) -> dict[str, Any]:
    machine = _machine(row)
    known = machine if machine is not None and not isinstance(machine, str) else None
    instance_type = known.instance_type if known else machine
    rule = match_rule(str(get(row, "sku.description") or ""), None)
    if rule is not None and rule.kind in ("gpu", "tpu"):
        unit = str(get(row, "usage.pricing_unit") or "").lower()
        hours = quantity if usage and unit in _HOUR_UNITS else None
        model = m.ACCELERATOR_OF_COMPONENT.get(rule.name, rule.name)
        return {"x_InstanceType": instance_type or (rule.name if rule.kind == "tpu" else None), "x_GpuModel": model,
                "x_GpuCount": known.gpu_count if known else (1 if rule.kind == "tpu" else None),
                "x_GpuHours": hours, "x_PurchaseOption": purchase or None}
    return {"x_InstanceType": instance_type, "x_GpuModel": known.gpu_model if known else None,
            "x_GpuCount": known.gpu_count if known else None, "x_GpuHours": None, "x_PurchaseOption": purchase or None}


def _purchase_option(description: str, fee: bool, cud_credits: list[Mapping[str, Any]]) -> str:
    if fee:
        term = _term(description)
        return f"cud_{term}" if term else "cud"
    if cud_credits:
        term = _term(*(f"{c.get('name')} {c.get('full_name')}" for c in cud_credits))
        return f"cud_{term}" if term else "cud"
    if "preemptible" in description.lower() or "spot" in description.lower():
        return "spot"
    return "on_demand"


def export_row(row: Mapping[str, Any], share: Share | None = None) -> list[dict[str, Any]]:
    """One standard / detailed export row -> its FOCUS records (the charge, then one per credit).

    ``share`` is the row's part in a commitment (:func:`connectors.gcp.commitments.amortize`): a fee row
    gets its ``CommitmentDiscountId`` and ``EffectiveCost = 0``; a covered row adds its share of the fee
    to its ``EffectiveCost``."""
    cost = _cost(row)
    description = str(get(row, "sku.description") or "")
    cost_type = str(row.get("cost_type") or "regular")
    category, charge_class = m.COST_TYPES.get(cost_type, ("Adjustment", None))
    fee = category == "Usage" and description.startswith(m.COMMITMENT_FEE_PREFIXES)
    credits = credits_of(row)
    rules = [(c, m.CREDIT_TYPES.get(str(c.get("type") or ""), m.PROMOTION_LIKE)) for c in credits]
    cud = [c for c, rule in rules if rule.commitment_category]
    purchase = _purchase_option(description, fee, cud) if category == "Usage" else ""
    folded = sum((decimal_or_none(c.get("amount")) or _ZERO for c, rule in rules if rule.folds), _ZERO)
    contracted = sum((decimal_or_none(c.get("amount")) or _ZERO for c, rule in rules if rule.contracted), _ZERO)
    month = invoice_month(get(row, "invoice.month"))
    start, end = billing_period(month)
    base = {column: _text(get(row, path)) for path, column in m.EXPORT_TEXT_COLUMNS.items()}
    base["RegionId"] = base.get("RegionId") or _text(get(row, "location.location"))
    base["BillingCurrency"] = currency_code(row.get("currency"), "currency")
    for column in ("ChargePeriodStart", "ChargePeriodEnd"):
        base[column] = timestamp(base[column])
    base.update({column: decimal_or_none(get(row, path)) for path, column in m.EXPORT_DECIMAL_COLUMNS.items()})
    service = str(base.get("ServiceName") or "")
    service_category = m.SERVICE_CATEGORIES.get(service, "Other")
    base.update({
        "ProviderName": "Google Cloud", "PublisherName": base.get("PublisherName") or "Google",
        "InvoiceIssuerName": "Google Cloud", "BillingAccountName": base.get("BillingAccountId"),
        "InvoiceId": _text(get(row, "invoice.id")) or month, "RegionName": base["RegionId"],
        "BillingAccountType": "Billing Account", "SubAccountType": "Project", "BillingPeriodStart": start,
        "BillingPeriodEnd": end, "ServiceCategory": service_category,
        "ServiceSubcategory": service_subcategory(m.SERVICE_SUBCATEGORIES, service, service_category),
        "SkuMeter": base.get("ChargeDescription") if base.get("SkuId") else None,
        "PricingCurrency": base.get("BillingCurrency"), "Tags": _tags(row),
        "ResourceType": _resource_type(base.get("ResourceId"))})
    base.update(_gpu_columns(row, purchase, base.get("PricingQuantity"), usage=category == "Usage" and not fee))
    commitment = _commitment_columns(cud[0] if cud else None, rules)
    if commitment and share is not None:
        commitment["CommitmentDiscountId"] = share.commitment_id
    if fee:
        commitment = {"CommitmentDiscountCategory": "Spend" if "dollar" in description.lower() else "Usage",
                      "CommitmentDiscountType": "Committed Use Discount", "CommitmentDiscountName": description,
                      "CommitmentDiscountId": share.commitment_id if share else None}
    pricing = {"on_demand": "Standard", "spot": "Dynamic", "": None}.get(purchase, "Committed")
    effective = _ZERO if fee and share is not None else MONEY_CONTEXT.add(cost, folded)
    if share is not None and not fee:
        effective = MONEY_CONTEXT.add(effective, share.amount)
    charge = {**base, **commitment, "ChargeCategory": "Purchase" if fee else category, "ChargeClass": charge_class,
              "ChargeFrequency": "Recurring" if fee else "Usage-Based", "PricingCategory": pricing,
              "BilledCost": cost, "EffectiveCost": effective,
              "ListCost": decimal_or_none(row.get("cost_at_list")) if row.get("cost_at_list") not in (None, "") else cost,
              "ContractedCost": MONEY_CONTEXT.add(cost, contracted)}
    records = [charge]
    for credit, rule in rules:
        amount = decimal_or_none(credit.get("amount")) or _ZERO
        credit_commitment = _commitment_columns(credit if rule.commitment_category else None, rules)
        if credit_commitment:  # FOCUS: CommitmentDiscountStatus only on Usage rows
            credit_commitment.update(CommitmentDiscountStatus=None, CommitmentDiscountId=commitment.get(
                "CommitmentDiscountId") or credit_commitment["CommitmentDiscountId"])
        records.append({**base, **credit_commitment,
                        "ChargeCategory": "Credit", "ChargeClass": charge_class, "ChargeFrequency": "Usage-Based",
                        "ChargeDescription": str(credit.get("full_name") or credit.get("name") or "credit"),
                        "PricingCategory": None, "PricingQuantity": None, "ConsumedQuantity": None,
                        "ContractedUnitPrice": None, "x_GpuHours": None, "BilledCost": amount,
                        "EffectiveCost": _ZERO if rule.folds else amount, "ListCost": _ZERO,
                        "ContractedCost": _ZERO if rule.folds else amount})
    return [conform(focus_record(**r)) for r in records]


def _resource_type(resource_id: Any) -> str | None:
    """FOCUS ResourceType of a resource full name, from its collection (:data:`mapping.RESOURCE_TYPES`).

    >>> _resource_type("//compute.googleapis.com/projects/p/zones/us-central1-a/instances/vm-1")
    'Compute Instance'
    """
    if not resource_id:
        return None
    parts = str(resource_id).rstrip("/").split("/")
    collection = parts[-2] if len(parts) >= 2 and parts[-2] else "resource"
    return m.RESOURCE_TYPES.get(collection, collection)


def _commitment_columns(credit: Mapping[str, Any] | None, rules: list[tuple[Mapping[str, Any], m.CreditRule]],
                        ) -> dict[str, Any]:
    if credit is None:
        return {}
    rule = next(r for c, r in rules if c is credit)
    return {"CommitmentDiscountId": credit.get("id") or None,
            "CommitmentDiscountName": credit.get("full_name") or credit.get("name") or None,
            "CommitmentDiscountCategory": rule.commitment_category,
            "CommitmentDiscountType": "Committed Use Discount", "CommitmentDiscountStatus": "Used"}


def unused_row(fee: Mapping[str, Any], unused: Unused) -> dict[str, Any]:
    """The ``Unused`` FOCUS row of a commitment, from its fee's FOCUS record (FOCUS 1.2: a Usage row with
    ``CommitmentDiscountStatus = Unused``, BilledCost 0, EffectiveCost the unused part of the fee)."""
    return conform({**fee, "ChargeCategory": "Usage", "ChargeFrequency": "Usage-Based", "PricingCategory": "Committed",
            "ChargeDescription": f"Unused commitment: {fee.get('CommitmentDiscountName') or unused.commitment_id}",
            "BilledCost": _ZERO, "EffectiveCost": unused.amount, "ListCost": _ZERO, "ContractedCost": _ZERO,
            "PricingQuantity": unused.quantity, "ConsumedQuantity": None, "ConsumedUnit": None,
            "CommitmentDiscountId": unused.commitment_id, "CommitmentDiscountStatus": "Unused", "x_GpuHours": None})


_JSON_OBJECT_COLUMNS = ("Tags", "SkuPriceDetails")


def _canonical_json(text: Any) -> Any:
    """JSON object text with sorted keys and standard spacing (as BigQuery's JSON columns come back, so a
    CSV export and the BigQuery FOCUS view give the same ``Tags``); anything else unchanged.

    >>> _canonical_json('{"team":"llm","env":"prod"}')
    '{"env": "prod", "team": "llm"}'
    """
    if not isinstance(text, str) or not text.strip().startswith("{"):
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else text


def focus_export_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A FOCUS export row (FOCUS column names) with typed cells and the ``x_`` GPU columns added; a row without
    its ``BilledCost`` or ``EffectiveCost`` (FOCUS requires both on every row, 0 for none) is refused."""
    record = with_money_checked({name: cell(name, export_value(row, name)) for name in NAMES})  # 1.3 / 1.4 too
    for name in _JSON_OBJECT_COLUMNS:  # one text per object, whatever the export's key order and spacing
        record[name] = _canonical_json(record.get(name))
    details = record.get("SkuPriceDetails")
    parsed = json.loads(details) if isinstance(details, str) and details.startswith("{") else {}
    instance_type = parsed.get("InstanceType") or parsed.get("x_InstanceType")
    system = [{"key": m.MACHINE_SPEC_LABEL, "value": instance_type}] if instance_type else []
    shaped = {"system_labels": system, "sku": {"description": record.get("ChargeDescription") or ""},
              "usage": {"pricing_unit": record.get("PricingUnit")}}
    option = m.FOCUS_PURCHASE_OPTIONS.get(str(record.get("PricingCategory") or ""), None)
    if record.get("CommitmentDiscountId") and record.get("ChargeCategory") in ("Usage", "Purchase"):
        option = "cud"
    if option == "cud":
        term = _term(record.get("CommitmentDiscountName"), record.get("CommitmentDiscountType"))
        option = f"cud_{term}" if term else "cud"  # type: ignore[assignment]
    gpu = _gpu_columns(shaped, option or "", record.get("PricingQuantity"), usage=record.get("ChargeCategory") == "Usage")
    vm_level = match_rule(str(record.get("ChargeDescription") or ""), None) is None  # not a vCPU/RAM/GPU SKU row
    if gpu["x_GpuHours"] is None and gpu["x_GpuCount"] and parsed.get("InstanceType") and vm_level:
        hours = record.get("ConsumedQuantity") if str(record.get("ConsumedUnit") or "").lower() in _HOUR_UNITS else None
        if record.get("ChargeCategory") == "Usage" and hours is not None:
            gpu["x_GpuHours"] = MONEY_CONTEXT.multiply(hours, Decimal(gpu["x_GpuCount"]))
    record.update({k: v for k, v in gpu.items() if record.get(k) in (None, "")})
    return record
