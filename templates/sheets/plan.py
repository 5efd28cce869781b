"""The plan sheets that reconcile reads by table name: Budget, Assets, Mapping, Usage.

The plan feeds the budget by formula: an OPEX line that workloads name (Workloads' PlanLine) gets its
Amount, PlannedMTokens and PlannedGpuHours as sums over the TCO sheet (the sized fleet at its price); a CAPEX
line with owned assets gets its Amount as the month's depreciation over the Assets sheet (:func:`depreciation_formula`).
Other lines stay typed inputs. Reconcile reads the values the workbook stores with the formulas.

Column headers are the contract of ``docs/design.md`` (exact names). Each sheet has a one-line
explanation above its table, a frozen header, and validation lists where the vocabulary is closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from finops.depreciation import monthly_depreciation
from finops.money import Money

from ..demo_plan import SAMPLES_PLAN, PlanTables
from ..styles import Styles
from ._table import Column, Formula, TablePlace, fit_for_print, titled_sheet, validate_column, write_table
from .start import HOURS_PER_MONTH
from .tco import PlannedFleet

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
    Column("PlannedGpuHours", "number", width=15),
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


def _depreciation_row(i: int, row: Sequence[object], budget: TablePlace, assets: TablePlace,
                      register: Sequence[Sequence[object]]) -> list[object]:
    """A Budget row; a CAPEX line that owns assets gets its Amount as a formula over the Assets sheet: the
    month's straight-line depreciation of the line's assets in service (:func:`depreciation_formula`)."""
    values = list(row)
    line, month = values[1], str(values[0])
    owned = [a for a in register if a[2] == line]
    if values[3] != "CAPEX" or not owned:
        return values
    amount = sum((monthly_depreciation(Money.of(cost, cur), Money.of(residual, cur), life, in_service or bought,  # type: ignore[arg-type]
                                       month).amount
                  for *_, bought, in_service, cost, residual, life, cur in owned), Decimal(0))
    values[5] = Formula(depreciation_formula(budget, i, assets), float(amount))
    return values


def depreciation_formula(budget: TablePlace, i: int, assets: TablePlace) -> str:
    """Budget row ``i``'s depreciation of the assets on its plan line in its month, as Excel computes it::

        SUM over assets on the line, in service by the month and within their life, of
        ROUND((Cost - ResidualValue) / LifeMonths, 2)

    with the month index ``year x 12 + month`` of the budget's Month and of the asset's InServiceDate
    (PurchaseDate when blank): the first month charged is the in-service month (finops.depreciation).
    Over ``_VALIDATED_ROWS`` rows of Assets, so assets added below the demo ones count.
    """
    def col(header: str) -> str:
        return assets.column_range(header, rows=_VALIDATED_ROWS)

    line, month = budget.cell(i, "PlanLine", follow=True), budget.cell(i, "Month", follow=True)
    start = f"({col('InServiceDate')}+({col('InServiceDate')}=0)*{col('PurchaseDate')})"
    first = f"(YEAR({start})*12+MONTH({start}))"
    now = f"(VALUE(LEFT({month},4))*12+VALUE(RIGHT({month},2)))"
    life = col("LifeMonths")
    return (f"=SUMPRODUCT(({col('PlanLine')}={line})*({first}<={now})*({now}<{first}+{life})"
            f"*ROUND(({col('Cost')}-{col('ResidualValue')})/({life}+({life}=0)),2))")


def _fleet_row(i: int, values: list[object], budget: TablePlace, tco: TablePlace | None,
               fleets: Sequence[PlannedFleet]) -> list[object]:
    """A Budget row; an OPEX line that workloads name (Workloads' PlanLine) gets its Amount, PlannedMTokens and
    PlannedGpuHours as formulas over the TCO sheet: the sum of those workloads' CloudMonthly and MTokensPerMonth,
    and their accelerators paid (GpusPaid) x HoursPerMonth, the GPU-hours the review splits volume by. A workload
    on the line that is not priced (it misses its targets) makes the Amount #N/A, never a smaller number."""
    line = values[1]
    values += [None] * (len(BUDGET_COLUMNS) - len(values))
    mine = [f for f in fleets if f.plan_line and f.plan_line == line]
    if tco is None or values[3] != "OPEX" or not mine:
        return values

    def col(header: str) -> str:
        return tco.column_range(header)

    key = budget.cell(i, "PlanLine", follow=True)
    priced = all(isinstance(f.monthly_cost, float | int) for f in mine)
    amount = sum(float(f.monthly_cost) for f in mine) if priced else "#N/A"  # type: ignore[arg-type]
    values[5] = Formula(f'=IF(COUNTIFS({col("PlanLine")},{key},{col("CloudMonthly")},"*")>0,NA(),'
                        f'SUMIFS({col("CloudMonthly")},{col("PlanLine")},{key}))', amount)
    values[7] = Formula(f'=SUMIFS({col("MTokensPerMonth")},{col("PlanLine")},{key})',
                        sum(float(f.mtokens) for f in mine if isinstance(f.mtokens, float | int)))
    hours = sum(float(f.gpus_paid) for f in mine) * HOURS_PER_MONTH if priced else "#N/A"  # type: ignore[arg-type]
    values[8] = Formula(f'=IF(COUNTIFS({col("PlanLine")},{key},{col("CloudMonthly")},"*")>0,NA(),'
                        f'SUMIFS({col("GpusPaid")},{col("PlanLine")},{key})*HoursPerMonth)', hours)
    return values


def write_plan_sheets(wb: Workbook, styles: Styles, tco: TablePlace | None = None,
                      fleets: Sequence[PlannedFleet] = (), plan: PlanTables = SAMPLES_PLAN) -> dict[str, TablePlace]:
    """Budget, Assets, Mapping and Usage with the rows of ``plan``; returns their table places by table name.

    ``tco`` and ``fleets`` (the TCO sheet's table and what each workload plans) make the Budget lines that
    workloads name formulas over the TCO sheet (:func:`_fleet_row`)."""
    places: dict[str, TablePlace] = {}

    ws = _sheet(
        wb,
        styles,
        "Budget",
        "Monthly plan lines. Category OPEX or CAPEX; Amount in Currency; "
        "PlannedMTokens (optional) gives the planned unit cost, PlannedGpuHours (optional) the fleet's GPU-hours. "
        "A line that workloads name (Workloads' PlanLine) is the sum of their fleets' monthly cost, tokens and "
        "GPU-hours on the TCO sheet; a line with owned servers is "
        "their depreciation on the Assets sheet (formulas, black); the others are typed. " + plan.source,
        BUDGET_COLUMNS,
    )
    assets_place = TablePlace("Assets", "tblAssets", tuple(c.header for c in ASSETS_COLUMNS), _TABLE_TOP, 0,
                              len(plan.assets))
    budget_place = TablePlace("Budget", "tblBudget", tuple(c.header for c in BUDGET_COLUMNS), _TABLE_TOP, 0,
                              len(plan.budget))
    rows = [_fleet_row(i, _depreciation_row(i, row, budget_place, assets_place, plan.assets), budget_place, tco,
                       fleets) for i, row in enumerate(plan.budget)]
    budget = places["tblBudget"] = write_table(ws, styles, "tblBudget", BUDGET_COLUMNS, rows, first_row=_TABLE_TOP)
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
        ws, styles, "tblAssets", ASSETS_COLUMNS, plan.assets, first_row=_TABLE_TOP
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
        ws, styles, "tblMapping", MAPPING_COLUMNS, plan.mapping, first_row=_TABLE_TOP
    )
    _list(ws, mapping, "PlanLine", "=PlanLines", "a PlanLine of the Budget sheet")

    ws = _sheet(wb, styles, "Usage", "Actual million tokens served per plan line and month (optional).", USAGE_COLUMNS)
    usage = places["tblUsage"] = write_table(
        ws, styles, "tblUsage", USAGE_COLUMNS, plan.usage, first_row=_TABLE_TOP
    )
    _months(ws, usage)
    _list(ws, usage, "PlanLine", "=PlanLines", "a PlanLine of the Budget sheet")
    return places
