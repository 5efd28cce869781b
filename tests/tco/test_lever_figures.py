"""finops/tco/levers.py figure by figure, each lever worked by hand from its formula (seed 000's levers):

* quantization: GPUs after = ceil(GPUs before / throughput ratio);
* prefix cache: after = cost x (1 - p + p x (1 - hit after) / (1 - hit before)), p the prefill share;
* utilization: after = cost x utilization before / utilization after (40 % -> 80 % halves it);
* load shaping: moved = min(shift, (peak - off-peak) / 2), peak after = peak - moved, units paid = ceil(peak);
* right-sizing: instances after = ceil(required capacity / capacity per candidate instance).
"""
from __future__ import annotations

import pytest

from finops.money import Money
from finops.tco import LeverEffect, load_shaping, prefix_cache, quantization, right_sizing, utilization


def usd(amount) -> Money:
    return Money.of(amount, "USD")


@pytest.mark.parametrize("gpus,ratio,precision,after,detail", [
    (9, 1.6, "int8", 6, "9 -> 6 GPUs at int8 (throughput x 1.6)"),         # 9 / 1.6 = 5.6 -> 6
    (10, 3, None, 4, "10 -> 4 GPUs at fp8 (throughput x 3)"),               # 3.33 -> 4; fp8 by default
    (8, 2, "int4", 4, "8 -> 4 GPUs at int4 (throughput x 2)"),              # exactly 4
    (5, "0.8", "fp16", 7, "5 -> 7 GPUs at fp16 (throughput x 0.8)"),        # a slower precision: 6.25 -> 7
])
def test_quantization(gpus, ratio, precision, after, detail):
    extra = {} if precision is None else {"precision": precision}
    effect = quantization(gpus, usd(1_000), ratio, **extra)
    assert (effect.lever, effect.before, effect.after, effect.detail) == (
        "quantization", usd(1_000 * gpus), usd(1_000 * after), detail)
    assert effect.saved == usd(1_000 * (gpus - after))


@pytest.mark.parametrize("cost,p,before,after,expected,detail", [
    (1_000, 0.5, 0.2, 0.6, 750, "prefix-cache hit rate 20% -> 60%, prefill 50% of GPU time"),  # 0.5 + 0.5 x 0.4 / 0.8
    (10_000, 0.4, 0, 0.5, 8_000, "prefix-cache hit rate 0% -> 50%, prefill 40% of GPU time"),  # 0.6 + 0.4 x 0.5
    (2_000, 0.3, 0.5, 0.75, 1_700, "prefix-cache hit rate 50% -> 75%, prefill 30% of GPU time"),  # 0.7 + 0.3 x 0.5
    (1_000, 0.5, 0.5, 0, 1_500, "prefix-cache hit rate 50% -> 0%, prefill 50% of GPU time"),   # the cache lost
    (1_000, 0, 0.1, 0.9, 1_000, "prefix-cache hit rate 10% -> 90%, prefill 0% of GPU time"),   # no prefill
])
def test_prefix_cache(cost, p, before, after, expected, detail):
    effect = prefix_cache(usd(cost), p, before, after)
    assert (effect.lever, effect.before, effect.after, effect.detail) == ("prefix_cache", usd(cost), usd(expected),
                                                                          detail)


@pytest.mark.parametrize("cost,before,after,expected,detail", [
    (10_000, 0.4, 0.8, 5_000, "utilization 40% -> 80%"),      # seed 000: halves the cost
    (900, 0.3, 0.6, 450, "utilization 30% -> 60%"),
    (1_000, 0.5, 0.4, 1_250, "utilization 50% -> 40%"),       # worse batching costs more
    (600, 1, 1, 600, "utilization 100% -> 100%"),
])
def test_utilization(cost, before, after, expected, detail):
    effect = utilization(usd(cost), before, after)
    assert (effect.lever, effect.before, effect.after, effect.detail) == ("utilization", usd(cost), usd(expected),
                                                                          detail)


@pytest.mark.parametrize("peak,offpeak,shift,before,after,detail", [
    (20, 8, 5, 20, 15, "peak 20 -> 15 units by moving 5 units off-peak (off-peak 8 -> 13)"),
    (20, 16, 5, 20, 18, "peak 20 -> 18 units by moving 2 units off-peak (off-peak 16 -> 18)"),  # half the gap
    (10, 10, 2, 10, 10, "peak 10 -> 10 units by moving 0 units off-peak (off-peak 10 -> 10)"),  # already flat
    (10, 0, 10, 10, 5, "peak 10 -> 5 units by moving 5 units off-peak (off-peak 0 -> 5)"),      # all shiftable
    (10, 3, 0, 10, 10, "peak 10 -> 10 units by moving 0 units off-peak (off-peak 3 -> 3)"),     # nothing moves
    ("10.5", 3, 1, 11, 10, "peak 10.5 -> 9.5 units by moving 1 units off-peak (off-peak 3 -> 4)"),  # whole units
    (9, 2, 3, 9, 6, "peak 9 -> 6 units by moving 3 units off-peak (off-peak 2 -> 5)"),
])
def test_load_shaping(peak, offpeak, shift, before, after, detail):
    effect = load_shaping(peak, offpeak, shift, usd(100))
    assert (effect.lever, effect.before, effect.after, effect.detail) == ("load_shaping", usd(100 * before),
                                                                          usd(100 * after), detail)


@pytest.mark.parametrize("instances,cost,need,each,candidate,after,detail", [
    (4, 40_000, 10_000, 3_000, 12_000, 48_000, "4 current instances -> 4 right-sized instances"),  # 3.33 -> 4
    (2, 50, 3, 1, 20, 60, "2 current instances -> 3 right-sized instances"),
    (3, 100, 12, 4, 90, 270, "3 current instances -> 3 right-sized instances"),                     # exactly 3
    (1, 100, "2.5", 2, 30, 60, "1 current instances -> 2 right-sized instances"),
])
def test_right_sizing(instances, cost, need, each, candidate, after, detail):
    effect = right_sizing(instances, usd(cost), need, each, usd(candidate))
    assert (effect.lever, effect.before, effect.after, effect.detail) == (
        "right_sizing", usd(cost * instances), usd(after), detail)


@pytest.mark.parametrize("before,after,saved,share", [
    (10_000, 5_000, 5_000, 0.5),
    (800, 1_000, -200, -0.25),      # a lever that costs more saves a negative amount
    (0, 0, 0, 0.0),                 # nothing spent: no share of it saved
    (400, 300, 100, 0.25),
])
def test_saved_and_its_share(before, after, saved, share):
    effect = LeverEffect("utilization", usd(before), usd(after), "")
    assert effect.saved == usd(saved)
    assert effect.saved_share == share and type(effect.saved_share) is float
