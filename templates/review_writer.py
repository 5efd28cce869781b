"""Write the budget-review workbook ``budget-review-YYYY-MM.xlsx`` from a reconciliation (XlsxWriter).

Sheets (``templates/review/``): Summary (a headline sentence with the month's result and its main cause,
the month in the P&L and cash views, a waterfall chart from plan to actual by the lines that moved it, the
commitment tie-out, the year-end forecast on the plan's months, variance by provider and by cost centre,
and, once two months are kept, a month-over-month chart of plan, P&L actual and cash), Variance (one row per
plan line: flags as formulas over the materiality inputs above the table, favourable or not, volume and rate,
and the ``Owner``, ``Action`` and ``Comment`` columns, the review's only input cells), P&L and cash (the bridge from cash to the P&L,
depreciation per asset, invoice tie-out, months kept), Commitments (one row per commitment), GPU
usage, Unmapped and Glossary. Every sheet prints one page wide with its header rows repeated and a
footer with the month, the run time and the page (:mod:`templates.review.page`).

Only plain values and native formulas (each with its computed value cached), so it reads the same in
Excel, LibreOffice or a viewer, with or without the add-in. Comments typed into the review it replaces
are passed in (:func:`templates.review.comments.kept_comments`) and written back.

Trust: every string that came from a bill (tags, names, ids) is written with ``write_string``, so
text starting with ``=``, ``+``, ``-`` or ``@`` stays text. The output is deterministic: the run
timestamp (a cell on Summary, the page footers and the document's creation date) is the only thing
that differs between two runs on the same input. The file is written beside its target and renamed
into place, so a failed run leaves no half-written workbook.

Ownership: every review carries the custom document property :data:`REVIEW_PROPERTY`; a file at the
review's name that carries neither it nor the description the reviews of earlier versions carry is not a
review, and is never replaced (:func:`check_replaceable`): the run stops with exit 2 before writing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import xlsxwriter

from finops.errors import InputError, Location
from finops.files import refuse_input, replacing
from finops.reconcile import MonthRecord, Reconciliation

from .review.commitments import commitments_sheet
from .review.details import glossary_sheet, gpu_usage_sheet, unmapped_sheet
from .review.page import ReviewStyles
from .review.pnl_cash import month_over_month_chart, pnl_cash_sheet
from .review.summary import summary_sheet
from .review.variance import variance_sheet

__all__ = ["REVIEW_PROPERTY", "check_replaceable", "review_name", "write_review", "written_by_reconcile"]

#: The custom document property (name, value) that marks a workbook as a review this tool wrote.
REVIEW_PROPERTY = ("LlmFinopsReview", "budget review written by finops reconcile")
#: The document description reviews carry (docProps/core.xml), those of earlier versions included.
_DESCRIPTION = "Written by `finops reconcile`"
#: Document-property parts larger than this are not ours (they are a few hundred bytes).
_PROPERTIES_MAX_BYTES = 1 << 20


def written_by_reconcile(path: Path) -> bool:
    """Whether the workbook at ``path`` is a review this tool wrote: its custom properties hold
    :data:`REVIEW_PROPERTY`, or its description is the reviews' (earlier versions wrote only that)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as package:
            parts = {info.filename: info for info in package.infolist()
                     if info.filename in ("docProps/custom.xml", "docProps/core.xml")
                     and info.file_size <= _PROPERTIES_MAX_BYTES}
            text = b"".join(package.read(name) for name in parts)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError):
        return False
    return f'name="{REVIEW_PROPERTY[0]}"'.encode() in text or _DESCRIPTION.encode() in text


def check_replaceable(target: Path) -> None:
    """Refuse (exit 2) to replace ``target`` unless it is absent or a review this tool wrote."""
    if Path(target).exists() and not written_by_reconcile(Path(target)):
        raise InputError("a file of the review's name is there and it is not a review this tool wrote; it is "
                         "never replaced", where=Location(file=str(target)),
                         hint="move or rename that file, or write the review to another folder with --out")


def review_name(month: str) -> str:
    """File name of the review of ``month``.

    >>> review_name("2026-05")
    'budget-review-2026-05.xlsx'
    """
    return f"budget-review-{month}.xlsx"


def write_review(rec: Reconciliation, out_dir: Path, *, run_at: datetime, trend: Sequence[MonthRecord] = (),
                 plan_name: str = "", bill_names: Sequence[str] = (),
                 comments: Mapping[str, str] | None = None, serving: Any = None,
                 actions: Mapping[str, tuple[str, str]] | None = None) -> Path:
    """Write the review of ``rec`` into ``out_dir`` atomically and return its path.

    ``trend`` are the months kept in the history; ``comments`` (plan line -> text) fill ``Comment`` and
    ``actions`` (plan line -> (owner, action)) ``Owner`` and ``Action``;
    ``serving`` (a :class:`finops.serving.ServingMonth`) adds the Serving sheet (``review_serving``).
    """
    target = Path(out_dir) / review_name(rec.month)
    refuse_input(target, "--out", owned=True)  # an input there (the plan, by name or link) is named as such
    check_replaceable(target)
    with replacing(target, owned=True) as temporary:  # the review it read comments from: its own
        # in_memory: the parts are assembled in memory, not in a temporary file each (the same parts; 46 ms to
        # 36 ms for the sample bills' review, docs/results.md)
        wb = xlsxwriter.Workbook(str(temporary), {"strings_to_formulas": False, "strings_to_urls": False,
                                                  "strings_to_numbers": False, "in_memory": True})
        wb.set_properties({"title": f"Budget review {rec.month}", "author": "llm-finops", "created": run_at,
                           "comments": _DESCRIPTION})
        wb.set_custom_property(*REVIEW_PROPERTY)
        styles = ReviewStyles(wb, currency=rec.currency)
        summary, free_row = summary_sheet(wb, styles, rec, run_at, plan_name, bill_names)
        variance_sheet(wb, styles, rec, run_at, comments or {}, actions, trend)
        trend_place = pnl_cash_sheet(wb, styles, rec, run_at, trend)
        month_over_month_chart(wb, summary, trend_place, free_row - 1, rec.currency)
        commitments_sheet(wb, styles, rec, run_at)
        gpu_usage_sheet(wb, styles, rec, run_at)
        if serving is not None:
            from .review_serving import write_serving_review

            write_serving_review(wb, styles, serving, run_at)
        unmapped_sheet(wb, styles, rec, run_at)
        glossary_sheet(wb, styles, rec, run_at)
        wb.close()
    return target
