"""A month of FOCUS 1.2 bills for a plan's own GPU fleet, with the surprises a CFO asks about.

``finops demo`` reconciles its plan against these bills, so the review compares the plan with bills of the
fleet the plan sized: the workloads' instances, on the plan's price book, for every hour of the month. The
bills are generated, not sampled: each :class:`FleetLine` (a plan line's instances of one type, from the
plan's TCO sheet) runs ``instances`` instances for every day of the month, one row per instance and day::

    BilledCost = EffectiveCost = hours x rate        ListCost = hours x on-demand rate

where ``rate`` is the price book's hourly price of the line's instance type, region and pricing model (the
price the plan's TCO sheet priced it at) and ``hours`` 24; May has 744 hours, the plan's month 730
(``HoursPerMonth``), so a line that runs as planned is 744 / 730 - 1 = 1.9 % over its plan. Owned servers
are not billed: their cost is the plan's depreciation (CAPEX).

Three surprises (:class:`Surprises`), each where a CFO would look in the review:

* **an unplanned GPU instance**: one on-demand instance (by default a p5.48xlarge, 8 H100) in a sub-account
  that no plan line covers, from a day of the month to its end: it shows as the review's Unmapped cost;
* **a spot interruption**: the first spot line loses its spot capacity for a few days and runs on on-demand
  at the on-demand rate (a replacement instance of its own): the line is over plan by those hours x (on-demand
  - spot);
* **an unused commitment**: a no-upfront 1-year committed-use discount (by default for one GCP
  a3-highgpu-8g, the instance the plan's Mix sheet commits to) whose monthly fee (rate x hours of the month,
  a ``Recurring`` purchase) is billed while nothing runs on it. Google's FOCUS export lists the fee but no
  ``Unused`` rows, so the P&L does not carry it and the review's commitment tie-out (schedule against the
  bills' amortization) flags the gap.

Rows have the columns of the FinOps Foundation's FOCUS 1.2 samples (:data:`FOCUS_COLUMNS`, the header of
``finops/data/bills/focus-1.2-*.csv.gz``), with provider names, SKUs, accounts and resource ids shaped like
AWS's and Google Cloud's. Sub-accounts are named after the plan lines (an AWS linked account, a Google Cloud
project ``<plan line>-<number>``), so the plan's mapping assigns them by sub-account. Money is exact
``Decimal`` (the price book's prices times whole hours); everything is a function of the inputs, so the same
plan gives the same bytes (gzip without a timestamp).
"""

from __future__ import annotations

import calendar
import csv
import gzip
import hashlib
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..errors import InputError
from ..files import write_atomically
from ..price_book import PriceBook

__all__ = ["FOCUS_COLUMNS", "FleetLine", "Surprises", "demo_bill_rows", "write_demo_bills"]

#: The FOCUS 1.2 columns of the bundled FinOps Foundation samples, in their order.
FOCUS_COLUMNS = (
    "ProviderName", "PublisherName", "InvoiceIssuerName", "InvoiceId", "BillingAccountId", "BillingAccountName",
    "BillingAccountType", "SubAccountId", "SubAccountName", "SubAccountType", "BillingPeriodStart",
    "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargeFrequency", "BilledCost", "EffectiveCost", "ListCost", "ContractedCost",
    "ListUnitPrice", "ContractedUnitPrice", "PricingCategory", "PricingQuantity", "PricingUnit", "PricingCurrency",
    "PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice",
    "BillingCurrency", "ConsumedQuantity", "ConsumedUnit", "ServiceName", "ServiceCategory", "ServiceSubcategory",
    "SkuId", "SkuMeter", "SkuPriceId", "SkuPriceDetails", "ResourceId", "ResourceName", "ResourceType", "RegionId",
    "RegionName", "AvailabilityZone", "CommitmentDiscountId", "CommitmentDiscountName",
    "CommitmentDiscountCategory", "CommitmentDiscountType", "CommitmentDiscountStatus",
    "CommitmentDiscountQuantity", "CommitmentDiscountUnit", "CapacityReservationId", "CapacityReservationStatus",
    "Tags",
)


@dataclass(frozen=True)
class FleetLine:
    """A plan line's fleet of one instance type: what the plan's TCO sheet sized and priced for a workload."""

    plan_line: str
    workload: str
    provider: str          # price book provider: aws, gcp
    region: str
    instance_type: str
    instances: int
    pricing_model: str = "on_demand"


