"""Step times of a continuous-batching engine composed from measured kernel latencies.

The tables in ``finops/data/kernels/<gpu>.npz`` are NVIDIA AIConfigurator's measurements of single
kernels (aiconfigurator-core 0.12, Apache-2.0, written by ``scripts/derive_kernel_tables.py``; see
NOTICE): GEMM latency by ``(m, n, k)`` and dtype, context and generation attention by batch, sequence
length, query and KV heads (head dim 128) and KV dtype, and all-reduce by GPUs and message bytes, per
engine and GPU. A value between grid points is interpolated multilinearly in log latency over log
coordinates; below the grid it is clamped, above it scaled linearly (latency grows in proportion to
tokens, heads or bytes once a kernel fills the GPU).

One tensor-parallel rank of a dense decoder layer (hidden ``H``, query heads ``h``, KV heads ``g``, head
dim ``d``, MLP width ``I``, vocabulary ``V``, ``t`` GPUs) runs, for ``m`` tokens::

    gemms(m) = G(m, (h + 2g) d / t, H) + G(m, H, h d / t) + G(m, 2 I / t, H) + G(m, H, I / t)
    comm(m)  = 2 x AR(t, m x H x 2 bytes)                   (0 at t = 1)
    decode(b, ctx)  = L x (gemms(b) + gen_attn(b, ctx, h / t, g / t) + comm(b)) + G(b, V / t, H)
    prefill(new, isl) = L x (chunks x (gemms(new / chunks) + comm(new / chunks))
                             + ctx_attn(1, isl) - ctx_attn(1, isl - new)) + G(1, V / t, H)

``chunks = ceil(new / budget)``: a prompt is split over steps of ``budget`` tokens (chunked prefill).
Normalisation, rotary embedding, activation and sampling are not in the tables; the calibration's
per-layer step overhead carries them. The same composition as AIConfigurator's (per-op latencies of one
layer, summed over layers), written from its documentation and data layout, not its code. Dense models
with head dim 128 and no sliding window, at BF16/FP16 or FP8 weights, on a GPU and engine the tables
hold are covered (:func:`step_kernels`); anything else returns ``None`` and the caller keeps the roofline.

>>> from finops.catalog import get_model
>>> k = step_kernels(get_model("llama-3.1-8b"), "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=1)
>>> 5 < float(k.decode(1, 1024)) * 1e3 < 12, 0.05 < float(k.prefill(2048, 2048, 8192)) < 0.3
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


@dataclass(frozen=True)
class KernelTable:
    """Log latency (ms) on a rectilinear grid; :meth:`__call__` gives seconds at any point."""

    log_ms: np.ndarray
    axes: tuple[np.ndarray, ...]

    def __call__(self, *points: Any) -> Any:
        """Latency in seconds at ``points`` (one array per axis; they broadcast), module rule."""
        q = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in points))
        scale = np.ones(q[0].shape)
        index, weight = [], []
        for axis, x in zip(self.axes, q):
            top = axis[-1]
            scale = scale * np.maximum(x / top, 1.0)
            lx = np.log(np.clip(x, axis[0], top))
            la = np.log(axis)
            i = np.clip(np.searchsorted(la, lx, side="right") - 1, 0, max(len(axis) - 2, 0))
            if len(axis) == 1:
                index.append(np.zeros(lx.shape, dtype=int))
                weight.append(np.zeros(lx.shape))
                continue
            index.append(i)
            weight.append((lx - la[i]) / (la[i + 1] - la[i]))
        total = np.zeros(q[0].shape)
        for corner in product((0, 1), repeat=len(self.axes)):
            w = np.ones(q[0].shape)
            at = []
            for up, i, f, axis in zip(corner, index, weight, self.axes):
                w = w * (f if up else 1.0 - f)
                at.append(np.minimum(i + up, len(axis) - 1))
            total = total + w * self.log_ms[tuple(at)]
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


@dataclass(frozen=True)
class StepKernels:
    """One model on one TP group of one GPU under one engine: the module formulas."""

    gemm: KernelTable
    context: KernelTable
    generation: KernelTable
    allreduce: KernelTable | None
    layers: int
    hidden: int
    q_heads: float          # query heads per GPU
    kv_heads: float         # KV heads per GPU
    qkv_width: float        # (h + 2 g) d / t
    o_width: float          # h d / t
    mlp_width: float        # I / t
    vocab_width: float      # V / t
    tp: int

    def _gemms(self, m: Any) -> Any:
        h = self.hidden
        return (self.gemm(m, self.qkv_width, h) + self.gemm(m, h, self.o_width)
                + self.gemm(m, 2.0 * self.mlp_width, h) + self.gemm(m, h, self.mlp_width))

    def _comm(self, m: Any) -> Any:
        if self.allreduce is None:
            return 0.0
        return 2.0 * self.allreduce(self.tp, np.asarray(m, dtype=float) * self.hidden * 2.0)

    def decode(self, batch: Any, ctx: Any) -> Any:
        """Seconds of one decode step of ``batch`` sequences at mean context ``ctx``."""
        b = np.maximum(np.asarray(batch, dtype=float), 1.0)
        attention = self.generation(b, ctx, self.q_heads, self.kv_heads)
        return self.layers * (self._gemms(b) + attention + self._comm(b)) + self.gemm(b, self.vocab_width, self.hidden)

    def _context(self, seq: Any) -> Any:
        seq = np.asarray(seq, dtype=float)
        return np.where(seq >= 1.0, self.context(1.0, np.maximum(seq, 1.0), self.q_heads, self.kv_heads), 0.0)

    def prefill(self, new: Any, isl: Any, budget: Any) -> Any:
        """Seconds of one prompt's prefill: ``new`` uncached tokens of ``isl``, ``budget`` tokens a step."""
        new = np.maximum(np.asarray(new, dtype=float), 1.0)
        chunks = np.maximum(np.ceil(new / np.asarray(budget, dtype=float)), 1.0)
        m = new / chunks
        attention = self._context(isl) - self._context(np.asarray(isl, dtype=float) - new)
        return (self.layers * (chunks * (self._gemms(m) + self._comm(m)) + np.maximum(attention, 0.0))
                + self.gemm(1.0, self.vocab_width, self.hidden))


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
    tables = [_table(gpu, f"{source}/{name}") for name in (f"gemm/{gemm_p}", f"context/{kv_p}", f"generation/{kv_p}")]
    allreduce = _table(gpu, f"{source}/allreduce") if tp > 1 else None
    if any(t is None for t in tables) or (tp > 1 and allreduce is None):
        return None
    gemm, context, generation = tables
    d = model.head_dim
    return StepKernels(gemm=gemm, context=context, generation=generation, allreduce=allreduce,  # type: ignore[arg-type]
                       layers=model.layers, hidden=model.hidden_size, q_heads=model.num_attention_heads / tp,
                       kv_heads=model.num_kv_heads / tp,
                       qkv_width=(model.num_attention_heads + 2 * model.num_kv_heads) * d / tp,
                       o_width=model.num_attention_heads * d / tp, mlp_width=model.intermediate_size / tp,
                       vocab_width=model.vocab_size / tp, tp=tp)


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

    def prefill(self, new: Any, isl: Any, budget: Any) -> np.ndarray:
        return self._each("prefill", new, isl, budget)
