"""A GCP committed-use discount is a commitment kind of its own (``cud``), not a savings plan."""

from __future__ import annotations

from decimal import Decimal

import pytest

from finops.mix.options import COMMITTED_KINDS, read_options_csv
from finops.mix.price_options import options_from_prices
from finops.price_book import PriceBook, PriceRow


@pytest.mark.parametrize("written, kind", [("cud", "cud"), ("committed_use", "cud"), ("sp", "savings_plan"),
                                           ("savings_plan", "savings_plan"), ("ri", "reserved")])
def test_options_csv_kinds(tmp_path, written, kind):
    path = tmp_path / "options.csv"
    path.write_text(f"name,kind,hourly_cost\nod,on_demand,10\nx,{written},6\n", encoding="utf-8")
    assert [o.kind for o in read_options_csv(path)] == ["on_demand", kind]


def test_gcp_cud_prices_become_cud_options_and_aws_savings_plans_stay_savings_plans():
    def row(provider: str, itype: str, model: str, hourly: str) -> PriceRow:
        return PriceRow(provider, "r1", itype, "h100-sxm", 8, model, "no_upfront" if model != "on_demand" else "",
                        Decimal(hourly), Decimal(0), "USD", "2026-07-30", "test row")

    book = PriceBook([row("gcp", "a3-highgpu-8g", "on_demand", "88"), row("gcp", "a3-highgpu-8g", "cud_1y", "60"),
                      row("aws", "p5.48xlarge", "on_demand", "55"), row("aws", "p5.48xlarge", "savings_plan_1y", "40")])
    gcp = {o.kind for o in options_from_prices(book, "gcp", "a3-highgpu-8g", "r1", horizon_hours=8760)}
    aws = {o.kind for o in options_from_prices(book, "aws", "p5.48xlarge", "r1", horizon_hours=8760)}
    assert gcp == {"on_demand", "cud"} and aws == {"on_demand", "savings_plan"}
    assert "cud" in COMMITTED_KINDS
