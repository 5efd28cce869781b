"""The bundled offline AWS snapshot (``finops/data/prices/aws-<date>.csv.gz``), built through the mappers.

With Pricing API access the snapshot is refreshed like any pull::

    finops prices pull --provider aws --out finops/data/prices/aws-<date>.csv.gz

Without it (as when this product was built), ``data/recorded-prices.csv`` holds price observations copied
from public, cited documents, one per row with its ``source`` and ``as_of`` date. :func:`build_snapshot`
turns each on-demand or reserved observation into a Price List product document (the shape
``get_products`` returns; a reserved one has a standard-class ``Reserved`` term) and each spot observation
into a :class:`~connectors.aws.spot.SpotSummary`, and prices them with the same
:func:`~connectors.aws.pricing.price_rows` and :func:`~connectors.aws.spot.spot_rows` a live pull uses;
so the snapshot has exactly the live rows' form. A recorded reserved price is the term's *effective*
hourly rate (hourly fee + upfront fee / hours in the term, as public price catalogs publish it): for No
Upfront that is the hourly fee; for All Upfront the document carries a zero hourly fee and the upfront fee
``price x hours in the term`` (8,760 or 26,280), which the mapper amortizes back to exactly ``price``.
Partial Upfront cannot be recorded that way (the split between fee and hourly rate is not in the
effective rate). Run ``python -m connectors.aws.snapshot OUT`` to
rebuild it.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Mapping
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from finops.errors import InputError, Location
from finops.money import to_decimal
from finops.price_book import PriceBook, PriceRow

from .pricing import LEASE_TERMS, PRODUCT_FILTERS, PURCHASE_OPTIONS, GpuLookup, price_rows
from .regions import location_of
from .spot import SpotSummary, spot_rows

__all__ = ["RECORDED", "build_snapshot", "product_document", "recorded_observations"]

RECORDED = "recorded-prices.csv"
_COLUMNS = ("instance_type", "region", "pricing_model", "payment_option", "zone", "price", "source", "as_of")
_OPTIONAL = ("payment_option", "zone")
#: price-book reserved pricing model -> Price List ``LeaseContractLength``
_LEASES = {model: lease for lease, (model, _hours) in LEASE_TERMS.items()}
_HOURS = {model: hours for _lease, (model, hours) in LEASE_TERMS.items()}
#: pricing model -> the payment options a recorded price may have
_RECORDED_KINDS = {"on_demand": ("",), "spot": ("",), **{model: ("no_upfront", "all_upfront") for model in _LEASES}}


def recorded_observations(text: str | None = None) -> list[dict[str, str]]:
    """The recorded observations (the bundled file unless ``text`` is given); every row needs a source and date."""
    if text is None:
        text = resources.files("connectors.aws").joinpath("data", RECORDED).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    for line, row in enumerate(rows, start=2):
        if None in row:
            raise InputError("recorded price with more cells than columns (quote text holding commas)",
                             where=Location(file=RECORDED, row=line))
        missing = [c for c in _COLUMNS if c not in row or (c not in _OPTIONAL and not row[c])]
        if missing or row["pricing_model"] not in _RECORDED_KINDS:
            raise InputError(f"recorded price without {', '.join(missing) or 'a known pricing_model'}",
                             where=Location(file=RECORDED, row=line),
                             hint=f"pricing_model is one of {', '.join(_RECORDED_KINDS)}")
        allowed = _RECORDED_KINDS[row["pricing_model"]]
        if row["payment_option"] not in allowed:
            raise InputError(f"a recorded {row['pricing_model']} price needs payment_option "
                             f"{' or '.join(o or 'empty' for o in allowed)}, got {row['payment_option']!r}",
                             where=Location(file=RECORDED, row=line),
                             hint="a reserved price is its effective hourly rate; partial upfront cannot be split")
    return rows


def product_document(instance_type: str, region: str, hourly: str, currency: str = "USD",
                     pricing_model: str = "on_demand", payment_option: str = "") -> dict[str, Any]:
    """A Price List product document with one term, as ``get_products`` returns it: on-demand, or (for
    ``reserved_1y`` / ``reserved_3y``) a standard reserved term whose effective hourly rate is ``hourly``,
    No Upfront (an hourly fee) or All Upfront (an upfront fee of ``hourly`` x the term's hours).

    >>> doc = product_document("g6.xlarge", "us-east-1", "0.8048")
    >>> doc["product"]["attributes"]["location"], doc["terms"]["OnDemand"]["REC.g6.xlarge.us-east-1.OD"]["sku"]
    ('US East (N. Virginia)', 'REC.g6.xlarge.us-east-1')
    >>> term, = product_document("g6.xlarge", "us-east-1", "0.489041", pricing_model="reserved_1y",
    ...                          payment_option="all_upfront")["terms"]["Reserved"].values()
    >>> [(d["unit"], d["pricePerUnit"]["USD"]) for d in term["priceDimensions"].values()]
    [('Hrs', '0'), ('Quantity', '4283.999160')]
    """
    sku = f"REC.{instance_type}.{region}"
    dimensions = {"HRS": ("Hrs", hourly)}
    code, kind, attributes = "OD", "OnDemand", {}
    if pricing_model != "on_demand":
        option = next(name for name, value in PURCHASE_OPTIONS.items() if value == payment_option)
        code, kind = f"RI{_LEASES[pricing_model]}", "Reserved"
        attributes = {"LeaseContractLength": _LEASES[pricing_model], "OfferingClass": "standard",
                      "PurchaseOption": option}
        if payment_option == "all_upfront":
            dimensions = {"HRS": ("Hrs", "0"), "UPF": ("Quantity", str(to_decimal(hourly) * _HOURS[pricing_model]))}
    return {"product": {"sku": sku, "productFamily": "Compute Instance",
                        "attributes": {**PRODUCT_FILTERS, "instanceType": instance_type, "regionCode": region,
                                       "location": location_of(region)}},
            "serviceCode": "AmazonEC2",
            "terms": {kind: {f"{sku}.{code}": {
                "sku": sku, "offerTermCode": code, "termAttributes": attributes,
                "priceDimensions": {f"{sku}.{code}.{key}": {"unit": unit, "pricePerUnit": {currency: amount}}
                                    for key, (unit, amount) in dimensions.items()}}}}}


def build_snapshot(observations: Iterable[Mapping[str, str]], *, gpu_of: GpuLookup) -> PriceBook:
    """Price the observations through the live mappers; each row keeps its observation's source and date."""
    rows: list[PriceRow] = []
    for obs in observations:
        if obs["pricing_model"] != "spot":
            document = product_document(obs["instance_type"], obs["region"], obs["price"],
                                        pricing_model=obs["pricing_model"], payment_option=obs["payment_option"])
            rows += price_rows(document, gpu_of=gpu_of, as_of=obs["as_of"], source=obs["source"])
        else:
            price = to_decimal(obs["price"])
            summary = SpotSummary(obs["region"], obs["zone"] or "the region's cheapest zone", obs["instance_type"],
                                  price, price, price, 1, obs["as_of"], obs["as_of"])
            rows += spot_rows([summary], gpu_of=gpu_of, as_of=obs["as_of"], source=obs["source"])
    return PriceBook(sorted(rows, key=lambda r: (r.instance_type, r.region, r.pricing_model, r.payment_option)))


def main(argv: list[str]) -> int:
    """``python -m connectors.aws.snapshot [OUT]``: rebuild the snapshot (default: today's file name)."""
    from . import _required_gpu

    out = Path(argv[0]) if argv else Path(f"finops/data/prices/aws-{date.today().isoformat()}.csv.gz")
    book = build_snapshot(recorded_observations(), gpu_of=_required_gpu)
    book.write_csv(out)
    print(f"wrote {len(book)} AWS prices to {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
