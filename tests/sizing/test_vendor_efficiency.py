"""Accelerators outside the measured kernel tables: the roofline with a vendor's own
bandwidth and compute efficiencies, fitted on published rows, a band from their held-out residuals, and
``calibrated: false``.

Expected figures are worked here by hand from the AMD MI300X datasheet (5.3 TB/s HBM3, 1,307.4 TFLOPS
dense BF16; https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html) and Llama-3.1-8B's
config.json (tests/sizing/fixtures/hf), or copied from the published sources of
``finops/data/calibration/published_other_accelerators.csv``.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from finops.catalog import get_accelerator, resolve_model
from finops.errors import InputError
from finops.sizing.candidates import candidate_table
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import estimate
from finops.sizing.published import family_gpus, fit_vendor, predict, published_rows, vendor_gpus, with_vendors
from finops.sizing.vendor_efficiency import BAND_LEVELS, VendorEfficiency

from .test_roofline_by_hand import EXACT, LLAMA, decode_flops, ideal, prefill_flops

MI300X_BANDWIDTH = 5.3e12
MI300X_BF16 = 1307e12          # the catalog's rounding of the datasheet's 1,307.4
ETA_BW, ETA_C = 0.5, 0.25      # chosen unlike the ideal engine's 1 and 1, so that a swapped term shows
# Held-out ratios measured / modelled at BAND_LEVELS (5, 10, 25, 50, 75, 90, 95 %): P10 0.8, P90 1.25.
TPOT_QUANTILES = (0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4)


def amd(engine="vllm", **changes) -> VendorEfficiency:
    return replace(VendorEfficiency(vendor="amd", family="amd-cdna3", engine=engine, bandwidth_efficiency=ETA_BW,
                                    compute_efficiency=ETA_C, rows=3, source="hand-made",
                                    bands={"tpot_ms": TPOT_QUANTILES}, band_sources={"tpot_ms": 3}), **changes)


def calibration(*vendors: VendorEfficiency, **changes) -> Calibration:
    return replace(ideal(), vendors={v.key: v for v in vendors}, **changes)


def run(gpu: str, cal: Calibration, engine: str = "vllm", **kwargs):
    arguments = {"precision": "bf16", "tp": 1, "isl": 1024, "osl": 256, "concurrency": 1, **kwargs}
    return estimate(resolve_model(str(LLAMA["path"])), gpu, engine=engine, calibration=cal, **arguments)


def test_the_worked_figures_are_the_datasheet():
    gpu = get_accelerator("mi300x")
    assert (gpu.vendor, gpu.memory_bandwidth_gbps * 1e9, gpu.tflops("bf16") * 1e12) == ("amd", MI300X_BANDWIDTH,
                                                                                        MI300X_BF16)


def test_the_vendors_efficiencies_time_decode_and_prefill_on_its_accelerator():
    """Llama-3.1-8B BF16 on one MI300X, 1,024 in, 256 out, one client, every engine constant ideal. Decode:
    16,060,522,496 weight bytes + 1,152 x 131,072 KV bytes over 5.3 TB/s x 0.5 = 6.118 ms a token.
    Prefill: 1.672e13 FLOPs over 1,307 TFLOP/s x 0.25 = 51.17 ms."""
    e = run("mi300x", calibration(amd()))
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / (MI300X_BANDWIDTH * ETA_BW)
    prefill = prefill_flops(LLAMA, 1024, 1024) / (MI300X_BF16 * ETA_C)
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.ttft_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.effective_bandwidth_efficiency == pytest.approx(ETA_BW, rel=EXACT)
    assert (round(step * 1e3, 3), round(prefill * 1e3, 2)) == (6.118, 51.17)
    assert (e.efficiency_source, e.calibrated, e.step_time_source) == ("amd-cdna3:vllm", False, "roofline")


def test_compute_bound_decode_takes_the_vendors_compute_efficiency():
    """512 sequences of 16 + 16 tokens: 512 x (2 x 8.03e9 + 4 x 32 x 4096 x 24) FLOPs over 1,307 TFLOP/s x
    0.25 = 25.19 ms a step, more than the 16.06 GB + 512 x 24 x 128 KiB over 5.3 TB/s x 0.5 (6.67 ms)."""
    e = run("mi300x", calibration(amd()), isl=16, osl=16, concurrency=512)
    compute = 512 * decode_flops(LLAMA, 24) / (MI300X_BF16 * ETA_C)
    memory = (2 * LLAMA["params"] + 512 * 24 * LLAMA["kv_per_token"]) / (MI300X_BANDWIDTH * ETA_BW)
    assert compute > memory
    assert e.decode_step_ms == pytest.approx(compute * 1e3, rel=EXACT)
    assert (round(compute * 1e3, 2), round(memory * 1e3, 2)) == (25.19, 6.67)


def test_the_engines_efficiencies_answer_elsewhere():
    """On another vendor's accelerator the engine's (ideal) constants time the steps: the plain datasheet roofline."""
    e = run("h100-sxm", calibration(amd()))
    device = get_accelerator("h100-sxm")
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / (device.memory_bandwidth_gbps * 1e9)
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill_flops(LLAMA, 1024, 1024) / (device.tflops("bf16") * 1e12) * 1e3,
                                         rel=EXACT)
    assert e.efficiency_source == "engine"


def test_an_engine_the_family_was_not_measured_under_carries_its_shortfall():
    """SGLang at 0.8 of the datasheet bandwidth and 0.6 of its FLOPS where vLLM reaches 1 and 1: CDNA3's vLLM
    fit (0.5, 0.25) under SGLang is 0.8 x 0.5 / 1 = 0.4 and 0.6 x 0.25 / 1 = 0.15. Decode: 16,060,522,496 +
    1,152 x 131,072 bytes over 5.3 TB/s x 0.4 = 7.647 ms; prefill: 1.672e13 FLOPs over 1,307 TFLOP/s x 0.15."""
    cal = calibration(amd())
    cal = replace(cal, engines={**cal.engines, "sglang": replace(cal.engines["sglang"], bandwidth_efficiency=0.8,
                                                                 compute_efficiency=0.6)})
    e = run("mi300x", cal, engine="sglang")
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / (MI300X_BANDWIDTH * 0.4)
    assert (e.decode_step_ms, round(step * 1e3, 3)) == (pytest.approx(step * 1e3, rel=EXACT), 7.647)
    assert e.prefill_ms == pytest.approx(prefill_flops(LLAMA, 1024, 1024) / (MI300X_BF16 * 0.15) * 1e3, rel=EXACT)
    assert (e.efficiency_source, e.extrapolation, e.calibrated) == ("amd-cdna3:vllm>sglang", "carried", False)


def test_the_family_fit_speaks_for_every_part_of_its_family_without_kernel_tables():
    """The accelerators a fit covers are derived from the catalog when asked, not stored: the MI325X,
    which no published row measured, takes CDNA3's efficiencies like the MI300X."""
    e = run("mi325x", calibration(amd()))
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / (6.0e12 * ETA_BW)
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert (e.efficiency_source, e.calibrated) == ("amd-cdna3:vllm", False)
    assert amd().gpus == vendor_gpus("amd") == family_gpus("amd-cdna3") == ("mi300x", "mi325x")


