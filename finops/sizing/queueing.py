"""Latency under an arrival rate: the prefill queue, TTFT percentiles and SLA attainment.

A replica is treated as one prefill server (prompts are processed one after another, compute-bound)
fed by the request stream, with decoding running alongside under continuous batching.

* Mean queueing delay, **Kingman's G/G/1 approximation** (Allen-Cunneen form)::

      W_q = rho / (1 - rho) x (c_a^2 + c_s^2) / 2 x S

  ``S`` prefill time, ``rho = lambda x S``, ``c_a^2`` squared coefficient of variation of the
  inter-arrival times (1 for Poisson arrivals), ``c_s^2`` that of the prefill time (0 for a fixed ISL,
  which makes this the exact M/D/1 Pollaczek-Khinchine mean).
* Percentiles, the **exponential tail approximation** of the G/G/1 waiting time: a request waits at
  all with probability ``rho`` and then for an exponential time of mean ``W_q / rho``, so
  ``P(W > t) = rho x exp(-rho t / W_q)`` and the ``p``-quantile is
  ``(W_q / rho) x ln(rho / (1 - p))`` when ``rho > 1 - p``, else 0.
* TTFT = ``prefill + (a + d (b - 1) / b) x step + f + W`` (the scheduling and admission delay is
  :func:`~finops.sizing.performance.scheduling_delay`); SLA attainment ``P_ok = P(TTFT <= target)``
  (seed 003: ``P_ok = N_within / N_total``, usually required >= 99 % at P99).

The running batch follows from Little's law, ``b = lambda x (TTFT + (osl - 1) x TPOT(b))``, solved by
fixed-point iteration (vectorized, so the search evaluates many configurations at once): 40 iterations,
fewer only once every point stops changing to the last bit, so a configuration's figures do not depend
on which others are solved beside it (the search may solve them in any grouping). ``b`` is a
mean and may be below 1 (the replica idles between requests); latencies are those of a batch of
``max(b, 1)``, since a running request always has itself.

>>> round(kingman_wait(0.5, 0.1) * 1e3, 1)       # M/D/1 at rho 0.5: rho S / (2 (1 - rho)) = 50 ms
50.0
>>> float(ttft_percentile(0.99, base_s=0.2, utilization=0.0, wait_mean_s=0.0))
0.2
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..catalog import Accelerator, ModelSpec, get_accelerator, resolve_model
from ..errors import InputError
from .engine_constants import Calibration, EngineConstants
from .performance import (
    PromptTerms,
    ReplicaPhysics,
    decode_latency,
    estimate,
    prompt_terms,
    replica_latency,
    replica_physics,
    scheduling_delay,
)

__all__ = ["OperatingPoint", "ServicePoint", "closed_population", "kingman_wait", "operating_point", "serve",
           "sla_attainment", "sla_attainment_measured", "ttft_percentile"]

_ITERATIONS = 40
#: The fixed point's right-hand side is capped here: far past any engine's batch limit, so a runaway
#: (unstable) point stays finite and is reported unstable.
_RUNAWAY_BATCH = 1e5


def kingman_wait(utilization: Any, service_s: Any, ca2: Any = 1.0, cs2: Any = 0.0) -> Any:
    """Mean wait in queue, Kingman / Allen-Cunneen: ``rho/(1-rho) x (ca2+cs2)/2 x S``; inf when rho >= 1.

    >>> kingman_wait(0.9, 1.0, ca2=1.0, cs2=1.0)     # M/M/1: rho S / (1 - rho)
    9.000000000000002
    """
    rho = np.asarray(utilization, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = np.where(rho < 1.0, rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * service_s, np.inf)
    return wait if wait.ndim else float(wait)


def ttft_percentile(p: float, *, base_s: Any, utilization: Any, wait_mean_s: Any) -> Any:
    """TTFT at quantile ``p``: ``base + (W_q / rho) ln(rho / (1 - p))`` when ``rho > 1 - p``, else ``base``.

    >>> round(float(ttft_percentile(0.99, base_s=0.1, utilization=0.5, wait_mean_s=0.05)), 4)
    0.4912
    """
    if not 0.0 < p < 1.0:
        raise InputError(f"percentile must be between 0 and 1, got {p}")
    rho = np.asarray(utilization, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = np.where(rho > 1.0 - p, wait_mean_s / np.maximum(rho, 1e-12) * np.log(rho / (1.0 - p)), 0.0)
    return np.where(rho < 1.0, base_s + tail, np.inf)


def sla_attainment(target_s: Any, *, base_s: Any, utilization: Any, wait_mean_s: Any) -> Any:
    """Modelled share of requests whose TTFT is within ``target_s``: ``1 - rho exp(-rho (T - base) / W_q)``.

    >>> round(float(sla_attainment(0.4912, base_s=0.1, utilization=0.5, wait_mean_s=0.05)), 3)
    0.99
    """
    rho = np.asarray(utilization, dtype=float)
    slack = np.asarray(target_s, dtype=float) - base_s
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        waiting = np.where(np.asarray(wait_mean_s) > 0, rho * np.exp(-rho * slack / np.maximum(wait_mean_s, 1e-300)),
                           0.0)
    return np.where(rho >= 1.0, 0.0, np.where(slack < 0, 0.0, 1.0 - waiting))


def sla_attainment_measured(latencies_ms: Sequence[float], target_ms: float) -> float:
    """Seed 003's ``P_ok = N_within / N_total`` over measured latencies.

    >>> sla_attainment_measured([80, 120, 95, 300], 150)
    0.75
    """
    if not latencies_ms:
        raise InputError("no latencies to measure SLA attainment on")
    values = np.asarray(latencies_ms, dtype=float)
    return float(np.mean(values <= target_ms))


@dataclass(frozen=True)
class OperatingPoint:
    """Steady state of a replica at an arrival rate (fields are numpy arrays when inputs are)."""

    stable: Any                  # the queue settles and the running batch stays within the limits
    running_batch: Any
    utilization: Any             # of the prefill server
    wait_mean_s: Any
    ttft_p50_s: Any
    ttft_p99_s: Any
    tpot_s: Any
    itl_p99_s: Any               # a token that shares its step with a prefill chunk


def operating_point(physics: ReplicaPhysics, constants: EngineConstants, *, arrival_rate: Any, isl: Any, osl: Any,
                    cache_hit_rate: Any = 0.0, max_batch: Any = np.inf, ca2: float = 1.0,
                    cs2: float = 0.0, floor: bool = False, terms: PromptTerms | None = None) -> OperatingPoint:
    """Solve ``b = lambda x (TTFT + (osl - 1) TPOT(b))`` and report TTFT P50/P99, TPOT and ITL P99.

    ``max_batch`` is the batch limit (sequences the KV cache holds and the engine's scheduler runs);
    beyond it, or with ``rho >= 1``, the point is unstable (the queue grows without bound). A decode
    step shares its slot with at most the physics' ``prefill_token_budget`` prompt tokens (chunked
    prefill), which bounds the slowest inter-token gap, ITL P99.

    ``floor=True`` skips the fixed point and reports floors instead: the right-hand side ``F(b)`` is
    evaluated at ``max(b, 1)`` and grows with it, so every iterate is at least ``F(1)``; TTFT, TPOT and
    ITL grow with the batch, so at ``F(1)`` they are at most the solved ones, and ``stable`` is False
    only where the solved point is surely unstable (``rho >= 1`` or ``F(1) > max_batch``). A search uses
    it to rule out replica counts without solving them. ``terms``: the physics' :func:`prompt_terms`, when
    the caller has them.

    >>> from finops.catalog import get_model, get_accelerator
    >>> from finops.sizing.performance import Calibration, replica_physics
    >>> phys = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    >>> c, rates = Calibration.bundled().constants("vllm"), np.array([1.0, 5.0])
    >>> op = operating_point(phys, c, arrival_rate=rates, isl=1024, osl=256)
    >>> op.stable.tolist(), bool(op.ttft_p99_s[1] > op.ttft_p50_s[1] >= op.ttft_p50_s[0])
    ([True, True], True)
    >>> low = operating_point(phys, c, arrival_rate=rates, isl=1024, osl=256, floor=True)
    >>> bool((low.ttft_p99_s <= op.ttft_p99_s).all() and (low.itl_p99_s <= op.itl_p99_s).all())
    True
    """
    lam = np.asarray(arrival_rate, dtype=float)
    if (lam < 0).any():
        raise InputError("arrival rate must be >= 0")
    osl_f = np.asarray(osl, dtype=float)
    terms = terms or prompt_terms(physics, constants, isl=isl, osl=osl, cache_hit_rate=cache_hit_rate)
    first = replica_latency(physics, constants, isl=isl, osl=osl, batch=1.0, cache_hit_rate=cache_hit_rate,
                            terms=terms)
    service = first.prefill
    rho = lam * service
    wait = kingman_wait(rho, service, ca2, cs2)

    def update(batch: Any) -> Any:      # the right-hand side F(b), capped
        running = np.maximum(batch, 1.0)
        step, _, tpot = decode_latency(physics, terms, running)
        cycle = service + scheduling_delay(constants, step, running, osl_f) + wait + (osl_f - 1.0) * tpot
        return np.minimum(lam * cycle, _RUNAWAY_BATCH)

    with np.errstate(invalid="ignore"):
        if floor:
            batch = update(np.ones_like(lam))
        else:
            batch = lam * (first.ttft + (osl_f - 1.0) * first.tpot)
            for _ in range(_ITERATIONS):
                previous, batch = batch, update(batch)
                if not (batch != previous).any():
                    break   # every point is a fixed point to the last bit: more iterations would change nothing
    step, _, tpot = decode_latency(physics, terms, np.maximum(batch, 1.0))
    base = service + scheduling_delay(constants, step, np.maximum(batch, 1.0), osl_f)
    if floor:
        stable = (rho < 1.0) & (batch <= max_batch)
    else:
        settled = np.isclose(batch, lam * (base + wait + (osl_f - 1.0) * tpot), rtol=1e-3)
        stable = (rho < 1.0) & settled & (batch <= max_batch)
    chunk = np.minimum(1.0, physics.prefill_token_budget / np.maximum(np.asarray(isl, dtype=float), 1.0))
    itl_p99 = np.where(lam * step >= 0.01, step + terms.prefill_compute * chunk, tpot)
    return OperatingPoint(stable=stable, running_batch=batch, utilization=rho, wait_mean_s=wait,
                          ttft_p50_s=ttft_percentile(0.5, base_s=base, utilization=rho, wait_mean_s=wait),
                          ttft_p99_s=ttft_percentile(0.99, base_s=base, utilization=rho, wait_mean_s=wait),
                          tpot_s=tpot, itl_p99_s=np.maximum(itl_p99, tpot))


def closed_population(physics: ReplicaPhysics, constants: EngineConstants, *, clients: Any, isl: Any, osl: Any,
                      cache_hit_rate: Any = 0.0, max_batch: Any = np.inf,
                      terms: PromptTerms | None = None) -> tuple[OperatingPoint, Any]:
    """A replica serving a closed population of ``clients``, each with one request in flight and sending
    the next when it completes (a workload stated as concurrency): the steady state, and the request rate
    it completes.

    A closed population never runs a batch larger than itself: the running batch is ``max(clients, 1)``
    (a request always has itself), and the replica is stable while it fits ``max_batch``. TTFT is the
    closed loop's (:func:`~finops.sizing.performance.replica_latency`: the prompt's prefill, the
    Schweitzer-Bard wait behind at most ``clients - 1`` other prompts, scheduling), the request rate
    ``clients / (TTFT + (osl - 1) TPOT)`` (Little's law). The TTFT tail is the exponential one of
    :func:`ttft_percentile` on the prefill server's utilization and the loop's mean wait, capped where
    every other client's prompt is ahead (``(clients - 1) x prefill``): no more can be.

    >>> from finops.catalog import get_model, get_accelerator
    >>> from finops.sizing.performance import Calibration, replica_physics
    >>> phys = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    >>> op, rate = closed_population(phys, Calibration.bundled().constants("vllm"), clients=np.array([0.5, 40.0]),
    ...                              isl=1024, osl=256, max_batch=256)
    >>> op.running_batch.tolist(), bool(rate[1] > rate[0]), op.stable.tolist()
    ([1.0, 40.0], True, [True, True])
    """
    batch = np.maximum(np.asarray(clients, dtype=float), 1.0)
    terms = terms or prompt_terms(physics, constants, isl=isl, osl=osl, cache_hit_rate=cache_hit_rate)
    lat = replica_latency(physics, constants, isl=isl, osl=osl, batch=batch, cache_hit_rate=cache_hit_rate,
                          terms=terms)
    osl_f = np.asarray(osl, dtype=float)
    rate = np.asarray(clients, dtype=float) / (lat.ttft + (osl_f - 1.0) * lat.tpot)
    base = lat.unqueued_ttft
    wait = np.maximum(lat.ttft - base, 0.0)
    rho = np.minimum(rate * terms.prefill, 1.0 - 1e-9)
    worst = base + (batch - 1.0) * lat.prefill_compute
    chunk = np.minimum(1.0, physics.prefill_token_budget / np.maximum(np.asarray(isl, dtype=float), 1.0))
    itl_p99 = np.where(rate * lat.step >= 0.01, lat.step + terms.prefill_compute * chunk, lat.tpot)
    op = OperatingPoint(stable=batch <= max_batch, running_batch=batch, utilization=rho, wait_mean_s=wait,
                        ttft_p50_s=lat.ttft,
                        ttft_p99_s=np.maximum(np.minimum(ttft_percentile(0.99, base_s=base, utilization=rho,
                                                                         wait_mean_s=wait), worst), lat.ttft),
                        tpot_s=lat.tpot, itl_p99_s=np.maximum(itl_p99, lat.tpot))
    return op, rate


@dataclass(frozen=True)
class ServicePoint:
    """One replica under a Poisson arrival rate (the JSON of ``finops estimate --arrival-rate``)."""

    arrival_rate: float
    stable: bool
    running_batch: float
    utilization: float
    queue_wait_ms: float
    ttft_p50_ms: float
    ttft_p99_ms: float
    tpot_ms: float
    itl_p99_ms: float
    output_tokens_per_s: float
    ttft_target_ms: float | None
    sla_attainment: float | None     # modelled share of requests with TTFT within the target

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON; an unstable replica's infinite waits become ``None`` (JSON has no infinity).

        >>> p = serve("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1024, osl=256, arrival_rate=1000.0)
        >>> p.stable, p.ttft_p99_ms, p.to_dict()["ttft_p99_ms"]
        (False, inf, None)
        """
        values = {k: getattr(self, k) for k in self.__dataclass_fields__}
        return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in values.items()}


