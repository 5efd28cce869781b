"""Search: every GPU x precision x TP x replica count for a workload, priced and ranked.

For each GPU, weight precision and TP degree the memory fit is computed once (scalar,
:func:`~finops.sizing.memory.memory_fit`); the latency of every replica count is then evaluated in one
vectorized pass (:func:`~finops.sizing.queueing.operating_point`):

* a workload with a peak request rate sends ``lambda / R`` requests per second to each of ``R`` replicas;
* a workload stated as concurrency ``C`` runs ``C / R`` sequences per replica, whose request rate
  follows from Little's law with the closed-loop latency of the performance model.

A candidate is feasible when the queue is stable, the running batch fits the KV cache, and TTFT and
ITL meet the targets at the workload's percentile (P50: median TTFT and mean TPOT; P99: the queueing
tail of TTFT and the inter-token gap of a step that carries a prefill chunk). The smallest feasible
``R`` is the SLO-bound replica count; the deployment is seed 003's rule on top,
``ceil(ceil(required / per_replica) x (1 + spare)) + redundancy``
(:func:`~finops.sizing.demand.devices_needed`).

Prices come from the price book: GPU -> instance types (:mod:`finops.catalog.instances`) -> the
cheapest price under the chosen pricing model; a TP group stays inside one instance, and whole
instances are paid for (Cloud TPUs are priced per chip, so a slice is ``tp`` chips). Options rank
by monthly cost (730 hours) or by cost per million output tokens served at the peak. The two orders
agree for a workload stated as a request rate; for one stated as concurrency a faster configuration
serves more tokens from the same concurrency, so its cost per million can be lower at a higher monthly
cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any, Literal, get_args

import numpy as np

from ..catalog import accelerators, get_accelerator
from ..errors import InputError
from ..money import Money
from ..price_book import PRICING_MODELS, PriceBook, PriceRow
from .demand import demand, devices_needed
from .memory import PRECISIONS, memory_fit, tp_shards_heads
from .performance import (
    CALIBRATED_TPS,
    MAX_BATCH,
    Calibration,
    ReplicaPhysics,
    replica_latency,
    replica_physics,
    scheduling_delay,
)
from .queueing import operating_point, sla_attainment
from .support import supports
from .workload import Workload

__all__ = ["HOURS_PER_MONTH", "RANKINGS", "RankBy", "SearchResult", "SizingOption", "search"]

HOURS_PER_MONTH = 730
RankBy = Literal["monthly_cost", "cost_per_million"]
RANKINGS: tuple[str, ...] = get_args(RankBy)
DEFAULT_PRECISIONS: tuple[str, ...] = tuple(p for p in PRECISIONS if p != "fp32")
_GROWTH = 1.15           # geometric step of the replica grid beyond the first 32 counts
_GRID_STEPS = 60


@dataclass(frozen=True)
class SizingOption:
    """One priced configuration that meets the workload's SLOs."""

    gpu: str
    precision: str
    tp: int
    replicas_at_slo: int          # fewest replicas meeting the SLOs at the peak
    replicas: int                 # deployed: with spare and N+k redundancy
    gpus: int
    provider: str
    instance_type: str
    region: str
    instances: int
    pricing_model: str
    hourly_cost: Money
    monthly_cost: Money
    cost_per_million_output_tokens: Money
    ttft_p50_ms: float
    ttft_p99_ms: float
    tpot_ms: float
    itl_p99_ms: float
    ttft_sla_attainment: float | None   # modelled share of requests within the TTFT target (P_ok)
    running_batch: float
    max_concurrency: int
    weights_gib: float
    output_tokens_per_s: float    # peak demand served by the whole deployment
    calibrated: bool              # engine, GPU and precision were in the calibration data (else extrapolated)

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key in ("hourly_cost", "monthly_cost", "cost_per_million_output_tokens"):
            money: Money = out.pop(key)
            out[key] = money.amount
        out["currency"] = self.hourly_cost.currency
        return out


@dataclass(frozen=True)
class SearchResult:
    """Ranked options (cheapest first), or why there are none."""

    workload: str
    engine: str
    pricing_model: str
    rank_by: str
    options: list[SizingOption]
    infeasible_reason: str | None
    candidates: int               # configurations evaluated (GPU x precision x TP x replicas)
    unpriced: list[str] = field(default_factory=list)   # feasible GPUs without a price

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "engine": self.engine, "pricing_model": self.pricing_model,
                "rank_by": self.rank_by,
                "candidates": self.candidates, "infeasible_reason": self.infeasible_reason,
                "unpriced_gpus": self.unpriced, "options": [o.to_dict() for o in self.options]}


@dataclass
class _Combo:
    gpu: str
    precision: str
    tp: int
    max_concurrency: int
    weights_gib: float
    calibrated: bool
    replicas: np.ndarray
    start: int = 0

    @property
    def slices(self) -> slice:
        return slice(self.start, self.start + len(self.replicas))