def test_no_measurement_of_the_vendor_under_the_engine_says_none():
    """SGLang measured on NVIDIA only, no fit of AMD's under any engine: the MI300X is timed with SGLang's own
    constants and labelled ``none``, not ``engine``: nothing measured answers for it."""
    nvidia_only = {"sglang": {("h100-sxm", "bf16", "dense", 1): (8.0, 8.0)}}
    e = run("mi300x", calibration(measured=nvidia_only), engine="sglang")
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / MI300X_BANDWIDTH
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert (e.efficiency_source, e.calibrated) == ("none", False)
    assert run("h100-sxm", calibration(measured=nvidia_only), engine="sglang").efficiency_source == "engine"


def test_a_gpu_the_engine_was_measured_on_keeps_the_engines_constants():
    """A refit on the user's own MI300X rows (``finops calibrate``) records the GPU as measured: its
    constants, fitted on those rows without the vendor's, answer there, and the estimate is calibrated."""
    measured = {"vllm": {("h100-sxm", "bf16", "dense", 1): (8.0, 8.0), ("mi300x", "bf16", "dense", 1): (8.0, 8.0)}}
    e = run("mi300x", calibration(amd(), measured=measured))
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / MI300X_BANDWIDTH
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert (e.efficiency_source, e.calibrated) == ("engine", True)


