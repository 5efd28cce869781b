"""Excel cells in, Python values out: the loose-input edge of the UDFs.

Excel hands a UDF a scalar (a number, text, a boolean or ``None`` for an empty cell), a list (a
one-row or one-column range) or a list of lists (a block); the ``formulas`` evaluator hands over
numpy arrays. These helpers turn any of them into the one value a core function expects, and turn
every failure into a :class:`~finops.errors.InputError` naming the argument, so the UDF can show
``FinopsError.short()`` in the cell. Nothing here knows about LLMs or money.

>>> number([[5000.0]], "required_tokens_per_s"), text(["  h100-sxm "], "gpu"), whole(8.0, "tp")
(5000.0, 'h100-sxm', 8)
>>> number("", "spare", default=0.25)
0.25
>>> number("abc", "dau")
Traceback (most recent call last):
...
finops.errors.InputError: dau: expected a number, got 'abc'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, TypeVar

from finops.errors import FinopsError, InputError

__all__ = ["cell_errors", "grid", "names", "number", "optional_text", "records", "scalar", "text", "whole"]

F = TypeVar("F", bound=Callable[..., Any])
_MISSING = object()


def grid(value: Any) -> list[list[Any]]:
    """Any cell input as a list of rows: a scalar is ``[[v]]``, a list is one row (or column if nested).

    >>> grid(3), grid([1, 2]), grid([[1], [2]])
    ([[3]], [[1, 2]], [[1], [2]])
    """
    if hasattr(value, "tolist"):  # numpy arrays from the formulas evaluator or pyodide
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        # rows that already are lists are shared, not copied: a Prices range is ~40,000 cells per call;
        # the row types are asked of C (``set(map(type, ...))``): a Python loop over 3,700 rows took 0.2 ms
        if value and set(map(type, value)) == {list}:
            return list(value)
        if value and all(map(isinstance, value, repeat((list, tuple)))):
            return [row if isinstance(row, list) else list(row) for row in value]
        return [list(value)]
    return [[value]]


def scalar(value: Any, name: str) -> Any:
    """The single value of a cell or of a one-cell range; a larger range is an error."""
    cells = [v for row in grid(value) for v in row]
    if len(cells) != 1:
        raise InputError(f"{name}: expected one cell, got a range of {len(cells)} cells")
    found = cells[0]
    if hasattr(found, "item"):  # numpy scalar
        found = found.item()
    return None if _is_blank(found) else found


def _is_blank(value: Any) -> bool:
    return (
        value is None or (isinstance(value, str) and not value.strip()) or type(value).__name__ == "XlError"
    )


def _filled(value: Any, name: str, default: Any, what: str) -> Any:
    """The cell's value, or ``None`` for a blank cell that has a default; a blank without one is an error."""
    found = scalar(value, name)
    if found is None and default is _MISSING:
        raise InputError(f"{name}: {what} is required")
    return found


def number(value: Any, name: str, *, default: Any = _MISSING) -> float:
    """A finite number from a cell (numeric text allowed); blank gives ``default`` or an error."""
    found = _filled(value, name, default, "a number")
    if found is None:
        return default
    if isinstance(found, bool):
        raise InputError(f"{name}: expected a number, got {found!r}")
    try:
        result = float(str(found).replace(",", "").strip()) if isinstance(found, str) else float(found)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {found!r}") from None
    if not math.isfinite(result):
        raise InputError(f"{name}: expected a finite number, got {found!r}")
    return result


def whole(value: Any, name: str, *, default: Any = _MISSING) -> int:
    """A whole number (Excel sends ``8.0`` for 8); ``8.5`` is an error."""
    result = number(value, name, default=default)
    if result is None or result is default:
        return result
    if result != int(result):
        raise InputError(f"{name}: expected a whole number, got {result:g}")
    return int(result)


def text(value: Any, name: str, *, default: Any = _MISSING) -> str:
    """Stripped text from a cell; blank gives ``default`` or an error. ``8`` becomes ``'8'``."""
    found = _filled(value, name, default, "a value")
    if found is None:
        return default
    if isinstance(found, float) and found.is_integer():
        found = int(found)
    return str(found).strip()


def optional_text(value: Any, name: str) -> str | None:
    """Text, or ``None`` for a blank cell or an omitted argument."""
    return text(value, name, default=None)


def names(value: Any) -> tuple[str, ...]:
    """Non-blank texts from a range, or from one cell holding a comma-separated list.

    >>> names("h100-sxm, l40s"), names([["a100-80gb"], [None]]), names(None)
    (('h100-sxm', 'l40s'), ('a100-80gb',), ())
    """
    cells = [v for row in grid(value) for v in row if not _is_blank(v)]
    return tuple(part.strip() for v in cells for part in str(v).split(",") if part.strip())


def records(value: Any, name: str, required: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of a range whose first row is a header, as dicts; blank rows are skipped.

    >>> records([["name", "units"], ["od", 3], [None, None]], "options", ["name"])
    [{'name': 'od', 'units': 3}]
    """
    rows = grid(value)
    header = [str(h).strip() if h is not None else "" for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"{name}: the first row must be a header with {', '.join(missing)}")
    result = []
    for row in rows[1:]:
        cells = [None if _is_blank(v) else (v.item() if hasattr(v, "item") else v) for v in row]
        if all(v is None for v in cells):
            continue
        result.append(dict(zip(header, cells)))
    return result


def cell_errors(function: F) -> F:
    """Make a UDF answer bad input with one short text, never a traceback.

    A :class:`FinopsError` becomes its ``short()`` text; anything else becomes ``#FINOPS: <message>``.
    """

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except FinopsError as exc:
            return exc.short()
        except Exception as exc:  # noqa: BLE001  (a cell must never show a traceback)
            return f"#FINOPS: {type(exc).__name__}: {exc}".splitlines()[0]

    return guarded  # type: ignore[return-value]
