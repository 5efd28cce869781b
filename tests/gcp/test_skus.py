"""SKU -> component rules, usage types, units and exact money (table-driven, no server)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from connectors.gcp.compose import machine_prices
from connectors.gcp.skus import money, priced_components
from finops.catalog.instances import instance
from finops.money import MONEY_CONTEXT


def sku(description: str, group: str, usage: str = "OnDemand", units: str = "0", nanos: int = 0, unit: str = "h",
        regions: tuple[str, ...] = ("us-central1",), tiers: list[dict] | None = None) -> dict:
    rates = tiers or [{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos}}]
    return {"skuId": "X", "description": description, "serviceRegions": list(regions),
            "category": {"resourceGroup": group, "usageType": usage},
            "pricingInfo": [{"effectiveTime": "2026-07-01T00:00:00Z",
                             "pricingExpression": {"usageUnit": unit, "tieredRates": rates}}]}


@pytest.mark.parametrize("description, group, usage, expected", [
    ("Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand", ("gpu", "a100-40gb", "on_demand")),
    ("Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in Americas", "GPU", "Preemptible",
     ("gpu", "a100-80gb", "spot")),
    ("Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year", "GPU", "Commit1Yr", ("gpu", "h100-sxm", "cud_1y")),
    ("Commitment v1: Nvidia H100 80GB Mega GPU in Americas for 3 Years", "GPU", "Commit3Yr",
     ("gpu", "h100-mega", "cud_3y")),
    ("Nvidia L4 GPU running in Frankfurt", "GPU", "OnDemand", ("gpu", "l4", "on_demand")),
    ("H200 141GB GPU running in Netherlands", "GPU", "OnDemand", ("gpu", "h200", "on_demand")),
    ("Spot Preemptible A3 Instance Core running in Americas", "CPU", "Preemptible", ("cpu", "A3", "spot")),
    ("Commitment v1: A2 Cpu in Americas for 1 Year", "CPU", "Commit1Yr", ("cpu", "A2", "cud_1y")),
    ("Commitment v1: A3 Ram in Americas for 3 Years", "RAM", "Commit3Yr", ("ram", "A3", "cud_3y")),
    ("G2 Instance Ram running in Americas", "RAM", "OnDemand", ("ram", "G2", "on_demand")),
    ("SSD backed Local Storage attached to Spot Preemptible VMs", "LocalSSD", "Preemptible",
     ("local_ssd", "local-ssd", "spot")),
    ("Commitment v1: Local SSD In Americas for 1 Year", "LocalSSD", "Commit1Yr", ("local_ssd", "local-ssd", "cud_1y")),
    ("TPU v6e chip running in Americas", "TPU", "OnDemand", ("tpu", "tpu-v6e", "on_demand")),
    # Compute Engine lists v5/v6 chips as TpuV5e / TpuV5p / TpuV6e, and preemptible TPU SKUs have usage type
    # OnDemand (as SkyPilot's catalog fetcher, sky/catalog/data_fetchers/fetch_gcp.py, matches them)
    ("TpuV5e chip running in Americas", "TPU", "OnDemand", ("tpu", "tpu-v5e", "on_demand")),
    ("Preemptible TpuV5p chip running in Americas", "TPU", "OnDemand", ("tpu", "tpu-v5p", "spot")),
    ("Commitment v1: TpuV6e in Americas for 1 Year", "TPU", "Commit1Yr", ("tpu", "tpu-v6e", "cud_1y")),
    ("Trillium chip running in Americas", "TPU", "OnDemand", ("tpu", "tpu-v6e", "on_demand")),
    ("Tpu-v4 Pod running in Americas", "TPU", "OnDemand", None),
    # G4: the RTX PRO 6000 SKU has no "GPU" word; fractional vGPU slices are not GPU-hours
    ("RTX 6000 96GB running in Iowa", "GPU", "OnDemand", ("gpu", "rtx-pro-6000", "on_demand")),
    ("RTX 6000 96GB attached to Spot Preemptible VMs running in Iowa", "GPU", "Preemptible",
     ("gpu", "rtx-pro-6000", "spot")),
    ("Commitment v1: RTX 6000 96GB running in Iowa for 3 Years", "GPU", "Commit3Yr", ("gpu", "rtx-pro-6000", "cud_3y")),
    ("G4 Instance Core running in Iowa", "CPU", "OnDemand", ("cpu", "G4", "on_demand")),
    ("Commitment v1: G4 Ram in Iowa for 1 Year", "RAM", "Commit1Yr", ("ram", "G4", "cud_1y")),
    ("1/8 vGPU no lssd running in Iowa", "GPU", "OnDemand", None),
    # ignored: other series, DWS / sole tenancy / reserved variants, C4 local SSD, unknown usage types
    ("N2 Instance Core running in Americas", "CPU", "OnDemand", None),
    ("Nvidia L4 GPU attached to DWS Defined Duration VMs running in Americas", "GPU", "OnDemand", None),
    ("Reserved Nvidia H100 80GB Mega GPU in Americas in Calendar Mode", "GPU", "OnDemand", None),
    ("C4 Instance Local SSD running in Americas", "LocalSSD", "OnDemand", None),
    ("Nvidia L4 GPU running in Americas", "GPU", "Reserved", None),
    ("A2 Instance Core running in Americas", "RAM", "OnDemand", None),  # wrong resource group
])
def test_descriptions_and_usage_types_map_to_components(description, group, usage, expected):
    found = priced_components(sku(description, group, usage, nanos=500_000_000))
    assert [(c.kind, c.name, c.pricing_model) for c in found] == ([expected] if expected else [])


@pytest.mark.parametrize("unit_price, expected", [
    ({"units": "9", "nanos": 796550569}, "9.796550569"),
    ({"units": "0", "nanos": 1}, "0.000000001"),
    ({"units": "12345678901", "nanos": 0}, "12345678901"),
    ({"nanos": 250000000}, "0.25"),
    ({"units": "-2", "nanos": -500000000}, "-2.5"),
])
def test_money_is_exact(unit_price, expected):
    assert money(unit_price) == Decimal(expected)


@pytest.mark.parametrize("unit, units, nanos, hourly", [
    ("h", "0", 31611000, "0.031611"),
    ("GiBy.h", "0", 4237000, "0.004237"),
    ("GiBy.mo", "0", 80000000, "0.08"),  # divided by 730 below
])
def test_units_become_hourly(unit, units, nanos, hourly):
    (component,) = priced_components(sku("SSD backed Local Storage", "LocalSSD", units=units, nanos=nanos, unit=unit))
    divisor = Decimal(730) if unit == "GiBy.mo" else Decimal(1)
    assert component.hourly == MONEY_CONTEXT.divide(Decimal(hourly), divisor)


def test_free_first_tier_is_skipped_and_unknown_units_are_ignored():
    tiers = [{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 0}},
             {"startUsageAmount": 744, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 24988000}}]
    (component,) = priced_components(sku("G2 Instance Core running in Americas", "CPU", tiers=tiers))
    assert component.hourly == Decimal("0.024988")
    assert priced_components(sku("G2 Instance Core running in Americas", "CPU", nanos=1, unit="count")) == []


def test_one_component_per_wanted_service_region():
    regions = ("us-central1", "us-east1", "europe-west4")
    found = priced_components(sku("Nvidia L4 GPU running in Americas", "GPU", nanos=1, regions=regions),
                              regions=["us-east1", "asia-east1"])
    assert [c.region for c in found] == ["us-east1"]


def test_every_pricing_model_composes_when_every_part_has_a_price():
    parts = []
    for usage, prefix, gpu_suffix, commit in [("OnDemand", "", "running in", ""),
                                             ("Preemptible", "Spot Preemptible ", "attached to Spot Preemptible VMs running in", ""),
                                             ("Commit1Yr", "", "", "1 Year"), ("Commit3Yr", "", "", "3 Years")]:
        if commit:
            descriptions = [f"Commitment v1: Nvidia L4 GPU in Americas for {commit}",
                            f"Commitment v1: G2 Cpu in Americas for {commit}", f"Commitment v1: G2 Ram in Americas for {commit}"]
        else:
            descriptions = [f"Nvidia L4 GPU {gpu_suffix} Americas", f"{prefix}G2 Instance Core running in Americas",
                            f"{prefix}G2 Instance Ram running in Americas"]
        for description, group in zip(descriptions, ("GPU", "CPU", "RAM"), strict=True):
            parts += priced_components(sku(description, group, usage, units="1"))
    rows = machine_prices([instance("gcp", "g2-standard-8")], parts, source="test")
    # 1 GPU + 8 vCPUs + 32 GiB at 1 USD each
    assert sorted((r.pricing_model, r.hourly_cost, r.payment_option) for r in rows) == [
        ("cud_1y", Decimal(41), "no_upfront"), ("cud_3y", Decimal(41), "no_upfront"),
        ("on_demand", Decimal(41), ""), ("spot", Decimal(41), "")]
