"""``finops tco``: JSON figures, price-book options, the owned schedule, and bad input -> exit 2."""

import json
from decimal import Decimal

import pytest

from finops.cli import main
from finops.money import to_decimal
from finops.price_book import PriceBook, PriceRow


def run(capsys, *args):
    code = main(["tco", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _book(tmp_path):
    def row(model, option, hourly, upfront=0):
        return PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, model, option, to_decimal(hourly),
                        to_decimal(upfront), "USD", "2026-11-01", "test fixture")
    rows = [row("on_demand", "", "55.04"), row("spot", "", "24"),
            row("reserved_3y", "all_upfront", "30", 30 * 26280), row("reserved_1y", "no_upfront", "40"),
            row("savings_plan_1y", "partial_upfront", "36", 10 * 8760)]
    return PriceBook(rows).write_csv(tmp_path / "prices.csv")


def test_json_compares_owned_with_the_cited_p5_price(capsys):
    code, out, _ = run(capsys, "--gpus", "16", "--months", "36", "--provider", "aws", "--json",
                       "--tokens-per-s", "2000")
    assert code == 0
    payload = json.loads(out)
    options = {o["name"]: o for o in payload["options"]}
    owned = options["owned h100-sxm-8gpu"]
    assert owned["units"] == 2 and owned["capex"] == 800_000
    assert payload["owned"]["capex"] == 800_000 and len(payload["owned"]["schedule"]) == 36
    on_demand = options["aws p5.48xlarge on_demand"]
    assert on_demand["per_gpu_hour"] == 6.88
    assert Decimal(str(on_demand["total"])) == Decimal("6.88") * 16 * 730 * 36
    assert on_demand["per_million_tokens"] == pytest.approx(6.88 / 2000 / 3600 * 1e6, abs=0.005)
    assert payload["cheapest"] == "owned h100-sxm-8gpu"


def test_price_book_options_with_upfront_spot_and_commitment_past_the_horizon(capsys, tmp_path):
    code, out, _ = run(capsys, "--gpus", "8", "--months", "12", "--no-owned", "--price-book",
                       str(_book(tmp_path)), "--spot-lost-work", "0", "--spot-fallback", "0",
                       "--spot-max-share", "0.5", "--json")
    assert code == 0
    options = {o["name"]: o for o in json.loads(out)["options"]}
    assert "owned h100-sxm-8gpu" not in options
    reserved = options["aws p5.48xlarge reserved_3y all_upfront"]
    assert reserved["upfront"] == 30 * 26280 and reserved["term_months"] == 36
    assert reserved["total"] == pytest.approx(30 * 730 * 36)          # the whole term is owed
    assert "24 months of commitment past the horizon" in reserved["note"]
    spot = options["aws p5.48xlarge spot 50% + on_demand"]
    assert spot["per_gpu_hour"] == pytest.approx((55.04 + 24) / 2 / 8, abs=1e-4)
    assert options["aws p5.48xlarge on_demand"]["opex"] == pytest.approx(55.04 * 730 * 12)
    plan = options["aws p5.48xlarge savings_plan_1y partial_upfront"]
    assert plan["kind"] == "savings_plan" and plan["upfront"] == 10 * 8760
    assert plan["per_gpu_hour"] == 4.5 and plan["total"] == pytest.approx(36 * 730 * 12)   # upfront amortized


def test_seed_003_owned_fleet_in_cny(capsys):
    code, out, _ = run(capsys, "--gpus", "9", "--gpus-per-node", "1", "--currency", "CNY", "--gpu-price", "160000",
                       "--support", "9000", "--electricity", "0", "--colocation", "0", "--cost-of-capital", "0",
                       "--life-months", "36", "--months", "36", "--no-cloud", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["currency"] == "CNY" and [o["name"] for o in payload["options"]] == ["owned (from h100-sxm-8gpu)"]
    owned = payload["options"][0]
    assert owned["total"] == 4_356_000 and owned["capex"] == 1_440_000 and owned["opex"] == 2_916_000


@pytest.mark.parametrize("rate", ["0.06", "0.12"])
def test_discount_rate_sets_the_npv_of_the_owned_cash(capsys, rate):
    code, out, _ = run(capsys, "--gpus", "8", "--months", "24", "--no-cloud", "--discount-rate", rate, "--json")
    assert code == 0
    owned = json.loads(out)["owned"]
    monthly = 1 + Decimal(rate) / 12
    expected = sum(Decimal(str(m["cash"])) / monthly ** k for k, m in enumerate(owned["schedule"]))
    assert Decimal(str(owned["npv"])) == pytest.approx(expected, abs=Decimal("0.005") * 24)   # cash shown to cents


def test_owned_overrides_and_schedule_table(capsys):
    code, out, _ = run(capsys, "--gpus", "8", "--months", "3", "--start", "2026-11", "--cost-of-capital", "0",
                       "--node-price", "300000", "--electricity", "0.12", "--schedule")
    assert code == 0
    assert "2026-11" in out and "2027-01" in out
    assert "5,000.00" in out                         # 300,000 / 60 months straight-line


@pytest.mark.parametrize("args,message", [
    (["--gpus", "0"], "gpus"),
    (["--months", "0"], "months"),
    (["--electricity", "abc"], "--electricity"),
    (["--pue", "0.5"], "pue"),
    (["--start", "2026-13"], "month"),
    (["--reference", "h10x"], "reference case"),
    (["--spot-max-share", "2"], "--spot-max-share"),
    (["--provider", "aws", "--region", "mars-1"], "no prices"),
    (["--price-book", "/nonexistent/prices.csv"], "does not exist"),
    (["--currency", "CNY", "--gpu-price", "100"], "--electricity, --colocation"),
    (["--currency", "CNY", "--gpu-price", "100", "--electricity", "1", "--colocation", "1"], "priced in USD"),
    (["--currency", "EUR", "--no-owned"], "priced in USD, the comparison in EUR"),   # not silently USD
    (["--node-price", "1", "--gpu-price", "1"], "not both"),
    (["--no-owned", "--no-cloud"], "nothing to compare"),
    (["--discount-rate", "-0.1"], "--discount-rate"),
])
def test_bad_input_exits_2_with_a_message(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_model_prices_input_and_output_tokens_and_levers(capsys):
    code, out, _ = run(capsys, "--gpus", "16", "--provider", "aws", "--model", "llama-3.1-8b", "--precision", "fp8",
                       "--isl", "2000", "--osl", "500", "--concurrency", "32", "--what-if-utilization", "0.4:0.8",
                       "--what-if-shift", "16:6:4", "--what-if-cache", "0.5", "--json")
    assert code == 0
    payload = json.loads(out)
    owned = payload["options"][0]
    assert payload["sizing"]["model"] == "llama-3.1-8b" and payload["sizing"]["fits"]
    assert 0 < owned["per_million_input"] < owned["per_million_output"]
    assert owned["per_replica_month"] == pytest.approx(owned["per_gpu_hour"] * 730, abs=0.05)  # rate shown to 1e-4
    levers = {lever["lever"]: lever for lever in payload["what_if"]["levers"]}
    assert payload["what_if"]["option"] == owned["name"]
    assert levers["utilization"]["after"] == pytest.approx(owned["monthly"] / 2, abs=0.01)   # seed 000
    assert levers["load_shaping"]["saved"] == pytest.approx(owned["monthly"] / 16 * 4, abs=0.05)  # 4 GPUs fewer
    assert 0 < levers["prefix_cache"]["saved"] < owned["monthly"]


@pytest.mark.parametrize("args,message", [
    (["--what-if-utilization", "0.4"], "--what-if-utilization"),
    (["--what-if-utilization", "0.4:x"], "expected a number"),
    (["--what-if-quantize", "fp8"], "need --model"),
    (["--model", "llama-3.1-70b", "--precision", "bf16", "--tp", "1"], "does not fit"),
])
def test_bad_lever_and_sizing_input_exits_2(capsys, args, message):
    code, _, err = run(capsys, *args)
    assert code == 2 and message in err
