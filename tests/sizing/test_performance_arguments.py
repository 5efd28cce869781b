"""``estimate`` and the calibration file at their edges: each bad argument refused with a message that
names it and a hint that names what is covered; the boundaries that are accepted; names taken in any
case; the calibration file's round trip, coverage, bands and errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

from finops.catalog import get_model
from finops.errors import InputError, UnknownNameError
from finops.sizing.engine_constants import ENGINES, Calibration, EngineConstants, model_class
from finops.sizing.performance import Estimate, estimate, with_step_time
from finops.sizing.vendor_efficiency import BAND_LEVELS

BASE = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "bf16", "tp": 1, "isl": 1024, "osl": 256,
        "concurrency": 8, "engine": "vllm"}
PRECISIONS_HINT = "use one of: fp32, bf16, fp16, fp8, int8, int4"


def run(**changes) -> Estimate:
    arguments = {**BASE, **changes}
    return estimate(arguments.pop("model"), arguments.pop("gpu"), **arguments)


REFUSED = [
    ({"engine": "tgi"}, "unknown engine 'tgi'", "use one of: trtllm, vllm, sglang"),
    ({"precision": "fp4"}, "unknown precision 'fp4'", PRECISIONS_HINT),
    ({"gpu": "a100-80gb", "precision": "fp8"}, "NVIDIA A100 80GB SXM has no FP8 tensor path",
     "choose bf16, or a GPU with FP8 (Hopper, Ada, Blackwell, MI300)"),
    ({"gpu": "mi300x", "engine": "trtllm"}, "trtllm does not serve bf16 weights on mi300x",
     "engines for bf16 on mi300x: vllm, sglang"),
    ({"cache_hit_rate": 1.5}, "cache hit rate must be between 0 and 1, got 1.5", None),
    ({"cache_hit_rate": -0.01}, "cache hit rate must be between 0 and 1, got -0.01", None),
    ({"max_batch": 0}, "max batch must be a whole number >= 1, got 0", None),
    ({"max_batch": True}, "max batch must be a whole number >= 1, got True", None),
    ({"max_batch": 2.0}, "max batch must be a whole number >= 1, got 2.0", None),
    ({"prefill_token_budget": 0}, "prefill token budget must be a whole number >= 1, got 0", None),
    ({"prefill_token_budget": -8192}, "prefill token budget must be a whole number >= 1, got -8192", None),
    ({"concurrency": 0}, "concurrency must be a whole number >= 1 or 'max', got 0", None),
    ({"concurrency": True}, "concurrency must be a whole number >= 1 or 'max', got True", None),
    ({"concurrency": 2.5}, "concurrency must be a whole number >= 1 or 'max', got 2.5", None),
    ({"concurrency": "all"}, "concurrency must be a whole number >= 1 or 'max', got 'all'", None),
    ({"tp": 3}, "tp 3 does not split llama-3.1-8b's 32 attention heads (8 KV heads) evenly; engines shard "
     "whole heads", "use one of: 1, 2, 4, 8, 16"),
    ({"kv_precision": "int4"}, "unknown KV precision 'int4'", "use one of: fp32, bf16, fp16, fp8, int8"),
    ({"step_time": "measured"}, "unknown step time 'measured'", "use one of: auto, kernels, roofline"),
]


@pytest.mark.parametrize("changes, message, hint", REFUSED)
def test_a_bad_argument_is_refused_with_what_is_covered(changes, message, hint):
    with pytest.raises(InputError) as caught:
        run(**changes)
    assert caught.value.message == message
    assert caught.value.hint == hint


def test_an_uncalibrated_engine_is_an_unknown_name():
    cal = Calibration.bundled()
    only_vllm = dataclasses.replace(cal, engines={"vllm": cal.constants("vllm")})
    with pytest.raises(UnknownNameError, match="unknown engine 'trtllm'"):
        run(engine="trtllm", calibration=only_vllm)


@pytest.mark.parametrize("changes, field, value", [
    ({"engine": " TRTLLM "}, "engine", "trtllm"), ({"precision": " BF16 "}, "precision", "bf16"),
    ({"kv_precision": "FP8"}, "kv_precision", "fp8"), ({"engine": "SGLang"}, "engine", "sglang"),
])
def test_names_are_taken_in_any_case(changes, field, value):
    assert getattr(run(**changes), field) == value


@pytest.mark.parametrize("changes", [{"cache_hit_rate": 0.0}, {"cache_hit_rate": 1.0}, {"max_batch": 1},
                                     {"prefill_token_budget": 1, "isl": 16}, {"concurrency": 1}])
def test_the_boundaries_are_accepted(changes):
    e = run(**changes)
    assert e.fits and e.ttft_ms > 0 and e.tpot_ms > 0


def test_a_batch_limit_of_one_serves_one_and_queues_the_rest():
    e = run(max_batch=1, concurrency=4)
    assert (e.max_batch, e.running_batch, e.concurrency) == (1, 1, 4)
    alone = run(concurrency=1)
    cycle = alone.ttft_ms + 255 * alone.tpot_ms
    assert e.ttft_ms == pytest.approx(alone.ttft_ms + 3 * cycle, rel=1e-9)   # Little's law: 3 cycles ahead


def test_requests_beyond_the_batch_limit_wait_for_a_slot_by_littles_law():
    """10 clients, 4 slots: the 6 beyond wait (10 - 4) / (4 slots / cycle) = 1.5 cycles of the running four."""
    e, four = run(max_batch=4, concurrency=10), run(concurrency=4)
    assert (e.running_batch, e.concurrency) == (4, 10)
    cycle = four.ttft_ms + 255 * four.tpot_ms
    assert e.ttft_ms == pytest.approx(four.ttft_ms + 6 * cycle / 4, rel=1e-9)
    assert e.tpot_ms == four.tpot_ms and e.output_tokens_per_s == pytest.approx(4 * 256 / cycle * 1e3, rel=1e-9)
    assert e.request_latency_ms == pytest.approx(e.ttft_ms + 255 * e.tpot_ms, rel=1e-9)


def test_a_whole_prompt_from_the_cache_still_pays_its_step():
    """A 100 % hit leaves no prompt FLOPs: the prefill is the one step that returns the first token."""
    c = Calibration.bundled().constants("vllm")
    e = run(cache_hit_rate=1.0, concurrency=1)
    overhead_ms = 32 * c.step_overhead_us_per_layer[0] / 1e3
    assert e.prefill_ms == pytest.approx(overhead_ms, rel=1e-9)


@pytest.mark.parametrize("engine, precision, kv", [("trtllm", "fp8", "fp8"), ("vllm", "fp8", "bf16"),
                                                   ("sglang", "bf16", "bf16"), ("trtllm", "bf16", "bf16")])
def test_the_kv_cache_precision_is_the_engines_default(engine, precision, kv):
    """TRT-LLM's FP8 checkpoints carry an FP8 KV cache; vLLM and SGLang keep the model's 16-bit dtype."""
    e = run(engine=engine, precision=precision)
    assert e.kv_precision == kv
    assert e.kv_bytes_per_token == 2 * 32 * 8 * 128 * {"fp8": 1, "bf16": 2}[kv]
    assert run(engine=engine, precision=precision, tp=2).kv_bytes_per_token_per_gpu == e.kv_bytes_per_token / 2


def test_engine_defaults_fill_the_batch_limit_and_the_prefill_budget():
    assert (run(engine="vllm").max_batch, run(engine="vllm").prefill_token_budget) == (1024, 8192)
    assert (run(engine="trtllm").max_batch, run(engine="sglang").max_batch) == (2048, 4096)
    assert run(max_batch=7, prefill_token_budget=512).prefill_token_budget == 512


@pytest.mark.parametrize("model, kind", [("llama-3.1-8b", "dense"), ("qwen3-30b-a3b", "moe"),
                                         ("mixtral-8x7b", "moe"), ("deepseek-v3", "mla")])
def test_model_class(model, kind):
    assert model_class(get_model(model)) == kind


def test_step_time_switches_measured_kernels_on_and_off():
    c = Calibration.bundled().constants("vllm")
    assert with_step_time(c, "auto") is c
    assert with_step_time(c, "kernels") == dataclasses.replace(c, kernel_steps=1.0, kernel_steps_moe=1.0)
    assert with_step_time(c, "roofline") == dataclasses.replace(c, kernel_steps=0.0, kernel_steps_moe=0.0)
    assert run(step_time="kernels").step_time_source == "kernels"
    assert run(engine="trtllm", step_time="roofline").step_time_source == "roofline"
    assert run(model="qwen3-30b-a3b", step_time="kernels").step_time_source == "kernels"    # its experts measured
    unmeasured = dataclasses.replace(get_model("qwen3-30b-a3b"), num_experts=64)           # an expert shape not
    assert run(model=unmeasured, step_time="kernels").step_time_source == "roofline"       # in the tables


def test_an_estimate_is_a_plain_record():
    e = run()
    record = e.to_dict()
    assert list(record) == [f.name for f in dataclasses.fields(Estimate)]
    assert (record["ttft_ms"], record["ttft_ms_band"], record["model"]) == (e.ttft_ms, e.ttft_ms_band, "llama-3.1-8b")


# --- calibration files ---------------------------------------------------------------------------------

CONSTANTS = EngineConstants(bandwidth_efficiency=0.8, compute_efficiency=0.5, step_overhead_us_per_layer=(10, 20, 40, 80),
                            allreduce_gbps=50.0, prefill_queue=0.4, ttft_steps=2.0, ttft_fixed_ms=30.0,
                            prefill_burst=0.2, link_efficiency=0.5)
BANDS = {"vllm": {"tpot_ms": (0.5, 0.6, 0.8, 1.0, 1.2, 1.4, 1.5), "ttft_ms": (0.3, 0.4, 0.7, 1.0, 1.5, 2.5, 3.0),
                  "output_tokens_per_s": (0.6, 0.7, 0.85, 1.0, 1.1, 1.3, 1.4)},
         "vllm:moe": {"tpot_ms": (0.9, 0.95, 0.97, 1.0, 1.05, 1.1, 1.2)}}
MEASURED = {"vllm": {("h100-sxm", "bf16", "dense", 1): (8.0, 70.0), ("h200", "fp8", "moe", 2): (3.3, 3.3)}}


def calibration(**changes) -> Calibration:
    fields = {"engines": {e: CONSTANTS for e in ENGINES}, "source": "test", "as_of": "2026-12-02", "rows": 12,
              "held_out_tpot_error": 0.1, "held_out_ttft_error": 0.3, "held_out_throughput_error": 0.12,
              "measured": MEASURED, "bands": BANDS, **changes}
    return Calibration(**fields)


def test_a_calibration_file_round_trips(tmp_path):
    cal = calibration()
    again = Calibration.read(cal.write(tmp_path / "cal.json"))
    assert again == cal
    data = json.loads((tmp_path / "cal.json").read_text())
    assert data["band_levels"] == list(BAND_LEVELS)
    assert data["measured"]["vllm"] == [["h100-sxm", "bf16", "dense", 1, 8.0, 70.0], ["h200", "fp8", "moe", 2, 3.3, 3.3]]
    assert data["engines"]["vllm"]["step_overhead_us_per_layer"] == [10, 20, 40, 80]
    assert (data["rows"], data["held_out_ttft_error"]) == (12, 0.3)


def test_constants_written_before_the_kernel_fields_read_with_their_defaults():
    data = CONSTANTS.to_dict()
    for name in ("kernel_steps", "kernel_decode_credit_us", "kernel_prefill_scale", "kernel_step_overhead_us"):
        data.pop(name)
    assert EngineConstants.from_dict(data) == CONSTANTS
    assert EngineConstants.from_dict({**data, "kernel_step_overhead_us": [1, 2, 3, 4]}).kernel_step_overhead_us == (1, 2, 3, 4)


@pytest.mark.parametrize("active_b, covered", [(4.0, True), (3.99, False), (140.0, True), (140.1, False), (30.0, True)])
def test_a_fit_vouches_for_half_the_smallest_to_twice_the_largest_model(active_b, covered):
    cal = calibration()
    assert cal.covers("vllm", "h100-sxm", "bf16", "dense", 1, active_b) is covered
    assert cal.covers("vllm", "h100-sxm", "bf16", "dense", 2, 30.0) is False
    assert cal.covers("sglang", "h100-sxm", "bf16", "dense", 1, 30.0) is False


def test_estimate_says_when_its_configuration_was_calibrated():
    cal = calibration()
    assert run(calibration=cal).calibrated is True
    assert run(calibration=cal, tp=2).calibrated is False


@pytest.mark.parametrize("level, expected", [(0.1, 0.6), (0.9, 1.4), (0.175, 0.7), (0.5, 1.0), (0.0, 0.5), (1.0, 1.5)])
def test_a_band_is_interpolated_between_its_levels_and_clamped(level, expected):
    assert calibration().band("vllm", "tpot_ms", level) == pytest.approx(expected)


def test_a_band_of_the_model_class_is_preferred_and_the_engines_is_the_fallback():
    cal = calibration()
    assert cal.band("vllm", "tpot_ms", 0.1, "moe") == 0.95
    assert cal.band("vllm", "tpot_ms", 0.1, "dense") == 0.6
    assert cal.band("vllm", "ttft_ms", 0.1, "moe") == 0.4           # the class has no TTFT band: the engine's
    assert cal.band("sglang", "tpot_ms", 0.1) is None


def test_an_estimates_bands_are_its_value_times_the_p10_and_p90_ratios():
    e = run(calibration=calibration())
    assert e.tpot_ms_band == pytest.approx((e.tpot_ms * 0.6, e.tpot_ms * 1.4))
    assert e.ttft_ms_band == pytest.approx((e.ttft_ms * 0.4, e.ttft_ms * 2.5))
    assert e.output_tokens_per_s_band == pytest.approx((e.output_tokens_per_s * 0.7, e.output_tokens_per_s * 1.3))
    moe = run(model="qwen3-30b-a3b", calibration=calibration())      # its class's band, both ends
    assert moe.tpot_ms_band == pytest.approx((moe.tpot_ms * 0.95, moe.tpot_ms * 1.1))
    assert moe.ttft_ms_band == pytest.approx((moe.ttft_ms * 0.4, moe.ttft_ms * 2.5))   # no class TTFT band: the engine's
    assert moe.band_classes == {"ttft_ms": "vllm", "tpot_ms": "vllm:moe", "output_tokens_per_s": "vllm"}
    bare = run(calibration=calibration(bands={}))
    assert (bare.tpot_ms_band, bare.ttft_ms_band, bare.output_tokens_per_s_band) == (None, None, None)


GOOD = calibration().to_dict()
WRITE_ONE = "write one with `finops calibrate`"
REWRITE = "rewrite the file with `finops calibrate`"
NEEDS = ("each engine needs bandwidth_efficiency, compute_efficiency, step_overhead_us_per_layer, allreduce_gbps, "
         "prefill_queue, ttft_steps, ttft_fixed_ms, prefill_burst, link_efficiency, admission_steps, "
         "kernel_steps, kernel_steps_moe, kernel_decode_credit_us, kernel_prefill_scale, kernel_step_overhead_us, "
         "moe_overhead_us_per_layer, decode_interference")
NOT_OBJECT = "a calibration file is a JSON object with an 'engines' object"
NOT_NUMBERS = ("calibration 'rows' and errors must be numbers, 'measured' lists of [gpu, precision, model class, tp, "
               "smallest, largest model in B active parameters] per engine, 'bands' lists of numbers")
BROKEN = [
    ([], NOT_OBJECT, WRITE_ONE),
    ({**GOOD, "engines": {}}, NOT_OBJECT, WRITE_ONE),
    ({**GOOD, "engines": []}, NOT_OBJECT, WRITE_ONE),
    ({**GOOD, "rows": "many"}, NOT_NUMBERS, REWRITE),
    ({**GOOD, "held_out_tpot_error": "low"}, NOT_NUMBERS, REWRITE),
    ({**GOOD, "measured": {"vllm": [["h100-sxm", "bf16", "dense", 1, 8.0]]}}, NOT_NUMBERS, REWRITE),
    ({**GOOD, "bands": {"vllm": {"tpot_ms": [1, "x"]}}}, NOT_NUMBERS, REWRITE),
    ({**GOOD, "bands": {"vllm": {"tpot_ms": [1.0, 2.0]}}},
     "each calibration band needs one value per level [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]", None),
    ({**GOOD, "engines": {"vllm": {**GOOD["engines"]["vllm"], "allreduce_gbps": "fast"}}},
     "calibration constants are incomplete or not numbers (could not convert string to float: 'fast')", NEEDS),
    ({**GOOD, "engines": {"vllm": {k: v for k, v in GOOD["engines"]["vllm"].items() if k != "ttft_steps"}}},
     "calibration constants are incomplete or not numbers ('ttft_steps')", NEEDS),
    ({**GOOD, "engines": {"vllm": {**GOOD["engines"]["vllm"], "step_overhead_us_per_layer": [1, 2, 3]}}},
     "each per-TP overhead needs one value per TP 1, 2, 4, 8", None),
    ({**GOOD, "engines": {"vllm": {**GOOD["engines"]["vllm"], "kernel_step_overhead_us": [1, 2, 3, 4, 5]}}},
     "each per-TP overhead needs one value per TP 1, 2, 4, 8", None),
]


@pytest.mark.parametrize("data, message, hint", BROKEN)
def test_a_broken_calibration_is_refused(data, message, hint):
    with pytest.raises(InputError) as caught:
        Calibration.from_dict(data)
    assert caught.value.message == message
    assert caught.value.hint == hint


def test_constants_as_a_record_hold_lists_for_json():
    record = CONSTANTS.to_dict()
    assert record["step_overhead_us_per_layer"] == [10, 20, 40, 80]
    assert record["kernel_step_overhead_us"] == [0.0, 0.0, 0.0, 0.0] and record["allreduce_gbps"] == 50.0


def test_a_calibration_file_is_indented_utf8_json_ending_in_a_newline(tmp_path):
    cal = calibration(source="AIConfigurator \u2013 caf\u00e9")
    text = cal.write(tmp_path / "cal.json").read_bytes().decode("utf-8")
    assert text.startswith('{\n  "source": "AIConfigurator \\u2013 caf\\u00e9",\n  "as_of": "2026-12-02",\n')
    assert text.endswith("\n}\n") and not text.endswith("\n\n")
    assert Calibration.read(tmp_path / "cal.json").source == "AIConfigurator \u2013 caf\u00e9"
    raw = tmp_path / "raw.json"
    raw.write_bytes(json.dumps({**GOOD, "source": "caf\u00e9"}, ensure_ascii=False).encode("utf-8"))
    assert Calibration.read(raw).source == "caf\u00e9"


def test_missing_fields_of_a_calibration_read_as_none_or_empty():
    cal = Calibration.from_dict({"engines": GOOD["engines"]})
    assert (cal.source, cal.as_of) == ("", "")
    assert (cal.rows, cal.held_out_tpot_error, cal.held_out_ttft_error, cal.held_out_throughput_error) == (0, None, None, None)
    assert (dict(cal.measured), dict(cal.bands)) == ({}, {})


def test_a_calibration_file_that_is_missing_or_not_json_is_refused(tmp_path):
    with pytest.raises(InputError) as caught:
        Calibration.read(tmp_path / "none.json")
    assert caught.value.message == f"calibration file {tmp_path / 'none.json'} does not exist"
    assert caught.value.hint == "write one with `finops calibrate`"
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"source": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(InputError, match="is not JSON"):
        Calibration.read(latin)


def test_a_model_that_does_not_fit_has_nothing_to_time():
    """Llama-3.1-70B in BF16 (141 GB) on one 80 GB H100: the memory answer, and no latency at all."""
    e = run(model="llama-3.1-70b", concurrency=8)
    timed = ("ttft_ms", "tpot_ms", "prefill_ms", "decode_step_ms", "request_latency_ms", "output_tokens_per_s",
             "output_tokens_per_s_per_gpu", "input_tokens_per_s", "effective_bandwidth_efficiency", "ttft_ms_band",
             "tpot_ms_band", "output_tokens_per_s_band")
    assert {name: getattr(e, name) for name in timed} == dict.fromkeys(timed)
    assert (e.fits, e.concurrency, e.running_batch, e.max_concurrency) == (False, 0, 0, 0)
    assert e.weights_gib_per_gpu == pytest.approx(2 * 70.6e9 / 2**30, rel=1e-3) and e.shortfall_gib > 60
    assert (e.model, e.engine, e.isl, e.osl, e.max_batch, e.prefill_token_budget) == ("llama-3.1-70b", "vllm", 1024, 256,
                                                                                     1024, 8192)
