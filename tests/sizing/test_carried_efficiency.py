"""A family's measured shortfall carries to the engines its rows did not measure.

Expected efficiencies are worked from calibration.json's numbers as the file holds them (the engines' and the
family fits' ``eta_bw``, ``eta_c``), not from the code; the TPOT bounds follow from the roofline (a decode step
at batch 1 reads the weights at ``eta_bw`` x bandwidth, plus fixed overheads that do not scale with it)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from finops.catalog import get_accelerator
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import estimate
from finops.sizing.vendor_efficiency import BAND_LEVELS

BUNDLED = json.loads((Path(__file__).parents[2] / "finops" / "catalog" / "data" / "calibration.json").read_text())
P10, P90 = BAND_LEVELS.index(0.1), BAND_LEVELS.index(0.9)


def _etas(entry: dict) -> tuple[float, float]:
    return entry["bandwidth_efficiency"], entry["compute_efficiency"]


@pytest.mark.parametrize("gpu, engine, fit", [
    ("h20", "vllm", "nvidia-h20:sglang"),
    ("h20", "trtllm", "nvidia-h20:sglang"),
    ("a10g", "trtllm", "nvidia-a10g:vllm"),
    ("a10g", "sglang", "nvidia-a10g:vllm"),
    ("mi325x", "sglang", "amd-cdna3:vllm"),
])
def test_the_family_shortfall_scales_the_other_engines_constants(gpu, engine, fit):
    measured = fit.split(":")[1]
    own, target, source = (_etas(BUNDLED["vendors"][fit]), _etas(BUNDLED["engines"][engine]),
                           _etas(BUNDLED["engines"][measured]))
    expected = [min(max(t * o / s, 0.05), 1.0) for o, t, s in zip(own, target, source)]
    carried = Calibration.bundled().vendor_efficiency(engine, get_accelerator(gpu))
    assert carried.key == f"{fit}>{engine}"
    assert (carried.bandwidth_efficiency, carried.compute_efficiency) == pytest.approx(expected, rel=1e-9)
    assert carried.engine == engine and carried.measured_engine == measured


def test_a_carried_efficiency_stays_inside_the_datasheet():
    """The A10G's eta_c under vLLM (0.911) over vLLM's (0.694) times SGLang's (0.826) would be 1.08."""
    carried = Calibration.bundled().vendor_efficiency("sglang", get_accelerator("a10g"))
    assert carried.compute_efficiency == 1.0


def test_a_fit_of_its_own_answers_before_a_carried_one():
    cal = Calibration.bundled()
    assert cal.vendor_efficiency("sglang", get_accelerator("h20")).key == "nvidia-h20:sglang"
    assert cal.vendor_efficiency("vllm", get_accelerator("a10g")).key == "nvidia-a10g:vllm"
    assert cal.vendor_efficiency("sglang", get_accelerator("tpu-v6e")).key == "tpu-v6e:sglang"
    assert cal.vendor_efficiency("vllm", get_accelerator("tpu-v6e")).key == "tpu-v6e:sglang>vllm"
    assert cal.vendor_efficiency("sglang", get_accelerator("tpu-v5e")) is None      # no family fit to carry


def test_the_h20_under_vllm_reads_its_measured_shortfall():
    """Batch 1 of Llama-3.1-70B on 4 H20s is a weight read: the carried eta_bw (vLLM's x 0.42 / 0.98) makes the
    step at most 0.98 / 0.42 = 2.3x slower than vLLM's own constants, and the fixed overheads keep it above 1."""
    args = {"precision": "fp8", "tp": 4, "isl": 1024, "osl": 256, "engine": "vllm", "concurrency": 1}
    cal = Calibration.bundled()
    carried = estimate("llama-3.1-70b", "h20", calibration=cal, **args)
    engine_only = estimate("llama-3.1-70b", "h20", calibration=replace(cal, vendors={}), **args)
    bound = BUNDLED["engines"]["sglang"]["bandwidth_efficiency"] / BUNDLED["vendors"]["nvidia-h20:sglang"][
        "bandwidth_efficiency"]
    assert 1.4 < carried.tpot_ms / engine_only.tpot_ms <= bound
    assert (carried.efficiency_source, carried.extrapolation, carried.calibrated) == (
        "nvidia-h20:sglang>vllm", "carried", False)
    ev = carried.evidence
    assert (ev["family_measured"], ev["measured_engine"], ev["sources"]) == (
        True, "sglang", ["qwen3-speed-benchmark-h20"])
    assert engine_only.evidence["measured_engine"] is None     # nothing of the H20 under vLLM


@pytest.mark.parametrize("gpu, engine, model, tp", [
    ("h20", "trtllm", "llama-3.1-8b", 1),
    ("a10g", "sglang", "llama-3.1-8b", 1),
    ("mi300x", "sglang", "llama-3.1-70b", 4),
])
def test_a_carried_band_envelops_the_familys_own_and_the_unmeasured_one(gpu, engine, model, tp):
    cal = Calibration.bundled()
    device = get_accelerator(gpu)
    carried = cal.vendor_efficiency(engine, device)
    fit = BUNDLED["vendors"][carried.key.split(">")[0]]
    e = estimate(model, gpu, precision="bf16", tp=tp, isl=1024, osl=256, engine=engine, concurrency=4)
    for metric in ("tpot_ms", "ttft_ms", "output_tokens_per_s"):
        low, high = getattr(e, f"{metric}_band")
        value = getattr(e, metric)
        unmeasured = cal.band(engine, metric, 0.1, e.model_class, tp=tp, reach="unmeasured"), \
            cal.band(engine, metric, 0.9, e.model_class, tp=tp, reach="unmeasured")
        own = fit["bands"].get(metric)
        for q10, q90 in [unmeasured, *([(own[P10], own[P90])] if own else [])]:
            assert low <= value * q10 * (1 + 1e-9) and high >= value * q90 * (1 - 1e-9)
