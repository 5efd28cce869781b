"""Step times of a continuous-batching engine composed from measured kernel latencies.

The tables in ``finops/data/kernels/<gpu>.npz`` are NVIDIA AIConfigurator's measurements of single
kernels (aiconfigurator-core 0.12, Apache-2.0, written by ``scripts/derive_kernel_tables.py``; see
NOTICE): GEMM latency by ``(m, n, k)`` and dtype, context and generation attention by batch, sequence
length, query and KV heads (head dim 128) and KV dtype, and all-reduce by GPUs and message bytes, per
engine and GPU. A value between grid points is interpolated multilinearly in log latency over log
coordinates; below the grid it is clamped, above it scaled linearly (latency grows in proportion to
tokens, heads or bytes once a kernel fills the GPU), except prefill attention beyond the longest
measured prompt (16,384 tokens), which grows with the square of the prompt.

One tensor-parallel rank of a dense decoder layer (hidden ``H``, query heads ``h``, KV heads ``g``, head
dim ``d``, MLP width ``I``, vocabulary ``V``, ``t`` GPUs) runs, for ``m`` tokens::

    gemms(m) = G(m, (h + 2g) d / t, H) + G(m, H, h d / t) + G(m, 2 I / t, H) + G(m, H, I / t)
    comm(m)  = 2 x AR(t, m x H x 2 bytes)                   (0 at t = 1)
    decode(b, ctx)  = L x (gemms(b) + gen_attn(b, ctx, h / t, g / t) + comm(b)) + G(b, V / t, H)
    tokens(m) = L x (gemms(m) + comm(m))
    prefill(new, isl, b) = chunks x (tokens(b + new / chunks) - tokens(b))
                           + L x (ctx_attn(1, isl) - ctx_attn(1, isl - new)) + G(1, V / t, H)

``chunks = ceil(new / budget)``: a prompt is split over steps of ``budget`` tokens (chunked prefill).
``b``: the sequences the steps decode meanwhile; a chunk joins their GEMMs (``tokens(0) = 0``: a prompt
alone, as at one client). Only the tokens beyond them cost more: the weights are read once a step.
Normalisation, rotary embedding, activation and sampling are not in the tables; the calibration's
per-layer step overhead carries them. The same composition as AIConfigurator's (per-op latencies of one
layer, summed over layers), written from its documentation and data layout, not its code. Dense models
with head dim 128 and no sliding window, at BF16/FP16 or FP8 weights, on a GPU and engine the tables
hold are covered (:func:`step_kernels`); anything else returns ``None`` and the caller keeps the roofline.

>>> from finops.catalog import get_model
>>> k = step_kernels(get_model("llama-3.1-8b"), "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=1)
>>> 5 < float(k.decode(1, 1024)) * 1e3 < 12, 30 < float(k.prefill(2048, 2048, 8192)) * 1e3 < 100
(True, True)
>>> step_kernels(get_model("llama-3.1-8b"), "mi300x", engine="vllm", precision="bf16", kv_precision="bf16", tp=1) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product
from typing import Any

import numpy as np

from ..catalog import ModelSpec

__all__ = ["KernelTable", "RowKernels", "StepKernels", "kernel_gpus", "step_kernels", "tables_meta"]

#: Weight (GEMM) and KV-cache precisions the tables hold, by our names.
GEMM_PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8"}
KV_PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8"}
HEAD_DIM = 128
#: Engine -> the engine whose tables time its kernels.
TABLES_OF = {"trtllm": "trtllm", "vllm": "vllm", "sglang": "sglang"}


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


def _reduced(seconds: np.ndarray, *axes: np.ndarray) -> KernelTable:
    return KernelTable(np.log(np.maximum(seconds, 1e-12) * 1e3), axes)


@dataclass(frozen=True)
class StepKernels:
    """One model on one TP group of one GPU under one engine: the module formulas, with the model's
    dimensions already applied (tables on the tables' own grids of tokens, batch and sequence length,
    so that a query is three small look-ups)."""

    tokens: KernelTable       # L x (gemms(m) + comm(m)) on the GEMM table's m grid
    decode_tokens: KernelTable   # tokens(m) + G(m, V / t, H): a decode step's GEMMs, logits included
    generation: KernelTable   # L x gen_attn(b, seq) on the generation table's batch x sequence grid
    context: KernelTable      # L x ctx_attn(1, seq) on the context table's sequence grid
    last_logits: float        # G(1, V / t, H): a prompt's first token

    @classmethod
    def of(cls, model: ModelSpec, tp: int, gemm: KernelTable, context: KernelTable, generation: KernelTable,
           allreduce: KernelTable | None) -> StepKernels:
        """Apply the model's dimensions (module formulas) to the full tables."""
        d, h, g, hidden = model.head_dim, model.num_attention_heads / tp, model.num_kv_heads / tp, model.hidden_size
        m = gemm.axes[0][:, None]
        n = np.array([(h + 2 * g) * d, hidden, 2.0 * model.intermediate_size / tp, hidden, model.vocab_size / tp])
        k = np.array([hidden, h * d, hidden, model.intermediate_size / tp, hidden])
        times = gemm(m, n[None, :], k[None, :])
        comm = 0.0 if allreduce is None else 2.0 * allreduce(float(tp), m[:, 0] * hidden * 2.0)
        layers = model.layers
        batch, seq = generation.axes[0][:, None], generation.axes[1][None, :]
        tokens = layers * (times[:, :4].sum(axis=1) + comm)
        return cls(tokens=_reduced(tokens, m[:, 0]), decode_tokens=_reduced(tokens + times[:, 4], m[:, 0]),
                   last_logits=float(gemm(1.0, n[4], k[4])),
                   generation=_reduced(layers * generation(batch, seq, h, g), generation.axes[0], generation.axes[1]),
                   context=_reduced(layers * context(1.0, context.axes[1], h, g), context.axes[1]))

    def decode(self, batch: Any, ctx: Any) -> Any:
        """Seconds of one decode step of ``batch`` sequences at mean context ``ctx``."""
        b = np.maximum(np.asarray(batch, dtype=float), 1.0)
        return self.decode_tokens(b) + self.generation(b, ctx)

    def _context(self, seq: Any) -> Any:
        """Prefill attention over ``seq`` tokens; beyond the table's longest prompt it grows as seq^2."""
        seq = np.asarray(seq, dtype=float)
        top = self.context.axes[0][-1]
        inside = self.context(np.minimum(np.maximum(seq, 1.0), top))
        return np.where(seq >= 1.0, inside * np.maximum(seq / top, 1.0) ** 2, 0.0)

    def prefill(self, new: Any, isl: Any, budget: Any, batch: Any = 0.0) -> Any:
        """Seconds one prompt's prefill takes (``new`` uncached tokens of ``isl``, ``budget`` tokens a
        step) alone, or, with ``batch`` > 0, adds to steps that decode ``batch`` sequences: its chunks
        ride in the same GEMMs, so it costs ``tokens(batch + chunk) - tokens(batch)`` a chunk."""
        new = np.maximum(np.asarray(new, dtype=float), 1.0)
        chunks = np.maximum(np.ceil(new / np.asarray(budget, dtype=float)), 1.0)
        b = np.asarray(batch, dtype=float)
        with_chunk, alone = self.tokens(np.stack(np.broadcast_arrays(b + new / chunks, np.maximum(b, 1.0))))
        base = np.where(b > 0.0, alone, 0.0)
        isl = np.asarray(isl, dtype=float)
        whole, cached = self._context(np.stack(np.broadcast_arrays(isl, isl - new)))
        return chunks * np.maximum(with_chunk - base, 0.0) + np.maximum(whole - cached, 0.0) + self.last_logits


