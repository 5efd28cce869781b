"""The Commitments sheet: the month's commitments in total, then one row per commitment with its
purchase date, term, end date, monthly amortization and the prepaid balance left."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finops.money import Money
from finops.reconcile.result import Reconciliation

from ..sheets._table import Column, write_table
from .page import ReviewStyles, review_sheet
from .tables import cell_value, figures_table, label, money_column, text_column

__all__ = ["commitments_sheet", "short_id"]

_COLUMNS = (text_column("Commitment", 34), text_column("Provider", 16), text_column("Type", 22),
            text_column("Payment", 11), Column("Purchased on", "date", "computed", 11),
            money_column("Term (months)", 8, "int"), Column("Ends on", "date", "computed", 11),
            money_column("Purchased (cash)", 15), money_column("Scheduled per month", 14),
            money_column("Amortized this month", 14), money_column("Unused this month", 13),
            money_column("Balance left", 15))
WIDTHS = tuple(c.width for c in _COLUMNS)


def commitments_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime) -> None:
    ws = review_sheet(wb, styles, "Commitments", f"Commitments and spot, {rec.month}",
                      "A commitment (reservation, savings plan, committed use discount) is bought for a term, "
                      "paid upfront or by monthly fee, and enters the P&L month by month as amortization. Utilization "
                      "= used / (used + unused); coverage = committed usage / usage of the services that had "
                      "committed usage. Balance left: bought in this month's bills and not yet in the P&L. Commitment: the "
                      "kind and last part of its CommitmentDiscountId.",
                      month=rec.month, run_at=run_at, widths=WIDTHS, header_rows=(0, 1))
    c = rec.commitments
    place = figures_table(ws, styles, "tblCommitments", [
        ("Commitments bought this month (cash)", cell_value(c.purchases), "money"),
        ("Amortization this month (P&L)", cell_value(c.amortization), "money"),
        ("  of which covered usage", cell_value(c.used), "money"),
        ("  of which unused commitment", cell_value(c.unused), "money"),
        ("Prepaid left from this month's purchases", cell_value(rec.prepaid_added), "money"),
        ("Savings against list price", cell_value(c.savings), "money"),
        ("Utilization", cell_value(c.utilization), "percent"),
        ("Coverage", cell_value(c.coverage), "percent"),
        ("Spot share of usage", cell_value(rec.spot_share), "percent")], 3, (WIDTHS[0], WIDTHS[1]))
    top = place.row(place.rows - 1) + 3
    label(ws, styles, top - 1, f"One row per commitment in the bills ({len(rec.commitment_lines)})")
    rows = [(short_id(line.commitment_id), line.provider_name, line.kind, line.payment, line.purchase_date, line.term_months,
             line.end_date, cell_value(line.purchased), cell_value(line.scheduled_monthly),
             cell_value(line.amortized), cell_value(line.unused), cell_value(line.balance_left))
            for line in rec.commitment_lines]
    schedule = write_table(ws, styles, "tblCommitmentSchedule", _COLUMNS, rows, first_row=top)
    ws.set_row(top, 30)
    total = schedule.row(schedule.rows - 1) + 1
    ws.write_string(total, 0, "Total", styles.label)
    for header in ("Purchased (cash)", "Amortized this month", "Unused this month"):
        value = Money.total([getattr(line, _FIELDS[header]) for line in rec.commitment_lines], rec.currency)
        ws.write_formula(total, schedule.col(header), f"=SUM({schedule.column_range(header)})", styles.total,
                         cell_value(value))
    for col, width in enumerate(WIDTHS):
        ws.set_column(col, col, width)
    ws.repeat_rows(top, top)


def short_id(commitment_id: str) -> str:
    """What tells commitments apart on a page: the kind and the last part of a CommitmentDiscountId.

    >>> short_id("arn:aws:ec2:ap-southeast-1:111:reservation/12a634f08ae0051d")
    'reservation/12a634f08ae0051d'
    >>> short_id("//compute.googleapis.com/projects/p/regions/asia-southeast1/commitments/cud-2301a9ac21")
    'commitments/cud-2301a9ac21'
    """
    *rest, last = commitment_id.split("/")
    return f"{rest[-1].split(':')[-1]}/{last}" if rest else last


#: Schedule column -> the :class:`~finops.reconcile.result.CommitmentLine` field it totals.
_FIELDS = {"Purchased (cash)": "purchased", "Amortized this month": "amortized", "Unused this month": "unused"}
