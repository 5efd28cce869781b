"""Latency and throughput of one serving replica (``tp`` GPUs) under continuous batching.

The model is a roofline with the two terms roofline calculators leave out: a per-step engine overhead
that grows with tensor parallelism, and the interference of prefills with decode steps. All times are
seconds per replica; ``b`` is the number of running sequences, ``h`` the prefix-cache hit rate::

    ctx      = isl + osl / 2                                    mean context while decoding
    memory   = (W / tp - X (1 - cover(b)) + b x ctx x kv_gpu) / (BW x eta_bw)   weights + KV read per step
    compute  = b x (2 P + 4 L A ctx) / (tp x F x eta_c)         decode FLOPs (active params P)
    step     = max(memory, compute) + L x o(tp) + allreduce(b, tp)
    new      = isl x (1 - h)                                    prompt tokens not found in the cache
    prefill_compute = (2 P new + 4 L A new (isl - new / 2)) / (tp x F x eta_c) + prefill_allreduce
    prefill_allreduce = 2 L x new x hidden x 2 bytes x (tp - 1) / tp / (link x eta_link)
    chunks   = ceil(new / budget)                               steps a prompt is split over (chunked prefill)
    prefill  = prefill_compute + chunks x L x o(tp) + pass
    TPOT     = step + (b - 1) / max(osl - 1, 1) x prefill_compute    the others' chunked prefills share its steps
    delay    = (a + d (b - 1) / b) x step + f                   scheduling and admission (not queued)
    think    = prefill - prefill_compute + delay + (osl - 1) x TPOT    a client's cycle off the prefill
    wait     = min(q x closed_loop_wait(b, prefill_compute, think) + s (b - 1) / 2 x prefill_compute,
                   (b - 1) x prefill_compute)
    TTFT     = prefill + wait + delay

TTFT is what a client of a fixed-concurrency load test measures (``vllm bench serve
--max-concurrency``, GenAI-Perf/AIPerf ``--concurrency``): the prompt's own prefill, the wait behind
the other clients' prompts, ``a`` decode steps to be scheduled, ``f`` outside the GPU (HTTP,
tokenizer), and an admission wait of ``d (b - 1) / b`` decode steps: a prompt that finds others
running waits for the engine's scheduler to take it into the batch, one alone (``b = 1``) does not
(:func:`scheduling_delay`; an empirical term, fitted per engine). The ``b`` clients form a closed
loop, so the wait is the finite-population one of
:func:`~finops.sizing.closed_loop.closed_loop_wait` (Schweitzer-Bard mean-value analysis): none at
``b = 1``, never more than ``b - 1`` prompts ahead; ``q`` scales it. Clients that start together
with a fixed ISL/OSL stay in step (an engine batches the prompts that wait together, so they reach
their first token, and finish, together): a prompt then lands behind ``s (b - 1) / 2`` others on
average, ``s`` the share of the wave that persists. ``budget`` is the engine's prefill tokens per step
(:mod:`finops.sizing.engine_defaults`). A prompt's activations cross the TP group twice per layer:
unlike a decode step's few-KB all-reduce (latency-bound, ``ar``), that is ``new x hidden x 2`` bytes
per layer, bandwidth-bound on the GPU link (``link``: NVLink, Infinity Fabric, ICI, PCIe from the
catalog) at a fitted share ``eta_link``. ``pass`` is a compiled runtime's fixed cost of one prefill pass, fitted
with a family's ``eta_bw`` and ``eta_c`` where its published rows report TTFT (0 elsewhere): Neuron runs the
prompt as one call of a separately compiled context-encoding graph, whose launch over every NeuronCore and round
trip to the host cost the same for 128 prompt tokens as for 2,048 (the Inferentia2 decoder tables: 25-29 ms for a 128-token prompt of a 7-13B model whose FLOPs take under 10 ms; 8 prompts of 128 take
66-116 ms, not 8 times one). Under a Poisson arrival rate (:mod:`finops.sizing.queueing`)
the closed loop gives way to Kingman's queue.

``X`` routed-expert weight bytes per GPU of a mixture-of-experts model (0 for dense), of which a step
reads the share its tokens route to: ``cover(b) = 1 - (1 - k / E)^b`` (``b`` tokens each picking
``k`` of ``E`` experts, independently and uniformly; the shared experts are always read).
``W`` weight bytes, ``kv_gpu`` KV bytes per token per GPU, ``BW`` memory bandwidth, ``F`` dense tensor
throughput at the weight precision, ``L`` layers, ``A = heads x head_dim``, ``o(tp)`` the engine's
per-layer step overhead at that TP (interpolated in log2 tp), ``allreduce = 2 L x b x hidden x 2 bytes
x (tp - 1) / tp / ar_bandwidth``. Prefill is compute-bound and decode memory-bound (seed 003:
inference MFU 10-30 %, decode limited by bandwidth). The constants ``eta_bw, eta_c, o(1..8), ar, q, s,
a, f, d, eta_link`` are fitted per engine on NVIDIA AIConfigurator measurements (see
:mod:`finops.sizing.calibration` and ``docs/performance.md``).

>>> e = estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1024, osl=256, concurrency=16,
...              engine="trtllm")
>>> e.fits, 5 < e.tpot_ms < 15, 50 < e.ttft_ms < 400
(True, True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from typing import Any, Literal

import numpy as np

from ..catalog import Accelerator, ModelSpec, get_accelerator, get_link, resolve_model
from ..errors import InputError
from .closed_loop import closed_loop_wait
from .collectives import REFERENCE_LINK, allreduce_seconds, link_extra
from .engine_constants import (
    BAND_METRICS,
    CALIBRATED_TPS,
    DEFAULT_ENGINE,
    ENGINES,
    KERNEL_CLASSES,
    Calibration,
    EngineConstants,
    model_class,
)
from .engine_defaults import default_kv_precision, engine_defaults
from .kernels import ModelKernels, decode_seconds, measured_allreduce_seconds, prefill_seconds, step_kernels
from .memory import (
    PRECISIONS,
    bytes_per_param,
    kv_bytes_per_token_per_gpu,
    memory_fit,
    model_kv_precision,
    padded_query_heads,
    tp_ranks,
    weight_bytes_per_gpu,
)
from .support import check_supported
from .vendor_efficiency import VendorEfficiency

__all__ = ["CLIENTS", "STEP_TIMES", "Estimate", "Latency", "PromptTerms", "ReplicaPhysics", "decode_latency", "estimate",
           "prompt_terms", "replica_latency", "replica_physics", "scheduling_delay", "with_client", "with_step_time"]



@dataclass(frozen=True)
class ReplicaPhysics:
    """What the latency model needs to know about a model on a TP group; fields broadcast as arrays."""

    weight_bytes_per_gpu: Any
    kv_bytes_per_token_per_gpu: Any
    active_params: Any
    layers: Any
    hidden_size: Any
    attention_width: Any      # query heads x head dim
    bandwidth: Any            # bytes/s per GPU
    flops: Any                # dense FLOP/s per GPU at the compute precision
    tp: Any
    link_bandwidth: Any = 0.0  # bytes/s per GPU over the scale-up link (NVLink, Infinity Fabric, ICI)
    expert_weight_bytes_per_gpu: Any = 0.0   # routed experts of an MoE model
    expert_share_per_token: Any = 0.0        # k / E: experts one token routes to, as a share
    moe_layers: Any = 0.0                    # layers with routed experts (each adds the engine's o_moe a step)
    prefill_token_budget: Any = 8192.0       # prompt tokens one engine step takes (chunked prefill)
    # The link's all-reduce cost beyond the calibrated link's (finops.sizing.collectives.link_extra): seconds
    # per all-reduce and seconds per byte; 0 on NVLink 4/5, where the engines' constants were measured.
    link_extra_latency: Any = 0.0
    link_extra_per_byte: Any = 0.0
    # Prompt buckets of a compiling runtime (Neuron): a prompt is padded to the next power of two from this
    # size up (vLLM Neuron's num_batched_tokens_buckets default); 0: no buckets.
    prompt_bucket: Any = 0.0
    # The vendor's eta_bw and eta_c on this accelerator (finops.sizing.vendor_efficiency; its GPUs have no
    # kernel tables, so they time roofline steps only); 0: the engine's.
    bandwidth_efficiency: Any = 0.0
    compute_efficiency: Any = 0.0
    prefill_pass: Any = 0.0   # seconds: the family fit's fixed cost of a prefill pass (VendorEfficiency)
    # Measured kernels of this configuration (finops.sizing.kernels.ModelKernels, log-ms tables on its
    # grids; NaN, with kernel_covered 0, where the tables do not cover it):
    kernel_covered: Any = 0.0
    kernel_decode_tokens: Any = 0.0
    kernel_tokens: Any = 0.0
    kernel_generation: Any = 0.0
    kernel_context: Any = 0.0
    kernel_last_logits: Any = 0.0


def replica_physics(model: ModelSpec, gpu: Accelerator, *, precision: str, tp: int,
                    kv_precision: str | None = None, prefill_token_budget: int = 8192,
                    engine: str | None = None, efficiency: VendorEfficiency | None = None,
                    expert_parallel: bool = False) -> ReplicaPhysics:
    """Scalar physics of ``model`` on ``tp`` x ``gpu`` at a weight precision (KV cache: ``kv_precision``,
    by default the model dtype; ``prefill_token_budget``: the engine's prompt tokens per step).
    ``engine``: also that engine's measured kernels where the tables cover the configuration
    (:func:`~finops.sizing.kernels.step_kernels`), for the constants whose ``kernel_steps`` is 1.
    ``efficiency``: the vendor's ``eta_bw`` and ``eta_c`` (:meth:`Calibration.vendor_efficiency`), which
    then replace the engine's in :func:`prompt_terms`. ``expert_parallel``: a mixture-of-experts model's
    experts are split over the GPUs by expert parallelism (whole experts per GPU) rather than tensor
    parallelism; the weight bytes per GPU are the same either way, the measured expert kernels are not.

    >>> from finops.catalog import get_model, get_accelerator
    >>> p = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="fp8", tp=2)
    >>> round(p.weight_bytes_per_gpu / 1e9, 2), p.kv_bytes_per_token_per_gpu, p.flops / 1e12
    (4.54, 65536.0, 1979.0)
    """
    kv_p = kv_precision or model_kv_precision(precision)
    extra: dict[str, float] = {}   # a dense model keeps ReplicaPhysics' 0 routed-expert bytes and share
    if efficiency is not None:
        extra.update(bandwidth_efficiency=efficiency.bandwidth_efficiency,
                     compute_efficiency=efficiency.compute_efficiency,
                     prefill_pass=efficiency.prefill_pass_ms * 1e-3)
    if model.is_moe and model.experts_per_token:
        moe_layers = model.layers - (model.first_dense_layers or 0)
        width = model.moe_intermediate_size or model.intermediate_size
        experts = moe_layers * model.num_experts * 3 * model.hidden_size * width * bytes_per_param(precision)
        extra.update(expert_weight_bytes_per_gpu=experts / tp, moe_layers=float(moe_layers),
                     expert_share_per_token=model.experts_per_token / model.num_experts)
    link = get_link(gpu.link)
    latency_extra, per_byte_extra = _link_extra(gpu.link, tp)
    heads = padded_query_heads(model, tp_ranks(gpu, tp)) if gpu.pads_heads else model.num_attention_heads
    return ReplicaPhysics(
        **extra,
        weight_bytes_per_gpu=weight_bytes_per_gpu(model, gpu, precision, tp),
        kv_bytes_per_token_per_gpu=kv_bytes_per_token_per_gpu(model, tp, kv_p, gpu),
        active_params=model.active_params_b * 1e9, layers=float(model.layers), hidden_size=float(model.hidden_size),
        attention_width=float(heads * model.head_dim),
        bandwidth=gpu.memory_bandwidth_gbps * 1e9, flops=gpu.tflops(precision) * 1e12, tp=float(tp),
        # the fitted prefill link share describes the calibrated link; another link adds its difference
        link_bandwidth=(gpu.interconnect_gbps if link.calibrated else get_link(REFERENCE_LINK).gbps_per_direction) * 1e9,
        link_extra_latency=latency_extra, link_extra_per_byte=per_byte_extra,
        prompt_bucket=float(PROMPT_BUCKET if gpu.pads_heads else 0.0),
        prefill_token_budget=float(prefill_token_budget),
        **_kernel_fields(model, gpu, engine, precision, kv_p, tp, expert_parallel))


def _kernel_fields(model: ModelSpec, gpu: Accelerator, engine: str | None, precision: str, kv_precision: str,
                   tp: int, expert_parallel: bool) -> dict[str, Any]:
    if engine is None:
        return {}
    k = step_kernels(model, gpu.id, engine=engine, precision=precision, kv_precision=kv_precision, tp=tp,
                     expert_parallel=expert_parallel)
    if k is not None and tp > 1 and not _tables_agree_with_link(gpu, engine, tp, model.hidden_size):
        k = None
    covered = k is not None
    k = k or ModelKernels.uncovered()   # NaN tables of the same shapes: covered and uncovered rows stack
    return {"kernel_covered": float(covered), **{f"kernel_{f.name}": getattr(k, f.name) for f in fields(ModelKernels)}}


@cache
def _link_extra(link: str, tp: int) -> tuple[float, float]:
    return link_extra(get_link(link), tp)


#: How far a kernel table's all-reduce may exceed the link's own (finops.sizing.collectives) before the
#: tables stop timing a configuration on a link the engines' constants were not measured on. For an 8,192-token
#: step's messages AIConfigurator's all-reduce is 0.75-1.6x the link model on A100, H100, H200 and B200 and
#: 1.3-2.1x on the RTX PRO 6000, but on the L40S 1.2-1.4x over 2 GPUs and 5-13x over 4 and 8 (a system without
#: peer-to-peer, whose transfers go through host memory): with it, TensorRT-LLM's published L40S rows at TP 4
#: and 8 read 0.5-0.6x the throughput and 3-9x the TTFT, with the roofline and the link's collectives 0.8-1.3x.
TABLE_LINK_TOLERANCE = 2.5


@cache
def _tables_agree_with_link(gpu: Accelerator, engine: str, tp: int, hidden: int) -> bool:
    """True when ``engine``'s measured all-reduce on ``gpu`` over ``tp`` GPUs is within
    :data:`TABLE_LINK_TOLERANCE` of the link's collective for the messages of an 8,192-token step (bandwidth-
    bound), or when the link is one the constants were measured on."""
    link = get_link(gpu.link)
    elements = 8192.0 * hidden
    measured = measured_allreduce_seconds(gpu.id, engine, tp, elements)
    if link.calibrated or measured is None:
        return True
    return measured <= TABLE_LINK_TOLERANCE * allreduce_seconds(link, 2.0 * elements, tp)


def bucketed_context(isl: Any, osl: Any, smallest: Any) -> Any:
    """Mean KV length a decode step reads when the runtime compiles its decode for power-of-two context buckets
    from ``smallest`` up (vLLM Neuron's context-length bucketing): the mean, over the positions ``isl`` to
    ``isl + osl``, of the smallest bucket holding each.

    >>> float(bucketed_context(4096, 4096, 128)), float(bucketed_context(100, 28, 128))   # all in 8,192; all in 128
    (8192.0, 128.0)
    >>> float(bucketed_context(3072, 2048, 128))   # 1,024 positions in 4,096, 1,024 in 8,192
    6144.0
    """
    start, end = np.asarray(isl, dtype=float), np.asarray(isl, dtype=float) + np.asarray(osl, dtype=float)
    total = np.zeros(np.broadcast(start, end, np.asarray(smallest)).shape)
    low = np.zeros_like(total)
    bucket = np.maximum(np.asarray(smallest, dtype=float), 1.0) * np.ones_like(total)
    while True:
        inside = np.clip(np.minimum(end, bucket) - np.maximum(start, low), 0.0, None)
        total = total + inside * bucket
        if np.all(bucket >= end):
            break
        low, bucket = bucket, bucket * 2.0
    return total / np.maximum(end - start, 1.0)


@dataclass(frozen=True)
class Latency:
    """Seconds, per replica: ``ttft`` and ``tpot`` at a running batch, plus their parts."""

    ttft: Any
    tpot: Any
    prefill: Any            # one prompt alone: compute plus the overhead of the steps it is chunked over
    prefill_compute: Any    # FLOPs and all-reduce of one prompt: what a chunked prefill adds to decode steps
    step: Any
    step_bytes: Any         # bytes one decode step reads per GPU (weights touched + KV)
    delay: Any = 0.0        # scheduling and admission, outside the prompt queue (scheduling_delay)

    @property
    def unqueued_ttft(self) -> Any:
        """TTFT without the wait behind other prompts: the prompt's prefill and its scheduling delay."""
        return self.prefill + self.delay


def _per_tp_s(values_us: Any, tp: Any) -> Any:
    """Seconds from a value in us per TP 1, 2, 4, 8, interpolated (and clamped) in log2 tp."""
    x = np.log2(tp)   # >= 0: tp >= 1
    low = np.minimum(np.floor(x), len(CALIBRATED_TPS) - 2).astype(int)
    frac = np.minimum(x - low, 1.0)   # >= 0 as low <= x; 1 past TP 8 (clamped)
    table = [np.asarray(v) for v in values_us]
    lo, hi = np.choose(low, table), np.choose(low + 1, table)
    return (lo + (hi - lo) * frac) * 1e-6


def scheduling_delay(c: EngineConstants, step: Any, batch: Any = 1.0, osl: Any = np.inf) -> Any:
    """Seconds a prompt spends outside the prompt queue before its first token reaches the client, at a
    running ``batch`` (>= 1) of requests generating ``osl`` tokens: ``(a + min(d, osl - 1) (b - 1) / b) x step + f``.

    ``a`` decode steps to be scheduled and ``f`` outside the GPU (HTTP, tokenizer) for every request;
    ``d`` steps of admission for a prompt that arrives while others run (an empirical term fitted per
    engine on fixed-concurrency rows of 4-512 clients, with the step times fixed: the bundled fit has
    16 steps for TRT-LLM, 3 for vLLM, 34 for SGLang; no engine documents its admission policy in these
    terms). ``(b - 1) / b`` makes it vanish for one client, whose TTFT is its prefill plus
    ``a x step + f``, and tends to ``d`` steps as the batch grows. The others run at most ``osl - 1`` decode
    steps, so a prompt waits for no more: none where every request generates one token (a prefill-only load
    test, as SGLang-JAX's TTFT runs on the TPU v6e, whose TTFTs read 2.9-3.1x long at 8 clients without it).

    >>> c = Calibration.bundled().constants("vllm")
    >>> bool(scheduling_delay(c, 0.0) == c.ttft_fixed_ms / 1e3)
    True
    >>> bool(scheduling_delay(c, 0.01, 1.0) == scheduling_delay(c, 0.01))
    True
    >>> bool(scheduling_delay(c, 0.01, 8.0) > scheduling_delay(c, 0.01, 2.0) > scheduling_delay(c, 0.01))
    True
    >>> bool(scheduling_delay(c, 0.01, 8.0, osl=1) == scheduling_delay(c, 0.01))
    True
    """
    admission = np.minimum(c.admission_steps, np.asarray(osl, dtype=float) - 1.0) * (1.0 - 1.0 / np.asarray(batch))
    return (c.ttft_steps + admission) * step + c.ttft_fixed_ms * 1e-3


@dataclass(frozen=True)
class PromptTerms:
    """The batch-independent part of :func:`replica_latency`: a prompt's prefill and the decode-step
    constants. A fixed-point solver (:func:`~finops.sizing.queueing.operating_point`) computes them once
    and then only :func:`decode_latency` per iteration."""

    ctx: Any                # mean context while decoding, isl + osl / 2
    overhead: Any           # L x o(tp), seconds per step
    group_flops: Any        # tp x F x eta_c
    decode_flops: Any       # 2 P + 4 L A ctx: FLOPs per sequence per decode step
    prefill_compute: Any
    prefill: Any
    osl: Any
    bandwidth: Any          # BW x eta_bw
    moe: bool               # some row reads routed experts (else the untouched-expert term is 0)
    sharded: Any            # tp > 1 (an all-reduce per layer)
    any_sharded: bool       # False: no all-reduce term at all
    two_layers: Any         # 2 L
    tp_share: Any           # tp - 1
    allreduce_bandwidth: float
    new: Any                # prompt tokens not found in the cache
    isl: Any
    kernels: Any            # 1 where measured kernels time the steps (covered and c.kernel_steps), else 0
    any_kernels: bool       # False: the roofline everywhere
    kernel_decode_credit: float     # seconds a layer of a decode step saves against the tables
    kernel_prefill_scale: float
    decode_interference: float = 1.0   # share of the others' prompts a decoding client's steps carry


def prefill_in_batch(p: ReplicaPhysics, terms: PromptTerms, batch: Any) -> Any:
    """Seconds one prompt's prefill adds to the steps of ``batch`` running sequences: the prefill's
    compute (roofline), or with measured kernels the GEMM time of its chunks beyond the batch's own
    (:func:`~finops.sizing.kernels.prefill_seconds`)."""
    if not terms.any_kernels:
        return terms.prefill_compute
    shared = prefill_seconds(p.kernel_tokens, p.kernel_context, p.kernel_last_logits, terms.new, terms.isl,
                             p.prefill_token_budget, batch) / terms.kernel_prefill_scale
    return np.where(terms.kernels > 0, shared, terms.prefill_compute)


def kernel_share(p: ReplicaPhysics, c: EngineConstants) -> Any:
    """1 where measured kernels time the steps (the tables cover the configuration and ``c`` chose them for
    its model class, :data:`KERNEL_CLASSES`), else 0; arrays broadcast."""
    switch = np.where(np.asarray(p.moe_layers) > 0, c.kernel_steps_moe, c.kernel_steps)
    return np.asarray(p.kernel_covered) * switch


def prompt_terms(p: ReplicaPhysics, c: EngineConstants, *, isl: Any, osl: Any, cache_hit_rate: Any = 0.0) -> PromptTerms:
    """Prefill and decode-step constants of the module formulas (no batch in them); arrays broadcast.
    Where ``p`` holds measured kernels and ``c.kernel_steps`` is 1, they time the steps (see
    :mod:`finops.sizing.kernels`): the overhead is then ``c.kernel_step_overhead_us`` per step."""
    isl = np.asarray(isl)   # numbers or arrays: the float arithmetic below promotes whole numbers exactly
    osl = np.asarray(osl)
    ctx = isl + osl / 2.0
    if np.asarray(p.prompt_bucket).any():   # a compiled runtime's decode reads its context bucket's KV
        ctx = np.where(np.asarray(p.prompt_bucket) > 0, bucketed_context(isl, osl, p.prompt_bucket), ctx)
    kernels = kernel_share(p, c)
    any_kernels = bool(np.any(kernels > 0))
    overhead = p.layers * _per_tp_s(c.step_overhead_us_per_layer, p.tp)
    # A vendor's efficiencies (p.*_efficiency > 0) replace the engine's on its accelerators:
    group_flops = p.tp * p.flops * np.where(np.asarray(p.compute_efficiency) > 0, p.compute_efficiency,
                                            c.compute_efficiency)
    new = isl * (1.0 - np.asarray(cache_hit_rate))
    attended = isl    # the context the prompt's attention spans
    bucket = np.asarray(p.prompt_bucket)
    if bucket.any():   # a compiled runtime pads the prompt to its bucket, its padding attended as well
        padded = np.where(bucket > 0, np.maximum(bucket, 2.0 ** np.ceil(np.log2(np.maximum(new, 1.0)))), new)
        attended = isl + (padded - new)
        new = padded
    sharded = np.asarray(p.tp) > 1
    with np.errstate(divide="ignore", invalid="ignore"):   # TP 1 crosses no link: 0 / 0 there, never selected
        prefill_allreduce = np.where(sharded, 2.0 * p.layers * new * p.hidden_size * 2.0 * (p.tp - 1) / p.tp
                                     / (p.link_bandwidth * c.link_efficiency)
                                     + 2.0 * p.layers * (p.link_extra_latency
                                                         + new * p.hidden_size * 2.0 * p.link_extra_per_byte), 0.0)
    prefill_compute = (2.0 * p.active_params * new + 4.0 * p.layers * p.attention_width * new
                       * (attended - new / 2.0)) / group_flops + prefill_allreduce
    if any_kernels:
        alone = prefill_seconds(p.kernel_tokens, p.kernel_context, p.kernel_last_logits, new, isl,
                                p.prefill_token_budget) / c.kernel_prefill_scale
        prefill_compute = np.where(kernels > 0, alone, prefill_compute)
        overhead = np.where(kernels > 0, _per_tp_s(c.kernel_step_overhead_us, p.tp), overhead)
    # measured expert kernels hold their routing and dispatch: o_moe is the roofline's stand-in for them
    overhead = overhead + np.where(kernels > 0, 0.0, p.moe_layers * c.moe_overhead_us_per_layer * 1e-6)
    chunks = np.maximum(np.ceil(new / p.prefill_token_budget), 1.0)
    return PromptTerms(ctx=ctx, overhead=overhead, group_flops=group_flops,
                       decode_flops=2.0 * p.active_params + 4.0 * p.layers * p.attention_width * ctx,
                       prefill_compute=prefill_compute, prefill=prefill_compute + chunks * overhead + p.prefill_pass,
                       osl=osl,
                       bandwidth=p.bandwidth * np.where(np.asarray(p.bandwidth_efficiency) > 0,
                                                        p.bandwidth_efficiency, c.bandwidth_efficiency),
                       moe=bool(np.asarray(p.expert_weight_bytes_per_gpu).any()), sharded=sharded,
                       any_sharded=bool(sharded.any()),
                       two_layers=2.0 * p.layers, tp_share=p.tp - 1, allreduce_bandwidth=c.allreduce_gbps * 1e9,
                       new=new, isl=isl, kernels=kernels, any_kernels=any_kernels,
                       kernel_decode_credit=c.kernel_decode_credit_us * 1e-6,
                       kernel_prefill_scale=c.kernel_prefill_scale, decode_interference=c.decode_interference)


def decode_latency(p: ReplicaPhysics, terms: PromptTerms, batch: Any) -> tuple[Any, Any, Any]:
    """``(step, step_bytes, tpot)`` at a running batch: the batch-dependent part of :func:`replica_latency`."""
    b = np.asarray(batch)
    step_bytes = p.weight_bytes_per_gpu
    if terms.moe:
        step_bytes = step_bytes - p.expert_weight_bytes_per_gpu * (1.0 - p.expert_share_per_token) ** np.maximum(b, 1.0)
    step_bytes = step_bytes + b * terms.ctx * p.kv_bytes_per_token_per_gpu
    step = np.maximum(step_bytes / terms.bandwidth, b * terms.decode_flops / terms.group_flops) + terms.overhead
    if terms.any_sharded:
        step = step + np.where(terms.sharded, terms.two_layers * b * p.hidden_size * 2.0 * terms.tp_share / p.tp
                               / terms.allreduce_bandwidth
                               + terms.two_layers * (p.link_extra_latency
                                                     + b * p.hidden_size * 2.0 * p.link_extra_per_byte), 0.0)
    if terms.any_kernels:
        # the tables less what the engine saves per layer (one CUDA graph: no launch, overlapped ramps and
        # tails), never past the bytes the step reads at peak bandwidth
        measured = np.maximum(decode_seconds(p.kernel_decode_tokens, p.kernel_generation, b, terms.ctx)
                              - p.layers * terms.kernel_decode_credit, step_bytes / p.bandwidth)
        step = np.where(terms.kernels > 0, measured + terms.overhead, step)
    # the other clients each prefill once while this one decodes osl - 1 tokens (none in a static batch)
    others = (np.maximum(b, 1.0) - 1.0) * terms.decode_interference
    return step, step_bytes, step + others / np.maximum(terms.osl - 1.0, 1.0) * prefill_in_batch(p, terms, b)


def replica_latency(p: ReplicaPhysics, c: EngineConstants, *, isl: Any, osl: Any, batch: Any,
                    cache_hit_rate: Any = 0.0, terms: PromptTerms | None = None) -> Latency:
    """The module formulas, vectorized: any argument may be a numpy array (they broadcast).

    ``terms``: :func:`prompt_terms` of the same physics, constants, ``isl``, ``osl`` and hit rate, when
    the caller already has them (they do not depend on the batch).

    >>> from finops.catalog import get_model, get_accelerator
    >>> phys = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    >>> lat = replica_latency(phys, Calibration.bundled().constants("vllm"), isl=1024, osl=256,
    ...                       batch=np.array([1, 64]))
    >>> bool(lat.tpot[1] > lat.tpot[0]), bool(lat.ttft[1] > lat.ttft[0])
    (True, True)
    """
    terms = terms or prompt_terms(p, c, isl=isl, osl=osl, cache_hit_rate=cache_hit_rate)
    step, step_bytes, tpot = decode_latency(p, terms, batch)
    clients = np.maximum(batch, 1.0)
    prefill = terms.prefill
    prefill_compute = prefill_in_batch(p, terms, clients - 1.0)   # the prompts ahead share steps with the rest
    delay = scheduling_delay(c, step, clients, terms.osl)
    think = prefill - terms.prefill_compute + delay + (terms.osl - 1.0) * tpot
    wait = np.minimum(c.prefill_queue * closed_loop_wait(clients, prefill_compute, think)
                      + c.prefill_burst * (clients - 1.0) / 2.0 * prefill_compute, (clients - 1.0) * prefill_compute)
    ttft = prefill + wait + delay
    return Latency(ttft=ttft, tpot=tpot, prefill=prefill, prefill_compute=prefill_compute, step=step,
                   step_bytes=step_bytes, delay=delay)


@dataclass(frozen=True)
class Estimate:
    """One configuration's answer; the fields mirror ``finops estimate --json``.

    Scopes are in the names: ``*_per_gpu`` is one GPU of the replica, ``kv_bytes_per_token`` the whole
    model, the rest one replica of ``tp`` GPUs. Latencies are ``None`` when the model does not fit
    (there is nothing to time). ``*_band``: [P10, P90] of what a load test would measure, from the
    held-out errors of the calibration (``None`` without one).
    """

    model: str
    model_class: str
    gpu: str
    precision: str
    kv_precision: str
    tp: int
    engine: str
    client: str                     # how the load test's clients run: "synchronized", "staggered", "static" (CLIENTS)
    isl: int
    osl: int
    cache_hit_rate: float
    beyond_native_context: bool     # isl + osl past the model's native context, on an extended context_length
    fits: bool
    shortfall_gib: float
    weights_gib_per_gpu: float
    kv_bytes_per_token: float
    kv_bytes_per_token_per_gpu: float
    max_concurrency: int            # sequences the KV cache holds
    max_batch: int                  # sequences the engine's scheduler runs at once
    prefill_token_budget: int       # prompt tokens per engine step
    concurrency: int
    running_batch: int
    ttft_ms: float | None
    tpot_ms: float | None
    prefill_ms: float | None
    decode_step_ms: float | None
    request_latency_ms: float | None
    output_tokens_per_s: float | None
    output_tokens_per_s_per_gpu: float | None
    input_tokens_per_s: float | None
    effective_bandwidth_efficiency: float | None
    calibrated: bool     # engine, GPU, precision, model class and TP were measured together (else extrapolated)
    step_time_source: str   # "kernels" (measured kernel tables) or "roofline" (not covered, or not the default there)
    efficiency_source: str  # "engine" (eta_bw, eta_c fitted on the calibration rows), a family fit, e.g.
    #                         "neuron-v2:vllm" ("nvidia-h20:sglang>vllm": carried to another engine), or "none"
    #                         (no measurement of this vendor under this engine answers)
    extrapolation: str      # how far it reaches beyond what was measured: measured, fitted, carried, kernels or unmeasured
                            # (finops.sizing.bands)
    band_classes: dict[str, str | None]   # per metric, the held-out class whose residuals make its band
    ttft_ms_band: tuple[float, float] | None
    tpot_ms_band: tuple[float, float] | None
    output_tokens_per_s_band: tuple[float, float] | None
    # which measurements answered (Calibration.evidence): efficiency_source, extrapolation, family, sources,
    # measured_accelerator, family_measured, measured_engine, inside_measured_range
    evidence: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_engine(engine: str) -> str:
    name = str(engine).strip().lower()
    if name not in ENGINES:
        raise InputError(f"unknown engine {engine!r}", hint=f"use one of: {', '.join(ENGINES)}")
    return name


def _whole(name: str, value: int | None, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a whole number >= 1, got {value!r}")
    return value


def _bands(cal: Calibration, engine: str, kind: str, values: Mapping[str, float],
           vendor: VendorEfficiency | None = None, tp: int | None = None,
           reach: str = "measured") -> dict[str, tuple[float, float] | None]:
    """[P10, P90] of each metric: the value times the held-out ratio measured / modelled at 0.1 and 0.9 of
    the estimate's class (:meth:`Calibration.band_key`: the vendor's published rows where its efficiencies
    answer; else the engine's rows of its reach, model class and TP; :mod:`finops.sizing.bands`)."""
    out: dict[str, tuple[float, float] | None] = {}
    for metric in BAND_METRICS:
        ratios = cal.band_ratios(engine, metric, kind, vendor, tp=tp, reach=reach)
        out[f"{metric}_band"] = None if ratios is None else (values[metric] * ratios[0], values[metric] * ratios[1])
    return out


#: The smallest prompt bucket of a compiling runtime (vLLM Neuron's ``num_batched_tokens_buckets`` default:
#: powers of two from 128 up to ``max_num_batched_tokens``; the prompt is padded to the smallest that holds it,
#: awsdocs-neuron vllm-neuron "Additional Configuration Options", read 2026-12-06).
PROMPT_BUCKET = 128

#: ``client`` choices of :func:`estimate`: how the load test's clients run, as the scheduling terms that change.
#: ``synchronized``: all start together with a fixed ISL and OSL and stay in step, as in AIConfigurator's silicon
#: campaigns, which the constants are fitted on: the wave ``s`` and the admission wait ``d`` as fitted.
#: ``staggered``: out of step, the steady state AIPerf, GenAI-Perf and NIM's benchmarks measure after warm-up: no
#: wave and no admission wait; the closed-loop wait behind the others' prompts (``q``) stays. On NVIDIA NIM's
#: published rows (tests/sizing/test_published_fixed_concurrency.py, never fitted) TTFT at 5-50 clients reads
#: 1.32-2.28x synchronized and 0.79-0.95x staggered (docs/performance.md; the bundled constants).
#: ``static``: a static batch run in process, every prompt of the batch prefilled before any decodes (TensorRT-LLM's
#: and transformers-neuronx's static-batch benchmarks): each client's first token waits for the whole batch's
#: prompts (``s = 2``: the wave then holds all ``b - 1`` others), no admission wait, no time outside the
#: accelerator (no HTTP server, no tokenizer on the clock), and no prompt lands in a decode step. On Neuron's
#: Inferentia2 tables a batch of 8 long prompts takes 8-20x one prompt's TTFT.
CLIENTS: dict[str, dict[str, float]] = {
    "synchronized": {},
    "staggered": {"prefill_burst": 0.0, "admission_steps": 0.0},
    "static": {"prefill_burst": 2.0, "admission_steps": 0.0, "ttft_fixed_ms": 0.0, "decode_interference": 0.0},
}


def with_client(c: EngineConstants, client: str) -> EngineConstants:
    """``c`` with the scheduling terms of ``client`` (:data:`CLIENTS`).

    >>> c = Calibration.bundled().constants("trtllm")
    >>> s = with_client(c, "staggered")
    >>> (s.prefill_burst, s.admission_steps, s.prefill_queue == c.prefill_queue), with_client(c, "synchronized") is c
    ((0.0, 0.0, True), True)
    """
    if client not in CLIENTS:
        raise InputError(f"unknown client {client!r}", hint=f"use one of: {', '.join(CLIENTS)}")
    return replace(c, **CLIENTS[client]) if CLIENTS[client] else c


#: ``step_time`` choices of :func:`estimate`: the calibration's choice per engine, or one for all.
STEP_TIMES: dict[str, float | None] = {"auto": None, "kernels": 1.0, "roofline": 0.0}


def with_step_time(c: EngineConstants, step_time: str) -> EngineConstants:
    """``c`` with measured kernels switched on (``"kernels"``), off (``"roofline"``) or as fitted (``"auto"``).

    >>> c = Calibration.bundled().constants("vllm")
    >>> k, r = with_step_time(c, "kernels"), with_step_time(c, "roofline")
    >>> (k.kernel_steps, k.kernel_steps_moe), (r.kernel_steps, r.kernel_steps_moe)
    ((1.0, 1.0), (0.0, 0.0))
    """
    if step_time not in STEP_TIMES:
        raise InputError(f"unknown step time {step_time!r}", hint=f"use one of: {', '.join(STEP_TIMES)}")
    switch = STEP_TIMES[step_time]
    return c if switch is None else replace(c, **dict.fromkeys(KERNEL_CLASSES.values(), switch))


def estimate(model: str | ModelSpec, gpu: str | Accelerator, *, precision: str, tp: int, isl: int, osl: int,
             concurrency: int | Literal["max"] = "max", engine: str = DEFAULT_ENGINE, cache_hit_rate: float = 0.0,
             kv_precision: str | None = None, calibration: Calibration | None = None,
             max_batch: int | None = None, prefill_token_budget: int | None = None,
             step_time: str = "auto", expert_parallel: bool = False, client: str = "synchronized",
             context_length: int | None = None) -> Estimate:
    """Memory fit, TTFT, TPOT and throughput of one replica at a concurrency.

    ``concurrency="max"`` is the maximum-throughput point: as many sequences as the KV cache holds and
    the engine's scheduler runs (``max_batch``, the engine's default unless given; likewise
    ``prefill_token_budget`` and ``kv_precision``, see :mod:`finops.sizing.engine_defaults`). Above
    those limits the engine runs ``running_batch`` sequences and the rest wait; by Little's law each
    waits ``(c - running) / completions per second``, which is added to TTFT.

    ``step_time``: ``"kernels"`` times the steps from measured kernel tables where they cover the
    configuration (:mod:`finops.sizing.kernels`), ``"roofline"`` never, ``"auto"`` as the calibration
    chose per engine and model class (``kernel_steps``, ``kernel_steps_moe``: 1 where they were better
    held out). ``step_time_source`` says
    which one answered. ``expert_parallel``: a mixture-of-experts model's experts are split by expert
    parallelism (vLLM ``--enable-expert-parallel``, SGLang ``--ep-size``, TensorRT-LLM
    ``moe_expert_parallel_size``) instead of the engines' default tensor parallelism; it changes the
    measured expert kernels' times only (:func:`~finops.sizing.kernels.expert_table`). ``client``: how a
    fixed-concurrency load test's clients run (:data:`CLIENTS`): ``"synchronized"`` (all start together and
    stay in step, as the calibration's campaigns) or ``"staggered"`` (a steady state); it changes TTFT only.
    ``context_length``: the sequence length the engine serves when it runs the model past its native context
    (RoPE scaling); without it a request beyond the native context is refused
    (:func:`~finops.sizing.memory.check_context`), with it ``beyond_native_context`` says so.

    >>> e = estimate("llama-3.1-70b", "h100-sxm", precision="bf16", tp=1, isl=2048, osl=512)
    >>> e.fits, e.shortfall_gib > 60, e.ttft_ms
    (False, True, None)
    >>> e = estimate("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256, engine="trtllm")
    >>> e.concurrency == e.running_batch == min(e.max_concurrency, e.max_batch), e.kv_precision
    (True, 'fp8')
    """
    spec = resolve_model(model)   # a ModelSpec comes back as given
    device = get_accelerator(gpu) if isinstance(gpu, str) else gpu
    engine_name = _check_engine(engine)
    precision = str(precision).strip().lower()
    client = str(client).strip().lower()
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}", hint=f"use one of: {', '.join(PRECISIONS)}")
    if not device.supports(precision):
        device.tflops(precision)  # raises the catalog's explanation
    check_supported(engine_name, device.id, precision)
    if not 0.0 <= float(cache_hit_rate) <= 1.0:
        raise InputError(f"cache hit rate must be between 0 and 1, got {cache_hit_rate}")
    defaults = engine_defaults(engine_name, device)
    batch_limit = _whole("max batch", max_batch, defaults.max_batch)
    budget = _whole("prefill token budget", prefill_token_budget, defaults.prefill_token_budget)
    kv_p = str(kv_precision).strip().lower() if kv_precision else default_kv_precision(engine_name, precision)
    fit = memory_fit(spec, device, precision=precision, tp=tp, isl=isl, osl=osl, kv_precision=kv_p,
                     of_free_memory=defaults.kv_of_free_memory, context_length=context_length)
    cal = calibration or Calibration.bundled()
    if concurrency == "max":
        wanted = min(fit.max_concurrency, batch_limit)
    elif isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InputError(f"concurrency must be a whole number >= 1 or 'max', got {concurrency!r}")
    else:
        wanted = concurrency
    kind = model_class(spec)
    constants = with_client(with_step_time(cal.constants(engine_name), step_time), client)
    vendor = cal.vendor_efficiency(engine_name, device)
    reach = cal.reach(engine_name, device)
    phys = replica_physics(spec, device, precision=precision, tp=tp, kv_precision=kv_p, prefill_token_budget=budget,
                           engine=engine_name, efficiency=vendor, expert_parallel=bool(expert_parallel))
    kernels = bool(kernel_share(phys, constants))
    common: dict[str, Any] = {
        "model": spec.id, "model_class": kind, "gpu": device.id, "precision": precision, "kv_precision": kv_p,
        "tp": tp, "engine": engine_name, "client": client, "isl": isl, "osl": osl,
        "cache_hit_rate": float(cache_hit_rate),
        "beyond_native_context": bool(spec.max_context) and isl + osl > spec.max_context,
        "fits": fit.fits, "shortfall_gib": fit.shortfall_gib, "weights_gib_per_gpu": fit.weights_gib,
        "kv_bytes_per_token": fit.kv_bytes_per_token,
        "kv_bytes_per_token_per_gpu": kv_bytes_per_token_per_gpu(spec, tp, kv_p, device),
        "max_concurrency": fit.max_concurrency, "max_batch": batch_limit, "prefill_token_budget": budget,
        "calibrated": cal.covers(engine_name, device.id, precision, kind, tp, spec.active_params_b),
        "step_time_source": "kernels" if kernels else "roofline",
        "efficiency_source": cal.efficiency_source(engine_name, device), "extrapolation": reach,
        "band_classes": {m: cal.band_key(engine_name, m, kind, vendor, tp=tp, reach=reach) for m in BAND_METRICS}}

    def evidence(batch: float) -> dict[str, Any]:
        return cal.evidence(engine_name, device, precision=precision, model_class=kind, tp=tp,
                            active_params_b=spec.active_params_b, batch=batch, vendor=vendor, kernels=kernels)

    if not fit.fits:
        return Estimate(**common, evidence=evidence(0), concurrency=0, running_batch=0, ttft_ms=None, tpot_ms=None, prefill_ms=None,
                        decode_step_ms=None, request_latency_ms=None, output_tokens_per_s=None,
                        output_tokens_per_s_per_gpu=None, input_tokens_per_s=None,
                        effective_bandwidth_efficiency=None, ttft_ms_band=None, tpot_ms_band=None,
                        output_tokens_per_s_band=None)
    running = min(wanted, fit.max_concurrency, batch_limit)
    lat = replica_latency(phys, constants, isl=isl, osl=osl, batch=running, cache_hit_rate=cache_hit_rate)
    ttft, tpot = float(lat.ttft), float(lat.tpot)
    cycle = ttft + (osl - 1) * tpot                      # one request's life in a running slot
    output_rate = running * osl / cycle
    ttft += (wanted - running) * cycle / running         # Little's law wait for a free slot
    values = {"ttft_ms": ttft * 1e3, "tpot_ms": tpot * 1e3, "output_tokens_per_s": output_rate}
    return Estimate(**common, evidence=evidence(running), concurrency=wanted, running_batch=running, ttft_ms=values["ttft_ms"],
                    tpot_ms=values["tpot_ms"], prefill_ms=float(lat.prefill) * 1e3,
                    decode_step_ms=float(lat.step) * 1e3, request_latency_ms=(ttft + (osl - 1) * tpot) * 1e3,
                    output_tokens_per_s=output_rate, output_tokens_per_s_per_gpu=output_rate / tp,
                    input_tokens_per_s=output_rate * isl / osl,
                    effective_bandwidth_efficiency=float(lat.step_bytes) / float(lat.step) / phys.bandwidth,
                    **_bands(cal, engine_name, kind, values, vendor, tp, reach))
