"""One retry deadline per command and provider, shared by every call the command makes to that provider.

A provider's retry budget (``FINOPS_AWS_RETRY_TIMEOUT``, ``FINOPS_GCP_RETRY_TIMEOUT``: 120 s by default)
is a deadline for the whole command, not for each call: it starts when the command's first call to that
provider fails (from the start of that call) and every later retry of every call, page, query and client
of the command must end by it. A paginated pull against an endpoint that keeps failing therefore gives
up within one budget, whatever its number of pages, where a budget per call allowed pages x budget.
Calls that succeed are never cut: a long, healthy pull (an Athena query polled for minutes, a price
list of many pages) spends none of the budget until something fails.

The scope of "a command" is :func:`one_deadline`: the command line opens one around each command, and
the connectors' public entry points (``pull_prices``, ``pull_bills``, ``run_query``...) open one when
called on their own (from Python), so one call of them is one scope. Scopes nest: an inner one joins
the outer.

>>> with one_deadline():
...     first = deadline("EXAMPLE_BUDGET", 120.0, since=1000.0)
...     later = deadline("EXAMPLE_BUDGET", 120.0, since=1500.0)
>>> first, later
(1120.0, 1120.0)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["deadline", "one_deadline", "time_left"]

#: Budget name -> the monotonic time its deadline started, in the current command; ``None`` outside one.
_STARTS: ContextVar[dict[str, float] | None] = ContextVar("finops_retry_deadline_starts", default=None)


@contextmanager
def one_deadline() -> Iterator[None]:
    """The scope of one command's deadlines (also a decorator); inside an open scope it adds nothing."""
    if _STARTS.get() is not None:
        yield
        return
    token = _STARTS.set({})
    try:
        yield
    finally:
        _STARTS.reset(token)


def deadline(budget: str, seconds: float, *, since: float | None = None) -> float:
    """The monotonic time by which the retries of ``budget`` end: ``seconds`` after the first failure of the
    command, which started at ``since`` (default now) the first time this is asked in the scope. Outside a
    scope, ``since + seconds``: the call alone."""
    started = time.monotonic() if since is None else since
    starts = _STARTS.get()
    if starts is None:
        return started + seconds
    return starts.setdefault(budget, started) + seconds


def time_left(budget: str, seconds: float) -> float:
    """Seconds until the deadline of ``budget``; all of ``seconds`` while nothing has failed yet."""
    starts = _STARTS.get()
    if starts is None or budget not in starts:
        return seconds
    return starts[budget] + seconds - time.monotonic()
