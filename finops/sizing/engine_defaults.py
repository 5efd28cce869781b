"""What each serving engine does when it is not told otherwise: batch limit, prefill-token budget, KV dtype.

These set the maximum-throughput point an engine really reaches out of the box (a batch the KV cache
could hold but the scheduler refuses is not served), how a long prompt is split into chunks, and how
many bytes a cached token takes. Each value is the engine's own default, as of the versions the
calibration covers (``finops/catalog/data/calibration.json``); every one can be overridden per call.

=========  ==========================  ==============================  ================================
engine     batch limit                 prefill tokens per step         KV cache dtype by default
=========  ==========================  ==============================  ================================
trtllm     ``max_batch_size`` 2048     ``max_num_tokens`` 8192         FP8 for an FP8 checkpoint, else
                                                                       the model dtype
vllm       ``max_num_seqs`` 1024 on    ``max_num_batched_tokens`` 8192 ``auto``: the model dtype (BF16;
           GPUs >= 70 GiB but A100,    (2048 on the others)            FP8 only when asked for)
           else 256
sglang     ``max_running_requests``    ``chunked_prefill_size`` 2048   ``auto``: the model dtype
           from KV memory, request     below 35 GiB, 8192 below 160,
           pool at most 4096           16384 above
=========  ==========================  ==============================  ================================

Sources (read 2026-12-01): TensorRT-LLM ``BuildConfig`` field defaults, which ``trtllm-serve``
``--max_batch_size`` / ``--max_num_tokens`` take, and its FP8 quantized-checkpoint export that sets
``kv_cache_quant_algo: FP8`` (TensorRT-LLM docs, "Tuning max batch size and max num tokens";
NVIDIA ModelOpt ``hf_quant_config.json``); vLLM 0.12 ``EngineArgs.get_batch_defaults`` (OpenAI API
server usage context; ``kv_cache_dtype`` ``auto``); SGLang 0.5 ``ServerArgs`` (``chunked_prefill_size``
by GPU memory; the request-to-token pool of ``min(max(tokens / context x 512, 2048), 4096)``).

>>> [engine_defaults(e, "h100-sxm").max_batch for e in ("trtllm", "vllm", "sglang")]
[2048, 1024, 4096]
>>> engine_defaults("vllm", "a100-80gb").prefill_token_budget, engine_defaults("sglang", "b200").prefill_token_budget
(2048, 16384)
>>> default_kv_precision("trtllm", "fp8"), default_kv_precision("vllm", "fp8"), default_kv_precision("sglang", "fp32")
('fp8', 'bf16', 'fp32')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import Accelerator, get_accelerator

__all__ = ["EngineDefaults", "default_kv_precision", "engine_defaults"]


@dataclass(frozen=True)
class EngineDefaults:
    """The scheduler limits one engine starts with on one GPU."""

    max_batch: int               # sequences the scheduler runs at once
    prefill_token_budget: int    # prompt tokens one step takes (chunked prefill)
    kv_of_free_memory: bool = False   # the KV share is of the memory free after loading (TensorRT-LLM)


# engine -> rows (memory limit GiB, excluded id part, max batch, prefill budget); the first row whose limit
# is above the GPU's memory and whose excluded part (if any) is not in the GPU id applies. The last row
# of each engine matches every GPU.
_LIMITS: dict[str, tuple[tuple[float, str, int, int], ...]] = {
    "trtllm": ((float("inf"), "", 2048, 8192),),
    "vllm": ((70.0, "", 256, 2048), (float("inf"), "a100", 1024, 8192), (float("inf"), "", 256, 2048)),
    "sglang": ((35.0, "", 4096, 2048), (160.0, "", 4096, 8192), (float("inf"), "", 4096, 16384)),
}

# Engines whose KV-cache share is of the memory free once the model is loaded (TensorRT-LLM's
# KvCacheConfig.free_gpu_memory_fraction, 0.9); the others take theirs of the whole GPU.
_KV_OF_FREE = frozenset({"trtllm"})

# (engine, weight precision) -> KV precision; anything else keeps the model dtype (BF16, or FP32 for FP32).
_KV_DEFAULTS: dict[tuple[str, str], str] = {("trtllm", "fp8"): "fp8"}


def engine_defaults(engine: str, gpu: str | Accelerator) -> EngineDefaults:
    """Batch limit and prefill-token budget of ``engine`` on ``gpu`` (its memory picks vLLM's and SGLang's)."""
    device = get_accelerator(gpu) if isinstance(gpu, str) else gpu
    batch, budget = next((batch, budget) for below, exclude, batch, budget in _LIMITS[engine]
                         if device.memory_gib_usable < below and not (exclude and exclude in device.id))
    return EngineDefaults(max_batch=batch, prefill_token_budget=budget, kv_of_free_memory=engine in _KV_OF_FREE)


def default_kv_precision(engine: str, precision: str) -> str:
    """The KV-cache precision ``engine`` serves a ``precision`` checkpoint with, unless told otherwise."""
    return _KV_DEFAULTS.get((engine, precision), "fp32" if precision == "fp32" else "bf16")
