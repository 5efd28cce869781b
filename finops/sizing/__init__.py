"""Sizing: from a workload to GPUs. Demand, memory and workloads here; performance and search beside them."""

from .calibration import Measurement, bundled_measurements, fit, leave_one_model_out
from .demand import Demand, concurrency, concurrency_from_rate, demand, devices_needed
from .engine_constants import ENGINES, Calibration, Engine, EngineConstants
from .load_test_results import read_load_test
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
from .performance import Estimate, estimate
from .queueing import (
    OperatingPoint,
    ServicePoint,
    kingman_wait,
    operating_point,
    serve,
    sla_attainment,
    ttft_percentile,
)
from .search import SearchResult, SizingOption, search
from .workload import SLO_PERCENTILES, SloPercentile, Workload, load_workload, presets

__all__ = [
    "ENGINES",
    "KV_PRECISIONS",
    "PRECISIONS",
    "SLO_PERCENTILES",
    "Calibration",
    "Demand",
    "Engine",
    "EngineConstants",
    "Estimate",
    "Measurement",
    "MemoryFit",
    "OperatingPoint",
    "Precision",
    "SearchResult",
    "ServicePoint",
    "SizingOption",
    "SloPercentile",
    "Workload",
    "bundled_measurements",
    "bytes_per_param",
    "concurrency",
    "concurrency_from_rate",
    "demand",
    "devices_needed",
    "estimate",
    "fit",
    "kingman_wait",
    "kv_bytes",
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "leave_one_model_out",
    "load_workload",
    "memory_fit",
    "naive_kv_bytes",
    "operating_point",
    "presets",
    "read_load_test",
    "search",
    "serve",
    "sla_attainment",
    "ttft_percentile",
    "weight_bytes",
]
