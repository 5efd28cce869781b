"""``finops mix``: the minimum file contract, JSON keys, generate/scenarios/ladder, and bad input -> exit 2."""

import json
from decimal import Decimal

import pytest

from finops.cli import main
from finops.mix import optimize_mix, read_demand_csv, read_options_csv

OPTIONS = "name,kind,hourly_cost,max_share,max_units\nod,on_demand,10,,\nri,reserved,4.9,,\nspot,spot,4,0.3,\n"


def run(capsys, *args):
    code = main(["mix", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def files(tmp_path):
    demand = tmp_path / "demand.csv"
    demand.write_text("hour,units\n" + "".join(f"{h},{u}\n" for h, u in enumerate([10, 10, 6, 6, 6, 2, 2, 2, 2, 2])))
    options = tmp_path / "options.csv"
    options.write_text(OPTIONS)
    return demand, options


def test_json_has_the_contract_keys(capsys, files):
    demand, options = files
    code, out, _ = run(capsys, "--demand", str(demand), "--options", str(options), "--json")
    assert code == 0
    payload = json.loads(out)
    expected = optimize_mix(read_demand_csv(demand), read_options_csv(options))
    assert payload["units"] == {"ri": 4} == expected.units
    assert Decimal(str(payload["total_cost"])) == expected.total_cost.rounded().amount
    assert Decimal(str(payload["on_demand_only_cost"])) == Decimal(480)
    assert payload["savings"] == pytest.approx(480 - payload["total_cost"])
    assert {r["name"] for r in payload["recommenders"]} == {"aws-7d", "aws-30d", "aws-60d", "gcp-30d"}
    assert set(payload["stress"]) == {"0.7", "1.5"}


def test_shift_batch_adds_the_load_shaping_lever(capsys, files):
    demand, options = files
    code, out, _ = run(capsys, "--demand", str(demand), "--options", str(options), "--json", "--no-compare",
                       "--shift-batch", "0.2")
    assert code == 0
    lever = json.loads(out)["load_shaping"]
    assert lever["batch_share"] == 0.2 and lever["saved"] == pytest.approx(lever["cost_before"] - lever["cost_after"])


def test_table_output_names_each_option(capsys, files):
    demand, options = files
    code, out, _ = run(capsys, "--demand", str(demand), "--options", str(options), "--no-compare")
    assert code == 0
    assert "ri" in out and "spot" in out and "savings" in out and "recommenders" not in out


@pytest.mark.parametrize("demand_text, options_text, words", [
    ("hour,units\n0,1\n2,1\n", OPTIONS, "demand.csv, row 3, column hour"),
    ("hour,units\n-1,1\n", OPTIONS, "demand.csv, row 2, column hour"),
    ("hour,units\n0,-1\n", OPTIONS, "demand.csv, row 2, column units"),
    ("hour\n0\n", OPTIONS, "demand.csv, row 1, column units"),
    ("hour,units\n0,1\n", "name,kind\nod,on_demand\n", "options.csv, row 1, column hourly_cost"),
    ("hour,units\n0,1\n", "name,kind,hourly_cost,term_hours\nod,on_demand,1,\nri,reserved,1,8760\n",
     "options.csv, row 3, column term_hours"),
    ("hour,units\n0,1\n", "name,kind,hourly_cost,currency\nod,on_demand,1,USD\nri,reserved,1,CNY\n",
     "options.csv, row 3, column currency"),
])
def test_bad_input_exits_2_naming_file_row_column(capsys, tmp_path, demand_text, options_text, words):
    (tmp_path / "demand.csv").write_text(demand_text)
    (tmp_path / "options.csv").write_text(options_text)
    code, out, err = run(capsys, "--demand", str(tmp_path / "demand.csv"), "--options", str(tmp_path / "options.csv"))
    assert code == 2 and out == ""
    assert words in " ".join(err.split()) and "Traceback" not in err


def test_missing_option_exits_2(capsys, files):
    code, _, err = run(capsys, "--demand", str(files[0]))
    assert code == 2 and "--options" in err


def test_generate_writes_a_profile_the_optimizer_reads(capsys, tmp_path):
    out = tmp_path / "gen.csv"
    code, printed, _ = run(capsys, "generate", "--out", str(out), "--hours", "336", "--peak", "20",
                           "--campaign", "7:1:10", "--batch-share", "0.2")
    assert code == 0 and "336 hours" in printed
    profile = read_demand_csv(out)
    assert len(profile) == 336 and profile[7 * 24:8 * 24].max() > 5 * profile[:7 * 24].max()
    code, _, err = run(capsys, "generate", "--out", str(out), "--peak", "20", "--campaign", "soon")
    assert code == 2 and "START_DAY:DAYS:MULTIPLIER" in err


def test_scenarios_command(capsys, files):
    demand, options = files
    code, out, _ = run(capsys, "scenarios", "--demand", str(demand), "--options", str(options), "--json")
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {"expected", "commit_to_low", "per_scenario"}
    assert payload["commit_to_low"]["units"]["ri"] <= payload["expected"]["units"]["ri"]
    code, _, err = run(capsys, "scenarios", "--demand", str(demand), "--options", str(options), "--weights", "1,2")
    assert code == 2 and "three numbers" in err


def test_ladder_command(capsys, tmp_path):
    demand = tmp_path / "d.csv"
    demand.write_text("hour,units\n" + "".join(f"{h},{10 + h // 8760 * 10}\n" for h in range(3 * 8760)))
    options = tmp_path / "o.csv"
    options.write_text("name,kind,hourly_cost,term_hours\nod,on_demand,10,\nri-1y,reserved,6,8760\n"
                       "ri-3y,reserved,3.5,26280\n")
    code, out, _ = run(capsys, "ladder", "--demand", str(demand), "--options", str(options), "--json")
    assert code == 0
    payload = json.loads(out)
    bought = {name: {m: n for m, n in enumerate(months) if n} for name, months in payload["purchases"].items()}
    assert bought == {"ri-1y": {}, "ri-3y": {0: 10, 12: 10, 24: 10}}
    assert payload["months"] == 36 and payload["savings"] > 0


def test_options_from_a_price_book_file(capsys, files, tmp_path, monkeypatch):
    from finops.money import to_decimal
    from finops.price_book import PriceBook, PriceRow

    def row(model, hourly, payment=""):
        return PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, model, payment, to_decimal(hourly),
                        to_decimal(0), "USD", "2026-11-01", "test fixture")
    book = PriceBook([row("on_demand", "10"), row("spot", "4"), row("reserved_1y", "4.9", "no_upfront"),
                      row("reserved_3y", "3", "no_upfront")]).write_csv(tmp_path / "prices.csv")
    monkeypatch.setenv("FINOPS_PRICE_BOOK", str(book))
    year = tmp_path / "year.csv"
    year.write_text("hour,units\n" + "".join(f"{h},{[10, 10, 6, 6, 6, 2, 2, 2, 2, 2][h % 10]}\n" for h in range(8760)))
    code, out, _ = run(capsys, "--demand", str(year), "--provider", "aws", "--instance-type", "p5.48xlarge",
                       "--region", "us-east-1", "--demand-unit", "instances", "--json", "--no-compare")
    assert code == 0
    # the 3-year price is left out of a 1-year profile; the rest is the file-based answer
    assert json.loads(out)["units"] == {"reserved_1y-no_upfront": 4}