def test_the_band_is_the_vendors_held_out_ratio_where_it_has_one():
    """TPOT's band is the vendor's P10 and P90 (0.8 and 1.25); TTFT, which its rows do not report, keeps
    the engine's band (here P10 0.5, P90 2.0)."""
    engine_bands = {"vllm": {m: (0.4, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0) for m in ("ttft_ms", "tpot_ms",
                                                                          "output_tokens_per_s")}}
    e = run("mi300x", calibration(amd(), bands=engine_bands))
    assert e.tpot_ms_band == pytest.approx((0.8 * e.tpot_ms, 1.25 * e.tpot_ms), rel=EXACT)
    assert e.ttft_ms_band == pytest.approx((0.5 * e.ttft_ms, 2.0 * e.ttft_ms), rel=EXACT)


@pytest.mark.parametrize("sources, band", [(3, (0.8, 1.25)), (2, (0.5, 2.0)), (1, (0.5, 2.0))])
def test_a_band_of_fewer_than_three_publications_envelops_the_unmeasured_one(sources, band):
    """The vendor's TPOT band (0.8-1.25) stands alone when its held-out rows come from three publications; from
    one or two it envelops the unmeasured reach's band (here the engine's, 0.5-2.0): rows of one publication
    share its setup and say nothing of how the next one reads."""
    engine_bands = {"vllm": {m: (0.4, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0) for m in ("ttft_ms", "tpot_ms",
                                                                          "output_tokens_per_s")}}
    e = run("mi300x", calibration(amd(band_sources={"tpot_ms": sources}), bands=engine_bands))
    assert e.tpot_ms_band == pytest.approx((band[0] * e.tpot_ms, band[1] * e.tpot_ms), rel=EXACT)
    h100 = run("h100-sxm", calibration(amd(), bands=engine_bands))
    assert h100.tpot_ms_band == pytest.approx((0.5 * h100.tpot_ms, 2.0 * h100.tpot_ms), rel=EXACT)


def test_the_search_times_the_vendors_accelerators_with_its_efficiencies():
    cal = calibration(amd())
    table = candidate_table(resolve_model(str(LLAMA["path"])), ("mi300x", "h100-sxm"), ("bf16",), (1,), "vllm", cal)
    assert table.gpus == ("mi300x", "h100-sxm")
    assert table.physics.bandwidth_efficiency.tolist() == [ETA_BW, 0.0]
    assert table.physics.compute_efficiency.tolist() == [ETA_C, 0.0]
    # and says so for each row, as the options the search ranks do (SizingOption.efficiency_source)
    assert table.efficiency_sources == (amd().key, "engine") == ("amd-cdna3:vllm", "engine")


@pytest.mark.parametrize("change, message", [
    ({"bandwidth_efficiency": 0.0}, "must be in (0, 1]"),
    ({"compute_efficiency": 1.5}, "must be in (0, 1]"),
    ({"rows": "seven"}, "incomplete or not numbers"),
])
def test_a_bad_vendor_entry_is_an_input_error(change, message):
    data = {**amd().to_dict(), **change}
    with pytest.raises(InputError, match=re.escape(message)):
        VendorEfficiency.from_dict(data)


@pytest.mark.parametrize("change, valid", [      # both efficiencies lie in (0, 1]: 1.0 is the datasheet itself
    ({"bandwidth_efficiency": 1.0}, True),
    ({"compute_efficiency": 1.0}, True),
    ({"bandwidth_efficiency": 1.5}, False),
    ({"compute_efficiency": 0.0}, False),
])
def test_the_efficiencies_are_shares_of_the_datasheet(change, valid):
    data = {**amd().to_dict(), **change}
    if valid:
        assert VendorEfficiency.from_dict(data) == amd(**change)
    else:
        with pytest.raises(InputError, match=re.escape("must be in (0, 1]")):
            VendorEfficiency.from_dict(data)


def test_an_incomplete_vendor_entry_says_what_each_needs():
    data = {k: v for k, v in amd().to_dict().items() if k != "rows"}
    with pytest.raises(InputError) as caught:
        VendorEfficiency.from_dict(data)
    assert caught.value.hint == "each needs vendor, engine, bandwidth_efficiency, compute_efficiency, rows, source"


