"""Options shared by the commands: option groups, and checks of numeric options at the command line's edge.

A command with many options takes them as a few *option groups* (:func:`option_groups`): frozen dataclasses
whose fields are typer options, one group per concern (``finops tco``'s owned hardware, cloud prices,
tokens...), each turned into the core's values by its own methods. typer sees the fields as the command's
options, in order, so ``--help`` reads as if each were written out.

Numeric checks: finite, and in the range their meaning allows.

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

import dataclasses
import functools
import inspect
import math
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from ..errors import InputError

__all__ = ["ENGINE_HELP", "ENGINE_VERSION_HELP", "SERVING_LINES", "in_range", "month_option", "option_groups"]

#: The engines ``finops.sizing.engine_constants.ENGINES`` names, spelled here so that registering a command
#: does not load the sizing model (tests/cli/test_light_commands.py keeps the two in step).
ENGINE_HELP = "trtllm | vllm | sglang"
ENGINE_VERSION_HELP = ("the engine version you run, e.g. 0.12: one no bundled measurement came from is an "
                       "error that lists the covered ones (finops.sizing.engine_versions)")

#: ``--serving`` of the commands that read serving metrics (``finops reconcile``, ``finops plan next``), as
#: ``serving: Annotated[Path | None, SERVING_LINES] = None``.
SERVING_LINES = typer.Option("--serving", help="serving lines CSV (default: the plan's Serving sheet)")

N = TypeVar("N", int, float)
R = TypeVar("R")


def option_groups(command: Callable[..., R]) -> Callable[..., R]:
    """``command`` as typer should see it: each parameter annotated with an option group (a dataclass whose
    fields are ``Annotated[type, typer.Option(...)]`` with their defaults) spread into the group's fields;
    each call gathers them back into the group. Other parameters pass as they are.

    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class Horizon:
    ...     months: typing.Annotated[int, typer.Option(help="horizon in months")] = 36
    ...     start: typing.Annotated[str, typer.Option(help="first month")] = "2026-01"
    >>> @option_groups
    ... def plan(horizon: Horizon, quiet: bool = False) -> str:
    ...     return f"{horizon.months} months from {horizon.start}" + (" quietly" if quiet else "")
    >>> list(inspect.signature(plan).parameters)
    ['months', 'start', 'quiet']
    >>> plan(months=12, start="2027-01", quiet=True)
    '12 months from 2027-01 quietly'
    """
    signature = inspect.signature(command, eval_str=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, tuple[str, ...]]] = {}
    for parameter in signature.parameters.values():
        group = parameter.annotation
        if not (isinstance(group, type) and dataclasses.is_dataclass(group)):
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        hints = typing.get_type_hints(group, include_extras=True)
        fields = dataclasses.fields(group)
        bare = [f.name for f in fields if not any(isinstance(extra, typer.models.OptionInfo)
                                                  for extra in getattr(hints[f.name], "__metadata__", ()))]
        if bare:  # typer would read a field without its Option as a positional argument
            raise TypeError(f"{group.__name__}: annotate {', '.join(bare)} as Annotated[type, typer.Option(...)]")
        groups[parameter.name] = (group, tuple(f.name for f in fields))
        parameters += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[f.name],
                                         default=inspect.Parameter.empty if f.default is dataclasses.MISSING
                                         else f.default) for f in fields]
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise TypeError(f"{command.__name__}: two options share a name: {sorted(n for n in set(names) if names.count(n) > 1)}")

    @functools.wraps(command)
    def gathered(**values: Any) -> R:
        for name, (group, fields) in groups.items():
            values[name] = group(**{field: values.pop(field) for field in fields})
        return command(**values)

    gathered.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    gathered.__annotations__ = {p.name: p.annotation for p in parameters}
    return gathered


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
