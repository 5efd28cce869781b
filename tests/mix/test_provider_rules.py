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
                     "--region", region, "--json"]) == 0
    assert [r["name"] for r in json.loads(out.getvalue())["recommenders"]] == rules
