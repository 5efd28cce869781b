"""EC2 on-demand and reserved prices: Price List product documents -> price-book rows.

A product document is what the Pricing API's ``get_products`` returns in ``PriceList`` (one JSON *string*
per product, parsed with :func:`json.loads`) and what :mod:`connectors.aws.offer_file` rebuilds from a
bulk offer file: ``product.attributes`` plus ``terms.OnDemand`` / ``terms.Reserved``, each term holding
``priceDimensions`` (unit ``Hrs`` = hourly, unit ``Quantity`` = the upfront fee) and, for reserved terms,
``termAttributes`` (``LeaseContractLength`` 1yr/3yr, ``OfferingClass`` standard/convertible,
``PurchaseOption`` No/Partial/All Upfront).

Effective hourly cost of a reserved term (as FOCUS ``EffectiveCost`` amortizes it)::

    hourly_cost = recurring hourly fee + upfront fee / hours in the term  (8,760 for 1yr, 26,280 for 3yr)

Only Linux, shared tenancy, no pre-installed software, capacity status ``Used`` is priced (the filters
the Pricing API call sends, re-checked here because an offer file holds every variant).

Source: AWS Price List API, "Price List file schema"
(https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from finops.errors import InputError
from finops.money import MONEY_CONTEXT, to_price
from finops.price_book import PriceRow

from .regions import location_of, region_of

__all__ = [
    "GPU_FAMILIES",
    "LEASE_TERMS",
    "PRODUCT_FILTERS",
    "PURCHASE_OPTIONS",
    "GpuLookup",
    "fetch_product_documents",
    "in_gpu_families",
    "price_rows",
    "product_documents",
]

#: The EC2 GPU / accelerator families priced by default (plus whatever the instance catalog lists).
GPU_FAMILIES: tuple[str, ...] = ("p4d", "p4de", "p5", "p5e", "p5en", "p6", "g5", "g6", "g6e", "inf2", "trn1")

#: Price List attribute -> required value (the ``TERM_MATCH`` filters of the API call).
PRODUCT_FILTERS: dict[str, str] = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
                                   "capacitystatus": "Used"}

#: ``LeaseContractLength`` -> (price-book pricing model, hours in the term)
LEASE_TERMS: dict[str, tuple[str, int]] = {"1yr": ("reserved_1y", 8760), "3yr": ("reserved_3y", 26280)}
#: ``PurchaseOption`` -> price-book payment option
PURCHASE_OPTIONS: dict[str, str] = {"No Upfront": "no_upfront", "Partial Upfront": "partial_upfront",
                                    "All Upfront": "all_upfront"}

#: instance type -> (GPU model, GPU count); raises :class:`~finops.errors.UnknownNameError` when unknown.
GpuLookup = Callable[[str], tuple[str, int]]


def in_gpu_families(instance_type: str, families: Iterable[str] = GPU_FAMILIES) -> bool:
    """Whether an instance type belongs to one of the families (``p6-b200.48xlarge`` is in ``p6``).

    >>> in_gpu_families("p6-b200.48xlarge"), in_gpu_families("p5en.48xlarge"), in_gpu_families("m7i.large")
    (True, True, False)
    """
    family = instance_type.split(".")[0]
    return any(family == f or family.startswith(f + "-") for f in families)


@dataclass(frozen=True)
class _Term:
    hourly: Decimal
    upfront: Decimal
    currency: str
    attributes: Mapping[str, str]


def _term(term: Mapping[str, Any], where: str) -> _Term:
    hourly, upfront, currencies = Decimal(0), Decimal(0), set()
    for dimension in term.get("priceDimensions", {}).values():
        (currency, amount), = dimension["pricePerUnit"].items()
        currencies.add(currency)
        unit = dimension.get("unit", "")
        price = to_price(amount, what=f"{where}: pricePerUnit", zero=True)
        if unit in ("Hrs", "Hours", "hours"):
            hourly = MONEY_CONTEXT.add(hourly, price)
        elif unit == "Quantity":
            upfront = MONEY_CONTEXT.add(upfront, price)
        else:
            raise InputError(f"{where}: price dimension in unknown unit {unit!r}", hint="expected Hrs or Quantity")
    if len(currencies) != 1:
        raise InputError(f"{where}: a term needs exactly one currency, got {sorted(currencies)}")
    return _Term(hourly, upfront, currencies.pop(), term.get("termAttributes", {}))


def price_rows(product: Mapping[str, Any], *, gpu_of: GpuLookup, as_of: str, source: str) -> list[PriceRow]:
    """The price-book rows of one product document (empty for a variant outside :data:`PRODUCT_FILTERS`).

    ``as_of`` is the date the prices were read (the price book's ``effective_date``); ``source`` names where.

    >>> doc = {"product": {"sku": "S1", "attributes": {"instanceType": "p5.48xlarge", "regionCode": "us-east-1",
    ...        "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}},
    ...        "terms": {"Reserved": {"S1.T": {"priceDimensions": {
    ...            "a": {"unit": "Hrs", "pricePerUnit": {"USD": "20.00"}},
    ...            "b": {"unit": "Quantity", "pricePerUnit": {"USD": "175200"}}},
    ...        "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard",
    ...                           "PurchaseOption": "Partial Upfront"}}}}}
    >>> row, = price_rows(doc, gpu_of=lambda t: ("h100-sxm", 8), as_of="2026-07-01", source="example")
    >>> row.pricing_model, row.payment_option, row.hourly_cost, row.upfront_cost
    ('reserved_1y', 'partial_upfront', Decimal('40.00'), Decimal('175200'))
    """
    attributes = product.get("product", {}).get("attributes", {})
    if any(attributes.get(k) != v for k, v in PRODUCT_FILTERS.items()):
        return []
    instance_type = attributes.get("instanceType", "")
    region = attributes.get("regionCode") or region_of(attributes.get("location", ""))
    sku = product.get("product", {}).get("sku", "?")
    gpu_model, gpu_count = gpu_of(instance_type)
    terms = product.get("terms", {})
    rows = []
    for term in terms.get("OnDemand", {}).values():
        parsed = _term(term, f"SKU {sku}")
        rows.append(PriceRow("aws", region, instance_type, gpu_model, gpu_count, "on_demand", "", parsed.hourly,
                             Decimal(0), parsed.currency, as_of, f"{source}; on-demand, SKU {sku}"))
    for term in terms.get("Reserved", {}).values():
        parsed = _term(term, f"SKU {sku}")
        lease = parsed.attributes.get("LeaseContractLength", "")
        option = parsed.attributes.get("PurchaseOption", "")
        if lease not in LEASE_TERMS or option not in PURCHASE_OPTIONS:
            raise InputError(f"SKU {sku}: unknown reserved term {lease!r} / {option!r}",
                             hint=f"known: {', '.join(LEASE_TERMS)} and {', '.join(PURCHASE_OPTIONS)}")
        model, hours = LEASE_TERMS[lease]
        effective = MONEY_CONTEXT.add(parsed.hourly, MONEY_CONTEXT.divide(parsed.upfront, Decimal(hours)))
        offering = parsed.attributes.get("OfferingClass", "standard")
        rows.append(PriceRow("aws", region, instance_type, gpu_model, gpu_count, model,  # type: ignore[arg-type]
                             PURCHASE_OPTIONS[option], effective, parsed.upfront,  # type: ignore[arg-type]
                             parsed.currency, as_of,
                             f"{source}; reserved {offering} {lease} {option}, hourly fee {parsed.hourly}, SKU {sku}"))
    return rows


def product_documents(price_list: Iterable[str | Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Parse ``PriceList`` items: JSON strings (as the API sends them) or already-parsed documents."""
    for item in price_list:
        if isinstance(item, str):
            try:
                yield json.loads(item)
            except json.JSONDecodeError as exc:
                raise InputError(f"a PriceList item is not valid JSON: {exc}") from None
        else:
            yield item


def fetch_product_documents(client: Any, instance_types: Iterable[str],
                            regions: Iterable[str] | None = None) -> list[Mapping[str, Any]]:
    """Every matching AmazonEC2 product document, one paginated ``get_products`` per instance type (and
    region, when given). All pages are read before returning, so a failure returns nothing."""
    from .session import pages

    documents: list[Mapping[str, Any]] = []
    for instance_type in instance_types:
        for region in list(regions or [None]):
            wanted = {**PRODUCT_FILTERS, "instanceType": instance_type}
            if region:
                wanted["location"] = location_of(region)
            filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in wanted.items()]
            for page in pages(client, "pricing", "get_products", ServiceCode="AmazonEC2", Filters=filters,
                              FormatVersion="aws_v1"):
                documents.extend(product_documents(page.get("PriceList", [])))
    return documents