def _replica_grid(lower: int) -> np.ndarray:
    """Replica counts from ``lower``: the next 32 one by one, then geometric steps of 15 %."""
    dense = lower + np.arange(32)
    sparse = np.ceil(dense[-1] * _GROWTH ** np.arange(1, _GRID_STEPS - 31)).astype(int)
    return np.unique(np.concatenate([dense, sparse]))


def _cheapest_rows(book: PriceBook, pricing_model: str) -> dict[tuple[str, str], PriceRow]:
    """The cheapest row per (provider, instance type) under ``pricing_model``, over regions and payments."""
    cheapest: dict[tuple[str, str], PriceRow] = {}
    for row in book:
        if row.pricing_model != pricing_model:
            continue
        key = (row.provider.lower(), row.instance_type.lower())
        held = cheapest.get(key)
        if held is None or (row.hourly_cost, row.region) < (held.hourly_cost, held.region):
            cheapest[key] = row
    return cheapest


def _price(gpu: str, tp: int, replicas: int, cheapest: dict[tuple[str, str], PriceRow]) -> tuple[PriceRow, int] | None:
    """Cheapest (price row, instance count) hosting ``replicas`` TP groups of ``tp`` GPUs."""
    from ..catalog.instances import instances_for_gpu  # part of the catalog, read only when pricing

    best: tuple[Decimal, PriceRow, int] | None = None
    for inst in instances_for_gpu(gpu):
        row = cheapest.get((inst.provider.lower(), inst.instance_type.lower()))
        if row is None:
            continue
        if inst.instance_type == inst.gpu_model:   # priced per chip (Cloud TPU): slices of any size
            count = replicas * tp
        elif inst.gpu_count >= tp:
            count = math.ceil(replicas / (inst.gpu_count // tp))
        else:
            continue
        cost = row.hourly_cost * count
        if best is None or (cost, row.instance_type) < (best[0], best[1].instance_type):
            best = (cost, row, count)
    return None if best is None else (best[1], best[2])


def search(workload: Workload, *, gpus: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
           tps: Sequence[int] | None = None, engine: str = "vllm", pricing_model: str = "on_demand",
           price_book: PriceBook | None = None, top: int = 10, calibration: Calibration | None = None,
           rank_by: RankBy = "monthly_cost", calibrated_only: bool = False) -> SearchResult:
    """Rank the configurations that serve ``workload`` within its SLOs, cheapest first.

    Only combinations the engine runs are candidates (:mod:`finops.sizing.support`); each option says
    whether its engine, GPU and precision were in the calibration data (``calibrated``), and
    ``calibrated_only`` keeps only those.

    >>> from finops.sizing.workload import presets
    >>> r = search(presets()["seed002-financial-copilot"], gpus=["h100-sxm"], price_book=PriceBook([]))
    >>> r.options, r.unpriced, r.candidates > 100
    ([], ['h100-sxm'], True)
    """
    if pricing_model not in PRICING_MODELS:
        raise InputError(f"unknown pricing model {pricing_model!r}", hint=f"use one of: {', '.join(PRICING_MODELS)}")
    if top < 1:
        raise InputError(f"top must be >= 1, got {top}")
    if rank_by not in RANKINGS:
        raise InputError(f"unknown ranking {rank_by!r}", hint=f"use one of: {', '.join(RANKINGS)}")
    cal = calibration or Calibration.bundled()
    constants = cal.constants(engine)
    model = workload.model_spec()
    gpu_ids = [get_accelerator(g).id for g in (gpus or workload.gpus or _all_gpus())]
    wanted_precisions = [p.lower() for p in (precisions or workload.precisions or DEFAULT_PRECISIONS)]
    for p in wanted_precisions:
        if p not in PRECISIONS:
            raise InputError(f"unknown precision {p!r}", hint=f"use one of: {', '.join(PRECISIONS)}")
    tp_list = [tp for tp in (tps or CALIBRATED_TPS) if tp_shards_heads(model, tp)]   # engines shard whole heads
    need = demand(workload)
    if need.peak_qps is None and need.concurrency is None:
        raise InputError(f"workload {workload.name!r} states no request rate or concurrency",
                         hint="give dau with requests per user, peak_requests_per_hour, or concurrency")

    combos: list[_Combo] = []
    skipped: list[str] = []                  # GPU x precision the engine does not run, or not calibrated
    memory_gaps: list[tuple[float, str]] = []
    physics: list[ReplicaPhysics] = []
    for gpu_id in gpu_ids:
        device = get_accelerator(gpu_id)
        for precision in wanted_precisions:
            if not device.supports(precision) or (precision == "fp16" and "bf16" in wanted_precisions):
                continue  # FP16 sizes and runs exactly like BF16: one of the two is enough
            calibrated = cal.covers(engine, gpu_id, precision)
            if not supports(engine, gpu_id, precision) or (calibrated_only and not calibrated):
                skipped.append(f"{gpu_id} {precision}")
                continue
            for tp in tp_list:
                fit = memory_fit(model, device, precision=precision, tp=tp, isl=workload.isl, osl=workload.osl,
                                 kv_precision=workload.kv_precision)
                if not fit.fits:
                    memory_gaps.append((fit.shortfall_gib, f"{gpu_id} {precision} TP{tp}"))
                    continue
                physics.append(replica_physics(model, device, precision=precision, tp=tp,
                                               kv_precision=workload.kv_precision))
                combos.append(_Combo(gpu_id, precision, tp, fit.max_concurrency, fit.weights_gib, calibrated,
                                     np.empty(0, dtype=int)))

    if not combos:
        return SearchResult(workload.name, engine, pricing_model, rank_by, [],
                            _memory_advice(memory_gaps, model.id, engine, skipped, calibrated_only),
                            candidates=len(memory_gaps))
    stacked = _stack(physics)
    limits = np.minimum([c.max_concurrency for c in combos], MAX_BATCH).astype(float)
    start = 0
    for combo, lower in zip(combos, _lower_bounds(need, stacked, constants, workload, limits)):
        combo.replicas, combo.start = _replica_grid(int(lower)), start
        start += len(combo.replicas)
    flat = _evaluate(combos, stacked, limits, constants, workload, need)
    candidates = int(flat["replicas"].size) + len(memory_gaps)

    options: list[SizingOption] = []
    unpriced: set[str] = set()
    cheapest = _cheapest_rows(price_book if price_book is not None else PriceBook.current(), pricing_model)
    best_miss: tuple[float, str] | None = None
    for combo in combos:
        ok = flat["ok"][combo.slices]
        if not ok.any():
            miss = flat["miss"][combo.slices]
            worst = float(miss.min())
            if best_miss is None or worst < best_miss[0]:
                best_miss = (worst, f"{combo.gpu} {combo.precision} TP{combo.tp}")
            continue
        i = combo.slices.start + int(np.argmax(ok))
        option = _priced_option(combo, i, flat, workload, cheapest, pricing_model)
        if option is None:
            unpriced.add(combo.gpu)
        else:
            options.append(option)
    first = "monthly_cost" if rank_by == "monthly_cost" else "cost_per_million_output_tokens"
    options.sort(key=lambda o: (getattr(o, first).amount, o.gpus, o.gpu, o.precision, o.tp))
    reason = None
    if not options:
        reason = _slo_advice(workload, best_miss, unpriced, pricing_model)
    return SearchResult(workload.name, engine, pricing_model, rank_by, options[:top], reason, candidates,
                        sorted(unpriced))


def _all_gpus() -> list[str]:
    return list(accelerators())


def _stack(physics: list[ReplicaPhysics]) -> ReplicaPhysics:
    return ReplicaPhysics(**{f.name: np.array([getattr(p, f.name) for p in physics], dtype=float)
                             for f in fields(ReplicaPhysics)})


def _lower_bounds(need: Any, phys: ReplicaPhysics, constants: Any, workload: Workload, limits: np.ndarray) -> Any:
    """Replicas needed at the very least: demand over one replica's maximum throughput (memory-bound batch)."""
    if need.peak_qps is None:
        return np.maximum(1, np.floor(need.concurrency / limits))
    lat = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl, batch=limits,
                          cache_hit_rate=workload.cache_hit_rate)
    cycle = lat.ttft + (workload.osl - 1) * lat.tpot
    return np.maximum(1, np.floor(need.peak_qps * cycle / limits))


def _evaluate(combos: list[_Combo], stacked: ReplicaPhysics, limits: np.ndarray, constants: Any,
              workload: Workload, need: Any) -> dict[str, Any]:
    """One vectorized pass over every (combo, replica count)."""
    counts = [len(c.replicas) for c in combos]
    phys = ReplicaPhysics(**{f.name: np.repeat(getattr(stacked, f.name), counts) for f in fields(ReplicaPhysics)})
    limit = np.repeat(limits, counts)
    replicas = np.concatenate([c.replicas for c in combos]).astype(float)
    if need.peak_qps is not None:
        rate = need.peak_qps / replicas
    else:
        batch = need.concurrency / replicas
        closed = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl,
                                 batch=np.maximum(batch, 1.0), cache_hit_rate=workload.cache_hit_rate)
        rate = batch / (closed.ttft + (workload.osl - 1) * closed.tpot)
    op = operating_point(phys, constants, arrival_rate=rate, isl=workload.isl, osl=workload.osl,
                         cache_hit_rate=workload.cache_hit_rate, max_batch=limit)
    p99 = workload.slo_percentile == "p99"
    ttft = op.ttft_p99_s if p99 else op.ttft_p50_s
    itl = op.itl_p99_s if p99 else op.tpot_s
    ratios = [np.where(op.stable, 1.0, np.inf)]
    if workload.ttft_ms:
        ratios.append(ttft * 1e3 / workload.ttft_ms)
    if workload.itl_ms:
        ratios.append(itl * 1e3 / workload.itl_ms)
    miss = np.max(np.vstack(ratios), axis=0)     # <= 1 meets every target; how far off otherwise
    attainment = None
    if workload.ttft_ms:
        lat = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl,
                              batch=np.maximum(op.running_batch, 1.0), cache_hit_rate=workload.cache_hit_rate)
        attainment = sla_attainment(workload.ttft_ms / 1e3, base_s=lat.prefill + scheduling_delay(constants, lat.step),
                                    utilization=op.utilization, wait_mean_s=op.wait_mean_s)
    return {"replicas": replicas, "ok": miss <= 1.0, "miss": miss, "op": op, "rate": rate, "p_ok": attainment}