@dataclass(frozen=True)
class Surprises:
    """What the month held that the plan did not (see the module docstring)."""

    unplanned_provider: str = "aws"
    unplanned_instance: str = "p5.48xlarge"
    unplanned_region: str = "us-east-1"
    unplanned_account: str = "ml-research"
    unplanned_from_day: int = 18
    spot_interrupted_days: tuple[int, ...] = (12, 13, 14, 15, 16)
    commitment_provider: str = "gcp"
    commitment_instance: str = "a3-highgpu-8g"
    commitment_region: str = "us-central1"
    commitment_model: str = "cud_1y"
    commitment_units: int = 1
    #: the plan line whose Google Cloud project bought the commitment (default: the first GCP line)
    commitment_line: str | None = None


@dataclass(frozen=True)
class _Provider:
    """How one cloud names things in its FOCUS export."""

    name: str
    publisher: str
    invoice: str
    billing_account: tuple[str, str, str]
    sub_account_type: str
    service: str
    resource_type: str


_PROVIDERS = {
    "aws": _Provider("AWS", "AWS", "INV-2026-05-0101", ("100000000101", "ExampleCorp Payer", "Payer Account"),
                     "Linked Account", "AmazonEC2", "EC2 Instance"),
    "gcp": _Provider("Google Cloud", "Google", "INV-2026-05-3F2A10",
                     ("01A2B3-C4D5E6-F70819", "ExampleCorp Billing - Primary", "Billing Account"), "Project",
                     "Compute Engine", "Compute Instance"),
}
_REGION_NAMES = {"us-east-1": "US East (N. Virginia)", "us-west-2": "US West (Oregon)", "us-central1": "Iowa",
                 "us-east4": "Northern Virginia", "europe-west4": "Netherlands"}
_PRICING_CATEGORY = {"on_demand": "Standard", "spot": "Dynamic"}
_HOURS_PER_DAY = 24


