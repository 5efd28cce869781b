"""`finops demo` runs the main job end to end on the bundled snapshots and writes every output."""

import json

import openpyxl
import pytest

from finops.cli import main
from finops.sizing import presets


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    return out


def test_every_seed_scenario_is_sized_and_priced(demo_out):
    results = json.loads((demo_out / "sizing.json").read_text())
    assert {r["workload"] for r in results} == set(presets())
    for result in results:
        assert result["options"], result["workload"]
        costs = [o["monthly_cost"] for o in result["options"]]
        assert costs == sorted(costs) and costs[0] > 0


def test_tco_reproduces_seed_003_and_ranks_owned_against_cloud(demo_out):
    tco = json.loads((demo_out / "tco.json").read_text())
    assert tco["seed003_tco"] == 4_356_000 and tco["seed003_currency"] == "CNY"
    assert len(tco["comparison"]["options"]) >= 3


def test_mix_saves_against_all_on_demand(demo_out):
    mix = json.loads((demo_out / "mix.json").read_text())
    assert mix["savings"] > 0
    assert mix["total_cost"] + mix["savings"] == pytest.approx(mix["on_demand_only_cost"])


def test_the_plan_and_the_review_workbooks_are_written(demo_out):
    review = openpyxl.load_workbook(demo_out / "budget-review-2026-05.xlsx", read_only=True)
    assert {"Summary", "Variance", "P&L and cash", "Commitments", "GPU usage", "Unmapped", "Glossary"} <= set(review.sheetnames)
    plan = openpyxl.load_workbook(demo_out / "llm-finops-plan.xlsx", read_only=True)
    assert {"Budget", "Assets", "Mapping", "Sizing", "TCO", "Mix"} <= set(plan.sheetnames)
    assert (demo_out / "reconcile-history.duckdb").exists()
