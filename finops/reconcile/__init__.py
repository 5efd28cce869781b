"""Monthly plan-vs-actual reconciliation of FOCUS bills against the planning workbook.

Stages, one module each: ``plan`` (the workbook as values), ``bills`` (FOCUS files as a checked
DuckDB view), ``aggregation`` (the one SQL query), ``dialects`` (that query for BigQuery/Athena),
``mapping`` (charges -> plan lines), ``engine`` (the figures), ``result`` (what comes out),
``history`` (past months in a DuckDB file). Faces: ``finops reconcile`` and ``templates/``.
"""

from .aggregation import MONTH_BASES, MonthBasis
from .contract_commitments import read_contract_commitments
from .dialects import canonical_engine, reconcile_remote
from .engine import reconcile_groups, reconcile_month
from .history import HISTORY_FILE, History, MonthRecord
from .plan import Asset, BudgetLine, MappingRule, Plan, UsageLine, usage_from_csv, usage_once
from .result import CommitmentLine, GroupVariance, Reconciliation, variance_share
from .sample_bills import SAMPLE_MONTH, sample_bill_paths

__all__ = [
    "HISTORY_FILE",
    "MONTH_BASES",
    "SAMPLE_MONTH",
    "Asset",
    "BudgetLine",
    "CommitmentLine",
    "GroupVariance",
    "History",
    "MappingRule",
    "MonthBasis",
    "MonthRecord",
    "Plan",
    "Reconciliation",
    "UsageLine",
    "canonical_engine",
    "read_contract_commitments",
    "reconcile_groups",
    "reconcile_month",
    "reconcile_remote",
    "sample_bill_paths",
    "usage_from_csv",
    "usage_once",
    "variance_share",
]
