"""The Summary sheet: the headline, the month in the P&L and cash views, the commitment tie-out, the
year-end forecast on the plan's months, the variance by provider and by cost centre, and the waterfall
from plan to actual (:mod:`templates.review.story`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from xlsxwriter.worksheet import Worksheet

from finops.reconcile import GroupVariance, Reconciliation, variance_share

from ..sheets._table import Formula, TablePlace, write_table
from .page import ReviewStyles, review_sheet
from .story import headline_row, tie_out_table, waterfall
from .tables import FigureRow, cell_value, figures_table, label, money_column, text_column

__all__ = ["WIDTHS", "summary_sheet", "variance_by_table"]

_INFO = 4  # the run's facts start in row 5, under the headline
WIDTHS = (40, 15, 15, 15, 15, 15)


def summary_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime, plan_name: str,
                  bill_names: Sequence[str]) -> tuple[Worksheet, int]:
    """Write Summary; return it and its first free row (where the month-over-month chart goes)."""
    ws = review_sheet(wb, styles, "Summary", f"Budget review {rec.month}",
                      f"Plan against actual in {rec.currency}. P&L view: cloud cost amortized (EffectiveCost) plus "
                      "depreciation of owned hardware. Cash view: what was billed plus capital bought this month. "
                      "Words are explained on the Glossary sheet.", month=rec.month, run_at=run_at, widths=WIDTHS)
    headline_row(ws, styles, rec, len(WIDTHS))
    info: list[FigureRow] = [
        ("Month", rec.month, "text"), ("Currency", rec.currency, "text"),
        ("Run at (UTC)", run_at.isoformat(sep=" ", timespec="seconds"), "text"), ("Plan workbook", plan_name, "text"),
        ("Bill files", ", ".join(bill_names), "text"),
        # each file's FOCUS version and the column its provider was read from (ProviderName, or 1.4's successor)
        ("FOCUS version, provider column", "; ".join(rec.bill_versions), "text"), ("Bill rows", rec.bill_rows, "int"),
        ("Charges through (UTC)", rec.data_through.isoformat(sep=" ") if rec.data_through else "", "text"),
        ("Variance threshold", float(rec.threshold_pct) / 100, "percent")]
    for i, (text, value, kind) in enumerate(info):
        ws.write_string(_INFO + i, 0, text, styles.label)
        if kind == "text":
            ws.write_string(_INFO + i, 1, value)
        else:
            ws.write_number(_INFO + i, 1, value, styles.computed(kind))  # type: ignore[arg-type]
    top = _INFO + len(info) + 2
    label(ws, styles, top - 1, f"{rec.month}: P&L and cash")
    place = TablePlace(ws.name, "tblSummary", ("Figure", "Value"), top, 0, 10)
    planned, cloud, depreciation, actual, variance, _, billed, bought = (place.cell(i, "Value") for i in range(8))
    share = variance_share(rec.variance.amount, rec.planned.amount)
    pct = "" if share is None else float(share)
    figures_table(ws, styles, "tblSummary", [
        ("Planned", cell_value(rec.planned), "money"),
        ("Cloud cost, amortized (EffectiveCost)", cell_value(rec.opex), "money"),
        ("Depreciation of owned hardware", cell_value(rec.capex), "money"),
        ("P&L actual", Formula(f"={cloud}+{depreciation}", cell_value(rec.actual)), "money"),
        ("Variance (P&L actual - planned)", Formula(f"={actual}-{planned}", cell_value(rec.variance)), "money"),
        ("Variance %", Formula(f'=IF({planned}=0,"",{variance}/ABS({planned}))', pct), "percent"),
        ("Cash: cloud billed (BilledCost)", cell_value(rec.billed_cost), "money"),
        ("Cash: capital bought (owned hardware)", cell_value(rec.capex_cash), "money"),
        ("Cash paid", Formula(f"={billed}+{bought}", cell_value(rec.cash)), "money"),
        ("Cloud cost no plan line covers (Unmapped)", cell_value(rec.unmapped_effective_cost), "money")],
        top, WIDTHS[:2])
    top = place.row(place.rows - 1) + 3
    top = tie_out_table(ws, styles, rec, top, WIDTHS[:2])
    top = _forecast(ws, styles, rec, top)
    for title, name, header, groups in (
            ("Variance by provider", "tblVarianceByProvider", "Provider", rec.by_provider()),
            ("Variance by cost centre", "tblVarianceByCostCentre", "Cost centre", rec.by_cost_centre())):
        label(ws, styles, top - 1, title)
        placed = variance_by_table(ws, styles, name, header, groups, top)
        top = placed.row(placed.rows - 1) + 3
    top = waterfall(wb, ws, styles, rec, top)
    ws.activate()
    return ws, top


def _forecast(ws: Worksheet, styles: ReviewStyles, rec: Reconciliation, top: int) -> int:
    f = rec.forecast
    months = f.planned_months
    span = f"{months[0]} to {months[-1]}, {len(months)} month{'s' if len(months) != 1 else ''}" if months else "none"
    label(ws, styles, top - 1, f"Year-end forecast {rec.month[:4]}: the planned months ({span})")
    place = TablePlace(ws.name, "tblForecast", ("Figure", "Value"), top, 0, 8)
    plan, to_date, rest, year_end = (place.cell(i, "Value") for i in range(4))
    figures_table(ws, styles, "tblForecast", [
        ("Plan of the planned months", cell_value(f.year_plan), "money"),
        ("Actual to date, planned months", cell_value(f.actual_to_date), "money"),
        (f"Forecast, planned months to come ({f.months_to_forecast})", cell_value(f.run_rate * f.months_to_forecast),
         "money"),
        ("Year-end forecast, planned months", Formula(f"={to_date}+{rest}", cell_value(f.year_end)), "money"),
        ("Forecast against plan", Formula(f"={year_end}-{plan}", cell_value(f.year_end - f.year_plan)), "money"),
        ("Run rate per month (no one-off purchases)", cell_value(f.run_rate), "money"),
        ("Outside the plan: actual to date", cell_value(f.unplanned_actual), "money"),
        ("Outside the plan: forecast of the months to come", cell_value(f.unplanned_forecast), "money")],
        top, WIDTHS[:2])
    return place.row(place.rows - 1) + 3


def variance_by_table(ws: Worksheet, styles: ReviewStyles, name: str, header: str, groups: Sequence[GroupVariance],
                      top: int) -> TablePlace:
    """Planned, P&L actual, variance and variance % of each group, variance as native formulas."""
    columns = (text_column(header, WIDTHS[0]), money_column("Planned", WIDTHS[1]),
               money_column("P&L actual", WIDTHS[2]), money_column("Variance", WIDTHS[3]),
               money_column("Variance %", WIDTHS[4], "percent"))
    place = TablePlace(ws.name, name, tuple(c.header for c in columns), top, 0, max(len(groups), 1))
    rows = []
    for i, g in enumerate(groups):
        planned, actual, variance = (place.cell(i, h) for h in ("Planned", "P&L actual", "Variance"))
        pct = "" if g.variance_pct is None else float(g.variance_pct)
        rows.append((g.name, cell_value(g.planned), cell_value(g.actual),
                     Formula(f"={actual}-{planned}", cell_value(g.variance)),
                     Formula(f'=IF({planned}=0,"",{variance}/ABS({planned}))', pct)))
    return write_table(ws, styles, name, columns, rows, first_row=top)
