"""A recorded metric series and the counter arithmetic of Prometheus' ``increase()``.

A :class:`Series` is one time series as Prometheus stores it: a metric name, its labels, and samples
``(t_i, v_i)`` with ``t`` in Unix seconds. Counters only go up; a value below the one before means the
process restarted and the counter began again from zero, so the increment of that step is the new
value itself (Prometheus' ``rate()`` and ``increase()`` handle resets the same way):

    step_i = v_i - v_(i-1)   if v_i >= v_(i-1)
    step_i = v_i             otherwise (a reset)

A gap is a step longer than :data:`GAP_FACTOR` times the series' median step: the counter still
carries what happened in it (the increment is counted once, at the later sample), but nothing says
*when*, so gaps are reported beside the figures.

>>> s = Series("vllm:generation_tokens_total", {"model_name": "m"}, [0, 60, 120, 180], [10, 40, 5, 25])
>>> counter_steps(s).tolist()      # 40 - 10, then a reset to 5, then 25 - 5
[30.0, 5.0, 20.0]
>>> float(increase(s))
55.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, Location

__all__ = ["GAP_FACTOR", "Gap", "Series", "active_hours", "counter_steps", "gaps", "hourly_increase", "increase"]

#: A step longer than this many median steps is a gap in the recording.
GAP_FACTOR = 3.0
_HOUR = 3600.0


@dataclass(frozen=True)
class Gap:
    """No sample between ``start`` and ``end`` (Unix seconds) in the series named ``series``."""

    series: str
    start: float
    end: float

    @property
    def hours(self) -> float:
        return (self.end - self.start) / _HOUR


@dataclass(frozen=True)
class Series:
    """One time series: name, labels, sample times (Unix seconds, increasing) and values."""

    name: str
    labels: Mapping[str, str]
    times: np.ndarray
    values: np.ndarray
    source: str = field(default="", compare=False)

    def __init__(self, name: str, labels: Mapping[str, str], times: Sequence[float] | np.ndarray,
                 values: Sequence[float] | np.ndarray, source: str = "") -> None:
        t = np.asarray(times, dtype=float)
        v = np.asarray(values, dtype=float)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "labels", dict(labels))
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "source", source)
        where = Location(file=source or None, column=self.describe())
        if t.shape != v.shape or t.ndim != 1:
            raise InputError("a series has as many times as values", where=where)
        if t.size and np.any(np.diff(t) <= 0):
            raise InputError("sample times do not increase", where=where,
                             hint="give the query_range response as Prometheus returned it")
        if np.any(~np.isfinite(v)):
            raise InputError("a sample is NaN or infinite", where=where,
                             hint="Prometheus marks stale series with NaN; query the raw counter, not a ratio")

    def describe(self) -> str:
        """``name{label="value",...}``, as Prometheus prints a series."""
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items()))
        return f"{self.name}{{{inner}}}"


def counter_steps(series: Series) -> np.ndarray:
    """Increment of a counter at each sample after the first, resets counted as restarts from zero."""
    v = series.values
    if v.size < 2:
        raise InputError("a counter needs at least two samples to give an increase",
                         where=Location(file=series.source or None, column=series.describe()),
                         hint="query a longer range, or a step shorter than the range")
    steps = np.diff(v)
    return np.where(steps >= 0, steps, v[1:])


def increase(series: Series) -> float:
    """What the counter counted over the whole series: the sum of :func:`counter_steps`."""
    return float(counter_steps(series).sum())


def hourly_increase(series: Series, start: float, hours: int) -> np.ndarray:
    """The counter's increments summed per hour ``(start + h·3600, start + (h+1)·3600]``.

    An increment belongs to the hour of the sample that closes its step (as ``increase(c[1h])``
    evaluated at the end of each hour).

    >>> s = Series("c", {}, [0, 1800, 3600, 5400, 7200], [0, 5, 10, 10, 30])
    >>> hourly_increase(s, 0, 2).tolist()
    [10.0, 20.0]
    """
    steps = counter_steps(series)
    hour = np.floor((series.times[1:] - start - 1e-9) / _HOUR).astype(int)
    inside = (hour >= 0) & (hour < hours)
    return np.bincount(hour[inside], weights=steps[inside], minlength=hours)[:hours].astype(float)


def active_hours(series: Sequence[Series], start: float, end: float) -> float:
    """Hours within ``(start, end]`` in which any of the counters counted: the union of the sampling steps
    ``(t_i, t_i+1]`` whose increment is above zero, each clipped to the window, at the series' own resolution (a
    scrape every 30 s counts 30 s, not the hour around it). A step across a gap that counted is counted whole:
    the counter rose somewhere in it.

    >>> s = Series("c", {}, [0, 900, 1800, 2700, 3600, 4500], [0, 0, 5, 5, 9, 9])
    >>> active_hours([s], 0, 7200)  # (900, 1800] and (2700, 3600]: half an hour
    0.5
    """
    intervals = sorted((max(start, float(s.times[i])), min(end, float(s.times[i + 1])))
                       for s in series if s.times.size >= 2 for i in np.flatnonzero(counter_steps(s) > 0))
    total, reach = 0.0, start
    for low, high in intervals:
        low = max(low, reach)
        if high > low:
            total, reach = total + high - low, high
    return total / _HOUR


def gaps(series: Series) -> list[Gap]:
    """The steps longer than :data:`GAP_FACTOR` times the median step.

    >>> [round(g.hours, 2) for g in gaps(Series("c", {}, [0, 60, 120, 3720, 3780], [0, 1, 2, 3, 4]))]
    [1.0]
    """
    if series.times.size < 3:
        return []
    steps = np.diff(series.times)
    limit = GAP_FACTOR * float(np.median(steps))
    return [Gap(series.describe(), float(series.times[i]), float(series.times[i + 1]))
            for i in np.flatnonzero(steps > limit)]
