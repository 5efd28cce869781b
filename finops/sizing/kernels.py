"""Step times of a continuous-batching engine composed from measured kernel latencies.

The tables in ``finops/data/kernels/<gpu>.npz`` are NVIDIA AIConfigurator's measurements of single
kernels (aiconfigurator-core 0.12, Apache-2.0, written by ``scripts/derive_kernel_tables.py``; see
NOTICE): GEMM latency by ``(m, n, k)`` and dtype, context and generation attention by batch, sequence
length, query and KV heads (head dim 128) and KV dtype, and all-reduce by GPUs and message size in BF16
elements (not bytes: the package's collection notes), per
engine and GPU. A value between grid points is interpolated multilinearly in log latency over log
coordinates; below the grid it is clamped, above it scaled linearly (latency grows in proportion to
tokens, heads or bytes once a kernel fills the GPU), except prefill attention beyond the longest
measured prompt (16,384 tokens), which grows with the square of the prompt.

One tensor-parallel rank of a dense decoder layer (hidden ``H``, query heads ``h``, KV heads ``g``, head
dim ``d``, MLP width ``I``, vocabulary ``V``, ``t`` GPUs) runs, for ``m`` tokens::

    gemms(m) = G(m, (h + 2g) d / t, H) + G(m, H, h d / t) + G(m, 2 I / t, H) + G(m, H, I / t)
    comm(m)  = 2 x AR(t, m x H elements)                    (0 at t = 1)
    decode(b, ctx)  = L x (gemms(b) + gen_attn(b, ctx, h / t, g / t) + comm(b)) + G(b, V / t, H)
    tokens(m) = L x (gemms(m) + comm(m))
    prefill(new, isl, b) = chunks x (tokens(b + new / chunks) - tokens(b))
                           + L x (ctx_attn(1, isl) - ctx_attn(1, isl - new)) + G(1, V / t, H)

A mixture-of-experts layer (``E`` experts of width ``I_e``, ``k`` per token, ``s`` shared experts) replaces
the MLP's two GEMMs with the router's GEMM, the routed experts' measured time (dispatch, grouped GEMMs,
combine; ``MoE``, by tokens and GPUs, the experts split by tensor parallelism where the tables hold that
GPU count, else by expert parallelism) and the shared experts' GEMMs::

    moe(m) = G(m, E, H) + MoE(m, t) + s x (G(m, 2 I_e / t, H) + G(m, H, I_e / t))

A model's first dense layers keep the MLP. A model with fewer KV heads than GPUs replicates them (one KV
head per GPU, as the engines do and as :func:`~finops.sizing.memory.kv_bytes_per_token_per_gpu` counts).

``chunks = ceil(new / budget)``: a prompt is split over steps of ``budget`` tokens (chunked prefill).
``b``: the sequences the steps decode meanwhile; a chunk joins their GEMMs (``tokens(0) = 0``: a prompt
alone, as at one client). Only the tokens beyond them cost more: the weights are read once a step.
Normalisation, rotary embedding, activation and sampling are not in the tables; the calibration's
per-step overhead carries them (``EngineConstants.kernel_step_overhead_us``). With the model's
dimensions applied, the terms are laid on grids common to every GPU (:class:`ModelKernels`), which the
replica physics carries, so that a search's candidate rows stack. The same composition as AIConfigurator's (per-op latencies of one
layer, summed over layers), written from its documentation and data layout, not its code. Models with
grouped-query attention of head dim 128 and no sliding window, dense or mixture-of-experts (where the
tables hold their expert shape), at BF16/FP16 or FP8 weights, on a GPU and engine the tables hold are
covered (:func:`step_kernels`); anything else (MLA, another head dim, a sliding window) returns ``None``
and the caller keeps the roofline.

>>> from finops.catalog import get_model
>>> k = step_kernels(get_model("llama-3.1-8b"), "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=1)
>>> 5 < float(k.decode(1, 1024)) * 1e3 < 12, 30 < float(k.prefill(2048, 2048, 8192)) * 1e3 < 100
(True, True)
>>> step_kernels(get_model("llama-3.1-8b"), "mi300x", engine="vllm", precision="bf16", kv_precision="bf16", tp=1) is None
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product
from typing import Any

import numpy as np

from ..catalog import ModelSpec

__all__ = ["KernelTable", "ModelKernels", "decode_seconds", "expert_table", "kernel_gpus", "prefill_seconds", "step_kernels",
           "tables_meta"]

#: Weight (GEMM) and KV-cache precisions the tables hold, by our names.
GEMM_PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8"}
#: How the routed experts are split over the GPUs, in order of preference: tensor parallelism (each GPU a
#: slice of every expert, the engines' default), then expert parallelism (each GPU whole experts).
EXPERT_LAYOUTS = ("tp", "ep")
KV_PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8"}
HEAD_DIM = 128


class KernelTable:
    """Log latency (ms) on a rectilinear grid; :meth:`__call__` gives seconds at any point."""

    def __init__(self, log_ms: np.ndarray, axes: Sequence[np.ndarray]) -> None:
        self.log_ms = np.asarray(log_ms, dtype=float)
        self.flat = self.log_ms.ravel()
        self.axes = tuple(np.asarray(a, dtype=float) for a in axes)
        self.log_axes = tuple(np.log(a) for a in self.axes)
        self.strides = np.array([int(np.prod(self.log_ms.shape[i + 1:])) for i in range(self.log_ms.ndim)])
        # the 2^d corners of a grid cell: their offsets along each axis (0 where an axis has one point)
        steps = [(0, 1) if len(a) > 1 else (0,) for a in self.axes]
        self.corners = np.array(list(product(*steps)), dtype=int).reshape(-1, len(self.axes))

    def __call__(self, *points: Any) -> Any:
        """Latency in seconds at ``points`` (one array per axis; they broadcast), module rule."""
        if len(points) == 1:   # the common case, in one C call
            x = np.asarray(points[0], dtype=float)
            axis = self.axes[0]
            out = np.exp(np.interp(np.log(np.maximum(x, axis[0])), self.log_axes[0], self.flat)) \
                * np.maximum(x / axis[-1], 1.0) * 1e-3
            return out if out.ndim else float(out)
        q = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in points))
        scale = np.ones(q[0].shape)
        offset = np.zeros(q[0].shape, dtype=int)
        fracs = np.zeros((len(self.axes),) + q[0].shape)
        for d, (axis, la, x, stride) in enumerate(zip(self.axes, self.log_axes, q, self.strides)):
            scale = scale * np.maximum(x / axis[-1], 1.0)
            if len(axis) == 1:
                continue
            lx = np.log(np.minimum(np.maximum(x, axis[0]), axis[-1]))
            i = np.minimum(np.maximum(np.searchsorted(la, lx, side="right") - 1, 0), len(axis) - 2)
            offset = offset + i * stride
            fracs[d] = (lx - la[i]) / (la[i + 1] - la[i])
        extra = (1,) * q[0].ndim
        up = self.corners.reshape(self.corners.shape + extra).astype(bool)
        weight = np.where(up, fracs[None], 1.0 - fracs[None]).prod(axis=1)
        at = offset[None] + (self.corners @ self.strides).reshape((-1,) + extra)
        total = (weight * self.flat[at]).sum(axis=0)
        out = np.exp(total) * scale * 1e-3
        return out if out.ndim else float(out)


@cache
def _archive(gpu: str) -> Mapping[str, np.ndarray] | None:
    source = resources.files("finops").joinpath("data", "kernels", f"{gpu}.npz")
    if not source.is_file():
        return None
    with source.open("rb") as f:
        data = np.load(f, allow_pickle=False)
        return {name: data[name] for name in data.files}


@cache
def kernel_gpus() -> tuple[str, ...]:
    """Catalog ids of the GPUs with kernel tables."""
    folder = resources.files("finops").joinpath("data", "kernels")
    return tuple(sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".npz")))


def tables_meta(gpu: str) -> dict[str, Any] | None:
    """Source, package version, date and per-op engine versions of one GPU's tables."""
    data = _archive(gpu)
    return None if data is None else json.loads(str(data["meta"]))


