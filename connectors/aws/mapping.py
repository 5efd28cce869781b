"""Declarative tables: AWS bill vocabulary -> FOCUS 1.2 and the price book's pricing models.

Everything AWS-specific about turning a bill into FOCUS rows is a table here; :mod:`connectors.aws.cur`
only applies them. How each CUR 2.0 line item type becomes FOCUS (after AWS's own FOCUS export and the
FOCUS 1.2 spec, "Commitment discounts" and "Amortization"); *basis* is the month's cost basis
(:data:`COST_BASES`):

=========================  =========  ==========  ======================  ===========================================
line_item_line_item_type   category   frequency   BilledCost              EffectiveCost
=========================  =========  ==========  ======================  ===========================================
Usage                      Usage      Usage-Based unblended               basis cost (net unblended, or unblended)
DiscountedUsage (RI)       Usage      Usage-Based unblended (0)           basis reservation effective cost (amortized)
SavingsPlanCoveredUsage    Usage      Usage-Based 0                       basis savings plan effective cost
SavingsPlanNegation        (dropped: it only cancels the covered usage's unblended cost, never billed in FOCUS)
Fee (RI/SP upfront)        Purchase   One-Time    unblended               0 (amortized into usage)
Fee (other: support...)    Purchase   One-Time    unblended               basis cost
RIFee                      Purchase   Recurring   unblended               0 (amortized into usage) + an Unused row
SavingsPlanUpfrontFee      Purchase   One-Time    unblended               0 (amortized into usage)
SavingsPlanRecurringFee    Purchase   Recurring   unblended               0 (amortized into usage) + an Unused row
Tax                        Tax        Usage-Based unblended               unblended
Credit                     Credit     Usage-Based unblended               unblended
Refund                     Adjustment Usage-Based unblended               unblended
EdpDiscount, PrivateRate-  Credit     Usage-Based unblended               net basis: net unblended (AWS writes 0: the
Discount, BundledDiscount,                                                discount is inside the usage's net cost);
SppDiscount, Distributor-                                                 gross basis: unblended
Discount, RiVolumeDiscount
=========================  =========  ==========  ======================  ===========================================

**One cost basis a month.** An export that has the net columns (``line_item_net_unblended_cost``: AWS
adds them when the account has negotiated discounts) is read on the *net* basis throughout: usage at net
unblended cost, covered usage at ``reservation_net_effective_cost`` /
``savings_plan_net_savings_plan_effective_cost``, unused commitment at the net unused fees, and the
discount line items at their net cost (0), so a discount is counted once, inside the usage. Without them
every line is read on the *gross* basis (unblended, ``reservation_effective_cost``...) and the discount
line items carry the discount. Either way ``sum(BilledCost)`` is the invoice (the unblended total) and
``sum(EffectiveCost)`` the amortized total after discounts: Usage 100 (net 90) with EdpDiscount -10
(net 0) gives 90 and 90. A net cell left empty reads as its gross twin (AWS leaves it empty where no
discount applies), except on a discount line, where it reads as 0.

Unused commitment is made visible as its own ``Usage`` row with ``CommitmentDiscountStatus = Unused``,
``BilledCost = 0`` and ``EffectiveCost`` = the unused part: for an RI the basis's
``..._unused_amortized_upfront_fee_for_billing_period + ..._unused_recurring_fee``, for a Savings Plan
``savings_plan_total_commitment_to_date - savings_plan_used_commitment`` (on the net basis scaled by the
plan's net / gross commitment for the billing period). Over a commitment's term the amortized
EffectiveCost of its covered usage and Unused rows sums to what it cost (upfront + recurring fees).

Sources: CUR 2.0 data dictionary (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2.html),
its "Line item details", "Reservation details" and "Savings Plans details" pages (the net columns),
"Understanding Savings Plans / Reserved Instance line items" in the CUR user guide, and FOCUS 1.2
(https://focus.finops.org/focus-specification/v1-2/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "CE_PURCHASE_TYPES",
    "COMMITMENT_KINDS",
    "COST_BASES",
    "CUR_CELL_KINDS",
    "CUR_DECIMAL_COLUMNS",
    "CUR_MONEY_COLUMNS",
    "CUR_REQUIRED_COLUMNS",
    "CUR_TEXT_COLUMNS",
    "FOCUS_REQUIRED_COLUMNS",
    "LEASE_TERMS",
    "LEGACY_CUR_MARKER",
    "LINE_ITEM_TYPES",
    "NET_BASIS_MARKER",
    "PURCHASE_OPTIONS",
    "RESOURCE_TYPES",
    "SERVICE_CATEGORIES",
    "SERVICE_SUBCATEGORIES",
    "USAGE_KINDS",
    "CostBasis",
    "LineItemRule",
    "PurchaseOption",
]

#: x_PurchaseOption: the price book's pricing models where the term is known, the bare kind where not.
PurchaseOption = Literal["on_demand", "spot", "reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y",
                         "reserved", "savings_plan"]
PURCHASE_OPTIONS: tuple[str, ...] = get_args(PurchaseOption)

CommitmentKind = Literal["", "reservation", "savings_plan"]
#: Which effective cost a line item takes.
EffectiveRule = Literal["basis", "discount", "reservation", "savings_plan", "commitment_fee", "billed"]
CostBasisName = Literal["net", "gross"]


@dataclass(frozen=True)
class CostBasis:
    """The CUR columns one cost basis reads (each net column's gross twin is in the ``gross`` basis)."""

    cost: str
    reservation: str
    savings_plan: str
    reservation_unused: tuple[str, str]
    savings_plan_commitment: tuple[str, str]
    #: an empty cost cell on a discount line reads as 0 (the discount is inside the usage's cost)
    discount_in_usage: bool


#: cost basis -> its columns (module docstring: "One cost basis a month").
COST_BASES: dict[CostBasisName, CostBasis] = {
    "gross": CostBasis("line_item_unblended_cost", "reservation_effective_cost",
                       "savings_plan_savings_plan_effective_cost",
                       ("reservation_unused_amortized_upfront_fee_for_billing_period", "reservation_unused_recurring_fee"),
                       ("savings_plan_amortized_upfront_commitment_for_billing_period",
                        "savings_plan_recurring_commitment_for_billing_period"), False),
    "net": CostBasis("line_item_net_unblended_cost", "reservation_net_effective_cost",
                     "savings_plan_net_savings_plan_effective_cost",
                     ("reservation_net_unused_amortized_upfront_fee_for_billing_period",
                      "reservation_net_unused_recurring_fee"),
                     ("savings_plan_net_amortized_upfront_commitment_for_billing_period",
                      "savings_plan_net_recurring_commitment_for_billing_period"), True),
}
#: The column that marks a legacy CUR (``category/ColumnName`` headers). Its columns are renamed to CUR 2.0's
#: by one rule, :func:`connectors.aws.cur.cur2_name` (AWS, "Migrating from CUR to CUR 2.0": the same columns,
#: snake case); its ``resourceTags/...`` columns are not read.
LEGACY_CUR_MARKER = "lineItem/LineItemType"
#: The column whose presence in an export selects the net basis for the whole export.
NET_BASIS_MARKER = "line_item_net_unblended_cost"


@dataclass(frozen=True)
class LineItemRule:
    """How one CUR ``line_item_line_item_type`` becomes a FOCUS row."""

    charge_category: str
    charge_frequency: str
    billed_is_zero: bool
    effective: EffectiveRule
    commitment: CommitmentKind = ""
    emits_unused: bool = False


_USAGE, _PURCHASE = "Usage", "Purchase"
#: ``line_item_line_item_type`` -> rule; ``None`` drops the line item.
LINE_ITEM_TYPES: dict[str, LineItemRule | None] = {
    "Usage": LineItemRule(_USAGE, "Usage-Based", False, "basis"),
    "DiscountedUsage": LineItemRule(_USAGE, "Usage-Based", False, "reservation", "reservation"),
    "SavingsPlanCoveredUsage": LineItemRule(_USAGE, "Usage-Based", True, "savings_plan", "savings_plan"),
    "SavingsPlanNegation": None,
    "Fee": LineItemRule(_PURCHASE, "One-Time", False, "commitment_fee", "reservation"),
    "RIFee": LineItemRule(_PURCHASE, "Recurring", False, "commitment_fee", "reservation", emits_unused=True),
    "SavingsPlanUpfrontFee": LineItemRule(_PURCHASE, "One-Time", False, "commitment_fee", "savings_plan"),
    "SavingsPlanRecurringFee": LineItemRule(_PURCHASE, "Recurring", False, "commitment_fee", "savings_plan",
                                            emits_unused=True),
    "Tax": LineItemRule("Tax", "Usage-Based", False, "billed"),
    "Credit": LineItemRule("Credit", "Usage-Based", False, "billed"),
    "Refund": LineItemRule("Adjustment", "Usage-Based", False, "billed"),
    **dict.fromkeys(("EdpDiscount", "BundledDiscount", "PrivateRateDiscount", "DistributorDiscount", "RiVolumeDiscount",
                     "SppDiscount"), LineItemRule("Credit", "Usage-Based", False, "discount")),
}

#: commitment kind -> (ARN column, FOCUS CommitmentDiscountCategory, CommitmentDiscountType, term column)
COMMITMENT_KINDS: dict[str, tuple[str, str, str, str]] = {
    "reservation": ("reservation_reservation_a_r_n", "Usage", "Reserved Instance", "pricing_lease_contract_length"),
    "savings_plan": ("savings_plan_savings_plan_a_r_n", "Spend", "Savings Plan", "savings_plan_purchase_term"),
}
#: term text in CUR -> price-book term suffix
LEASE_TERMS: dict[str, str] = {"1yr": "1y", "1 yr": "1y", "1y": "1y", "3yr": "3y", "3 yr": "3y", "3y": "3y"}

#: CUR 2.0 text/timestamp column -> FOCUS column (copied as is).
CUR_TEXT_COLUMNS: dict[str, str] = {
    "bill_billing_entity": "PublisherName",
    "bill_invoicing_entity": "InvoiceIssuerName",
    "bill_invoice_id": "InvoiceId",
    "bill_payer_account_id": "BillingAccountId",
    "bill_payer_account_name": "BillingAccountName",
    "line_item_usage_account_id": "SubAccountId",
    "line_item_usage_account_name": "SubAccountName",
    "bill_billing_period_start_date": "BillingPeriodStart",
    "bill_billing_period_end_date": "BillingPeriodEnd",
    "line_item_usage_start_date": "ChargePeriodStart",
    "line_item_usage_end_date": "ChargePeriodEnd",
    "line_item_line_item_description": "ChargeDescription",
    "line_item_currency_code": "BillingCurrency",
    "pricing_currency": "PricingCurrency",
    "pricing_unit": "PricingUnit",
    "line_item_product_code": "ServiceName",
    "product_sku": "SkuId",
    "pricing_rate_code": "SkuPriceId",
    "line_item_resource_id": "ResourceId",
    "product_region_code": "RegionId",
    "product_location": "RegionName",
    "line_item_availability_zone": "AvailabilityZone",
}
#: CUR 2.0 numeric column -> FOCUS decimal column (copied as exact decimals).
CUR_DECIMAL_COLUMNS: dict[str, str] = {
    "pricing_public_on_demand_cost": "ListCost",
    "pricing_public_on_demand_rate": "ListUnitPrice",
    "line_item_unblended_rate": "ContractedUnitPrice",
    "line_item_usage_amount": "PricingQuantity",
}
#: CUR 2.0 money columns read by the line item rules and the Unused rows.
CUR_MONEY_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys((
    *(column for basis in COST_BASES.values() for column in (basis.cost, basis.reservation, basis.savings_plan,
                                                             *basis.reservation_unused, *basis.savings_plan_commitment)),
    "reservation_unused_quantity", "savings_plan_total_commitment_to_date", "savings_plan_used_commitment")))
