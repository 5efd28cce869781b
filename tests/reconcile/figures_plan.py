"""The plan of the figures test: the demo plan's budget, assets and rules as of 2026-12-01, plus rules that
exercise every kind of pattern (``?``, ``*``, a character class, a literal ``_``, tag key and value globs).

Kept here, not read from the template, so the expected figures (``data/figures-*.json``, written by the
reconciliation when the mapping ran in Python) do not move when the demo plan does.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from finops.money import Money
from finops.reconcile.plan import Asset, BudgetLine, MappingRule, Plan

MONTH = "2026-05"

_BUDGET = (("aws-inference-prod", "AWS", 10, 1_200), ("aws-inference-staging", "AWS", 40, 150),
           ("aws-sandbox", "AWS", 30, None), ("aws-data-platform", "AWS", 1_800, None),
           ("aws-serverless", "AWS", 900, None), ("aws-storage", "AWS", 1_500, None),
           ("gcp-inference-prod", "Google Cloud", 60, 1_800), ("gcp-inference-staging", "Google Cloud", 10, 120),
           ("gcp-sandbox", "Google Cloud", 120, None), ("gcp-data-platform", "Google Cloud", 2_700, None),
           ("gcp-analytics", "Google Cloud", 3_000, None), ("gcp-platform-services", "Google Cloud", 2_600, None),
           ("gpu-fleet", "AWS", 5_000, None), ("ml-team", "", 4_000, None), ("europe", "", 900, None),
           ("cost-centre-1017", "", 100, None), ("databases", "", 2_000, None))

_RULES = (
    (1, "aws-inference-prod", "AWS", "prod-platform", "AmazonEC2", None, None, None, None),
    (2, "aws-inference-staging", "AWS", "staging-platform", "AmazonEC2", None, None, None, None),
    (3, "aws-sandbox", "AWS", "sandbox-dev", "AmazonEC2", None, None, None, None),
    (4, "aws-data-platform", "AWS", "200000000013", None, None, None, None, None),
    (5, "aws-serverless", "AWS", None, "AWSLambda", None, None, None, None),
    (6, "aws-storage", "AWS", None, "AmazonS3", None, None, None, None),
    (7, "gcp-inference-prod", "Google Cloud", "examplecorp-prod-*", "Compute Engine", None, None, None, None),
    (8, "gcp-inference-staging", "Google Cloud", "staging-platform", "Compute Engine", None, None, None, None),
    (9, "gcp-sandbox", "Google Cloud", "sandbox-dev", "Compute Engine", None, None, None, None),
    (10, "gcp-data-platform", "Google Cloud", "data-analytics", None, None, None, None, None),
    (11, "gcp-analytics", "Google Cloud", None, "BigQuery", None, None, None, None),
    (12, "gcp-platform-services", "Google Cloud", None, "Cloud Run", None, None, "owner", "team-platform"),
    (13, "gcp-platform-services", "Google Cloud", None, "Cloud S*", None, None, None, None),
    (14, "gpu-fleet", None, None, None, "p?.*", None, None, None),
    (15, "gpu-fleet", None, None, None, "a[23]-*", "us-*", None, None),
    (16, "ml-team", None, None, None, None, None, "OWNER", "team-ml"),
    (17, "europe", None, "team-1?", None, None, "eu*", None, None),
    (18, "cost-centre-1017", None, None, None, None, None, "cost*", "cc-10?7"),
    (19, "databases", None, None, "amazon_ds", None, None, None, None),
    (20, "databases", None, None, "Cloud SQL", None, None, None, "*"),
)

PLAN = Plan(
    budget=tuple(BudgetLine(MONTH, line, "cc-1042", "OPEX", provider, Money.of(amount, "USD"),
                            None if tokens is None else Decimal(tokens)) for line, provider, amount, tokens in _BUDGET)
    + (BudgetLine(MONTH, "onprem-inference", "cc-1042", "CAPEX", "On-prem", Money.of(11_475, "USD"), Decimal(2_600)),),
    assets=(Asset("SRV-H100-01", "8x H100", "onprem-inference", "cc-1042", "h100-sxm", 8, date(2025, 11, 3),
                  date(2025, 11, 3), Money.of(320_000, "USD"), Money.of(32_000, "USD"), 60),
            Asset("SRV-L40S-01", "4x L40S", "onprem-inference", "cc-1042", "l40s", 4, date(2026, 4, 20),
                  date(2026, 5, 4), Money.of(95_000, "USD"), Money.of(5_000, "USD"), 48)),
    mapping=tuple(MappingRule(rule, line, provider_name=provider, sub_account=account, service_name=service,
                              instance_type=instance, region_id=region, tag_key=key, tag_value=value)
                  for rule, line, provider, account, service, instance, region, key, value in _RULES),
    source="figures_plan.py")
