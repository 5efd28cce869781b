"""The detail sheets of the review: GPU usage, the charges no mapping rule matched, and the Glossary."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finops.money import Money
from finops.reconcile import Reconciliation

from ..sheets._table import write_table
from .page import ReviewStyles, review_sheet, write_wrapped
from .tables import cell_value, money_column, text_column

__all__ = ["GLOSSARY", "glossary_sheet", "gpu_usage_sheet", "unmapped_sheet"]

#: Term -> what it means, in plain words (the Glossary sheet).
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("P&L view", ("Cost as the profit and loss account sees it: cloud cost amortized plus depreciation of owned "
                 "hardware. The plan is written in this view, so variance is measured in it.")),
    ("Cash view", ("Money that left the company this month: what the clouds billed (including commitments paid "
                  "upfront) plus hardware bought.")),
    ("EffectiveCost", ("The cloud cost of a charge after discounts, with prepaid commitments spread over the months "
                      "they cover (FOCUS column). Summed, it is the cloud part of the P&L.")),
    ("BilledCost", ("What the invoice charges for a line (FOCUS column), counted when it is billed. Summed per "
                   "invoice it ties out to the provider's invoice; it is the cloud part of the cash view.")),
    ("Commitment", ("A reservation, savings plan or committed use discount: a price agreed for a term (1 or 3 "
                   "years), paid upfront or by monthly fee, in exchange for a lower rate.")),
    ("Amortization", ("Spreading a prepaid commitment over its term: each month takes its share into the P&L, "
                     "carried by the usage it covers and by a row for the part left unused.")),
    ("Prepaid balance", "The part of a commitment that has been paid but not yet amortized into the P&L."),
    ("Depreciation", ("Spreading the cost of owned hardware, less its residual value, evenly over its useful "
                     "life in months, from the month it goes into service.")),
    ("Utilization", ("Share of the commitments' amortization that usage actually used: used / (used + unused). "
                    "100 % means nothing bought went to waste.")),
    ("Coverage", ("Share of the usage that commitments paid for, in the services that had committed usage. The "
                 "rest ran at on-demand or spot prices.")),
    ("Run rate", ("The average P&L actual of the latest (up to) three reconciled months, one-off purchases left "
                 "out: what a month costs if nothing changes.")),
    ("Year-end forecast", ("Actuals of the planned months reconciled so far plus the run rate for each planned "
                          "month still to come. It covers the same months as the plan it is set against; months "
                          "without a plan are shown apart.")),
    ("Unmapped", ("Cloud cost that no rule on the plan's Mapping sheet assigns to a plan line. Add a rule to "
                 "give it a line.")),
    ("Variance", ("P&L actual minus planned. Positive: over plan. Lines past the threshold are flagged over or "
                 "under.")),
)


def gpu_usage_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime) -> None:
    columns = (text_column("GPU model", 20), money_column("GPU-hours", 16, "number"), text_column("Source", 12))
    ws = review_sheet(wb, styles, "GPU usage", f"GPU-hours by GPU model, {rec.month}",
                      "From the bill's x_GpuHours where present (source 'bill'), else usage hours x GPUs per instance "
                      "from the instance catalog (source 'catalog').", month=rec.month, run_at=run_at,
                      widths=tuple(c.width for c in columns) + (40,), header_rows=(3, 3))
    place = write_table(ws, styles, "tblGpuHours", columns,
                        [(g.gpu_model, cell_value(g.hours), g.source) for g in rec.gpu_hours], first_row=3)
    if not rec.gpu_hours:
        ws.write_string(place.row(0) + 2, 0, "No GPU usage in these bills: no x_GpuHours, and no usage hours of "
                        "an instance type the instance catalog knows as a GPU instance.")


def unmapped_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime) -> None:
    columns = (text_column("Provider", 13), text_column("Sub-account", 20), text_column("Service", 18),
               text_column("Instance type", 13), text_column("Region", 13), text_column("Tags", 76),
               money_column("Amortized", 15), money_column("Billed", 15))
    ws = review_sheet(wb, styles, "Unmapped", f"Cloud cost no mapping rule matched, {rec.month}",
                      "Add a rule on the plan's Mapping sheet to give these charges a plan line. Largest first.",
                      month=rec.month, run_at=run_at, widths=tuple(c.width for c in columns), header_rows=(3, 3))
    rows = [(u.provider_name, u.sub_account, u.service_name, u.instance_type, u.region_id, u.tags,
             cell_value(u.effective_cost), cell_value(u.billed_cost)) for u in rec.unmapped]
    place = write_table(ws, styles, "tblUnmapped", columns, rows, first_row=3)
    for i, u in enumerate(rec.unmapped):  # tags are long: wrapped, never cut
        write_wrapped(ws, styles, place.row(i), place.col("Tags"), u.tags, columns[5].width)
    total = place.row(place.rows - 1) + 1
    ws.write_string(total, 5, "Total", styles.label)
    for header, value in (("Amortized", rec.unmapped_effective_cost),
                          ("Billed", Money.total([u.billed_cost for u in rec.unmapped], rec.currency))):
        ws.write_formula(total, place.col(header), f"=SUM({place.column_range(header)})", styles.total,
                         cell_value(value))


def glossary_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime) -> None:
    columns = (text_column("Term", 20), text_column("In plain words", 74))
    ws = review_sheet(wb, styles, "Glossary", "Glossary", "The words of this review, in plain words.",
                      month=rec.month, run_at=run_at, widths=tuple(c.width for c in columns), header_rows=(3, 3))
    place = write_table(ws, styles, "tblGlossary", columns, GLOSSARY, first_row=3)
    for i, (term, meaning) in enumerate(GLOSSARY):
        ws.write_string(place.row(i), 0, term, styles.label_top)
        write_wrapped(ws, styles, place.row(i), 1, meaning, columns[1].width)
