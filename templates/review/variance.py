"""The Variance sheet: one row per plan line (``tblVariance``), the comments kept for lines no longer in the
plan (``tblFormerLineComments``, shown, not input: the history keeps them), a chart of plan against actual by
line, and the unit cost per million tokens.

Above the table, the materiality inputs (named ``FlagPct`` and ``FlagAmount``): a line's ``Flag`` is a formula,
``over`` / ``under`` when its variance is beyond both (:func:`finops.reconcile.story.material_flag`). Beside
the variance: favourable or unfavourable, and its split into volume (GPU-hours where the plan prices the line's
fleet and the bill has its hours, else tokens, against planned, at the planned cost per unit) and rate (the
rest), from ``tblUnitCost`` below (:func:`finops.reconcile.story.volume_rate`). ``Owner``, ``Action`` and
``Comment`` are the review's input cells: who explains the line and what is done about it (the history keeps
owners and actions and hands them to the next month's review). Below, the
unit cost per million tokens and ``tblYear``: each line's year to date (plan, actual from the history) and
full year (plan, forecast = actual to date + the plan of the months to come).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from finops.reconcile import (
    LineVariance,
    MonthRecord,
    Reconciliation,
    favourable,
    volume_basis,
    volume_rate,
    year_to_date,
)

from ..sheets._table import Column, Formula, TablePlace, readable_chart, write_table
from .comments import ACTION, COMMENT, OWNER, PLAN_LINE, VARIANCE_TABLE
from .page import ReviewStyles, review_sheet
from .tables import cell_value, label, money_column, text_column

__all__ = ["FORMER_LINES_TABLE", "variance_sheet"]

#: The table of comments on lines the plan no longer has.
FORMER_LINES_TABLE = "tblFormerLineComments"

_COLUMNS = (text_column(PLAN_LINE, 24), text_column("Cost centre", 15), text_column("Category", 15),
            money_column("Planned", 15), money_column("P&L actual", 15), money_column("Cash", 15),
            money_column("Variance", 15), money_column("Variance %", 9, "percent"), text_column("Flag", 7),
            text_column("Favourable", 13), money_column("Volume", 14), money_column("Rate", 14),
            Column(OWNER, "text", "input", 14), Column(ACTION, "text", "input", 30), Column(COMMENT, "text", "input", 42))
_UNIT_COLUMNS = (text_column(PLAN_LINE, 24), text_column("Volume in", 15), money_column("Planned GPU-hours", 15, "number"),
                 money_column("Actual GPU-hours", 15, "number"), money_column("Planned M tokens", 10, "number"),
                 money_column("Actual M tokens", 9, "number"), money_column("Planned per M tokens", 15, "rate"),
                 money_column("Actual per M tokens", 15, "rate"), text_column("Actual tokens from", 12),
                 money_column("Billed M input", 10, "number"), money_column("Billed M output", 10, "number"),
                 money_column("Billed M cached", 10, "number"))
WIDTHS = tuple(c.width for c in _COLUMNS)
#: The tblUnitCost columns (after "Planned " / "Actual ") of each volume basis.
_QUANTITY = {"GPU-hours": "GPU-hours", "tokens": "M tokens"}


def variance_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime,
                   comments: Mapping[str, str], actions: Mapping[str, tuple[str, str]] | None = None,
                   trend: Sequence[MonthRecord] = ()) -> None:
    """Write the Variance sheet; ``actions`` (plan line -> (owner, action)) fill ``Owner`` and ``Action``;
    ``trend`` (the months the history keeps) gives the year-to-date actuals."""
    ws = review_sheet(wb, styles, "Variance", f"Plan against actual by plan line, {rec.month}",
                      "P&L actual: cloud cost (EffectiveCost) mapped by the plan's Mapping rules, plus depreciation. "
                      "A line is flagged when its variance is beyond both thresholds in row 3 (yellow: change them "
                      "and the flags follow). Under plan is favourable. Volume: GPU-hours (a fleet the plan prices) or "
                      "tokens (a line priced per token) against planned, at the planned cost per unit; Rate: the rest. Write who owns the line, what is done "
                      "and why in Owner, Action and Comment (yellow): a re-run of the month keeps them, and Owner and "
                      "Action carry into next month's review until changed or cleared.",
                      month=rec.month, run_at=run_at, widths=WIDTHS, header_rows=(3, 3))
    ws.set_row(3, 30)
    _thresholds(wb, ws, styles, rec)
    place = TablePlace(ws.name, VARIANCE_TABLE, tuple(c.header for c in _COLUMNS), 3, 0, max(len(rec.lines), 1))
    tokens = [line for line in rec.lines
              if line.planned_mtokens or line.actual_mtokens or line.planned_gpu_hours or line.actual_gpu_hours]
    unit_top = _unit_top(rec, comments, place)
    unit = TablePlace(ws.name, "tblUnitCost", tuple(c.header for c in _UNIT_COLUMNS), unit_top, 0, max(len(tokens), 1))
    unit_row = {line.plan_line: i for i, line in enumerate(tokens)}
    actions = actions or {}
    rows = [_row(place, unit, unit_row.get(line.plan_line), i, line, rec)
            + [*actions.get(line.plan_line, ("", "")), comments.get(line.plan_line, "")]
            for i, line in enumerate(rec.lines)]
    write_table(ws, styles, VARIANCE_TABLE, _COLUMNS, rows, first_row=3)
    flag = place.col("Flag")
    last = place.row(place.rows - 1)
    for value, fmt in (('"over"', styles.bad), ('"under"', styles.ok)):
        ws.conditional_format(place.row(0), flag, last, flag,
                              {"type": "cell", "criteria": "==", "value": value, "format": fmt})
    for value, fmt in (('"unfavourable"', styles.bad), ('"favourable"', styles.ok)):
        col = place.col("Favourable")
        ws.conditional_format(place.row(0), col, last, col,
                              {"type": "cell", "criteria": "==", "value": value, "format": fmt})
    below = _former_line_comments(ws, styles, rec, comments, last + 3)
    chart = wb.add_chart({"type": "column"})
    for header, color in (("Planned", "#8EA9DB"), ("P&L actual", "#1F3864")):
        chart.add_series({"name": header, "categories": "=" + place.column_range(PLAN_LINE),
                          "values": "=" + place.column_range(header), "fill": {"color": color}})
    readable_chart(chart, f"Plan against P&L actual by line, {rec.month}",
                   y={"name": rec.currency, "num_format": "#,##0"}, legend="bottom")
    chart.set_size({"width": 1000, "height": 360})
    ws.insert_chart(below, 0, chart)
    top = unit_top
    label(ws, styles, top - 1, "Volumes and unit cost per million tokens (lines with GPU-hours or token counts; "
                               "Volume in: the quantity the Volume column counts)")
    write_table(ws, styles, "tblUnitCost", _UNIT_COLUMNS,
                [(line.plan_line, volume_basis(line) or "", cell_value(line.planned_gpu_hours),
                  cell_value(line.actual_gpu_hours), cell_value(line.planned_mtokens), cell_value(line.actual_mtokens),
                  cell_value(line.planned_unit_cost), cell_value(line.actual_unit_cost),
                  {"usage": "Usage sheet", "bill": "bill"}.get(line.tokens_source, ""),
                  *(cell_value(None if line.billed_tokens is None else getattr(line.billed_tokens, kind))
                    for kind in ("input", "output", "cached"))) for line in tokens],
                first_row=top)
    ws.set_row(top, 30)
    _year_table(ws, styles, rec, trend, top + max(len(tokens), 1) + 3)
    for col, width in enumerate(WIDTHS):
        ws.set_column(col, col, width)
    ws.freeze_panes(4, 1)


def _thresholds(wb: Any, ws: Any, styles: ReviewStyles, rec: Reconciliation) -> None:
    """Row 3: the materiality inputs, ``FlagPct`` (share of plan) and ``FlagAmount`` (plan currency)."""
    ws.write_string(2, 0, "Flag beyond both: % of plan", styles.label)
    ws.write_number(2, 1, float(rec.threshold_pct) / 100, styles.input("percent"))
    ws.write_string(2, 2, "and amount", styles.label)
    ws.write_number(2, 3, float(rec.materiality), styles.input("money"))
    wb.define_name("FlagPct", "=Variance!$B$3")
    wb.define_name("FlagAmount", "=Variance!$D$3")


def _unit_top(rec: Reconciliation, comments: Mapping[str, str], place: TablePlace) -> int:
    """Header row of ``tblUnitCost``: below the variance table, the former lines' comments and the chart."""
    current = {line.plan_line for line in rec.lines}
    former = [line for line, text in comments.items() if line not in current and text.strip()]
    below = place.row(place.rows - 1) + 2 + (len(former) + 4 if former else 0)
    return below + 20


