"""What each serving engine and the GPU exporter call the quantities the loop reads.

One declarative table per source, not branches: :data:`ENGINE_METRICS` maps an engine to the
Prometheus metric names of each :data:`Quantity`; names listed in order are alternatives across
versions (the first one present is used). ``None`` means the engine exports no such metric.
Histograms are named by their family (``<name>_bucket`` holds the buckets, with an ``le`` label).

Sources (read 2026-12-01): vLLM production metrics (``vllm:`` prefix; ``vllm:inter_token_latency_seconds``
replaced ``vllm:time_per_output_token_seconds`` in v0.11); SGLang production metrics (``sglang:``
prefix, ``--enable-metrics``); TensorRT-LLM 1.1 metrics as exposed through NVIDIA Dynamo (``trtllm_``
prefix; no token counters); NVIDIA DCGM exporter default counters (``DCGM_FI_DEV_GPU_UTIL``, a gauge
0-100 per GPU).

>>> metric_names("vllm", "generation_tokens")
('vllm:generation_tokens_total',)
>>> metric_names("trtllm", "prompt_tokens")
()
"""

from __future__ import annotations

from typing import Literal

from ..registry import Registry

__all__ = ["ENGINE_METRICS", "GPU_METRICS", "HISTOGRAMS", "Quantity", "engines", "known_metric_names", "metric_names"]

Quantity = Literal["prompt_tokens", "generation_tokens", "requests", "ttft", "itl", "running"]
#: The quantities that are histograms (the others are counters, except ``running``, a gauge).
HISTOGRAMS: frozenset[str] = frozenset({"ttft", "itl"})

ENGINE_METRICS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "vllm": {
        "prompt_tokens": ("vllm:prompt_tokens_total",),
        "generation_tokens": ("vllm:generation_tokens_total",),
        "requests": ("vllm:request_success_total",),
        "ttft": ("vllm:time_to_first_token_seconds",),
        "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        "running": ("vllm:num_requests_running",),
    },
    "sglang": {
        "prompt_tokens": ("sglang:prompt_tokens_total",),
        "generation_tokens": ("sglang:generation_tokens_total",),
        "requests": ("sglang:num_requests_total",),
        "ttft": ("sglang:time_to_first_token_seconds",),
        "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        "running": ("sglang:num_running_reqs",),
    },
    "trtllm": {
        "prompt_tokens": None,
        "generation_tokens": None,
        "requests": ("trtllm_request_success_total", "trtllm:request_success_total"),
        "ttft": ("trtllm_time_to_first_token_seconds", "trtllm:time_to_first_token_seconds"),
        "itl": ("trtllm_time_per_output_token_seconds", "trtllm:time_per_output_token_seconds"),
        "running": None,
    },
}

#: GPU exporter: the utilization gauge (percent, one series per GPU).
GPU_METRICS: dict[str, tuple[str, ...]] = {"gpu_util": ("DCGM_FI_DEV_GPU_UTIL",)}

_ENGINES: Registry[str] = Registry("serving engine", {name: name for name in ENGINE_METRICS},
                                   aliases={"tensorrt-llm": "trtllm", "trt-llm": "trtllm", "triton": "trtllm"})


def engines() -> tuple[str, ...]:
    """The engines whose metric names the table knows."""
    return tuple(ENGINE_METRICS)


def metric_names(engine: str, quantity: Quantity) -> tuple[str, ...]:
    """The metric names (alternatives, in order) of ``quantity`` for ``engine``; ``()`` when it has none."""
    return ENGINE_METRICS[_ENGINES[engine]][quantity] or ()


def known_metric_names() -> set[str]:
    """Every metric name the tables know (histograms by their ``_bucket`` series)."""
    names = {n for alts in GPU_METRICS.values() for n in alts}
    for table in ENGINE_METRICS.values():
        for quantity, alts in table.items():
            names |= {n + ("_bucket" if quantity in HISTOGRAMS else "") for n in alts or ()}
    return names
