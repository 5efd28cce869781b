"""Cost Explorer ``get_cost_and_usage`` for one month -> FOCUS records: the light alternative to exports.

Two queries (Cost Explorer groups by at most two dimensions), monthly granularity, metrics
``AmortizedCost``, ``UnblendedCost`` and ``UsageQuantity``:

1. grouped by ``SERVICE``: one row per service;
2. EC2 compute only (``SERVICE = Amazon Elastic Compute Cloud - Compute``), grouped by ``INSTANCE_TYPE`` and
   ``PURCHASE_TYPE``: one row per instance type and purchase type, replacing that service's row (any
   remainder of the service total is kept as its own row, so totals always tie out).

FOCUS mapping: ``BilledCost`` = UnblendedCost, ``EffectiveCost`` = AmortizedCost (upfront fees spread over
the term, unused commitment included, as Cost Explorer's amortized view defines it). Cost Explorer has no
list price, so ``ListCost`` and ``ContractedCost`` repeat ``BilledCost``. The service ``Tax`` becomes
``ChargeCategory = Tax``; everything else is ``Usage`` (Cost Explorer does not separate purchases).

Source: Cost Explorer API reference, GetCostAndUsage
(https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetCostAndUsage.html).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from connectors.focus_table import gpu_columns, record
from finops.money import MONEY_CONTEXT, to_decimal

from .cur import GpuOf
from .mapping import CE_PURCHASE_TYPES

__all__ = ["EC2_COMPUTE", "METRICS", "cost_explorer_rows", "fetch_cost_and_usage"]

EC2_COMPUTE = "Amazon Elastic Compute Cloud - Compute"
METRICS = ("AmortizedCost", "UnblendedCost", "UsageQuantity")
_NO_INSTANCE = "NoInstanceType"


def _period(month: str) -> dict[str, str]:
    year, number = (int(part) for part in month.split("-"))
    following = f"{year + number // 12:04d}-{number % 12 + 1:02d}"
    return {"Start": f"{month}-01", "End": f"{following}-01"}


def fetch_cost_and_usage(client: Any, month: str) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The ``ResultsByTime`` of both queries for ``month`` (every page of each)."""
    from .session import pages

    common = {"TimePeriod": _period(month), "Granularity": "MONTHLY", "Metrics": list(METRICS)}
    by_service: list[Mapping[str, Any]] = []
    for page in pages(client, "ce", "get_cost_and_usage", token="NextPageToken", **common,
                      GroupBy=[{"Type": "DIMENSION", "Key": "SERVICE"}]):
        by_service.extend(page.get("ResultsByTime", []))
    by_instance: list[Mapping[str, Any]] = []
    for page in pages(client, "ce", "get_cost_and_usage", token="NextPageToken", **common,
                      Filter={"Dimensions": {"Key": "SERVICE", "Values": [EC2_COMPUTE]}},
                      GroupBy=[{"Type": "DIMENSION", "Key": "INSTANCE_TYPE"},
                               {"Type": "DIMENSION", "Key": "PURCHASE_TYPE"}]):
        by_instance.extend(page.get("ResultsByTime", []))
    return by_service, by_instance


def _amount(metrics: Mapping[str, Any], name: str) -> tuple[Decimal, str]:
    metric = metrics.get(name) or {"Amount": "0", "Unit": ""}
    return to_decimal(metric["Amount"]), str(metric.get("Unit", ""))


def _row(period: Mapping[str, str], service: str, billed: Decimal, effective: Decimal, currency: str,
         description: str, **extra: Any) -> dict[str, Any]:
    start, end = datetime.fromisoformat(period["Start"]), datetime.fromisoformat(period["End"])
    return record(ProviderName="AWS", PublisherName="AWS", InvoiceIssuerName="AWS",
                  BillingPeriodStart=start, BillingPeriodEnd=end, ChargePeriodStart=start, ChargePeriodEnd=end,
                  ChargeCategory="Tax" if service == "Tax" else "Usage", ChargeFrequency="Usage-Based",
                  ChargeDescription=description, BilledCost=billed, EffectiveCost=effective, ListCost=billed,
                  ContractedCost=billed, BillingCurrency=currency, PricingCurrency=currency, ServiceName=service,
                  ServiceCategory="Compute" if service == EC2_COMPUTE else "Other", **extra)


