"""Fit the performance model's constants to measurements, and judge the fit on held-out data.

A :class:`Measurement` is one load-test point: a model on ``tp`` GPUs of one type under one engine,
at a fixed concurrency with fixed ISL/OSL, and the mean TTFT and TPOT it showed. The bundled set is
NVIDIA AIConfigurator's silicon measurements (Apache-2.0; H100 SXM, H200 and B200; TRT-LLM, vLLM, SGLang;
dense Llama-3.1-8B/70B and Qwen3-32B, mixture-of-experts Qwen3-235B-A22B and MiniMax-M2.5, MLA
DeepSeek-V3/R1), kept compact in ``finops/data/calibration/`` by
``scripts/derive_calibration_rows.py`` from aiconfigurator-core 0.12's ``systems/silicon_sample.csv``.

Fitting minimizes, per engine and on the models without routed experts, the robust (soft-L1, scale
0.05) sum of squared log errors ``0.5 x log(TPOT_model / TPOT_measured)`` and ``log(TTFT_model / TTFT_measured)`` over the constants of
:class:`~finops.sizing.engine_constants.EngineConstants`, in log space within physical bounds
(``scipy.optimize.least_squares``, every option fixed: :data:`_SOLVER`), a constant no row depends on held at
its start (:func:`_speaks_of`), each step constant anchored to its start (:data:`_ANCHOR_WEIGHT`) and a stage
on a few rows started from several fixed points (:data:`_EXTRA_STARTS`), so that every numpy/scipy release and
machine gives the same constants. Rows whose concurrency exceeds what the KV cache can hold are left
out: there the engine queues requests and TTFT measures the queue, not the hardware. The models with
routed experts then give one more constant, the per-layer MoE overhead (:func:`_with_moe_overhead`),
with the others fixed. Fitted from nothing (the bundled constants), the engines share their step
physics by partial pooling: one set is fitted on every engine's rows, and each engine's step constants
are pulled toward it with :data:`POOL_WEIGHT`, so an engine measured on one or two models borrows what
the others measured (docs/performance.md, "Partial pooling across engines").

Refitting from a user's own load test (``finops calibrate``) starts from the bundled constants and
pulls them only as far as the new points demand: each constant's log deviation from the prior is a
residual with weight ``prior_weight`` (ridge regression toward the prior). The default,
:data:`REFIT_PRIOR_WEIGHT` = 0.01, lets the measurements win where they speak (a 10 % change of a
constant costs as much as a 2 % miss of a measured TPOT), so the refit reproduces the user's points,
as seed 003 asks: measured numbers replace assumed ones. Constants the points do not constrain stay
at the prior.

Accuracy is judged leave-one-model-out (:func:`leave_one_model_out`): every row is predicted by a fit
that never saw its model, which is what a user asking about a new model gets (a random k-fold would
let other rows of the same model, a few tokens apart, vouch for it). The held-out ratios measured /
modelled per engine become the calibration's error bands (:func:`with_held_out`).

>>> rows = bundled_measurements()
>>> len(rows), sorted({r.engine for r in rows})
(1618, ['sglang', 'trtllm', 'vllm'])
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from importlib import resources

import numpy as np

from ..catalog import get_accelerator, resolve_model
from ..errors import InputError
from ..limits import inflate
from .bands import MIN_BAND_ROWS
from .engine_constants import BAND_METRICS, ENGINES, KERNEL_CLASSES, Calibration, EngineConstants, model_class
from .engine_defaults import default_kv_precision, engine_defaults
from .kernels import step_kernels
from .memory import memory_fit
from .performance import ReplicaPhysics, replica_latency, replica_physics
from .vendor_efficiency import BAND_LEVELS

__all__ = ["BUNDLED_CLASSES", "BUNDLED_SOURCE", "POOL_WEIGHT", "REFIT_PRIOR_WEIGHT", "FoldReport", "Measurement",
           "bundled_measurements", "bundled_rows", "fit", "leave_one_model_out", "predict", "queue_limited",
           "with_held_out"]

BUNDLED_FILE = "aiconfigurator-silicon.csv.gz"
BUNDLED_SOURCE = ("NVIDIA AIConfigurator silicon measurements (aiconfigurator-core 0.12.0 systems/silicon_sample.csv, "
                  "https://github.com/ai-dynamo/aiconfigurator, Apache-2.0): 1,618 aggregated serving points on one "
                  "group of 1-8 GPUs (attention tensor-parallel, experts over the same GPUs), H100 SXM, H200 and "
                  "B200, TRT-LLM 1.0-1.2, vLLM 0.12-0.19, SGLang 0.5; Llama-3.1-8B/70B, Qwen3-32B, "
                  "Qwen3-235B-A22B, MiniMax-M2.5, DeepSeek-V3/R1")

# The optimizer's parameters (log space): name -> (lower bound, upper bound, start). A new request
# waits at most 2 decode steps to be scheduled and 30 ms outside the GPU (HTTP, tokenizer): with wider
# bounds the fit, which sees 4 or more clients only, loads the queue onto these terms (SGLang reached
# 36 steps, TRT-LLM 89 ms) and one client's TTFT came out 2-5x its prefill. The bounds cost 9 points
# of held-out TTFT at 4+ clients (31.8 -> 40.9 %) and gain 3 of TPOT and 4 of throughput. The step overhead
# takes four slots (o1..o8: TP 1, 2, 4, 8); the rest are EngineConstants fields of the same name.
_PARAMETERS: dict[str, tuple[float, float, float]] = {
    "bandwidth_efficiency": (0.02, 1.0, 0.7),
    "compute_efficiency": (0.02, 1.0, 0.5),
    "o1": (0.05, 500.0, 20.0),
    "o2": (0.05, 500.0, 30.0),
    "o4": (0.05, 500.0, 40.0),
    "o8": (0.05, 500.0, 50.0),
    "allreduce_gbps": (1.0, 5000.0, 50.0),
    "prefill_queue": (1e-3, 50.0, 1.0),
    "prefill_burst": (1e-4, 1.0, 0.1),
    "link_efficiency": (0.05, 1.0, 0.5),
    "ttft_steps": (1e-3, 2.0, 1.0),
    "ttft_fixed_ms": (0.01, 30.0, 10.0),
    "admission_steps": (1e-3, 50.0, 1.0),
}
# Step times from measured kernels (finops.sizing.kernels) add their own. The decode credit: microseconds a
# layer of a decode step saves against the tables, which time each kernel alone (its launch, ramp and tail)
# where an engine replays the step as one CUDA graph; bounded to 30 us, about 10 kernels of a decoder layer
# at 3 us each (unbounded, it traded against the per-step overhead: 31-90 us depending on the model held
# out, and leave-one-model-out TPOT went 9.7 -> 12.4 %). It replaced a decode speed relative to the tables
# (0.8-1.25), which scaled the large compute-bound GEMMs of a maximum-throughput batch by the
# launch savings of the campaigns' small ones: NVIDIA's published long-decode rows read up to 1.46x with
# it, 1.21x with the credit (docs/performance.md, "The decode credit"). The prefill speed relative to the
# tables (whose engine version is not the measured rows') stays a factor, bounded to 0.8-1.25 so that it
# cannot trade the kernels for overhead (unbounded, TRT-LLM's fit put the kernels at a third of their time
# and the rest in overhead), and a per-step overhead k1..k8 (not per layer: a CUDA-graph step launches
# once; per layer, the 70B rows took the 8B rows' overhead x 2.5), 1 us-20 ms. They are fitted after the
# others, with the others fixed: the scheduling terms are shared.
_PARAMETERS.update({
    "kernel_decode_credit_us": (0.01, 30.0, 5.0),
    "kernel_prefill_scale": (0.8, 1.25, 1.0),
    "k1": (1.0, 20000.0, 1000.0),
    "k2": (1.0, 20000.0, 1000.0),
    "k4": (1.0, 20000.0, 1000.0),
    "k8": (1.0, 20000.0, 1000.0),
})
_NAMES = tuple(_PARAMETERS)
_OVERHEAD = ("o1", "o2", "o4", "o8")
_KERNEL_OVERHEAD = ("k1", "k2", "k4", "k8")
_KERNEL_NAMES = ("kernel_decode_credit_us", "kernel_prefill_scale", *_KERNEL_OVERHEAD)
# The scheduling terms, fitted last with the step times fixed (TPOT does not depend on them). The admission
# wait d (a prompt arriving at a running batch) is held at its lower bound until then: fitted with the
# step times, it traded them for TTFT (held out: TPOT 15.3 -> 16.2 %, throughput 13.3 -> 15.6 %).
_SCHEDULING_NAMES = ("prefill_queue", "prefill_burst", "ttft_steps", "ttft_fixed_ms", "admission_steps")
_ROOFLINE_NAMES = tuple(n for n in _NAMES if n not in (*_KERNEL_NAMES, "admission_steps"))
_ADMISSION = _NAMES.index("admission_steps")
_LOWER, _UPPER, _START = (np.log([v[i] for v in _PARAMETERS.values()]) for i in range(3))
# Robust-loss scale and the weight of TPOT against TTFT residuals, chosen on the k-fold error (TPOT
# is the tighter goal at 10 %, TTFT the noisier data; 0.5 balances the two held-out medians).
_F_SCALE = 0.05
_TPOT_WEIGHT = 0.5
REFIT_PRIOR_WEIGHT = 0.01
#: The least weight of a step constant's log deviation from its start (a larger ``prior_weight`` or
#: :data:`POOL_WEIGHT` replaces it). Rows that barely determine a constant (an engine measured at TP 2 only
#: says little of its all-reduce speed; a constant they say nothing of is held, :func:`_speaks_of`) give the
#: cost a flat valley, and without the anchor the optimizer stopped anywhere along it, wherever one numpy/scipy
#: release's path took it (on SGLang's 58 TP 2 rows of Qwen3-32B, starts 0.05 apart in log space ended up
#: to e^8 apart at the same cost). With it the fit is the point of the valley nearest the start. 1e-4 is a
#: ten-thousandth of one TTFT residual's weight: where the rows speak it moves the bundled constants by at
#: most 0.07 % (SGLang's TP 1 step overhead, 70.27 -> 70.22 us a layer).
_ANCHOR_WEIGHT = 1e-4
#: Starts beside the given one (:func:`_starts`) in each stage fitted on fewer than :data:`_FEW_ROWS` rows
#: whose pull is weaker than the rows (weight below 1); the lowest cost wins. On a few rows the constants
#: trade against each other (the fixed wait, the wait in decode steps and the admission wait; compute
#: against link efficiency on one TP) and one start stopped in a different minimum on each numpy/scipy
#: release (SGLang's 58 TP 2 rows of Qwen3-32B: link efficiency 0.20 or 0.14, the fixed wait 30 or 0.01 ms);
#: from five starts both releases agree within 0.01 %. The per-engine and pooled fits of the bundled rows
#: (500-1,600 rows of several models and TPs) reach one minimum from any nearby start and keep one start:
#: they are most of the fitting time, and the five starts would make the bundled fit 1.6x slower.
_EXTRA_STARTS = 4
_FEW_ROWS = 100
#: The solver, every option spelled out rather than left to the library's defaults (which change between
#: releases): trust-region reflective within the bounds, the parameters already in natural units (log of
#: each constant: a unit step is a factor e in every direction, so ``x_scale`` 1), tolerances and the
#: finite-difference step fixed.
_SOLVER: dict[str, object] = {"method": "trf", "loss": "soft_l1", "f_scale": _F_SCALE, "x_scale": 1.0,
                              "jac": "2-point", "diff_step": 1e-6, "ftol": 1e-10, "xtol": 1e-10, "gtol": 1e-10,
                              "max_nfev": 2000, "tr_solver": "exact"}
#: Partial pooling across engines (a fit without a prior): each engine's step constants (roofline and
#: kernel stages) are pulled toward one set fitted on all engines' rows, with this weight per constant
#: against each row's residuals; the scheduling terms stay each engine's own. Chosen on the
#: leave-one-model-out error among 1, 3, 10, 30 and 100 (docs/performance.md, "Partial pooling across
#: engines"; 0, each engine alone, and 1,000 read worse in a first form of the fit), and again among 3, 10,
#: 30 and 100 with the decode credit (10 kept: 9.7 / 28.5 / 9.0 % TPOT / TTFT / throughput); the published
#: rows never fitted are its check.
POOL_WEIGHT = 10.0
#: Model classes the bundled constants are fitted on: the step and scheduling constants on the dense
#: models, the MoE overhead on the MoE ones (Qwen3-235B-A22B, MiniMax-M2.5). The DeepSeek-V3/R1 (MLA)
#: rows are kept as held-out test data only: fitted jointly, they pull TRT-LLM's shared constants off
#: the dense rows (vLLM then decodes faster than TRT-LLM at TP2 on Llama-3.1-70B, against the
#: measurements), and the roofline's MLA terms are too coarse for one set of constants to serve both.
BUNDLED_CLASSES: tuple[str, ...] = ("dense", "moe")
#: Bounds of the fitted MoE layer overhead ``o_moe``, microseconds (0: none; 500 us a layer would be a
#: 47 ms step of Qwen3-235B's 94 layers on overhead alone, 2-10x its measured TPOT).
_MOE_OVERHEAD_US = (0.0, 500.0)


@dataclass(frozen=True)
class Measurement:
    """One load-test point (mean TTFT and TPOT at a fixed concurrency)."""

    engine: str
    model: str
    gpu: str
    precision: str
    tp: int
    isl: int
    osl: int
    concurrency: int
    ttft_ms: float
    tpot_ms: float
    source: str = ""
    expert_parallel: bool = False   # a mixture-of-experts model's experts split by expert parallelism


def bundled_rows() -> list[dict[str, str]]:
    """The shipped AIConfigurator measurements as the file holds them (one dict per CSV row)."""
    raw = resources.files("finops").joinpath("data", "calibration", BUNDLED_FILE).read_bytes()
    return list(csv.DictReader(io.StringIO(inflate(raw, BUNDLED_FILE).decode("utf-8"))))


def bundled_measurements() -> list[Measurement]:
    """The shipped AIConfigurator measurements (1,618 rows; every row carries its source and date)."""
    return [Measurement(engine=r["engine"], model=r["model"], gpu=r["gpu"], precision=r["precision"],
                        tp=int(r["tp"]), isl=int(r["isl"]), osl=int(r["osl"]), concurrency=int(r["concurrency"]),
                        ttft_ms=float(r["ttft_ms"]), tpot_ms=float(r["tpot_ms"]), source=f"{r['source']} {r['as_of']}",
                        expert_parallel=r["expert_parallel"] == "1")
            for r in bundled_rows()]


def queue_limited(m: Measurement) -> bool:
    """True when ``m.concurrency`` exceeds the sequences the KV cache (at the engine's default KV
    precision) holds or the engine's scheduler runs: requests then queue.

    >>> m = Measurement("vllm", "qwen3-32b", "h100-sxm", "bf16", 2, 4096, 1024, 128, 58752.6, 55.2)
    >>> queue_limited(m), queue_limited(replace(m, concurrency=16))
    (True, False)
    """
    fit_ = memory_fit(m.model, m.gpu, precision=m.precision, tp=m.tp, isl=m.isl, osl=m.osl,
                      kv_precision=default_kv_precision(m.engine, m.precision))
    return m.concurrency > min(fit_.max_concurrency, engine_defaults(m.engine, m.gpu).max_batch)


def kernel_covered(m: Measurement) -> bool:
    """True when the measured kernel tables time this row's configuration (:mod:`finops.sizing.kernels`)."""
    return step_kernels(resolve_model(m.model), m.gpu, engine=m.engine, precision=m.precision,
                        kv_precision=default_kv_precision(m.engine, m.precision), tp=m.tp,
                        expert_parallel=m.expert_parallel) is not None


