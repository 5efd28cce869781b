"""Shared rich consoles and JSON output for the command modules.

Both consoles read no console markup: plan lines, file names, option values and bill text are printed as
the text they are (a ``[/x]`` or ``[link=...]`` in a name is shown, never interpreted); a style is given as
a :class:`rich.text.Text` span (:func:`styled`)."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..files import write_atomically
from ..money import Money

console = Console(highlight=False, markup=False)
err_console = Console(stderr=True, highlight=False, markup=False)


#: C0 and C1 control characters but line feed and tab -> how they are shown: an escape sequence in a file name,
#: a plan line or a bill value would drive the terminal (clear it, retitle it, hide a link), so it is shown as text.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\n\t"}


def printable(text: str) -> str:
    r"""``text`` with its control characters shown as ``\xNN`` escapes, never sent to the terminal.

    >>> printable("plan\x1b[2J.xlsx")
    'plan\\x1b[2J.xlsx'
    """
    return text.translate(_CONTROLS)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain parts and (text, style) parts; no part is read as markup, and no control character reaches
    the terminal (:func:`printable`).

    >>> styled(("error:", "bold red"), " no bill named [/x].csv").plain
    'error: no bill named [/x].csv'
    """
    return Text.assemble(*(printable(p) if isinstance(p, str) else (printable(p[0]), p[1]) for p in parts))


def _exact_json(payload: Any) -> str:
    """``payload`` as indented JSON where every Decimal is a JSON number with its exact digits (never a
    float's 17): each Decimal goes in as a unique placeholder string that is then swapped for its digits.

    >>> text = _exact_json({"total": Decimal("12345678901234567.91"), "n": 2})
    >>> '"total": 12345678901234567.91' in text, json.loads(text, parse_float=Decimal)["total"]
    (True, Decimal('12345678901234567.91'))
    """
    token = secrets.token_hex(8)
    numbers: list[str] = []

    def default(value: Any) -> Any:
        if isinstance(value, Decimal):
            numbers.append(_digits(value))
            return f"{token}:{len(numbers) - 1}"
        if hasattr(value, "isoformat"):
            return value.isoformat()
        raise TypeError(f"not JSON serializable: {type(value).__name__}")

    text = json.dumps(payload, default=default, indent=2, sort_keys=False)
    return re.sub(f'"{token}:(\\d+)"', lambda match: numbers[int(match.group(1))], text)


def _digits(value: Decimal) -> str:
    """A finite Decimal as a JSON number, every digit kept (``1E+2`` as ``1E+2``, valid JSON); not finite: null."""
    return str(value) if value.is_finite() else "null"


def write_json(path: Path, payload: Any) -> Path:
    """Write ``payload`` as JSON to ``path``, whole or not at all (Decimals as exact numbers); return the path."""
    return write_atomically(path, (_exact_json(payload) + "\n").encode("utf-8"))


def print_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout, nothing else; Decimals (money) are numbers with their exact digits."""
    print(_exact_json(payload))


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
