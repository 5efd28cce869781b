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
from .plan import (
    Asset,
    BudgetLine,
    MappingRule,
    Plan,
    UsageLine,
    budget_once,
    rules_once,
    usage_from_csv,
    usage_once,
)
from .result import CommitmentLine, GroupVariance, LineVariance, Reconciliation, variance_share
from .sample_bills import SAMPLE_MONTH, sample_bill_paths
from .story import (
    DEFAULT_MATERIALITY,
    TIE_OUT_SHARE,
    driver_label,
    favourable,
    headline,
    main_drivers,
    material_flag,
    tie_out,
    volume_basis,
    volume_rate,
    year_to_date,
)

__all__ = [
    "DEFAULT_MATERIALITY",
    "HISTORY_FILE",
    "MONTH_BASES",
    "SAMPLE_MONTH",
    "TIE_OUT_SHARE",
    "Asset",
    "BudgetLine",
    "CommitmentLine",
    "GroupVariance",
    "History",
    "LineVariance",
    "MappingRule",
    "MonthBasis",
    "MonthRecord",
    "Plan",
    "Reconciliation",
    "UsageLine",
    "budget_once",
    "canonical_engine",
    "driver_label",
    "favourable",
    "headline",
    "main_drivers",
    "material_flag",
    "read_contract_commitments",
    "reconcile_groups",
    "reconcile_month",
    "reconcile_remote",
    "rules_once",
    "sample_bill_paths",
    "tie_out",
    "usage_from_csv",
    "usage_once",
    "variance_share",
    "volume_basis",
    "volume_rate",
    "year_to_date",
]