def test_a_vendor_entry_keeps_its_held_out_errors():
    """The median held-out error per metric is written under ``held_out_error`` and read back."""
    vendor = amd(held_out_error={"tpot_ms": 0.12, "output_tokens_per_s": 0.08})
    data = vendor.to_dict()
    assert data["held_out_error"] == {"output_tokens_per_s": 0.08, "tpot_ms": 0.12}
    assert VendorEfficiency.from_dict(data) == vendor
    assert VendorEfficiency.from_dict(data).held_out_error == {"tpot_ms": 0.12, "output_tokens_per_s": 0.08}


def test_a_calibration_file_keeps_its_vendors(tmp_path):
    cal = calibration(amd())
    back = Calibration.read(cal.write(tmp_path / "cal.json"))
    assert back.vendors == cal.vendors
    assert Calibration.from_dict({k: v for k, v in cal.to_dict().items() if k != "vendors"}).vendors == {}


def test_a_family_fit_speaks_for_its_accelerators_without_kernel_tables():
    assert vendor_gpus("amd") == family_gpus("amd-cdna3") == ("mi300x", "mi325x")
    assert family_gpus("neuron-v2") == ("inferentia2", "trainium1") and family_gpus("neuron-v3") == ("trainium2",)
    assert family_gpus("tpu-v6e") == ("tpu-v6e",) and family_gpus("nvidia-hopper") == ("h100-pcie",)
    assert "h100-sxm" not in vendor_gpus("nvidia") and {"a10g", "l4", "h20"} <= set(vendor_gpus("nvidia"))


# ---- the published rows -------------------------------------------------------------------------------
ROWS = published_rows(("published_other_accelerators.csv",))


@pytest.mark.parametrize("source, model, isl, osl, concurrency, metric, value, max_batch", [
    # ROCm blog, 2025-01-29: vLLM throughput table (MI300X column) and the latency (TTLT) tables.
    ("rocm-blog-2025-01", "llama-3.1-70b", 128, 2048, "max", "output_tokens_per_s", 15105, None),
    ("rocm-blog-2025-01", "llama-3.1-405b", 2048, 2048, 128, "request_latency_ms", 168846, None),
    # AMD performance results, container rocm6.4.1_vllm_0.10.1_20250909: 405B, 2048/2048, 500 prompts.
    ("amd-perf-2025-09", "llama-3.1-405b", 2048, 2048, "max", "output_tokens_per_s", 2214.2, 500),
    ("amd-perf-2025-10", "llama-3.1-70b", 128, 2048, 1, "request_latency_ms", 15882, None),   # 15.882 s
])
def test_the_rows_are_the_published_figures(source, model, isl, osl, concurrency, metric, value, max_batch):
    found = [r for r in ROWS if (r.source_id, r.model, r.isl, r.osl, r.concurrency, r.metric)
             == (source, model, isl, osl, concurrency, metric)]
    assert [(r.value, r.max_batch, r.gpu, r.precision, r.kv_precision, r.tp) for r in found] == [
        (value, max_batch, "mi300x", "fp8", "fp8", 8)]


# Worked from the published figures: the Qwen3 speed benchmark prints (prompt + generated tokens) / time of one
# request; llmperf's 'inter token latency' is a request's end-to-end time over its output tokens counted by the
# Llama-2 tokenizer, its 'throughput' the overall output rate in those tokens (150 generated read as the mean count).
QWEN3 = "qwen3-speed-benchmark-h20"
LLMPERF = "llmperf-a10g-2024-06-vllm"


@pytest.mark.parametrize("source, model, precision, tp, isl, concurrency, metric, value", [
    # Qwen3-8B (SGLang) table: '<td>1</td><td>BF16</td><td>1</td><td>81.73</td>' -> (1 + 2048) / 81.73 s
    (QWEN3, "qwen3-8b", "bf16", 1, 1, 1, "request_latency_ms", round(2049 / 81.73 * 1000)),
    # Qwen3-235B-A22B (SGLang): 30720 tokens, FP8, 'GPU Num' 4 (TP=4), 887.90 tokens/s
    (QWEN3, "qwen3-235b-a22b", "fp8", 4, 30720, 1, "request_latency_ms", round((30720 + 2048) / 887.90 * 1000)),
    # vllm-meta-llama_Meta-Llama-3-8B-Instruct.csv, column 16: TTFT 302.748..., ITL 42.668..., 177.098... tokens
    (LLMPERF, "llama-3-8b", "fp16", 1, 550, 16, "ttft_ms", 302.7),
    (LLMPERF, "llama-3-8b", "fp16", 1, 550, 16, "request_latency_ms", round(42.66842311 * 177.0982143, 1)),
    (LLMPERF, "llama-3-8b", "fp16", 1, 550, 16, "output_tokens_per_s", round(289.873427 * 150 / 177.0982143, 1)),
])
def test_the_h20_and_a10g_rows_are_the_published_figures(source, model, precision, tp, isl, concurrency, metric, value):
    found = [r for r in ROWS if (r.source_id, r.model, r.precision, r.tp, r.isl, r.concurrency, r.metric)
             == (source, model, precision, tp, isl, concurrency, metric)]
    assert [r.value for r in found] == [pytest.approx(value, abs=1)]


