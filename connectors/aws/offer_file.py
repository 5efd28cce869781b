"""AWS bulk price-list offer files (JSON or CSV, optionally gzip) -> the Pricing API's product documents.

A user without Pricing API access downloads an offer file, e.g.
``https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv``, and
loads it offline. Both formats are rebuilt into the documents ``get_products`` returns, so one mapper
(:func:`connectors.aws.pricing.price_rows`) prices all three sources.

- JSON: ``products`` (SKU -> ``{sku, productFamily, attributes}``) and ``terms`` (``OnDemand`` /
  ``Reserved`` -> SKU -> offer term code -> term), plus ``publicationDate``.
- CSV: five metadata lines (``FormatVersion``, ``Disclaimer``, ``Publication Date``, ``Version``,
  ``OfferCode``), then one row per price dimension with the term columns (``TermType``, ``OfferTermCode``,
  ``RateCode``, ``Unit``, ``PricePerUnit``, ``Currency``, ``LeaseContractLength``, ``PurchaseOption``,
  ``OfferingClass``) and the product attributes under display names (``Instance Type``, ``Region Code``...).

Source: "Reading the price list files" (https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finops.errors import InputError, Location
from finops.money import to_price

__all__ = ["CSV_ATTRIBUTES", "OfferFile", "read_offer_file"]

#: CSV display name -> Price List attribute name (the attributes the mapper reads).
CSV_ATTRIBUTES: dict[str, str] = {
    "Instance Type": "instanceType", "Region Code": "regionCode", "Location": "location",
    "Operating System": "operatingSystem", "Tenancy": "tenancy", "Pre Installed S/W": "preInstalledSw",
    "CapacityStatus": "capacitystatus", "vCPU": "vcpu", "Memory": "memory", "GPU": "gpu",
    "Usage Type": "usagetype",
}
_TERM_ATTRIBUTES = ("LeaseContractLength", "OfferingClass", "PurchaseOption")
_METADATA_LINES = 5
#: The columns the mapper cannot do without (the product attributes default to empty).
_CSV_REQUIRED = ("SKU", "TermType", "OfferTermCode", "RateCode", "Unit", "PricePerUnit", "Currency",
                 "Instance Type")
_DOWNLOAD_HINT = ("download it again, e.g. "
                  "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv")


@dataclass(frozen=True)
class OfferFile:
    """The product documents of an offer file and the date AWS published it."""

    publication_date: str
    documents: tuple[Mapping[str, Any], ...]


def read_offer_file(path: str | Path, keep: Callable[[str], bool] = lambda instance_type: True) -> OfferFile:
    """Read an EC2 offer file; ``keep(instance_type)`` picks the products to keep (the files are large).

    JSON or CSV is told from the first character, so a renamed download still reads.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"offer file {path} does not exist", hint=_DOWNLOAD_HINT)
    with path.open("rb") as raw:
        compressed = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        stream = io.TextIOWrapper(gzip.GzipFile(fileobj=raw) if compressed else raw, encoding="utf-8-sig",
                                  newline="")
        try:
            first = stream.read(1)
            stream.seek(0)
            if first == "{":
                return _from_json(_load_json(stream, path.name), keep, path.name)
            return _from_csv(stream, keep, path.name)
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error, csv.Error) as error:
            raise InputError(f"offer file {path.name} is damaged or not text ({type(error).__name__})",
                             where=Location(file=path.name), hint=_DOWNLOAD_HINT) from error


def _load_json(stream: io.TextIOBase, name: str) -> Mapping[str, Any]:
    try:
        return json.load(stream)
    except json.JSONDecodeError as error:
        raise InputError(f"offer file is not valid JSON: {error.msg}",
                         where=Location(file=name, row=error.lineno, column=str(error.colno)),
                         hint=_DOWNLOAD_HINT) from error


