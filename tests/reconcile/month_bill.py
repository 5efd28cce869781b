"""A month of bills shaped like real exports: every resource billed hour by hour, so each charge group holds
hundreds of rows (a test on these catches an aggregate that takes one row instead of the sum).

May 2026 (744 hours), split the way providers deliver it (AWS in two files, first and second half of the
month; GCP in one):

* AWS p5.48xlarge on demand, every hour, partly used hours (ConsumedQuantity 1, 0.75 or 0.5), with the
  connector's ``x_GpuHours``/``x_GpuModel``;
* AWS p4d.24xlarge on demand, every hour, without GPU columns (GPU-hours come from the instance catalog);
* two commitments on p5 usage: a reserved instance (``ri-p5-1``) used every hour, and a savings plan
  (``sp-compute-1``) used 600 hours and unused the other 144, each with its monthly purchase fee;
* p5 spot hours (PricingCategory Dynamic) every fourth hour;
* three credits, a tax line and daily S3 storage;
* GCP a3-highgpu-8g every hour on its own invoice, with a sustained-use credit.

Amounts vary from row to row (a per-hour price drift), so no group's sum equals its largest row times
its row count.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from .conftest import write_bill

MONTH = "2026-05"
START = datetime(2026, 5, 1, tzinfo=timezone.utc)
HOURS = 744

P5_ON_DEMAND = Decimal("55.04")
P4D_ON_DEMAND = Decimal("32.7726")
RI_RATE = Decimal("30.1")
SP_RATE = Decimal("36.2")
SP_USED_HOURS = 600
SPOT_RATE = Decimal("24.08")
A3_RATE = Decimal("88.49")


def _stamp(hour: int) -> str:
    return (START + timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hourly(hour: int, **fields: Any) -> dict[str, Any]:
    return {"ChargePeriodStart": _stamp(hour), "ChargePeriodEnd": _stamp(hour + 1), **fields}


def _drift(hour: int) -> Decimal:
    """A small per-hour price drift (0 to 0.006), so rows of one group are not all equal."""
    return Decimal(hour % 7) / 1000


def _aws_rows(hours: range) -> Iterator[dict[str, Any]]:
    p5 = {"x_InstanceType": "p5.48xlarge", "x_GpuModel": "h100-sxm", "ServiceName": "AmazonEC2"}
    for h in hours:
        used = (Decimal(1), Decimal("0.75"), Decimal("0.5"))[h % 3]
        cost = (P5_ON_DEMAND + _drift(h)) * used
        yield _hourly(h, **p5, ResourceId="i-0p5od", BilledCost=cost, EffectiveCost=cost, ListCost=cost,
                      ContractedCost=cost,
                      ConsumedQuantity=used, PricingQuantity=used, x_GpuHours=8 * used)
        p4d = (P4D_ON_DEMAND + _drift(h))
        yield _hourly(h, ServiceName="AmazonEC2", ResourceId="i-0p4d",
                      SkuPriceDetails='{"InstanceType": "p4d.24xlarge"}', BilledCost=p4d, EffectiveCost=p4d,
                      ListCost=p4d, ContractedCost=p4d)
        ri = RI_RATE + _drift(h)
        yield _hourly(h, **p5, ResourceId="i-0p5ri", CommitmentDiscountId="ri-p5-1",
                      CommitmentDiscountCategory="Usage", CommitmentDiscountType="Reserved Instance",
                      CommitmentDiscountStatus="Used", PricingCategory="Committed", BilledCost=0,
                      EffectiveCost=ri, ListCost=P5_ON_DEMAND, ContractedCost=ri, x_GpuHours=8)
        if h < SP_USED_HOURS:
            yield _hourly(h, **p5, ResourceId="i-0p5sp", CommitmentDiscountId="sp-compute-1",
                          CommitmentDiscountCategory="Spend", CommitmentDiscountType="Savings Plan",
                          CommitmentDiscountStatus="Used", PricingCategory="Committed", BilledCost=0,
                          EffectiveCost=SP_RATE, ListCost=P5_ON_DEMAND + _drift(h), ContractedCost=SP_RATE,
                          x_GpuHours=8)
        else:
            yield _hourly(h, ServiceName="AmazonEC2", CommitmentDiscountId="sp-compute-1",
                          CommitmentDiscountCategory="Spend", CommitmentDiscountType="Savings Plan",
                          CommitmentDiscountStatus="Unused", PricingCategory="Committed", BilledCost=0,
                          EffectiveCost=SP_RATE, ListCost=0, ContractedCost=SP_RATE, ConsumedQuantity=0,
                          ChargeDescription="unused savings plan commitment")
        if h % 4 == 1:
            spot = SPOT_RATE + _drift(h)
            yield _hourly(h, **p5, ResourceId=f"i-0spot{h % 5}", PricingCategory="Dynamic",
                          x_PurchaseOption="spot", BilledCost=spot, EffectiveCost=spot, ListCost=P5_ON_DEMAND,
                          ContractedCost=spot, x_GpuHours=8)
        if h % 24 == 0:
            storage = Decimal("41.337") + _drift(h)
            yield _hourly(h, ChargePeriodEnd=_stamp(h + 24), ServiceName="AmazonS3",
                          ServiceCategory="Storage",
                          ConsumedUnit="GB-Mo", ConsumedQuantity=Decimal("1801.4"), PricingUnit="GB-Mo",
                          BilledCost=storage, EffectiveCost=storage, ListCost=storage, ContractedCost=storage)


def _aws_month_end() -> Iterator[dict[str, Any]]:
    """Charges of the whole month: commitment fees, credits and tax (first file)."""
    whole = {"ChargePeriodStart": _stamp(0), "ChargePeriodEnd": _stamp(HOURS), "ChargeFrequency": "Recurring",
             "ServiceName": "AmazonEC2"}
    ri_fee = RI_RATE * HOURS + sum((_drift(h) for h in range(HOURS)), Decimal(0))
    yield {**whole, "ChargeCategory": "Purchase", "CommitmentDiscountId": "ri-p5-1", "BilledCost": ri_fee,
           "EffectiveCost": 0, "ListCost": 0, "ContractedCost": 0, "ChargeDescription": "RI monthly fee"}
    yield {**whole, "ChargeCategory": "Purchase", "CommitmentDiscountId": "sp-compute-1",
           "BilledCost": SP_RATE * HOURS, "EffectiveCost": 0, "ListCost": 0, "ContractedCost": 0,
           "ChargeDescription": "Savings Plan monthly fee"}
    for credit in ("-500", "-1250.55", "-75.125"):
        yield {**whole, "ChargeCategory": "Credit", "BilledCost": credit, "EffectiveCost": credit,
               "ListCost": 0,
               "ContractedCost": 0, "ChargeDescription": "promotional credit"}
    yield {**whole, "ChargeCategory": "Tax", "ServiceName": "Tax", "BilledCost": "1834.07",
           "EffectiveCost": "1834.07", "ListCost": 0, "ContractedCost": 0, "ChargeDescription": "sales tax"}


def _gcp_rows() -> Iterator[dict[str, Any]]:
    gcp = {"ProviderName": "Google Cloud", "PublisherName": "Google Cloud",
           "InvoiceIssuerName": "Google Cloud",
           "InvoiceId": "G-2026-05", "BillingAccountId": "01AB-CD", "SubAccountId": "acme-ml",
           "SubAccountName": "acme-ml", "ServiceName": "Compute Engine", "RegionId": "us-central1",
           "x_InstanceType": "a3-highgpu-8g", "x_GpuModel": "h100-sxm", "Tags": '{"team":"search"}'}
    for h in range(HOURS):
        cost = A3_RATE + _drift(h)
        yield _hourly(h, **gcp, BilledCost=cost, EffectiveCost=cost, ListCost=cost, ContractedCost=cost,
                      x_GpuHours=8)
    yield {**gcp, "ChargePeriodStart": _stamp(0), "ChargePeriodEnd": _stamp(HOURS),
           "ChargeCategory": "Credit",
           "BilledCost": "-3912.6", "EffectiveCost": "-3912.6", "ListCost": 0, "ContractedCost": 0,
           "x_GpuHours": "", "ChargeDescription": "sustained use discount"}


def write_month_bills(folder: Path) -> list[Path]:
    """The month's three bill files (AWS first half, AWS second half, GCP), gzip CSV."""
    half = HOURS // 2
    return [write_bill(folder / "aws-2026-05-a.csv.gz", [*_aws_rows(range(half)), *_aws_month_end()]),
            write_bill(folder / "aws-2026-05-b.csv.gz", list(_aws_rows(range(half, HOURS)))),
            write_bill(folder / "gcp-2026-05.csv.gz", list(_gcp_rows()))]
