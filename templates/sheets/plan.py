"""The plan sheets that reconcile reads by table name: Budget, Assets, Mapping, Usage.

Column headers are the contract of ``docs/design.md`` (exact names). Each sheet has a one-line
explanation above its table, a frozen header, and validation lists where the vocabulary is closed.
"""

from __future__ import annotations

from collections.abc import Sequence

from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from .. import demo_plan
from ..styles import Styles
from ._table import Column, TablePlace, fit_for_print, titled_sheet, validate_column, write_table

__all__ = ["ASSETS_COLUMNS", "BUDGET_COLUMNS", "MAPPING_COLUMNS", "USAGE_COLUMNS", "write_plan_sheets"]

BUDGET_COLUMNS = (
    Column("Month", "month", width=10),
    Column("PlanLine", width=24),
    Column("CostCentre", width=12),
    Column("Category", width=10),
    Column("Provider", width=14),
    Column("Amount", "money", width=14),
    Column("Currency", width=9),
    Column("PlannedMTokens", "number", width=15),
)
ASSETS_COLUMNS = (
    Column("AssetId", width=13),
    Column("Description", width=36),
    Column("PlanLine", width=20),
    Column("CostCentre", width=11),
    Column("GpuModel", width=11),
    Column("GpuCount", "int", width=9),
    Column("PurchaseDate", "date", width=13),
    Column("InServiceDate", "date", width=13),
    Column("Cost", "money", width=13),
    Column("ResidualValue", "money", width=13),
    Column("LifeMonths", "int", width=10),
    Column("Currency", width=9),
)
MAPPING_COLUMNS = (
    Column("Rule", "int", width=6),
    Column("PlanLine", width=24),
    Column("ProviderName", width=14),
    Column("SubAccount", width=22),
    Column("ServiceName", width=18),
    Column("InstanceType", width=14),
    Column("RegionId", width=14),
    Column("TagKey", width=12),
    Column("TagValue", width=16),
)
USAGE_COLUMNS = (
    Column("Month", "month", width=10),
    Column("PlanLine", width=24),
    Column("ActualMTokens", "number", width=15),
)

PROVIDERS = ("AWS", "Google Cloud", "On-prem")
CURRENCIES = ("USD", "EUR", "GBP", "CNY", "JPY")
_TABLE_TOP = 2  # a title and a note above each table
_VALIDATED_ROWS = 500  # rows under each header that keep the validation lists as a table grows


def _sheet(wb: Workbook, styles: Styles, name: str, note: str, columns: Sequence[Column]) -> Worksheet:
    ws = titled_sheet(wb, styles, name, note, widths=[c.width for c in columns])
    ws.freeze_panes(_TABLE_TOP + 1, 0)
    fit_for_print(ws, _TABLE_TOP, [c.width for c in columns])
    return ws


def _list(ws: Worksheet, place: TablePlace, header: str, source: Sequence[str] | str, message: str) -> None:
    validate_column(ws, place, header, _VALIDATED_ROWS, {
        "validate": "list",
        "source": source if isinstance(source, str) else list(source),
        "error_title": header,
        "error_message": message,
    })


def _months(ws: Worksheet, place: TablePlace) -> None:
    validate_column(ws, place, "Month", _VALIDATED_ROWS, {
        "validate": "length",
        "criteria": "==",
        "value": 7,
        "input_title": "Month",
        "input_message": "Text YYYY-MM, e.g. 2026-05",
        "error_message": "Type the month as text YYYY-MM",
    })


def write_plan_sheets(wb: Workbook, styles: Styles) -> dict[str, TablePlace]:
    """Budget, Assets, Mapping and Usage with the demo plan; returns their table places by table name."""
    places: dict[str, TablePlace] = {}

    ws = _sheet(
        wb,
        styles,
        "Budget",
        "Monthly plan lines. Category OPEX or CAPEX; Amount in Currency; "
        "PlannedMTokens (optional) gives the planned unit cost. " + demo_plan.SOURCE,
        BUDGET_COLUMNS,
    )
    budget = places["tblBudget"] = write_table(
        ws, styles, "tblBudget", BUDGET_COLUMNS, demo_plan.BUDGET, first_row=_TABLE_TOP
    )
    _months(ws, budget)
    _list(ws, budget, "Category", ("OPEX", "CAPEX"), "OPEX or CAPEX")
    _list(ws, budget, "Provider", PROVIDERS, "one of " + ", ".join(PROVIDERS))
    _list(ws, budget, "Currency", CURRENCIES, "an ISO 4217 code from the list")
    # the lines a planner adds below the demo ones are offered too (a table grows, a fixed name does not)
    wb.define_name("PlanLines", "=" + budget.column_range("PlanLine", rows=_VALIDATED_ROWS))

    ws = _sheet(
        wb,
        styles,
        "Assets",
        "Owned hardware register, depreciated straight-line from InServiceDate "
        "(blank = PurchaseDate) over LifeMonths down to ResidualValue.",
        ASSETS_COLUMNS,
    )
    assets = places["tblAssets"] = write_table(
        ws, styles, "tblAssets", ASSETS_COLUMNS, demo_plan.ASSETS, first_row=_TABLE_TOP
    )
    _list(ws, assets, "PlanLine", "=PlanLines", "a PlanLine of the Budget sheet")
    _list(ws, assets, "GpuModel", "=GpuIds", "a GPU id of the Catalog sheet")
    _list(ws, assets, "Currency", CURRENCIES, "an ISO 4217 code from the list")

    ws = _sheet(
        wb,
        styles,
        "Mapping",
        "Rules from bill rows to plan lines, in Rule order; the first match wins. "
        "Blank = any; * and ? are wildcards; case-insensitive. SubAccount matches the id or the name.",
        MAPPING_COLUMNS,
    )
    mapping = places["tblMapping"] = write_table(
        ws, styles, "tblMapping", MAPPING_COLUMNS, demo_plan.MAPPING, first_row=_TABLE_TOP
    )
    _list(ws, mapping, "PlanLine", "=PlanLines", "a PlanLine of the Budget sheet")

    ws = _sheet(wb, styles, "Usage", "Actual million tokens served per plan line and month (optional).", USAGE_COLUMNS)
    usage = places["tblUsage"] = write_table(
        ws, styles, "tblUsage", USAGE_COLUMNS, demo_plan.USAGE, first_row=_TABLE_TOP
    )
    _months(ws, usage)
    _list(ws, usage, "PlanLine", "=PlanLines", "a PlanLine of the Budget sheet")
    return places
