"""What each serving plan line actually did in a month, from its recorded metric series.

Per plan line (series assigned by :mod:`~finops.serving.serving_lines`), over the month's hours:

* tokens served: ``increase()`` of the prompt and generation counters, requests of the success
  counter (resets handled as Prometheus does, :mod:`~finops.serving.series`); the hourly profile is
  the generation counter's increase per hour;
* TTFT and ITL: P50 and P99 of the month's histogram, and seed 003's ``P_ok = N_within / N_total``
  against the line's targets (:mod:`~finops.serving.histogram`);
* GPU-hours: the bill's, per plan line (the reconciliation's usage: ``x_GpuHours``, else hours of
  usage x GPUs per instance, :func:`billed_gpu_hours`); a line the bill does not carry (on-prem, or no
  bills given) falls back to DCGM: one utilization series per GPU, ``GPU-hours = sum over GPUs of the
  time covered``. Utilization is DCGM's alone: the mean of the gauge;
* throughput: realized ``generation tokens / GPU-hours`` against what the performance model
  (:func:`finops.sizing.estimate`) predicts for the line's configuration at the month's mean prompt
  and output lengths and mean running batch per replica; ``ratio = realized / predicted``;
* cost per million tokens: the line's actual cost from the reconciliation over
  ``(prompt + generation tokens) / 10^6``.

A quantity the engine does not export, or that no series gave, is ``None`` and named in ``missing``.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

import numpy as np

from ..errors import FinopsError, InputError
from ..money import Money
from ..reconcile.result import Reconciliation
from .histogram import histogram_from_buckets
from .load_tests import LoadTestResult
from .metric_names import GPU_METRICS, known_metric_names, metric_names
from .series import Series, active_hours, gaps, hourly_increase, increase
from .serving_lines import ServingLine, assign

__all__ = ["RealizedLine", "ServingMonth", "billed_gpu_hours", "month_window", "realize"]

_MILLION = Decimal(1_000_000)


def month_window(month: str) -> tuple[float, int]:
    """``(start, hours)`` of a ``YYYY-MM`` month in UTC: Unix seconds of its first instant, its hours.

    >>> month_window("2026-05")
    (1777593600.0, 744)
    """
    try:
        year, number = (int(part) for part in month.split("-"))
        start = datetime(year, number, 1, tzinfo=UTC)
    except ValueError:
        raise InputError(f"expected a month as YYYY-MM, got {month!r}", hint="for example 2026-05") from None
    return start.timestamp(), calendar.monthrange(year, number)[1] * 24


@dataclass(frozen=True)
class RealizedLine:
    """One plan line's month; latencies in milliseconds, shares in [0, 1], ``None`` when not measured."""

    line: ServingLine
    prompt_tokens: float
    generation_tokens: float
    requests: float
    hourly_generation_tokens: np.ndarray = field(repr=False)
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    ttft_p_ok: float | None
    itl_p_ok: float | None
    replicas: int
    mean_running: float | None
    gpus: int
    gpu_hours: float
    gpu_hours_source: str              # "bill" or "DCGM"
    dcgm_gpu_hours: float              # what DCGM saw (beside the bill's: paid hours no exporter reported)
    gpu_utilization: float | None
    predicted_tokens_per_gpu_hour: float | None
    cost: Money | None
    gap_hours: float
    missing: tuple[str, ...]
    serving_hours: float | None = None  # hours the line generated tokens, at the metrics' resolution

    @property
    def plan_line(self) -> str:
        return self.line.plan_line

    @property
    def tokens(self) -> float:
        """Prompt plus generation tokens served."""
        return self.prompt_tokens + self.generation_tokens

    @property
    def isl(self) -> float | None:
        return self.prompt_tokens / self.requests if self.requests else None

    @property
    def osl(self) -> float | None:
        return self.generation_tokens / self.requests if self.requests else None

    @property
    def realized_tokens_per_gpu_hour(self) -> float | None:
        """Generation tokens per GPU-hour the line's GPUs delivered."""
        return self.generation_tokens / self.gpu_hours if self.gpu_hours else None

    @property
    def throughput_ratio(self) -> float | None:
        """Realized over predicted generation tokens per GPU-hour."""
        realized, predicted = self.realized_tokens_per_gpu_hour, self.predicted_tokens_per_gpu_hour
        return realized / predicted if realized is not None and predicted else None

    @property
    def cost_per_million_tokens(self) -> Money | None:
        """Actual cost over the million tokens actually served."""
        if self.cost is None or self.tokens <= 0:
            return None
        return self.cost * (_MILLION / Decimal(repr(self.tokens)))

    @property
    def cost_per_request(self) -> Money | None:
        """Actual cost over the requests actually served (None when no request was counted)."""
        if self.cost is None or self.requests <= 0:
            return None
        return self.cost / Decimal(repr(self.requests))

    @property
    def serving_gpu_hours(self) -> float:
        """GPU-hours that served: the line's GPUs x the time in which it generated tokens, at the metrics'
        resolution (:func:`~finops.serving.series.active_hours`: the scrape steps in which the generation counter
        rose, a partial hour counted as its part); without it, the hours with any generated token."""
        if self.serving_hours is not None:
            return self.gpus * self.serving_hours
        return float(self.gpus * np.count_nonzero(self.hourly_generation_tokens > 0))

    @property
    def idle_gpu_hours(self) -> float | None:
        """GPU-hours paid but not serving: the paid GPU-hours (the bill's, else DCGM's) less
        :attr:`serving_gpu_hours`, none below zero (None without metrics of generated tokens)."""
        if not self.hourly_generation_tokens.size:
            return None
        return max(0.0, self.gpu_hours - self.serving_gpu_hours)

    @property
    def idle_gpu_cost(self) -> Money | None:
        """The part of the line's actual cost paid for idle GPU-hours: cost x idle / paid GPU-hours."""
        idle = self.idle_gpu_hours
        if self.cost is None or idle is None or self.gpu_hours <= 0:
            return None
        return self.cost * Decimal(repr(idle)) / Decimal(repr(self.gpu_hours))  # multiplied first: exact when it can be


