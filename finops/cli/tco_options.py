"""The options of ``finops tco``, in groups by what they price (:func:`~finops.cli._options.option_groups`).

Each group is one help panel and turns its options into the core's values: :class:`FleetOptions` the horizon,
:class:`OwnedOptions` the owned node (the reference case with the overrides), :class:`CloudOptions` the price
rows and the spot policy, :class:`TokenOptions` how tokens are priced (the sizing engine's estimate for a model), and
:class:`WhatIfOptions` the cost levers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..depreciation import month_index
from ..errors import InputError
from ..money import Money
from ..price_book import PriceBook
from ._options import in_range, month_option

if TYPE_CHECKING:
    from ..price_book import PriceRow
    from ..sizing import Estimate
    from ..tco import OwnedNode, ReferenceCase, SpotPolicy

__all__ = ["CloudOptions", "FleetOptions", "OwnedOptions", "TokenOptions", "WhatIfOptions"]

# The help panels, in the order --help shows them.
_FLEET, _OWNED, _CLOUD = "Fleet and output", "Owned hardware (default: the reference case)", "Cloud prices"
_TOKENS, _WHAT_IF = "Cost per token", "What if (cost levers)"


def _option(*names: str, panel: str, help: str | None = None) -> typer.models.OptionInfo:
    return typer.Option(*names, help=help, rich_help_panel=panel)


@dataclass(frozen=True, kw_only=True)
class FleetOptions:
    """The steady fleet, its horizon, and what is printed."""

    gpus: Annotated[int, _option(panel=_FLEET, help="GPUs running all the time")] = 8
    months: Annotated[int, _option(panel=_FLEET, help="horizon in months (730 hours each)")] = 36
    start: Annotated[str, _option(panel=_FLEET, help="first month, YYYY-MM")] = "2026-01"
    schedule: Annotated[bool, _option("--schedule", panel=_FLEET, help="print the owned fleet month by month")] = False
    as_json: Annotated[bool, _option("--json", panel=_FLEET, help="print JSON instead of tables")] = False

    def first_month(self) -> str:
        """``--start`` as ``YYYY-MM``, once the fleet and the horizon are checked."""
        start = month_option(self.start, "--start")
        in_range(self.gpus, "--gpus", 1, 10_000_000)
        in_range(self.months, "--months", 1, 1200, hint="a horizon of up to 100 years, e.g. --months 36")
        if month_index(start) + self.months - 1 > month_index("9999-12"):
            raise InputError(f"--start {start} with --months {self.months} ends after 9999-12",
                             hint="start earlier or shorten the horizon")
        return start


@dataclass(frozen=True, kw_only=True)
class OwnedOptions:
    """The owned node: a reference case, with any of its figures overridden."""

    reference: Annotated[str, _option(panel=_OWNED, help="owned reference case to start from "
                                      "(finops/catalog/data/owned_reference.csv)")] = "h100-sxm-8gpu"
    currency: Annotated[str | None, _option(panel=_OWNED, help="currency of the owned prices (default: the "
                                            "reference case's); cloud prices must be in the same one")] = None
    node_price: Annotated[str | None, _option("--node-price", panel=_OWNED, help="all-in price of one node")] = None
    gpu_price: Annotated[str | None, _option("--gpu-price", panel=_OWNED,
                                             help="all-in price per GPU (node price = this x GPUs per node)")] = None
    gpus_per_node: Annotated[int | None, _option("--gpus-per-node", panel=_OWNED)] = None
    node_power_kw: Annotated[float | None, _option("--node-power-kw", panel=_OWNED, help="maximum node power, kW")] = None
    avg_power_share: Annotated[float | None, _option("--avg-power-share", panel=_OWNED,
                                                     help="average draw as a share of the maximum")] = None
    pue: Annotated[float | None, _option(panel=_OWNED, help="facility power / IT power")] = None
    electricity: Annotated[str | None, _option(panel=_OWNED, help="price per kWh")] = None
    colocation: Annotated[str | None, _option(panel=_OWNED, help="colocation price per kW-month")] = None
    support: Annotated[str | None, _option(panel=_OWNED, help="support and operations per node-month")] = None
    support_share: Annotated[float | None, _option("--support-share", panel=_OWNED,
                                                   help="support as a share of the node price per year")] = None
    life_months: Annotated[int | None, _option("--life-months", panel=_OWNED)] = None
    residual_share: Annotated[float | None, _option("--residual-share", panel=_OWNED,
                                                    help="resale value as a share of the price")] = None
    cost_of_capital: Annotated[float | None, _option("--cost-of-capital", panel=_OWNED,
                                                     help="annual rate, e.g. 0.10; 0 = straight-line")] = None
    discount_rate: Annotated[float | None, _option("--discount-rate", panel=_OWNED, help="annual rate for the owned "
                                                   "fleet's NPV of cash (default: --cost-of-capital)")] = None
    no_owned: Annotated[bool, _option("--no-owned", panel=_OWNED, help="compare cloud options only")] = False

    def currency_code(self) -> str | None:
        return self.currency.strip().upper() if self.currency else None

    def node(self, base: OwnedNode) -> OwnedNode:
        """The reference node with these overrides; another currency needs every money figure."""
        code = self.currency_code() or base.currency
        if self.node_price is not None and self.gpu_price is not None:
            raise InputError("give --node-price or --gpu-price, not both")
        if code != base.currency:
            missing = [name for name, value in (("--node-price or --gpu-price", self.node_price or self.gpu_price),
                                                ("--electricity", self.electricity), ("--colocation", self.colocation))
                       if value is None]
            if missing:
                raise InputError(f"--currency {code} needs {', '.join(missing)} in {code}",
                                 hint=f"the reference case is in {base.currency}; give every owned price in {code}")

        def cash(text: str | None, option: str) -> Money | None:
            if text is None:
                return None
            try:
                return Money.of(text, code)
            except InputError as exc:
                raise InputError(f"{option}: {exc.message}", hint=f"an amount in {code}, e.g. 0.12") from None

        per_node = self.gpus_per_node or base.gpus_per_node
        gpu_price = cash(self.gpu_price, "--gpu-price")
        price = cash(self.node_price, "--node-price") or (gpu_price * per_node if gpu_price else None)
        fixed_support = cash(self.support, "--support")
        if fixed_support is None and code != base.currency:
            fixed_support = Money.zero(code)
        overrides = {"node_price": price, "gpus_per_node": self.gpus_per_node,
                     "node_power_kw": self.node_power_kw, "avg_power_share": self.avg_power_share, "pue": self.pue,
                     "electricity_per_kwh": cash(self.electricity, "--electricity"),
                     "colocation_per_kw_month": cash(self.colocation, "--colocation"),
                     "support_per_node_month": fixed_support, "support_share_per_year": self.support_share,
                     "life_months": self.life_months, "residual_share": self.residual_share,
                     "cost_of_capital": self.cost_of_capital}
        return dataclasses.replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True, kw_only=True)
class CloudOptions:
    """Which cloud prices to compare, and how spot is used."""

    no_cloud: Annotated[bool, _option("--no-cloud", panel=_CLOUD, help="cost the owned fleet only")] = False
    provider: Annotated[str | None, _option(panel=_CLOUD, help="aws or gcp (default: every provider)")] = None
    region: Annotated[str | None, _option(panel=_CLOUD, help="default: the cheapest on-demand region")] = None
    instance_type: Annotated[str | None, _option("--instance-type", panel=_CLOUD,
                                                 help="default: the 8-GPU type of the reference GPU")] = None
    price_book: Annotated[Path | None, _option("--price-book", panel=_CLOUD, help="a pulled price book (default: "
                                               "FINOPS_PRICE_BOOK or the bundled snapshot)")] = None
    spot_lost_work: Annotated[float, _option("--spot-lost-work", panel=_CLOUD,
                                             help="share of spot work lost to interruptions and redone")] = 0.05
    spot_fallback: Annotated[float, _option("--spot-fallback", panel=_CLOUD,
                                            help="share of spot hours that fall back to on-demand")] = 0.10
    spot_max_share: Annotated[float, _option("--spot-max-share", panel=_CLOUD,
                                             help="cap on the fleet's spot share")] = 0.30

    def rows(self, case: ReferenceCase, gpus_per_node: int) -> list[PriceRow]:
        """The price rows to compare (none with ``--no-cloud``); a filter that matches nothing is an error."""
        from ..tco import cloud_rows

        if self.no_cloud:
            return []
        book = PriceBook.read(self.price_book) if self.price_book else PriceBook.current()
        rows = cloud_rows(book, gpu_model=case.gpu_model, provider=self.provider, region=self.region,
                          instance_type=self.instance_type, gpus_per_instance=gpus_per_node,
                          cited=case.cloud_price_row())
        if not rows and (self.provider or self.region or self.instance_type):
            raise InputError(f"no prices for {self.provider or 'any provider'} {self.instance_type or case.gpu_model} "
                             f"in {self.region or 'any region'}",
                             hint="see `finops prices show`, or pull prices with `finops prices pull`")
        return rows

    def spot(self) -> SpotPolicy:
        from ..tco import SpotPolicy

        return SpotPolicy(self.spot_lost_work, self.spot_fallback, self.spot_max_share)


@dataclass(frozen=True, kw_only=True)
class TokenOptions:
    """How tokens are priced: a served rate per GPU, or the sizing engine for a model."""

    tokens_per_s: Annotated[float | None, _option("--tokens-per-s", panel=_TOKENS,
                                                  help="tokens per second served per GPU at the peak")] = None
    peak_to_average: Annotated[float | None, _option(
        "--peak-to-average", panel=_TOKENS, help="peak over average load: also price tokens at the average load, "
                                                 "the fleet still sized for the peak")] = None
    model: Annotated[str | None, _option(panel=_TOKENS, help="price tokens from the sizing engine for this model")] = None
    precision: Annotated[str, _option(panel=_TOKENS, help="weight precision for --model")] = "fp8"
    tp: Annotated[int, _option(panel=_TOKENS, help="GPUs per replica (tensor parallel) for --model")] = 1
    isl: Annotated[int, _option(panel=_TOKENS, help="input tokens per request for --model")] = 2000
    osl: Annotated[int, _option(panel=_TOKENS, help="output tokens per request for --model")] = 500
    engine: Annotated[str, _option(panel=_TOKENS, help="serving engine for --model: vllm, sglang, trtllm")] = "vllm"
    concurrency: Annotated[int | None, _option(panel=_TOKENS, help="running requests per replica (default: "
                                               "the most the KV cache holds)")] = None
    cache_hit_rate: Annotated[float, _option("--cache-hit-rate", panel=_TOKENS,
                                             help="prefix-cache hit rate for --model")] = 0.0

    @property
    def concurrency_or_max(self) -> int | Literal["max"]:
        """``--concurrency``, else ``"max"``: the most running requests the KV cache holds."""
        return "max" if self.concurrency is None else self.concurrency

    def estimate(self, gpu: str) -> Estimate | None:
        """The sizing engine's estimate of ``--model`` on ``gpu``; ``None`` without ``--model``."""
        from ..sizing import estimate

        if self.model is None:
            return None
        return estimate(self.model, gpu, precision=self.precision, tp=self.tp, isl=self.isl, osl=self.osl,
                        engine=self.engine, concurrency=self.concurrency_or_max, cache_hit_rate=self.cache_hit_rate)


@dataclass(frozen=True, kw_only=True)
class WhatIfOptions:
    """The cost levers to price on the cheapest option."""

    utilization: Annotated[str | None, _option("--what-if-utilization", panel=_WHAT_IF,
                                               help="BEFORE:AFTER utilization, e.g. 0.4:0.8 (seed 000)")] = None
    quantize: Annotated[str | None, _option("--what-if-quantize", panel=_WHAT_IF,
                                            help="PRECISION[:TP], priced with --model against --precision")] = None
    cache: Annotated[float | None, _option("--what-if-cache", panel=_WHAT_IF,
                                           help="prefix-cache hit rate to reach, priced with --model")] = None
    shift: Annotated[str | None, _option("--what-if-shift", panel=_WHAT_IF,
                                         help="PEAK:OFFPEAK:SHIFTABLE GPUs of batch work moved off-peak")] = None
