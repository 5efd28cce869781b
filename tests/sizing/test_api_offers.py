"""`finops size --api-offers FILE`: managed API offers a user was quoted (per token, and provisioned throughput as a
commitment) priced beside the bundled prices; a bad row exits 2 naming file, row and column.

Expected figures are worked out by hand from the rows: a unit-month of 1,460 is 1,460 / 730 = 2 an hour; 0.0006 per
1,000 output tokens is 0.60 per million; 4 units of 20 an hour for 730 hours are 58,400 a month."""

from __future__ import annotations

import json
from decimal import Decimal as D

import pytest

from finops.api_offers import read_api_offers
from finops.errors import InputError
from finops.money import Money
from finops.sizing.managed import api_options
from finops.sizing.workload import presets

HEADER = "provider,model,kind,price,unit,term_months,tokens_per_unit_s,offer,service,region,currency,source\n"
PT = "aws,qwen3-30b-a3b,provisioned,20.00,unit-hour,6,1500,Qwen3 30B 6-month,AmazonBedrock,us-west-2,USD,quote Q-17\n"
ON_DEMAND = ("gcp,Qwen/Qwen3-30B-A3B,on_demand,0.10,M input tokens,,,qwen3 deal,Vertex AI,us-central1,USD,deal\n"
             "gcp,qwen3-30b-a3b,on-demand,0.0006,K output tokens,,,qwen3 deal,Vertex AI,us-central1,USD,deal\n")


def offers(tmp_path, text: str):
    path = tmp_path / "offers.csv"
    path.write_text(text)
    return read_api_offers(path)


def test_rows_read_in_their_units(tmp_path):
    read = offers(tmp_path, HEADER + PT + ON_DEMAND + "aws,qwen3-30b-a3b,provisioned,1460,unit-month,1,900,,,,,\n")
    (price,) = read.book
    assert (price.model, price.input_per_mtok, price.output_per_mtok, price.offer_model) == (
        "qwen3-30b-a3b", D("0.10"), D("0.6000"), "qwen3 deal")  # a Hugging Face id resolves to the catalog model
    six, one = read.provisioned
    assert (six.hourly_per_unit, six.term_months, six.tokens_per_s_per_unit, six.source) == (D("20.00"), 6, 1500.0,
                                                                                             "quote Q-17")
    assert (one.hourly_per_unit, one.term_months, one.name) == (D(2), 1, "aws qwen3-30b-a3b")


def test_provisioned_throughput_is_priced_as_a_commitment_at_the_workloads_volume(tmp_path):
    read = offers(tmp_path, HEADER + PT + ON_DEMAND)
    workload = presets()["seed002-translation"]  # 1,000 in / 1,000 out, peak-to-average 1
    rows = api_options(workload, fleet_monthly=Money.of(6_000, "USD"), peak_output_tokens_per_s=4_500.0,
                       book=read.book, provisioned=read.provisioned)
    by_offer = {row.offer_model: row for row in rows}
    pt = by_offer["Qwen3 30B 6-month"]
    # ceil(4,500 / 1,500) = 3 units x 20 x 730 = 43,800 a month; volume 4,500 x 3,600 x 730 / 10^6 = 11,826 M
    assert (pt.pricing_model, pt.match, pt.monthly_cost) == ("provisioned", "3 unit(s), 6-month term",
                                                             Money.of(43_800, "USD"))
    assert round(pt.cost_per_million_output_tokens.amount, 4) == round(D(43_800) / D(11826), 4)
    deal = by_offer["qwen3 deal"]
    # 0.10 x 1,000 / 1,000 + 0.60 = 0.70 per million output tokens; the fleet wins above 6,000 / 0.70 = 8,571 M
    assert deal.cost_per_million_output_tokens == Money.of("0.7", "USD")
    assert round(deal.fleet_cheaper_above_mtokens) == 8571


@pytest.mark.parametrize("text, row, column, fragment", [
    ("provider,model,price,unit\naws,qwen3-30b-a3b,1,unit-hour\n", 1, "kind", "missing column 'kind'"),
    (HEADER + PT.replace("provisioned", "reserved"), 2, "kind", "unknown kind"),
    (HEADER + PT.replace("20.00", "twenty"), 2, "price", "twenty"),
    (HEADER + PT.replace("20.00", "-1"), 2, "price", "0 or more"),
    (HEADER + PT.replace("unit-hour", "GSU-week"), 2, "unit", "unknown unit"),
    (HEADER + PT.replace(",6,1500,", ",,1500,"), 2, "term_months", "empty"),
    (HEADER + PT.replace(",6,1500,", ",1.5,1500,"), 2, "term_months", "whole months"),
    (HEADER + PT.replace(",6,1500,", ",6,,"), 2, "tokens_per_unit_s", "output tokens a second"),
    (HEADER + PT.replace("qwen3-30b-a3b", "qwen9-1t"), 2, "model", "unknown model"),
    (HEADER + ON_DEMAND.replace("K output tokens", "K output words"), 3, "unit", "unknown unit"),
    (HEADER + ON_DEMAND.splitlines(keepends=True)[0], 2, "unit", "no output price"),
    (HEADER + ON_DEMAND + ON_DEMAND.splitlines(keepends=True)[1], 4, "unit", "twice"),
])
def test_a_bad_row_is_refused_naming_file_row_and_column(tmp_path, text, row, column, fragment):
    with pytest.raises(InputError) as refused:
        offers(tmp_path, text)
    where = refused.value.where
    assert (where.file, where.row, where.column) == (str(tmp_path / "offers.csv"), row, column), str(refused.value)
    assert fragment in str(refused.value)


