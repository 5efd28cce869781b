"""Read a user's CSV into numbered rows, failing with the file, row and column of what is wrong.

The dialect is fixed (RFC 4180: comma, double quotes) and strict: an unterminated quote, bytes that
are not UTF-8 or a field longer than Python's csv limit (131,072 characters) fail naming the row.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import InputError, Location
from ..limits import bounded_lines

__all__ = ["read_table"]

_ENCODING = "utf-8-sig"  # UTF-8 with or without a byte-order mark (codec names ignore case: a constant)


def read_table(path: Path, what: str, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for each non-blank data row; keys and cells stripped; missing columns fail."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror}", where=Location(file=str(path))) from None
    try:
        text = data.decode(_ENCODING)
    except UnicodeDecodeError as exc:
        raise InputError(f"the {what} file is not UTF-8 text (byte {data[exc.start]:#04x})",
                         where=Location(file=str(path), row=data[:exc.start].count(b"\n") + 1),
                         hint="save the CSV with UTF-8 encoding") from None
    with io.StringIO(text, newline="") as handle:
        records = _records(csv.reader(bounded_lines(handle, path), strict=True), path)
        first = next(records, None)  # (1, the header's cells); None for an empty file
        header = [h.strip() for h in first[1]] if first else []
        repeated = sorted({h for h in header if h and header.count(h) > 1})
        if repeated:
            raise InputError(f"the header names the column {repeated[0]!r} twice",
                             where=Location(file=str(path), row=1, column=repeated[0]),
                             hint="keep one column of each name")
        for column in required:
            if column not in header:
                raise InputError(f"missing column {column!r}", where=Location(file=str(path), row=1, column=column),
                                 hint=f"the {what} CSV needs columns {', '.join(required)}")
        # a short row's missing cells read as empty; cells past the header are ignored
        rows = [(line, dict.fromkeys(header, "") | dict(zip(header, (c.strip() for c in cells))))
                for line, cells in records if any(c.strip() for c in cells)]
    if not rows:
        raise InputError(f"{what} file has no rows", where=Location(file=str(path)))
    return rows


def _records(reader: Iterator[list[str]], path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(row number, cells)`` of each record (the header is row 1), translating the reader's errors."""
    number = 0
    while True:
        number += 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", where=Location(file=str(path), row=number),
                             hint="close every double quote; a field holds at most 131,072 characters") from None
        yield number, cells
