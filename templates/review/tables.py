"""Table helpers the review's sheets share: a cell value from core money, and a Figure/Value table.

Every column of a review table is computed (black on white) except ``Comment``; labels are bold
figures, never input-yellow.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from xlsxwriter.worksheet import Worksheet

from finops.money import Money

from ..sheets._table import Column, TablePlace, write_cell, write_table
from .page import ReviewStyles

__all__ = ["FigureRow", "cell_value", "figures_table", "label", "money_column", "text_column"]

#: A row of a Figure/Value table: label, value (number, text or :class:`Formula`), and its kind.
FigureRow = tuple[str, Any, str]


def cell_value(value: Money | Decimal | None) -> float | None:
    """A core amount as a worksheet number (display only: the core computed it exactly)."""
    if value is None:
        return None
    return float(value.amount if isinstance(value, Money) else value)


def text_column(header: str, width: float = 14) -> Column:
    """A computed text column (labels, names, ids)."""
    return Column(header, "text", "computed", width)


def money_column(header: str, width: float = 16, kind: str = "money") -> Column:
    """A computed number column; money carries the currency (:class:`~templates.review.page.ReviewStyles`)."""
    return Column(header, kind, "computed", width)  # type: ignore[arg-type]


def label(ws: Worksheet, styles: ReviewStyles, row: int, text: str) -> None:
    """A bold heading above a table."""
    ws.write_string(row, 0, text, styles.label)


def figures_table(ws: Worksheet, styles: ReviewStyles, name: str, rows: Sequence[FigureRow], first_row: int,
                  widths: tuple[float, float] = (44, 18)) -> TablePlace:
    """A two-column table Figure/Value; each row's kind (``money``, ``percent``, ``int``, ``text``)
    sets its number format."""
    place = write_table(ws, styles, name, (text_column("Figure", widths[0]), money_column("Value", widths[1])),
                        [(text, value) for text, value, _ in rows], first_row=first_row)
    for i, (_, value, kind) in enumerate(rows):
        if kind != "money":
            write_cell(ws, place.row(i), place.col("Value"), value, styles.computed(kind))  # type: ignore[arg-type]
    return place
