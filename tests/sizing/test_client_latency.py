"""Latency the way a load-test client measures it, and the limits an engine starts with.

Expected values come from outside the code under test: exact mean-value analysis written out here
(Reiser and Lavenberg 1980: ``R(n) = S (1 + Q(n - 1))``, ``X(n) = n / (R(n) + Z)``, ``Q(n) = X(n) R(n)``),
the engines' documented defaults, and the model's own fitted constants read back from the bundled file.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from finops.catalog import get_model
from finops.errors import InputError
from finops.sizing.closed_loop import closed_loop_wait
from finops.sizing.engine_constants import Calibration
from finops.sizing.memory import kv_bytes_per_token
from finops.sizing.performance import estimate
from finops.sizing.queueing import kingman_wait, serve

H100_8B = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "bf16", "tp": 1, "isl": 2048, "osl": 256}


def exact_mva_wait(clients: int, service: float, think: float) -> float:
    queue = 0.0
    response = service
    for n in range(1, clients + 1):
        response = service * (1.0 + queue)
        queue = n / (response + think) * response
    return response - service


@pytest.mark.parametrize("clients", [1, 2, 4, 16, 64, 256])
@pytest.mark.parametrize("think_over_service", [0.0, 5.0, 20.0, 100.0, 500.0])
def test_the_closed_loop_wait_is_mean_value_analysis(clients, think_over_service):
    service = 0.1
    think = think_over_service * service
    got = closed_loop_wait(clients, service, think)
    exact = exact_mva_wait(clients, service, think)
    assert 0.0 <= got <= (clients - 1) * service + 1e-12          # never more than c - 1 prompts ahead
    # Schweitzer-Bard is within 25 % of exact MVA (worst at the knee, c S ~ Z), or 1 % of one service
    assert got == pytest.approx(exact, rel=0.25, abs=0.01 * service)


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
def test_one_client_waits_for_nobody(engine):
    """At concurrency 1, TTFT is the prefill plus the engine's fixed scheduling delay, a x step + f."""
    c = Calibration.bundled().constants(engine)
    e = estimate(**H100_8B, concurrency=1, engine=engine)
    delay_ms = c.ttft_steps * e.decode_step_ms + c.ttft_fixed_ms
    assert e.ttft_ms == pytest.approx(e.prefill_ms + delay_ms, rel=1e-9)
    assert e.tpot_ms == pytest.approx(e.decode_step_ms, rel=1e-9)    # no other client's prefill in its steps


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
def test_one_output_token_is_a_valid_request(engine):
    """``--osl 1 --concurrency 1`` used to give a TTFT 12x the prefill (an open M/D/1 queue saturated)."""
    e = estimate(**{**H100_8B, "osl": 1}, concurrency=1, engine=engine)
    c = Calibration.bundled().constants(engine)
    assert e.ttft_ms == pytest.approx(e.prefill_ms + c.ttft_steps * e.decode_step_ms + c.ttft_fixed_ms)
    assert e.request_latency_ms == pytest.approx(e.ttft_ms)
    assert e.output_tokens_per_s == pytest.approx(1e3 / e.ttft_ms)


@pytest.mark.parametrize("clients", [2, 8, 32, 128])
def test_a_client_never_waits_behind_more_than_the_others(clients):
    alone = estimate(**H100_8B, concurrency=1, engine="vllm")
    crowd = estimate(**H100_8B, concurrency=clients, engine="vllm")
    c = Calibration.bundled().constants("vllm")
    own = crowd.prefill_ms + c.ttft_steps * crowd.decode_step_ms + c.ttft_fixed_ms
    assert own <= crowd.ttft_ms <= own + (clients - 1) * alone.prefill_ms