def _row(place: TablePlace, unit: TablePlace, unit_index: int | None, i: int, line: LineVariance,
         rec: Reconciliation) -> list[Any]:
    """Formulas and cached values of ``tblVariance`` row ``i`` up to ``Rate``."""
    planned, actual, variance = (place.cell(i, h) for h in ("Planned", "P&L actual", "Variance"))
    pct = "" if line.variance_pct is None else float(line.variance_pct)
    split, basis = volume_rate(line), volume_basis(line)
    if split is None or unit_index is None:
        volume: Any = ""
        rate: Any = ""
    else:
        planned_q, actual_q = (unit.cell(unit_index, f"{side} {_QUANTITY[basis]}") for side in ("Planned", "Actual"))
        volume = Formula(f"=({actual_q}-{planned_q})*{planned}/{planned_q}", float(split[0]))
        rate = Formula(f"={variance}-{place.cell(i, 'Volume')}", float(split[1]))
    return [line.plan_line, line.cost_centre, line.category, cell_value(line.planned), cell_value(line.actual),
            cell_value(line.actual_cash), Formula(f"={actual}-{planned}", cell_value(line.variance)),
            Formula(f'=IF({planned}=0,"",{variance}/ABS({planned}))', pct),
            Formula(f'=IF(AND(ABS({variance})>=FlagAmount,OR({planned}=0,ABS({variance})>FlagPct*ABS({planned}))),'
                    f'IF({variance}>0,"over","under"),"")', line.flag),
            Formula(f'=IF({variance}<0,"favourable",IF({variance}>0,"unfavourable","on plan"))',
                    favourable(line.variance.amount)),
            volume, rate]


