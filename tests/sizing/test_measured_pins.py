"""``estimate`` pinned to published measurements: NVIDIA AIConfigurator's silicon runs (aiconfigurator-core
0.12.0 ``systems/silicon_sample.csv``, Apache-2.0; bundled as finops/data/calibration/
aiconfigurator-silicon.csv.gz), one row per engine and model, chosen by a rule stated before looking at
the model's answer: the row nearest concurrency 16, then nearest ISL 2,048 / OSL 512, then the smallest
TP, then the GPU's name.

Tolerance: the calibration's held-out band (``Calibration.bands``: measured / modelled of fits that never
saw the row's model, finops/catalog/data/calibration.json) from its 5th to its 95th percentile, for the
engine and model class. A measurement outside it is one the model promises to bracket nine times in ten
and missed. These rows were fitted on (in sample), so they are pins, not an accuracy claim; the held-out
accuracy is in docs/performance.md and test_calibration.py.
"""

from __future__ import annotations

import pytest

from finops.catalog import get_model
from finops.sizing.calibration import BUNDLED_CLASSES, bundled_measurements
from finops.sizing.engine_constants import Calibration, model_class
from finops.sizing.performance import estimate

# engine, model, GPU, precision, TP, ISL, OSL, concurrency, measured TPOT ms, measured TTFT ms
MEASURED = [
    ("sglang", "deepseek-v3", "b200", "fp8", 8, 1024, 1024, 16, 13.1803, 402.452),
    ("sglang", "llama-3.1-8b", "h200", "fp8", 1, 8000, 100, 20, 33.89, 711.71),
    ("sglang", "qwen3-32b", "h100-sxm", "bf16", 2, 2048, 512, 16, 18.1727, 1052.9),
    ("trtllm", "deepseek-v3", "b200", "fp8", 4, 1024, 1024, 16, 17.1024, 215.814),
    ("trtllm", "llama-3.1-70b", "b200", "fp8", 1, 1024, 1024, 16, 15.9773, 430.751),
    ("trtllm", "llama-3.1-8b", "h100-sxm", "bf16", 1, 2048, 512, 16, 9.70233, 413.176),
    ("trtllm", "qwen3-32b", "h100-sxm", "fp8", 1, 2048, 512, 16, 20.8915, 518.387),
    ("vllm", "llama-3.1-70b", "b200", "fp8", 1, 1024, 1024, 16, 17.6729, 199.086),
    ("vllm", "llama-3.1-8b", "h200", "fp8", 1, 8000, 100, 16, 15.53, 447.24),
    ("vllm", "qwen3-32b", "h100-sxm", "bf16", 2, 1024, 512, 16, 17.8813, 189.635),
]


def test_the_pinned_figures_are_the_bundled_measurements():
    """(Some configurations were measured more than once, e.g. DeepSeek-V3 on B200: the pin is one of them.)"""
    rows: dict[tuple, list[tuple[float, float]]] = {}
    for r in bundled_measurements():
        key = (r.engine, r.model, r.gpu, r.precision, r.tp, r.isl, r.osl, r.concurrency)
        rows.setdefault(key, []).append((r.tpot_ms, r.ttft_ms))
    for *key, tpot, ttft in MEASURED:
        assert (tpot, ttft) in rows[tuple(key)]


def held_out_band(engine: str, model: str, metric: str) -> tuple[float, float]:
    cal = Calibration.bundled()
    kind = model_class(get_model(model))
    return cal.band(engine, metric, 0.05, kind), cal.band(engine, metric, 0.95, kind)


