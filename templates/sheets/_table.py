"""Write a real Excel table (a ListObject) with typed columns, cached formula values and a defined name.

Every formula cell is written with the value the core computed for it (``Formula.value``), so the
workbook reads right in viewers that never recalculate and before the add-in is installed.
Addresses are derived from the table's place, never typed by hand.

>>> place = TablePlace("Budget", "tblBudget", ("Month", "Amount"), first_row=3, first_col=0, rows=2)
>>> place.cell(1, "Amount"), place.column_range("Month"), place.whole_range()
('$B$6', 'Budget!$A$5:$A$6', 'Budget!$A$4:$B$6')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from math import ceil
from typing import Any, Literal

from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from ..styles import Kind, Styles

__all__ = ["PRINT_SCALE", "ROOM", "Column", "Formula", "TablePlace", "bound_print_area", "fit_for_print", "print_scale",
           "quote_sheet", "readable_chart", "readable_print", "scale_to_fit", "spare", "titled_sheet", "unless_blank",
           "validate_column", "write_cell", "write_table"]


#: Points per line of wrapped 11 pt text.
_LINE_POINTS = 15


def titled_sheet(wb: Workbook, styles: Styles, name: str, note: str, *, title: str | None = None,
                 widths: Sequence[float] = ()) -> Worksheet:
    """A new sheet with ``title`` (default: its name) in A1 and ``note`` (what the sheet is for) in A2,
    wrapped across the columns ``widths`` (characters, from column A) when given, so it prints whole
    inside them."""
    ws = wb.add_worksheet(name)
    ws.write_string(0, 0, name if title is None else title, styles.title)
    if len(widths) > 1:
        span = _note_span(widths)
        ws.merge_range(1, 0, 1, span - 1, note, styles.wrapped_note)
        ws.set_row(1, _LINE_POINTS * (ceil(len(note) * 1.1 / sum(widths[:span])) + 1))
    else:
        ws.write_string(1, 0, note, styles.subtitle)
    return ws


def _note_span(widths: Sequence[float]) -> int:
    """Columns the note spans: all of ``widths``, or as many as one printed page holds."""
    total, span = 0.0, 0
    for width in widths:
        total += width
        span += 1
        if total > 160:
            break
    return span


def readable_chart(chart: Any, title: str, *, x: dict[str, Any] | None = None, y: dict[str, Any] | None = None,
                   legend: str | None = None) -> None:
    """Title, axes and legend of ``chart`` in 11 pt (12 pt title): 8 pt or more when printed at
    :data:`PRINT_SCALE` %."""
    font = {"size": 11}
    chart.set_title({"name": title, "name_font": {"size": 12, "bold": True}})
    for setter, axis in ((chart.set_x_axis, x), (chart.set_y_axis, y)):
        setter({**(axis or {}), "num_font": font, "name_font": font})
    chart.set_legend({"font": font, **({"position": legend} if legend else {})})


#: The smallest print scale that keeps the workbooks' 11 pt body text at 8 pt or more on paper (11 x 0.75 =
#: 8.25 pt); a sheet wider than one page at this scale prints at it across several pages instead.
PRINT_SCALE = 75
_A4_POINTS = {"landscape": 842, "portrait": 595}
#: Pixels per character of column width and per column: Excel's 7 for Calibri 11 with 5 of padding, where
#: LibreOffice (Carlito) lays the same widths out about 8 % wider (fitted on LibreOffice 7.4's PDF of 12- and
#: 20-column sheets: 7.5-7.6 px a character), so the estimate takes 7.7.
_MAX_DIGIT_PX, _PADDING_PX, _POINTS_PER_PX = 7.7, 5, 0.75
_DEFAULT_WIDTH = 8.43


def scale_to_fit(widths: Sequence[float], *, extra_px: float = 0, orientation: str = "landscape",
                 margins: float = 0.8) -> float:
    """The print scale at which columns ``widths`` (characters, from column A) plus ``extra_px`` (charts
    beside them) fit one A4 page wide between ``margins`` (inches, left + right).

    A column ``w`` characters wide is ``w x 7.7 + 5`` pixels, a pixel 0.75 pt.

    >>> round(scale_to_fit([100]), 2), round(scale_to_fit([300]), 2)
    (1.0, 0.45)
    """
    width_pt = (sum(int(w * _MAX_DIGIT_PX + _PADDING_PX) for w in widths) + extra_px) * _POINTS_PER_PX
    return min(1.0, (_A4_POINTS[orientation] - margins * 72) / width_pt)


def print_scale(widths: Sequence[float], *, extra_px: float = 0, orientation: str = "landscape",
                margins: float = 0.8) -> int:
    """The fixed print scale (percent) of a sheet: the one that fits its columns one page wide, at least
    :data:`PRINT_SCALE` and at most 100.

    A fixed scale rather than "fit to one page wide": the spreadsheet program would shrink the text to
    whatever fits, and with another font's metrics than Calibri's (a machine without it or Carlito) below
    8 pt; a fixed scale prints 11 pt text at 11 x scale whatever the font, and a sheet a little wider than
    estimated runs onto a second page instead.

    >>> print_scale([100]), print_scale([300])
    (100, 75)
    """
    fit = scale_to_fit(widths, extra_px=extra_px, orientation=orientation, margins=margins)
    return max(PRINT_SCALE, min(100, int(fit * 100)))


def readable_print(ws: Worksheet, widths: Sequence[float], *, extra_px: float = 0, orientation: str = "landscape",
                   margins: float = 0.8) -> None:
    """Print at :func:`print_scale`; a sheet wider than a page at :data:`PRINT_SCALE` % prints across pages,
    row by row, with column A (the row's name) repeated on every page."""
    scale = print_scale(widths, extra_px=extra_px, orientation=orientation, margins=margins)
    ws.set_print_scale(scale)
    if scale_to_fit(widths, extra_px=extra_px, orientation=orientation, margins=margins) * 100 < PRINT_SCALE:
        ws.repeat_columns(0)
        ws.print_across()


def fit_for_print(ws: Worksheet, header_row: int | None, widths: Sequence[float] = (), *, extra_px: float = 0) -> None:
    """Print setup of a plan sheet: landscape A4, readable (:func:`readable_print` of its column ``widths``
    and ``extra_px`` of charts beside them), the table's header row (0-based ``header_row``) repeated at the
    top of every page, sheet name and page in the footer."""
    ws.set_landscape()
    ws.set_paper(9)
    readable_print(ws, widths, extra_px=extra_px)
    ws.print_columns = len(widths) + ceil(extra_px / 64)  # type: ignore[attr-defined]  (bound_print_area)
    ws.set_margins(left=0.4, right=0.4, top=0.5, bottom=0.6)
    ws.set_footer("&L&A&RPage &P of &N")
    if header_row is not None:
        ws.repeat_rows(header_row)


def bound_print_area(ws: Worksheet) -> None:
    """Print only the columns :func:`fit_for_print` was given, down to the last row written: text running
    on past the last column (a long source, a note) would otherwise widen the printout and shrink it."""
    columns = getattr(ws, "print_columns", 0)
    if columns:
        ws.print_area(0, 0, ws.dim_rowmax or 0, columns - 1)


def validate_column(ws: Worksheet, place: TablePlace, header: str, rows: int, rule: dict[str, Any]) -> None:
    """XlsxWriter data validation ``rule`` on ``rows`` cells of a table column from its first data row
    (more than the table holds, so rows a planner adds are checked too)."""
    col = place.col(header)
    ws.data_validation(place.row(0), col, place.row(0) + rows - 1, col, rule)


@dataclass(frozen=True)
class Formula:
    """A formula and the value the core computed for it (stored as the cell's cached result)."""

    text: str
    value: Any


@dataclass(frozen=True)
class Column:
    header: str
    kind: Kind = "text"
    role: Literal["input", "computed"] = "input"
    width: float = 14


def quote_sheet(sheet: str) -> str:
    """A sheet name as a formula reference needs it (quoted when it has spaces)."""
    return f"'{sheet}'" if not sheet.replace("_", "").isalnum() else sheet


@dataclass(frozen=True)
class TablePlace:
    """Where a table sits: its sheet, name, headers, top-left header cell and number of data rows."""

    sheet: str
    name: str
    headers: tuple[str, ...]
    first_row: int
    first_col: int
    rows: int

    def col(self, header: str) -> int:
        return self.first_col + self.headers.index(header)

    def row(self, index: int) -> int:
        """Worksheet row (0-based) of data row ``index`` (0-based)."""
        return self.first_row + 1 + index

    def cell(self, index: int, header: str, *, sheet: bool = False, absolute: bool = True,
             follow: bool = False) -> str:
        """One cell's address; ``follow``: the column fixed, the row relative (``$B4``), so the formula
        copied down a table's rows reads each row's own cell."""
        ref = xl_rowcol_to_cell(self.row(index), self.col(header), row_abs=absolute and not follow,
                                col_abs=absolute or follow)
        return f"{quote_sheet(self.sheet)}!{ref}" if sheet else ref

    def column_range(self, header: str, rows: int | None = None) -> str:
        """One column's data cells: the table's rows, or ``rows`` rows from the first (room to grow)."""
        col = self.col(header)
        top = xl_rowcol_to_cell(self.row(0), col, row_abs=True, col_abs=True)
        bottom = xl_rowcol_to_cell(self.row((rows or self.rows) - 1), col, row_abs=True, col_abs=True)
        return f"{quote_sheet(self.sheet)}!{top}:{bottom}"

    def row_range(self, index: int | None, *, follow: bool = False) -> str:
        """One row of the table across all its columns, sheet-qualified (``None``: the header row);
        ``follow``: the row relative (``$A4:$Z4``, see :meth:`cell`)."""
        row = self.first_row if index is None else self.row(index)
        fixed = not follow
        first = xl_rowcol_to_cell(row, self.first_col, row_abs=fixed, col_abs=True)
        last = xl_rowcol_to_cell(row, self.first_col + len(self.headers) - 1, row_abs=fixed, col_abs=True)
        return f"{quote_sheet(self.sheet)}!{first}:{last}"

    def whole_range(self) -> str:
        """Header and data, as the add-in's range arguments expect (first row = header)."""
        top = xl_rowcol_to_cell(self.first_row, self.first_col, row_abs=True, col_abs=True)
        bottom = xl_rowcol_to_cell(
            self.row(self.rows - 1), self.first_col + len(self.headers) - 1, row_abs=True, col_abs=True
        )
        return f"{quote_sheet(self.sheet)}!{top}:{bottom}"


#: Rows the Sizing and TCO tables hold: the Workloads rows and room for more, each formula blank ("") while
#: its Workloads row is empty, so a workload typed into any of the first ROOM Workloads rows sizes and costs
#: itself (a table in one sheet cannot grow with another's rows: past them, copy the last row down). 50: seven
#: times the seed plan, at 6 pages more of print than 20 and a ranking still 55 rows down.
ROOM = 50


def unless_blank(key: str, cells: Sequence[Any]) -> list[Any]:
    """``cells`` of one row with every formula guarded by its row's key cell: ``=IF(key="","",...)``."""
    return [Formula(f'=IF({key}="","",{c.text[1:]})', c.value) if isinstance(c, Formula) else c for c in cells]


def spare(cells: Sequence[Any]) -> list[Any]:
    """A table row for a workload not there yet: the formulas of ``cells`` with blank cached values, the
    text inputs as they are (a pricing model) and the numbers blank (an owned GPU-hour to type)."""
    return [Formula(c.text, "") if isinstance(c, Formula) else c if isinstance(c, str) else None for c in cells]


def write_cell(ws: Worksheet, row: int, col: int, value: Any, fmt: Any) -> None:
    """Write one value: a :class:`Formula` with its cached value, a date, a number or text."""
    if isinstance(value, Formula):
        ws.write_formula(row, col, value.text, fmt, value.value)
    elif isinstance(value, (date, datetime)):
        ws.write_datetime(row, col, datetime(value.year, value.month, value.day), fmt)
    elif value is None or value == "":
        ws.write_blank(row, col, None, fmt)
    elif isinstance(value, str):
        ws.write_string(row, col, value, fmt)  # text from data is never turned into a formula
    else:
        ws.write_number(row, col, value, fmt)


def write_picked(ws: Worksheet, top: int, left: int, call: str, answer: Sequence[Sequence[Any]],
                 fmt: Callable[[int, int, Any], Any]) -> None:
    """A table-valued add-in function's ``answer`` from ``(top, left)``, one plain formula per cell,
    ``=INDEX(call, r, c)``, each with its figure cached (``fmt(r - 1, c - 1, value)`` its format).

    Not a spilled array: LibreOffice recalculates every array formula when it opens a file, so without
    the add-in a spilled range shows errors at once, while a plain formula shows its cached value until
    the reader recalculates. The add-in answers the repeated ``call`` from its cache.
    """
    for i, values in enumerate(answer):
        for j, value in enumerate(values):
            ws.write_formula(top + i, left + j, f"=INDEX({call},{i + 1},{j + 1})", fmt(i, j, value), value)


def write_table(
    ws: Worksheet,
    styles: Styles,
    name: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Any]],
    *,
    first_row: int = 0,
    first_col: int = 0,
    style: str = "Table Style Light 9",
) -> TablePlace:
    """Write ``rows`` as the Excel table ``name`` with its header at ``(first_row, first_col)``."""
    place = TablePlace(
        ws.name, name, tuple(c.header for c in columns), first_row, first_col, max(len(rows), 1)
    )
    last_row = place.row(place.rows - 1)
    last_col = first_col + len(columns) - 1
    ws.add_table(
        first_row,
        first_col,
        last_row,
        last_col,
        {
            "name": name,
            "style": style,
            "columns": [{"header": c.header, "header_format": styles.header} for c in columns],
        },
    )
    formats = [styles.input(c.kind) if c.role == "input" else styles.computed(c.kind) for c in columns]
    for i, values in enumerate(rows):
        for j, value in enumerate(values):
            write_cell(ws, place.row(i), first_col + j, value, formats[j])
    for j, column in enumerate(columns):
        ws.set_column(first_col + j, first_col + j, column.width)
    return place
