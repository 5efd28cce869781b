"""A synthetic month of serving metrics for a plan line: vLLM or SGLang series and DCGM GPU utilization, as
``/api/v1/query_range`` answers. Synthetic, not recorded: for demonstrations and tests of the serving loop.

For one plan line (:class:`LineSpec`):

* the month's tokens (``mtokens``), split into prompt and generation tokens by the line's mean prompt and
  output lengths; requests = tokens / (ISL + OSL);
* hourly traffic follows a daily cycle (peak 14:00 UTC, trough at 0.35 of the peak's base), weekends at
  70 %, and 5 % multiplicative noise (NumPy ``default_rng``, seeded per line), shared evenly by the replicas;
* TTFT and inter-token latency are lognormal (median and sigma per line, the median rising with the
  square root of the hour's load), binned into a subset of vLLM's default histogram buckets;
* the running-requests gauge follows Little's law: request rate x (TTFT + OSL x ITL) per replica;
* DCGM ``DCGM_FI_DEV_GPU_UTIL`` per GPU: 15 % + 75 % x the hour's load over the peak, +-3 points noise;
* optionally one replica restarts (its counters start again from 0) and some hours' scrapes are missing.

Samples are hourly, at the top of each hour of the month (``finops.serving.month_window``). The output is
deterministic. ``scripts/make_sample_metrics.py`` writes the bundled sample month with it; ``finops demo``
writes its own plan's month.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from .realized import month_window

__all__ = ["LineSpec", "answer", "line_results", "load_profile", "peak_to_average"]

TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)
_ENGINE_NAMES = {
    "vllm": ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
             "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:num_requests_running"),
    "sglang": ("sglang:prompt_tokens_total", "sglang:generation_tokens_total", "sglang:num_requests_total",
               "sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds",
               "sglang:num_running_reqs"),
}


@dataclass(frozen=True)
class LineSpec:
    """How one plan line's synthetic month is drawn."""

    plan_line: str
    namespace: str
    engine: str
    hf_model: str
    gpu_name: str
    replicas: int
    tp: int
    mtokens: float
    isl: int
    osl: int
    ttft_median_s: float
    itl_median_s: float
    sigma: float = 0.45
    restart: tuple[int, int] | None = None   # (replica, hour) whose counters start again from 0
    missing_hours: tuple[int, ...] = ()


