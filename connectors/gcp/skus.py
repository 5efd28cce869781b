"""Raw Cloud Billing Catalog SKUs -> priced components (pure; no client, no I/O).

A SKU arrives in the REST API's JSON shape (``skuId``, ``description``, ``category.resourceGroup``,
``category.usageType``, ``serviceRegions``, ``pricingInfo[].pricingExpression.tieredRates[].unitPrice``
with ``units`` + ``nanos``). GCP prices a GPU machine by its parts, so each SKU of interest is one
*component*: a GPU model, the vCPUs or memory of a machine series, bundled Local SSD, or a TPU chip.
Which SKU is which component is the declarative table :data:`RULES` (resource group + description
pattern, first match wins); the usage type gives the pricing model (:data:`USAGE_TYPES`).

Money is exact: ``units + nanos / 10**9`` as a :class:`~decimal.Decimal`. Prices become hourly:
``h`` as is, ``GiBy.h`` per GiB-hour, ``GiBy.mo`` divided by 730 hours per month (Google's
convention for monthly-priced SKUs, also the offline dump's).

Source: Cloud Billing Catalog API reference, ``services.skus.list``
(https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list); description patterns as
in the public catalog (see ``tests/gcp/fixtures``).

>>> sku = {"skuId": "1", "description": "Nvidia L4 GPU running in Americas",
...        "category": {"resourceGroup": "GPU", "usageType": "OnDemand"}, "serviceRegions": ["us-central1"],
...        "pricingInfo": [{"effectiveTime": "2026-07-01T00:00:00Z", "pricingExpression": {"usageUnit": "h",
...            "tieredRates": [{"startUsageAmount": 0,
...                             "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 560040239}}]}}]}
>>> [(c.kind, c.name, c.pricing_model, c.region, c.hourly) for c in priced_components(sku)]
[('gpu', 'l4', 'on_demand', 'us-central1', Decimal('0.560040239'))]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from finops.money import MONEY_CONTEXT, to_decimal, to_price
from finops.price_book import PricingModel

__all__ = ["HOURS_PER_MONTH", "RULES", "USAGE_TYPES", "ComponentKind", "PricedComponent", "Rule", "is_component",
           "match_rule", "money", "priced_components"]

ComponentKind = Literal["gpu", "cpu", "ram", "local_ssd", "tpu"]

#: Catalog ``category.usageType`` -> price-book pricing model. Other usage types are ignored.
USAGE_TYPES: dict[str, PricingModel] = {"OnDemand": "on_demand", "Preemptible": "spot",
                                        "Commit1Yr": "cud_1y", "Commit3Yr": "cud_3y"}
HOURS_PER_MONTH = Decimal(730)
#: ``pricingExpression.usageUnit`` -> divisor giving a price per hour (per GiB-hour for sizes).
_UNIT_DIVISORS = {"h": Decimal(1), "GiBy.h": Decimal(1), "GiBy.mo": HOURS_PER_MONTH}


@dataclass(frozen=True)
class Rule:
    """One component: SKUs of ``resource_group`` (empty: any group) whose description matches ``pattern``."""

    kind: ComponentKind
    name: str
    resource_group: str
    pattern: re.Pattern[str]


def _gpu(name: str, sku_name: str) -> Rule:
    # "<GPU> running in X", "<GPU> attached to Spot Preemptible VMs running in X",
    # "Commitment v1: <GPU> [running ]in X for 1 Year", where <GPU> is the SKU's GPU name ("Nvidia L4 GPU";
    # G4's "RTX 6000 96GB" has no "GPU" word); DWS, sole-tenancy, reserved and vGPU-slice variants do not match.
    return Rule("gpu", name, "GPU", re.compile(
        rf"^(?:Commitment v1: )?{re.escape(sku_name)} (?:running in|attached to Spot Preemptible VMs running in|in) "))


def _series(kind: Literal["cpu", "ram"], series: str) -> Rule:
    on_demand = "Core" if kind == "cpu" else "Ram"
    committed = "(?:Cpu|Core)" if kind == "cpu" else "(?:Ram|Memory)"
    return Rule(kind, series, "CPU" if kind == "cpu" else "RAM", re.compile(
        rf"^(?:(?:Spot Preemptible )?{series} Instance {on_demand} running in |Commitment v1: {series} {committed} in )"))


def _tpu(name: str, words: str) -> Rule:
    # Anywhere in the description, any case: the Compute Engine service lists v5/v6 chips as "TpuV5e",
    # "TpuV5p", "TpuV6e" (possibly after "Preemptible "), the TPU pricing page says "TPU v5e" / "Trillium".
    return Rule("tpu", name, "", re.compile(rf"(?i)\b(?:{words})\b"))


#: SKU -> component, first match wins.
RULES: tuple[Rule, ...] = (
    _gpu("a100-80gb", "Nvidia Tesla A100 80GB GPU"),
    _gpu("a100-40gb", "Nvidia Tesla A100 GPU"),
    _gpu("h100-mega", "Nvidia H100 80GB Mega GPU"),
    _gpu("h100-sxm", "Nvidia H100 80GB GPU"),
    _gpu("h200", "H200 141GB GPU"),
    _gpu("l4", "Nvidia L4 GPU"),
    _gpu("rtx-pro-6000", "RTX 6000 96GB"),  # G4's RTX PRO 6000 Blackwell Server Edition
    _series("cpu", "A2"), _series("ram", "A2"),
    _series("cpu", "A3"), _series("ram", "A3"),
    _series("cpu", "G2"), _series("ram", "G2"),
    _series("cpu", "G4"), _series("ram", "G4"),
    Rule("local_ssd", "local-ssd", "LocalSSD", re.compile(
        r"^(?:SSD backed Local Storage(?: attached to Spot Preemptible VMs)?(?: in | running in |$)|"
        r"Commitment v1: Local SSD in )", re.IGNORECASE)),
    _tpu("tpu-v5e", r"TPU[ -]?v5 ?(?:e|lite)"),
    _tpu("tpu-v5p", r"TPU[ -]?v5p"),
    _tpu("tpu-v6e", r"TPU[ -]?v6e|Trillium"),
)


@dataclass(frozen=True)
class PricedComponent:
    """The hourly price of one unit of a component (a GPU, a vCPU, a GiB, a TPU chip) in one region."""

    kind: ComponentKind
    name: str
    pricing_model: PricingModel
    region: str
    hourly: Decimal
    currency: str
    sku_id: str
    effective_date: str


def money(unit_price: Mapping[str, Any]) -> Decimal:
    """A ``google.type.Money`` (``units`` as int64 text, ``nanos`` as int32) as an exact Decimal.

    >>> money({"units": "2", "nanos": 933908000}), money({"units": "-1", "nanos": -500000000})
    (Decimal('2.933908000'), Decimal('-1.500000000'))
    """
    units = to_decimal(str(unit_price.get("units") or 0))
    nanos = to_decimal(str(unit_price.get("nanos") or 0))
    return MONEY_CONTEXT.add(units, MONEY_CONTEXT.multiply(nanos, Decimal("1E-9")))


def match_rule(description: str, resource_group: str | None) -> Rule | None:
    """The first rule of :data:`RULES` that the SKU matches, or ``None``. A ``None`` resource group
    (billing exports carry only the description) matches any rule's group.

    >>> match_rule("Commitment v1: Nvidia Tesla A100 80GB GPU in Americas for 3 Year", "GPU").name
    'a100-80gb'
    >>> match_rule("Nvidia L4 GPU attached to DWS Defined Duration VMs running in Americas", "GPU") is None
    True
    >>> [getattr(match_rule(d, "GPU"), "name", None) for d in (
    ...     "RTX 6000 96GB attached to Spot Preemptible VMs running in Iowa", "1/8 vGPU no lssd running in Iowa")]
    ['rtx-pro-6000', None]
    """
    for rule in RULES:
        if (resource_group is None or rule.resource_group in ("", resource_group)) and rule.pattern.search(description):
            return rule
    return None


def is_component(description: str, resource_group: str) -> bool:
    """Whether a SKU is one of :data:`RULES`' components (a cheap test before converting it)."""
    return match_rule(description, resource_group) is not None


