"""The reference-case file's reader (finops/tco/reference.py): every parameter lands in its field with
its unit, source and date, and a bad file names its row. Expected values are the rows the test writes."""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import InputError, Location
from finops.money import Money
from finops.tco.reference import _parse, reference_case

ROWS = [("gpu_model", "h200", ""), ("gpus_per_node", "4", "GPU"), ("node_price", "250000", "EUR"),
        ("node_power_kw", "6.5", "kW"), ("avg_power_share", "0.7", "share"), ("pue", "1.25", "ratio"),
        ("electricity_per_kwh", "0.21", "EUR/kWh"), ("colocation_per_kw_month", "180", "EUR/kW-month"),
        ("support_per_node_month", "320", "EUR"), ("life_months", "48", "months"), ("residual_share", "0.15", "share"),
        ("cost_of_capital", "0.07", "per year"), ("cloud_provider", "gcp", ""), ("cloud_region", "europe-west4", ""),
        ("cloud_instance", "a3-ultragpu-8g", ""), ("cloud_on_demand_per_gpu_hour", "9.5", "EUR"),
        ("published_per_gpu_hour", "2.1", "EUR"), ("published_per_gpu_hour_with_capital", "2.6", "EUR")]


def rows(changes: dict[str, str] | None = None, drop: tuple[str, ...] = ()):
    changes = changes or {}
    return {name: (line, {"value": f" {changes.get(name, value)} ", "unit": unit, "source": f"src {name}",
                          "as_of": f"2026-{line:02d}"})
            for line, (name, value, unit) in enumerate(ROWS, start=2) if name not in drop}


def test_every_parameter_lands_in_its_field():
    case = _parse("h200-4gpu", rows())
    eur = lambda amount: Money.of(amount, "EUR")  # noqa: E731
    n = case.node
    assert (case.name, case.gpu_model, case.cloud_provider, case.cloud_region, case.cloud_instance) == (
        "h200-4gpu", "h200", "gcp", "europe-west4", "a3-ultragpu-8g")
    assert (n.node_price, n.gpus_per_node, n.node_power_kw, n.electricity_per_kwh, n.colocation_per_kw_month) == (
        eur(250000), 4, 6.5, eur("0.21"), eur(180))
    assert (n.avg_power_share, n.pue, n.support_per_node_month, n.life_months, n.residual_share, n.cost_of_capital) == (
        0.7, 1.25, eur(320), 48, 0.15, 0.07)
    assert isinstance(n.gpus_per_node, int) and isinstance(n.life_months, int) and isinstance(n.pue, float)
    assert (case.cloud_on_demand_per_gpu_hour, case.published_per_gpu_hour,
            case.published_per_gpu_hour_with_capital) == (eur("9.5"), eur("2.1"), eur("2.6"))
    assert case.sources["pue"] == "src pue" and case.as_of["pue"] == "2026-07"
    assert len(case.sources) == len(case.as_of) == len(ROWS)


def test_the_cited_cloud_price_as_a_price_row():
    row = _parse("h200-4gpu", rows()).cloud_price_row()
    assert (row.provider, row.region, row.instance_type, row.gpu_model, row.gpu_count, row.pricing_model) == (
        "gcp", "europe-west4", "a3-ultragpu-8g", "h200", 4, "on_demand")
    assert row.hourly_cost == Decimal("38.0") and row.upfront_cost == 0 and row.currency == "EUR"  # 9.5 x 4 GPUs
    assert row.payment_option == ""
    assert row.effective_date == "2026-17" and row.source == "src cloud_on_demand_per_gpu_hour"


def test_a_missing_parameter_is_listed():
    with pytest.raises(InputError) as caught:
        _parse("p", rows(drop=("pue", "cloud_region")))
    assert caught.value.message == "reference profile 'p' lacks pue, cloud_region"
    assert caught.value.where == Location(file="owned_reference.csv")


@pytest.mark.parametrize("parameter,value", [("node_price", "lots"), ("pue", "high"), ("life_months", "4.5")])
def test_a_bad_value_names_its_row(parameter, value):
    line = [name for name, _, _ in ROWS].index(parameter) + 2
    with pytest.raises(InputError) as caught:
        _parse("p", rows({parameter: value}))
    assert caught.value.where == Location(file="owned_reference.csv", row=line, column="value")
    if parameter != "node_price":
        assert caught.value.message == f"bad value {value!r} for {parameter}"
    else:
        assert caught.value.message == "expected a number, got 'lots'"


def test_an_unknown_parameter_names_its_row():
    table = rows()
    table["colour"] = (30, {"value": "red", "unit": "", "source": "", "as_of": ""})
    with pytest.raises(InputError) as caught:
        _parse("p", table)
    assert caught.value.message == "unknown parameter 'colour'"
    assert caught.value.where == Location(file="owned_reference.csv", row=30)


def test_the_bundled_case_and_its_alias():
    case = reference_case("h100")
    assert case is reference_case() and case.name == "h100-sxm-8gpu"
    assert case.node.node_price == Money.of(400_000, "USD") and case.node.cost_of_capital == 0.10