@cache
def _table(gpu: str, name: str) -> KernelTable | None:
    data = _archive(gpu)
    if data is None or name not in data:
        return None
    prefix = f"{name}@"
    axes = tuple(np.asarray(data[k], dtype=float) for k in data if k.startswith(prefix))
    return KernelTable(log_ms=np.asarray(data[name], dtype=float), axes=axes)


def measured_allreduce_seconds(gpu: str, engine: str, tp: int, elements: float) -> float | None:
    """Seconds of one all-reduce of ``elements`` BF16 values over ``tp`` GPUs in ``engine``'s measured
    table on ``gpu``; ``None`` without one."""
    table = _table(gpu, f"{engine}/allreduce")
    return None if table is None else float(table(float(tp), float(elements)))


#: The grids the model-specific tables are laid on (the same for every GPU, so that the candidate rows of
#: a search stack into arrays): tokens per step 1-65,536 in quarter octaves, decode batch 1-2,048 x KV
#: length 1-131,072 and prompt length 1-16,384 in octaves.
TOKEN_GRID = np.unique(np.round(2.0 ** np.arange(0.0, 16.01, 0.25)))
BATCH_GRID = 2.0 ** np.arange(0, 12)
LENGTH_GRID = 2.0 ** np.arange(0, 18)
PROMPT_GRID = 2.0 ** np.arange(0, 15)
_LOG = {id(g): np.log(g) for g in (TOKEN_GRID, BATCH_GRID, LENGTH_GRID, PROMPT_GRID)}   # grid -> its logs


