"""Unit costs and levers priced from the sizing engine's estimates."""

from decimal import Decimal

import pytest

from finops.errors import InputError
from finops.money import Money
from finops.sizing.performance import estimate
from finops.tco.from_sizing import prefix_cache_from_sizing, quantization_from_sizing, replica_cost


@pytest.mark.parametrize("model,precision,tp", [("llama-3.1-8b", "fp8", 1), ("llama-3.1-70b", "bf16", 4)])
def test_replica_cost_splits_the_hour_between_input_and_output(model, precision, tp):
    est = estimate(model, "h100-sxm", precision=precision, tp=tp, isl=2000, osl=500, concurrency=32)
    cost = replica_cost(est, Money.of("1.91", "USD"))
    assert cost.replica_hour == Money.of("1.91", "USD") * tp
    assert cost.replica_month == cost.replica_hour * 730
    assert cost.tokens.prefill_share == pytest.approx((est.tpot_ms - est.decode_step_ms) / est.tpot_ms)
    back = (cost.tokens.per_million_input.amount * Decimal(repr(est.input_tokens_per_s))
            + cost.tokens.per_million_output.amount * Decimal(repr(est.output_tokens_per_s))) * 3600 / 10**6
    assert abs(back - cost.replica_hour.amount) < Decimal("1e-12")


def test_a_model_that_does_not_fit_is_an_input_error():
    est = estimate("llama-3.1-70b", "h100-sxm", precision="bf16", tp=1, isl=2000, osl=500)
    with pytest.raises(InputError, match="tp"):
        replica_cost(est, Money.of(2, "USD"))


def test_levers_from_sizing_save_money():
    quantized = quantization_from_sizing("llama-3.1-70b", "h100-sxm", gpus=16, cost_per_gpu_month=Money.of(1400, "USD"),
                                         isl=2000, osl=500, before="bf16", after="fp8", tp_before=4, tp_after=2,
                                         concurrency=64)
    assert quantized.before == Money.of(22_400, "USD") and quantized.after < quantized.before
    cached = prefix_cache_from_sizing("llama-3.1-8b", "h100-sxm", monthly_cost=Money.of(10_000, "USD"),
                                      precision="fp8", tp=1, isl=4000, osl=200, hit_rate_before=0.0,
                                      hit_rate_after=0.8, concurrency=32)
    assert Money.of(0, "USD") < cached.after < cached.before
