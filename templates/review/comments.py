"""The comments, owners and actions finance typed into a review's ``tblVariance``, read back before a re-run
replaces it.

A re-run of a month writes a new review over the old one; ``Comment``, ``Owner`` and ``Action`` are the
review's inputs, so they are read from the file being replaced first (:func:`comments_in_review`,
:func:`actions_in_review`) and merged with what the history kept (:func:`kept_comments`, :func:`kept_actions`):
what the file says wins, a cell cleared in the file stays cleared, and a line the file lacks keeps the
history's. Owners and actions also carry from month to month: the history hands a month's review those of
the latest earlier month that had them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from finops.errors import InputError, Location

from ..plan_reader import check_package, range_rows, table_places

__all__ = ["ACTION", "COMMENT", "OWNER", "PLAN_LINE", "VARIANCE_TABLE", "actions_in_review", "comments_in_review",
           "kept_actions", "kept_comments"]

VARIANCE_TABLE = "tblVariance"
PLAN_LINE = "Plan line"
COMMENT = "Comment"
OWNER = "Owner"
ACTION = "Action"


def comments_in_review(path: Path) -> dict[str, str]:
    """Plan line -> comment (blank ones too) in the review at ``path``; ``{}`` when there is no file."""
    return {line: cells.get(COMMENT, "") for line, cells in _typed(path).items() if COMMENT in cells}


def actions_in_review(path: Path) -> dict[str, tuple[str, str]]:
    """Plan line -> (owner, action) in the review at ``path`` (blank ones too: cleared in the file); ``{}`` when
    there is no file or a review written before it had these columns."""
    return {line: (cells.get(OWNER, ""), cells.get(ACTION, "")) for line, cells in _typed(path).items()
            if OWNER in cells or ACTION in cells}


def kept_actions(review: Path, history: Mapping[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The owners and actions a run of the month writes and keeps: the ``history``'s (those carried from the
    months before, :meth:`finops.reconcile.history.History.actions`), overridden by the review file's.

    >>> kept_actions(Path("no-such-review.xlsx"), {"gpu": ("Ana", "right-size the p5 fleet")})
    {'gpu': ('Ana', 'right-size the p5 fleet')}
    """
    return {**history, **actions_in_review(review)}


def _typed(path: Path) -> dict[str, dict[str, str]]:
    """Plan line -> {column: text} of the input columns of ``tblVariance`` in the review at ``path``.

    A file that is there but cannot be read is refused (nothing is written over it). The table is found in
    the package's table parts (:func:`~templates.plan_reader.table_places`) and only its cells are read, in
    openpyxl's read-only mode: a full load of a review costs a re-run of its month about 40 ms more.
    """
    import openpyxl

    path = Path(path)
    if not path.is_file():
        return {}
    try:
        check_package(path)
        place = table_places(path).get(VARIANCE_TABLE.lower())
        book = openpyxl.load_workbook(path, read_only=True)
    except Exception as exc:  # openpyxl raises many types for damaged files; translate at the seam
        reason = exc.message if isinstance(exc, InputError) else str(exc)
        raise InputError(f"cannot read the comments of the review this run would replace: {reason}",
                         where=Location(file=str(path)),
                         hint="move that file away (its comments are then taken from the history) and run again") from exc
    try:
        if place is None or place[0] not in book.sheetnames:
            return {}
        return _inputs(book[place[0]], place[1])
    finally:
        book.close()


def _inputs(ws, ref: str) -> dict[str, dict[str, str]]:
    rows = list(range_rows(ws, ref)[2])
    header = [str(value or "") for value in rows[0]] if rows else []
    if PLAN_LINE not in header:
        return {}
    line = header.index(PLAN_LINE)
    wanted = [(name, header.index(name)) for name in (COMMENT, OWNER, ACTION) if name in header]
    return {str(row[line]): {name: str(row[j] or "").strip() for name, j in wanted}
            for row in rows[1:] if row[line] is not None}


def kept_comments(review: Path, history: Mapping[str, str]) -> dict[str, str]:
    """The comments a re-run keeps: the ``history``'s for the month, overridden by the review file's.

    >>> kept_comments(Path("no-such-review.xlsx"), {"gpu": "new cluster"})
    {'gpu': 'new cluster'}
    """
    return {**history, **comments_in_review(review)}
