"""The performance model against published measurements it was never fitted on.

``fixtures/published-trtllm-throughput.csv``: NVIDIA's TensorRT-LLM v1.0 performance overview, offline
maximum throughput (``trtllm-bench throughput``, fixed ISL/OSL, every request queued at once), FP8
ModelOpt checkpoints, 36 rows of Llama-3.1-8B, Llama-3.3-70B and Llama-3.1-405B on H100 SXM and H200
at TP 1, 2 and 8; source and date on every row. None of them is in the calibration data, and
Llama-3.3-70B and Llama-3.1-405B are models the fit never saw.

Measured 2026-12-06 with the default step times (measured kernels for TRT-LLM on dense
models, ``finops.sizing.kernels``), the constants partially pooled across engines and the kernels' decode
less a fixed credit per layer (docs/performance.md, "Partial pooling across engines", "The decode credit"):
median absolute error 4.1 %, worst row 1.21x (Llama-3.1-405B on H200 at TP 8, ISL 128 / OSL 2,048,
over-predicted); median ratio 0.99, 58 % of rows under-predicted. With pooling alone and the decode speed
a factor (0.8-1.25, which scaled the large GEMMs of a maximum-throughput batch by the small ones' launch
savings) it was 6.0 % and 1.46x, 17 % under (the long decodes 1.12x); with each engine fitted alone
9.3 % and 1.44x, 50 % under, the prompt-heavy rows 0.81-0.90x (the admission wait of the
calibration's synchronized clients fitted as slow prefill). Before the kernel tables' decode attention was
filled beyond the package's measurements (scripts/derive_kernel_tables.py) and before the all-reduce table
was read in BF16 elements, not bytes, it was 12.0 % and 1.67x. The roofline step times give 19.6 % and
1.83x; the model before the measured kernels and the calibrated engines gave 27.9 % and 2.21x, 89 % under.
The goals (median 5 %, no row beyond 1.5x) are met on these rows. These tests pin what is reached so that it cannot silently get worse,
and the direction of the remaining errors.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from finops.sizing.performance import estimate

ROWS = list(csv.DictReader((Path(__file__).parent / "fixtures" / "published-trtllm-throughput.csv").open()))


def _ratio(row: dict[str, str], step_time: str = "auto") -> float:
    e = estimate(row["model"], row["gpu"], precision=row["precision"], tp=int(row["tp"]), isl=int(row["isl"]),
                 osl=int(row["osl"]), engine="trtllm", step_time=step_time)
    return e.output_tokens_per_s / float(row["output_tokens_per_s"])


@pytest.fixture(scope="module")
def ratios() -> np.ndarray:
    return np.array([_ratio(r) for r in ROWS])


def _error(ratios: np.ndarray) -> tuple[float, float]:
    return float(np.median(np.abs(ratios - 1.0))), float(max(ratios.max(), 1.0 / ratios.min()))


def test_every_published_row_carries_its_source():
    assert len(ROWS) == 36
    assert all("perf-overview.md" in r["source"] and r["as_of"] == "2026-12-01" for r in ROWS)


def test_maximum_throughput_error_on_published_trtllm_rows(ratios):
    median, worst = _error(ratios)
    assert median <= 0.05 and worst <= 1.25                                       # 4.7 %, 1.22x
    assert 0.95 <= np.median(ratios) <= 1.03 and 0.35 <= np.mean(ratios < 1.0) <= 0.75   # 0.99, 58 % under


def test_the_measured_kernels_beat_the_roofline_on_rows_never_fitted(ratios):
    roofline = np.array([_ratio(r, "roofline") for r in ROWS])
    (median, worst), (roof_median, roof_worst) = _error(ratios), _error(roofline)
    assert median < roof_median - 0.02 and worst < roof_worst


@pytest.mark.parametrize("model, low, high", [
    ("llama-3.1-8b", 0.85, 1.05),      # 0.90-1.00x (up to 1.67x before the decode-attention fill)
    ("llama-3.3-70b", 0.8, 1.15),      # 0.86-1.09x
    ("llama-3.1-405b", 0.9, 1.25),     # 0.93-1.21x: 6x the largest model fitted (70B), over-predicted at long OSL
])
def test_where_the_published_error_lies(ratios, model, low, high):
    mine = ratios[[r["model"] == model for r in ROWS]]
    assert low <= mine.min() and mine.max() <= high