def cost_explorer_rows(by_service: Iterable[Mapping[str, Any]], by_instance: Iterable[Mapping[str, Any]], *,
                       gpu_of: GpuOf, account: str = "") -> list[dict[str, Any]]:
    """FOCUS records from both queries' ``ResultsByTime``.

    >>> period = {"Start": "2026-05-01", "End": "2026-06-01"}
    >>> usd = lambda a: {"Amount": a, "Unit": "USD"}
    >>> services = [{"TimePeriod": period, "Groups": [{"Keys": ["Amazon Elastic Compute Cloud - Compute"],
    ...     "Metrics": {"AmortizedCost": usd("900"), "UnblendedCost": usd("1000")}}]}]
    >>> instances = [{"TimePeriod": period, "Groups": [{"Keys": ["p5.48xlarge", "Savings Plans"],
    ...     "Metrics": {"AmortizedCost": usd("800"), "UnblendedCost": usd("950"),
    ...                 "UsageQuantity": {"Amount": "20", "Unit": "Hrs"}}}]}]
    >>> rows = cost_explorer_rows(services, instances, gpu_of=lambda t: ("h100-sxm", 8))
    >>> [(r["x_InstanceType"], r["EffectiveCost"], r["x_GpuHours"], r["x_PurchaseOption"]) for r in rows]
    [('p5.48xlarge', Decimal('800'), Decimal('160'), 'savings_plan'), (None, Decimal('100'), None, None)]
    """
    account_fields = {"BillingAccountId": account or None, "BillingAccountName": account or None}
    instance_totals: dict[tuple[str, str], list[Decimal]] = {}
    rows: list[dict[str, Any]] = []
    for result in by_instance:
        period = result["TimePeriod"]
        for group in result.get("Groups", []):
            instance_type, purchase = group["Keys"]
            effective, currency = _amount(group["Metrics"], "AmortizedCost")
            billed, _ = _amount(group["Metrics"], "UnblendedCost")
            hours, unit = _amount(group["Metrics"], "UsageQuantity")
            totals = instance_totals.setdefault((period["Start"], period["End"]), [Decimal(0), Decimal(0)])
            totals[0], totals[1] = MONEY_CONTEXT.add(totals[0], billed), MONEY_CONTEXT.add(totals[1], effective)
            known = instance_type if instance_type != _NO_INSTANCE else None
            gpu = gpu_of(known) if known else None
            option = CE_PURCHASE_TYPES.get(purchase)
            rows.append(_row(period, EC2_COMPUTE, billed, effective, currency or "USD",
                             f"{purchase} {instance_type}", PricingQuantity=hours,
                             PricingUnit="Hours" if unit == "Hrs" else unit or None,
                             ConsumedQuantity=hours, ConsumedUnit="Hours" if unit == "Hrs" else unit or None,
                             PricingCategory="Dynamic" if option == "spot" else
                             ("Committed" if option in ("reserved", "savings_plan") else "Standard"),
                             **account_fields,
                             **gpu_columns(known, hours if unit == "Hrs" else None, option, gpu)))
    for result in by_service:
        period = result["TimePeriod"]
        for group in result.get("Groups", []):
            service = group["Keys"][0]
            effective, currency = _amount(group["Metrics"], "AmortizedCost")
            billed, _ = _amount(group["Metrics"], "UnblendedCost")
            if service == EC2_COMPUTE:
                detailed = instance_totals.get((period["Start"], period["End"]), [Decimal(0), Decimal(0)])
                billed = MONEY_CONTEXT.subtract(billed, detailed[0])
                effective = MONEY_CONTEXT.subtract(effective, detailed[1])
                if billed == 0 and effective == 0:
                    continue
            rows.append(_row(period, service, billed, effective, currency or "USD", service, **account_fields))
    return rows
