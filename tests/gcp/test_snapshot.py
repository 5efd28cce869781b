"""The bundled GCP snapshot: GPU machines from the 2026-07-30 dump, dated and sourced, in the price book."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from connectors.gcp.snapshot import snapshot, snapshot_name
from finops.cli import main
from finops.price_book import PriceBook


def test_every_row_is_dated_and_sourced_and_gpu_only():
    book = snapshot()
    assert snapshot_name() == "gcp-2026-07-30.csv.gz"
    assert len(book) > 1000
    assert {r.effective_date for r in book} == {"2026-07-30"}
    assert all("Cyclenerd/google-cloud-pricing-cost-calculator" in r.source for r in book)
    assert {r.instance_type.split("-")[0] for r in book} == {"a2", "a3", "g2", "g4"}
    assert {r.pricing_model for r in book} == {"on_demand", "spot", "cud_1y", "cud_3y"}
    assert {r.payment_option for r in book if r.pricing_model.startswith("cud")} == {"no_upfront"}


# (machine, model, hourly) with hourly taken from the dump's us-central1 entry: hour, hour_spot, month_1y / 730
@pytest.mark.parametrize("machine, model, hourly", [
    ("a3-highgpu-8g", "on_demand", Decimal("88.4899999025753")),
    ("a3-highgpu-8g", "spot", Decimal("50.6095408219178")),
    ("a3-highgpu-8g", "cud_1y", Decimal("44810.08066464") / 730),
    ("a3-highgpu-8g", "cud_3y", Decimal("28370.99821392") / 730),
    ("g2-standard-4", "on_demand", Decimal("0.706832255")),
    ("a2-highgpu-1g", "cud_3y", Decimal("938.56707798") / 730),
])
def test_hourly_prices_follow_the_dump_with_730_hours_a_month(machine, model, hourly):
    row = snapshot().lookup("gcp", machine, model, "us-central1")
    assert abs(row.hourly_cost - hourly) < Decimal("0.000000001")


# G4 (RTX PRO 6000 Blackwell Server Edition): hourly figures read by hand from
# /work/shared/data/prices/gcp-pricing-2026-07-30.yml, compute.instance.<machine>.cost.<region>:
# hour, hour_spot, month_1y / 730, month_3y / 730
G4_FROM_THE_DUMP = [
    ("g4-standard-48", "us-central1", "4.49993", "1.79982", "2266.65", "1444.9985"),
    ("g4-standard-96", "europe-west4", "9.899846", "3.96", "4986.63", "3178.9967"),
    ("g4-standard-192", "us-east4", "17.99972", "7.19928", "9066.6", "5779.994"),
    ("g4-standard-384", "asia-southeast1", "43.199328", "17.28144", "21759.84", "13871.9856"),
]


@pytest.mark.parametrize("machine, region, model, hourly", [
    (machine, region, model, hourly)
    for machine, region, hour, spot, month_1y, month_3y in G4_FROM_THE_DUMP
    for model, hourly in (("on_demand", Decimal(hour)), ("spot", Decimal(spot)),
                          ("cud_1y", Decimal(month_1y) / 730), ("cud_3y", Decimal(month_3y) / 730))
])
def test_g4_prices_follow_the_dump(machine, region, model, hourly):
    row = snapshot().lookup("gcp", machine, model, region)
    assert abs(row.hourly_cost - hourly) < Decimal("0.000000001")


@pytest.mark.parametrize("machine, gpus", [
    ("g4-standard-48", 1), ("g4-standard-96", 2), ("g4-standard-192", 4), ("g4-standard-384", 8),
    ("g4-standard-6", None), ("g4-standard-12", None), ("g4-standard-24", None),   # fractional vGPU shapes
])
def test_g4_whole_gpu_machines_are_priced_and_fractional_shapes_are_not(machine, gpus):
    rows = snapshot().filter(instance_type=machine).rows
    if gpus is None:
        assert not rows
    else:
        assert len({r.region for r in rows}) == 20
        assert {(r.gpu_model, r.gpu_count) for r in rows} == {("rtx-pro-6000", gpus)}


def test_a2_ultra_has_no_commitment_price_because_the_dump_has_none():
    assert not snapshot().filter(instance_type="a2-ultragpu-1g", pricing_model="cud_1y").rows


def test_the_snapshot_is_part_of_the_bundled_price_book_and_the_cli(capsys):
    assert len(PriceBook.bundled().filter(provider="gcp")) == len(snapshot())
    code = main(["prices", "show", "--provider", "gcp", "--instance-type", "a3-highgpu-8g", "--region", "us-central1",
                 "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and sorted(r["pricing_model"] for r in rows) == ["cud_1y", "cud_3y", "on_demand", "spot"]
    assert {(r["gpu_model"], r["gpu_count"]) for r in rows} == {("h100-sxm", 8)}


def _derive_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "derive_gcp_snapshot.py"
    spec = importlib.util.spec_from_file_location("derive_gcp_snapshot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_derive_script_keeps_whole_gpu_machines_and_turns_commitments_hourly():
    # a dump in the Cyclenerd shape: machine -> accelerator key + cost per region
    dump = {"compute": {"instance": {
        "g2-standard-4": {"l4": 1, "cpu": 4, "cost": {"us-central1": {
            "hour": 0.7, "month": 511.0, "hour_spot": 0.4, "month_1y": 321.93, "month_3y": 229.95}}},
        "g4-standard-6": {"rtx6000": 0.125, "cost": {"us-central1": {"hour": 0.9, "month": 657.0}}},
        "g4-standard-48": {"rtx6000": 1, "cost": {"us-central1": {"hour": 4.5, "month": 3285.0}}},
        "n2-standard-4": {"cpu": 4, "cost": {"us-central1": {"hour": 0.19, "month": 138.7}}},
    }}}
    book = _derive_script().derive(dump, "2026-07-30", "test dump")
    assert sorted((r.instance_type, r.pricing_model, r.payment_option, r.hourly_cost) for r in book) == [
        ("g2-standard-4", "cud_1y", "no_upfront", Decimal("0.441")),   # 321.93 / 730
        ("g2-standard-4", "cud_3y", "no_upfront", Decimal("0.315")),   # 229.95 / 730
        ("g2-standard-4", "on_demand", "", Decimal("0.7")),
        ("g2-standard-4", "spot", "", Decimal("0.4")),
        ("g4-standard-48", "on_demand", "", Decimal("4.5"))]
    assert {(r.gpu_model, r.gpu_count, r.effective_date, r.source) for r in book} == {
        ("l4", 1, "2026-07-30", "test dump"), ("rtx-pro-6000", 1, "2026-07-30", "test dump")}