def _digest(*parts: object, length: int, alphabet: str = "0123456789abcdef") -> str:
    """A stable id made of ``alphabet`` from ``parts`` (sha256; the same inputs give the same id)."""
    value = int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)
    out = []
    for _ in range(length):
        value, r = divmod(value, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


def _sub_account(provider: str, name: str) -> tuple[str, str]:
    """(SubAccountId, SubAccountName): a 12-digit AWS account, or a Google Cloud project ``name-NNNNNN``."""
    if provider == "aws":
        return "2" + _digest("account", name, length=11, alphabet="0123456789"), name
    return f"{name}-{_digest('project', name, length=6, alphabet='0123456789')}", name


def _price(book: PriceBook, provider: str, instance_type: str, model: str, region: str) -> Decimal:
    try:
        return book.lookup(provider, instance_type, model, region).hourly_cost
    except InputError as exc:
        raise InputError(f"no {model} price for {provider} {instance_type} in {region} to bill the demo fleet",
                         hint="the demo's fleet must be priced in the price book it uses") from exc


class _Month:
    def __init__(self, month: str) -> None:
        year, mon = (int(x) for x in month.split("-"))
        self.month, self.days = month, calendar.monthrange(year, mon)[1]
        self.start = f"{month}-01T00:00:00Z"
        self.end = f"{year + mon // 12:04d}-{mon % 12 + 1:02d}-01T00:00:00Z"

    def day(self, d: int) -> tuple[str, str]:
        start = f"{self.month}-{d:02d}T00:00:00Z"
        return start, (f"{self.month}-{d + 1:02d}T00:00:00Z" if d < self.days else self.end)


def _row(month: _Month, p: _Provider, account: tuple[str, str], **fields: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(FOCUS_COLUMNS, "")
    row.update(ProviderName=p.name, PublisherName=p.publisher, InvoiceIssuerName=p.name, InvoiceId=p.invoice,
               BillingAccountId=p.billing_account[0], BillingAccountName=p.billing_account[1],
               BillingAccountType=p.billing_account[2], SubAccountId=account[0], SubAccountName=account[1],
               SubAccountType=p.sub_account_type, BillingPeriodStart=month.start, BillingPeriodEnd=month.end,
               PricingCurrency="USD", BillingCurrency="USD", ServiceName=p.service, ServiceCategory="Compute",
               ServiceSubcategory="Virtual Machines")
    row.update(fields)
    return row


def _usage(month: _Month, provider: str, account: tuple[str, str], region: str, instance_type: str, model: str,
           rate: Decimal, list_rate: Decimal, instance: str, day: int, tags: dict[str, str]) -> dict[str, object]:
    """One instance's day of usage: ``24 h x rate``."""
    p = _PROVIDERS[provider]
    hours = Decimal(_HOURS_PER_DAY)
    start, end = month.day(day)
    zone = f"{region}a" if provider == "aws" else f"{region}-a"
    if provider == "aws":
        sku = _digest("sku", instance_type, region, model, length=16, alphabet="ABCDEFGHJKMNPQRSTVWXYZ23456789")
        price_id = f"{sku}.JRTCKXETXF.6YS6EN2CT7"
        resource = f"arn:aws:ec2:{region}:{account[0]}:instance/{instance}"
        what = "Spot" if model == "spot" else "On Demand"
        description = f"${rate} per {what} Linux {instance_type} Instance Hour"
    else:
        sku = "-".join(_digest("sku", instance_type, region, model, length=12, alphabet="0123456789ABCDEF")[i:i + 4]
                       for i in (0, 4, 8))
        price_id = _digest("price", sku, length=12, alphabet="0123456789ABCDEF")
        resource = f"//compute.googleapis.com/projects/{account[0]}/zones/{zone}/instances/{instance}"
        description = f"{instance_type} instance running in {_REGION_NAMES.get(region, region)}" + (
            " (Spot Preemptible)" if model == "spot" else "")
    cost = hours * rate
    details = {"InstanceType": instance_type, "OperatingSystem": "Linux"}
    if provider == "gcp":
        details["x_Preemptible"] = "true" if model == "spot" else "false"
    return _row(month, p, account, ChargePeriodStart=start, ChargePeriodEnd=end, ChargeCategory="Usage",
                ChargeDescription=description, ChargeFrequency="Usage-Based", BilledCost=cost, EffectiveCost=cost,
                ListCost=hours * list_rate, ContractedCost=cost, ListUnitPrice=list_rate, ContractedUnitPrice=rate,
                PricingCategory=_PRICING_CATEGORY.get(model, "Standard"), PricingQuantity=hours, PricingUnit="Hours",
                PricingCurrencyContractedUnitPrice=rate, PricingCurrencyEffectiveCost=cost,
                PricingCurrencyListUnitPrice=list_rate, ConsumedQuantity=hours, ConsumedUnit="Hours", SkuId=sku,
                SkuMeter="Compute", SkuPriceId=price_id, SkuPriceDetails=json.dumps(details), ResourceId=resource,
                ResourceName=instance, ResourceType=p.resource_type, RegionId=region,
                RegionName=_REGION_NAMES.get(region, region), AvailabilityZone=zone, Tags=json.dumps(tags))


def _instance_name(provider: str, *parts: object) -> str:
    if provider == "aws":
        return "i-0" + _digest("instance", *parts, length=16)
    return "-".join(str(p) for p in parts[:2]) + "-" + _digest("instance", *parts, length=4, alphabet="0123456789abcdefghijklmnopqrstuvwxyz")


def _tags(provider: str, **values: str) -> dict[str, str]:
    """AWS tags are TitleCase keys, Google Cloud labels lower-case with hyphens."""
    if provider == "aws":
        return {k[0].upper() + k[1:]: v for k, v in values.items()}
    return {"".join("-" + c.lower() if c.isupper() else c for c in k): v for k, v in values.items()}


def demo_bill_rows(fleet: Sequence[FleetLine], book: PriceBook, month: str = "2026-05",
                   surprises: Surprises | None = None) -> Iterator[dict[str, object]]:
    """The month's bill rows of ``fleet`` with ``surprises`` (default :class:`Surprises`; ``None`` fields of
    it default too), AWS and Google Cloud rows as the providers' FOCUS exports write them."""
    s = surprises or Surprises()
    m = _Month(month)
    days = range(1, m.days + 1)
    first_spot = next((f for f in fleet if f.pricing_model == "spot"), None)
    for line in fleet:
        account = _sub_account(line.provider, line.plan_line)
        rate = _price(book, line.provider, line.instance_type, line.pricing_model, line.region)
        on_demand = _price(book, line.provider, line.instance_type, "on_demand", line.region)
        tags = _tags(line.provider, environment="prod", costCenter="cc-1042", owner="team-ml-platform",
                     workload=line.workload)
        for k in range(line.instances):
            name = _instance_name(line.provider, line.workload, k)
            for d in days:
                if line is first_spot and d in s.spot_interrupted_days:
                    yield _usage(m, line.provider, account, line.region, line.instance_type, "on_demand", on_demand,
                                 on_demand, _instance_name(line.provider, line.workload, k, "od"), d, tags)
                else:
                    yield _usage(m, line.provider, account, line.region, line.instance_type, line.pricing_model,
                                 rate, on_demand, name, d, tags)
    account = _sub_account(s.unplanned_provider, s.unplanned_account)
    rate = _price(book, s.unplanned_provider, s.unplanned_instance, "on_demand", s.unplanned_region)
    tags = _tags(s.unplanned_provider, environment="dev", costCenter="cc-4410", owner="team-research")
    name = _instance_name(s.unplanned_provider, s.unplanned_account, s.unplanned_instance)
    for d in range(s.unplanned_from_day, m.days + 1):
        yield _usage(m, s.unplanned_provider, account, s.unplanned_region, s.unplanned_instance, "on_demand", rate,
                     rate, name, d, tags)
    yield _commitment_fee(m, s, book, fleet)


def _commitment_fee(m: _Month, s: Surprises, book: PriceBook, fleet: Sequence[FleetLine]) -> dict[str, object]:
    """The month's fee of a no-upfront commitment: ``units x hourly rate x hours of the month``, a recurring
    purchase (cash, EffectiveCost 0: the usage it covers carries its amortization)."""
    provider = s.commitment_provider
    line = s.commitment_line or next((f.plan_line for f in fleet if f.provider == provider), s.unplanned_account)
    account = _sub_account(provider, line)
    rate = _price(book, provider, s.commitment_instance, s.commitment_model, s.commitment_region)
    hours = Decimal(m.days * _HOURS_PER_DAY)
    fee = s.commitment_units * hours * rate
    years = 3 if s.commitment_model.endswith("3y") else 1
    cud = "cud-" + _digest("cud", account[0], s.commitment_instance, length=10)
    commitment = f"//compute.googleapis.com/projects/{account[0]}/regions/{s.commitment_region}/commitments/{cud}"
    family = s.commitment_instance.split("-")[0].upper()
    return _row(m, _PROVIDERS[provider], account, ChargePeriodStart=m.start, ChargePeriodEnd=m.end,
                ChargeCategory="Purchase",
                ChargeDescription=f"Commitment v1: {family} GPU {s.commitment_instance} in "
                                  f"{_REGION_NAMES.get(s.commitment_region, s.commitment_region)} for {years} year",
                ChargeFrequency="Recurring", BilledCost=fee, EffectiveCost=Decimal(0), ListCost=fee,
                ContractedCost=fee, ListUnitPrice=rate, ContractedUnitPrice=rate, PricingCategory="Committed",
                PricingQuantity=hours * s.commitment_units, PricingUnit="Hours",
                PricingCurrencyContractedUnitPrice=rate, PricingCurrencyEffectiveCost=Decimal(0),
                PricingCurrencyListUnitPrice=rate, SkuId=_digest("cud-sku", s.commitment_instance, length=12,
                                                                 alphabet="0123456789ABCDEF"),
                SkuMeter="Commitment", SkuPriceId=_digest("cud-price", s.commitment_instance, length=12,
                                                           alphabet="0123456789ABCDEF"),
                SkuPriceDetails=json.dumps({"x_Plan": "TWELVE_MONTH" if years == 1 else "THIRTY_SIX_MONTH",
                                            "x_Type": "ACCELERATOR_OPTIMIZED",
                                            "InstanceType": s.commitment_instance}),
                ResourceId=commitment, ResourceName=cud, ResourceType="Committed Use Discount",
                RegionId=s.commitment_region, RegionName=_REGION_NAMES.get(s.commitment_region, s.commitment_region),
                CommitmentDiscountId=commitment, CommitmentDiscountName=f"ResourceBasedCUD-{years}yr-{family}",
                CommitmentDiscountCategory="Usage", CommitmentDiscountType="Committed Use Discount",
                CommitmentDiscountQuantity=hours * s.commitment_units, CommitmentDiscountUnit="Hours",
                Tags=json.dumps(_tags(provider, environment="prod", costCenter="cc-1042", owner="team-ml-platform")))


def write_demo_bills(folder: Path, fleet: Sequence[FleetLine], book: PriceBook, month: str = "2026-05",
                     surprises: Surprises | None = None) -> list[Path]:
    """Write the month's bills of ``fleet``, one gzipped FOCUS CSV per provider (``demo-<provider>-<month>.csv.gz``,
    AWS first), and return their paths."""
    by_provider: dict[str, list[dict[str, object]]] = {}
    for row in demo_bill_rows(fleet, book, month, surprises):
        by_provider.setdefault(str(row["ProviderName"]), []).append(row)
    paths = []
    for key, p in _PROVIDERS.items():
        rows = by_provider.get(p.name)
        if not rows:
            continue
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=FOCUS_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        data = gzip.compress(text.getvalue().encode(), mtime=0)
        paths.append(write_atomically(Path(folder) / f"demo-{key}-{month}.csv.gz", data))
    return paths