def _physics(rows: Sequence[Measurement]) -> ReplicaPhysics:
    per_row = [replica_physics(resolve_model(r.model), get_accelerator(r.gpu), precision=r.precision, tp=r.tp,
                               kv_precision=default_kv_precision(r.engine, r.precision),
                               prefill_token_budget=engine_defaults(r.engine, r.gpu).prefill_token_budget,
                               engine=r.engine, expert_parallel=r.expert_parallel)
               for r in rows]
    return ReplicaPhysics(**{f.name: np.array([getattr(p, f.name) for p in per_row], dtype=float)
                             for f in fields(ReplicaPhysics)})


def _constants(theta: np.ndarray, kernel_steps: float) -> EngineConstants:
    v = dict(zip(_NAMES, np.exp(theta)))
    overhead = tuple(v.pop(name) for name in _OVERHEAD)
    kernel_overhead = tuple(v.pop(name) for name in _KERNEL_OVERHEAD)
    return EngineConstants(step_overhead_us_per_layer=overhead, kernel_step_overhead_us=kernel_overhead,  # type: ignore[arg-type]
                           kernel_steps=kernel_steps, **v)


def _theta(c: EngineConstants) -> np.ndarray:
    values = dict(zip(_OVERHEAD, c.step_overhead_us_per_layer)) | dict(zip(_KERNEL_OVERHEAD, c.kernel_step_overhead_us))
    values.update({name: getattr(c, name) for name in _NAMES if name not in values})
    return np.clip(np.log(np.maximum([values[name] for name in _NAMES], 1e-9)), _LOWER, _UPPER)


