"""Cost per million output tokens on its two labelled bases: at the peak running 24/7, and at the average load.

Seed 003: cost per token = hourly device cost / tokens served per hour. The fleet is sized for the peak
and paid every hour, so at the average load a month costs the same and serves ``peak_to_average`` times
fewer tokens: average cost per million = monthly cost / (peak tokens/s / ratio x 3,600 x 730 / 10^6).
The expected figures below are worked from that definition, not from the code's shortcut (peak x ratio).
"""

import json
from decimal import Decimal

import pytest

import finops
from finops.cli import main
from finops.errors import InputError
from finops.money import Money
from finops.sizing.ranking import per_million, per_million_at_average


def _per_million_from_the_month(hourly: Decimal, peak_tokens_per_s: float, ratio: float) -> Decimal:
    monthly = hourly * 730
    tokens_in_month = Decimal(repr(peak_tokens_per_s)) / Decimal(repr(ratio)) * 3600 * 730
    return monthly / (tokens_in_month / 1_000_000)


@pytest.mark.parametrize("hourly, peak, ratio, peak_cost, average_cost", [
    (36, 10_000, 2.5, "1.00", "2.50"),      # 36 USD/h over 36 M tokens/h at the peak; 14.4 M on average
    (36, 10_000, 1.0, "1.00", "1.00"),      # the peak all the time: one figure
    ("55.04", 2_000, 3.0, "7.64", "22.93"),  # a p5 hour over 7.2 M tokens at the peak, 2.4 M on average
])
def test_hand_worked_costs_per_million(hourly, peak, ratio, peak_cost, average_cost):
    hour = Money.of(hourly, "USD")
    assert per_million(hour, peak).rounded() == Money.of(peak_cost, "USD")
    average = per_million_at_average(hour, peak, ratio)
    assert average.rounded() == Money.of(average_cost, "USD")
    assert round(average.amount, 9) == round(_per_million_from_the_month(hour.amount, peak, ratio), 9)


def test_a_peak_below_the_average_is_refused():
    with pytest.raises(InputError, match="at least 1"):
        per_million_at_average(Money.of(1, "USD"), 100, 0.5)


def _size_json(capsys, *args):
    assert main(["size", "--preset", "seed002-financial-copilot", "--top", "3", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out, parse_float=Decimal)["options"]


def test_size_prints_both_bases_and_the_fleet_stays_at_its_peak_size(capsys):
    at_peak = _size_json(capsys)
    averaged = _size_json(capsys, "--peak-to-average", "2.5")
    for peak, option in zip(at_peak, averaged, strict=True):
        assert (option["gpu"], option["instances"], option["monthly_cost"]) == \
            (peak["gpu"], peak["instances"], peak["monthly_cost"])          # fixed at the peak, same cost
        assert option["peak_to_average"] == 2.5 and peak["peak_to_average"] == 1.0
        expected = _per_million_from_the_month(option["hourly_cost"], float(option["output_tokens_per_s"]), 2.5)
        assert option["cost_per_million_output_tokens_average"] == pytest.approx(expected, rel=Decimal("1e-12"))
        assert peak["cost_per_million_output_tokens_average"] == peak["cost_per_million_output_tokens"]


def test_size_text_labels_both_bases(capsys):
    assert main(["size", "--preset", "seed002-financial-copilot", "--top", "1", "--peak-to-average", "2"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "pk|avg" in text
    assert "at the peak load running 24/7 (pk), and at the average load, peak/average 2" in text


def test_the_api_gives_the_command_lines_average_cost(capsys):
    (cli,) = _size_json(capsys, "--peak-to-average", "2.5", "--top", "1")
    api = finops.size(preset="seed002-financial-copilot", top=1, peak_to_average=2.5)[0]
    assert api.cost_per_million_output_tokens_average.amount == cli["cost_per_million_output_tokens_average"]
    assert api.cost_per_million_output_tokens_average.amount == pytest.approx(
        api.cost_per_million_output_tokens.amount * Decimal("2.5"), rel=Decimal("1e-15"))


def test_the_peak_to_average_of_an_hourly_profile(capsys, tmp_path):
    """An hourly profile of 2, 4, 6, 4 GPUs: peak 6 over an average of 4 = 1.5 (the Mix sheet's Peak / average)."""
    demand = tmp_path / "demand.csv"
    demand.write_text("hour,gpus\n0,2\n1,4\n2,6\n3,4\n")
    (option,) = _size_json(capsys, "--demand-profile", str(demand), "--top", "1")
    assert option["peak_to_average"] == Decimal("1.5")
    expected = _per_million_from_the_month(option["hourly_cost"], float(option["output_tokens_per_s"]), 1.5)
    assert option["cost_per_million_output_tokens_average"] == pytest.approx(expected, rel=Decimal("1e-12"))
    assert main(["size", "--preset", "seed002-financial-copilot", "--demand-profile", str(demand),
                 "--peak-to-average", "2"]) == 2
    assert "not both" in capsys.readouterr().err
    demand.write_text("hour,gpus\n0,0\n1,0\n")
    assert main(["size", "--preset", "seed002-financial-copilot", "--demand-profile", str(demand)]) == 2
    err = capsys.readouterr().err
    assert str(demand) in err and "average hour is 0" in err


def test_tco_prices_tokens_at_the_peak_and_at_the_average_load(capsys):
    """AWS p5 on-demand, 6.88 USD per GPU-hour, 1,000 tokens/s per GPU at the peak: 6.88 / 3.6 = 1.911 USD per
    million at the peak; at half that on average (peak/average 2) the same hours serve half the tokens: 3.822."""
    assert main(["tco", "--gpus", "8", "--months", "12", "--provider", "aws", "--no-owned", "--tokens-per-s", "1000",
                 "--peak-to-average", "2", "--json"]) == 0
    options = {o["name"]: o for o in json.loads(capsys.readouterr().out, parse_float=Decimal)["options"]}
    on_demand = options["aws p5.48xlarge on_demand"]
    assert on_demand["per_million_tokens"] == Decimal("1.911")
    assert on_demand["per_million_tokens_average"] == Decimal("3.822")
    assert main(["tco", "--gpus", "8", "--months", "12", "--provider", "aws", "--no-owned", "--tokens-per-s", "1000",
                 "--peak-to-average", "2"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "M tok pk" in text and "M tok avg" in text
    assert "at the peak load running 24/7 (pk) and at the average load, peak/average 2" in text


def test_tco_splits_input_and_output_on_both_bases(capsys):
    args = ["tco", "--gpus", "8", "--months", "12", "--provider", "aws", "--no-owned", "--model", "llama-3.1-8b",
            "--precision", "bf16", "--isl", "2000", "--osl", "500", "--json"]
    assert main([*args, "--peak-to-average", "3"]) == 0
    for option in json.loads(capsys.readouterr().out, parse_float=Decimal)["options"]:
        for side in ("input", "output"):
            peak, average = option[f"per_million_{side}"], option[f"per_million_{side}_average"]
            assert average == pytest.approx(peak * 3, abs=Decimal("0.002")), (option["name"], side)


def test_api_tco_options_price_tokens_on_both_bases():
    (on_demand,) = [o for o in finops.tco(8, 12, owned=False, provider="aws") if o.kind == "on_demand"]
    assert on_demand.per_million_tokens(1000).rounded() == Money.of("1.91", "USD")
    assert on_demand.per_million_tokens(1000, peak_to_average=2).rounded() == Money.of("3.82", "USD")
