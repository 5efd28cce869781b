"""The demo plan for 2026-05 that ships in the template, coherent with the bundled FOCUS sample bills.

Source of the figures: the two FOCUS 1.2 samples bundled in ``finops/data/bills/`` (FinOps
Foundation ``FOCUS-Sample-Data``, synthetic, month 2026-05, USD). Their BilledCost sums are
67,941.20 (AWS) and 89,655.53 (Google Cloud). The mapping rules below assign about nine in ten rows
to a plan line by sub-account and service (one rule by tag, one by sub-account id glob); network,
monitoring, database and tax rows outside those lines stay unmapped on purpose, so the review shows
an Unmapped line. Budgets are in the P&L view that reconcile compares against (amortized cost,
FOCUS EffectiveCost), near each line's actual with a few deliberate variances past the 10 % flag.
The samples are synthetic: most of their BilledCost (157,596.73 USD) is upfront commitment
purchases whose amortization is not spread over the usage rows, so the amortized actuals are small
(16,314.85 USD); the review's cash view shows the purchases.
The owned H100/L40S servers give the CAPEX line through straight-line depreciation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

__all__ = ["ASSETS", "BUDGET", "DEMO_MONTH", "MAPPING", "SAMPLES_PLAN", "SOURCE", "USAGE", "PlanTables"]

DEMO_MONTH = "2026-05"
SOURCE = "demo plan matching the bundled FOCUS 1.2 samples (finops/data/bills), as of 2026-11-30"

#: Month, PlanLine, CostCentre, Category, Provider, Amount, Currency, PlannedMTokens
BUDGET: tuple[tuple[object, ...], ...] = (
    (DEMO_MONTH, "aws-inference-prod", "cc-1042", "OPEX", "AWS", 10, "USD", 1_200),
    (DEMO_MONTH, "aws-inference-staging", "cc-1042", "OPEX", "AWS", 40, "USD", 150),
    (DEMO_MONTH, "aws-sandbox", "cc-2087", "OPEX", "AWS", 30, "USD", None),
    (DEMO_MONTH, "aws-data-platform", "cc-3110", "OPEX", "AWS", 1_800, "USD", None),
    (DEMO_MONTH, "aws-serverless", "cc-3110", "OPEX", "AWS", 900, "USD", None),
    (DEMO_MONTH, "aws-storage", "cc-3110", "OPEX", "AWS", 1_500, "USD", None),
    (DEMO_MONTH, "gcp-inference-prod", "cc-1042", "OPEX", "Google Cloud", 60, "USD", 1_800),
    (DEMO_MONTH, "gcp-inference-staging", "cc-1042", "OPEX", "Google Cloud", 10, "USD", 120),
    (DEMO_MONTH, "gcp-sandbox", "cc-2087", "OPEX", "Google Cloud", 120, "USD", None),
    (DEMO_MONTH, "gcp-data-platform", "cc-3110", "OPEX", "Google Cloud", 2_700, "USD", None),
    (DEMO_MONTH, "gcp-analytics", "cc-3110", "OPEX", "Google Cloud", 3_000, "USD", None),
    (DEMO_MONTH, "gcp-platform-services", "cc-1042", "OPEX", "Google Cloud", 2_600, "USD", None),
    (DEMO_MONTH, "onprem-inference", "cc-1042", "CAPEX", "On-prem", 11_475, "USD", 2_600),
)

#: AssetId, Description, PlanLine, CostCentre, GpuModel, GpuCount, PurchaseDate, InServiceDate, Cost,
#: ResidualValue, LifeMonths, Currency
ASSETS: tuple[tuple[object, ...], ...] = (
    (
        "SRV-H100-01",
        "8x H100 SXM inference server, rack A",
        "onprem-inference",
        "cc-1042",
        "h100-sxm",
        8,
        date(2025, 11, 3),
        None,
        320_000,
        32_000,
        60,
        "USD",
    ),
    (
        "SRV-H100-02",
        "8x H100 SXM inference server, rack A",
        "onprem-inference",
        "cc-1042",
        "h100-sxm",
        8,
        date(2025, 11, 3),
        None,
        320_000,
        32_000,
        60,
        "USD",
    ),
    (
        "SRV-L40S-01",
        "4x L40S batch server, rack B",
        "onprem-inference",
        "cc-1042",
        "l40s",
        4,
        date(2026, 4, 20),
        date(2026, 5, 4),
        95_000,
        5_000,
        48,
        "USD",
    ),
)

#: Rule, PlanLine, ProviderName, SubAccount, ServiceName, InstanceType, RegionId, TagKey, TagValue
MAPPING: tuple[tuple[object, ...], ...] = (
    (1, "aws-inference-prod", "AWS", "prod-platform", "AmazonEC2", "", "", "", ""),
    (2, "aws-inference-staging", "AWS", "staging-platform", "AmazonEC2", "", "", "", ""),
    (3, "aws-sandbox", "AWS", "sandbox-dev", "AmazonEC2", "", "", "", ""),
    (4, "aws-data-platform", "AWS", "200000000013", "", "", "", "", ""),
    (5, "aws-serverless", "AWS", "", "AWSLambda", "", "", "", ""),
    (6, "aws-storage", "AWS", "", "AmazonS3", "", "", "", ""),
    (7, "gcp-inference-prod", "Google Cloud", "examplecorp-prod-*", "Compute Engine", "", "", "", ""),
    (8, "gcp-inference-staging", "Google Cloud", "staging-platform", "Compute Engine", "", "", "", ""),
    (9, "gcp-sandbox", "Google Cloud", "sandbox-dev", "Compute Engine", "", "", "", ""),
    (10, "gcp-data-platform", "Google Cloud", "data-analytics", "", "", "", "", ""),
    (11, "gcp-analytics", "Google Cloud", "", "BigQuery", "", "", "", ""),
    (12, "gcp-platform-services", "Google Cloud", "", "Cloud Run", "", "", "owner", "team-platform"),
    (13, "gcp-platform-services", "Google Cloud", "", "Cloud S*", "", "", "", ""),
)

#: Month, PlanLine, ActualMTokens
USAGE: tuple[tuple[object, ...], ...] = (
    (DEMO_MONTH, "aws-inference-prod", 1_150),
    (DEMO_MONTH, "aws-inference-staging", 95),
    (DEMO_MONTH, "gcp-inference-prod", 1_940),
    (DEMO_MONTH, "gcp-inference-staging", 110),
    (DEMO_MONTH, "onprem-inference", 2_480),
)


@dataclass(frozen=True)
class PlanTables:
    """The rows of the plan sheets a workbook is built with (Budget, Assets, Mapping, Usage) and where they
    come from (shown above the Budget table). Budget rows of an OPEX line that workloads name, and of a
    CAPEX line that owns assets, get formulas in place of their typed Amount."""

    budget: tuple[tuple[object, ...], ...]
    assets: tuple[tuple[object, ...], ...]
    mapping: tuple[tuple[object, ...], ...]
    usage: tuple[tuple[object, ...], ...]
    source: str


#: The plan of the bundled FOCUS 1.2 samples: the committed template's plan sheets.
SAMPLES_PLAN = PlanTables(BUDGET, ASSETS, MAPPING, USAGE, SOURCE)