def _rate(expression: Mapping[str, Any], sku_id: str = "") -> tuple[Decimal, str] | None:
    """The price per usage unit: the first tier with a non-zero price (free allowances come first); a
    negative price is refused (:func:`~finops.money.to_price`)."""
    tiers = sorted(expression.get("tieredRates") or [], key=lambda t: float(t.get("startUsageAmount") or 0))
    for tier in tiers:
        price = tier.get("unitPrice") or {}
        amount = to_price(money(price), what=f"SKU {sku_id or '?'}: unitPrice", zero=True)
        if amount:
            return amount, str(price.get("currencyCode") or "USD")
    return None


def priced_components(sku: Mapping[str, Any], regions: Iterable[str] | None = None) -> list[PricedComponent]:
    """One :class:`PricedComponent` per service region of a SKU that :data:`RULES` knows; else ``[]``.

    The latest ``pricingInfo`` entry is used; regions are limited to ``regions`` when given. A SKU whose
    description says "Preemptible" is a spot price whatever its usage type (TPU SKUs are ``OnDemand``;
    SkyPilot's catalog fetcher, ``sky/catalog/data_fetchers/fetch_gcp.py``, relies on the same).
    """
    category = sku.get("category") or {}
    description = str(sku.get("description") or "")
    model = USAGE_TYPES.get(str(category.get("usageType") or ""))
    if model == "on_demand" and "preemptible" in description.lower():
        model = "spot"  # preemptible TPU SKUs carry usage type OnDemand and say so only in the description
    rule = match_rule(description, str(category.get("resourceGroup") or ""))
    infos = sku.get("pricingInfo") or []
    if model is None or rule is None or not infos:
        return []
    info = max(infos, key=lambda i: str(i.get("effectiveTime") or ""))
    expression = info.get("pricingExpression") or {}
    divisor = _UNIT_DIVISORS.get(str(expression.get("usageUnit") or ""))
    rate = _rate(expression, str(sku.get("skuId") or ""))
    if divisor is None or rate is None:
        return []
    hourly = MONEY_CONTEXT.divide(rate[0], divisor)
    wanted = set(regions) if regions else None
    date = str(info.get("effectiveTime") or "")[:10]
    return [PricedComponent(rule.kind, rule.name, model, region, hourly, rate[1], str(sku.get("skuId") or ""), date)
            for region in sku.get("serviceRegions") or [] if wanted is None or region in wanted]
