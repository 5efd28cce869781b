"""Which engine runs which accelerator and precision, and where the latency model extrapolates."""

from __future__ import annotations

import json

import pytest

from finops.catalog import get_model
from finops.errors import InputError
from finops.sizing.calibration import bundled_measurements, fit, queue_limited
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import estimate
from finops.sizing.search import search
from finops.sizing.support import engines_for, support_table, supports
from finops.sizing.workload import presets
from tests.sizing.test_search import BOOK


@pytest.mark.parametrize("engine, gpu, precision, expected", [
    ("trtllm", "h100-sxm", "fp8", True),
    ("trtllm", "mi300x", "bf16", False),          # TensorRT-LLM is NVIDIA only
    ("trtllm", "tpu-v5e", "bf16", False),
    ("trtllm", "inferentia2", "bf16", False),
    ("vllm", "a100-80gb", "fp8", False),          # no FP8 tensor cores before Ada
    ("vllm", "l4", "fp8", True),                  # Ada has FP8
    ("vllm", "tpu-v6e", "int8", True),
    ("vllm", "tpu-v6e", "fp8", False),
    ("vllm", "mi300x", "fp8", True),
    ("vllm", "mi300x", "int4", False),            # no AWQ/GPTQ kernels on ROCm in vLLM's table
    ("vllm", "inferentia2", "int8", True),        # vLLM-Neuron
    ("sglang", "mi325x", "bf16", True),
    ("sglang", "tpu-v6e", "bf16", True),          # SGLang-JAX, the cookbook's TPU v6e recipes
    ("sglang", "tpu-v6e", "fp8", False),
    ("sglang", "tpu-v5p", "bf16", False),         # no SGLang-JAX recipe was measured there
    ("sglang", "trainium1", "bf16", False),
])
def test_support_table(engine, gpu, precision, expected):
    assert supports(engine, gpu, precision) is expected


def test_every_row_names_its_source_and_date_and_only_catalog_ids():
    from finops.catalog import accelerators

    known = set(accelerators())
    for row in support_table():
        assert row.source and row.as_of in ("2026-11-30", "2026-12-07")   # SGLang-JAX on TPU v6e read later
        assert row.gpus <= known
    assert engines_for("inferentia2", "bf16") == ("vllm",)


def test_estimate_refuses_a_combination_the_engine_does_not_run():
    with pytest.raises(InputError, match="trtllm does not serve bf16 weights on tpu-v6e") as info:
        estimate("llama-3.1-8b", "tpu-v6e", precision="bf16", tp=1, isl=1024, osl=256, engine="trtllm")
    assert "vllm" in info.value.hint


# Calibrated only where the engine was measured on that GPU, precision, model class and TP together,
# on models of a comparable size (the old rule, "GPU and precision each seen somewhere",
# called SGLang FP8 on H100 and TRT-LLM BF16 on H200 calibrated, neither of which is in the data).
@pytest.mark.parametrize("engine, model, gpu, precision, tp, calibrated", [
    ("vllm", "llama-3.1-8b", "h200", "fp8", 1, True),            # 10 rows of exactly this
    ("trtllm", "llama-3.1-8b", "h100-sxm", "bf16", 8, True),
    ("trtllm", "llama-3.1-70b", "h200", "fp8", 4, True),
    ("vllm", "llama-3.1-8b", "h100-sxm", "fp8", 1, False),       # only Qwen3-32B at TP1 there: 4x the size
    ("sglang", "llama-3.1-8b", "h100-sxm", "fp8", 1, False),     # SGLang FP8 was measured on H200 only
    ("trtllm", "llama-3.1-8b", "h200", "bf16", 1, False),        # TRT-LLM on H200 was measured at FP8 only
    ("trtllm", "llama-3.1-405b", "h200", "fp8", 8, False),       # dense TP8 measured up to 70B
    ("vllm", "qwen3-30b-a3b", "h200", "fp8", 1, False),          # no MoE model in the data
    ("trtllm", "deepseek-v3", "h200", "fp8", 8, False),          # MLA rows are held out, never fitted
    ("trtllm", "llama-3.1-70b", "b200", "fp8", 4, True),         # B200 from aiconfigurator-core's sample
    ("vllm", "llama-3.1-8b", "h100-sxm", "int8", 1, False),      # no INT8 kernel in the data
    ("vllm", "llama-3.1-8b", "a100-80gb", "bf16", 1, False),
    ("vllm", "llama-3.1-8b", "mi300x", "fp8", 1, False),
    ("vllm", "llama-3.1-8b", "inferentia2", "int8", 1, False),
])
def test_estimates_say_whether_they_extrapolate(engine, model, gpu, precision, tp, calibrated):
    e = estimate(model, gpu, precision=precision, tp=tp, isl=1024, osl=256, concurrency=8, engine=engine)
    assert e.calibrated is calibrated


