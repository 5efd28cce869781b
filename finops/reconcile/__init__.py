"""Monthly plan-vs-actual reconciliation of FOCUS bills against the planning workbook.

Stages, one module each: ``plan`` (the workbook as values), ``bills`` (FOCUS files as a checked
DuckDB view), ``aggregation`` (the one SQL query), ``dialects`` (that query for BigQuery/Athena),
``mapping`` (charges -> plan lines), ``engine`` (the figures), ``result`` (what comes out),
``history`` (past months in a DuckDB file). Faces: ``finops reconcile`` and ``templates/``.
"""

from .engine import reconcile_groups, reconcile_month
from .plan import Asset, BudgetLine, MappingRule, Plan, UsageLine
from .result import Reconciliation

__all__ = ["Asset", "BudgetLine", "MappingRule", "Plan", "Reconciliation", "UsageLine", "reconcile_groups",
           "reconcile_month"]
