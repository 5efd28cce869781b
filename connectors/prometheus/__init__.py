"""Prometheus connector: the serving metrics production already records, as :class:`finops.serving.Series`.

Two sources, one shape:

* saved ``/api/v1/query_range`` answers (:func:`read_saved`);
* a live server (:func:`pull_month`, :func:`pull_series`): one range query per metric name of the
  name tables (:mod:`finops.serving.metric_names`), over the month or a window, at ``step`` seconds, in windows of at most
  :data:`MAX_POINTS` samples (Prometheus refuses more than 11,000 points per series).

The network sits behind :class:`~connectors.prometheus.transport.Transport`; tests pass a transport
to a real local server.
"""

from __future__ import annotations

from finops.errors import InputError
from finops.serving import known_metric_names, month_window
from finops.serving.series import Series

from .query_range import parse_query_range, read_saved
from .transport import TOKEN_ENV, HttpTransport, Transport

__all__ = ["MAX_POINTS", "TOKEN_ENV", "HttpTransport", "Transport", "parse_query_range", "pull_month",
           "pull_series", "read_saved"]

#: Samples per series per range query (below Prometheus' 11,000-point limit).
MAX_POINTS = 10_000
DEFAULT_STEP_S = 300


def _joined(parts: list[Series]) -> list[Series]:
    """Series of several windows joined by name and labels (a sample on a window's edge kept once)."""
    import numpy as np

    joined: dict[tuple[str, tuple[tuple[str, str], ...]], list[Series]] = {}
    for s in parts:
        joined.setdefault((s.name, tuple(sorted(s.labels.items()))), []).append(s)
    out = []
    for (name, labels), pieces in joined.items():
        times = np.concatenate([p.times for p in pieces])
        values = np.concatenate([p.values for p in pieces])
        times, first = np.unique(times, return_index=True)
        out.append(Series(name, dict(labels), times, values[first], pieces[0].source))
    return out


def pull_series(transport: Transport | str, start: float, end: float, *,
                step_s: float = DEFAULT_STEP_S) -> list[Series]:
    """Every series of a known serving metric from ``start`` to ``end`` (Unix seconds) on a live server.

    ``transport`` is a server URL or a :class:`Transport`.
    """
    if not 0 < step_s < float("inf"):  # 0, a negative step or NaN would never advance through the windows
        raise InputError(f"the query resolution must be a number of seconds above 0, got {step_s}",
                         hint="for example 300 (a sample every 5 minutes)")
    link = HttpTransport(transport) if isinstance(transport, str) else transport
    window = MAX_POINTS * step_s
    parts: list[Series] = []
    for name in sorted(known_metric_names()):
        t = start
        while t < end:
            stop = min(end, t + window)
            params = {"query": f'{{__name__="{name}"}}', "start": f"{t:.3f}", "end": f"{stop:.3f}",
                      "step": f"{step_s:g}"}
            parts += parse_query_range(link.get("/api/v1/query_range", params),
                                       f"{getattr(link, 'base_url', 'prometheus')} query {name}", name=name)
            t = stop
    return _joined(parts)


def pull_month(transport: Transport | str, month: str, *, step_s: float = DEFAULT_STEP_S) -> list[Series]:
    """:func:`pull_series` over the ``YYYY-MM`` month (UTC)."""
    start, hours = month_window(month)
    return pull_series(transport, start, start + hours * 3600, step_s=step_s)