def _priced_option(combo: _Combo, i: int, flat: dict[str, Any], workload: Workload,
                   cheapest: dict[tuple[str, str], PriceRow], pricing_model: str) -> SizingOption | None:
    op = flat["op"]
    at_slo = int(flat["replicas"][i])
    out_tps = float(flat["rate"][i]) * workload.osl * at_slo
    deployed = devices_needed(out_tps, out_tps / at_slo, workload.spare, workload.redundancy)
    priced = _price(combo.gpu, combo.tp, deployed, cheapest)
    if priced is None:
        return None
    row, count = priced
    hourly = Money(row.hourly_cost * count, row.currency)
    million_per_hour = Decimal(repr(out_tps * 3600 / 1e6))
    return SizingOption(
        gpu=combo.gpu, precision=combo.precision, tp=combo.tp, replicas_at_slo=at_slo, replicas=deployed,
        gpus=deployed * combo.tp, provider=row.provider, instance_type=row.instance_type, region=row.region,
        instances=count, pricing_model=pricing_model, hourly_cost=hourly, monthly_cost=hourly * HOURS_PER_MONTH,
        cost_per_million_output_tokens=hourly / million_per_hour,
        ttft_p50_ms=float(op.ttft_p50_s[i]) * 1e3, ttft_p99_ms=float(op.ttft_p99_s[i]) * 1e3,
        tpot_ms=float(op.tpot_s[i]) * 1e3, itl_p99_ms=float(op.itl_p99_s[i]) * 1e3,
        ttft_sla_attainment=None if flat["p_ok"] is None else float(flat["p_ok"][i]),
        running_batch=float(op.running_batch[i]), max_concurrency=combo.max_concurrency,
        weights_gib=combo.weights_gib, output_tokens_per_s=out_tps, calibrated=combo.calibrated)