_YEAR_COLUMNS = (text_column(PLAN_LINE, 24), money_column("YTD plan", 15), money_column("YTD actual", 15),
                 money_column("YTD variance", 15), money_column("Full-year plan", 15),
                 money_column("Full-year forecast", 15), money_column("Full-year variance", 15))


def _year_table(ws: Any, styles: ReviewStyles, rec: Reconciliation, trend: Sequence[MonthRecord], top: int) -> None:
    """``tblYear``: per line, the year to date and the full year (:func:`finops.reconcile.story.year_to_date`);
    the variances and the forecast (YTD actual + the plan of the months to come) as native formulas."""
    years = year_to_date(rec, [(m.month, m.lines) for m in trend])
    months = sorted({m.month for m in trend if m.month[:4] == rec.month[:4] and m.month < rec.month} | {rec.month})
    label(ws, styles, top - 1, f"Year to date ({months[0]} to {rec.month}, actuals from the history) and full year "
                               f"{rec.month[:4]} (forecast: actual to date + the plan of the months to come)")
    place = TablePlace(ws.name, "tblYear", tuple(c.header for c in _YEAR_COLUMNS), top, 0, max(len(years), 1))
    rows = []
    for i, y in enumerate(years):
        ytd_plan, ytd_actual, fy_plan, fy_forecast = (place.cell(i, h) for h in (
            "YTD plan", "YTD actual", "Full-year plan", "Full-year forecast"))
        rows.append([y.plan_line, float(y.ytd_plan), float(y.ytd_actual),
                     Formula(f"={ytd_actual}-{ytd_plan}", float(y.ytd_actual - y.ytd_plan)), float(y.year_plan),
                     Formula(f"={ytd_actual}+{fy_plan}-{ytd_plan}", float(y.year_forecast)),
                     Formula(f"={fy_forecast}-{fy_plan}", float(y.year_forecast - y.year_plan))])
    write_table(ws, styles, "tblYear", _YEAR_COLUMNS, rows, first_row=top)
    ws.set_row(top, 30)


def _former_line_comments(ws: Any, styles: ReviewStyles, rec: Reconciliation, comments: Mapping[str, str],
                          top: int) -> int:
    """The comments kept for plan lines this month's review no longer has (the line left the plan since they
    were typed); return the first free row below (``top - 1`` when there are none)."""
    current = {line.plan_line for line in rec.lines}
    former = sorted((line, text) for line, text in comments.items() if line not in current and text.strip())
    if not former:
        return top - 1
    label(ws, styles, top - 1, "Comments on lines no longer in the plan (kept in the history; not an input here)")
    place = write_table(ws, styles, FORMER_LINES_TABLE,
                        (text_column(PLAN_LINE, WIDTHS[0]), text_column(COMMENT, WIDTHS[1])),
                        former, first_row=top)  # a comment runs on over the empty cells to its right
    return place.row(place.rows - 1) + 3
