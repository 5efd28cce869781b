"""The Commitments sheet: the month's commitments in total, the prepaid balance from the month's start
to its end, then one row per commitment still running (bought this month or earlier) with its purchase
date, term, end date, its schedule (scheduled per month), the bill's amortization this month, what the provider
applied to it this month (FOCUS ``ContractApplied``, blank when no charge names it), amortized to date and the
prepaid balance left."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finops.money import Money
from finops.reconcile import CommitmentLine, Reconciliation

from ..sheets._table import Column, write_table
from .page import ReviewStyles, review_sheet
from .tables import cell_value, figures_table, label, money_column, text_column

__all__ = ["commitments_sheet", "short_id", "source_text"]

_COLUMNS = (text_column("Commitment", 30), text_column("Provider", 15), text_column("Type", 22),
            text_column("Payment", 11), Column("Purchased on", "date", "computed", 11),
            money_column("Term (months)", 8, "int"), Column("Ends on", "date", "computed", 11),
            money_column("Paid to date (cash)", 14), money_column("Scheduled per month", 13),
            money_column("Amortized this month", 13), money_column("Applied by provider", 13),
            money_column("Amortized to date", 14),
            money_column("Balance left", 14), text_column("Source", 26))
WIDTHS = tuple(c.width for c in _COLUMNS)
#: Schedule column -> the :class:`~finops.reconcile.result.CommitmentLine` field it totals (this month's
#: purchases and unused part are in the totals above the schedule).
_TOTALS = {"Amortized this month": "amortized", "Applied by provider": "applied", "Balance left": "balance_left"}


def commitments_sheet(wb: Any, styles: ReviewStyles, rec: Reconciliation, run_at: datetime) -> None:
    ws = review_sheet(wb, styles, "Commitments", f"Commitments and spot, {rec.month}",
                      "A commitment (reservation, savings plan, committed use discount) is bought for a term, "
                      "paid upfront, by monthly fee or partly both, and enters the P&L month by month as "
                      "amortization. Balance left: paid to date less amortized to date, the prepaid cost not yet "
                      "in the P&L, carried from "
                      "month to month by the history. Utilization = used / (used + unused); coverage = committed "
                      "usage / usage of the services that had committed usage. Commitment: the kind and last part "
                      "of its CommitmentDiscountId.",
                      month=rec.month, run_at=run_at, widths=WIDTHS, header_rows=(0, 1))
    c = rec.commitments
    prepaid = c.prepaid()
    # labels fit the Commitment column (30), values the Provider column
    place = figures_table(ws, styles, "tblCommitments", [
        ("Bought this month (cash)", cell_value(c.purchases), "money"),
        ("Amortization this month (P&L)", cell_value(c.amortization), "money"),
        ("  of which covered usage", cell_value(c.used), "money"),
        ("  of which unused", cell_value(c.unused), "money"),
        ("Prepaid balance, month start", cell_value(prepaid.opening), "money"),
        ("Prepaid balance, month end", cell_value(prepaid.closing), "money"),
        ("  of which estimated", cell_value(prepaid.estimated), "money"),
        ("Savings against list price", cell_value(c.savings), "money"),
        ("Utilization", cell_value(c.utilization), "percent"),
        ("Coverage", cell_value(c.coverage), "percent"),
        ("Spot share of usage", cell_value(rec.spot_share), "percent")], 3, (WIDTHS[0], WIDTHS[1]))
    if prepaid.estimated.amount:
        ws.write_string(place.row(6), 2, "bought before the history began: the first month's amortization x term, "
                                         "an upper bound")
    top = place.row(place.rows - 1) + 3
    label(ws, styles, top - 1, f"One row per commitment running this month ({len(c.lines)})")
    rows = [(short_id(line.commitment_id), line.provider_name, line.kind, line.payment, line.purchase_date,
             line.term_months, line.end_date, cell_value(line.paid_to_date), cell_value(line.scheduled_monthly),
             cell_value(line.amortized), cell_value(line.applied), cell_value(line.amortized_to_date), cell_value(line.balance_left),
             source_text(line))
            for line in c.lines]
    schedule = write_table(ws, styles, "tblCommitmentSchedule", _COLUMNS, rows, first_row=top)
    ws.set_row(top, 30)
    total = schedule.row(schedule.rows - 1) + 1
    ws.write_string(total, 0, "Total", styles.label)
    for header, name in _TOTALS.items():
        value = Money.total([getattr(line, name) for line in c.lines if getattr(line, name) is not None],
                            rec.currency)
        ws.write_formula(total, schedule.col(header), f"=SUM({schedule.column_range(header)})", styles.total,
                         cell_value(value))
    if prepaid.unknown:
        ws.write_string(total + 1, 0, f"{prepaid.unknown} commitment(s) bought before the history with no term in "
                                      "the bills: their balance is not known and not in the total.")
    for col, width in enumerate(WIDTHS):
        ws.set_column(col, col, width)
    ws.repeat_rows(top, top)


def source_text(line: CommitmentLine) -> str:
    """Where a commitment's purchase comes from, in words (the schedule's Source column).

    >>> from finops.reconcile.result import CommitmentLine
    >>> from finops.money import Money
    >>> z = Money.zero("USD")
    >>> source_text(CommitmentLine("sp", "AWS", "", "", None, 12, None, z, z, z, z, z, None, z, "estimate", "2026-03", z))
    'estimate: bought by 2026-03'
    """
    return {"bills": "bought this month", "history": f"bought in {line.first_month}'s bills",
            "estimate": f"estimate: bought by {line.first_month}", "contract": "contract commitment dataset",
            "": "not known: no term in the bills"}[line.source]


def short_id(commitment_id: str) -> str:
    """What tells commitments apart on a page: the kind and the last part of a CommitmentDiscountId.

    >>> short_id("arn:aws:ec2:ap-southeast-1:111:reservation/12a634f08ae0051d")
    'reservation/12a634f08ae0051d'
    >>> short_id("//compute.googleapis.com/projects/p/regions/asia-southeast1/commitments/cud-2301a9ac21")
    'commitments/cud-2301a9ac21'
    """
    *rest, last = commitment_id.split("/")
    return f"{rest[-1].split(':')[-1]}/{last}" if rest else last