def test_finops_size_shows_the_quoted_offers_beside_the_bundled_ones(tmp_path, capsys):
    from finops.cli import main

    path = tmp_path / "offers.csv"
    path.write_text(HEADER + PT + ON_DEMAND)
    assert main(["size", "--preset", "seed002-translation", "--api-offers", str(path), "--json"]) == 0
    managed = {row["offer_model"]: row for row in json.loads(capsys.readouterr().out)["managed_apis"]}
    assert {"Qwen3 30B 6-month", "qwen3 deal", "qwen.qwen3-coder-30b-a3b-v1:0"} <= set(managed)
    pt, bundled = managed["Qwen3 30B 6-month"], managed["qwen.qwen3-coder-30b-a3b-v1:0"]
    units = -(-pt["fleet_capacity_mtokens"] * 1e6 / 3600 / 730 // 1500)  # ceil(fleet's peak tokens/s / 1,500)
    assert pt["monthly_cost"] == units * 20 * 730
    assert pt["monthly_output_mtokens"] == bundled["monthly_output_mtokens"]  # the same volume as on demand

    path.write_text(HEADER + PT.replace(",6,1500,", ",6,0,"))
    assert main(["size", "--preset", "seed002-translation", "--api-offers", str(path)]) == 2
    message = capsys.readouterr().err.replace("\n", " ")
    for fragment in ("offers.csv", "row 2", "tokens_per_unit_s"):
        assert fragment in message


def test_the_python_api_takes_the_offers_too(tmp_path):
    import finops

    path = tmp_path / "offers.csv"
    path.write_text(HEADER + PT + ON_DEMAND)
    managed = {row.offer_model: row for row in finops.size(preset="seed002-translation", api_offers=path).managed}
    assert managed["Qwen3 30B 6-month"].pricing_model == "provisioned"
    assert managed["qwen3 deal"].cost_per_million_output_tokens == Money.of("0.7", "USD")


def test_every_published_provisioned_price_is_sourced_dated_and_shown_in_its_source():
    from finops.api_offers import published_provisioned
    from finops.catalog.models import get_model

    rows = published_provisioned()
    assert {(p.model, p.term_months) for p in rows} == {("llama-2-13b", 1), ("llama-2-13b", 6), ("llama-2-70b", 1),
                                                        ("llama-2-70b", 6)}
    for p in rows:
        assert "https://" in p.source and "read 2026-12-07" in p.source and p.effective_date in p.source
        term = {1: "one month", 6: "six month"}[p.term_months]
        assert f"{p.price_per_unit_hour} USD per hour per model unit with a {term} commitment" in p.source
        assert p.tokens_per_unit_s is None  # not published anywhere
        get_model(p.model)


def test_a_provisioned_row_without_a_price_takes_the_published_one(tmp_path):
    read = offers(tmp_path, HEADER + "aws,meta-llama/Llama-2-70b-hf,provisioned,,unit-hour,6,800,,,,,my load test\n")
    (pt,) = read.provisioned
    assert (pt.model, pt.hourly_per_unit, pt.term_months, pt.tokens_per_s_per_unit, pt.name) == (
        "llama-2-70b", D("13.08"), 6, 800.0, "Llama 2 Pre-Trained (70B), 6-month")
    assert "2024-04-22" in pt.source and pt.source.endswith("tokens/s per unit: my load test")
    with pytest.raises(InputError) as refused:  # nothing published for this model: the price is needed
        offers(tmp_path, HEADER + PT.replace("20.00", ""))
    assert (refused.value.where.row, refused.value.where.column) == (2, "price")


def test_the_worked_example_of_docs_sizing_is_what_finops_size_prints(capsys):
    """docs/sizing.md, 'Managed APIs beside the fleet': the seed002-translation figures are the command's."""
    from pathlib import Path

    from finops.cli import main

    text = " ".join((Path(__file__).parents[2] / "docs" / "sizing.md").read_text().split())
    assert main(["size", "--preset", "seed002-translation", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    cheapest = min(answer["options"], key=lambda o: o["monthly_cost"])
    (bedrock,) = [m for m in answer["managed_apis"] if m["provider"] == "aws"]
    units = -(-cheapest["output_tokens_per_s"] // 1500)
    for figure in (f"{cheapest['monthly_cost']:,.0f} USD a month", f"serving {cheapest['output_tokens_per_s']:,.0f}",
                   f"{bedrock['monthly_output_mtokens']:,.0f} M output tokens",
                   f"{bedrock['monthly_cost']:,.0f} USD for that month",
                   f"{bedrock['fleet_cheaper_above_mtokens']:,.0f} M output tokens a month",
                   f"= {units:.0f} units, {units * 20 * 730:,.0f} USD a month"):
        assert figure in text, figure
