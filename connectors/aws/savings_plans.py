"""Savings Plans rates for EC2 GPU instances -> price-book rows.

``savingsplans.describe_savings_plans_offering_rates`` gives, per offering (plan type, term, payment
option) and usage type, the ``rate`` an instance-hour consumes from the hourly commitment: that *is* the
effective hourly cost. The commitment is paid per the payment option; for one instance committed for the
whole term the upfront part is::

    All Upfront:      rate x hours in the term
    Partial Upfront:  rate x hours in the term / 2   (AWS: "at least half of the commitment upfront")
    No Upfront:       0

Only Linux/UNIX (operation ``RunInstances``), shared tenancy (usage type ``BoxUsage``) is kept. Compute and
EC2 Instance Savings Plans both become ``savings_plan_1y`` / ``savings_plan_3y`` rows; ``source`` says which.

Source: Savings Plans API reference, DescribeSavingsPlansOfferingRates
(https://docs.aws.amazon.com/savingsplans/latest/APIReference/API_DescribeSavingsPlansOfferingRates.html);
payment options: https://docs.aws.amazon.com/savingsplans/latest/userguide/sp-payment-options.html.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from finops.errors import InputError
from finops.money import MONEY_CONTEXT, to_price
from finops.price_book import PriceRow

from .pricing import PURCHASE_OPTIONS, GpuLookup

__all__ = ["DURATIONS", "UPFRONT_SHARE", "fetch_offering_rates", "savings_plan_row"]

#: ``durationSeconds`` -> (pricing model, hours in the term)
DURATIONS: dict[int, tuple[str, int]] = {31536000: ("savings_plan_1y", 8760), 94608000: ("savings_plan_3y", 26280)}
#: share of the term's commitment paid upfront, by payment option
UPFRONT_SHARE: dict[str, Decimal] = {"All Upfront": Decimal(1), "Partial Upfront": Decimal("0.5"),
                                     "No Upfront": Decimal(0)}
_PLAN_NAMES = {"EC2Instance": "EC2 Instance Savings Plan", "Compute": "Compute Savings Plan"}


def savings_plan_row(rate: Mapping[str, Any], *, gpu_of: GpuLookup, as_of: str, source: str) -> PriceRow | None:
    """One offering rate as a price-book row; ``None`` when it is not Linux shared-tenancy EC2 usage.

    >>> rate = {"savingsPlanOffering": {"paymentOption": "All Upfront", "planType": "EC2Instance",
    ...         "durationSeconds": 31536000, "currency": "USD"}, "rate": "30.00", "unit": "Hrs",
    ...         "usageType": "USE1-BoxUsage:p5.48xlarge", "operation": "RunInstances",
    ...         "properties": [{"name": "region", "value": "us-east-1"},
    ...                        {"name": "instanceType", "value": "p5.48xlarge"}]}
    >>> row = savings_plan_row(rate, gpu_of=lambda t: ("h100-sxm", 8), as_of="2026-07-01", source="example")
    >>> row.pricing_model, row.payment_option, row.hourly_cost, row.upfront_cost
    ('savings_plan_1y', 'all_upfront', Decimal('30.00'), Decimal('262800.00'))
    """
    offering = rate["savingsPlanOffering"]
    properties = {p["name"]: p["value"] for p in rate.get("properties", [])}
    if rate.get("operation") != "RunInstances" or "BoxUsage:" not in rate.get("usageType", ""):
        return None
    if rate.get("unit") not in (None, "Hrs"):
        return None
    duration = int(offering["durationSeconds"])
    payment = offering["paymentOption"]
    if duration not in DURATIONS or payment not in UPFRONT_SHARE:
        raise InputError(f"unknown Savings Plan term {duration} s / {payment!r}",
                         hint=f"known durations {sorted(DURATIONS)}, payment options {', '.join(UPFRONT_SHARE)}")
    model, hours = DURATIONS[duration]
    hourly = to_price(rate["rate"], what=f"Savings Plan rate of {rate.get('usageType', '?')}")
    upfront = MONEY_CONTEXT.multiply(MONEY_CONTEXT.multiply(hourly, Decimal(hours)), UPFRONT_SHARE[payment])
    instance_type = properties.get("instanceType") or rate["usageType"].rpartition(":")[2]
    gpu_model, gpu_count = gpu_of(instance_type)
    plan = _PLAN_NAMES.get(offering.get("planType", ""), str(offering.get("planType")))
    return PriceRow("aws", properties["region"], instance_type, gpu_model, gpu_count, model,  # type: ignore[arg-type]
                    PURCHASE_OPTIONS[payment], hourly, upfront, offering.get("currency", "USD"),  # type: ignore[arg-type]
                    as_of, f"{source}; {plan} {payment}")


def fetch_offering_rates(client: Any, instance_types: Iterable[str],
                         regions: Iterable[str] | None = None) -> list[Mapping[str, Any]]:
    """Every EC2 Instance and Compute Savings Plan rate for the instance types (all pages, or an error)."""
    from .session import pages

    filters = [{"name": "instanceType", "values": sorted(set(instance_types))},
               {"name": "tenancy", "values": ["shared"]},
               {"name": "productDescription", "values": ["Linux/UNIX"]}]
    if regions:
        filters.append({"name": "region", "values": sorted(set(regions))})
    rates: list[Mapping[str, Any]] = []
    for page in pages(client, "savingsplans", "describe_savings_plans_offering_rates",
                      savingsPlanTypes=["EC2Instance", "Compute"], products=["EC2"], serviceCodes=["AmazonEC2"],
                      operations=["RunInstances"], filters=filters, maxResults=1000):
        rates.extend(page.get("searchResults", []))
    return rates
