"""Declarative tables: GCP billing-export vocabulary -> FOCUS 1.2 (pure data, applied by ``bills``).

The standard and detailed usage cost exports have one row per SKU, project, resource and hour, with
``cost`` before credits and the credits (committed use, sustained use, promotions...) as a repeated
record on the same row. FOCUS wants each credit as its own row. How a row becomes FOCUS rows:

==========================  ==========  ===========  =====================  ================================
export row                  category    frequency    BilledCost             EffectiveCost
==========================  ==========  ===========  =====================  ================================
cost_type regular (usage)   Usage       Usage-Based  cost                   cost + credits whose type folds
                                                                            + its share of a commitment fee
regular, commitment fee     Purchase    Recurring    cost                   0 (amortized into covered usage)
unused part of a fee        Usage       Usage-Based  0                      fee - shares (Status Unused)
cost_type tax               Tax         Usage-Based  cost                   cost
adjustment, rounding_error  Adjustment  Usage-Based  cost                   cost (ChargeClass Correction for
                                                                            adjustments)
each credit of a row        Credit      Usage-Based  credit amount (< 0)    0 if the type folds, else amount
==========================  ==========  ===========  =====================  ================================

A credit type *folds* (:data:`CREDIT_TYPES`) when it is a reduced rate of the usage it sits on
(committed use, sustained use, negotiated discounts, free tier, subscription benefits): the usage row's
``EffectiveCost`` already nets it, so its Credit row carries ``EffectiveCost = 0``. Promotions and other
credits are not rates; they stay in ``EffectiveCost`` on their own Credit row. A committed-use credit
cancels the covered on-demand cost; the commitment's fee is then amortized into the covered rows and
its unused part (:mod:`connectors.gcp.commitments`), with ``CommitmentDiscountId`` on the fee, the
covered usage, its credits and the Unused row. Either way ``sum(BilledCost)`` is the invoice total
(cost + credits) and so is ``sum(EffectiveCost)``: nothing is counted twice. ``InvoiceId`` is the
export's ``invoice.id`` where it has one, else its ``invoice.month`` (one invoice per billing account and
month); ``RegionId`` and ``RegionName`` are ``location.region``, else ``location.location``.

Sources: "Structure of Standard/Detailed data export" (https://cloud.google.com/billing/docs/how-to/
export-data-bigquery-tables/standard-usage, .../detailed-usage), "FOCUS export"
(.../focus-export), and FOCUS 1.2 (https://focus.finops.org/focus-specification/v1-2/).

>>> CREDIT_TYPES["COMMITTED_USAGE_DISCOUNT"].folds, CREDIT_TYPES["PROMOTION"].folds
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "ACCELERATOR_OF_COMPONENT",
    "COMMITMENT_CREDIT_PREFIXES",
    "COMMITMENT_FEE_PREFIXES",
    "COST_TYPES",
    "CREDIT_TYPES",
    "EXPORT_DECIMAL_COLUMNS",
    "EXPORT_TEXT_COLUMNS",
    "FOCUS_PURCHASE_OPTIONS",
    "MACHINE_SPEC_LABEL",
    "PROMOTION_LIKE",
    "PURCHASE_OPTIONS",
    "REPEATED_FIELDS",
    "RESOURCE_TYPES",
    "SERVICE_CATEGORIES",
    "SERVICE_SUBCATEGORIES",
    "SUBJECT_WORDS",
    "TABLE_PREFIXES",
    "TERMS",
    "CreditRule",
    "ExportKind",
    "PurchaseOption",
]

#: The three export tables: standard usage cost, detailed (resource-level) usage cost, FOCUS.
ExportKind = Literal["standard", "detailed", "focus"]
#: BigQuery table-name prefix -> export kind (longest first).
TABLE_PREFIXES: tuple[tuple[str, ExportKind], ...] = (
    ("gcp_billing_export_resource_v1_", "detailed"), ("gcp_billing_export_focus_", "focus"),
    ("gcp_billing_export_v1_", "standard"))

#: x_PurchaseOption: price-book pricing models where the term is known, ``cud`` where it is not.
PurchaseOption = Literal["on_demand", "spot", "cud_1y", "cud_3y", "cud"]
PURCHASE_OPTIONS: tuple[str, ...] = get_args(PurchaseOption)


@dataclass(frozen=True)
class CreditRule:
    """How one ``credits.type`` is accounted: folded into the usage's effective cost or not, and which
    FOCUS commitment-discount category it represents (``""`` when none)."""

    folds: bool
    commitment_category: Literal["", "Usage", "Spend"] = ""
    contracted: bool = False  # a negotiated rate: also nets ContractedCost


#: ``credits.type`` -> rule. Unknown types are treated like promotions (kept as their own cost).

CREDIT_TYPES: dict[str, CreditRule] = {
    "COMMITTED_USAGE_DISCOUNT": CreditRule(True, "Usage"),
    "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE": CreditRule(True, "Spend"),
    "SUSTAINED_USAGE_DISCOUNT": CreditRule(True),
    "DISCOUNT": CreditRule(True, contracted=True),
    "RESELLER_MARGIN": CreditRule(True, contracted=True),
    "SUBSCRIPTION_BENEFIT": CreditRule(True),
    "FEE_UTILIZATION_OFFSET": CreditRule(True),
    "FREE_TIER": CreditRule(True),
    "PROMOTION": CreditRule(False),
}
PROMOTION_LIKE = CreditRule(False)

#: ``cost_type`` -> (ChargeCategory, ChargeClass).
COST_TYPES: dict[str, tuple[str, str | None]] = {
    "regular": ("Usage", None), "tax": ("Tax", None), "adjustment": ("Adjustment", "Correction"),
    "rounding_error": ("Adjustment", None)}

#: SKU descriptions of commitment fees (resource-based and spend-based): ChargeCategory Purchase.
COMMITMENT_FEE_PREFIXES: tuple[str, ...] = ("Commitment v1:", "Commitment - dollar based v1:", "Commitment:")
#: Committed-use credit names before the subject they cover (``Committed use discount: Nvidia H100 80GB GPU``).
COMMITMENT_CREDIT_PREFIXES: tuple[str, ...] = ("Committed use discount - dollar based:", "Committed use discount:",
                                               "Committed Use Discount:")
#: Words that name the same resource in fee SKUs and credit names (``A2 Cpu`` fee, ``A2 Core`` credit).
SUBJECT_WORDS: dict[str, str] = {"cpu": "core", "cores": "core", "memory": "ram"}
#: Term words in SKU descriptions and credit names -> price-book term suffix.
TERMS: dict[str, str] = {"1 year": "1y", "3 year": "3y", "1 yr": "1y", "3 yr": "3y", "1yr": "1y", "3yr": "3y",
                         "12 month": "1y", "36 month": "3y", "twelve_month": "1y", "thirty_six_month": "3y"}

#: Export field (dotted path) -> FOCUS text/timestamp column, copied as is.
EXPORT_TEXT_COLUMNS: dict[str, str] = {
    "billing_account_id": "BillingAccountId",
    "project.id": "SubAccountId",
    "project.name": "SubAccountName",
    "service.description": "ServiceName",
    "sku.id": "SkuId",
    "sku.description": "ChargeDescription",
    "usage_start_time": "ChargePeriodStart",
    "usage_end_time": "ChargePeriodEnd",
    "location.region": "RegionId",
    "location.zone": "AvailabilityZone",
    "resource.global_name": "ResourceId",
    "resource.name": "ResourceName",
    "currency": "BillingCurrency",
    "usage.pricing_unit": "PricingUnit",
    "usage.unit": "ConsumedUnit",
    "seller_name": "PublisherName",
}
#: Export field -> FOCUS decimal column, copied as exact decimals.
EXPORT_DECIMAL_COLUMNS: dict[str, str] = {
    "usage.amount_in_pricing_units": "PricingQuantity",
    "usage.amount": "ConsumedQuantity",
    "price.effective_price": "ContractedUnitPrice",
}
#: Repeated records (arrays of structs): exported files carry them as lists, or as JSON text in CSV.
REPEATED_FIELDS: tuple[str, ...] = ("credits", "labels", "system_labels", "tags", "project.labels")
#: The system label naming a VM's machine type (``a3-highgpu-8g``).
MACHINE_SPEC_LABEL = "compute.googleapis.com/machine_spec"

#: ``service.description`` -> FOCUS ServiceCategory (unlisted services are "Other").
SERVICE_CATEGORIES: dict[str, str] = {
    "Compute Engine": "Compute", "Kubernetes Engine": "Compute", "Cloud Run": "Compute", "Cloud TPU": "Compute",
    "Cloud Storage": "Storage", "BigQuery": "Analytics", "Cloud SQL": "Databases", "Networking": "Networking",
    "Vertex AI": "AI and Machine Learning", "Cloud Logging": "Management and Governance",
    "Cloud Monitoring": "Management and Governance", "Support": "Other",
}

#: ``service.description`` -> FOCUS 1.2 ServiceSubcategory (unlisted: ``Other (<ServiceCategory>)``).
SERVICE_SUBCATEGORIES: dict[str, str] = {
    "Compute Engine": "Virtual Machines", "Kubernetes Engine": "Containers", "Cloud Run": "Serverless Compute",
    "Cloud Storage": "Object Storage", "BigQuery": "Analytics Platforms", "Cloud SQL": "Relational Databases",
    "Networking": "Network Connectivity", "Vertex AI": "AI Platforms", "Cloud Logging": "Observability",
    "Cloud Monitoring": "Observability",
}
#: The collection in a resource's full name (``//compute.googleapis.com/projects/p/zones/z/instances/vm``)
#: -> FOCUS ResourceType (others: the collection name as given).
RESOURCE_TYPES: dict[str, str] = {"instances": "Compute Instance", "disks": "Persistent Disk",
                                  "buckets": "Storage Bucket", "nodes": "TPU Node", "clusters": "GKE Cluster",
                                  "commitments": "Commitment"}

#: GPU/TPU SKU component (``connectors.gcp.skus.RULES``) -> accelerator id where the two differ.
ACCELERATOR_OF_COMPONENT: dict[str, str] = {"h100-mega": "h100-sxm"}

#: FOCUS export: ``PricingCategory`` -> x_PurchaseOption when no commitment term is known.
FOCUS_PURCHASE_OPTIONS: dict[str, PurchaseOption] = {"Standard": "on_demand", "Dynamic": "spot", "Committed": "cud"}