def _check_prices(terms: Mapping[str, Any], kind: str, sku: str, name: str) -> None:
    """Every ``pricePerUnit`` of a product's terms of ``kind`` through :func:`~finops.money.to_price`; a bad
    one is named by its path in the file (``terms.OnDemand.<sku>.<term>.priceDimensions.<rate>.pricePerUnit.USD``)."""
    for code, term in (terms.get(kind, {}).get(sku) or {}).items():
        for rate, dimension in (term.get("priceDimensions") or {}).items():
            for currency, amount in (dimension.get("pricePerUnit") or {}).items():
                path = f"terms.{kind}.{sku}.{code}.priceDimensions.{rate}.pricePerUnit.{currency}"
                to_price(amount, where=Location(file=name, column=path), what="pricePerUnit", zero=True)


def _from_json(offer: Mapping[str, Any], keep: Callable[[str], bool], name: str) -> OfferFile:
    if "products" not in offer or "terms" not in offer:
        raise InputError("not an AWS offer file: no 'products' and 'terms'",
                         hint="use a service offer file such as AmazonEC2 .../current/<region>/index.json")
    terms = offer["terms"]
    documents = []
    for sku, product in offer["products"].items():
        if not keep(product.get("attributes", {}).get("instanceType", "")):
            continue
        for kind in ("OnDemand", "Reserved"):
            _check_prices(terms, kind, sku, name)
        documents.append({"product": product, "serviceCode": offer.get("offerCode", "AmazonEC2"),
                          "terms": {kind: terms.get(kind, {}).get(sku, {}) for kind in ("OnDemand", "Reserved")}})
    return OfferFile(str(offer.get("publicationDate", ""))[:10], tuple(documents))


def _from_csv(stream: io.TextIOBase, keep: Callable[[str], bool], name: str) -> OfferFile:
    metadata = {}
    for _ in range(_METADATA_LINES):
        cells = next(csv.reader([stream.readline()]), [])
        if len(cells) >= 2:
            metadata[cells[0]] = cells[1]
    if "OfferCode" not in metadata:
        raise InputError("not an AWS offer CSV: the metadata lines (FormatVersion ... OfferCode) are missing",
                         where=Location(file=name), hint=_DOWNLOAD_HINT)
    reader = csv.DictReader(stream)
    missing = [column for column in _CSV_REQUIRED if column not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"offer CSV header lacks {', '.join(missing)}",
                         where=Location(file=name, row=_METADATA_LINES + 1), hint=_DOWNLOAD_HINT)
    products: dict[str, dict[str, Any]] = {}
    for line, row in enumerate(reader, start=_METADATA_LINES + 2):
        if not keep(row.get("Instance Type", "")) or row.get("TermType") not in ("OnDemand", "Reserved"):
            continue
        sku = row["SKU"]
        document = products.setdefault(sku, {
            "product": {"sku": sku, "productFamily": row.get("Product Family", ""),
                        "attributes": {attr: row.get(col, "") for col, attr in CSV_ATTRIBUTES.items()}},
            "serviceCode": metadata["OfferCode"], "terms": {"OnDemand": {}, "Reserved": {}}})
        code = f"{sku}.{row['OfferTermCode']}"
        term = document["terms"][row["TermType"]].setdefault(code, {
            "sku": sku, "offerTermCode": row["OfferTermCode"], "effectiveDate": row.get("EffectiveDate", ""),
            "priceDimensions": {},
            "termAttributes": {a: row[a] for a in _TERM_ATTRIBUTES if row.get(a)}})
        if not row.get("PricePerUnit") or not row.get("Currency"):
            raise InputError("price row without PricePerUnit or Currency", where=Location(file=name, row=line))
        to_price(row["PricePerUnit"], where=Location(file=name, row=line, column="PricePerUnit"), what="PricePerUnit",
                 zero=True)
        term["priceDimensions"][row["RateCode"]] = {
            "rateCode": row["RateCode"], "unit": row["Unit"], "description": row.get("PriceDescription", ""),
            "pricePerUnit": {row["Currency"]: row["PricePerUnit"]}}
    return OfferFile(metadata.get("Publication Date", "")[:10], tuple(products.values()))