def load_profile(rng: np.random.Generator, hours: int, first_weekday: int) -> np.ndarray:
    """Relative load per hour of a month of ``hours`` starting on ``first_weekday`` (Monday 0): daily cycle,
    weekend dip, noise (mean 1)."""
    h = np.arange(hours)
    daily = 0.35 + 0.65 * (0.5 + 0.5 * np.cos(2 * np.pi * (h % 24 - 14) / 24))
    weekday = np.where(((h // 24) + first_weekday) % 7 >= 5, 0.7, 1.0)
    load = daily * weekday * rng.normal(1.0, 0.05, hours).clip(0.8, 1.2)
    return load / load.mean()


def _lognormal_cdf(x: float, median: np.ndarray, sigma: float) -> np.ndarray:
    return 0.5 * (1 + np.vectorize(math.erf)((np.log(x) - np.log(median)) / (sigma * math.sqrt(2))))


def _rng(plan_line: str, seed: int) -> np.random.Generator:
    return np.random.default_rng(seed + sum(map(ord, plan_line)))


def peak_to_average(plan_line: str, month: str, *, seed: int = 2026_05) -> float:
    """The busiest hour of ``plan_line``'s month over its average (the relative load :func:`line_results` draws),
    so a caller can give the month the tokens that put its peak hour where a plan sized it."""
    start, hours = month_window(month)
    return float(load_profile(_rng(plan_line, seed), hours, datetime.fromtimestamp(start, UTC).weekday()).max())


def line_results(spec: LineSpec, month: str, *, scale: float = 1.0, seed: int = 2026_05) -> list[dict[str, object]]:
    """The line's series over ``month`` (``YYYY-MM``) as ``query_range`` result items (``metric`` labels,
    ``values`` [t, "v"])."""
    start, hours = month_window(month)
    rng = _rng(spec.plan_line, seed)
    load = load_profile(rng, hours, datetime.fromtimestamp(start, UTC).weekday())
    tokens = spec.mtokens * 1e6 * scale * load / hours
    requests = tokens / (spec.isl + spec.osl)
    per_replica = requests / spec.replicas
    ttft_median = spec.ttft_median_s * np.sqrt(load)
    itl_median = spec.itl_median_s * np.sqrt(load)
    times = start + 3600.0 * np.arange(hours + 1)
    kept = np.array([h not in spec.missing_hours for h in range(hours + 1)])
    names = _ENGINE_NAMES[spec.engine]
    out: list[dict[str, object]] = []
    base_labels = {"namespace": spec.namespace, "model_name": spec.hf_model, "job": spec.engine}

    def emit(name: str, labels: dict[str, str], values: np.ndarray, decimals: int = 0) -> None:
        fmt = (lambda v: str(int(v))) if decimals == 0 else (lambda v: f"{v:.{decimals}f}")
        out.append({"metric": {"__name__": name, **labels},
                    "values": [[float(t), fmt(v)] for t, v, k in zip(times, values, kept) if k]})

    for replica in range(spec.replicas):
        labels = {**base_labels, "pod": f"{spec.plan_line}-{replica}"}
        restart = spec.restart[1] if spec.restart and spec.restart[0] == replica else None
        start_value = float(rng.integers(10**6, 10**8))

        def counter(per_hour: np.ndarray, start_value: float = start_value, restart: int | None = restart) -> np.ndarray:
            return _counter(per_hour, start_value, restart)

        emit(names[0], labels, counter(per_replica * spec.isl))
        emit(names[1], labels, counter(per_replica * spec.osl))
        emit(names[2], labels, counter(per_replica))
        for family, bounds, counts, median in ((names[3], TTFT_BUCKETS, per_replica, ttft_median),
                                               (names[4], ITL_BUCKETS, per_replica * (spec.osl - 1), itl_median)):
            for bound in (*bounds, math.inf):
                share = np.ones(hours) if math.isinf(bound) else _lognormal_cdf(bound, median, spec.sigma)
                emit(family + "_bucket", {**labels, "le": "+Inf" if math.isinf(bound) else str(bound)},
                     counter(counts * share))
        duration = ttft_median + spec.osl * itl_median
        running = np.concatenate([[0.0], per_replica / 3600 * duration])
        emit(names[5], labels, np.round(running + rng.normal(0, 0.1, hours + 1).clip(-0.2, 0.2), 2), decimals=2)
    for gpu in range(spec.replicas * spec.tp):
        util = 15 + 75 * np.concatenate([[load[0]], load]) / load.max() + rng.normal(0, 3, hours + 1)
        emit("DCGM_FI_DEV_GPU_UTIL", {"namespace": spec.namespace, "gpu": str(gpu % 8),
                                       "Hostname": f"{spec.namespace}-node-{gpu // 8}",
                                       "modelName": spec.gpu_name, "pod": f"{spec.plan_line}-{gpu // spec.tp}"},
             np.clip(np.round(util), 0, 100))
    return out


def _counter(per_hour: np.ndarray, start_value: float, restart: int | None) -> np.ndarray:
    """A Prometheus counter's samples: ``start_value`` plus the whole events so far; from hour ``restart`` it
    starts again from 0 (a restarted process)."""
    cumulative = np.floor(np.concatenate([[0.0], np.cumsum(per_hour)]))
    values = start_value + cumulative
    if restart is not None:
        values[restart:] = cumulative[restart:] - cumulative[restart - 1]
    return values


def answer(results: list[dict[str, object]]) -> dict[str, object]:
    """A ``query_range`` answer envelope around ``results``."""
    return {"status": "success", "data": {"resultType": "matrix", "result": results}}