def serve(model: str | ModelSpec, gpu: str | Accelerator, *, precision: str, tp: int, isl: int, osl: int,
          arrival_rate: float, engine: str = "vllm", cache_hit_rate: float = 0.0, kv_precision: str | None = None,
          ttft_target_ms: float | None = None, calibration: Calibration | None = None,
          context_length: int | None = None) -> ServicePoint:
    """Queueing delay, TTFT P50/P99, ITL and SLA attainment of one replica at ``arrival_rate`` requests/s
    (``context_length`` as :func:`~finops.sizing.performance.estimate` takes it).

    >>> p = serve("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256, arrival_rate=4.0,
    ...           ttft_target_ms=500)
    >>> p.stable, p.ttft_p99_ms >= p.ttft_p50_ms, 0.9 < p.sla_attainment <= 1.0
    (True, True, True)
    """
    if isinstance(arrival_rate, bool) or not arrival_rate > 0:
        raise InputError(f"arrival rate must be > 0 requests per second, got {arrival_rate!r}")
    if ttft_target_ms is not None and not ttft_target_ms > 0:
        raise InputError(f"TTFT target must be > 0 ms, got {ttft_target_ms!r}")
    base = estimate(model, gpu, precision=precision, tp=tp, isl=isl, osl=osl, concurrency=1, engine=engine,
                    cache_hit_rate=cache_hit_rate, kv_precision=kv_precision, calibration=calibration,
                    context_length=context_length)
    if not base.fits:
        raise InputError(f"{base.model} does not fit {tp}x {base.gpu} at {precision} (short "
                         f"{base.shortfall_gib:.1f} GiB per GPU)", hint="more TP, a lower precision or a larger GPU")
    constants = (calibration or Calibration.bundled()).constants(base.engine)
    phys = replica_physics(resolve_model(model) if isinstance(model, str) else model,
                           get_accelerator(gpu) if isinstance(gpu, str) else gpu, precision=base.precision, tp=tp,
                           kv_precision=base.kv_precision, prefill_token_budget=base.prefill_token_budget,
                           engine=base.engine)
    op = operating_point(phys, constants, arrival_rate=float(arrival_rate), isl=isl, osl=osl,
                         cache_hit_rate=cache_hit_rate, max_batch=min(base.max_concurrency, base.max_batch))
    stable = bool(op.stable)
    attainment = None
    if ttft_target_ms is not None and not stable:
        attainment = 0.0
    elif ttft_target_ms is not None:
        running = max(float(op.running_batch), 1.0)
        lat = replica_latency(phys, constants, isl=isl, osl=osl, batch=running, cache_hit_rate=cache_hit_rate)
        attainment = float(sla_attainment(ttft_target_ms / 1e3, base_s=lat.unqueued_ttft, utilization=op.utilization,
                                          wait_mean_s=op.wait_mean_s))
    return ServicePoint(arrival_rate=float(arrival_rate), stable=stable, running_batch=float(op.running_batch),
                        utilization=float(op.utilization), queue_wait_ms=float(op.wait_mean_s) * 1e3,
                        ttft_p50_ms=float(op.ttft_p50_s) * 1e3, ttft_p99_ms=float(op.ttft_p99_s) * 1e3,
                        tpot_ms=float(op.tpot_s) * 1e3, itl_p99_ms=float(op.itl_p99_s) * 1e3,
                        output_tokens_per_s=float(arrival_rate) * osl if stable else 0.0,
                        ttft_target_ms=ttft_target_ms, sla_attainment=attainment)
