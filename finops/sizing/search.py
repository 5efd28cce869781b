"""Search: every GPU x precision x TP x replica count for a workload, priced and ranked.

The GPU x precision x TP table of the model comes from :func:`~finops.sizing.candidates.candidate_table`
(built once per model and constraints); its memory fit for the request size is one vectorized step.
Each configuration that fits gets a grid of 60 replica counts from a throughput lower bound, and its
counts go through the queueing model (:func:`~finops.sizing.queueing.operating_point`) in order until
one meets the SLOs:

* a workload with a peak request rate sends ``lambda / R`` requests per second to each of ``R`` replicas,
  an open Poisson stream (:func:`~finops.sizing.queueing.operating_point`);
* a workload stated as concurrency ``C`` is a closed population of ``C / R`` clients per replica, each
  with one request in flight: the running batch is ``max(C / R, 1)``, never more, and the request rate
  follows from Little's law with the closed-loop latency (:func:`~finops.sizing.queueing.closed_population`).

Clients run out of step (:data:`SIZING_CLIENT`, docs/sizing.md "Load"). A candidate is feasible when the
queue is stable, the running batch fits the KV cache, and TTFT and ITL meet the targets at the workload's
percentile (P50: median TTFT and mean TPOT; P99: the queueing tail of TTFT and the inter-token gap of a
step that carries a prefill chunk), each judged at the search's confidence in its row's own error band
(:mod:`finops.sizing.confidence`: latencies times the band's ratio, an arrival rate times the inverse of
its throughput ratio). The smallest feasible
``R`` is the SLO-bound replica count; the deployment is seed 003's rule on top,
``ceil(ceil(required / per_replica) x (1 + spare)) + redundancy``
(:func:`~finops.sizing.demand.devices_needed`), priced and ranked by :mod:`finops.sizing.ranking`.
Options rank by monthly cost (730 hours) or by cost per million output tokens served at the peak. The
two orders agree for a workload stated as a request rate; for one stated as concurrency a faster
configuration serves more tokens from the same concurrency, so its cost per million can be lower at a
higher monthly cost.

Most candidates are settled without being solved, and the result is exactly what solving every one
gives (``tests/sizing/test_search_shortcuts.py``): a point's figures do not depend on what is solved
beside it, configurations whose idle latency misses a target are left out, counts whose queueing
floors miss a target are skipped, and, ranking by monthly cost, configurations that cannot reach the
top ranks are dropped (:class:`~finops.sizing.ranking.Ranking`). ``SearchResult.candidates`` counts the
whole grid, ``evaluated`` the points solved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

import numpy as np

from ..catalog import accelerators, get_accelerator
from ..errors import InputError
from ..money import Money
from ..price_book import PRICING_MODELS, PriceBook
from .candidates import candidate_table
from .confidence import DEFAULT_CONFIDENCE, Pessimism, check_confidence, pessimism
from .demand import demand, devices_needed
from .engine_constants import CALIBRATED_TPS, Calibration
from .managed import ApiOption, api_options
from .memory import PRECISIONS, check_context, tp_shards_heads
from .performance import ReplicaPhysics, prompt_terms, replica_latency, with_client
from .queueing import closed_population, operating_point, sla_attainment
from .ranking import HOURS_PER_MONTH, Quote, Ranking, per_million, per_million_at_average, price_index
from .workload import Workload

__all__ = ["HOURS_PER_MONTH", "RANKINGS", "SIZING_CLIENT", "RankBy", "SearchResult", "SizingOption", "search"]

RankBy = Literal["monthly_cost", "cost_per_million"]
RANKINGS: tuple[str, ...] = get_args(RankBy)
DEFAULT_PRECISIONS: tuple[str, ...] = tuple(p for p in PRECISIONS if p != "fp32")
#: How the clients of a sized service run (finops.sizing.performance.CLIENTS): out of step, the steady state
#: of a service whose users arrive independently; no synchronized wave and no admission wait, which are
#: artefacts of load-test campaigns whose clients all start together (docs/sizing.md, "Load").
SIZING_CLIENT = "staggered"
_GROWTH = 1.15           # geometric step of the replica grid beyond the first 32 counts
_GRID_STEPS = 60


@dataclass(frozen=True)
class SizingOption:
    """One priced configuration that meets the workload's SLOs."""

    gpu: str
    precision: str
    tp: int
    replicas_at_slo: int          # fewest replicas meeting the SLOs at the peak
    replicas: int                 # deployed: with spare and N+k redundancy (whole TP groups)
    gpus: int                     # accelerators used: replicas x tp
    provider: str
    instance_type: str
    region: str
    instances: int                # whole instances (a TP group never straddles two)
    accelerators_per_instance: int
    gpus_paid: int                # instances x accelerators per instance: gpus_paid - gpus sit idle
    pricing_model: str
    hourly_cost: Money
    monthly_cost: Money
    cost_per_million_output_tokens: Money           # at the peak load, running 24/7
    peak_to_average: float                          # the workload's peak over average load
    cost_per_million_output_tokens_average: Money   # at the average load, the fleet fixed at its peak size
    ttft_p50_ms: float
    ttft_p99_ms: float
    tpot_ms: float
    itl_p99_ms: float
    ttft_sla_attainment: float | None   # modelled share of requests within the TTFT target (P_ok)
    running_batch: float
    max_concurrency: int
    weights_gib_per_gpu: float
    output_tokens_per_s: float    # peak demand served by the whole deployment
    calibrated: bool              # engine, GPU, precision, model class and TP were measured (else extrapolated)
    efficiency_source: str        # "engine" (eta_bw, eta_c fitted on the calibration rows), a family fit
    #                               ("amd-cdna3:vllm") or "none"
    # held-out ratio measured / modelled at P10 and P90 of TTFT, TPOT and output tokens/s, for this option's
    # class (engine, model class, TP, reach, vendor: Calibration.band); None without a band
    ttft_band_ratio: tuple[float, float] | None = None
    tpot_band_ratio: tuple[float, float] | None = None
    throughput_band_ratio: tuple[float, float] | None = None
    extrapolation: str = "measured"   # how far the estimate reaches: measured, fitted, carried, kernels, unmeasured
    confidence: float | None = None   # the quantile of its class's held-out error it was sized at (None: none)
    ttft_sized_ms: float | None = None   # TTFT and ITL at the SLO percentile as sized: at the confidence's end
    itl_sized_ms: float | None = None    # of the band, and (arrival rates) at the load that end implies
    # accelerators deployed were the model at the optimistic (P10) or pessimistic (P90) end of its band
    # (None: no replica count searched meets the targets there)
    gpus_band: tuple[int | None, int | None] | None = None
    # which measurements answer the option (Calibration.evidence, its range judged at the option's running batch)
    evidence: dict[str, Any] | None = None
    # the workload's isl + osl run past the model's native context, served on its extended context_length
    # (RoPE scaling; finops.sizing.memory.check_context): the figures hold, the model's answers that far out are
    # the operator's to check
    beyond_native_context: bool = False

    def at_p90(self, metric: str, value_ms: float) -> float | None:
        """A TTFT (``metric="ttft"``) or TPOT/ITL (``"tpot"``) figure of this option as a load test would
        show it were the model as optimistic as its 90th-percentile held-out error: ``value x P90 ratio``
        (``None`` without a band)."""
        ratio = {"ttft": self.ttft_band_ratio, "tpot": self.tpot_band_ratio}[metric]
        return None if ratio is None else value_ms * ratio[1]

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key in ("hourly_cost", "monthly_cost", "cost_per_million_output_tokens",
                    "cost_per_million_output_tokens_average"):
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
    candidates: int               # configurations searched (GPU x precision x TP x replicas)
    unpriced: list[str] = field(default_factory=list)   # feasible GPUs without a price
    evaluated: int = 0            # of the candidates, those that went through the queueing model (the rest
                                  # were settled without it: a smaller count already met the SLOs, or bounds)
    # the managed APIs serving the model, priced per token, with the volume above which the cheapest fleet wins
    managed: list[ApiOption] = field(default_factory=list)
    confidence: float | None = None   # the quantile of each option's class's held-out error it was sized at

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "engine": self.engine, "pricing_model": self.pricing_model,
                "rank_by": self.rank_by, "confidence": self.confidence,
                "candidates": self.candidates, "evaluated": self.evaluated,
                "infeasible_reason": self.infeasible_reason,
                "unpriced_gpus": self.unpriced, "options": [o.to_dict() for o in self.options],
                "managed_apis": [m.to_dict() for m in self.managed]}