def _place(grid: np.ndarray, x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell index, weight of its upper neighbour (log coordinates) and the scale beyond the grid's top."""
    x = np.asarray(x, dtype=float)
    log = _LOG[id(grid)]
    lx = np.log(np.minimum(np.maximum(x, grid[0]), grid[-1]))
    i = np.minimum(np.maximum(np.searchsorted(log, lx, side="right") - 1, 0), len(grid) - 2)
    return i, (lx - log[i]) / (log[i + 1] - log[i]), np.maximum(x / grid[-1], 1.0)


def _gather(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[..., index]`` row by row: ``table`` (rows..., cells) with rows broadcasting against ``index``."""
    if table.ndim == 1:   # one configuration (an estimate): plain indexing
        return table[index]
    if index.shape == table.shape[:-1]:
        return np.take_along_axis(table, index[..., None], axis=-1)[..., 0]
    shape = np.broadcast_shapes(table.shape[:-1], index.shape)
    rows = np.broadcast_to(table, shape + table.shape[-1:])
    return np.take_along_axis(rows, np.broadcast_to(index, shape)[..., None], axis=-1)[..., 0]


def _line(table: np.ndarray, grid: np.ndarray, x: Any) -> np.ndarray:
    """Seconds from a log-ms table on ``grid`` (last axis), interpolated in log-log, linear beyond the top."""
    i, f, scale = _place(grid, x)
    low, high = _gather(table, i), _gather(table, i + 1)
    return np.exp(low + f * (high - low)) * scale * 1e-3


def decode_seconds(decode_tokens: Any, generation: Any, batch: Any, ctx: Any) -> Any:
    """One decode step: ``decode_tokens(b)`` (GEMMs, all-reduces, logits) plus ``L x gen_attn(b, ctx)``
    (``generation``: log ms on BATCH_GRID x LENGTH_GRID, flattened); arrays broadcast by row."""
    b = np.maximum(np.asarray(batch, dtype=float), 1.0)
    i, f, over_b = _place(BATCH_GRID, b)
    j, g, over_s = _place(LENGTH_GRID, ctx)
    n = len(LENGTH_GRID)
    attention = 0.0
    for di, wi in ((0, 1.0 - f), (1, f)):
        for dj, wj in ((0, 1.0 - g), (1, g)):
            attention = attention + wi * wj * _gather(generation, (i + di) * n + j + dj)
    return _line(decode_tokens, TOKEN_GRID, b) + np.exp(attention) * over_b * over_s * 1e-3


def prefill_seconds(tokens: Any, context: Any, last_logits: Any, new: Any, isl: Any, budget: Any,
                    batch: Any = 0.0) -> Any:
    """One prompt's prefill (module formula): ``new`` uncached tokens of ``isl`` in chunks of ``budget``,
    beside ``batch`` decoding sequences (0: alone); prefill attention beyond the grid grows as seq^2."""
    new = np.maximum(np.asarray(new, dtype=float), 1.0)
    chunks = np.maximum(np.ceil(new / np.asarray(budget, dtype=float)), 1.0)
    b = np.asarray(batch, dtype=float)
    with_chunk = _line(tokens, TOKEN_GRID, b + new / chunks)
    base = np.where(b > 0.0, _line(tokens, TOKEN_GRID, np.maximum(b, 1.0)), 0.0)
    isl = np.asarray(isl, dtype=float)
    top = PROMPT_GRID[-1]

    def attention(seq: np.ndarray) -> np.ndarray:
        inside = _line(context, PROMPT_GRID, np.minimum(np.maximum(seq, 1.0), top))
        return np.where(seq >= 1.0, inside * np.maximum(seq / top, 1.0) ** 2, 0.0)
    return (chunks * np.maximum(with_chunk - base, 0.0) + np.maximum(attention(isl) - attention(isl - new), 0.0)
            + last_logits)


@dataclass(frozen=True)
class ModelKernels:
    """One model on one TP group of one GPU under one engine, the model's dimensions applied: log-ms
    tables on the module grids, so that a query is a few look-ups (and rows of a search stack)."""

    decode_tokens: np.ndarray   # tokens(m) + G(m, V / t, H) on TOKEN_GRID: a decode step's GEMMs and logits
    tokens: np.ndarray          # tokens(m) = L x (gemms(m) + comm(m)) on TOKEN_GRID
    generation: np.ndarray      # L x gen_attn(b, seq) on BATCH_GRID x LENGTH_GRID, flattened
    context: np.ndarray         # L x ctx_attn(1, seq) on PROMPT_GRID
    last_logits: float          # G(1, V / t, H) in seconds: a prompt's first token

    @classmethod
    def of(cls, model: ModelSpec, tp: int, gemm: KernelTable, context: KernelTable, generation: KernelTable,
           allreduce: KernelTable | None, experts: KernelTable | None = None) -> ModelKernels:
        """Apply the model's dimensions (module formulas) to the full tables; ``experts``: the routed
        experts' times on axes tokens x GPUs (:func:`expert_table`) of a mixture-of-experts model."""
        d, h, hidden = model.head_dim, model.num_attention_heads / tp, model.hidden_size
        g = math.ceil(model.num_kv_heads / tp)   # replicated once the GPUs outnumber the KV heads
        m = TOKEN_GRID[:, None]
        width = model.moe_intermediate_size or model.intermediate_size
        # GEMMs (n, k): QKV, attention output, MLP up+gate, MLP down, logits; router, shared up+gate, shared down
        n = np.array([(h + 2 * g) * d, hidden, 2.0 * model.intermediate_size / tp, hidden, model.vocab_size / tp,
                      model.num_experts or 1, 2.0 * width / tp, hidden])
        k = np.array([hidden, h * d, hidden, model.intermediate_size / tp, hidden, hidden, hidden, width / tp])
        times = gemm(m, n[None, :], k[None, :])
        # the tables' message size counts BF16 elements: m tokens of H activations
        comm = 0.0 if allreduce is None else 2.0 * allreduce(float(tp), TOKEN_GRID * hidden)
        attention_gemms, mlp = times[:, :2].sum(axis=1), times[:, 2:4].sum(axis=1)
        routed_layers = 0 if experts is None else model.layers - (model.first_dense_layers or 0)
        routed = 0.0 if experts is None else (times[:, 5] + experts(TOKEN_GRID, float(tp))
                                             + (model.shared_experts or 0) * times[:, 6:8].sum(axis=1))
        tokens = (model.layers * (attention_gemms + comm) + (model.layers - routed_layers) * mlp
                  + routed_layers * routed)
        attention = model.layers * generation(BATCH_GRID[:, None], LENGTH_GRID[None, :], h, g)
        log_ms = lambda seconds: np.log(np.maximum(seconds, 1e-12) * 1e3)
        return cls(decode_tokens=log_ms(tokens + times[:, 4]), tokens=log_ms(tokens),
                   generation=log_ms(attention).ravel(),
                   context=log_ms(model.layers * context(1.0, PROMPT_GRID, h, g)),
                   last_logits=float(gemm(1.0, n[4], k[4])))

    @classmethod
    def uncovered(cls) -> ModelKernels:
        """NaN tables of the grids' shapes: the kernels of a configuration the tables do not cover."""
        tokens = np.full(len(TOKEN_GRID), np.nan)
        return cls(decode_tokens=tokens, tokens=tokens, generation=np.full(len(BATCH_GRID) * len(LENGTH_GRID), np.nan),
                   context=np.full(len(PROMPT_GRID), np.nan), last_logits=float("nan"))

    def decode(self, batch: Any, ctx: Any) -> Any:
        """Seconds of one decode step of ``batch`` sequences at mean context ``ctx``."""
        return decode_seconds(self.decode_tokens, self.generation, batch, ctx)

    def prefill(self, new: Any, isl: Any, budget: Any, batch: Any = 0.0) -> Any:
        """Seconds of one prompt's prefill (:func:`prefill_seconds`)."""
        return prefill_seconds(self.tokens, self.context, self.last_logits, new, isl, budget, batch)


def expert_table(model: ModelSpec, gpu: str, *, engine: str, precision: str, tp: int,
                 expert_parallel: bool = False) -> KernelTable | None:
    """The routed experts' times of ``model`` on ``tp`` GPUs (axes tokens x GPUs): split by tensor
    parallelism (``expert_parallel``: by expert parallelism) where the tables measured that GPU count,
    else the other way; ``None`` where the tables hold neither (another expert shape, precision or GPU
    count)."""
    precision_key = GEMM_PRECISIONS.get(precision)
    shape = f"{model.hidden_size}x{model.moe_intermediate_size}x{model.experts_per_token}x{model.num_experts}"
    for layout in (EXPERT_LAYOUTS[::-1] if expert_parallel else EXPERT_LAYOUTS):
        table = _table(gpu, f"{engine}/moe/{precision_key}/{shape}/{layout}")
        if table is not None and float(tp) in table.axes[1]:
            return table
    return None


@cache
def step_kernels(model: ModelSpec, gpu: str, *, engine: str, precision: str, kv_precision: str,
                 tp: int, expert_parallel: bool = False) -> ModelKernels | None:
    """The kernels of this configuration, or ``None`` where the tables do not cover it (another GPU,
    engine or precision, an MLA model, a head dim other than 128, sliding window, an expert shape or
    layout the tables do not hold, KV heads that neither divide nor are divided by ``tp``).
    ``expert_parallel``: a mixture-of-experts model's experts are split by expert parallelism."""
    gemm_p, kv_p = GEMM_PRECISIONS.get(precision), KV_PRECISIONS.get(kv_precision)
    kv_heads = model.num_kv_heads
    if (gemm_p is None or kv_p is None or model.attention == "mla" or model.head_dim != HEAD_DIM
            or model.sliding_window or model.num_attention_heads % tp or (kv_heads % tp and tp % kv_heads)):
        return None
    gemm, context, generation = (_table(gpu, f"{engine}/{name}")
                                 for name in (f"gemm/{gemm_p}", f"context/{kv_p}", f"generation/{kv_p}"))
    allreduce = _table(gpu, f"{engine}/allreduce") if tp > 1 else None
    experts = (expert_table(model, gpu, engine=engine, precision=precision, tp=tp, expert_parallel=expert_parallel)
               if model.is_moe else None)
    if (gemm is None or context is None or generation is None or (tp > 1 and allreduce is None)
            or (model.is_moe and experts is None)):
        return None
    return ModelKernels.of(model, tp, gemm, context, generation, allreduce, experts)
