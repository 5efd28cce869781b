"""``finops size --rank-by``: the options come out ordered by the chosen figure, and ranking by cost per
million tokens finds the option that is cheapest per token among everything the monthly ranking lists."""

from __future__ import annotations

import json

import pytest

from finops.cli import main

PRESET = "seed002-translation"


def size_json(capsys, *args: str) -> dict:
    assert main(["size", "--preset", PRESET, "--top", "50", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def per_million(option: dict) -> float:
    """The figure --rank-by cost_per_million orders by: the cost per million output tokens at the peak
    (``cost_per_million_output_tokens_average`` beside it is the same times the workload's peak/average)."""
    return option["cost_per_million_output_tokens"]


@pytest.mark.parametrize("pricing_model", ["on_demand", "spot"])
def test_rank_by_orders_by_the_chosen_figure(capsys, pricing_model):
    by_month = size_json(capsys, "--pricing-model", pricing_model)["options"]
    by_token = size_json(capsys, "--pricing-model", pricing_model, "--rank-by", "cost_per_million")
    assert by_token["rank_by"] == "cost_per_million"
    by_token = by_token["options"]
    assert len(by_month) > 3 and len(by_token) > 3
    monthly = [o["monthly_cost"] for o in by_month]
    assert monthly == sorted(monthly)
    tokens = [per_million(o) for o in by_token]
    assert tokens == sorted(tokens)
    # the per-token ranking's first option is at least as cheap per token as any the monthly ranking found,
    # and at least as dear per month as the monthly ranking's first
    assert tokens[0] <= min(per_million(o) for o in by_month) + 1e-12
    assert by_token[0]["monthly_cost"] >= monthly[0]
    assert all(o["pricing_model"] == pricing_model for o in by_month + by_token)