#: Replica counts per row in each pass over the grid: a configuration leaves the search at its first
#: feasible count, so most are settled by the first few and only the rest go on.
_PASS_WIDTHS: tuple[int, ...] = (4, 12, _GRID_STEPS)
#: Points that cost about as much as one more pass (40 fixed-point iterations of ~25 array operations):
#: when the rest of the grid is smaller, it is evaluated at once.
_ONE_PASS = 3000


def _replica_grids(lower: np.ndarray) -> np.ndarray:
    """Replica counts per row from ``lower``: the next 32 one by one, then 28 geometric steps of 15 %.

    >>> _replica_grids(np.array([1.0]))[0, [0, 31, 32, 59]].tolist()
    [1, 32, 37, 1603]
    """
    dense = lower.astype(int)[:, None] + np.arange(32)
    sparse = np.ceil(dense[:, -1:] * _GROWTH ** np.arange(1, _GRID_STEPS - 31)).astype(int)
    return np.hstack([dense, sparse])   # increasing: 15 % of 32 or more is at least 4.8


def search(workload: Workload, *, gpus: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
           tps: Sequence[int] | None = None, engine: str = "vllm", pricing_model: str = "on_demand",
           price_book: PriceBook | None = None, top: int = 10, calibration: Calibration | None = None,
           rank_by: RankBy = "monthly_cost", calibrated_only: bool = False,
           confidence: float | None = DEFAULT_CONFIDENCE) -> SearchResult:
    """Rank the configurations that serve ``workload`` within its SLOs, cheapest first.

    Only combinations the engine runs are candidates (:mod:`finops.sizing.support`); each option says
    whether its engine, GPU and precision were in the calibration data (``calibrated``), and
    ``calibrated_only`` keeps only those; ``confidence`` sizes every configuration at that quantile of its
    own class's held-out error (:mod:`finops.sizing.confidence`; 0.9, the default, is the pessimistic end of
    its P10-P90 band; ``None`` the model's own figures). The options report the model's own latencies at the
    workload's load, the latencies they were sized at, and the accelerators they would deploy at either end
    of their band (``gpus_band``). The GPU x precision x TP table comes from
    :func:`~finops.sizing.candidates.candidate_table` (cached per model and constraints).

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
    constants = with_client(cal.constants(engine), SIZING_CLIENT)
    gpu_ids = [get_accelerator(g).id for g in (gpus or workload.gpus or _all_gpus())]
    if confidence is not None:
        confidence = check_confidence(confidence)
    model = workload.model_spec()
    wanted_precisions = [p.lower() for p in (precisions or workload.precisions or DEFAULT_PRECISIONS)]
    for p in wanted_precisions:
        if p not in PRECISIONS:
            raise InputError(f"unknown precision {p!r}", hint=f"use one of: {', '.join(PRECISIONS)}")
    tp_list = [tp for tp in (tps or CALIBRATED_TPS) if tp_shards_heads(model, tp)]   # engines shard whole heads
    need = demand(workload)
    if need.peak_qps is None and need.concurrency is None:
        raise InputError(f"workload {workload.name!r} states no request rate or concurrency",
                         hint="give dau with requests per user, peak_requests_per_hour, or concurrency")

    table = candidate_table(model, gpu_ids, wanted_precisions, tp_list, engine, cal,
                            calibrated_only=calibrated_only, kv_precision=workload.kv_precision)
    slots, shortfall = (table.fit(workload.isl, workload.osl, workload.context_length) if len(table)
                        else (np.zeros(0), np.zeros(0)))
    memory_gaps = [(float(shortfall[i]), table.label(i)) for i in np.flatnonzero(slots < 1)]
    rows = np.flatnonzero(slots >= 1)
    if rows.size == 0:
        return SearchResult(workload.name, engine, pricing_model, rank_by, [],
                            _memory_advice(memory_gaps, model.id, engine, list(table.skipped), calibrated_only),
                            candidates=len(memory_gaps), confidence=confidence)
    phys = table.physics_of(rows)
    limits = np.minimum(slots[rows], table.max_batch[rows]).astype(float)
    sized = pessimism(table, cal, engine, confidence).at(rows)
    grid = _replica_grids(_lower_bounds(need, phys, constants, workload, limits, sized))
    prices = price_index(price_book if price_book is not None else PriceBook.current(), pricing_model)
    ranking = Ranking(table, rows, grid, workload, prices, top, by_month=rank_by == "monthly_cost")
    picks, evaluated = _first_feasible(grid, phys, limits, constants, workload, need, sized, ranking)
    unpriced = ranking.settle(picks)
    best = ranking.best()
    ends = _fleet_ends(best, table, rows, phys, limits, constants, workload, need, cal, engine)
    served = _as_served(best, table, constants, workload, need) if best else (None, None)
    beyond = bool(best) and check_context(model, workload.isl, workload.osl, workload.context_length)
    options = [_option(table, q, n, served, int(slots[q.row]), pricing_model, workload.peak_to_average, confidence,
                       end, beyond) for n, (q, end) in enumerate(zip(best, ends))]
    reason = None
    if not options:
        closest, more = _closest_miss(table, rows, picks, grid, phys, limits, constants, workload, need, sized)
        reason, evaluated = _slo_advice(workload, closest, unpriced, pricing_model), evaluated + more
    cheapest = min(options, key=lambda o: o.monthly_cost.amount, default=None)
    managed = api_options(workload, fleet_monthly=None if cheapest is None else cheapest.monthly_cost,
                          peak_output_tokens_per_s=None if cheapest is None else cheapest.output_tokens_per_s)
    return SearchResult(workload.name, engine, pricing_model, rank_by, options, reason,
                        int(grid.size) + len(memory_gaps), sorted(unpriced), evaluated, managed, confidence)


def _all_gpus() -> list[str]:
    return list(accelerators())


def _lower_bounds(need: Any, phys: ReplicaPhysics, constants: Any, workload: Workload, limits: np.ndarray,
                  sized: Pessimism) -> Any:
    """Replicas needed at the very least: demand (at the sized load) over one replica's maximum throughput
    (memory-bound batch)."""
    if _closed(need):
        return np.maximum(1, np.floor(need.concurrency / limits))
    lat = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl, batch=limits,
                          cache_hit_rate=workload.cache_hit_rate)
    cycle = lat.ttft + (workload.osl - 1) * lat.tpot
    return np.maximum(1, np.floor(need.peak_qps * sized.load * cycle / limits))


def _closed(need: Any) -> bool:
    """True for a workload stated as concurrency (or sessions): a closed population, whatever request rate
    a stated time per request implies (docs/sizing.md, "Load"); else an open stream of ``need.peak_qps``."""
    return need.concurrency is not None and (need.basis in ("concurrency", "sessions") or need.peak_qps is None)


def _out_of_reach(phys: ReplicaPhysics, constants: Any, workload: Workload, sized: Pessimism) -> np.ndarray:
    """Rows that miss a latency target even idle, at any replica count.

    TTFT is at least ``prefill + a x step(1) + f`` (no queue, a batch of one) and the inter-token gap at
    least ``TPOT(1)``: every term of a decode step grows with the batch and the queueing tail is never
    negative, so a row whose idle latency is over target can be left out before the queueing model.
    """
    if constants.ttft_steps < 0 or not (workload.ttft_ms or workload.itl_ms):
        return np.zeros(len(phys.tp), dtype=bool)
    idle = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl, batch=1.0,
                           cache_hit_rate=workload.cache_hit_rate)
    ratios = [np.zeros(len(phys.tp))]
    if workload.ttft_ms:
        ratios.append(idle.unqueued_ttft * 1e3 * sized.ttft / workload.ttft_ms)
    if workload.itl_ms:
        ratios.append(idle.tpot * 1e3 * sized.tpot / workload.itl_ms)
    return np.max(np.vstack(ratios), axis=0) > 1.0 + 1e-9


def _first_feasible(grid: np.ndarray, phys: ReplicaPhysics, limits: np.ndarray, constants: Any, workload: Workload,
                    need: Any, sized: Pessimism,
                    ranking: Ranking | None = None) -> tuple[list[tuple[dict[str, Any], int] | None], int]:
    """Per row, the evaluated slice and index of its fewest replicas meeting the SLOs (``None``: no count
    does), and how many points were evaluated.

    Each row's replica counts go through the queueing model in order, a window at a time
    (:data:`_PASS_WIDTHS`), until one is feasible; the figures of a point do not depend on what is
    evaluated beside it (:func:`~finops.sizing.queueing.operating_point`), so this finds what evaluating
    the whole grid finds. Before every pass but the first, the rest of each open row is screened with
    the queueing floors (``operating_point(floor=True)``, no fixed point) and its counts below the first
    one that might meet the targets are skipped, and ``ranking`` (:class:`Ranking`) drops rows that can
    no longer matter.
    """
    picks: list[tuple[dict[str, Any], int] | None] = [None] * len(grid)
    columns, evaluated = grid.shape[1], 0
    start = np.where(_out_of_reach(phys, constants, workload, sized), columns, 0)   # first column not ruled out
    for number, width in enumerate(_PASS_WIDTHS):
        active = np.flatnonzero(start < columns)
        if number and active.size:
            active = _worth(ranking, picks, active, start, columns)
            start[active] = _first_possible(grid, active, start[active], phys, limits, constants, workload, need,
                                            sized)
            active = _worth(ranking, picks, active[start[active] < columns], start, columns)
        if active.size == 0:
            break
        left = columns - start[active]
        counts = left if left.sum() <= _ONE_PASS else np.minimum(left, width)    # the rest at once: cheaper
        segment, at, column = _windows(active, start[active], counts)
        flat = _evaluate(_physics_at(phys, at), limits[at], grid[at, column].astype(float), constants, workload,
                         need, sized.at(at))
        evaluated += at.size
        hits = np.flatnonzero(flat["ok"])
        found, first = np.unique(segment[hits], return_index=True)
        for k, i in zip(found, hits[first]):
            picks[int(active[k])] = (flat, int(i))
        start[active] += counts
        start[active[found]] = columns
    return picks, evaluated


def _worth(ranking: Ranking | None, picks: list[Any], active: np.ndarray, start: np.ndarray,
           columns: int) -> np.ndarray:
    """The ``active`` rows the ranking keeps; the others are closed (their ``start`` set to ``columns``)."""
    if ranking is None or active.size == 0:
        return active
    keep = ranking.worth(picks, active, start[active])
    start[active[~keep]] = columns
    return active[keep]


def _windows(rows: np.ndarray, start: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flatten ``counts[k]`` consecutive columns from ``start[k]`` of each row: (segment, row, column) per point.

    >>> [a.tolist() for a in _windows(np.array([5, 7]), np.array([0, 3]), np.array([2, 3]))]
    [[0, 0, 1, 1, 1], [5, 5, 7, 7, 7], [0, 1, 3, 4, 5]]
    """
    segment = np.repeat(np.arange(rows.size), counts)
    offset = np.arange(segment.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return segment, rows[segment], start[segment] + offset


def _first_possible(grid: np.ndarray, active: np.ndarray, start: np.ndarray, phys: ReplicaPhysics,
                    limits: np.ndarray, constants: Any, workload: Workload, need: Any, sized: Pessimism) -> np.ndarray:
    """Per active row, the first column from ``start`` whose queueing floors meet the targets (else the
    grid's width): the counts before it miss a target or are unstable, proven without solving them."""
    columns = grid.shape[1]
    segment, at, column = _windows(active, start, columns - start)
    miss = _evaluate(_physics_at(phys, at), limits[at], grid[at, column].astype(float), constants, workload, need,
                     sized.at(at), floor=True)["miss"]
    possible = np.flatnonzero(miss <= 1.0 + 1e-9)
    found, first = np.unique(segment[possible], return_index=True)
    result = np.full(active.size, columns)
    result[found] = column[possible[first]]
    return result


def _closest_miss(table: Any, rows: np.ndarray, picks: list[Any], grid: np.ndarray, phys: ReplicaPhysics,
                  limits: np.ndarray, constants: Any, workload: Workload,
                  need: Any, sized: Pessimism) -> tuple[tuple[float, str] | None, int]:
    """The row closest to its targets over its whole replica grid, among the rows that meet them nowhere,
    and the points evaluated to find it."""
    missing = np.array([k for k, pick in enumerate(picks) if pick is None], dtype=int)
    if missing.size == 0:
        return None, 0
    at = np.repeat(missing, grid.shape[1])
    miss = _evaluate(_physics_at(phys, at), limits[at], grid[missing].ravel().astype(float), constants, workload,
                     need, sized.at(at))["miss"].reshape(missing.size, grid.shape[1]).min(axis=1)
    best = int(np.argmin(miss))          # the first of equals, as a scan in row order keeps it
    return (float(miss[best]), table.label(int(rows[missing[best]]))), int(at.size)


def _physics_at(phys: ReplicaPhysics, at: np.ndarray) -> ReplicaPhysics:
    return ReplicaPhysics(**{f.name: getattr(phys, f.name)[at] for f in fields(ReplicaPhysics)})


def _evaluate(phys: ReplicaPhysics, limit: np.ndarray, replicas: np.ndarray, constants: Any, workload: Workload,
              need: Any, sized: Pessimism, *, floor: bool = False) -> dict[str, Any]:
    """One vectorized pass over (configuration, replica count) points (``floor``: only a lower bound of
    ``miss``, from the queueing floors), each judged at its ``sized`` factors (:mod:`finops.sizing.confidence`):
    an arrival rate ``sized.load`` times the workload's, TTFT and ITL ``sized.ttft`` and ``sized.tpot`` times
    the model's. A workload stated as concurrency is a closed population (:func:`closed_population`), never
    a batch larger than its clients; one stated as a rate is a Poisson stream (:func:`operating_point`)."""
    terms = prompt_terms(phys, constants, isl=workload.isl, osl=workload.osl, cache_hit_rate=workload.cache_hit_rate)
    if not _closed(need):
        rate = need.peak_qps / replicas
        op = operating_point(phys, constants, arrival_rate=rate * sized.load, isl=workload.isl, osl=workload.osl,
                             cache_hit_rate=workload.cache_hit_rate, max_batch=limit, floor=floor, terms=terms)
    else:
        op, rate = closed_population(phys, constants, clients=need.concurrency / replicas, isl=workload.isl,
                                     osl=workload.osl, cache_hit_rate=workload.cache_hit_rate, max_batch=limit,
                                     terms=terms)
    ttft, itl = _at_percentile(op, workload)
    ratios = [np.where(op.stable, 1.0, np.inf)]
    if workload.ttft_ms:
        ratios.append(ttft * sized.ttft * 1e3 / workload.ttft_ms)
    if workload.itl_ms:
        ratios.append(itl * sized.tpot * 1e3 / workload.itl_ms)
    miss = np.max(np.vstack(ratios), axis=0)     # <= 1 meets every target; how far off otherwise
    if floor:
        return {"miss": miss}
    return {"replicas": replicas, "ok": miss <= 1.0, "miss": miss, "op": op, "rate": rate,
            "sized_ttft": ttft * sized.ttft, "sized_itl": itl * sized.tpot}


def _at_percentile(op: Any, workload: Workload) -> tuple[Any, Any]:
    """TTFT and the inter-token gap at the workload's SLO percentile (P99: the tails; P50: median TTFT, mean TPOT)."""
    if workload.slo_percentile == "p99":
        return op.ttft_p99_s, op.itl_p99_s
    return op.ttft_p50_s, op.tpot_s


def _as_served(best: list[Quote], table: Any, constants: Any, workload: Workload,
               need: Any) -> tuple[Any, Any]:
    """The model's own operating points of the options at the workload's load (no band), and their
    modelled SLA attainment (``None`` without a TTFT target)."""
    rows = np.array([q.row for q in best])
    phys = table.physics_of(rows)
    slots = table.fit(workload.isl, workload.osl, workload.context_length)[0]
    limit = np.minimum(slots[rows], table.max_batch[rows])
    replicas = np.array([float(q.replicas_at_slo) for q in best])
    op = _evaluate(phys, limit, replicas, constants, workload, need, Pessimism.none(len(best)))["op"]
    if not workload.ttft_ms:
        return op, None
    running = np.maximum(op.running_batch, 1.0)
    lat = replica_latency(phys, constants, isl=workload.isl, osl=workload.osl, batch=running,
                          cache_hit_rate=workload.cache_hit_rate)
    return op, sla_attainment(workload.ttft_ms / 1e3, base_s=lat.unqueued_ttft,
                              utilization=op.utilization, wait_mean_s=op.wait_mean_s)


def _fleet_ends(best: list[Quote], table: Any, rows: np.ndarray, phys: ReplicaPhysics,
                limits: np.ndarray, constants: Any, workload: Workload, need: Any, cal: Calibration,
                engine: str) -> list[tuple[int | None, int | None]]:
    """Accelerators each option deploys were the model at the optimistic (P10) and the pessimistic (P90)
    end of its band: its row searched again at those factors, as the search does (``None`` where no count of
    the grid is feasible there)."""
    if not best:
        return []
    where = {int(r): k for k, r in enumerate(rows)}
    ks = np.array([where[q.row] for q in best])
    ends = []
    mine = _physics_at(phys, ks)
    for level in (1.0 - DEFAULT_CONFIDENCE, DEFAULT_CONFIDENCE):
        sized = pessimism(table, cal, engine, level).at(rows[ks])
        grid = _replica_grids(_lower_bounds(need, mine, constants, workload, limits[ks], sized))
        picks, _ = _first_feasible(grid, mine, limits[ks], constants, workload, need, sized)
        ends.append([None if pick is None else
                     devices_needed(int(pick[0]["replicas"][pick[1]]), 1.0, workload.spare, workload.redundancy)
                     * table.tps[int(rows[k])] for pick, k in zip(picks, ks)])
    return list(zip(*ends))


def _option(table: Any, q: Quote, n: int, served: tuple[Any, Any], max_concurrency: int, pricing_model: str,
            peak_to_average: float, confidence: float | None, gpus_band: tuple[int | None, int | None],
            beyond_native_context: bool = False) -> SizingOption:
    """Option ``n`` of the ranking: its deployment, the model's own figures at the workload's load
    (``served[0]``, point ``n``), and the figures it was sized at (the quote's point)."""
    (op, p_ok), tp = served, table.tps[q.row]
    return SizingOption(
        gpu=table.gpus[q.row], precision=table.precisions[q.row], tp=tp, replicas_at_slo=q.replicas_at_slo,
        replicas=q.replicas, gpus=q.replicas * tp, provider=q.price.provider, instance_type=q.price.instance_type,
        region=q.price.region, instances=q.instances, accelerators_per_instance=q.price.gpu_count,
        gpus_paid=q.instances * q.price.gpu_count, pricing_model=pricing_model, hourly_cost=q.hourly,
        monthly_cost=q.hourly * HOURS_PER_MONTH,
        cost_per_million_output_tokens=per_million(q.hourly, q.output_tokens_per_s),
        peak_to_average=peak_to_average,
        cost_per_million_output_tokens_average=per_million_at_average(q.hourly, q.output_tokens_per_s,
                                                                      peak_to_average),
        ttft_p50_ms=float(op.ttft_p50_s[n]) * 1e3, ttft_p99_ms=float(op.ttft_p99_s[n]) * 1e3,
        tpot_ms=float(op.tpot_s[n]) * 1e3, itl_p99_ms=float(op.itl_p99_s[n]) * 1e3,
        ttft_sla_attainment=None if p_ok is None else float(p_ok[n]),
        running_batch=float(op.running_batch[n]), max_concurrency=max_concurrency,
        weights_gib_per_gpu=float(table.weights_gib_per_gpu[q.row]), output_tokens_per_s=q.output_tokens_per_s,
        calibrated=table.calibrated[q.row], efficiency_source=table.efficiency_sources[q.row],
        ttft_band_ratio=table.band_ratios[q.row][0], tpot_band_ratio=table.band_ratios[q.row][1],
        throughput_band_ratio=table.band_ratios[q.row][2], extrapolation=table.reaches[q.row], confidence=confidence,
        ttft_sized_ms=float(q.flat["sized_ttft"][q.i]) * 1e3, itl_sized_ms=float(q.flat["sized_itl"][q.i]) * 1e3,
        gpus_band=gpus_band, evidence=_evidence(table, q.row, float(op.running_batch[n])),
        beyond_native_context=beyond_native_context)


def _evidence(table: Any, row: int, running_batch: float) -> dict[str, Any]:
    """The row's evidence record with its range judged at ``running_batch`` (a family fit's span has a batch)."""
    out = dict(table.evidence[row])
    fit = table.family_fits[row]
    if fit is not None:
        out["inside_measured_range"] = fit.inside(table.tps[row], table.model.active_params_b, running_batch)
    return out


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
