"""Shared rich consoles and JSON output for the command modules."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from ..money import Money

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_json(path: Path, payload: Any) -> Path:
    """Write ``payload`` as JSON to ``path`` (Decimals become numbers) and return the path."""
    path.write_text(json.dumps(payload, default=_default, indent=2) + "\n", encoding="utf-8")
    return path


def print_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (Decimals become numbers), nothing else."""
    print(json.dumps(payload, default=_default, indent=2, sort_keys=False))


def shared_currency(values: Iterable[Money]) -> str | None:
    """The one currency all ``values`` share, to name once in a title or header; None if they mix.

    >>> shared_currency([Money.of(1, "USD"), Money.of(2, "USD")])
    'USD'
    """
    currencies = {value.currency for value in values}
    return currencies.pop() if len(currencies) == 1 else None


def amount(value: Money, shared: str | None = None) -> str:
    """The rounded amount with thousands separators; its currency too unless ``shared`` already names it.

    >>> amount(Money.of("1234.5", "USD"), "USD"), amount(Money.of("1234.5", "USD"))
    ('1,234.50', '1,234.50 USD')
    """
    text = f"{value.rounded().amount:,}"
    return text if shared is not None and value.currency == shared else f"{text} {value.currency}"


def compact_table(title: str, columns: list[str], *, text: tuple[str, ...] = ()) -> Table:
    """A table that reads in an 80-column terminal: a light box, no edge padding, text columns (the first,
    and those in ``text``) wrap onto more lines, number columns stay whole on one line and only fold onto a
    second line if nothing else gives room; nothing is ever cut to '…'. Headers may hold a newline."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for index, column in enumerate(columns):
        wraps = index == 0 or column in text
        table.add_column(column, justify="left" if wraps else "right", no_wrap=not wraps, overflow="fold")
    return table
