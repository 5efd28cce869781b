"""Write a real Excel table (a ListObject) with typed columns, cached formula values and a defined name.

Every formula cell is written with the value the core computed for it (``Formula.value``), so the
workbook reads right in viewers that never recalculate and before the add-in is installed.
Addresses are derived from the table's place, never typed by hand.

>>> place = TablePlace("Budget", "tblBudget", ("Month", "Amount"), first_row=3, first_col=0, rows=2)
>>> place.cell(1, "Amount"), place.column_range("Month"), place.whole_range()
('$B$6', 'Budget!$A$5:$A$6', 'Budget!$A$4:$B$6')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from ..styles import Kind, Styles

__all__ = ["Column", "Formula", "TablePlace", "fit_for_print", "quote_sheet", "titled_sheet", "validate_column", "write_cell",
           "write_table"]


def titled_sheet(wb: Workbook, styles: Styles, name: str, note: str, *, title: str | None = None) -> Worksheet:
    """A new sheet with ``title`` (default: its name) in A1 and ``note`` (what the sheet is for) in A2."""
    ws = wb.add_worksheet(name)
    ws.write_string(0, 0, name if title is None else title, styles.title)
    ws.write_string(1, 0, note, styles.subtitle)
    return ws


def fit_for_print(ws: Worksheet, header_row: int | None) -> None:
    """Print setup of a plan sheet: landscape A4, one page wide and as many tall as needed, the table's
    header row (0-based ``header_row``) repeated at the top of every page, sheet name and page in the footer."""
    ws.set_landscape()
    ws.set_paper(9)
    ws.fit_to_pages(1, 0)
    ws.set_margins(left=0.4, right=0.4, top=0.5, bottom=0.6)
    ws.set_footer("&L&A&RPage &P of &N")
    if header_row is not None:
        ws.repeat_rows(header_row)


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

    def cell(self, index: int, header: str, *, sheet: bool = False, absolute: bool = True) -> str:
        ref = xl_rowcol_to_cell(self.row(index), self.col(header), row_abs=absolute, col_abs=absolute)
        return f"{quote_sheet(self.sheet)}!{ref}" if sheet else ref

    def column_range(self, header: str, rows: int | None = None) -> str:
        """One column's data cells: the table's rows, or ``rows`` rows from the first (room to grow)."""
        col = self.col(header)
        top = xl_rowcol_to_cell(self.row(0), col, row_abs=True, col_abs=True)
        bottom = xl_rowcol_to_cell(self.row((rows or self.rows) - 1), col, row_abs=True, col_abs=True)
        return f"{quote_sheet(self.sheet)}!{top}:{bottom}"

    def row_range(self, index: int | None) -> str:
        """One row of the table across all its columns, sheet-qualified (``None``: the header row)."""
        row = self.first_row if index is None else self.row(index)
        first = xl_rowcol_to_cell(row, self.first_col, row_abs=True, col_abs=True)
        last = xl_rowcol_to_cell(row, self.first_col + len(self.headers) - 1, row_abs=True, col_abs=True)
        return f"{quote_sheet(self.sheet)}!{first}:{last}"

    def whole_range(self) -> str:
        """Header and data, as the add-in's range arguments expect (first row = header)."""
        top = xl_rowcol_to_cell(self.first_row, self.first_col, row_abs=True, col_abs=True)
        bottom = xl_rowcol_to_cell(
            self.row(self.rows - 1), self.first_col + len(self.headers) - 1, row_abs=True, col_abs=True
        )
        return f"{quote_sheet(self.sheet)}!{top}:{bottom}"


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
