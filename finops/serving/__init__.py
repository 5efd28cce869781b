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

from .commitments import sunk_commitments
from .histogram import Histogram, histogram_from_buckets
from .load_tests import parse_load_test_option, read_load_tests
from .metric_names import ENGINE_METRICS, engines, known_metric_names, metric_names
from .next_month import NextPlan, plan_next_month
from .realized import RealizedLine, ServingMonth, billed_gpu_hours, month_window, realize
from .series import Gap, Series, counter_steps, gaps, hourly_increase, increase
from .serving_lines import SERVING_COLUMNS, ServingLine, assign, read_serving_lines, serving_lines_from_rows

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
