"""The Variance sheet: one row per plan line (``tblVariance``, whose ``Comment`` cells are the review's
only input), the comments kept for lines no longer in the plan (``tblFormerLineComments``, shown, not
input: the history keeps them), a chart of plan against actual by line, and the unit cost per million
tokens."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from finops.reconcile.result import Reconciliation

from ..sheets._table import Column, Formula, TablePlace, write_table
from .comments import COMMENT, PLAN_LINE, VARIANCE_TABLE
from .page import ReviewStyles, review_sheet
from .tables import cell_value, label, money_column, text_column

__all__ = ["FORMER_LINES_TABLE", "variance_sheet"]

#: The table of comments on lines the plan no longer has.
FORMER_LINES_TABLE = "tblFormerLineComments"

_COLUMNS = (text_column(PLAN_LINE, 24), text_column("Cost centre", 10), text_column("Category", 9),
            money_column("Planned", 15), money_column("P&L actual", 15), money_column("Cash", 15),
            money_column("Variance", 15), money_column("Variance %", 9, "percent"), text_column("Flag", 7),
            Column(COMMENT, "text", "input", 42))
_UNIT_COLUMNS = (text_column(PLAN_LINE, 24), money_column("Planned M tokens", 10, "number"),
                 money_column("Actual M tokens", 9, "number"), money_column("Planned per M tokens", 15, "rate"),
                 money_column("Actual per M tokens", 15, "rate"), text_column("Actual tokens from", 12),
                 money_column("Billed M input", 10, "number"), money_column("Billed M output", 10, "number"),
                 money_column("Billed M cached", 10, "number"))
WIDTHS = tuple(c.width for c in _COLUMNS)


def variance_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime,
                   comments: Mapping[str, str]) -> None:
    ws = review_sheet(wb, styles, "Variance", f"Plan against actual by plan line, {rec.month}",
                      f"P&L actual: cloud cost (EffectiveCost) mapped by the plan's Mapping rules, plus depreciation. "
                      f"Lines more than {rec.threshold_pct}% over or under plan are flagged. Write why in Comment "
                      "(yellow): a re-run of the month keeps it.", month=rec.month, run_at=run_at, widths=WIDTHS,
                      header_rows=(3, 3))
    ws.set_row(3, 30)
    place = TablePlace(ws.name, VARIANCE_TABLE, tuple(c.header for c in _COLUMNS), 3, 0, max(len(rec.lines), 1))
    rows = []
    for i, line in enumerate(rec.lines):
        planned, actual, variance = (place.cell(i, h) for h in ("Planned", "P&L actual", "Variance"))
        pct = "" if line.variance_pct is None else float(line.variance_pct)
        rows.append((line.plan_line, line.cost_centre, line.category, cell_value(line.planned),
                     cell_value(line.actual), cell_value(line.actual_cash),
                     Formula(f"={actual}-{planned}", cell_value(line.variance)),
                     Formula(f'=IF({planned}=0,"",{variance}/ABS({planned}))', pct), line.flag,
                     comments.get(line.plan_line, "")))
    write_table(ws, styles, VARIANCE_TABLE, _COLUMNS, rows, first_row=3)
    flag = place.col("Flag")
    last = place.row(place.rows - 1)
    for value, fmt in (('"over"', styles.bad), ('"under"', styles.ok)):
        ws.conditional_format(place.row(0), flag, last, flag,
                              {"type": "cell", "criteria": "==", "value": value, "format": fmt})
    below = _former_line_comments(ws, styles, rec, comments, last + 3)
    chart = wb.add_chart({"type": "column"})
    for header, color in (("Planned", "#8EA9DB"), ("P&L actual", "#1F3864")):
        chart.add_series({"name": header, "categories": "=" + place.column_range(PLAN_LINE),
                          "values": "=" + place.column_range(header), "fill": {"color": color}})
    chart.set_title({"name": f"Plan against P&L actual by line, {rec.month}"})
    chart.set_y_axis({"name": rec.currency, "num_format": "#,##0"})
    chart.set_legend({"position": "bottom"})
    chart.set_size({"width": 1000, "height": 360})
    ws.insert_chart(below, 0, chart)
    top = below + 20
    tokens = [line for line in rec.lines if line.planned_mtokens or line.actual_mtokens]
    label(ws, styles, top - 1, "Unit cost per million tokens (lines with token counts)")
    write_table(ws, styles, "tblUnitCost", _UNIT_COLUMNS,
                [(line.plan_line, cell_value(line.planned_mtokens), cell_value(line.actual_mtokens),
                  cell_value(line.planned_unit_cost), cell_value(line.actual_unit_cost),
                  {"usage": "Usage sheet", "bill": "bill"}.get(line.tokens_source, ""),
                  *(cell_value(None if line.billed_tokens is None else getattr(line.billed_tokens, kind))
                    for kind in ("input", "output", "cached"))) for line in tokens],
                first_row=top)
    ws.set_row(top, 30)
    for col, width in enumerate(WIDTHS):
        ws.set_column(col, col, width)
    ws.freeze_panes(4, 1)


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
