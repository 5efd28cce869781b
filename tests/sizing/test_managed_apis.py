"""Managed token APIs beside the fleets: the bundled token prices, the cost per million output tokens, per request
and per month, the break-even volume, and `finops size` / the Python API showing them.

Expected figures are worked out by hand from the prices in the rows (per million tokens)."""

from __future__ import annotations

import json
from decimal import Decimal as D

import pytest

from finops.catalog.models import get_model
from finops.errors import InputError
from finops.money import Money
from finops.sizing.managed import api_options
from finops.sizing.workload import presets
from finops.token_prices import TokenPriceBook

HEADER = ("provider,service,offer_model,model,match,region,pricing_model,input_per_mtok,output_per_mtok,"
          "cached_input_per_mtok,currency,effective_date,source\n")


def test_every_bundled_row_is_sourced_dated_and_names_a_model():
    book = TokenPriceBook.bundled()
    assert len(book) >= 10
    for row in book:
        assert "https://" in row.source, row
        assert "read 2026-12-07" in row.source, row
        assert "2025-01-01" <= row.effective_date <= "2026-12-07", row
        # the effective date is that of a dated copy the source names
        assert row.effective_date in row.source or row.effective_date.replace("-", "") in row.source, row
        # the copy's price in its own unit, quoted in the source: Bedrock's page per 1,000 tokens, Vertex AI's per
        # million, the Portkey transcriptions in US cents per token (per million / 10,000)
        if row.provider == "aws":
            assert f"{row.input_per_mtok / 1000} USD per 1,000 input" in row.source, row
            assert f"{row.output_per_mtok / 1000} per 1,000 output" in row.source, row
        else:
            assert f"{row.input_per_mtok} USD per 1M input and {row.output_per_mtok} per 1M output" in row.source
        if "cents per" in row.source:
            cents = f"{(row.input_per_mtok / 10_000).normalize():f} cents per input and " \
                    f"{(row.output_per_mtok / 10_000).normalize():f} per output token"
            assert cents in row.source, row
        assert row.output_per_mtok >= row.input_per_mtok > 0
        get_model(row.model)  # every row names a model of the catalog
    assert {row.provider for row in book} <= {"aws", "gcp"}
    assert {"llama-3.3-70b", "qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b"} <= {row.model for row in book}
    vertex = {row.model for row in book if row.provider == "gcp"}
    assert {"llama-3.3-70b", "llama-3.1-405b", "deepseek-v3", "qwen3-235b-a22b"} <= vertex


def test_cost_per_million_output_tokens_request_and_break_even_by_hand():
    book = TokenPriceBook.read_csv("t.csv", HEADER + "aws,AmazonBedrock,m.x,llama-3.3-70b,same model,us-east-1,"
                                   "on_demand,0.72,0.72,,USD,2026-12-07,https://aws.amazon.com/bedrock/pricing/\n")
    chosen = presets()["seed000-doc-qa"].with_changes(model="llama-3.3-70b", isl=3000, osl=500, peak_to_average=2.0)
    (option,) = api_options(chosen, fleet_monthly=Money.of(36_000, "USD"), peak_output_tokens_per_s=5_000.0,
                            book=book)
    # each output token brings 3000 / 500 = 6 input tokens: 0.72 x 6 + 0.72 = 5.04 per million output tokens
    assert option.cost_per_million_output_tokens == Money.of("5.04", "USD")
    assert option.cost_per_request == Money.of("0.00252", "USD")  # (0.72 x 3000 + 0.72 x 500) / 10^6
    # 5,000 tokens/s at the peak, 730 h: 13,140 M a month at the peak, 6,570 M on average
    assert option.fleet_capacity_mtokens == pytest.approx(13_140)
    assert option.monthly_output_mtokens == pytest.approx(6_570)
    assert option.monthly_cost.amount == pytest.approx(D("33112.8"))
    assert option.fleet_cheaper_above_mtokens == pytest.approx(36_000 / 5.04)


def test_a_bad_token_price_row_names_file_row_and_column():
    with pytest.raises(InputError) as caught:
        TokenPriceBook.read_csv("t.csv", HEADER + "aws,AmazonBedrock,m.x,llama-3.3-70b,same model,us-east-1,"
                                "on_demand,0.72,cheap,,USD,2026-12-07,https://x\n")
    assert (caught.value.where.file, caught.value.where.row, caught.value.where.column) == \
        ("t.csv", 2, "output_per_mtok")


def test_size_shows_a_managed_api_priced_per_million_tokens_beside_the_fleets(capsys):
    from finops.cli import main

    assert main(["size", "--preset", "seed002-translation", "--top", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["options"], "the fleets"
    managed = result["managed_apis"]
    assert managed and managed[0]["service"] in ("AmazonBedrock", "Vertex AI")
    first, cheapest_fleet = managed[0], min(o["monthly_cost"] for o in result["options"])
    # qwen3-30b-a3b on Bedrock: 0.15 x 1000 / 1000 + 0.60 per million output tokens
    assert D(str(first["cost_per_million_output_tokens"])) == D("0.75")
    assert first["fleet_cheaper_above_mtokens"] == pytest.approx(float(cheapest_fleet) / 0.75)
    assert main(["size", "--preset", "seed002-translation", "--top", "1"]) == 0
    text = capsys.readouterr().out
    assert "managed APIs serving qwen3-30b-a3b" in text and "Bedrock" in text


def test_the_python_api_returns_the_managed_apis_with_the_fleets():
    from finops.api import size

    table = size(preset="seed002-translation", top=1)
    assert table.options and table.managed
    assert table.managed[0].cost_per_million_output_tokens.currency == "USD"


def test_provisioned_throughput_is_priced_as_whole_units_for_the_workloads_peak():
    from finops.mix.provisioned_throughput import ProvisionedThroughput

    chosen = presets()["seed002-translation"].with_changes(peak_to_average=2.0)
    pt = ProvisionedThroughput("bedrock-pt-qwen", D("20"), term_months=6, tokens_per_s_per_unit=3_000.0,
                               model="qwen3-30b-a3b", service="AmazonBedrock", region="us-west-2", source="a quote")
    other = ProvisionedThroughput("pt-llama", D("1"), term_months=1, tokens_per_s_per_unit=1.0, model="llama-3.3-70b")
    rows = api_options(chosen, fleet_monthly=Money.of(20_000, "USD"), peak_output_tokens_per_s=10_000.0,
                       provisioned=[pt, other])
    (option,) = [r for r in rows if r.pricing_model == "provisioned"]  # the other model's offer is left out
    # ceil(10,000 / 3,000) = 4 units x 20 USD x 730 h = 58,400 USD a month; the month's volume is
    # 10,000 x 3,600 x 730 / 10^6 / 2 = 13,140 M output tokens: 4.444... USD per million
    assert option.monthly_cost == Money.of(58_400, "USD")
    assert option.cost_per_million_output_tokens.amount == pytest.approx(D(58_400) / D(13_140))
    assert (option.input_per_mtok, option.fleet_cheaper_above_mtokens) == (None, None)
    assert option.match == "4 unit(s), 6-month term"
