"""finops/tco/from_sizing.py figure by figure. The sizing engine's estimate is this module's input: its figures
are set here (``dataclasses.replace``) or read from ``estimate`` in the test, and the costs are worked by hand
from the module's formulas:

* replica-hour = GPU-hour x tp; replica-month = replica-hour x 730 h;
* prefill share of GPU time = (TPOT - decode step) / TPOT;
* cost per million = replica-hour x share / (tokens/s x 3,600) x 10^6 (input: prefill share, output: the rest);
* a lever's throughput ratio r: the same work needs 1 / r of the GPU time.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from finops.errors import InputError
from finops.money import Money
from finops.sizing.performance import estimate
from finops.tco.from_sizing import prefix_cache_from_sizing, quantization_from_sizing, replica_cost

BASE = estimate("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256, concurrency=32)


def usd(amount) -> Money:
    return Money.of(amount, "USD")


@pytest.mark.parametrize("tp,tpot,step,inputs,outputs,hour,share,per_input,per_output,per_token", [
    # 18 x 2 = 36 USD an hour = 10,000 USD per million tokens a second
    (2, 20.0, 15.0, 8000.0, 2000.0, "36", 0.25, "0.3125", "3.75", "1"),    # 10,000 x 0.25 / 8,000; x 0.75 / 2,000
    (1, 40.0, 10.0, 1500.0, 500.0, "18", 0.75, "2.5", "2.5", "2.5"),       # 5,000 x 0.75 / 1,500; x 0.25 / 500
    (4, 10.0, 10.0, 0.0, 4000.0, "72", 0.0, "0", "5", "5"),                # no prefill: all decode
    (2, 10.0, None, 5000.0, 5000.0, "36", 1.0, "2", "0", "1"),             # no decode step reported: all prefill
    (2, 10.0, 12.0, 0.0, 2000.0, "36", 0.0, "0", "5", "5"),                # a step above TPOT counts as no prefill
    (1, 50.0, 40.0, None, 1000.0, "18", 0.2, None, None, None),            # no input rate: refused (share > 0)
])
def test_replica_cost(tp, tpot, step, inputs, outputs, hour, share, per_input, per_output, per_token):
    est = replace(BASE, tp=tp, tpot_ms=tpot, decode_step_ms=step, input_tokens_per_s=inputs,
                  output_tokens_per_s=outputs)
    if per_input is None:
        with pytest.raises(InputError) as caught:
            replica_cost(est, usd(18))
        assert caught.value.message == "input_tokens_per_s must be > 0, got 0.0"
        return
    cost = replica_cost(est, usd(18))
    assert cost.estimate == est
    assert (cost.replica_hour, cost.replica_month) == (usd(hour), usd(hour) * 730)
    assert cost.tokens.prefill_share == pytest.approx(share, abs=1e-15)
    assert (cost.tokens.per_million_input, cost.tokens.per_million_output, cost.tokens.per_million_tokens) == (
        usd(per_input), usd(per_output), usd(per_token))


@pytest.mark.parametrize("changes", [
    {"fits": False, "shortfall_gib": 12.34},
    {"output_tokens_per_s": None, "shortfall_gib": 0.0},
    {"output_tokens_per_s": 0.0, "shortfall_gib": 0.0},
    {"tpot_ms": None, "shortfall_gib": 0.05},
])
def test_an_estimate_with_nothing_served_is_refused(changes):
    est = replace(BASE, **changes)
    with pytest.raises(InputError) as caught:
        replica_cost(est, usd(2))
    assert caught.value.message == (f"llama-3.1-8b does not fit on 1 x h100-sxm at fp8 "
                                    f"(short by {changes['shortfall_gib']:.1f} GiB)")
    assert caught.value.hint == "raise the tensor-parallel degree (tp) or quantize the weights"


def test_a_real_model_that_does_not_fit():
    est = estimate("llama-3.1-70b", "h100-sxm", precision="bf16", tp=1, isl=2000, osl=500)
    assert not est.fits and est.shortfall_gib > 50                # 70 B x 2 bytes > 80 GB
    with pytest.raises(InputError) as caught:
        replica_cost(est, usd(2))
    assert caught.value.message == f"llama-3.1-70b does not fit on 1 x h100-sxm at bf16 (short by {est.shortfall_gib:.1f} GiB)"


def per_gpu(precision, tp, **kwargs) -> float:
    est = estimate("llama-3.1-70b", "h100-sxm", precision=precision, tp=tp, isl=2000, osl=500, **kwargs)
    return float(est.output_tokens_per_s_per_gpu)


@pytest.mark.parametrize("kwargs,before,after,engine,concurrency", [
    ({"before": "bf16", "after": "fp8", "tp_before": 4, "tp_after": 2, "concurrency": 64}, ("bf16", 4), ("fp8", 2),
     "vllm", 64),
    ({"tp_before": 2, "tp_after": 2}, ("bf16", 2), ("fp8", 2), "vllm", "max"),          # the defaults otherwise
    ({"before": "fp8", "after": "int4", "tp_before": 2, "tp_after": 1, "engine": "sglang", "concurrency": 16},
     ("fp8", 2), ("int4", 1), "sglang", 16),
])
def test_quantization_from_sizing(kwargs, before, after, engine, concurrency):
    ratio = round(per_gpu(after[0], after[1], engine=engine, concurrency=concurrency)
                  / per_gpu(before[0], before[1], engine=engine, concurrency=concurrency), 4)
    effect = quantization_from_sizing("llama-3.1-70b", "h100-sxm", gpus=16, cost_per_gpu_month=usd(1400), isl=2000,
                                      osl=500, **kwargs)
    gpus_after = math.ceil(16 / ratio)
    assert (effect.lever, effect.before, effect.after) == ("quantization", usd(22_400), usd(1400 * gpus_after))
    assert effect.detail == f"16 -> {gpus_after} GPUs at {after[0]} (throughput x {ratio})"


def test_quantization_from_sizing_of_a_model_on_one_gpu():
    # tp 1 both sides by default: the 8B model fits one GPU in bf16 and in fp8
    ratio = round(float(estimate("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256)
                        .output_tokens_per_s_per_gpu)
                  / float(estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1024, osl=256)
                          .output_tokens_per_s_per_gpu), 4)
    effect = quantization_from_sizing("llama-3.1-8b", "h100-sxm", gpus=10, cost_per_gpu_month=usd(1000), isl=1024,
                                      osl=256)
    assert effect.detail == f"10 -> {math.ceil(10 / ratio)} GPUs at fp8 (throughput x {ratio})"


def test_quantization_from_sizing_refuses_a_model_that_does_not_fit():
    with pytest.raises(InputError, match="does not fit on 1 x h100-sxm at bf16"):
        quantization_from_sizing("llama-3.1-70b", "h100-sxm", gpus=8, cost_per_gpu_month=usd(1), isl=2000, osl=500)
    with pytest.raises(InputError, match="llama-3.1-405b does not fit on 1 x h100-sxm at fp8"):   # 405 GB > 80 GB
        quantization_from_sizing("llama-3.1-405b", "h100-sxm", gpus=8, cost_per_gpu_month=usd(1), isl=2000, osl=500,
                                 before="fp8", tp_before=8)


@pytest.mark.parametrize("kwargs,engine,concurrency", [
    ({"concurrency": 32}, "vllm", 32),
    ({}, "vllm", "max"),
    ({"engine": "sglang", "concurrency": 8}, "sglang", 8),
])
def test_prefix_cache_from_sizing(kwargs, engine, concurrency):
    rates = [float(estimate("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=4000, osl=200, engine=engine,
                            concurrency=concurrency, cache_hit_rate=hit).output_tokens_per_s) for hit in (0.2, 0.8)]
    effect = prefix_cache_from_sizing("llama-3.1-8b", "h100-sxm", monthly_cost=usd(10_000), precision="fp8", tp=1,
                                      isl=4000, osl=200, hit_rate_before=0.2, hit_rate_after=0.8, **kwargs)
    assert (effect.lever, effect.before) == ("prefix_cache", usd(10_000))
    assert effect.after == usd(10_000) * round(rates[0] / rates[1], 6)     # the same work at the faster rate
    assert effect.detail == (f"prefix-cache hit rate 20% -> 80%: {rates[0]:.0f} -> {rates[1]:.0f} output tokens/s "
                             "per replica")


def test_prefix_cache_from_sizing_checks_its_money_and_fit():
    with pytest.raises(InputError) as caught:
        prefix_cache_from_sizing("llama-3.1-8b", "h100-sxm", monthly_cost=10_000, precision="fp8", tp=1, isl=4000,
                                 osl=200, hit_rate_before=0.2, hit_rate_after=0.8)
    assert caught.value.message == "monthly_cost must be Money, got int 10000"
    with pytest.raises(InputError, match="does not fit on 1 x h100-sxm at bf16"):
        prefix_cache_from_sizing("llama-3.1-70b", "h100-sxm", monthly_cost=usd(1), precision="bf16", tp=1, isl=4000,
                                 osl=200, hit_rate_before=0.2, hit_rate_after=0.8)


def test_replica_cost_checks_its_money():
    with pytest.raises(InputError) as caught:
        replica_cost(BASE, 2)
    assert caught.value.message == "gpu_hour_cost must be Money, got int 2"