@dataclass(frozen=True)
class ServingMonth:
    """The realized lines of a month, and the series that went nowhere."""

    month: str
    lines: tuple[RealizedLine, ...]
    ignored_metrics: tuple[str, ...]   # metric names no table knows
    unassigned_series: int             # series of known metrics that match no line's rule
    load_tests: tuple[LoadTestResult, ...] = ()   # load tests of the month's configurations, if given

    def line(self, plan_line: str) -> RealizedLine:
        return next(r for r in self.lines if r.plan_line == plan_line)

    def throughput_ratios(self) -> dict[tuple[str, str, str], float]:
        """Realized / predicted per ``(engine, GPU, model)`` with one (lines of one key: geometric mean)."""
        logs: dict[tuple[str, str, str], list[float]] = {}
        for r in self.lines:
            if r.throughput_ratio:
                logs.setdefault((r.line.engine, r.line.gpu, r.line.model), []).append(math.log(r.throughput_ratio))
        return {key: math.exp(sum(values) / len(values)) for key, values in logs.items()}


def _inside(series: Series, start: float, end: float) -> Series:
    keep = (series.times >= start) & (series.times <= end)
    return Series(series.name, series.labels, series.times[keep], series.values[keep], series.source)


def _pick(by_name: Mapping[str, list[Series]], names: Sequence[str], suffix: str = "") -> list[Series]:
    """The series of the first of ``names`` (alternatives) that has any."""
    return next((by_name[n + suffix] for n in names if by_name.get(n + suffix)), [])


