"""Recommender rules are replayed for the demand's provider only (AWS's lookbacks never on a GCP machine)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from finops.cli import main
from finops.price_book import PRICE_BOOK_ENV

DEMAND = Path(__file__).parents[2] / "examples" / "mix" / "demand.csv"


@pytest.mark.parametrize("provider, instance_type, region, rules", [
    ("gcp", "a3-highgpu-1g", "us-central1", ["gcp-30d"]),
    ("aws", "p5.4xlarge", "us-east-1", ["aws-7d", "aws-30d", "aws-60d"]),
])
def test_mix_from_the_price_book_replays_only_its_providers_rules(monkeypatch, provider, instance_type, region,
                                                                   rules):
    monkeypatch.delenv(PRICE_BOOK_ENV, raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["mix", "--demand", str(DEMAND), "--provider", provider, "--instance-type", instance_type,
                     "--region", region, "--demand-unit", "accelerators", "--json"]) == 0
    assert [r["name"] for r in json.loads(out.getvalue())["recommenders"]] == rules


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["mix", "--demand", str(DEMAND), "--provider", "gcp", "--region", "us-central1", "--json",
                     "--no-compare", *args])
    return code, out.getvalue()


def test_a_demand_in_accelerators_is_bought_as_whole_8_gpu_machines(monkeypatch):
    """examples/mix/demand.csv counts GPUs (its header says accelerators): on a3-highgpu-8g, hour by hour
    ceil(GPUs / 8) machines."""
    import csv
    import math

    from finops.price_book import PriceBook

    monkeypatch.delenv(PRICE_BOOK_ENV, raising=False)
    gpus = [float(r["accelerators"]) for r in csv.DictReader(DEMAND.open(encoding="utf-8"))]
    hourly = PriceBook.current().lookup("gcp", "a3-highgpu-8g", "on_demand", "us-central1").hourly_cost
    machines = sum(math.ceil(round(g / 8, 9)) for g in gpus)
    code, out = _run(["--instance-type", "a3-highgpu-8g", "--demand-unit", "accelerators"])
    assert code == 0
    assert float(json.loads(out)["on_demand_only_cost"]) == pytest.approx(float(hourly) * machines, abs=0.005)   # JSON: cents
    code, out_stated = _run(["--instance-type", "a3-highgpu-8g"])
    assert code == 0 and out_stated == out                 # the file's header states its unit (hour,accelerators)
