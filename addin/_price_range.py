"""A price book read from a workbook range (xlwings Lite has no file system: prices live in the sheet).

The range is the Prices table with its header row, columns exactly ``finops.price_book.COLUMNS``.
The same range is passed to every ``FINOPS_PRICE`` call, so the parsed book is cached by content.

>>> from finops.price_book import COLUMNS
>>> row = ["gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, "on_demand", "", 88.25, 0, "USD",
...        "2026-07-30", "example"]
>>> len(price_book_from_range([list(COLUMNS), row]))
1
"""

from __future__ import annotations

import csv
import io
import os
from functools import lru_cache
from typing import Any

from finops.errors import InputError
from finops.price_book import COLUMNS, PRICE_BOOK_ENV, PriceBook

from ._cells import grid

__all__ = ["clear_parsed", "current_book", "hourly_cost", "price_book_from_range"]


#: The last ranges parsed, newest first: (a copy of the range's rows, its book).
_BOOKS: list[tuple[list[list[Any]], PriceBook]] = []
_KEPT = 8


def price_book_from_range(value: Any) -> PriceBook:
    """Parse a header + rows range into a :class:`PriceBook` (cached on the range's content).

    A range equal cell for cell to one of the last eight parsed gives that range's book (the same
    object, so the UDFs' own caches keyed by the book hit); any edited cell is a new range. The rows are
    compared as lists (in C, about 0.1 ms for the 3,700-row Prices table) rather than turned into a
    hashable tuple key (0.7 ms).
    """
    rows = grid(value)
    for held in _BOOKS:
        if held[0] == rows:
            if held is not _BOOKS[0]:
                _BOOKS.remove(held)
                _BOOKS.insert(0, held)
            return held[1]
    book = _parse(rows)
    _BOOKS.insert(0, ([list(row) for row in rows], book))   # a copy: the caller may reuse its lists
    del _BOOKS[_KEPT:]
    return book


def clear_parsed() -> None:
    """Forget the parsed ranges (the next call of a range parses it again)."""
    _BOOKS.clear()


def current_book() -> PriceBook:
    """The add-in's own price book when no range is given: ``FINOPS_PRICE_BOOK``'s file or the bundled
    snapshot, read once per setting (not on every call)."""
    return _current(os.environ.get(PRICE_BOOK_ENV))


@lru_cache(maxsize=4)
def _current(_setting: str | None) -> PriceBook:
    return PriceBook.current()


@lru_cache(maxsize=1024)
def hourly_cost(book: PriceBook, provider: str, instance_type: str, pricing_model: str, region: str) -> float:
    """``PriceBook.lookup(...).hourly_cost`` remembered per book and keys: a workbook asks the same
    question on every recalculation, and a lookup scans the whole book."""
    return float(book.lookup(provider, instance_type, pricing_model, region).hourly_cost)


def _plain(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return "" if value is None or type(value).__name__ == "XlError" else value


def _parse(cells: list[list[Any]]) -> PriceBook:
    rows = [[_plain(v) for v in row] for row in cells]
    header = [str(h).strip() for h in rows[0]]
    if header != list(COLUMNS):
        raise InputError(
            "prices: the range must start with the Prices table header", hint=f"columns {', '.join(COLUMNS)}"
        )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(row for row in rows[1:] if any(v != "" for v in row))
    return PriceBook.read_csv("Prices", text=buffer.getvalue())