def test_each_newly_measured_family_has_its_own_fit_naming_its_rows():
    """H20 under SGLang and A10G under vLLM answer with their own efficiencies, named by their sources; under the
    engines their rows did not measure the fit is carried. Both rest on fewer than three publications, so each
    band is at least as wide as the unmeasured reach's."""
    bundled = Calibration.bundled()
    for gpu, engine, precision, key, sources in (
            ("h20", "sglang", "bf16", "nvidia-h20:sglang", [QWEN3]),
            ("a10g", "vllm", "fp16", "nvidia-a10g:vllm", ["llmperf-a10g-2024-06-tgi", LLMPERF])):
        e = estimate("llama-3.1-8b", gpu, precision=precision, tp=1, isl=1024, osl=256, concurrency=4, engine=engine)
        assert (e.efficiency_source, e.evidence["sources"], e.calibrated) == (key, sources, False)
        fit = bundled.vendors[key]
        unmeasured = bundled.band_ratios(engine, "tpot_ms", "dense", tp=1, reach="unmeasured")
        assert not fit.stands_alone("tpot_ms")
        low, high = e.tpot_ms_band
        assert high / low >= unmeasured[1] / unmeasured[0] - 1e-9
    other = estimate("llama-3.1-8b", "h20", precision="bf16", tp=1, isl=1024, osl=256, concurrency=4, engine="vllm")
    assert (other.efficiency_source, other.extrapolation) == ("nvidia-h20:sglang>vllm", "carried")


def own_and_engine_error(rows) -> tuple[float, float]:
    """Median |modelled / published - 1| of ``rows`` with the bundled family fits, and with the engines' constants
    alone (no family fit)."""
    bundled = Calibration.bundled()
    measured = np.array([r.value for r in rows])
    return tuple(float(np.median(np.abs(predict(rows, calibration) / measured - 1)))
                 for calibration in (bundled, replace(bundled, vendors={})))


def test_the_h20_fit_reads_its_rows_better_than_the_engines_constants():
    """The H20 rows take 1.3-2.3x the SGLang constants' time (a dense model's step at about 40 % of the
    datasheet bandwidth: BF16 and FP8 weights of one model differ by half their bytes and their step times
    by about half); the family's fit predicts them within a few tenths of that."""
    own, engine = own_and_engine_error([r for r in ROWS if r.source_id == QWEN3])
    assert own < 0.15 < 0.30 < engine
    assert Calibration.bundled().vendors["nvidia-h20:sglang"].bandwidth_efficiency < 0.6


# Worked by hand from SGLang-JAX at f549302b (TPU v6e-4, TP 4, BF16): Qwen3.md's table and the full report it
# cuts from (docs/performance/qwen3_benchmark.md, 8-256 clients), SGL_JAX columns TTFT, ITL and output tok/s (the
# TTFT from the sweep's output_len=1 runs), and Llama3.1.md's printed block, whose lengths are drawn (no
# --random-range-ratio): isl and osl are the printed totals over 100 requests.
SGLANG_JAX = "sglang-jax-cookbook-tpu-v6e"


