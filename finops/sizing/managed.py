"""The managed APIs beside the fleet: what Bedrock or Vertex AI would charge for a workload's tokens, and the volume
at which a fleet of one's own becomes cheaper.

For each API that serves the workload's model (:meth:`finops.token_prices.TokenPriceBook.serving`):

* cost per million output tokens = ``input price x ISL / OSL + output price`` (each output token brings ISL / OSL
  input tokens), comparable with the fleet's cost per million output tokens;
* cost per request = ``(input price x ISL + output price x OSL) / 10^6``;
* monthly cost at the workload's average volume: ``V = peak output tokens/s / peak_to_average x 3,600 x 730``
  (seed 003's token volume, the same month :func:`finops.sizing.ranking.per_million_at_average` prices the fleet
  on) times the cost per million output tokens;
* break-even: a fleet costs its monthly cost ``M`` whatever it serves (sized for the peak and paid every hour), the
  API ``p x V``; the fleet is cheaper above ``V* = M / p`` million output tokens a month (up to what that fleet
  serves at its peak, ``peak tokens/s x 3,600 x 730``: beyond it a larger fleet is needed).

>>> from finops.sizing.workload import presets
>>> rows = api_options(presets()["seed002-translation"], fleet_monthly=Money.of(20_000, "USD"),
...                    peak_output_tokens_per_s=10_000.0)
>>> [(o.offer_model, str(o.cost_per_million_output_tokens), round(o.fleet_cheaper_above_mtokens)) for o in rows]
[('qwen.qwen3-coder-30b-a3b-v1:0', '0.75 USD', 26667)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..mix.provisioned_throughput import ProvisionedThroughput
from ..money import Money
from ..registry import normalize_key
from ..token_prices import TokenPrice, TokenPriceBook
from .ranking import HOURS_PER_MONTH
from .workload import Workload

__all__ = ["ApiOption", "api_options", "api_options_beside"]

#: Seconds in an hour: tokens/s x 3,600 x hours in a month (730) = tokens a month.
_SECONDS_PER_HOUR = 3600


@dataclass(frozen=True)
class ApiOption:
    """A managed API serving the workload's model: per token on demand (``pricing_model`` ``on_demand``), or its
    provisioned throughput, a commitment of whole model units (``provisioned``: no per-token prices; its cost per
    million output tokens is at the workload's average volume, and the fleet wins when its own month costs less)."""

    provider: str
    service: str
    offer_model: str
    match: str
    region: str
    pricing_model: str
    input_per_mtok: Money | None
    output_per_mtok: Money | None
    cost_per_million_output_tokens: Money
    cost_per_request: Money
    monthly_output_mtokens: float | None      # the workload's average month, million output tokens
    monthly_cost: Money | None                # the API's bill for that month
    fleet_cheaper_above_mtokens: float | None  # million output tokens a month above which the fleet costs less
    fleet_capacity_mtokens: float | None       # what the fleet serves in a month at its peak rate
    effective_date: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key, value in list(out.items()):
            if isinstance(value, Money):
                out[key] = value.amount
        out["currency"] = self.cost_per_request.currency
        return out


def api_options(workload: Workload, *, fleet_monthly: Money | None = None,
                peak_output_tokens_per_s: float | None = None, book: TokenPriceBook | None = None,
                provisioned: Sequence[ProvisionedThroughput] = ()) -> list[ApiOption]:
    """The managed APIs that serve ``workload.model``, cheapest per output token first, each with its break-even
    against a fleet costing ``fleet_monthly`` that serves ``peak_output_tokens_per_s`` at the peak (the cheapest
    sized option; without them, no monthly figures); with the ``provisioned`` throughput offers of that model
    (:class:`~finops.mix.provisioned_throughput.ProvisionedThroughput`) priced for the workload's peak.

    Provisioned throughput: units = ceil(peak output tokens/s / tokens/s per unit); month = units x price per
    unit-hour x 730; cost per million output tokens = month / the workload's monthly volume (without a peak: one
    unit fully used, price per unit-hour / (tokens/s per unit x 3,600 / 10^6)); per request = that x OSL / 10^6."""
    book = TokenPriceBook.current() if book is None else book
    volume = capacity = None
    if peak_output_tokens_per_s is not None:
        capacity = peak_output_tokens_per_s * _SECONDS_PER_HOUR * HOURS_PER_MONTH / 1e6
        volume = capacity / workload.peak_to_average
    rows = [_option(p, workload, volume, capacity, fleet_monthly) for p in book.serving(workload.model)]
    key = normalize_key(workload.model)
    rows += [_provisioned(pt, workload, peak_output_tokens_per_s, volume, capacity) for pt in provisioned
             if normalize_key(pt.model) == key]
    return sorted(rows, key=lambda o: (o.cost_per_million_output_tokens.amount, o.provider, o.offer_model))


def api_options_beside(fleets: Sequence[Any], workload: Workload, *, book: TokenPriceBook | None = None,
                       provisioned: Sequence[ProvisionedThroughput] = ()) -> list[ApiOption]:
    """:func:`api_options` beside the cheapest per month of the sized ``fleets`` (options with ``monthly_cost`` and
    ``output_tokens_per_s``, as :func:`finops.sizing.search.search` returns them): the volume and break-even of that
    fleet, as ``finops size`` prints them, with ``book`` (e.g. the bundled prices and a user's quoted ones) and
    ``provisioned`` throughput offers."""
    cheapest = min(fleets, key=lambda o: o.monthly_cost.amount, default=None)
    return api_options(workload, fleet_monthly=None if cheapest is None else cheapest.monthly_cost,
                       peak_output_tokens_per_s=None if cheapest is None else cheapest.output_tokens_per_s,
                       book=book, provisioned=provisioned)


def _provisioned(pt: ProvisionedThroughput, workload: Workload, peak: float | None, volume: float | None,
                 capacity: float | None) -> ApiOption:
    units = pt.units_for(peak) if peak is not None else 1
    monthly = Money(pt.hourly_per_unit * units * HOURS_PER_MONTH, pt.currency)
    if volume:
        per_million = monthly / Decimal(repr(volume))
    else:
        per_million = Money(pt.hourly_per_unit, pt.currency) / Decimal(repr(pt.tokens_per_s_per_unit
                                                                            * _SECONDS_PER_HOUR / 1e6))
    return ApiOption(
        provider=pt.service, service=pt.service, offer_model=pt.name, match=f"{units} unit(s), {pt.term_months}-month term",
        region=pt.region, pricing_model="provisioned", input_per_mtok=None, output_per_mtok=None,
        cost_per_million_output_tokens=per_million, cost_per_request=per_million * Decimal(workload.osl) / 10**6,
        monthly_output_mtokens=volume, monthly_cost=monthly if volume is not None else None,
        fleet_cheaper_above_mtokens=None, fleet_capacity_mtokens=capacity, effective_date="", source=pt.source)


def _option(price: TokenPrice, workload: Workload, volume: float | None, capacity: float | None,
            fleet_monthly: Money | None) -> ApiOption:
    per_million = price.per_million_output(workload.isl, workload.osl)
    monthly = None if volume is None else per_million * Decimal(repr(volume))
    above = None
    if fleet_monthly is not None and per_million.amount > 0 and fleet_monthly.currency == per_million.currency:
        above = float(fleet_monthly.amount / per_million.amount)
    return ApiOption(
        provider=price.provider, service=price.service, offer_model=price.offer_model, match=price.match,
        region=price.region, pricing_model=price.pricing_model,
        input_per_mtok=Money(price.input_per_mtok, price.currency),
        output_per_mtok=Money(price.output_per_mtok, price.currency),
        cost_per_million_output_tokens=per_million, cost_per_request=price.per_request(workload.isl, workload.osl),
        monthly_output_mtokens=volume, monthly_cost=monthly, fleet_cheaper_above_mtokens=above,
        fleet_capacity_mtokens=capacity, effective_date=price.effective_date, source=price.source)