def _memory_advice(gaps: list[tuple[float, str]], model: str, engine: str, skipped: list[str],
                   calibrated_only: bool) -> str:
    if not gaps and skipped:
        what = "has calibration data for" if calibrated_only else "runs"
        listed = ", ".join(skipped[:6]) + (", ..." if len(skipped) > 6 else "")
        drop = ", or drop --calibrated-only (or measure your own: `finops calibrate`)" if calibrated_only else ""
        return f"{engine} {what} none of the GPU x precision combinations searched ({listed}); try another " \
               f"engine, GPU or precision{drop}"
    if not gaps:
        return "no GPU in the search supports the requested precisions; add a GPU or another precision"
    gap, where = min(gaps)
    return (f"{model} fits none of the configurations searched (closest: {where}, short {gap:.1f} GiB per GPU); "
            "needed: more TP, a lower precision (fp8, int8 or int4) or a larger GPU")


def _slo_advice(workload: Workload, best_miss: tuple[float, str] | None, unpriced: set[str],
                pricing_model: str) -> str:
    if best_miss is None:
        return (f"configurations meet the SLOs on {', '.join(sorted(unpriced))} but the price book has no "
                f"{pricing_model} price for them; pull prices (`finops prices pull`) or choose another pricing model")
    ratio, where = best_miss
    targets = []
    if workload.ttft_ms:
        targets.append(f"TTFT {workload.ttft_ms:g} ms")
    if workload.itl_ms:
        targets.append(f"ITL {workload.itl_ms:g} ms")
    if not math.isfinite(ratio):
        return (f"no configuration keeps up with the demand within the KV cache (closest: {where}); needed: more "
                "replicas than searched, more TP, a lower precision or a larger GPU")
    return (f"no configuration meets {' and '.join(targets)} at {workload.slo_percentile.upper()}; the closest "
            f"({where}) is {ratio:.2f}x over target; needed: more TP, a lower precision or a faster GPU, or a "
            "looser target")
