"""The cited reference cases for owned hardware (``finops/catalog/data/owned_reference.csv``).

The file has one row per assumption (``profile, parameter, value, unit, source, as_of``) so every
figure carries its own source and date. The bundled profile ``h100-sxm-8gpu`` is an all-in 8x H100
node at about 400,000 USD, 10.2 kW, a 5-year life and PUE 1.3, which costs about 1.6 USD per
GPU-hour straight-line and 1.9 USD with a 10 % cost of capital, against 6.88 USD on AWS p5 on-demand.

>>> case = reference_case("H100")
>>> case.node.cost_per_gpu_hour(cost_of_capital=False).rounded(), str(case.cloud_on_demand_per_gpu_hour)
(Money(amount=Decimal('1.60'), currency='USD'), '6.88 USD')
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from ..catalog._table import read_rows
from ..errors import InputError, Location
from ..money import Money, to_decimal
from ..price_book import PriceRow
from ..registry import Registry
from .owned import OwnedNode

__all__ = ["ReferenceCase", "reference_case", "reference_cases"]

_FILE = "owned_reference.csv"
_BUNDLED = "h100-sxm-8gpu"  # the default case; registry names ignore case
_MONEY = ("node_price", "electricity_per_kwh", "colocation_per_kw_month", "support_per_node_month",
          "cloud_on_demand_per_gpu_hour", "published_per_gpu_hour", "published_per_gpu_hour_with_capital")
_FLOAT = ("node_power_kw", "avg_power_share", "pue", "residual_share", "cost_of_capital")
_INT = ("gpus_per_node", "life_months")
_TEXT = ("gpu_model", "cloud_provider", "cloud_region", "cloud_instance")


@dataclass(frozen=True)
class ReferenceCase:
    """An owned node with the cloud price it is compared with and the published figures it should match."""

    name: str
    gpu_model: str
    node: OwnedNode
    cloud_provider: str
    cloud_region: str
    cloud_instance: str
    cloud_on_demand_per_gpu_hour: Money
    published_per_gpu_hour: Money
    published_per_gpu_hour_with_capital: Money
    sources: dict[str, str]
    as_of: dict[str, str]

    def cloud_price_row(self) -> PriceRow:
        """The cited on-demand price as a price-book row (for when the price book lacks the instance)."""
        gpus = self.node.gpus_per_node
        return PriceRow(self.cloud_provider, self.cloud_region, self.cloud_instance, self.gpu_model, gpus,
                        "on_demand", "", self.cloud_on_demand_per_gpu_hour.amount * gpus, Decimal(0),
                        self.cloud_on_demand_per_gpu_hour.currency,
                        self.as_of["cloud_on_demand_per_gpu_hour"], self.sources["cloud_on_demand_per_gpu_hour"])


def _parse(profile: str, rows: dict[str, tuple[int, dict[str, str]]]) -> ReferenceCase:
    missing = [p for p in _MONEY + _FLOAT + _INT + _TEXT if p not in rows]
    if missing:
        raise InputError(f"reference profile {profile!r} lacks {', '.join(missing)}", where=Location(file=_FILE))
    values: dict[str, object] = {}
    for parameter, (line, row) in rows.items():
        where = Location(file=_FILE, row=line, column="value")
        text = row["value"].strip()
        try:
            if parameter in _MONEY:
                unit = row["unit"].split("/")[0]
                values[parameter] = Money.of(to_decimal(text, where=where), unit)
            elif parameter in _FLOAT:
                values[parameter] = float(text)
            elif parameter in _INT:
                values[parameter] = int(text)
            elif parameter in _TEXT:
                values[parameter] = text
            else:
                raise InputError(f"unknown parameter {parameter!r}", where=Location(file=_FILE, row=line))
        except ValueError:
            raise InputError(f"bad value {text!r} for {parameter}", where=where) from None
    node = OwnedNode(**{k: values[k] for k in (
        "node_price", "gpus_per_node", "node_power_kw", "electricity_per_kwh", "colocation_per_kw_month",
        "avg_power_share", "pue", "support_per_node_month", "life_months", "residual_share", "cost_of_capital")})
    return ReferenceCase(
        name=profile, gpu_model=str(values["gpu_model"]), node=node, cloud_provider=str(values["cloud_provider"]),
        cloud_region=str(values["cloud_region"]), cloud_instance=str(values["cloud_instance"]),
        cloud_on_demand_per_gpu_hour=values["cloud_on_demand_per_gpu_hour"],  # type: ignore[arg-type]
        published_per_gpu_hour=values["published_per_gpu_hour"],  # type: ignore[arg-type]
        published_per_gpu_hour_with_capital=values["published_per_gpu_hour_with_capital"],  # type: ignore[arg-type]
        sources={p: row["source"] for p, (_, row) in rows.items()},
        as_of={p: row["as_of"] for p, (_, row) in rows.items()})


@cache
def reference_cases() -> Registry[ReferenceCase]:
    """Every bundled reference case, by profile name; ``h100`` is an alias of ``h100-sxm-8gpu``."""
    grouped: dict[str, dict[str, tuple[int, dict[str, str]]]] = {}
    for line, row in read_rows(_FILE):
        grouped.setdefault(row["profile"], {})[row["parameter"]] = (line, row)
    cases = {name: _parse(name, rows) for name, rows in grouped.items()}
    aliases = {"h100": _BUNDLED} if _BUNDLED in cases else {}
    return Registry("reference case", cases, aliases=aliases)


def reference_case(name: str = _BUNDLED) -> ReferenceCase:
    """One reference case by name (did-you-mean on a typo)."""
    return reference_cases()[name]