def _columns(rows: Sequence[Measurement]) -> dict[str, np.ndarray]:
    return {name: np.array([getattr(r, name) for r in rows], dtype=float)
            for name in ("isl", "osl", "concurrency", "ttft_ms", "tpot_ms")}


def _latency_ms(phys: ReplicaPhysics, c: EngineConstants, cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lat = replica_latency(phys, c, isl=cols["isl"], osl=cols["osl"], batch=cols["concurrency"])
    return lat.ttft * 1e3, lat.tpot * 1e3


def _fit_engine(rows: Sequence[Measurement], start: np.ndarray, free: Sequence[str], kernel_steps: float,
                prior_weight: float | None) -> EngineConstants:
    """The constants ``free`` fitted on ``rows``, the others kept at ``start`` (log space); with a
    ``prior_weight``, each free constant's log deviation from ``start`` is a residual of that weight. On
    fewer than :data:`_FEW_ROWS` rows with a weight below 1, the lowest cost from :func:`_starts`."""
    from scipy.optimize import least_squares

    phys, cols = _physics(rows), _columns(rows)

    def misfit(theta: np.ndarray) -> np.ndarray:
        ttft, tpot = _latency_ms(phys, _constants(theta, kernel_steps), cols)
        return np.concatenate([_TPOT_WEIGHT * np.log(tpot / cols["tpot_ms"]), np.log(ttft / cols["ttft_ms"])])

    named = np.array([_NAMES.index(name) for name in free])
    at_start = misfit(start)
    spoken = np.array([_speaks_of(misfit, start, at_start, i) for i in named], dtype=bool)
    if not spoken.any():
        return _constants(start, kernel_steps)
    index = named[spoken]

    def full(x: np.ndarray) -> np.ndarray:
        theta = start.copy()
        theta[index] = x
        return theta

    def residuals(x: np.ndarray) -> np.ndarray:
        parts = [misfit(full(x))]
        if prior_weight is not None:
            parts.append(math.sqrt(prior_weight) * (x - start[index]))
        return np.concatenate(parts)

    lower, upper = _LOWER[index], _UPPER[index]
    extra = _EXTRA_STARTS if len(rows) < _FEW_ROWS and (prior_weight or 0.0) < 1.0 else 0
    # the starts spread over every named constant, whether or not the rows speak of it: the same points
    # for the constants they do speak of, whichever the rows leave silent
    results = [least_squares(residuals, x0[spoken], bounds=(lower, upper), **_SOLVER)
               for x0 in _starts(start[named], _LOWER[named], _UPPER[named], extra)]
    best = min(results, key=lambda r: r.cost)     # the first of equal costs: the given start wins a tie
    return _constants(full(best.x), kernel_steps)


def _speaks_of(misfit: Callable[[np.ndarray], np.ndarray], theta: np.ndarray, at_theta: np.ndarray, i: int) -> bool:
    """True when the rows' residuals ``misfit`` (``at_theta`` at ``theta``) depend on constant ``i`` at all: a
    step of 0.1 in its log, up or down, changes one of them (both ways, as a constant may act through a
    ``max``: a compute efficiency on memory-bound steps matters only below its start). A constant no row
    speaks of (an engine measured at TP 2 only says nothing of its TP 4 and 8 step overheads: the
    interpolation in log2 tp weighs them exactly 0 there) is held at its start: the cost is flat along it, and
    where a solver stops on a flat valley is a matter of the floating-point path (starts, BLAS, release),
    3 % apart on the same rows on two machines."""
    for step in (0.1, -0.1):
        moved = theta.copy()
        moved[i] += step
        if not np.array_equal(misfit(moved), at_theta):
            return True
    return False


def _starts(x0: np.ndarray, lower: np.ndarray, upper: np.ndarray, extra: int) -> list[np.ndarray]:
    """``x0`` and ``extra`` fixed points spread over the box ``lower..upper``: the Kronecker (R_d) sequence
    ``lower + frac(1/2 + k alpha) (upper - lower)``, ``alpha_j = g^-(j+1)`` with ``g`` the root of
    ``g^(d+1) = g + 1`` (Roberts 2018, "The unreasonable effectiveness of quasirandom sequences"), a
    low-discrepancy design that needs no random generator and so is the same on every numpy release.

    >>> [p.round(3).tolist() for p in _starts(np.zeros(1), np.zeros(1), np.ones(1), 2)]
    [[0.0], [0.118], [0.736]]
    """
    d = len(x0)
    g = 2.0
    for _ in range(64):                           # fixed-point iteration for g^(d+1) = g + 1
        g = (1.0 + g) ** (1.0 / (d + 1))
    alpha = g ** -np.arange(1, d + 1, dtype=float)
    points = [lower + np.mod(0.5 + k * alpha, 1.0) * (upper - lower) for k in range(1, extra + 1)]
    return [x0, *points]


def _fit_stages(rows: Sequence[Measurement], start: np.ndarray, *, step_weight: float | None,
                scheduling_weight: float | None, kernel_switch: float, hold_admission: bool) -> EngineConstants:
    """One engine's constants from ``start`` (log space) in three stages: the roofline's on every row, then
    the measured-kernel ones on the rows the tables cover (the others fixed), then the scheduling terms
    ``q, s, a, f, d`` alone on every row with the step times fixed (``kernel_switch``: whether kernels time
    them); ``step_weight`` and ``scheduling_weight`` pull the free constants of those stages toward
    ``start`` (:func:`_fit_engine`). ``hold_admission``: the admission wait ``d`` sits at its lower bound
    until the last stage, which starts it at ``start``'s: fitted with the step times, it traded them for
    TTFT."""
    start = start.copy()
    admission = start[_ADMISSION]
    if hold_admission:
        start[_ADMISSION] = _LOWER[_ADMISSION]
    anchored = max(step_weight or 0.0, _ANCHOR_WEIGHT)
    constants = _fit_engine(rows, start, _ROOFLINE_NAMES, 0.0, anchored)
    covered = [r for r in rows if kernel_covered(r)]
    if covered:
        constants = _fit_engine(covered, _theta(constants), _KERNEL_NAMES, 1.0, anchored)
    start = _theta(constants)
    if hold_admission:
        start[_ADMISSION] = admission
    return _fit_engine(rows, start, _SCHEDULING_NAMES, kernel_switch, scheduling_weight)


def _as_floats(c: EngineConstants) -> EngineConstants:
    return EngineConstants.from_dict(c.to_dict())


def kernel_choices(calibration: Calibration | None) -> list[str]:
    """Where ``calibration``'s measured kernels time the steps, as :func:`fit`'s ``kernel_engines`` takes it:
    ``engine:class`` for each engine and model class switched on (:data:`KERNEL_CLASSES`).

    >>> kernel_choices(None), "trtllm:dense" in kernel_choices(Calibration.bundled())
    ([], True)
    """
    engines = calibration.engines.items() if calibration is not None else ()
    return [f"{e}:{kind}" for e, c in engines for kind, field in KERNEL_CLASSES.items() if getattr(c, field)]


def fit(rows: Iterable[Measurement], *, prior: Calibration | None = None,
        prior_weight: float = REFIT_PRIOR_WEIGHT, source: str = BUNDLED_SOURCE, as_of: str | None = None,
        classes: Sequence[str] | None = None, kernel_engines: Collection[str] | None = None) -> Calibration:
    """Fit each engine present in ``rows`` (queue-limited rows left out; with ``classes``, also the rows
    of other model classes); engines absent keep ``prior``'s. The roofline's constants are fitted first
    on every usable row (with no admission wait), then, with those fixed, the measured-kernel ones on the
    rows the kernel tables cover, and last the scheduling terms ``q, s, a, f, d`` alone on every usable
    row, with the step times the engine answers with (kernels or roofline) fixed: TPOT does not depend
    on them. These stages see the rows of models without routed experts (all rows when there are none);
    the MoE models' rows then fit the one MoE layer overhead of every engine
    (:func:`_with_moe_overhead`), and an engine fitted without them keeps the prior's. Without a
    ``prior`` and with rows of two or more engines, the stages first fit one pooled set on all engines'
    rows, and each engine's step constants are then pulled toward it with :data:`POOL_WEIGHT` (partial
    pooling: an engine measured on one or two models borrows the step physics the others measured).
    ``kernel_engines``: where the kernels time the steps where they can: an engine (every model class) or
    ``engine:class`` (``kernel_steps`` for ``dense``, ``kernel_steps_moe`` for ``moe``); by default the
    prior's (:func:`kernel_choices`), or none.

    The result records which (GPU, precision, model class, TP) each engine was measured on (added to
    ``prior``'s): estimates elsewhere are marked extrapolated (``calibrated: false``). A prior's error
    bands and vendor efficiencies are kept (a refit on a user's few points cannot judge them; a GPU the
    refit measures leaves its vendor's efficiencies for the refitted constants).

    >>> import dataclasses
    >>> rows = [m for m in bundled_measurements() if m.engine == "vllm" and m.model == "llama-3.1-70b"]
    >>> cal = fit(rows[:40])
    >>> 0.02 <= cal.constants("vllm").bandwidth_efficiency <= 1.0
    True
    """
    if not (isinstance(prior_weight, (int, float)) and math.isfinite(prior_weight) and prior_weight >= 0):
        raise InputError(f"prior weight must be a number >= 0, got {prior_weight!r}",
                         hint=f"0 is a free fit; the default {REFIT_PRIOR_WEIGHT} lets the measurements win")
    rows = list(rows)
    unknown = sorted({r.engine for r in rows} - set(ENGINES))   # before queue_limited reads the engine's defaults
    if unknown:
        raise InputError(f"unknown engine {unknown[0]!r} in measurements", hint=f"use one of: {', '.join(ENGINES)}")
    usable = [r for r in rows if not queue_limited(r)
              and (classes is None or model_class(resolve_model(r.model)) in classes)]
    if not usable:
        raise InputError("no usable measurements to fit",
                         hint="give load-test points whose concurrency fits the KV cache")
    routed = [r for r in usable if resolve_model(r.model).is_moe]
    step_rows = [r for r in usable if not resolve_model(r.model).is_moe] or usable
    engines = dict(prior.engines) if prior is not None else {}
    measured = {name: dict(entries) for name, entries in prior.measured.items()} if prior is not None else {}
    chosen = kernel_engines if kernel_engines is not None else kernel_choices(prior)
    # Without a prior, one set of constants fitted on every engine's rows is what each engine's own fit
    # is pulled toward (partial pooling, POOL_WEIGHT): the step physics is mostly the GPU's and the kernels'.
    pooled = (_fit_stages(step_rows, _START, step_weight=None, scheduling_weight=None, kernel_switch=1.0,
                          hold_admission=True)
              if prior is None and len({r.engine for r in step_rows}) > 1 else None)
    for engine in sorted({r.engine for r in usable}):
        base = prior.engines.get(engine) if prior is not None else None
        mine = [r for r in step_rows if r.engine == engine] or [r for r in usable if r.engine == engine]
        switches = {field: 1.0 if engine in chosen or f"{engine}:{kind}" in chosen else 0.0
                    for kind, field in KERNEL_CLASSES.items()}
        if base is not None:      # a refit: every constant pulled toward the prior's
            constants = _fit_stages(mine, _theta(base), step_weight=prior_weight, scheduling_weight=prior_weight,
                                    kernel_switch=switches["kernel_steps"], hold_admission=False)
        else:                     # the step constants pulled toward the pooled ones, the scheduling terms free
            start = _START if pooled is None else _theta(pooled)
            weight = None if pooled is None else POOL_WEIGHT
            constants = _fit_stages(mine, start, step_weight=weight, scheduling_weight=None,
                                    kernel_switch=switches["kernel_steps"], hold_admission=True)
            # a second round with the engine's own admission wait in place while the step times are refitted
            # (block coordinate descent): held at 0, the synchronized clients' wait is read as slow prefill
            start = start.copy()
            start[_ADMISSION] = _theta(constants)[_ADMISSION]
            constants = _fit_stages(mine, start, step_weight=weight, scheduling_weight=None,
                                    kernel_switch=switches["kernel_steps"], hold_admission=False)
        engines[engine] = _as_floats(replace(constants, **switches,
                                             moe_overhead_us_per_layer=base.moe_overhead_us_per_layer if base else 0.0))
        covered = measured.setdefault(engine, {})
        for r in (r for r in usable if r.engine == engine):
            spec = resolve_model(r.model)
            key = (r.gpu, r.precision, model_class(spec), r.tp)
            low, high = covered.get(key, (spec.active_params_b, spec.active_params_b))
            covered[key] = (min(low, spec.active_params_b), max(high, spec.active_params_b))
    if routed:
        engines = _with_moe_overhead(routed, engines, prior_weight if prior is not None else None)
    return Calibration(engines=engines, source=source, as_of=as_of or dt.date.today().isoformat(), rows=len(usable),
                       measured=measured, bands=dict(prior.bands) if prior is not None else {},
                       vendors=dict(prior.vendors) if prior is not None else {})


def _with_moe_overhead(rows: Sequence[Measurement], engines: Mapping[str, EngineConstants],
                       prior_weight: float | None) -> dict[str, EngineConstants]:
    """``engines`` with one ``o_moe`` (microseconds a layer of routed experts adds to each step: the
    router, top-k, token permutation and the grouped GEMMs' launch and tail, beyond the weight bytes
    the roofline already reads) fitted on ``rows`` (the models with routed experts), every other
    constant as fitted on the models without: the same value for every engine, on the TPOT residuals
    ``log(TPOT_model / TPOT_measured)`` alone (soft-L1, scale 0.05). Both choices are what held out
    (docs/performance.md, "Mixture-of-experts models"): fitted per engine, vLLM's two MoE campaigns
    (Qwen3-235B on vLLM 0.12, MiniMax-M2.5 on 0.16-0.19) disagree by 3x and each predicts the other
    worse than the shared value; fitted on TTFT as well, the prefill's engine-specific misses pull it
    from 23 to 107 us depending on which model is held out, where on TPOT alone it is 50-52 us either
    way. With a ``prior_weight`` (a refit on a user's rows), the deviation of ``log(1 + o_moe)`` from
    the prior's is a residual of that weight."""
    from scipy.optimize import least_squares

    groups = [(e, [r for r in rows if r.engine == e]) for e in sorted({r.engine for r in rows})]
    prepared = [(engines[e], _physics(g), _columns(g)) for e, g in groups]
    start = float(np.mean([c.moe_overhead_us_per_layer for c in engines.values()]))

    def residuals(x: np.ndarray) -> np.ndarray:
        parts = []
        for constants, phys, cols in prepared:
            # on roofline steps for every engine: measured expert kernels need no o_moe, so rows they time
            # would not inform it, and it is the roofline's stand-in for them wherever the tables do not reach
            _, tpot = _latency_ms(phys, replace(constants, moe_overhead_us_per_layer=float(x[0]),
                                                   **dict.fromkeys(KERNEL_CLASSES.values(), 0.0)), cols)
            parts.append(np.log(tpot / cols["tpot_ms"]))
        if prior_weight is not None:
            parts.append(np.sqrt(prior_weight) * (np.log1p(x) - np.log1p(start)))
        return np.concatenate(parts)

    result = least_squares(residuals, [min(max(start, 1.0), _MOE_OVERHEAD_US[1])], bounds=_MOE_OVERHEAD_US,
                           **{**_SOLVER, "x_scale": 10.0})     # microseconds, not log space: a step of ~10 us
    value = float(result.x[0])
    return {e: replace(c, moe_overhead_us_per_layer=value) for e, c in engines.items()}


def predict(rows: Sequence[Measurement], calibration: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """Model TTFT and TPOT (ms) for each measurement's configuration, in order."""
    ttft = np.empty(len(rows))
    tpot = np.empty(len(rows))
    for engine in {r.engine for r in rows}:
        index = [i for i, r in enumerate(rows) if r.engine == engine]
        subset = [rows[i] for i in index]
        ttft[index], tpot[index] = _latency_ms(_physics(subset), calibration.constants(engine), _columns(subset))
    return ttft, tpot


def throughput(rows: Sequence[Measurement], ttft_ms: np.ndarray, tpot_ms: np.ndarray) -> np.ndarray:
    """Output tokens/s of a closed loop of ``concurrency`` clients: ``c x osl / (TTFT + (osl - 1) TPOT)``."""
    c, osl = (np.array([getattr(r, name) for r in rows], dtype=float) for name in ("concurrency", "osl"))
    return c * osl / ((ttft_ms + (osl - 1.0) * tpot_ms) / 1e3)


@dataclass(frozen=True)
class FoldReport:
    """Held-out predictions for every usable row, each from a fit that never saw that row's model."""

    rows: tuple[Measurement, ...]
    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    excluded: int

    def ratio(self, metric: str) -> np.ndarray:
        """Measured / modelled per row, for ``ttft_ms``, ``tpot_ms`` or ``output_tokens_per_s``."""
        measured = {"ttft_ms": np.array([r.ttft_ms for r in self.rows]),
                    "tpot_ms": np.array([r.tpot_ms for r in self.rows])}
        modelled = {"ttft_ms": self.ttft_ms, "tpot_ms": self.tpot_ms}
        measured["output_tokens_per_s"] = throughput(self.rows, measured["ttft_ms"], measured["tpot_ms"])
        modelled["output_tokens_per_s"] = throughput(self.rows, self.ttft_ms, self.tpot_ms)
        return measured[metric] / modelled[metric]

    def error(self, metric: str) -> np.ndarray:
        """Absolute relative error of the model per row: ``|modelled / measured - 1|``."""
        return np.abs(1.0 / self.ratio(metric) - 1.0)

    @property
    def tpot_error(self) -> np.ndarray:
        return self.error("tpot_ms")

    @property
    def ttft_error(self) -> np.ndarray:
        return self.error("ttft_ms")

    def median_errors(self, keep: Sequence[bool] | None = None) -> tuple[float, float, float]:
        """Median absolute relative (TPOT, TTFT, throughput) error over all rows or a boolean selection."""
        mask = np.ones(len(self.rows), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
        tpot, ttft, rate = (float(np.median(self.error(m)[mask])) for m in ("tpot_ms", "ttft_ms", "output_tokens_per_s"))
        return tpot, ttft, rate


def leave_one_model_out(rows: Iterable[Measurement], *, classes: Sequence[str] | None = None,
                        kernel_engines: Collection[str] | None = None, hold_out: str = "model") -> FoldReport:
    """Predict every usable row from a fit on the rows of the other models only (of ``classes``, when
    given: rows of other classes are then predicted, never fitted on).

    A row whose engine was measured on no other model has no held-out fit; it is left out of the
    report and counted in ``excluded``, with the queue-limited rows. ``kernel_engines``: the engines
    whose steps the measured kernels time (by default those of the bundled calibration, as the product
    answers); ``hold_out="gpu"`` leaves one GPU out instead of one model.
    """
    all_rows = list(rows)
    usable = [r for r in all_rows if not queue_limited(r)]
    if kernel_engines is None:
        kernel_engines = kernel_choices(Calibration.bundled())
    groups = sorted({getattr(r, hold_out) for r in usable})
    if len(groups) < 2:
        raise InputError(f"leave-one-{hold_out}-out needs rows of at least 2, got {len(groups)}")
    ttft = np.full(len(usable), np.nan)
    tpot = np.full(len(usable), np.nan)
    for group in groups:
        held = [i for i, r in enumerate(usable) if getattr(r, hold_out) == group]
        train = [r for r in usable if getattr(r, hold_out) != group
                 and (classes is None or model_class(resolve_model(r.model)) in classes)]
        trained_engines = {r.engine for r in train}
        held = [i for i in held if usable[i].engine in trained_engines]
        if not held:
            continue
        calibration = fit(train, classes=classes, kernel_engines=kernel_engines)
        ttft[held], tpot[held] = predict([usable[i] for i in held], calibration)
    keep = ~np.isnan(ttft)
    kept = tuple(r for r, k in zip(usable, keep) if k)
    return FoldReport(rows=kept, ttft_ms=ttft[keep], tpot_ms=tpot[keep], excluded=len(all_rows) - len(kept))


def with_held_out(calibration: Calibration, report: FoldReport) -> Calibration:
    """``calibration`` annotated with the held-out median errors of ``report`` and the quantiles of
    measured / modelled at :data:`~finops.sizing.vendor_efficiency.BAND_LEVELS` (its bands), per engine,
    per ``engine:model class`` and, where it holds :data:`~finops.sizing.bands.MIN_BAND_ROWS` rows, per
    ``engine:model class:tpN`` (the measured reach's keys, :func:`~finops.sizing.bands.band_keys`)."""
    tpot, ttft, rate = report.median_errors()
    keys = np.array([[r.engine, f"{r.engine}:{model_class(resolve_model(r.model))}",
                      f"{r.engine}:{model_class(resolve_model(r.model))}:tp{r.tp}"] for r in report.rows])
    members = {key: (keys == key).any(axis=1) for key in sorted(set(keys.ravel().tolist()))}
    bands = {key: {metric: tuple(round(float(q), 4) for q in np.quantile(report.ratio(metric)[rows], BAND_LEVELS))
                   for metric in BAND_METRICS}
             for key, rows in members.items() if key.count(":") < 2 or rows.sum() >= MIN_BAND_ROWS}
    return replace(calibration, held_out_tpot_error=round(tpot, 4), held_out_ttft_error=round(ttft, 4),
                   held_out_throughput_error=round(rate, 4), bands=bands)