def _predicted(line: ServingLine, isl: float | None, osl: float | None, running: float | None) -> float | None:
    """Generation tokens per GPU-hour the performance model predicts at the observed operating point.

    A mean running batch ``c`` between whole batches ``k = floor(c)`` and ``k + 1`` is a replica
    running ``k`` sequences part of the time and ``k + 1`` the rest, so the rate is interpolated:
    ``rate(c) = rate(k) x (k + 1 - c) + rate(k + 1) x (c - k)``, with ``rate(0) = 0``.
    """
    from ..sizing.performance import estimate

    if not isl or not osl or running is None:
        return None

    def rate(batch: int) -> float:
        if batch == 0:
            return 0.0
        e = estimate(line.model, line.gpu, precision=line.precision, tp=line.tp, isl=max(1, round(isl)),
                     osl=max(1, round(osl)), concurrency=batch, engine=line.engine)
        return e.output_tokens_per_s_per_gpu or 0.0

    low = int(running)
    try:
        per_s = rate(low) * (low + 1 - running) + rate(low + 1) * (running - low)
    except FinopsError:
        return None
    return per_s * 3600 or None


def billed_gpu_hours(reconciliation: Reconciliation) -> dict[str, float]:
    """GPU-hours per plan line of the month's bills (the reconciliation's usage, every GPU model summed)."""
    out: dict[str, float] = {}
    for g in reconciliation.gpu_hours_by_line:
        if g.plan_line is not None:
            out[g.plan_line] = out.get(g.plan_line, 0.0) + float(g.hours)
    return out


def _realize_line(line: ServingLine, by_name: Mapping[str, list[Series]], start: float, hours: int,
                  cost: Money | None, billed_hours: float | None) -> RealizedLine:
    missing: list[str] = []

    def counter(quantity: str) -> list[Series]:
        found = _pick(by_name, metric_names(line.engine, quantity))  # type: ignore[arg-type]
        if not found:
            missing.append(quantity)
        return found

    prompt, generation, requests = counter("prompt_tokens"), counter("generation_tokens"), counter("requests")
    latency: dict[str, tuple[float | None, float | None, float | None]] = {}
    for quantity, target in (("ttft", line.ttft_target_ms), ("itl", line.itl_target_ms)):
        buckets = _pick(by_name, metric_names(line.engine, quantity), "_bucket")  # type: ignore[arg-type]
        if not buckets:
            missing.append(quantity)
            latency[quantity] = (None, None, None)
            continue
        h = histogram_from_buckets(buckets)
        p50, p99 = h.quantile(0.5), h.quantile(0.99)
        latency[quantity] = (None if p50 is None else p50 * 1e3, None if p99 is None else p99 * 1e3,
                             None if target is None else h.share_within(target / 1e3))
    running = _pick(by_name, metric_names(line.engine, "running"))
    if not running:
        missing.append("running")
    utilization = _pick(by_name, GPU_METRICS["gpu_util"])
    if not utilization:
        missing.append("gpu_util")
    total = {name: sum(increase(s) for s in group) for name, group in
             (("prompt", prompt), ("generation", generation), ("requests", requests))}
    hourly = sum((hourly_increase(s, start, hours) for s in generation), np.zeros(hours))
    dcgm_hours = sum(_covered_hours(s, start + hours * 3600) for s in utilization)
    mean_running = float(np.mean([s.values.mean() for s in running])) if running else None
    requests_n = total["requests"]
    isl = total["prompt"] / requests_n if requests_n else None
    osl = total["generation"] / requests_n if requests_n else None
    gap_hours = sum(g.hours for g in {(g.start, g.end): g for s in generation + requests for g in gaps(s)}.values())
    return RealizedLine(
        line, total["prompt"], total["generation"], requests_n, hourly,
        *latency["ttft"][:2], *latency["itl"][:2], latency["ttft"][2], latency["itl"][2],
        len(running), mean_running, len(utilization), billed_hours or dcgm_hours, "bill" if billed_hours else "DCGM",
        dcgm_hours,
        float(np.mean(np.concatenate([s.values for s in utilization]))) / 100 if utilization else None,
        _predicted(line, isl, osl, mean_running), cost, gap_hours, tuple(missing),
        active_hours(generation, start, start + hours * 3600) if generation else None)