def test_the_bundled_calibration_lists_what_it_measured():
    rows = [r for r in bundled_measurements() if not queue_limited(r) and r.model != "deepseek-v3"]   # no MLA
    measured = {(r.engine, r.gpu, r.precision, "moe" if get_model(r.model).is_moe else "dense", r.tp) for r in rows}
    cal = Calibration.bundled()
    listed = {(e, *entry) for e, entries in cal.measured.items() for entry in entries}
    assert listed == measured
    assert ("trtllm", "h100-sxm", "fp8", "moe", 8) in listed and ("vllm", "b200", "fp8", "moe", 2) in listed
    sizes = {size for entries in cal.measured.values() for low_high in entries.values() for size in low_high}
    # DeepSeek-V3/R1 rows are held-out test data, never fitted: MLA stays extrapolated
    assert sizes <= {get_model(m).active_params_b
                     for m in ("llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "qwen3-235b-a22b", "minimax-m2.5")}


def test_a_users_load_test_extends_what_is_calibrated(tmp_path):
    row = next(r for r in bundled_measurements() if r.engine == "vllm" and r.model == "llama-3.1-8b")
    mine = [row.__class__(**{**row.__dict__, "gpu": "l40s", "precision": "bf16", "tp": 1})]
    refit = fit(mine, prior=Calibration.bundled(), source="my load test")
    size = get_model("llama-3.1-8b").active_params_b
    assert not Calibration.bundled().covers("vllm", "l40s", "bf16", "dense", 1, size)
    assert refit.covers("vllm", "l40s", "bf16", "dense", 1, size)
    assert not refit.covers("vllm", "l40s", "bf16", "dense", 2, size)
    again = Calibration.read(refit.write(tmp_path / "cal.json"))
    assert again.measured == refit.measured
    assert json.loads((tmp_path / "cal.json").read_text())["measured"]["vllm"]


def test_search_never_offers_an_unsupported_combination_and_flags_extrapolation():
    workload = presets()["seed002-financial-copilot"]   # a dense model: the data has no MoE one
    result = search(workload, engine="trtllm", price_book=BOOK, top=50)
    assert result.options
    assert all(supports("trtllm", o.gpu, o.precision) for o in result.options)
    assert {o.calibrated for o in result.options} == {True, False}
    only = search(workload, engine="trtllm", price_book=BOOK, top=50, calibrated_only=True)
    assert only.options and all(o.calibrated for o in only.options)
    assert {(o.gpu, o.precision, o.tp) for o in only.options} == {
        (o.gpu, o.precision, o.tp) for o in result.options if o.calibrated}


def test_an_engine_that_runs_none_of_the_gpus_says_so():
    result = search(presets()["seed002-translation"], engine="sglang", gpus=["tpu-v5e", "inferentia2"],
                    price_book=BOOK)
    assert not result.options
    assert "sglang runs none of the GPU x precision combinations searched" in result.infeasible_reason
