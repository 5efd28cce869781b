"""Sizing: from a workload to GPUs. Demand, memory and workloads here; performance and search beside them."""

from .demand import Demand, concurrency, concurrency_from_rate, demand, devices_needed
from .memory import (
    KV_PRECISIONS,
    PRECISIONS,
    MemoryFit,
    Precision,
    bytes_per_param,
    kv_bytes,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    memory_fit,
    naive_kv_bytes,
    weight_bytes,
)
from .workload import SLO_PERCENTILES, SloPercentile, Workload, load_workload, presets

__all__ = [
    "KV_PRECISIONS",
    "PRECISIONS",
    "SLO_PERCENTILES",
    "Demand",
    "MemoryFit",
    "Precision",
    "SloPercentile",
    "Workload",
    "bytes_per_param",
    "concurrency",
    "concurrency_from_rate",
    "demand",
    "devices_needed",
    "kv_bytes",
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "load_workload",
    "memory_fit",
    "naive_kv_bytes",
    "presets",
    "weight_bytes",
]
