"""How every sheet of the budget review looks on screen and on paper.

* Formats: the planning workbook's (:class:`~templates.styles.Styles`), with money carrying the
  review's currency (``#,##0.00 "USD"``); only the ``Comment`` cells are input cells (yellow).
* Print: A4, landscape where the sheet is wider than a portrait page, one page wide (as many pages tall
  as needed) where that keeps the text at 8 pt or more, else at 75 % across pages with column A repeated
  (:func:`templates.sheets._table.readable_print`), the sheet's header rows repeated on every page, gridlines
  off, and a footer with the month, the run time and "page n of N".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from math import ceil
from typing import Any

from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from ..sheets._table import readable_print
from ..styles import Kind, Styles

__all__ = ["PORTRAIT_WIDTH", "ReviewStyles", "review_sheet", "write_wrapped"]

#: Column widths (characters) that fit a portrait A4 page at 100 %; wider sheets print landscape.
PORTRAIT_WIDTH = 95
#: Points per line of wrapped text (11 pt font), and characters per unit of column width it allows.
_LINE_POINTS, _CHARS_PER_WIDTH = 15, 1.0
#: Money kinds and the number format each gets, ``{currency}`` filled in.
_CURRENCY_FORMATS: dict[str, str] = {"money": '#,##0.00 "{currency}"', "rate": '#,##0.0000 "{currency}"'}
_A4 = 9


@dataclass
class ReviewStyles(Styles):
    """The planning workbook's formats, with money in ``currency``; headers two lines high."""

    currency: str = "USD"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._money: dict[str, Format] = {}
        self.label_top = self.workbook.add_format({"bold": True, "valign": "top"})
        self.headline = self.workbook.add_format({"bold": True, "font_size": 12, "font_color": "#1F3864",
                                                  "text_wrap": True, "valign": "top"})
        self.wrapped = self.workbook.add_format({"text_wrap": True, "valign": "top", "border": 1,
                                                 "border_color": "#D9D9D9"})
        self.total = self.workbook.add_format({"bold": True, "top": 2, "border_color": "#000000",
                                               "num_format": _CURRENCY_FORMATS["money"].format(currency=self.currency)})

    def computed(self, kind: Kind = "number") -> Format:
        """A computed cell's format; money and rates carry the currency."""
        if kind not in _CURRENCY_FORMATS:
            return super().computed(kind)
        if kind not in self._money:
            self._money[kind] = self.workbook.add_format(
                {"font_color": "#000000", "border": 1, "border_color": "#D9D9D9",
                 "num_format": _CURRENCY_FORMATS[kind].format(currency=self.currency)})
        return self._money[kind]


def review_sheet(wb: Any, styles: ReviewStyles, name: str, title: str, note: str, *, month: str,
                 run_at: datetime, widths: tuple[float, ...], header_rows: tuple[int, int] = (0, 1)) -> Worksheet:
    """A review sheet: ``title`` in A1, ``note`` wrapped across the sheet's columns in row 2, set up
    for print. ``widths`` are its column widths (characters, from column A); ``header_rows`` the first
    and last row (0-based) repeated at the top of every printed page."""
    ws = wb.add_worksheet(name)
    for col, width in enumerate(widths):
        ws.set_column(col, col, width)
    ws.write_string(0, 0, title, styles.title)
    ws.merge_range(1, 0, 1, len(widths) - 1, note, styles.wrapped_note)
    ws.set_row(1, _LINE_POINTS * (_wrapped_lines(note, sum(widths)) + 1))
    ws.set_paper(_A4)
    orientation = "landscape" if sum(widths) > PORTRAIT_WIDTH else "portrait"
    if orientation == "landscape":
        ws.set_landscape()
    else:
        ws.set_portrait()
    readable_print(ws, widths, orientation=orientation, margins=1.0)
    ws.repeat_rows(*header_rows)
    ws.hide_gridlines(2)
    ws.set_margins(left=0.5, right=0.5, top=0.6, bottom=0.7)
    ws.set_footer(f"&L&11Budget review {month}&C&11Run {run_at:%Y-%m-%d %H:%M} UTC"
                  f"&R&11{_footer_text(name)}, page &P of &N")   # 11 pt: 8 pt or more at any print scale
    return ws


def _footer_text(text: str) -> str:
    """Text inside a header/footer: ``&`` doubled, as Excel's codes need it."""
    return text.replace("&", "&&")


def write_wrapped(ws: Worksheet, styles: ReviewStyles, row: int, col: int, text: str, width: float) -> None:
    """``text`` as text, wrapped in a column ``width`` wide, its row made tall enough to show every line
    (set explicitly: neither Excel nor LibreOffice sizes a row to wrapped text when it opens a file)."""
    ws.write_string(row, col, text, styles.wrapped)
    ws.set_row(row, _LINE_POINTS * _wrapped_lines(text, width))


def _wrapped_lines(text: str, width: float) -> int:
    """Lines ``text`` takes in a column ``width`` wide (at least one).

    >>> _wrapped_lines("x" * 30, 14), _wrapped_lines("", 14)
    (3, 1)
    """
    return max(1, ceil(len(text) / (width * _CHARS_PER_WIDTH)))
