"""GPU memory: weights by precision, the KV cache, and how many sequences fit in a replica.

A serving replica of ``tp`` GPUs holds, on every GPU (vLLM's accounting, see its
``gpu_memory_utilization`` documentation)::

    usable   = gpu_memory_gib x gpu_memory_utilization
    kv_budget = usable - weights / tp - runtime_overhead          (per GPU)
    max_concurrency = floor(kv_budget / kv_per_sequence_per_gpu)

Weights: FP32 4 bytes, BF16/FP16 2, FP8/INT8 1, INT4 0.5 + one FP16 scale per group of 128 weights
(AWQ/GPTQ/ModelOpt INT4 default group size). Under FP8/INT8/INT4 the token embedding and the LM head
stay 16-bit, as NVIDIA ModelOpt exports them; that is why seed 002 finds Llama-3.1-8B at 16.06 GB in
BF16 and 9.08 GB in FP8 (-43.5 %, not -50 %).

KV cache per token, all layers: GQA/MHA ``2 x layers x kv_heads x head_dim x bytes`` (K and V);
MLA (DeepSeek-V2/V3) caches one compressed latent plus the decoupled RoPE key per layer,
``(kv_lora_rank + qk_rope_head_dim) x layers x bytes``. A model whose every layer uses a sliding
window keeps at most ``sliding_window`` tokens per sequence. Seed 003's naive formula
``2 x L x d_model x s x b x p`` (:func:`naive_kv_bytes`) assumes full multi-head attention, which
overstates a GQA model's cache by ``heads / kv_heads`` (4x for Llama-3.1-8B).

>>> from finops.catalog import get_model
>>> m = get_model("llama-3.1-8b")
>>> round(weight_bytes(m, "bf16") / 1e9, 2), round(weight_bytes(m, "fp8") / 1e9, 2)
(16.06, 9.08)
>>> kv_bytes_per_token(m)
131072.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from ..catalog import Accelerator, ModelSpec, get_accelerator, resolve_model
from ..errors import InputError

__all__ = [
    "DEFAULT_KV_PRECISION",
    "DEFAULT_RUNTIME_OVERHEAD_GIB",
    "INT4_GROUP_SIZE",
    "KV_BLOCK_TOKENS",
    "KV_PRECISIONS",
    "PRECISIONS",
    "MemoryFit",
    "Precision",
    "bytes_per_param",
    "check_context",
    "embedding_params",
    "head_padding_bytes",
    "kv_bytes",
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "kv_slots",
    "kv_tokens_per_sequence",
    "memory_fit",
    "model_kv_precision",
    "naive_kv_bytes",
    "padded_query_heads",
    "sequence_tokens",
    "tp_ranks",
    "tp_shards_heads",
    "weight_bytes",
    "weight_bytes_per_gpu",
]

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
# KV caches are kept in 16 bit, or 8 bit with a per-tensor scale (vLLM/TRT-LLM ``kv_cache_dtype``).
KV_PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16", "fp8", "int8")
#: The cache engines keep unless told (vLLM ``kv_cache_dtype="auto"``: the model's 16-bit dtype) ...
DEFAULT_KV_PRECISION = "bf16"
#: ... except under FP32 weights, whose cache stays FP32.
_KV_PRECISION_OF_WEIGHTS: dict[str, str] = {"fp32": "fp32"}

INT4_GROUP_SIZE = 128
_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0,
                            "int4": 0.5 + 2.0 / INT4_GROUP_SIZE}
# Quantized checkpoints keep embeddings and LM head at 16 bit (NVIDIA ModelOpt, AWQ, GPTQ).
_QUANTIZED = ("fp8", "int8", "int4")

# vLLM pages the KV cache in blocks of 16 tokens; a sequence occupies whole blocks.
KV_BLOCK_TOKENS = 16
# Per GPU, outside weights and KV: CUDA context (~0.5 GiB), CUDA graphs (~0.5 GiB), activation peak at
# the default 8192 batched tokens and NCCL buffers (~1 GiB). Measure yours and pass it in.
DEFAULT_RUNTIME_OVERHEAD_GIB = 2.0
_GIB = 2.0 ** 30


def _check_precision(precision: str, accepted: tuple[str, ...], what: str) -> str:
    p = str(precision).strip().lower()
    if p not in accepted:
        raise InputError(f"unknown {what} {precision!r}", hint=f"use one of: {', '.join(accepted)}")
    return p


def bytes_per_param(precision: str) -> float:
    """Bytes per weight. INT4 adds one FP16 scale per group of 128 weights: 0.5 + 2/128.

    >>> [bytes_per_param(p) for p in PRECISIONS]
    [4.0, 2.0, 2.0, 1.0, 1.0, 0.515625]
    """
    return _BYTES[_check_precision(precision, PRECISIONS, "precision")]


def embedding_params(model: ModelSpec) -> float:
    """Parameters in the token embedding and the LM head: ``vocab x hidden``, once if tied.

    >>> from finops.catalog import get_model
    >>> embedding_params(get_model("llama-3.1-8b")) / 1e9
    1.050673152
    """
    return float(model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2))


def weight_bytes(model: ModelSpec, precision: str) -> float:
    """Bytes of the whole model's weights; embeddings and LM head stay 16-bit under FP8/INT8/INT4.

    ``(total - embed) x bytes_per_param + embed x (2 if quantized else bytes_per_param)``.
    Source: seed 002 (Llama-3.1-8B 16.06 GB BF16 -> 9.08 GB FP8 with NVIDIA ModelOpt).

    >>> from finops.catalog import get_model
    >>> round(weight_bytes(get_model("llama-3.1-70b"), "int4") / 1e9, 1)
    39.5
    """
    p = _check_precision(precision, PRECISIONS, "precision")
    total = model.total_params_b * 1e9
    embed = min(embedding_params(model), total)
    embed_bytes = 2.0 if p in _QUANTIZED else _BYTES[p]
    return (total - embed) * _BYTES[p] + embed * embed_bytes


def model_kv_precision(precision: str) -> str:
    """The KV precision of a ``precision`` checkpoint served as it is: FP32 for FP32 weights, else BF16.

    >>> [model_kv_precision(p) for p in ("fp32", "bf16", "fp8")]
    ['fp32', 'bf16', 'bf16']
    """
    return _KV_PRECISION_OF_WEIGHTS.get(precision, DEFAULT_KV_PRECISION)


def kv_bytes_per_token(model: ModelSpec, kv_precision: str = DEFAULT_KV_PRECISION) -> float:
    """KV-cache bytes one token occupies across all layers of the whole model.

    GQA/MHA: ``2 x layers x kv_heads x head_dim x bytes``; MLA: ``(kv_lora_rank + qk_rope_head_dim)
    x layers x bytes`` (DeepSeek-V3 technical report, arXiv:2412.19437, section 2.1.1).

    >>> from finops.catalog import get_model
    >>> kv_bytes_per_token(get_model("llama-3.1-8b"))        # 128 KiB
    131072.0
    >>> kv_bytes_per_token(get_model("deepseek-v3"))          # (512 + 64) x 61 x 2
    70272.0
    """
    p = _check_precision(kv_precision, KV_PRECISIONS, "KV precision")
    if model.attention == "mla":
        if not model.kv_lora_rank:
            raise InputError(f"model {model.id!r} uses MLA but has no kv_lora_rank")
        per_layer = model.kv_lora_rank + (model.qk_rope_head_dim or 0)
    else:
        per_layer = 2 * model.num_kv_heads * model.head_dim
    return float(per_layer * model.layers * _BYTES[p])


def kv_bytes_per_token_per_gpu(model: ModelSpec, tp: int, kv_precision: str = DEFAULT_KV_PRECISION,
                               device: Accelerator | None = None) -> float:
    """KV bytes per token on each GPU (accelerator chip) of a TP group.

    GQA/MHA shard KV heads over ranks, replicating them once ``tp > kv_heads``:
    ``ceil(kv_heads / tp) / kv_heads`` of the whole. MLA's latent is shared by all heads, so every rank
    keeps all of it (vLLM; hence data-parallel attention for DeepSeek). On a ``device`` whose chip holds
    several ranks (:func:`tp_ranks`: NeuronCores), each of its ``units`` ranks keeps its share.

    >>> from finops.catalog import get_model, get_accelerator
    >>> m = get_model("llama-3.1-8b")
    >>> kv_bytes_per_token_per_gpu(m, 2), kv_bytes_per_token_per_gpu(m, 16)
    (65536.0, 16384.0)
    >>> kv_bytes_per_token_per_gpu(m, 12, device=get_accelerator("inferentia2"))   # 24 NeuronCores, 1 head each
    32768.0
    """
    _check_tp(tp, model, device)
    whole = kv_bytes_per_token(model, kv_precision)
    if model.attention == "mla":
        return whole
    units = device.tp_units_per_chip if device is not None else 1
    ranks = tp * units
    return units * whole * math.ceil(model.num_kv_heads / ranks) / model.num_kv_heads


def tp_ranks(device: Accelerator | None, tp: int) -> int:
    """The runtime's tensor-parallel degree on ``tp`` chips: ``tp`` GPUs, or ``tp x tp_units_per_chip``
    NeuronCores (two per Inferentia2 or Trainium1 chip, four logical ones per Trainium2 chip).

    >>> from finops.catalog import get_accelerator
    >>> tp_ranks(get_accelerator("h100-sxm"), 8), tp_ranks(get_accelerator("inferentia2"), 12)
    (8, 24)
    """
    return tp * (device.tp_units_per_chip if device is not None else 1)


def padded_query_heads(model: ModelSpec, ranks: int) -> int:
    """Query heads as a runtime that pads them computes them: the next multiple of the TP degree
    (transformers-neuronx and NxD Inference; 40 heads on 24 NeuronCores run as 48).

    >>> from finops.catalog import get_model
    >>> padded_query_heads(get_model("llama-2-13b"), 24), padded_query_heads(get_model("llama-3.1-8b"), 8)
    (48, 32)
    """
    return math.ceil(model.num_attention_heads / ranks) * ranks


def head_padding_bytes(model: ModelSpec, device: Accelerator, tp: int, precision: str) -> float:
    """Weight bytes a head-padding runtime adds to the whole group: the padded query heads' rows of the
    query and output projections, and the KV projections of heads replicated to reach every rank
    (``ranks x ceil(kv_heads / ranks) - kv_heads`` copies); 0 where the device does not pad or the degree
    divides the heads.

    >>> from finops.catalog import get_model, get_accelerator
    >>> head_padding_bytes(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), 2, "bf16")
    0.0
    >>> round(head_padding_bytes(get_model("llama-3.1-8b"), get_accelerator("inferentia2"), 12, "bf16") / 1e9, 2)
    2.15
    """
    if not device.pads_heads or model.attention == "mla":
        return 0.0
    ranks = tp_ranks(device, tp)
    extra_q = padded_query_heads(model, ranks) - model.num_attention_heads
    extra_kv = ranks * math.ceil(model.num_kv_heads / ranks) - model.num_kv_heads
    per_head = model.head_dim * model.hidden_size * model.layers * bytes_per_param(precision)
    return float(per_head * (2 * extra_q + 2 * extra_kv))


def weight_bytes_per_gpu(model: ModelSpec, device: Accelerator, precision: str, tp: int) -> float:
    """Weight bytes on each chip of a TP group: the model's share plus any head padding's.

    >>> from finops.catalog import get_model, get_accelerator
    >>> weight_bytes_per_gpu(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), "bf16", 2) == weight_bytes(
    ...     get_model("llama-3.1-8b"), "bf16") / 2
    True
    """
    return (weight_bytes(model, precision) + head_padding_bytes(model, device, tp, precision)) / tp


def kv_tokens_per_sequence(model: ModelSpec, tokens: int) -> int:
    """Tokens a sequence keeps in the cache: all of them, or the window when every layer slides.

    >>> from finops.catalog import get_model
    >>> kv_tokens_per_sequence(get_model("mistral-7b-v0.1"), 32000)
    4096
    """
    _check_positive("tokens", tokens)
    return min(int(tokens), model.sliding_window) if model.sliding_window else int(tokens)


def kv_bytes(model: ModelSpec, tokens: int, batch: int, kv_precision: str = DEFAULT_KV_PRECISION) -> float:
    """KV-cache bytes for ``batch`` sequences of ``tokens`` tokens, whole model.

    >>> from finops.catalog import get_model
    >>> kv_bytes(get_model("llama-3.1-8b"), 2048, 16) / 2**30   # GQA-correct: 4x below seed 003's 16 GiB
    4.0
    """
    _check_positive("batch", batch)
    return kv_bytes_per_token(model, kv_precision) * kv_tokens_per_sequence(model, tokens) * batch


def naive_kv_bytes(layers: int, d_model: int, tokens: int, batch: int, bytes_per_value: float) -> float:
    """Seed 003's formula ``M_KV = 2 x L x d_model x s_seq x b_batch x p_bytes`` (full MHA, no GQA).

    >>> naive_kv_bytes(32, 4096, 2048, 16, 2) / 2**30
    16.0
    """
    for name, value in (("layers", layers), ("d_model", d_model), ("tokens", tokens), ("batch", batch),
                        ("bytes_per_value", bytes_per_value)):
        _check_positive(name, value)
    return 2.0 * layers * d_model * tokens * batch * bytes_per_value


@dataclass(frozen=True)
class MemoryFit:
    """How a model fits a TP group of one GPU type.

    Per GPU: ``weights_gib``, ``kv_budget_gib`` (negative when the weights alone overflow),
    ``shortfall_gib``, ``gpu_memory_gib``, ``runtime_overhead_gib``, ``kv_bytes_per_sequence_per_gpu``.
    Whole model: ``kv_bytes_per_token``. Whole replica: ``max_concurrency`` (sequences of
    ``tokens_per_sequence`` cached tokens, block-rounded and window-capped).
    """

    fits: bool
    weights_gib: float
    kv_budget_gib: float
    kv_bytes_per_token: float
    max_concurrency: int
    shortfall_gib: float
    gpu_memory_gib: float
    runtime_overhead_gib: float
    tp: int = 1
    kv_bytes_per_sequence_per_gpu: float = 0.0
    tokens_per_sequence: int = 0


def memory_fit(model: ModelSpec | str, gpu: Accelerator | str, *, precision: str, tp: int, isl: int, osl: int,
               kv_precision: str | None = None, gpu_memory_utilization: float = 0.90,
               runtime_overhead_gib: float | None = None, of_free_memory: bool = False,
               context_length: int | None = None) -> MemoryFit:
    """Does the model fit ``tp`` GPUs, and how many ``isl + osl`` sequences can run at once?

    Per GPU: ``kv_budget = memory x utilization - weights / tp - overhead``; a sequence takes
    ``ceil(tokens / 16) x 16`` cached tokens (vLLM blocks; window-capped) times the per-GPU KV per
    token. It fits when at least one sequence does; ``shortfall_gib`` is what one GPU lacks for that.
    ``kv_precision`` defaults to BF16 (FP32 for FP32 weights): engines keep a 16-bit cache unless told.
    ``of_free_memory``: the utilization is a share of the memory left once weights and runtime are loaded,
    ``(memory - weights - overhead) x utilization`` (TensorRT-LLM's ``free_gpu_memory_fraction``, 0.9 by
    default), not of the whole GPU (vLLM's ``gpu_memory_utilization``). ``context_length``: the sequence
    length the engine serves when it runs the model past its native context (:func:`check_context`).

    >>> f = memory_fit("llama-3.1-70b", "h100-sxm", precision="bf16", tp=1, isl=2048, osl=512)
    >>> f.fits, round(f.shortfall_gib, 1)
    (False, 62.9)
    >>> memory_fit("llama-3.1-70b", "h100-sxm", precision="bf16", tp=2, isl=2048, osl=512).fits
    True
    """
    spec = resolve_model(model)   # a ModelSpec comes back as given
    device = get_accelerator(gpu) if isinstance(gpu, str) else gpu
    p = _check_precision(precision, PRECISIONS, "precision")
    kv_p = _check_precision(kv_precision or model_kv_precision(p), KV_PRECISIONS, "KV precision")
    _check_tp(tp, spec, device)
    _check_positive("isl", isl)
    _check_positive("osl", osl)
    if not 0.0 < gpu_memory_utilization <= 1.0:
        raise InputError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}",
                         hint="vLLM's default is 0.90")
    overhead = DEFAULT_RUNTIME_OVERHEAD_GIB if runtime_overhead_gib is None else float(runtime_overhead_gib)
    if overhead < 0:
        raise InputError(f"runtime_overhead_gib must be >= 0, got {overhead}")

    weights_gib = weight_bytes_per_gpu(spec, device, p, tp) / _GIB
    if of_free_memory:   # TensorRT-LLM: the fraction of what is free once the model is loaded
        budget_gib = (device.memory_gib_usable - weights_gib - overhead) * gpu_memory_utilization
    else:                # vLLM, SGLang: the fraction of the whole GPU, less what the model holds
        budget_gib = device.memory_gib_usable * gpu_memory_utilization - weights_gib - overhead
    cached = sequence_tokens(spec, isl, osl, context_length)
    per_sequence = kv_bytes_per_token_per_gpu(spec, tp, kv_p, device) * cached
    slots, shortfall = kv_slots(budget_gib, per_sequence)
    concurrency = int(slots)
    return MemoryFit(
        fits=concurrency >= 1, weights_gib=weights_gib, kv_budget_gib=budget_gib,
        kv_bytes_per_token=kv_bytes_per_token(spec, kv_p), max_concurrency=concurrency,
        shortfall_gib=float(shortfall), gpu_memory_gib=device.memory_gib_usable,
        runtime_overhead_gib=overhead, tp=tp, kv_bytes_per_sequence_per_gpu=per_sequence,
        tokens_per_sequence=cached,
    )


def sequence_tokens(model: ModelSpec, isl: int, osl: int, context_length: int | None = None) -> int:
    """Cached tokens of one ``isl + osl`` sequence: window-capped, rounded up to whole 16-token blocks
    (refused past the model's context unless ``context_length`` extends it, :func:`check_context`).

    >>> from finops.catalog import get_model
    >>> sequence_tokens(get_model("llama-3.1-8b"), 2000, 500)
    2512
    """
    check_context(model, isl, osl, context_length)
    cached = kv_tokens_per_sequence(model, isl + osl)
    return math.ceil(cached / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS


def check_context(model: ModelSpec, isl: int, osl: int, context_length: int | None = None) -> bool:
    """True when an ``isl + osl`` sequence runs past the model's native context (``max_position_embeddings``)
    on an engine started with a longer ``context_length``; raises when the sequence exceeds the context the
    engine serves (the native one unless ``context_length`` is given).

    An engine serves a model past its native context when its position range is extended (RoPE scaling:
    vLLM ``--max-model-len`` with ``--rope-scaling``, TensorRT-LLM's ``max_seq_len``, Neuron's compiled
    ``n_positions``). The cost of a token is the same arithmetic at any position, so the estimate holds;
    what the model answers that far out is the operator's call, and the estimate says it is beyond native.

    >>> from finops.catalog import get_model
    >>> llama2 = get_model("llama-2-7b")
    >>> check_context(llama2, 2048, 2048), check_context(llama2, 5000, 500, context_length=5500)
    (False, True)
    """
    _check_positive("isl", isl)
    _check_positive("osl", osl)
    tokens = isl + osl
    if context_length is not None:
        if isinstance(context_length, bool) or not isinstance(context_length, int) or context_length < 1:
            raise InputError(f"context_length must be a whole number of tokens >= 1, got {context_length!r}")
        if tokens > context_length:
            raise InputError(f"isl + osl = {tokens} tokens exceed the context length of {context_length}",
                             hint=f"give a context_length of at least {tokens}, or shorten the requests")
        return bool(model.max_context) and tokens > model.max_context
    if model.max_context and tokens > model.max_context:
        raise InputError(f"isl + osl = {tokens} tokens exceed {model.id}'s native context of {model.max_context}",
                         hint=f"shorten the requests or choose a longer-context model; if the engine extends "
                              f"the position range (RoPE scaling), give context_length (--context-length) of at "
                              f"least {tokens} to estimate it beyond the native context")
    return False


def kv_slots(kv_budget_gib: Any, per_sequence_bytes: Any) -> tuple[Any, Any]:
    """Sequences the KV budget holds, ``floor(budget / per_sequence)`` (0 when the budget is gone), and the
    GiB one GPU lacks for a first sequence (0 when one fits). Scalars or numpy arrays (they broadcast).

    >>> kv_slots(1.0, 2.0 ** 28), kv_slots(-1.0, 2.0 ** 29)
    ((4.0, 0.0), (0.0, 1.5))
    """
    slots = np.floor(np.maximum(kv_budget_gib, 0.0) * _GIB / per_sequence_bytes)   # a spent budget holds none
    shortfall = np.maximum(0.0, per_sequence_bytes / _GIB - kv_budget_gib) * (slots == 0)
    if np.ndim(slots):   # numpy gives a 0-d result as a scalar
        return slots, shortfall
    return float(slots), float(shortfall)


def tp_shards_heads(model: ModelSpec, tp: int) -> bool:
    """True when ``tp`` ranks split the attention heads as vLLM, SGLang and TRT-LLM require.

    Each rank holds ``num_attention_heads / tp`` whole query heads (vLLM refuses to start otherwise:
    "Total number of attention heads must be divisible by tensor parallel size"), and the KV heads
    either split evenly (``kv_heads % tp == 0``) or are replicated evenly (``tp % kv_heads == 0``),
    as vLLM's ``QKVParallelLinear`` asserts.

    >>> from finops.catalog import get_model
    >>> [tp for tp in (1, 2, 3, 4, 6, 8, 16) if tp_shards_heads(get_model("llama-3.1-8b"), tp)]
    [1, 2, 4, 8, 16]
    """
    kv = model.num_kv_heads
    return model.num_attention_heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def _check_tp(tp: int, model: ModelSpec, device: Accelerator | None = None) -> None:
    if not isinstance(tp, int) or isinstance(tp, bool) or tp < 1:
        raise InputError(f"tp must be a whole number >= 1, got {tp!r}", hint="use 1, 2, 4 or 8")
    if device is not None and device.pads_heads:
        return   # the runtime pads heads to the degree (head_padding_bytes)
    if not tp_shards_heads(model, tp):
        fitting = [n for n in (1, 2, 4, 8, 16) if tp_shards_heads(model, n)]
        raise InputError(f"tp {tp} does not split {model.id}'s {model.num_attention_heads} attention heads "
                         f"({model.num_kv_heads} KV heads) evenly; engines shard whole heads",
                         hint=f"use one of: {', '.join(map(str, fitting))}")


def _check_positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise InputError(f"{name} must be a positive number, got {value!r}")