#: Typed CUR 2.0 columns -> their kind (how a cell that failed to convert is located).
CUR_CELL_KINDS: dict[str, str] = {
    **{cur: "timestamp" for cur, focus in CUR_TEXT_COLUMNS.items() if focus.endswith(("Start", "End"))},
    **dict.fromkeys((*CUR_DECIMAL_COLUMNS, *CUR_MONEY_COLUMNS), "decimal")}
#: Columns without which a CUR 2.0 export cannot be priced (a Data Export may leave columns out).
CUR_REQUIRED_COLUMNS: tuple[str, ...] = ("line_item_line_item_type", "line_item_unblended_cost",
                                         "line_item_usage_start_date", "line_item_usage_end_date")
#: The same for AWS's FOCUS 1.2 export.
FOCUS_REQUIRED_COLUMNS: tuple[str, ...] = ("ChargeCategory", "BilledCost", "EffectiveCost", "ChargePeriodStart",
                                           "ChargePeriodEnd")

#: AWS product code -> FOCUS ServiceCategory (unlisted codes are "Other").
SERVICE_CATEGORIES: dict[str, str] = {
    "AmazonEC2": "Compute", "AmazonECS": "Compute", "AmazonEKS": "Compute", "AWSLambda": "Compute",
    "AmazonS3": "Storage", "AmazonEFS": "Storage", "AmazonFSx": "Storage", "AmazonRDS": "Databases",
    "AmazonDynamoDB": "Databases", "AmazonVPC": "Networking", "AWSDataTransfer": "Networking",
    "AmazonCloudFront": "Networking", "AmazonCloudWatch": "Management and Governance",
    "AmazonSageMaker": "AI and Machine Learning", "AmazonBedrock": "AI and Machine Learning",
    "AWSSupportBusiness": "Other", "AWSSupportEnterprise": "Other",
}

