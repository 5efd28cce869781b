"""Latency histograms over a month: percentiles and seed 003's SLA attainment P_ok.

A Prometheus histogram is a set of cumulative counters ``<name>_bucket{le="b_k"}``: how many
observations were at most ``b_k`` seconds. Over the month each bucket counts its
:func:`~finops.serving.series.increase` (resets handled as ``rate()`` does), giving cumulative counts
``N(b_k)`` with ``N(+Inf) = N_total``.

* percentile ``q``: Prometheus' ``histogram_quantile``, linear inside the bucket that holds rank
  ``q x N_total`` (the lower edge of the first bucket is 0);
* P_ok (seed 003, section 7): ``P_ok = N_within / N_total``, with ``N_within`` the count at the
  target, interpolated linearly inside its bucket the same way.

>>> h = Histogram((0.1, 0.5, 1.0, float("inf")), (50.0, 90.0, 99.0, 100.0))
>>> round(h.quantile(0.5), 3), round(h.quantile(0.9), 3), round(h.share_within(0.3), 3)
(0.1, 0.5, 0.7)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, Location
from .series import Series, increase

__all__ = ["Histogram", "histogram_from_buckets"]


@dataclass(frozen=True)
class Histogram:
    """Cumulative counts ``counts[k]`` of observations at most ``bounds[k]`` seconds (last bound +Inf)."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]

    @property
    def total(self) -> float:
        return self.counts[-1] if self.counts else 0.0

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile in seconds, as ``histogram_quantile(q, ...)``; ``None`` with no observations.

        A rank in the +Inf bucket answers the highest finite bound, as Prometheus does.
        """
        if self.total <= 0:
            return None
        rank = q * self.total
        k = int(np.searchsorted(np.asarray(self.counts), rank, side="left"))
        if math.isinf(self.bounds[k]):
            return self.bounds[k - 1] if k > 0 else None
        lower, below = (0.0, 0.0) if k == 0 else (self.bounds[k - 1], self.counts[k - 1])
        inside = self.counts[k] - below
        return self.bounds[k] if inside <= 0 else lower + (self.bounds[k] - lower) * (rank - below) / inside

    def share_within(self, target: float) -> float | None:
        """P_ok: the share of observations at most ``target`` seconds; ``None`` with no observations."""
        if self.total <= 0:
            return None
        k = int(np.searchsorted(np.asarray(self.bounds), target, side="left"))
        if k >= len(self.bounds) or math.isinf(self.bounds[k]):
            return self.counts[-2] / self.total if len(self.counts) > 1 else 1.0
        lower, below = (0.0, 0.0) if k == 0 else (self.bounds[k - 1], self.counts[k - 1])
        within = below + (self.counts[k] - below) * (target - lower) / (self.bounds[k] - lower)
        return within / self.total


def histogram_from_buckets(buckets: Iterable[Series]) -> Histogram:
    """One histogram from the ``_bucket`` series of one or more processes (summed per ``le``).

    Raises :class:`InputError` when a bucket has no ``le`` label or there is no ``+Inf`` bucket.
    """
    totals: dict[float, float] = {}
    for s in buckets:
        le = s.labels.get("le")
        if le is None:
            raise InputError("a histogram bucket series has no le label",
                             where=Location(file=s.source or None, column=s.describe()),
                             hint="query the <name>_bucket series of the histogram")
        bound = float(le)
        totals[bound] = totals.get(bound, 0.0) + increase(s)
    if not totals or not math.isinf(max(totals)):
        raise InputError("a histogram has no +Inf bucket", hint="query every bucket of <name>_bucket")
    bounds = tuple(sorted(totals))
    counts = np.maximum.accumulate([totals[b] for b in bounds])  # scrapes of one instant keep counts monotone
    return Histogram(bounds, tuple(float(c) for c in counts))