@pytest.mark.parametrize("model, isl, osl, concurrency, metric, value, max_batch, client", [
    # | 1024/1024 | 64  | 940.87   | 1346.38  | 11.11 | 18.34 | 5296.60 | 3043.58  |   (Qwen3-8B)
    ("qwen3-8b", 1024, 1024, 64, "output_tokens_per_s", 5296.60, 256, "synchronized"),
    ("qwen3-8b", 1024, 1024, 64, "tpot_ms", 11.11, 256, "synchronized"),
    ("qwen3-8b", 1024, 1, 64, "ttft_ms", 940.87, 256, "synchronized"),
    # | 1024/1024 | 256 | 11500.61 | 14985.60 | 34.27 | 68.14  | 2122.98 | 1652.79 |   (Qwen3-32B)
    ("qwen3-32b", 1024, 1024, 256, "tpot_ms", 34.27, 256, "synchronized"),
    # | 8192/1024 | 64  | 28849.51 | 36082.81 | 33.43 | 142.77 | 435.25  | 199.05  |
    ("qwen3-32b", 8192, 1024, 64, "output_tokens_per_s", 435.25, 256, "synchronized"),
    ("qwen3-32b", 8192, 1, 64, "ttft_ms", 28849.51, 256, "synchronized"),
    # the report's cells the cookbook does not repeat:
    # | 4096/1024 | 256 | 16892.56 | 24489.54 | 33.78 | 100.87 | 10978.87 | 5888.17 | 2744.72 | 1376.88 |   (Qwen3-8B)
    ("qwen3-8b", 4096, 1024, 256, "output_tokens_per_s", 2744.72, 256, "synchronized"),
    ("qwen3-8b", 4096, 1024, 256, "tpot_ms", 33.78, 256, "synchronized"),
    ("qwen3-8b", 4096, 1, 256, "ttft_ms", 16892.56, 256, "synchronized"),
    # | 1024/1024 | 8 | 356.59 | 469.74 | 18.29 | 22.81 | 427.69 | 342.46 | 427.69 | 342.46 |   (Qwen3-32B)
    ("qwen3-32b", 1024, 1024, 8, "output_tokens_per_s", 427.69, 256, "synchronized"),
    ("qwen3-32b", 1024, 1024, 8, "tpot_ms", 18.29, 256, "synchronized"),
    ("qwen3-32b", 1024, 1, 8, "ttft_ms", 356.59, 256, "synchronized"),
    # | 8192/1024 | 128 | 57299.20 | 75751.47 | 33.41 | 143.24 | 3457.24 | 1584.61 | 432.16 | 198.08 |
    ("qwen3-32b", 8192, 1024, 128, "output_tokens_per_s", 432.16, 256, "synchronized"),
    # 'Total input tokens: 26497', 'Total generated tokens: 25820', 'Output token throughput (tok/s): 1448.91',
    # 'Mean E2E Latency (ms): 2574.53', --max-concurrency 16, server --max-running-requests 64
    ("llama-3.1-8b", round(26497 / 100), round(25820 / 100), 16, "output_tokens_per_s", 1448.91, 64, "staggered"),
    ("llama-3.1-8b", 265, 258, 16, "request_latency_ms", 2574.53, 64, "staggered"),
])
def test_the_tpu_v6e_rows_are_the_published_figures(model, isl, osl, concurrency, metric, value, max_batch, client):
    found = [r for r in ROWS if (r.source_id, r.model, r.isl, r.osl, r.concurrency, r.metric)
             == (SGLANG_JAX, model, isl, osl, concurrency, metric)]
    assert [(r.value, r.max_batch, r.client, r.gpu, r.engine, r.precision, r.kv_precision, r.tp) for r in found] == [
        (value, max_batch, client, "tpu-v6e", "sglang", "bf16", "bf16", 4)]
    assert found[0].engine_version.startswith("sglang sglang-jax ")   # not an SGLang (GPU) release


def test_the_tpu_v6e_family_answers_with_its_own_efficiencies():
    """SGLang on TPU v6e (SGLang-JAX) answers with the fit on its cookbook's rows, named by that source; vLLM there
    carries its shortfall. One publication, so the band is at least as wide as the unmeasured reach's; TPU v5e
    and v5p, which no row measured, still answer with nothing measured."""
    bundled = Calibration.bundled()
    args = {"precision": "bf16", "tp": 4, "isl": 1024, "osl": 256, "concurrency": 16}
    own = estimate("qwen3-8b", "tpu-v6e", engine="sglang", **args)
    assert (own.efficiency_source, own.extrapolation, own.evidence["sources"], own.calibrated) == (
        "tpu-v6e:sglang", "fitted", [SGLANG_JAX], False)
    fit = bundled.vendors["tpu-v6e:sglang"]
    assert fit.measured_on == ("tpu-v6e",) and fit.sources == (SGLANG_JAX,)
    for metric in ("tpot_ms", "ttft_ms", "output_tokens_per_s"):
        assert not fit.stands_alone(metric)
        low, high = getattr(own, f"{metric}_band")
        unmeasured = bundled.band_ratios("sglang", metric, "dense", tp=4, reach="unmeasured")
        assert high / low >= unmeasured[1] / unmeasured[0] - 1e-9
    carried = estimate("qwen3-8b", "tpu-v6e", engine="vllm", **args)
    assert (carried.efficiency_source, carried.extrapolation) == ("tpu-v6e:sglang>vllm", "carried")
    other = estimate("llama-3.1-8b", "tpu-v5p", engine="vllm", **args)
    assert (other.efficiency_source, other.evidence["family_measured"]) == ("none", False)


