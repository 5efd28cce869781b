"""Sizing: from a workload to GPUs.

The faces size through :func:`size_workload` (the planner's configuration checked, beside the cheapest
that works: ``finops size``, ``finops.size``, the workbook's Sizing sheet); around it demand, memory,
the performance model (:func:`estimate`), the search, the calibration and the figures the workbook
shows of an answer (:data:`SIZING_FIELDS`, :func:`ranking_table`).
"""

from .calibration import (
    REFIT_PRIOR_WEIGHT,
    Measurement,
    bundled_measurements,
    fit,
    leave_one_model_out,
    predict,
)
from .choice import Choice, WorkloadSizing, size_workload
from .confidence import DEFAULT_CONFIDENCE
from .corrections import CORRECTIONS_FILE, CorrectionTable, ThroughputCorrection, corrected_search
from .demand import Demand, concurrency, concurrency_from_rate, demand, devices_needed
from .engine_constants import ENGINES, Calibration, Engine, EngineConstants
from .engine_versions import check_engine_version
from .figures import RANKING_HEADER, SIZING_FIELDS, ranking_table
from .load_test_results import read_load_test
from .managed import ApiOption
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
from .performance import Estimate, estimate, with_step_time
from .queueing import (
    OperatingPoint,
    ServicePoint,
    kingman_wait,
    operating_point,
    serve,
    sla_attainment,
    ttft_percentile,
)
from .search import RankBy, SearchResult, SizingOption, search
from .vendor_efficiency import ENGINE_EFFICIENCY, NO_EFFICIENCY
from .workload import SLO_PERCENTILES, SloPercentile, Workload, load_workload, presets, workload_from

__all__ = [
    "CORRECTIONS_FILE",
    "DEFAULT_CONFIDENCE",
    "ENGINES",
    "ENGINE_EFFICIENCY",
    "KV_PRECISIONS",
    "NO_EFFICIENCY",
    "PRECISIONS",
    "RANKING_HEADER",
    "REFIT_PRIOR_WEIGHT",
    "SIZING_FIELDS",
    "SLO_PERCENTILES",
    "ApiOption",
    "Calibration",
    "Choice",
    "CorrectionTable",
    "Demand",
    "Engine",
    "EngineConstants",
    "Estimate",
    "Measurement",
    "MemoryFit",
    "OperatingPoint",
    "Precision",
    "RankBy",
    "SearchResult",
    "ServicePoint",
    "SizingOption",
    "SloPercentile",
    "ThroughputCorrection",
    "Workload",
    "WorkloadSizing",
    "bundled_measurements",
    "bytes_per_param",
    "check_engine_version",
    "concurrency",
    "concurrency_from_rate",
    "corrected_search",
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
    "predict",
    "presets",
    "ranking_table",
    "read_load_test",
    "search",
    "serve",
    "size_workload",
    "sla_attainment",
    "ttft_percentile",
    "weight_bytes",
    "with_step_time",
    "workload_from",
]
