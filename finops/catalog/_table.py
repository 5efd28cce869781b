"""Read a bundled catalog CSV: one typed row per line, every row with ``source`` and ``as_of``."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

from ..errors import InputError, Location


def read_rows(filename: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, row)`` for a CSV in ``finops/catalog/data``; rows lacking provenance fail."""
    text = resources.files("finops.catalog").joinpath("data", filename).read_text(encoding="utf-8")
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        if not row.get("source") or not row.get("as_of"):
            raise InputError("catalog row without source or as_of", where=Location(file=filename, row=line))
        yield line, row


def parse(value: str, kind: Callable[[str], Any], *, file: str, line: int, column: str) -> Any:
    """Parse one cell; an empty cell is ``None``; a bad one names the file, row and column."""
    if value is None or value.strip() == "":
        return None
    if kind is bool:
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise InputError(f"expected true/false, got {value!r}", where=Location(file=file, row=line, column=column))
        return lowered == "true"
    try:
        return kind(value)
    except ValueError:
        raise InputError(f"expected {kind.__name__}, got {value!r}",
                         where=Location(file=file, row=line, column=column)) from None


def aliases(value: str | None) -> list[str]:
    return [a.strip() for a in (value or "").split(";") if a.strip()]
