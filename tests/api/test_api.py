"""The notebook API (``finops.size``, ``estimate``, ``tco``, ``optimize_mix``, ``reconcile_month``) against the CLI."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import sys
from decimal import Decimal

import pytest

import finops
import finops.api
from finops.cli import main
from finops.errors import DependencyError
from finops.mix import MixOption
from finops.price_book import PRICE_BOOK_ENV

API = ("estimate", "optimize_mix", "reconcile_month", "size", "tco")


def _cli_json(args: list[str], monkeypatch) -> dict:
    monkeypatch.delenv(PRICE_BOOK_ENV, raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    return json.loads(out.getvalue())


def test_all_is_complete_and_sorted():
    """Every public name of ``finops.api`` is in its ``__all__``; the five API calls are in ``finops.__all__``."""
    public = {name for name, obj in vars(finops.api).items() if not name.startswith("_")
              and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == "finops.api"}
    assert public <= set(finops.api.__all__) and all(hasattr(finops.api, n) for n in finops.api.__all__)
    assert set(API) <= set(finops.__all__)
    assert all(hasattr(finops, name) for name in finops.__all__)
    assert finops.__all__ == sorted(finops.__all__)
    assert callable(finops.tco) and finops.tco is finops.api.tco      # the function, not the package


@pytest.mark.parametrize("preset", ["seed000-doc-qa", "seed003-customer-service"])
def test_size_returns_the_cli_options_in_the_same_order(preset, monkeypatch):
    cli = _cli_json(["size", "--preset", preset], monkeypatch)["options"]
    api = finops.size(preset=preset)
    assert [(o.gpu, o.precision, o.tp, o.gpus, o.gpus_paid, o.instance_type, o.instances) for o in api] == [
        (o["gpu"], o["precision"], o["tp"], o["gpus"], o["gpus_paid"], o["instance_type"], o["instances"])
        for o in cli]
    assert [o.monthly_cost.amount for o in api] == [Decimal(str(o["monthly_cost"])) for o in cli]
    frame = api.to_pandas()
    assert list(frame["gpu"]) == [o["gpu"] for o in cli] and set(frame["currency"]) == {"USD"}
    assert all(isinstance(v, Decimal) for v in frame["monthly_cost"])           # money stays exact
    assert api.to_dict()["options"][0]["gpu"] == cli[0]["gpu"]


def test_size_takes_a_workload_file_or_a_workload(monkeypatch):
    from pathlib import Path

    path = Path(__file__).parents[2] / "examples" / "sizing" / "support-bot.toml"
    cli = _cli_json(["size", "--workload", str(path)], monkeypatch)["options"]
    assert [o.gpu for o in finops.size(path)] == [o["gpu"] for o in cli]
    with pytest.raises(finops.InputError, match="exactly one"):
        finops.size()


def test_estimate_is_the_cli_estimate(monkeypatch):
    cli = _cli_json(["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16", "--tp", "1",
                     "--isl", "2000", "--osl", "500", "--concurrency", "16"], monkeypatch)
    api = finops.estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=2000, osl=500, concurrency=16)
    assert api.to_dict()["ttft_ms"] == pytest.approx(cli["ttft_ms"]) and api.to_dict()["fits"] is True


def test_tco_is_the_cli_tco(monkeypatch):
    cli = _cli_json(["tco", "--gpus", "16", "--months", "36"], monkeypatch)
    api = finops.tco(16, 36)
    assert json.loads(json.dumps(api.to_dict()["options"], default=float)) == cli["options"]
    frame = api.to_pandas()
    assert list(frame["name"]) == [o["name"] for o in cli["options"]]


def test_optimize_mix_table():
    demand = [8.0] * 6000 + [20.0] * 2760
    options = [MixOption("od", "on_demand", Decimal("6.88")), MixOption("ri-1y", "reserved", Decimal("4.30"))]
    result = finops.optimize_mix(demand, options)
    frame = result.to_pandas()
    # a unit is worth reserving when used more than 4.30 x 8760 / 6.88 = 5,475 hours: the first 8 units (8,760 h)
    assert list(frame["name"]) == ["od", "ri-1y"] and frame["units"][1] == result.units["ri-1y"] == 8
    assert sum(frame["cost"]) == result.total_cost.amount


def test_reconcile_month_table(tmp_path):
    from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
    from templates import build_template
    from templates.plan_reader import read_plan

    plan = read_plan(build_template(tmp_path / "plan.xlsx"))
    result = finops.reconcile_month(plan, sample_bill_paths(), SAMPLE_MONTH)
    frame = result.to_pandas()
    assert len(frame) == len(result.lines) > 0
    assert sum(frame["planned"]) == result.planned.amount and set(frame["currency"]) == {result.planned.currency}


def test_to_pandas_without_pandas_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)           # as if it were not installed
    with pytest.raises(DependencyError, match=r"pip install 'llm-finops\[pandas\]'"):
        finops.size(preset="seed002-financial-copilot", top=1).to_pandas()
