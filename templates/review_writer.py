"""Write the budget-review workbook ``budget-review-YYYY-MM.xlsx`` from a reconciliation (XlsxWriter).

Sheets: Summary, Variance, CAPEX-OPEX, Commitments, GPU usage, Unmapped. Only plain values and native
formulas (each with its computed value cached), so it reads the same in Excel, LibreOffice or a
viewer, with or without the add-in. Two charts: plan vs actual by line (Variance) and the monthly cost
stack, OPEX over CAPEX, from the history (CAPEX-OPEX).

Trust: every string that came from a bill (tags, names, ids) is written with ``write_string``, so
text starting with ``=``, ``+``, ``-`` or ``@`` stays text. The output is deterministic: the run
timestamp (a cell on Summary and the document's creation date) is the only thing that differs
between two runs on the same input. The file is written beside its target and renamed into place,
so a failed run leaves no half-written workbook.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from finops.files import replacing
from finops.money import Money
from finops.reconcile.history import MonthRecord
from finops.reconcile.result import Reconciliation

from .sheets._table import Column, Formula, TablePlace, titled_sheet, write_table
from .styles import Styles

__all__ = ["review_name", "write_review"]


def review_name(month: str) -> str:
    """File name of the review of ``month``.

    >>> review_name("2026-05")
    'budget-review-2026-05.xlsx'
    """
    return f"budget-review-{month}.xlsx"


def _num(value: Money | Decimal | None) -> float | None:
    if value is None:
        return None
    return float(value.amount if isinstance(value, Money) else value)


def write_review(rec: Reconciliation, out_dir: Path, *, run_at: datetime, trend: Sequence[MonthRecord] = (),
                 plan_name: str = "", bill_names: Sequence[str] = (), serving: Any = None) -> Path:
    """Write the review of ``rec`` into ``out_dir`` atomically and return its path.

    ``serving`` (a :class:`finops.serving.ServingMonth`) adds the Serving sheet (``review_serving``).
    """
    target = Path(out_dir) / review_name(rec.month)
    with replacing(target) as temporary:
        wb = xlsxwriter.Workbook(str(temporary), {"strings_to_formulas": False, "strings_to_urls": False,
                                                  "strings_to_numbers": False})
        wb.set_properties({"title": f"Budget review {rec.month}", "author": "llm-finops", "created": run_at,
                           "comments": "Written by `finops reconcile`"})
        styles = Styles(wb)
        _summary(wb, styles, rec, run_at, plan_name, bill_names)
        _variance(wb, styles, rec)
        _capex_opex(wb, styles, rec, trend)
        _commitments(wb, styles, rec)
        _gpu_usage(wb, styles, rec)
        if serving is not None:
            from .review_serving import write_serving_review

            write_serving_review(wb, styles, serving)
        _unmapped(wb, styles, rec)
        wb.close()
    return target


def _sheet(wb: Any, styles: Styles, name: str, title: str, note: str) -> Worksheet:
    return titled_sheet(wb, styles, name, note, title=title)


def _key_values(ws: Worksheet, styles: Styles, name: str, rows: Sequence[tuple[str, Any, str]],
                first_row: int) -> TablePlace:
    """A two-column table Figure/Value; ``rows`` are (label, value or Formula, kind)."""
    place = write_table(ws, styles, name, (Column("Figure", width=34), Column("Value", "money", "computed", 18)),
                        [(label, value) for label, value, _ in rows], first_row=first_row)
    percent = styles.computed("percent")
    for i, (_, value, kind) in enumerate(rows):
        if kind == "percent" and value is not None:
            cell = place.row(i), place.col("Value")
            if isinstance(value, Formula):
                ws.write_formula(*cell, value.text, percent, value.value)
            else:
                ws.write_number(*cell, value, percent)
    return place


def _summary(wb: Any, styles: Styles, rec: Reconciliation, run_at: datetime, plan_name: str,
             bill_names: Sequence[str]) -> None:
    ws = _sheet(wb, styles, "Summary", f"Budget review {rec.month}",
                f"Plan vs actual in {rec.currency}. P&L view: OPEX is cloud EffectiveCost (amortized), CAPEX is "
                "depreciation of owned assets. Cash view: BilledCost plus assets bought this month.")
    info = [("Month", rec.month), ("Currency", rec.currency), ("Run at (UTC)", run_at.isoformat(timespec="seconds")),
            ("Plan workbook", plan_name), ("Bill files", ", ".join(bill_names)), ("Bill rows", rec.bill_rows),
            ("Charges through (UTC)", rec.data_through.isoformat(sep=" ") if rec.data_through else ""),
            ("Variance threshold", float(rec.threshold_pct) / 100)]
    for i, (label, value) in enumerate(info):
        ws.write_string(3 + i, 0, label, styles.label)
        if isinstance(value, str):
            ws.write_string(3 + i, 1, value)
        elif label == "Variance threshold":
            ws.write_number(3 + i, 1, value, styles.computed("percent"))
        else:
            ws.write_number(3 + i, 1, value, styles.computed("int"))
    top = 3 + len(info) + 1
    place = TablePlace(ws.name, "tblSummary", ("Figure", "Value"), top, 0, 12)
    planned, opex, capex, actual, variance = (place.cell(i, "Value") for i in range(5))
    pct = "" if rec.planned.amount == 0 else float(rec.variance.amount / rec.planned.amount)
    rows: list[tuple[str, Any, str]] = [
        ("Planned", _num(rec.planned), "money"),
        ("OPEX: cloud EffectiveCost (amortized)", _num(rec.opex), "money"),
        ("CAPEX: depreciation", _num(rec.capex), "money"),
        ("Actual (P&L)", Formula(f"={opex}+{capex}", _num(rec.actual)), "money"),
        ("Variance", Formula(f"={actual}-{planned}", _num(rec.variance)), "money"),
        ("Variance %", Formula(f'=IF({planned}=0,"",{variance}/{planned})', pct), "percent"),
        ("Cloud BilledCost (cash)", _num(rec.billed_cost), "money"),
        ("Assets bought this month (cash)", _num(rec.capex_cash), "money"),
        ("Unmapped EffectiveCost", _num(rec.unmapped_effective_cost), "money"),
        ("Run-rate per month", _num(rec.forecast.run_rate), "money"),
        ("Forecast to year end", _num(rec.forecast.year_end), "money"),
        ("Plan for the year", _num(rec.forecast.year_plan), "money"),
    ]
    _key_values(ws, styles, "tblSummary", rows, top)
    nxt = top + len(rows) + 3
    ws.write_string(nxt - 1, 0, "By provider", styles.label)
    write_table(ws, styles, "tblProviders",
                (Column("Provider", width=34), Column("EffectiveCost", "money", "computed", 18),
                 Column("BilledCost", "money", "computed", 18)),
                [(p.provider_name, _num(p.effective_cost), _num(p.billed_cost)) for p in rec.providers],
                first_row=nxt)
    nxt += max(len(rec.providers), 1) + 3
    ws.write_string(nxt - 1, 0, "Invoice tie-out (BilledCost per invoice)", styles.label)
    write_table(ws, styles, "tblInvoices",
                (Column("Provider", width=34), Column("InvoiceId", width=18),
                 Column("BilledCost", "money", "computed", 18)),
                [(i.provider_name, i.invoice_id, _num(i.billed_cost)) for i in rec.invoices], first_row=nxt)
    ws.set_column(1, 1, 24)
    ws.activate()


def _variance(wb: Any, styles: Styles, rec: Reconciliation) -> None:
    ws = _sheet(wb, styles, "Variance", f"Plan vs actual by plan line, {rec.month}",
                f"Actual is the P&L view (EffectiveCost mapped by the Mapping rules, plus depreciation). Lines more "
                f"than {rec.threshold_pct}% over or under plan are flagged. Unit cost per million tokens where "
                "tokens are given.")
    columns = (Column("PlanLine", width=26), Column("Category", width=10), Column("Planned", "money", "computed"),
               Column("Actual", "money", "computed"), Column("ActualCash", "money", "computed"),
               Column("Variance", "money", "computed"), Column("VariancePct", "percent", "computed", 12),
               Column("Flag", width=8), Column("PlannedMTokens", "number", "computed"),
               Column("ActualMTokens", "number", "computed"), Column("PlannedPerMTok", "rate", "computed"),
               Column("ActualPerMTok", "rate", "computed"))
    place = TablePlace(ws.name, "tblVariance", tuple(c.header for c in columns), 3, 0, max(len(rec.lines), 1))
    rows = []
    for i, line in enumerate(rec.lines):
        planned, actual, variance = place.cell(i, "Planned"), place.cell(i, "Actual"), place.cell(i, "Variance")
        pct = "" if line.variance_pct is None else float(line.variance_pct)
        rows.append((line.plan_line, line.category, _num(line.planned), _num(line.actual), _num(line.actual_cash),
                     Formula(f"={actual}-{planned}", _num(line.variance)),
                     Formula(f'=IF({planned}=0,"",{variance}/{planned})', pct), line.flag,
                     _num(line.planned_mtokens), _num(line.actual_mtokens), _num(line.planned_unit_cost),
                     _num(line.actual_unit_cost)))
    write_table(ws, styles, "tblVariance", columns, rows, first_row=3)
    flag_col = place.col("Flag")
    last = place.row(place.rows - 1)
    ws.conditional_format(place.row(0), flag_col, last, flag_col,
                          {"type": "cell", "criteria": "==", "value": '"over"', "format": styles.bad})
    ws.conditional_format(place.row(0), flag_col, last, flag_col,
                          {"type": "cell", "criteria": "==", "value": '"under"', "format": styles.ok})
    chart = wb.add_chart({"type": "column"})
    for header, color in (("Planned", "#8EA9DB"), ("Actual", "#1F3864")):
        chart.add_series({"name": header, "categories": "=" + place.column_range("PlanLine"),
                          "values": "=" + place.column_range(header), "fill": {"color": color}})
    chart.set_title({"name": f"Plan vs actual by line, {rec.month}"})
    chart.set_y_axis({"name": rec.currency, "num_format": "#,##0"})
    chart.set_size({"width": 900, "height": 380})
    ws.insert_chart(place.row(place.rows - 1) + 3, 0, chart)
    ws.freeze_panes(4, 1)


def _capex_opex(wb: Any, styles: Styles, rec: Reconciliation, trend: Sequence[MonthRecord]) -> None:
    ws = _sheet(wb, styles, "CAPEX-OPEX", f"CAPEX and OPEX, {rec.month}",
                "P&L view amortizes: commitment purchases spread over their term (EffectiveCost), owned hardware "
                "depreciated straight-line. Cash view: what was paid this month.")
    columns = (Column("Kind", width=34), Column("PnL", "money", "computed", 18), Column("Cash", "money", "computed", 18))
    place = TablePlace(ws.name, "tblCapexOpex", ("Kind", "PnL", "Cash"), 3, 0, 3)
    total = tuple(Formula(f"={place.cell(0, c)}+{place.cell(1, c)}", v)
                  for c, v in (("PnL", _num(rec.actual)), ("Cash", _num(rec.cash))))
    write_table(ws, styles, "tblCapexOpex", columns, [
        ("OPEX: cloud", _num(rec.opex), _num(rec.billed_cost)),
        ("CAPEX: owned hardware", _num(rec.capex), _num(rec.capex_cash)),
        ("Total", *total)], first_row=3)
    top = 9
    ws.write_string(top - 1, 0, "Owned assets this month", styles.label)
    write_table(ws, styles, "tblAssetCharges",
                (Column("AssetId", width=34), Column("PlanLine", width=18),
                 Column("Depreciation", "money", "computed", 18), Column("PurchaseCash", "money", "computed", 18)),
                [(a.asset_id, a.plan_line, _num(a.depreciation), _num(a.purchase_cash)) for a in rec.assets],
                first_row=top)
    top += max(len(rec.assets), 1) + 3
    months = {m.month: (m.month, _num(m.opex), _num(m.capex), _num(m.planned))
              for m in trend if m.currency == rec.currency}
    months[rec.month] = (rec.month, _num(rec.opex), _num(rec.capex), _num(rec.planned))  # this run wins
    rows = [months[m] for m in sorted(months)]
    ws.write_string(top - 1, 0, "Monthly cost (history of reconciled months)", styles.label)
    trend_place = write_table(ws, styles, "tblTrend",
                              (Column("Month", width=34), Column("OPEX", "money", "computed", 18),
                               Column("CAPEX", "money", "computed", 18), Column("Planned", "money", "computed", 18)),
                              rows, first_row=top)
    chart = wb.add_chart({"type": "column", "subtype": "stacked"})
    for header, color in (("OPEX", "#2F5597"), ("CAPEX", "#C55A11")):
        chart.add_series({"name": header, "categories": "=" + trend_place.column_range("Month"),
                          "values": "=" + trend_place.column_range(header), "fill": {"color": color}})
    chart.set_title({"name": "Monthly cost stack"})
    chart.set_y_axis({"name": rec.currency, "num_format": "#,##0"})
    ws.insert_chart(top, 5, chart)


def _commitments(wb: Any, styles: Styles, rec: Reconciliation) -> None:
    ws = _sheet(wb, styles, "Commitments", f"Commitments and spot, {rec.month}",
                "Purchases are cash (BilledCost); used/unused are amortized EffectiveCost. Utilization = used / "
                "(used + unused); coverage = used / usage in the services with committed usage.")
    c = rec.commitments
    _key_values(ws, styles, "tblCommitments", [
        ("Commitment purchases (cash)", _num(c.purchases), "money"),
        ("Committed usage (amortized)", _num(c.used), "money"),
        ("Unused commitment", _num(c.unused), "money"),
        ("Savings vs list price", _num(c.savings), "money"),
        ("Utilization", _num(c.utilization), "percent"),
        ("Coverage", _num(c.coverage), "percent"),
        ("Spot share of usage", _num(rec.spot_share), "percent")], 3)


def _gpu_usage(wb: Any, styles: Styles, rec: Reconciliation) -> None:
    ws = _sheet(wb, styles, "GPU usage", f"GPU-hours by GPU model, {rec.month}",
                "From the bill's x_GpuHours where present (source 'bill'), else usage hours x GPUs per instance from "
                "the instance catalog (source 'catalog').")
    place = write_table(ws, styles, "tblGpuHours",
                        (Column("GpuModel", width=20), Column("GpuHours", "number", "computed", 16),
                         Column("Source", width=10)),
                        [(g.gpu_model, _num(g.hours), g.source) for g in rec.gpu_hours], first_row=3)
    if not rec.gpu_hours:
        ws.write_string(place.row(0) + 2, 0, "No GPU usage in these bills: no x_GpuHours, and no usage hours of "
                        "an instance type the instance catalog knows as a GPU instance.", styles.note)


def _unmapped(wb: Any, styles: Styles, rec: Reconciliation) -> None:
    ws = _sheet(wb, styles, "Unmapped", f"Charges no mapping rule matched, {rec.month}",
                "Add a rule on the plan's Mapping sheet to assign them to a plan line. Largest first.")
    columns = (Column("Provider", width=14), Column("SubAccount", width=22), Column("ServiceName", width=18),
               Column("InstanceType", width=14), Column("RegionId", width=14), Column("Tags", width=40),
               Column("EffectiveCost", "money", "computed", 16), Column("BilledCost", "money", "computed", 16))
    rows = [(u.provider_name, u.sub_account, u.service_name, u.instance_type, u.region_id, u.tags,
             _num(u.effective_cost), _num(u.billed_cost)) for u in rec.unmapped]
    place = write_table(ws, styles, "tblUnmapped", columns, rows, first_row=3)
    total_row = place.row(place.rows - 1) + 1
    ws.write_string(total_row, 5, "Total", styles.label)
    for header, value in (("EffectiveCost", rec.unmapped_effective_cost),
                          ("BilledCost", Money.total([u.billed_cost for u in rec.unmapped], rec.currency))):
        col = place.col(header)
        ws.write_formula(total_row, col, f"=SUM({place.column_range(header)})",
                         styles.computed("money"), _num(value))