#: AWS product code -> FOCUS 1.2 ServiceSubcategory (unlisted codes: ``Other (<ServiceCategory>)``).
SERVICE_SUBCATEGORIES: dict[str, str] = {
    "AmazonEC2": "Virtual Machines", "AmazonECS": "Containers", "AmazonEKS": "Containers",
    "AWSLambda": "Serverless Compute", "AmazonS3": "Object Storage", "AmazonEFS": "File Storage",
    "AmazonFSx": "File Storage", "AmazonRDS": "Relational Databases", "AmazonDynamoDB": "NoSQL Databases",
    "AmazonVPC": "Network Infrastructure", "AWSDataTransfer": "Network Connectivity",
    "AmazonCloudFront": "Content Delivery", "AmazonCloudWatch": "Observability",
    "AmazonSageMaker": "Machine Learning", "AmazonBedrock": "Generative AI",
}
#: ``line_item_resource_id`` prefix -> FOCUS ResourceType (FOCUS 1.2 ResourceType-C-005: set wherever ResourceId
#: is; other ids get ``<product code> resource``).
RESOURCE_TYPES: dict[str, str] = {"i-": "EC2 Instance", "vol-": "EBS Volume", "snap-": "EBS Snapshot",
                                  "nat-": "NAT Gateway", "eipalloc-": "Elastic IP", "arn:aws:s3": "S3 Bucket",
                                  "arn:aws:sagemaker": "SageMaker Endpoint"}

#: Cost Explorer PURCHASE_TYPE dimension value -> x_PurchaseOption (Cost Explorer gives no term).
CE_PURCHASE_TYPES: dict[str, str] = {
    "On Demand Instances": "on_demand", "Spot Instances": "spot", "Savings Plans": "savings_plan",
    "Standard Reserved Instances": "reserved", "Convertible Reserved Instances": "reserved",
    "Dedicated Reserved Instances": "reserved", "Dedicated Instances": "on_demand",
    "Standard Reserved Instance": "reserved", "Convertible Reserved Instance": "reserved",
}

#: the usage-type kind of an EC2 instance-hour (``USE1-SpotUsage:p5.48xlarge`` -> ``SpotUsage``) -> x_PurchaseOption
#: when no commitment covers it.
USAGE_KINDS: dict[str, str] = {"BoxUsage": "on_demand", "DedicatedUsage": "on_demand", "HostBoxUsage": "on_demand",
                               "SpotUsage": "spot"}