def _covered_hours(series: Series, end: float) -> float:
    """Hours a gauge series covers: from its first sample to one median step past its last, within ``end``."""
    if series.times.size < 2:
        return 0.0
    last = min(end, float(series.times[-1] + np.median(np.diff(series.times))))
    return (last - float(series.times[0])) / 3600


def realize(lines: Sequence[ServingLine], series: Sequence[Series], month: str, *,
            costs: Mapping[str, Money] | None = None, window: tuple[float, int] | None = None,
            billed_gpu_hours: Mapping[str, float] | None = None) -> ServingMonth:
    """The realized figures of every serving line in ``month`` from ``series``.

    ``window`` (start in Unix seconds, hours) replaces the month's own hours, for a shorter recording;
    ``billed_gpu_hours`` (per plan line, :func:`billed_gpu_hours`) replaces DCGM's GPU-hours.

    Raises :class:`InputError` when no series is of a metric the name tables know, or when a line gets
    no series at all (naming its label rule).
    """
    start, hours = window or month_window(month)
    end = start + hours * 3600
    known = known_metric_names()
    ignored = sorted({s.name for s in series if s.name not in known})
    if series and len(ignored) == len({s.name for s in series}):
        raise InputError(f"no series of a known serving metric (got {', '.join(ignored[:5])})",
                         hint="give query_range responses of vLLM, SGLang, TRT-LLM or DCGM series "
                              "(see docs/loop.md for the names)")
    grouped: list[dict[str, list[Series]]] = [{} for _ in lines]
    index = {id(line): i for i, line in enumerate(lines)}
    unassigned = 0
    for s in series:
        if s.name not in known:
            continue
        owner = assign(lines, s.labels)
        if owner is None:
            unassigned += 1
            continue
        clipped = _inside(s, start, end)
        if clipped.times.size:
            grouped[index[id(owner)]].setdefault(s.name, []).append(clipped)
    realized = []
    for line, by_name in zip(lines, grouped):
        if not by_name:
            raise InputError(f"no series in {month} for plan line {line.plan_line!r} "
                             f"(label {line.label_key} matching {line.label_value!r})",
                             hint="check the Serving table's label rule against the series' labels")
        realized.append(_realize_line(line, by_name, start, hours, (costs or {}).get(line.plan_line),
                                      (billed_gpu_hours or {}).get(line.plan_line)))
    return ServingMonth(month, tuple(_shared(realized)), tuple(ignored), unassigned)


def _shared(realized: Sequence[RealizedLine]) -> list[RealizedLine]:
    """The plan line's cost and billed GPU-hours split among its serving lines by their share of the GPU-hours DCGM
    saw (else of the generation tokens, else evenly): ``cost_i = cost x w_i / sum(w)``. A plan line's bill does not
    say which of its serving lines ran on which instance; its GPUs' own exporter does."""
    from dataclasses import replace

    by_plan: dict[str, list[int]] = {}
    for i, r in enumerate(realized):
        by_plan.setdefault(r.plan_line, []).append(i)
    out = list(realized)
    for members in by_plan.values():
        if len(members) < 2:
            continue
        weights = [realized[i].dcgm_gpu_hours for i in members]
        if not sum(weights):
            weights = [realized[i].generation_tokens for i in members]
        if not sum(weights):
            weights = [1.0] * len(members)
        total = sum(weights)
        for i, w in zip(members, weights):
            r, share = realized[i], Decimal(repr(w)) / Decimal(repr(total))
            billed = r.gpu_hours if r.gpu_hours_source == "bill" else None
            out[i] = replace(r, cost=None if r.cost is None else r.cost * share,
                             gpu_hours=r.gpu_hours * w / total if billed is not None else r.gpu_hours)
    return out