def test_the_tpu_v6e_fit_reads_its_rows_better_than_the_engines_constants():
    """SGLang's constants put Qwen3's throughput on TPU v6e-4 at about 1.4x the report's, its TPOT at about 0.8x
    (a decode step slower than SGLang's GPU constants give the datasheet's 1,640 GB/s) and its TTFT at about 0.6x;
    the family's fit reads each closer, within the goals a family is held to (15 / 20 / 25 %)."""
    bundled = Calibration.bundled()
    for metric, goal in (("output_tokens_per_s", 0.15), ("tpot_ms", 0.20), ("ttft_ms", 0.25)):
        own, engine = own_and_engine_error([r for r in ROWS if r.source_id == SGLANG_JAX and r.metric == metric])
        assert own < min(goal, engine)
    assert bundled.vendors["tpu-v6e:sglang"].bandwidth_efficiency < 0.9 * bundled.engines["sglang"].bandwidth_efficiency


def test_every_row_carries_its_source_date_and_engine_version():
    assert len(ROWS) == 70 + 60 + 30 + 112 and len(published_rows()) == len(ROWS) + 337
    for r in published_rows():
        assert r.url.startswith("https://") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", r.published)
        assert r.engine_version.startswith(f"{r.engine} ")


def made_by(truth: VendorEfficiency, shapes, base: Calibration):
    """Rows of ``ROWS[0]``'s source at each ``shapes`` change (model, lengths, clients, metric), each valued as
    the model answers it with ``truth`` for its family."""
    rows = [replace(ROWS[0], max_batch=None, value=1.0, **change) for change in shapes]
    values = predict(rows, replace(base, vendors={truth.key: truth}))
    return [replace(r, value=float(v)) for r, v in zip(rows, values)]


def test_a_fit_recovers_the_efficiencies_its_rows_were_made_with():
    """Rows made by the model with eta_bw 0.6 and eta_c 0.45 on MI300X, over shapes and batches like the
    published ones (decode-bound and prefill-heavy), give those two back."""
    truth = amd(bandwidth_efficiency=0.6, compute_efficiency=0.45)
    base = replace(Calibration.bundled(), vendors={})
    shapes = [(r.model, r.isl, r.osl, r.concurrency) for r in ROWS[8:40:5]] + [("llama-3.1-70b", 8000, 2, 1)]
    fitted = fit_vendor(made_by(truth, [{"model": m, "isl": i, "osl": o, "concurrency": c,
                                         "metric": "request_latency_ms"} for m, i, o, c in shapes], base), base)
    assert (fitted.bandwidth_efficiency, fitted.compute_efficiency) == pytest.approx((0.6, 0.45), rel=1e-3)


@pytest.mark.parametrize("osl, fitted", [(1, True), (128, False)])
def test_a_prefill_only_loads_ttfts_are_fitted_and_other_loads_of_several_clients_are_not(osl, fitted):
    """Decode rows of one client (memory-bound, no prompt shares their steps) say nothing of eta_c; TTFTs of 8
    clients made with eta_c 0.45 do, where they time the prompts' compute alone: a load that generates one token
    (no decode step between the prompts) is fitted and gives 0.45 back; one that decodes 128 tokens times the
    engine's admission between steps, is a check, and leaves eta_c at the engine's start."""
    truth = amd(bandwidth_efficiency=0.6, compute_efficiency=0.45)
    base = replace(Calibration.bundled(), vendors={})
    decode = [{"model": "llama-3.1-70b", "isl": i, "osl": 256, "concurrency": 1, "metric": "tpot_ms"} for i in (512, 2048)]
    prompts = [{"model": "llama-3.1-70b", "isl": i, "osl": osl, "concurrency": 8, "metric": "ttft_ms"} for i in (1024, 4096)]
    found = fit_vendor(made_by(truth, decode + prompts, base), base)
    assert found.bandwidth_efficiency == pytest.approx(0.6, rel=1e-3)
    if fitted:
        assert found.compute_efficiency == pytest.approx(0.45, rel=1e-2)
    else:
        assert found.compute_efficiency == pytest.approx(base.engines["vllm"].compute_efficiency, rel=1e-6)


