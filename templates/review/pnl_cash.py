"""The "P&L and cash" sheet: both views side by side, the bridge from cash to the P&L, depreciation
per asset, the invoice tie-out and the months kept in the history; and the month-over-month chart."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from xlsxwriter.worksheet import Worksheet

from finops.reconcile import MonthRecord, Reconciliation

from ..sheets._table import Formula, TablePlace, readable_chart, write_table
from .page import ReviewStyles, review_sheet
from .tables import cell_value, label, money_column, text_column

__all__ = ["SHEET", "month_over_month_chart", "pnl_cash_sheet"]

SHEET = "P&L and cash"
WIDTHS = (40, 18, 18, 18, 18, 18)


def pnl_cash_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime,
                   trend: Sequence[MonthRecord]) -> TablePlace:
    """Write the sheet; return where the month trend table (``tblTrend``) is."""
    ws = review_sheet(wb, styles, SHEET, f"P&L and cash, {rec.month}",
                      "P&L view: cloud cost amortized (commitments bought upfront spread over their term, "
                      "EffectiveCost) and owned hardware depreciated straight-line. Cash view: what was billed "
                      "(BilledCost, commitment purchases when paid) and hardware bought. The bridge explains the "
                      "difference.", month=rec.month, run_at=run_at, widths=WIDTHS)
    place = TablePlace(ws.name, "tblPnlCash", ("Kind", "P&L", "Cash"), 3, 0, 3)
    totals = tuple(Formula(f"={place.cell(0, c)}+{place.cell(1, c)}", v)
                   for c, v in (("P&L", cell_value(rec.actual)), ("Cash", cell_value(rec.cash))))
    write_table(ws, styles, "tblPnlCash", (text_column("Kind", WIDTHS[0]), money_column("P&L", WIDTHS[1]),
                                           money_column("Cash", WIDTHS[2])), [
        ("Cloud (OPEX): amortized / billed", cell_value(rec.opex), cell_value(rec.billed_cost)),
        ("Owned hardware (CAPEX): depreciation / bought", cell_value(rec.capex), cell_value(rec.capex_cash)),
        ("Total", *totals)], first_row=3)
    top = _bridge(ws, styles, rec, 10)
    ws.set_h_pagebreaks([top - 1])  # the views and the bridge on the first page, the detail tables after
    label(ws, styles, top - 1, "Owned hardware: depreciation and capital bought this month")
    assets = write_table(ws, styles, "tblAssetCharges",
                         (text_column("Asset", WIDTHS[0]), text_column("Plan line", WIDTHS[1]),
                          money_column("Depreciation", WIDTHS[2]), money_column("Bought (cash)", WIDTHS[3])),
                         [(a.asset_id, a.plan_line, cell_value(a.depreciation), cell_value(a.purchase_cash))
                          for a in rec.assets], first_row=top)
    top = assets.row(assets.rows - 1) + 3
    label(ws, styles, top - 1, "Invoice tie-out: BilledCost per invoice (compare with the provider's invoices)")
    invoices = write_table(ws, styles, "tblInvoices",
                           (text_column("Provider", WIDTHS[0]), text_column("Invoice", WIDTHS[1]),
                            money_column("Billed", WIDTHS[2]), money_column("Amortized", WIDTHS[3])),
                           [(i.provider_name, i.invoice_id, cell_value(i.billed_cost), None) for i in rec.invoices]
                           + [(p.provider_name, "all invoices", cell_value(p.billed_cost),
                               cell_value(p.effective_cost)) for p in rec.providers], first_row=top)
    top = invoices.row(invoices.rows - 1) + 3
    label(ws, styles, top - 1, "Months kept in the history (this run for this month)")
    months = {m.month: (m.month, cell_value(m.planned), cell_value(m.actual), cell_value(m.cash))
              for m in trend if m.currency == rec.currency}
    months[rec.month] = (rec.month, cell_value(rec.planned), cell_value(rec.actual), cell_value(rec.cash))
    trend_place = write_table(ws, styles, "tblTrend",
                              (text_column("Month", WIDTHS[0]), money_column("Planned", WIDTHS[1]),
                               money_column("P&L actual", WIDTHS[2]), money_column("Cash", WIDTHS[3])),
                              [months[m] for m in sorted(months)], first_row=top)
    for col, width in enumerate(WIDTHS):
        ws.set_column(col, col, width)
    return trend_place


def _bridge(ws: Worksheet, styles: ReviewStyles, rec: Reconciliation, top: int) -> int:
    label(ws, styles, top - 1, "Bridge from cash to the P&L")
    steps = rec.bridge()
    place = write_table(ws, styles, "tblBridge",
                        (text_column("Step", WIDTHS[0]), money_column("Amount", WIDTHS[1]),
                         text_column("Why", WIDTHS[2])),
                        [(s.label, cell_value(s.amount), s.explanation) for s in steps], first_row=top)
    for i, step in enumerate(steps):  # no border: the explanation runs on past its column
        ws.write_string(place.row(i), place.col("Why"), step.explanation)
    total = place.row(place.rows - 1) + 1
    ws.write_string(total, 0, "= P&L actual", styles.label)
    ws.write_formula(total, 1, f"=SUM({place.column_range('Amount')})", styles.total, cell_value(rec.actual))
    prepaid = rec.commitments.prepaid()
    label(ws, styles, total + 2, "Prepaid commitments: balance not yet in the P&L (every commitment still running)")
    rows = [("Balance at the start of the month", prepaid.opening, "paid in earlier months, not yet amortized"),
            ("plus commitments bought this month", prepaid.bought, "cash paid for them this month"),
            ("less amortization this month", -prepaid.amortized, "their share in this month's P&L"),
            ("= Balance left at the end of the month", prepaid.closing, "enters the P&L in later months")]
    if prepaid.estimated.amount:
        rows.append(("  of which estimated", prepaid.estimated,
                     "bought before the history: amortization of the first month seen x term, at most"))
    for i, (text, amount, why) in enumerate(rows):
        row = total + 3 + i
        ws.write_string(row, 0, text, styles.label if text.startswith("=") else None)
        ws.write_number(row, 1, cell_value(amount), styles.total if text.startswith("=") else styles.computed("money"))
        ws.write_string(row, 2, why)
    return total + 3 + len(rows) + 3


def month_over_month_chart(wb: Any, ws: Worksheet, trend: TablePlace, row: int, currency: str) -> None:
    """Plan, P&L actual and cash by month from ``tblTrend`` (only once two months are kept)."""
    if trend.rows < 2:
        return
    chart = wb.add_chart({"type": "column"})
    for header, color in (("Planned", "#8EA9DB"), ("P&L actual", "#1F3864"), ("Cash", "#C55A11")):
        chart.add_series({"name": header, "categories": "=" + trend.column_range("Month"),
                          "values": "=" + trend.column_range(header), "fill": {"color": color}})
    readable_chart(chart, "Month over month: plan, P&L actual and cash", y={"name": currency, "num_format": "#,##0"},
                   legend="bottom")
    chart.set_size({"width": 720, "height": 320})
    ws.insert_chart(row, 0, chart)