@cache
def step_kernels(model: ModelSpec, gpu: str, *, engine: str, precision: str, kv_precision: str,
                 tp: int) -> StepKernels | None:
    """The kernels of this configuration, or ``None`` where the tables do not cover it (another GPU,
    engine or precision, a mixture-of-experts or MLA model, a head dim other than 128, sliding window)."""
    gemm_p, kv_p = GEMM_PRECISIONS.get(precision), KV_PRECISIONS.get(kv_precision)
    if (gemm_p is None or kv_p is None or model.is_moe or model.attention == "mla" or model.head_dim != HEAD_DIM
            or model.sliding_window or model.num_attention_heads % tp or model.num_kv_heads % tp):
        return None
    source = TABLES_OF.get(engine, engine)
    gemm, context, generation = (_table(gpu, f"{source}/{name}")
                                 for name in (f"gemm/{gemm_p}", f"context/{kv_p}", f"generation/{kv_p}"))
    allreduce = _table(gpu, f"{source}/allreduce") if tp > 1 else None
    if gemm is None or context is None or generation is None or (tp > 1 and allreduce is None):
        return None
    return StepKernels.of(model, tp, gemm, context, generation, allreduce)


class RowKernels:
    """Kernels of many rows at once (one :class:`StepKernels` per row, rows grouped by configuration),
    with the interface of :class:`StepKernels`; arguments are arrays over the rows."""

    def __init__(self, per_row: Sequence[StepKernels]) -> None:
        self.size = len(per_row)
        groups: dict[int, tuple[StepKernels, list[int]]] = {}
        for i, k in enumerate(per_row):
            groups.setdefault(id(k), (k, []))[1].append(i)
        self.groups = [(k, np.array(rows)) for k, rows in groups.values()]
        self._seen: dict[tuple[Any, ...], np.ndarray] = {}

    def _each(self, method: str, *args: Any) -> np.ndarray:
        full = [np.broadcast_to(np.asarray(a, dtype=float), (self.size,)) for a in args]
        key = (method, *(a.tobytes() for a in full))
        if key not in self._seen:   # a fit asks the same points at every iteration: the kernels are fixed
            out = np.empty(self.size)
            for k, rows in self.groups:
                out[rows] = getattr(k, method)(*(a[rows] for a in full))
            self._seen[key] = out
        return self._seen[key]

    def decode(self, batch: Any, ctx: Any) -> np.ndarray:
        return self._each("decode", batch, ctx)

    def prefill(self, new: Any, isl: Any, budget: Any, batch: Any = 0.0) -> np.ndarray:
        return self._each("prefill", new, isl, budget, batch)