def outside_band(engine: str, model: str, gpu: str, precision: str, tp: int, isl: int, osl: int, clients: int,
                 tpot_ms: float, ttft_ms: float) -> list[str]:
    """The metrics of one pinned row that lie outside the held-out 5-95 % band of its estimate."""
    e = estimate(model, gpu, precision=precision, tp=tp, isl=isl, osl=osl, concurrency=clients, engine=engine)
    assert e.running_batch == clients
    measured_rate = clients * osl / ((ttft_ms + (osl - 1) * tpot_ms) / 1e3)   # closed loop: c x osl / cycle
    pairs = {"tpot_ms": (e.tpot_ms, tpot_ms), "ttft_ms": (e.ttft_ms, ttft_ms),
             "output_tokens_per_s": (e.output_tokens_per_s, measured_rate)}
    return [metric for metric, (modelled, measured) in pairs.items()
            if not (modelled * held_out_band(engine, model, metric)[0] <= measured
                    <= modelled * held_out_band(engine, model, metric)[1])]


FITTED = [row for row in MEASURED if model_class(get_model(row[1])) in BUNDLED_CLASSES]
NEVER_FITTED = [row for row in MEASURED if row not in FITTED]


#: Fitted pins known to lie outside their band, and why: SGLang's Llama-3.1-8B campaign on H200 (SGLang
#: 0.5.6) has TPOT flat at 30-40 ms from TP1 to TP8 and TTFT a third of what its other dense model
#: (Qwen3-32B on H100, 0.5.1) implies; no one set of SGLang constants fits both, and this row's TTFT is
#: modelled 2.9x too long, so its throughput (osl 100: TTFT is most of the cycle) reads 1.33x against a
#: band of 0.65-1.18 (constants partially pooled across engines; 1.20 against 0.49-1.38 before).
KNOWN_MISSES: dict[tuple[str, str], list[str]] = {("sglang", "llama-3.1-8b"): ["output_tokens_per_s"]}


@pytest.mark.parametrize("engine, model, gpu, precision, tp, isl, osl, clients, tpot_ms, ttft_ms", FITTED)
def test_a_measured_row_lies_in_the_held_out_band_of_its_estimate(engine, model, gpu, precision, tp, isl, osl,
                                                                    clients, tpot_ms, ttft_ms):
    assert outside_band(engine, model, gpu, precision, tp, isl, osl, clients, tpot_ms, ttft_ms) == \
        KNOWN_MISSES.get((engine, model), [])


def test_never_fitted_rows_miss_their_band_no_more_often_than_it_allows():
    """The DeepSeek (MLA) rows are never fitted: each is one of the held-out rows its class's band is the
    5-95 % range of, so about one check in ten lies outside it by construction (0.6 expected of the 6
    here). At most one may; two or more would say the band is too narrow."""
    misses = [(row[:2], metric) for row in NEVER_FITTED for metric in outside_band(*row)]
    assert len(NEVER_FITTED) == 2 and len(misses) <= 1, misses


def test_dense_tpot_pins_lie_in_the_middle_half_of_the_held_out_errors_on_bandwidth_bound_rows():
    """Where decode is bound by memory bandwidth (dense, 16 clients, ISL <= 2,048) TPOT is the model's best
    figure: each pin's measured / modelled TPOT inside the interquartile range (P25-P75) of its engine's
    held-out ratios for dense models (calibration.json's bands; TRT-LLM's is 0.90-1.12), which half of the
    rows never fitted reach. (Until 2026-12-04 the tolerance was the median held-out error of every engine
    together, which SGLang's campaigns, 38 % off each other held out, sit beside by chance.) One pin lies
    below: TRT-LLM's Llama-3.1-70B on B200 (0.91 against 0.92-1.14), a later TRT-LLM version than the H100
    rows that dominate its constants, up to 29 % faster than they model it (constants partially
    pooled across engines; 0.93 against 0.90-1.12 before)."""
    cal = Calibration.bundled()
    outside = []
    for engine, model, gpu, precision, tp, isl, osl, clients, tpot_ms, _ in MEASURED:
        if model_class(get_model(model)) == "dense" and isl <= 2048:
            e = estimate(model, gpu, precision=precision, tp=tp, isl=isl, osl=osl, concurrency=clients, engine=engine)
            low, high = (cal.band(engine, "tpot_ms", level, "dense") for level in (0.25, 0.75))
            if not low <= tpot_ms / e.tpot_ms <= high:
                outside.append((engine, model))
    assert outside == [("trtllm", "llama-3.1-70b")]
