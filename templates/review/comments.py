"""The comments finance typed into a review's ``tblVariance``, read back before a re-run replaces it.

A re-run of a month writes a new review over the old one; the ``Comment`` column is the only input
of the review, so it is read from the file being replaced first (:func:`comments_in_review`) and
merged with the ones the history kept (:func:`kept_comments`): what the file says wins, a comment
cleared in the file stays cleared, and a line the file lacks keeps the history's comment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from finops.errors import InputError, Location

from ..plan_reader import check_package

__all__ = ["COMMENT", "PLAN_LINE", "VARIANCE_TABLE", "comments_in_review", "kept_comments"]

VARIANCE_TABLE = "tblVariance"
PLAN_LINE = "Plan line"
COMMENT = "Comment"


def comments_in_review(path: Path) -> dict[str, str]:
    """Plan line -> comment (blank ones too) in the review at ``path``; ``{}`` when there is no file.

    A file that is there but cannot be read is refused (nothing is written over it).
    """
    import openpyxl

    path = Path(path)
    if not path.is_file():
        return {}
    try:
        check_package(path)
        book = openpyxl.load_workbook(path)
    except Exception as exc:  # openpyxl raises many types for damaged files; translate at the seam
        reason = exc.message if isinstance(exc, InputError) else str(exc)
        raise InputError(f"cannot read the comments of the review this run would replace: {reason}",
                         where=Location(file=str(path)),
                         hint="move that file away (its comments are then taken from the history) and run again") from exc
    try:
        for ws in book.worksheets:
            if VARIANCE_TABLE in ws.tables:
                return _comments(ws, ws.tables[VARIANCE_TABLE].ref)
    finally:
        book.close()
    return {}


def _comments(ws, ref: str) -> dict[str, str]:
    rows = list(ws[ref])
    header = [str(c.value or "") for c in rows[0]]
    if PLAN_LINE not in header or COMMENT not in header:
        return {}
    line, comment = header.index(PLAN_LINE), header.index(COMMENT)
    return {str(row[line].value): str(row[comment].value or "").strip() for row in rows[1:]
            if row[line].value is not None}


def kept_comments(review: Path, history: Mapping[str, str]) -> dict[str, str]:
    """The comments a re-run keeps: the ``history``'s for the month, overridden by the review file's.

    >>> kept_comments(Path("no-such-review.xlsx"), {"gpu": "new cluster"})
    {'gpu': 'new cluster'}
    """
    return {**history, **comments_in_review(review)}
