"""Checks of numeric options at the command line's edge: finite, and in the range their meaning allows.

typer parses ``--peak nan`` and ``--hours 99999999999`` happily; these checks turn such values into one
:class:`~finops.errors.InputError` naming the option, before any work or any file is written.

>>> in_range(36, "--months", 1, 1200)
36
>>> in_range(float("nan"), "--peak", 0, 1e6)
Traceback (most recent call last):
...
finops.errors.InputError: --peak must be a finite number from 0 to 1e+06, got nan
"""

from __future__ import annotations

import math
from typing import TypeVar

import typer

from ..errors import InputError

__all__ = ["ENGINE_HELP", "ENGINE_VERSION_HELP", "SERVING_LINES", "in_range", "month_option"]

#: The engines ``finops.sizing.engine_constants.ENGINES`` names, spelled here so that registering a command
#: does not load the sizing model (tests/cli/test_light_commands.py keeps the two in step).
ENGINE_HELP = "trtllm | vllm | sglang"
ENGINE_VERSION_HELP = ("the engine version you run, e.g. 0.12: one no bundled measurement came from is an "
                       "error that lists the covered ones (finops.sizing.engine_versions)")

#: ``--serving`` of the commands that read serving metrics (``finops reconcile``, ``finops plan next``).
SERVING_LINES = typer.Option(None, "--serving", help="serving lines CSV (default: the plan's Serving sheet)")

N = TypeVar("N", int, float)


def in_range(value: N, option: str, low: float, high: float, *, hint: str | None = None) -> N:
    """``value`` when it is finite and within ``[low, high]``; else an :class:`InputError` naming ``option``."""
    if not math.isfinite(value) or not low <= value <= high:
        kind = "whole number" if isinstance(value, int) else "finite number"
        raise InputError(f"{option} must be a {kind} from {low:g} to {high:g}, got {value!r}", hint=hint)
    return value


def month_option(value: str, option: str) -> str:
    """``value`` as ``YYYY-MM`` (:func:`finops.depreciation.parse_month`); else an :class:`InputError` naming
    ``option``.

    >>> month_option("2026-13", "--start")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: --start: month must be 'YYYY-MM', got '2026-13'. Hint: for example '2026-05'
    """
    from ..depreciation import parse_month

    try:
        return parse_month(value)
    except InputError as exc:
        raise InputError(f"{option}: {exc.message}", hint=exc.hint) from None
