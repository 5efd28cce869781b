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
from .calibration import Measurement, bundled_measurements, fit, kfold, read_load_test
from .performance import ENGINES, Calibration, Engine, EngineConstants, Estimate, estimate
from .queueing import OperatingPoint, kingman_wait, operating_point, sla_attainment, ttft_percentile
from .search import SearchResult, SizingOption, search

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
    "ENGINES",
    "Calibration",
    "Engine",
    "EngineConstants",
    "Estimate",
    "Measurement",
    "OperatingPoint",
    "SearchResult",
    "SizingOption",
    "bundled_measurements",
    "estimate",
    "fit",
    "kfold",
    "kingman_wait",
    "operating_point",
    "read_load_test",
    "search",
    "sla_attainment",
    "ttft_percentile",
]
