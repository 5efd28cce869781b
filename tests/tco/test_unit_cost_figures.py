"""finops/tco/unit_cost.py figure by figure, worked by hand from seed 003's rule "cost per token = hourly device
cost / tokens per hour; compare per million":

* cost per GPU-hour = hourly cost / GPUs; per replica-month = GPU-hour cost x GPUs x 730 h;
* cost per million tokens = hourly cost / (tokens/s x 3,600) x 10^6; at the average load x peak-to-average;
* input and output apart: hourly x prefill share / (input tokens/s x 3,600) x 10^6, and 1 - share for output;
* prefill share of a request = (input / prefill rate) / (input / prefill rate + output / decode rate).
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.money import Money
from finops.tco import (
    TokenCosts,
    cost_per_gpu_hour,
    cost_per_million_tokens,
    cost_per_million_tokens_at_average,
    cost_per_replica_month,
    prefill_time_share,
    token_costs,
)


def usd(amount) -> Money:
    return Money.of(amount, "USD")


@pytest.mark.parametrize("hourly,gpus,expected", [
    ("55.04", 8, "6.88"),        # AWS p5.48xlarge on-demand
    ("10", 4, "2.5"),
    ("3", 1, "3"),
])
def test_cost_per_gpu_hour(hourly, gpus, expected):
    assert cost_per_gpu_hour(usd(hourly), gpus) == usd(expected)


@pytest.mark.parametrize("rate,gpus,expected", [
    ("1.60", 2, "2336"),         # 1.60 x 2 x 730
    ("2", 4, "5840"),
    ("0.5", 1, "365"),
])
def test_cost_per_replica_month(rate, gpus, expected):
    assert cost_per_replica_month(usd(rate), gpus) == usd(expected)


@pytest.mark.parametrize("hourly,tokens_per_s,expected", [
    ("36", 10_000, "1"),         # 36 / 36,000,000 tokens an hour x 10^6
    ("7.2", 500, "4"),           # 7.2 / 1,800,000 x 10^6
    ("18", "2500", "2"),
    ("0.9", 0.25, "1000"),       # 0.9 / 900 x 10^6
])
def test_cost_per_million_tokens(hourly, tokens_per_s, expected):
    assert cost_per_million_tokens(usd(hourly), tokens_per_s) == usd(expected)


@pytest.mark.parametrize("hourly,peak,ratio,expected", [
    ("36", 10_000, 2.5, "2.5"),  # 1 at the peak x 2.5
    ("36", 10_000, 1, "1"),      # a flat load: the peak figure
    ("7.2", 500, "3", "12"),
])
def test_cost_per_million_tokens_at_the_average_load(hourly, peak, ratio, expected):
    assert cost_per_million_tokens_at_average(usd(hourly), peak, ratio) == usd(expected)


@pytest.mark.parametrize("inputs,outputs,prefill_rate,decode_rate,expected", [
    (2000, 500, 10_000, 1_000, 0.2 / 0.7),       # 0.2 s of prefill, 0.5 s of decode
    (4000, 1000, 20_000, 500, 0.2 / 2.2),
    (0, 100, 1, 1, 0.0),                         # no input: all decode
    (100, 0, 1, 1, 1.0),                         # no output: all prefill
    (1000, 1000, 1000, 3000, 0.75),              # 1 s against 1/3 s
    (1000, 500, 2000, 1000, 0.5),                # half a second each
])
def test_prefill_time_share(inputs, outputs, prefill_rate, decode_rate, expected):
    assert prefill_time_share(inputs, outputs, prefill_rate, decode_rate) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("hourly,inputs,outputs,share,per_input,per_output,per_token", [
    # 36 USD an hour = 10,000 USD per million token-seconds-per-second
    ("36", 8000, 2000, "0.2", "0.25", "4", "1"),      # 10,000 x 0.2 / 8,000; 10,000 x 0.8 / 2,000; 10,000 / 10,000
    ("36", 0, 2000, "0", "0", "5", "5"),              # decode only, no input tokens
    ("36", 4000, 1000, "0", "0", "10", "2"),          # input tokens that take no GPU time
    ("36", 8000, 0, "1", "1.25", "0", "1.25"),        # prefill only
    ("7.2", 1000, 1000, "0.5", "1", "1", "1"),        # 2,000 x 0.5 / 1,000
])
def test_token_costs_split_the_hour(hourly, inputs, outputs, share, per_input, per_output, per_token):
    costs = token_costs(usd(hourly), inputs, outputs, share)
    assert costs == TokenCosts(usd(per_input), usd(per_output), usd(per_token), float(share))
    assert type(costs.prefill_share) is float


def test_token_costs_keep_the_currency_of_the_hour():
    costs = token_costs(Money.of(36, "EUR"), 0, 2000, 0)
    assert costs.per_million_input == Money.of(0, "EUR")
    costs = token_costs(Money.of(36, "EUR"), 8000, 0, 1)
    assert costs.per_million_output == Money.of(0, "EUR")


@pytest.mark.parametrize("ratio,per_input,per_output,per_token", [
    (2, "0.5", "8", "2"),
    (1, "0.25", "4", "1"),
    ("2.5", "0.625", "10", "2.5"),
])
def test_token_costs_at_the_average_load(ratio, per_input, per_output, per_token):
    costs = token_costs(usd(36), 8000, 2000, 0.2).at_average(ratio)
    assert costs == TokenCosts(usd(per_input), usd(per_output), usd(per_token), 0.2)
    assert costs.per_million_tokens.amount == Decimal(per_token)