def test_poisson_arrivals_keep_kingmans_queue():
    """Under an arrival rate the wait is the open queue's, W = rho / (1 - rho) x (1 + 0) / 2 x S."""
    point = serve("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=2048, osl=256, arrival_rate=5.0)
    alone = estimate(**H100_8B, concurrency=1)
    service_s = alone.prefill_ms / 1e3
    assert point.utilization == pytest.approx(5.0 * service_s)
    assert point.queue_wait_ms == pytest.approx(kingman_wait(5.0 * service_s, service_s) * 1e3)


# ---- the limits an engine starts with ----------------------------------------------------------------------
@pytest.mark.parametrize("engine, gpu, batch", [
    ("trtllm", "h200", 2048),       # BuildConfig.max_batch_size
    ("vllm", "h200", 1024),         # max_num_seqs on GPUs >= 70 GiB other than A100
    ("vllm", "a100-80gb", 256),     # ... and 256 on A100
    ("sglang", "h200", 4096),       # request pool cap; below it the KV cache decides
])
def test_the_maximum_throughput_point_stops_at_the_engine_batch_limit(engine, gpu, batch):
    precision = "bf16" if gpu.startswith("a100") else "fp8"
    e = estimate("llama-3.1-8b", gpu, precision=precision, tp=1, isl=128, osl=128, engine=engine)
    assert e.max_batch == batch
    assert e.running_batch == min(batch, e.max_concurrency)
    assert e.max_concurrency > 1000                            # the KV cache would hold more than vLLM runs
    smaller = estimate("llama-3.1-8b", gpu, precision=precision, tp=1, isl=128, osl=128, engine=engine, max_batch=64)
    assert smaller.running_batch == smaller.max_batch == 64


@pytest.mark.parametrize("engine, precision, kv", [
    ("trtllm", "fp8", "fp8"),        # an FP8 checkpoint on TRT-LLM serves an FP8 KV cache
    ("trtllm", "bf16", "bf16"),
    ("vllm", "fp8", "bf16"),         # kv_cache_dtype auto: the model dtype
    ("sglang", "fp8", "bf16"),
])
def test_kv_precision_defaults_per_engine_and_checkpoint(engine, precision, kv):
    e = estimate("llama-3.1-8b", "h200", precision=precision, tp=1, isl=1024, osl=256, engine=engine)
    assert e.kv_precision == kv
    assert e.kv_bytes_per_token == kv_bytes_per_token(get_model("llama-3.1-8b"), kv)
    told = estimate("llama-3.1-8b", "h200", precision=precision, tp=1, isl=1024, osl=256, engine=engine,
                    kv_precision="fp8")
    assert told.kv_precision == "fp8" and told.kv_bytes_per_token == 2 * 32 * 8 * 128 * 1


def test_fp8_kv_on_trtllm_doubles_the_batch_the_cache_holds():
    fp8_kv, bf16_kv = (estimate("llama-3.1-70b", "h100-sxm", precision="fp8", tp=2, isl=4096, osl=1024,
                                engine="trtllm", kv_precision=kv) for kv in (None, "bf16"))
    assert fp8_kv.kv_precision == "fp8"
    assert fp8_kv.max_concurrency == pytest.approx(2 * bf16_kv.max_concurrency, abs=1)


def test_a_long_prompt_is_chunked_by_the_prefill_budget():
    """Each chunk is one more engine step: L x o(tp) of overhead per extra chunk."""
    c = Calibration.bundled().constants("vllm")
    layers = get_model("llama-3.1-8b").layers
    wide, narrow = (estimate(**{**H100_8B, "isl": 16384}, concurrency=1, prefill_token_budget=b)
                    for b in (16384, 2048))
    extra_chunks = math.ceil(16384 / 2048) - 1
    assert narrow.prefill_ms - wide.prefill_ms == pytest.approx(
        extra_chunks * layers * c.step_overhead_us_per_layer[0] / 1e3, rel=1e-6)
    assert estimate(**H100_8B, concurrency=1).prefill_token_budget == 8192


@pytest.mark.parametrize("change", [{"max_batch": 0}, {"prefill_token_budget": -5}, {"max_batch": 2.5}])
def test_bad_limits_are_input_errors(change):
    with pytest.raises(InputError):
        estimate(**H100_8B, **change)


def _without_wave(engine: str) -> Calibration:
    """The bundled calibration with ``engine``'s wave share and admission wait set to 0 by hand."""
    cal = Calibration.bundled()
    zeroed = replace(cal.constants(engine), prefill_burst=0.0, admission_steps=0.0)
    return replace(cal, engines={**cal.engines, engine: zeroed})


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
@pytest.mark.parametrize("clients", [4, 32, 128])
def test_a_staggered_client_drops_the_wave_and_the_admission_wait_and_nothing_else(engine, clients):
    """``client="staggered"`` is the synchronized model with ``s = 0`` and ``d = 0``: every figure equals an
    estimate whose constants were zeroed by hand, the closed-loop wait ``q`` and the step times untouched."""
    staggered = estimate(**H100_8B, concurrency=clients, engine=engine, client="staggered").to_dict()
    by_hand = estimate(**H100_8B, concurrency=clients, engine=engine, calibration=_without_wave(engine)).to_dict()
    assert staggered.pop("client") == "staggered" and by_hand.pop("client") == "synchronized"
    assert staggered == by_hand


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
def test_the_client_changes_ttft_only_and_one_client_not_at_all(engine):
    for clients in (1, 8, 64):
        together = estimate(**H100_8B, concurrency=clients, engine=engine)
        apart = estimate(**H100_8B, concurrency=clients, engine=engine, client="staggered")
        assert (apart.tpot_ms, apart.prefill_ms, apart.decode_step_ms) == \
               (together.tpot_ms, together.prefill_ms, together.decode_step_ms)
        if clients == 1:   # nobody to be in step with: the same TTFT
            assert apart.ttft_ms == together.ttft_ms
        else:              # the wave and the admission wait only ever add
            assert apart.ttft_ms < together.ttft_ms and apart.output_tokens_per_s > together.output_tokens_per_s


def test_an_unknown_client_names_the_known_ones():
    with pytest.raises(InputError, match="unknown client 'wave'") as err:
        estimate(**H100_8B, concurrency=8, client="wave")
    assert err.value.hint == "use one of: synchronized, staggered, static"


def test_a_static_batch_prefills_every_prompt_before_any_decodes():
    """A static batch of 8: each client's first token waits for all 8 prompts (its prefill and 7 others' prefill
    compute: the prefill less one chunk's per-layer overhead, Llama-3.1-8B's 32 layers at vLLM's o(1)), nothing
    outside the accelerator, and its decode steps carry no prompt: TPOT is the bare step."""
    args = {**H100_8B, "concurrency": 8, "engine": "vllm", "step_time": "roofline"}
    static = estimate(**args, client="static")
    c = Calibration.bundled().constants("vllm")
    compute = static.prefill_ms - 32 * c.step_overhead_us_per_layer[0] / 1e3
    assert static.tpot_ms == pytest.approx(static.decode_step_ms, rel=1e-12)
    assert static.ttft_ms == pytest.approx(static.prefill_ms + 7 * compute + c.ttft_steps * static.decode_step_ms,
                                           rel=1e-9)
    synchronized = estimate(**args, client="synchronized")
    assert static.ttft_ms > 5 * synchronized.prefill_ms and synchronized.tpot_ms > static.tpot_ms
