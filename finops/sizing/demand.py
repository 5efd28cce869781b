"""Demand: from users and requests to peak QPS, concurrency and token rates (Little's law).

Little's law: requests in flight = arrival rate x time in system, so at the peak
``concurrency = peak_qps x seconds_per_request`` (seed 000: "concurrency ~= peak QPS x mean request
time"; seed 003: ``C = N_users x U_active``, ``R = C x V_gen``).

Seed 000's worked case states 10,000 DAU, 5 % online at the peak, 1 request per user per minute and
5 s per request, then concludes "about 7 concurrent". Those inputs give 500 x 1/60 x 5 = 41.7; the 7
comes from 5,000 requests per hour (5000 / 3600 x 5 = 6.94). We compute from the inputs:

>>> round(concurrency(10_000, 0.05, 60, 5), 1)
41.7
>>> round(concurrency_from_rate(5000, 5), 2)
6.94
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from .workload import DemandBasis, Workload

__all__ = ["Demand", "concurrency", "concurrency_from_rate", "demand", "devices_needed"]

_HOUR = 3600.0
_DAY = 86_400.0


def _positive(name: str, value: float, *, zero_ok: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{name} must be a number, got {value!r}")
    if value < 0 or (value == 0 and not zero_ok):
        raise InputError(f"{name} must be {'>= 0' if zero_ok else '> 0'}, got {value!r}")
    return float(value)


def concurrency(dau: float, online_share: float, requests_per_user_per_hour: float,
                seconds_per_request: float) -> float:
    """Peak concurrent requests: ``dau x online_share x requests_per_user_per_hour / 3600 x seconds``.

    >>> concurrency(10_000, 0.05, 60, 5) * 3 > 120   # DAU x3 triples it
    True
    """
    share = _positive("online_share", online_share)
    if share > 1:
        raise InputError(f"online_share is a share of DAU in (0, 1], got {online_share}")
    return (_positive("dau", dau) * share * _positive("requests_per_user_per_hour", requests_per_user_per_hour)
            / _HOUR * _positive("seconds_per_request", seconds_per_request))


def concurrency_from_rate(requests_per_hour: float, seconds_per_request: float) -> float:
    """Concurrent requests from a peak hourly rate: ``requests_per_hour / 3600 x seconds``.

    >>> round(concurrency_from_rate(5000 * 3, 5))   # seed 000 after DAU x3
    21
    """
    return _positive("requests_per_hour", requests_per_hour) / _HOUR * _positive("seconds_per_request",
                                                                                 seconds_per_request)


def devices_needed(required: float, per_device: float, spare: float = 0.0, redundancy: int = 0) -> int:
    """``ceil(ceil(R / T) x (1 + spare)) + redundancy`` (seed 003; N+k redundancy on top).

    Products are rounded to 9 decimals before ``ceil`` so that 10 x 1.1 is 11, not 12.

    >>> devices_needed(5000, 800, 0.25)
    9
    >>> devices_needed(5000, 800, 0.25, redundancy=1)
    10
    """
    r = _positive("required", required, zero_ok=True)
    t = _positive("per_device", per_device)
    s = _positive("spare", spare, zero_ok=True)
    if isinstance(redundancy, bool) or not isinstance(redundancy, int) or redundancy < 0:
        raise InputError(f"redundancy must be a whole number >= 0, got {redundancy!r}")
    base = math.ceil(round(r / t, 9))
    return math.ceil(round(base * (1 + s), 9)) + redundancy


@dataclass(frozen=True)
class Demand:
    """Peak demand of a workload, growth applied. ``None`` where the inputs do not determine a figure.

    ``prefill_tokens_per_s`` is the input that misses the prefix cache: ``input x (1 - cache_hit_rate)``.
    """

    peak_qps: float | None
    concurrency: float | None
    input_tokens_per_s: float | None
    output_tokens_per_s: float | None
    prefill_tokens_per_s: float | None
    seconds_per_request: float | None
    growth: float
    basis: DemandBasis


def demand(workload: Workload, *, seconds_per_request: float | None = None) -> Demand:
    """Peak QPS, concurrency and token rates of a workload (module docstring for the formulas).

    ``seconds_per_request`` overrides the workload's own, typically with TTFT + OSL x TPOT from the
    performance model. Per basis: ``users_per_hour`` QPS = ``dau x online_share x req/user/h / 3600``;
    ``users_per_day`` QPS = ``dau x req/user/day / 86400 x peak_to_average``; ``requests_per_hour`` QPS
    = ``rate / 3600``; ``sessions`` concurrency = ``dau x online_share``; ``concurrency`` as stated.
    When QPS is unknown but concurrency and an ITL target are, output tokens/s is ``C x 1000 / itl_ms``
    (seed 003: ``R = C x V_gen``).

    >>> from finops.sizing.workload import presets
    >>> d = demand(presets()["seed000-doc-qa"])
    >>> round(d.peak_qps, 3), round(d.concurrency, 1), round(d.output_tokens_per_s)
    (8.333, 41.7, 8533)
    >>> demand(presets()["seed003-customer-service"]).output_tokens_per_s
    300000.0
    """
    w = workload
    seconds = w.seconds_per_request if seconds_per_request is None else _positive("seconds_per_request",
                                                                                  seconds_per_request)
    basis = w.basis
    qps = _arrival_rate(w)
    if qps is not None:
        qps *= w.growth
    conc: float | None
    if w.concurrency is not None:
        conc = w.concurrency * w.growth
    elif basis == "sessions":
        conc = w.dau * w.online_share * w.growth  # type: ignore[operator]
    else:
        conc = qps * seconds if (qps is not None and seconds is not None) else None
    if basis in ("concurrency", "sessions") and seconds is not None and conc is not None:
        qps = conc / seconds  # Little's law backwards: the stated concurrency sets the rate

    if qps is not None:
        inputs, outputs = qps * w.isl, qps * w.osl
    else:
        inputs = None
        outputs = conc * 1000.0 / w.itl_ms if (conc is not None and w.itl_ms) else None
    return Demand(peak_qps=qps, concurrency=conc, input_tokens_per_s=inputs, output_tokens_per_s=outputs,
                  prefill_tokens_per_s=None if inputs is None else inputs * (1 - w.cache_hit_rate),
                  seconds_per_request=seconds, growth=w.growth, basis=basis)


def _arrival_rate(w: Workload) -> float | None:
    """Peak requests per second implied by the user or rate inputs, before growth; ``None`` if none."""
    if w.requests_per_user_per_hour is not None:
        return w.dau * (w.online_share or 1.0) * w.requests_per_user_per_hour / _HOUR  # type: ignore[operator]
    if w.requests_per_user_per_day is not None:
        return w.dau * w.requests_per_user_per_day / _DAY * w.peak_to_average  # type: ignore[operator]
    if w.peak_requests_per_hour is not None:
        return w.peak_requests_per_hour / _HOUR
    return None
