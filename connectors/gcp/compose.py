"""Machine prices composed from component prices, the way GCP bills accelerator-optimized VMs (pure).

GCP bills an A2 / A3 / G2 / G4 machine for its attached GPUs, its predefined vCPUs and memory, and its
bundled Local SSD, each a separate SKU::

    machine hourly = gpu_count x GPU-hour + vCPUs x vCPU-hour(series) + GiB x GiB-hour(series)
                     + local SSD GiB x GiB-hour(Local SSD)

under one pricing model at a time (on-demand, spot, 1- or 3-year commitment); a machine gets a price
only when every component it needs has one. TPUs are priced per chip-hour as they are sold.
Source: "Accelerator-optimized machine family", pricing section
(https://cloud.google.com/compute/docs/accelerator-optimized-machines): "Google Cloud bills
accelerator-optimized machine types for their attached GPUs, predefined vCPU, memory, and bundled
Local SSD".

>>> from decimal import Decimal as D
>>> from finops.catalog.instances import instance
>>> from connectors.gcp.skus import PricedComponent as P
>>> parts = [P("gpu", "l4", "on_demand", "us-central1", D("0.560040239"), "USD", "s1", "2026-07-01"),
...          P("cpu", "G2", "on_demand", "us-central1", D("0.024988"), "USD", "s2", "2026-07-01"),
...          P("ram", "G2", "on_demand", "us-central1", D("0.002927"), "USD", "s3", "2026-07-01")]
>>> g2 = instance("gcp", "g2-standard-4")  # 1 L4, 4 vCPUs, 16 GiB
>>> [(r.instance_type, r.pricing_model, r.hourly_cost) for r in machine_prices([g2], parts, source="example")]
[('g2-standard-4', 'on_demand', Decimal('0.706824239'))]
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from finops.catalog.instances import InstanceType
from finops.money import MONEY_CONTEXT
from finops.price_book import PaymentOption, PriceRow, PricingModel

from .skus import PricedComponent

__all__ = ["CPU_RAM_SERIES", "TPU_CHIPS", "machine_prices", "tpu_prices"]

#: Machine-type prefix -> the series whose vCPU and RAM SKUs it is billed on. A2 Ultra shares A2's.
CPU_RAM_SERIES: dict[str, str] = {"a2-highgpu-": "A2", "a2-megagpu-": "A2", "a2-ultragpu-": "A2",
                                  "a3-highgpu-": "A3", "g2-standard-": "G2", "g4-standard-": "G4"}
#: TPU components priced per chip-hour (accelerator ids of the accelerator catalog).
TPU_CHIPS: tuple[str, ...] = ("tpu-v5e", "tpu-v5p", "tpu-v6e")
#: GCP bills commitments monthly with nothing upfront.
_PAYMENT: dict[str, PaymentOption] = {"on_demand": "", "spot": "", "cud_1y": "no_upfront", "cud_3y": "no_upfront"}


def _series(instance_type: str) -> str | None:
    return next((s for prefix, s in CPU_RAM_SERIES.items() if instance_type.startswith(prefix)), None)


def _quantity(value: float) -> Decimal:
    return Decimal(str(value))


def machine_prices(machines: Iterable[InstanceType], components: Iterable[PricedComponent], *,
                   source: str) -> list[PriceRow]:
    """Price rows for every machine x region x pricing model whose components are all priced."""
    index: dict[tuple[str, str, str, str], PricedComponent] = {}
    for c in components:
        index[(c.kind, c.name, c.pricing_model, c.region)] = c
    regions_models = sorted({(c.region, c.pricing_model) for c in index.values()})
    rows: list[PriceRow] = []
    for machine in machines:
        series = _series(machine.instance_type)
        if series is None:
            continue
        needs = [("gpu", machine.gpu_model, _quantity(machine.gpu_count)), ("cpu", series, _quantity(machine.vcpu)),
                 ("ram", series, _quantity(machine.memory_gib))]
        if machine.local_ssd_gb:
            needs.append(("local_ssd", "local-ssd", _quantity(machine.local_ssd_gb)))
        for region, model in regions_models:
            parts = [(index.get((kind, name, model, region)), qty) for kind, name, qty in needs]
            if any(part is None for part, _ in parts):
                continue
            priced = [(part, qty) for part, qty in parts if part is not None]
            if len({part.currency for part, _ in priced}) != 1:
                continue
            total = sum((MONEY_CONTEXT.multiply(part.hourly, qty) for part, qty in priced), Decimal(0))
            rows.append(_row(region, machine.instance_type, machine.gpu_model, machine.gpu_count, model, total,
                             priced[0][0].currency, max(p.effective_date for p, _ in priced), source))
    return rows


def tpu_prices(components: Iterable[PricedComponent], *, source: str) -> list[PriceRow]:
    """One row per TPU chip-hour price: ``instance_type`` is the chip's accelerator id, one chip."""
    return [_row(c.region, c.name, c.name, 1, c.pricing_model, c.hourly, c.currency, c.effective_date, source)
            for c in components if c.kind == "tpu" and c.name in TPU_CHIPS]


def _row(region: str, instance_type: str, gpu_model: str, gpu_count: int, model: PricingModel, hourly: Decimal,
         currency: str, date: str, source: str) -> PriceRow:
    return PriceRow("gcp", region, instance_type, gpu_model, gpu_count, model, _PAYMENT[model],
                    hourly.quantize(Decimal("1E-9"), context=MONEY_CONTEXT), Decimal(0), currency, date, source)
