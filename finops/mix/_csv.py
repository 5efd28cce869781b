"""Read a user's CSV into numbered rows, failing with the file, row and column of what is wrong."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, Location


def read_table(path: Path, what: str, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for each non-blank data row; keys and cells stripped; missing columns fail."""
    try:
        handle = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror}", where=Location(file=str(path))) from None
    with handle:
        reader = csv.reader(handle)
        header = [h.strip() for h in next(reader, [])]
        for column in required:
            if column not in header:
                raise InputError(f"missing column {column!r}", where=Location(file=str(path), row=1, column=column),
                                 hint=f"the {what} CSV needs columns {', '.join(required)}")
        rows = [(line, dict(zip(header, (c.strip() for c in cells + [""] * (len(header) - len(cells))))))
                for line, cells in enumerate(reader, start=2) if any(c.strip() for c in cells)]
    if not rows:
        raise InputError(f"{what} file has no rows", where=Location(file=str(path)))
    return rows
