"""The Summary's story: the headline sentence, the waterfall from plan to actual, the commitment tie-out.

* Headline (row 3): the month's result against plan and its main cause (:func:`finops.reconcile.story.headline`).
* ``tblWaterfall``: the plan, then the variance of the lines that moved it most (the cost no plan line
  covers among them), the rest together, and the P&L actual; each step's invisible base, increase
  (unfavourable, red) and decrease (favourable, green) as native formulas over its variance, drawn as a
  stacked column chart (the classic waterfall, which LibreOffice and every Excel version draw alike).
* ``tblTieOut``: the commitments' amortization on their own schedule against what the bills amortized,
  the difference and a flag formula (:func:`finops.reconcile.story.tie_out`).
"""

from __future__ import annotations

from typing import Any

from xlsxwriter.worksheet import Worksheet

from finops.reconcile import TIE_OUT_SHARE, Reconciliation, driver_label, headline, main_drivers, tie_out

from ..sheets._table import Formula, TablePlace, readable_chart, write_table
from .page import ReviewStyles
from .tables import cell_value, figures_table, label, money_column, text_column

__all__ = ["headline_row", "tie_out_table", "waterfall"]

_HEADLINE_ROW = 2
_DRIVERS = 5


def headline_row(ws: Worksheet, styles: ReviewStyles, rec: Reconciliation, columns: int) -> None:
    """The headline sentence, bold, across the sheet's ``columns`` in row 3."""
    text = headline(rec)
    ws.merge_range(_HEADLINE_ROW, 0, _HEADLINE_ROW, columns - 1, text, styles.headline)
    ws.set_row(_HEADLINE_ROW, 16 * (len(text) // 90 + 1) + 4)


def tie_out_table(ws: Worksheet, styles: ReviewStyles, rec: Reconciliation, top: int,
                  widths: tuple[float, float]) -> int:
    """``tblTieOut`` with its header at ``top``; returns the first free row below it."""
    t = tie_out(rec)
    label(ws, styles, top - 1, "Commitments: amortization on their schedule against the bills")
    place = TablePlace(ws.name, "tblTieOut", ("Figure", "Value"), top, 0, 4)
    scheduled, billed, difference = (place.cell(i, "Value") for i in range(3))
    share = float(TIE_OUT_SHARE)
    verdict = "ties out" if t.agrees else (
        "check: the bills amortize less than the schedule (a partial bill, or unused commitment missing from it)"
        if t.difference.amount < 0 else "check: the bills amortize more than the schedule (a commitment the "
                                        "history does not know)")
    figures_table(ws, styles, "tblTieOut", [
        ("Scheduled amortization this month (purchase / term)", cell_value(t.scheduled), "money"),
        ("Amortized in the bills (used + unused commitment)", cell_value(t.billed), "money"),
        ("Difference (bills - schedule)", Formula(f"={billed}-{scheduled}", cell_value(t.difference)), "money"),
        ("Tie-out", Formula(
            f'=IF(ABS({difference})<=MAX(1,{share}*ABS({scheduled})),"ties out",IF({difference}<0,'
            '"check: the bills amortize less than the schedule (a partial bill, or unused commitment missing from '
            'it)","check: the bills amortize more than the schedule (a commitment the history does not know)"))',
            verdict), "text")], top, widths)
    return place.row(place.rows - 1) + 3


def waterfall(wb: Any, ws: Worksheet, styles: ReviewStyles, rec: Reconciliation, top: int) -> int:
    """``tblWaterfall`` at ``top`` and its chart below; returns the first free row under the chart.

    Each step's ``Base`` is where its bar starts: the lower of the running totals before and after it,
    ``MIN(plan + SUM(changes before), plan + SUM(changes to here))``.
    """
    drivers, rest = main_drivers(rec, _DRIVERS)
    steps: list[tuple[str, float]] = [(driver_label(d.plan_line), float(d.variance.amount)) for d in drivers]
    if rest.amount != 0:
        steps.append(("other lines", float(rest.amount)))
    columns = (text_column("Step", 40), money_column("Change", 15), money_column("Base", 15),
               money_column("Increase", 15), money_column("Decrease", 15), money_column("Total", 15))
    count = len(steps) + 2
    place = TablePlace(ws.name, "tblWaterfall", tuple(c.header for c in columns), top, 0, count)
    label(ws, styles, top - 1, "From plan to P&L actual: the lines that moved it most (the waterfall below)")
    planned, actual = float(rec.planned.amount), float(rec.actual.amount)
    start, first_change = place.cell(0, "Total"), place.cell(0, "Change")
    rows: list[list[Any]] = [["Start: the plan", "", 0.0, "", "", planned]]
    level = planned
    for i, (name, change) in enumerate(steps, start=1):
        c, before, here = (place.cell(i, "Change"), place.cell(i - 1, "Change"), place.cell(i, "Change"))
        rows.append([name, change,
                     Formula(f"=MIN({start}+SUM({first_change}:{before}),{start}+SUM({first_change}:{here}))",
                             min(level, level + change)),
                     Formula(f"=MAX({c},0)", max(change, 0.0)), Formula(f"=MAX(-{c},0)", max(-change, 0.0)), ""])
        level += change
    rows.append(["End: P&L actual", "", 0.0, "", "", actual])
    write_table(ws, styles, "tblWaterfall", columns, rows, first_row=top)
    chart = wb.add_chart({"type": "column", "subtype": "stacked"})
    first, end = place.row(0), place.row(count - 1)
    for header, fill in (("Base", {"none": True}), ("Total", {"color": "#1F3864"}),
                         ("Increase", {"color": "#C00000"}), ("Decrease", {"color": "#548235"})):
        col = place.col(header)
        series = {"name": header, "categories": [ws.name, first, 0, end, 0],
                  "values": [ws.name, first, col, end, col], "fill": fill, "gap": 60}
        if header == "Base":
            series["border"] = {"none": True}
        chart.add_series(series)
    lowest = min([planned, actual] + [float(r[2].value) for r in rows[1:-1]])
    floor = 10 ** max(0, len(str(int(abs(lowest)))) - 2)   # the axis starts near the lowest bar, not at 0
    readable_chart(chart, f"Plan to P&L actual, {rec.month} (red over plan, green under)",
                   y={"name": rec.currency, "num_format": "#,##0",
                      **({"min": int(lowest * 0.9 // floor * floor)} if lowest > 0 else {})})
    chart.set_legend({"none": True})
    chart.set_size({"width": 760, "height": 380})
    chart_row = place.row(count - 1) + 2
    ws.insert_chart(chart_row, 0, chart)
    return chart_row + 21
