"""The bundled reference cases (finops/tco/reference.py over finops/catalog/data/owned_reference.csv): the cases
the file holds, read here with the csv module, the names they answer to, and the cited H100 node's cost per
GPU-hour worked by hand from the file's own figures (seed 003: about 1.6 USD straight-line and 1.9 USD
at a 10 % cost of capital, against 6.88 USD on AWS p5.48xlarge on-demand)."""
from __future__ import annotations

import csv
from decimal import Decimal
from importlib import resources

import pytest

from finops.errors import InputError, UnknownNameError
from finops.money import Money
from finops.tco.reference import _parse, reference_case, reference_cases


def file_rows() -> list[dict[str, str]]:
    text = resources.files("finops.catalog").joinpath("data", "owned_reference.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def test_every_profile_of_the_file_is_a_case():
    profiles = {row["profile"] for row in file_rows()}
    cases = reference_cases()
    assert set(cases) == profiles and "h100-sxm-8gpu" in profiles
    for name in profiles:
        assert cases[name].name == name


@pytest.mark.parametrize("name", ["h100", "H100", "h100-sxm-8gpu", " H100_SXM_8GPU "])
def test_the_names_of_the_bundled_case(name):
    assert reference_case(name) is reference_case() is reference_cases()["h100-sxm-8gpu"]


def test_a_typo_suggests_the_case():
    with pytest.raises(UnknownNameError) as caught:
        reference_case("h100-sxm-8gpx")
    assert caught.value.kind == "reference case" and "h100-sxm-8gpu" in caught.value.suggestions


def test_the_bundled_case_carries_each_rows_figure_source_and_date():
    rows = {row["parameter"]: row for row in file_rows() if row["profile"] == "h100-sxm-8gpu"}
    case = reference_case()
    n = case.node
    assert n.node_price == Money.of(rows["node_price"]["value"], rows["node_price"]["unit"])
    assert n.electricity_per_kwh == Money.of(rows["electricity_per_kwh"]["value"], "USD")   # unit USD/kWh
    assert n.colocation_per_kw_month == Money.of(rows["colocation_per_kw_month"]["value"], "USD")
    assert n.support_per_node_month == Money.of(rows["support_per_node_month"]["value"], "USD")
    assert (n.gpus_per_node, n.life_months) == (int(rows["gpus_per_node"]["value"]), int(rows["life_months"]["value"]))
    assert (n.node_power_kw, n.avg_power_share, n.pue, n.residual_share, n.cost_of_capital) == tuple(
        float(rows[p]["value"]) for p in ("node_power_kw", "avg_power_share", "pue", "residual_share",
                                          "cost_of_capital"))
    assert (case.gpu_model, case.cloud_provider, case.cloud_region, case.cloud_instance) == tuple(
        rows[p]["value"] for p in ("gpu_model", "cloud_provider", "cloud_region", "cloud_instance"))
    assert case.sources == {p: row["source"] for p, row in rows.items()}
    assert case.as_of == {p: row["as_of"] for p, row in rows.items()}
    assert case.cloud_on_demand_per_gpu_hour == Money.of("6.88", "USD")
    assert (case.published_per_gpu_hour, case.published_per_gpu_hour_with_capital) == (
        Money.of("1.6", "USD"), Money.of("1.9", "USD"))


def test_the_cited_node_costs_what_the_published_figures_say():
    # power 10.2 kW x 0.8 x 1.3 x 730 h x 0.08 = 619.4688; colocation 10.2 x 150 = 1,530; support 500
    opex = 10.2 * 0.8 * 1.3 * 730 * 0.08 + 10.2 * 150 + 500
    straight = (400_000 / 60 + opex) / (730 * 8)
    i = 0.10 / 12
    levelized = (400_000 * i / (1 - (1 + i) ** -60) + opex) / (730 * 8)
    node = reference_case().node
    assert float(node.cost_per_gpu_hour(cost_of_capital=False).amount) == pytest.approx(straight, rel=1e-12)
    assert float(node.cost_per_gpu_hour().amount) == pytest.approx(levelized, rel=1e-12)
    assert round(straight, 1) == 1.6 and round(levelized, 1) == 1.9


def test_the_cited_price_row():
    row = reference_case().cloud_price_row()
    assert (row.provider, row.region, row.instance_type, row.gpu_model, row.gpu_count, row.pricing_model,
            row.payment_option, row.currency) == ("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, "on_demand", "",
                                                  "USD")
    assert row.hourly_cost == Decimal("55.04") and row.upfront_cost == Decimal(0)   # 6.88 x 8
    assert row.per_gpu_hour == Decimal("6.88") and row.term_hours == 0


ROWS = [("gpu_model", "b200", ""), ("gpus_per_node", "8", "GPU"), ("node_price", "1,200,000", "JPY"),
        ("node_power_kw", "14.3", "kW"), ("avg_power_share", "0.75", "share"), ("pue", "1.2", "ratio"),
        ("electricity_per_kwh", "31", "JPY/kWh"), ("colocation_per_kw_month", "20000", "JPY/kW-month"),
        ("support_per_node_month", "90000", "JPY"), ("life_months", "36", "months"),
        ("residual_share", "0.2", "share"), ("cost_of_capital", "0.05", "per year"),
        ("cloud_provider", "aws", ""), ("cloud_region", "ap-northeast-1", ""), ("cloud_instance", "p6-b200.48xlarge", ""),
        ("cloud_on_demand_per_gpu_hour", "1500", "JPY/GPU-hour"), ("published_per_gpu_hour", "300", "JPY"),
        ("published_per_gpu_hour_with_capital", "320", "JPY")]


def table(**changes: str) -> dict[str, tuple[int, dict[str, str]]]:
    return {name: (line, {"value": changes.get(name, value), "unit": unit, "source": f"from {name}",
                          "as_of": f"2026-{line:02d}-01"})
            for line, (name, value, unit) in enumerate(ROWS, start=10)}


def test_a_profile_in_another_currency():
    case = _parse("b200-jp", table())
    jpy = lambda amount: Money.of(amount, "JPY")  # noqa: E731
    n = case.node
    assert (n.node_price, n.electricity_per_kwh, n.colocation_per_kw_month, n.support_per_node_month) == (
        jpy(1_200_000), jpy(31), jpy(20_000), jpy(90_000))
    assert case.cloud_on_demand_per_gpu_hour == jpy(1500)              # the unit before '/' is the currency
    assert (n.node_power_kw, n.avg_power_share, n.residual_share, n.cost_of_capital) == (14.3, 0.75, 0.2, 0.05)
    assert (case.cloud_region, case.cloud_instance, case.gpu_model) == ("ap-northeast-1", "p6-b200.48xlarge", "b200")
    assert case.cloud_price_row().hourly_cost == Decimal(12_000)        # 1,500 x 8
    assert case.cloud_price_row().effective_date == "2026-25-01"        # the as_of of its row (line 25)


@pytest.mark.parametrize("parameter,value,message", [
    ("gpus_per_node", "eight", "bad value 'eight' for gpus_per_node"),
    ("life_months", "36.0", "bad value '36.0' for life_months"),
    ("node_power_kw", "14,3 kW", "bad value '14,3 kW' for node_power_kw"),
    ("cost_of_capital", "", "bad value '' for cost_of_capital"),
])
def test_a_value_of_the_wrong_kind_names_its_row(parameter, value, message):
    line = [name for name, _, _ in ROWS].index(parameter) + 10
    with pytest.raises(InputError) as caught:
        _parse("b200-jp", table(**{parameter: value}))
    assert caught.value.message == message
    assert str(caught.value.where) == f"owned_reference.csv, row {line}, column value"


def test_a_bad_amount_names_its_row():
    with pytest.raises(InputError) as caught:
        _parse("b200-jp", table(node_price="12,00"))
    assert caught.value.message == "expected a number, got '12,00'"
    assert str(caught.value.where) == "owned_reference.csv, row 12, column value"