def test_the_bundled_fit_beats_the_engines_constants_on_the_published_rows():
    """The published MI300X rows are predicted better with the vendor's efficiencies than with vLLM's
    NVIDIA-fitted ones, and the estimate there says it is not calibrated."""
    with_vendor, engine_only = own_and_engine_error(ROWS)
    assert with_vendor < engine_only
    e = estimate("llama-3.1-70b", "mi300x", precision="fp8", kv_precision="fp8", tp=8, isl=128, osl=2048,
                 concurrency=1)
    assert (e.calibrated, e.efficiency_source) == (False, "amd-cdna3:vllm")
    assert e.tpot_ms_band[0] < e.tpot_ms < e.tpot_ms_band[1]


def test_the_bundled_vendor_entry_is_what_with_vendors_fits():
    """calibration.json's amd-cdna3:vllm entry is reproduced by refitting on the bundled rows (the bands and
    held-out errors included): the shipped numbers come from the shipped data. A family's fit and its held-out
    band see its own rows only, so the refit takes CDNA3's."""
    bundled = Calibration.bundled()
    cdna3 = [r for r in published_rows() if get_accelerator(r.gpu).family == "amd-cdna3"]
    refit = with_vendors(replace(bundled, vendors={}), cdna3).vendors["amd-cdna3:vllm"]
    shipped = bundled.vendors["amd-cdna3:vllm"]
    assert (refit.bandwidth_efficiency, refit.compute_efficiency) == pytest.approx(
        (shipped.bandwidth_efficiency, shipped.compute_efficiency), abs=2e-4)
    assert refit.bands.keys() == shipped.bands.keys() == {"output_tokens_per_s", "tpot_ms"}
    for metric in refit.bands:
        assert refit.bands[metric] == pytest.approx(shipped.bands[metric], abs=2e-3)
    assert len(shipped.bands["tpot_ms"]) == len(BAND_LEVELS)


def test_a_refit_on_the_users_rows_keeps_the_vendors_entry_for_other_gpus():
    """``finops calibrate`` on H100 rows keeps the prior's vendor efficiencies: MI300X estimates made with
    the refit still use AMD's (the user measured no MI300X)."""
    from finops.sizing.calibration import Measurement, fit

    prior = Calibration.bundled()
    rows = [Measurement("vllm", "llama-3.1-8b", "h100-sxm", "bf16", 1, 1000, 200, 16, 120.0, 10.0)]
    refit = fit(rows, prior=prior)
    assert refit.vendors == prior.vendors
    e = estimate("llama-3.1-8b", "mi300x", precision="bf16", tp=1, isl=1000, osl=200, concurrency=16,
                 calibration=refit)
    assert e.efficiency_source == "amd-cdna3:vllm"


def test_confidence_uses_each_rows_own_band():
    """``size --confidence 0.9`` judges every row at the P90 held-out ratio of its own class: here the engine's
    is 2.0 for every metric and the vendor's TPOT one 1.25 (TPOT_QUANTILES); an MI300X row takes the vendor's
    TPOT band and, its rows reporting no TTFT, the engine's TTFT band, whatever else is searched beside it."""
    from finops.sizing.confidence import pessimism

    bands = {"vllm": {m: (0.4, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0) for m in ("ttft_ms", "tpot_ms", "output_tokens_per_s")}}
    cal = calibration(amd(), bands=bands)
    for gpus in (("mi300x",), ("mi300x", "h100-sxm"), ("h100-sxm", "mi300x")):
        table = candidate_table(resolve_model("llama-3.1-8b"), gpus, ("bf16",), (1,), "vllm", cal)
        p = pessimism(table, cal, "vllm", 0.9)
        expected = {"mi300x": (2.0, 1.25, 1 / 0.5), "h100-sxm": (2.0, 2.0, 1 / 0.5)}
        for row, gpu in enumerate(table.gpus):
            assert (p.ttft[row], p.tpot[row], p.load[row]) == pytest.approx(expected[gpu], rel=EXACT)
