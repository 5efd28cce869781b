"""Serving metrics in the core: what production did per plan line, and what it teaches the next plan.

Pure functions over recorded series (the Prometheus connector, ``connectors/prometheus``, produces
them): :mod:`~finops.serving.series` (counters, resets, gaps), :mod:`~finops.serving.histogram`
(percentiles, P_ok), :mod:`~finops.serving.metric_names` (engine name tables),
:mod:`~finops.serving.serving_lines` (series -> plan line), :mod:`~finops.serving.realized` (the
month per plan line), :mod:`~finops.serving.load_tests` (load-test files of a line's configuration),
:mod:`~finops.serving.commitments` (commitments already bought) and
:mod:`~finops.serving.next_month` (demand, fleet, mix and budget of the next plan). The realized /
predicted throughput is kept by :mod:`finops.sizing.corrections`, which the sizing reads.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Exported name -> the submodule that defines it. Loaded on first use (PEP 562), so that importing one
#: light submodule (``finops reconcile`` reads a plan's serving lines) does not load numpy and the sizing
#: model that the others need.
_EXPORTS: dict[str, str] = {
    "ENGINE_METRICS": "metric_names",
    "Gap": "series",
    "Histogram": "histogram",
    "NextPlan": "next_month",
    "RealizedLine": "realized",
    "SERVING_COLUMNS": "serving_lines",
    "Series": "series",
    "ServingLine": "serving_lines",
    "ServingMonth": "realized",
    "assign": "serving_lines",
    "billed_gpu_hours": "realized",
    "counter_steps": "series",
    "engines": "metric_names",
    "gaps": "series",
    "histogram_from_buckets": "histogram",
    "hourly_increase": "series",
    "increase": "series",
    "known_metric_names": "metric_names",
    "metric_names": "metric_names",
    "month_window": "realized",
    "parse_load_test_option": "load_tests",
    "plan_next_month": "next_month",
    "read_load_tests": "load_tests",
    "read_serving_lines": "serving_lines",
    "realize": "realized",
    "serving_lines_from_rows": "serving_lines",
    "sunk_commitments": "commitments",
}
__all__ = [
    "ENGINE_METRICS",
    "SERVING_COLUMNS",
    "Gap",
    "Histogram",
    "NextPlan",
    "RealizedLine",
    "Series",
    "ServingLine",
    "ServingMonth",
    "assign",
    "billed_gpu_hours",
    "counter_steps",
    "engines",
    "gaps",
    "histogram_from_buckets",
    "hourly_increase",
    "increase",
    "known_metric_names",
    "metric_names",
    "month_window",
    "parse_load_test_option",
    "plan_next_month",
    "read_load_tests",
    "read_serving_lines",
    "realize",
    "serving_lines_from_rows",
    "sunk_commitments",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
