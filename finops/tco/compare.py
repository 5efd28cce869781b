"""Owned hardware against the price book's cloud options, for one steady GPU fleet over a horizon.

Each option runs ``gpus`` GPUs all the time for ``months`` months (730 hours each). Two cost bases,
each labelled where it is shown:

* ``monthly`` (and ``per_gpu_hour``): the steady rate. Owned: the levelized cost (capital recovery
  factor annuity at the cost of capital, straight-line at 0); cloud: the effective hourly cost (upfront
  amortized over the term, FOCUS EffectiveCost).
* ``total``, which ranks the options: **what the horizon commits you to**, one rule for both sides.
  Owned: ``ceil(gpus / GPUs per node)`` nodes bought (:mod:`.owned`), purchases + OPEX paid inside the
  horizon - resale at the end of each life - the residual value of the nodes still held at the end
  (:attr:`.owned.OwnedTco.net_cash_total`): hardware is never assumed to keep its book value. A
  commitment (reserved, savings plan, CUD): every month of its term, the months past the horizon
  included, as they are still owed (the note says how many). On-demand and spot: the horizon's months.
  ``capex`` is the purchases and ``opex`` the cash operating cost inside the horizon.

Cloud options are ``ceil(gpus / GPUs per instance)`` instances; spot puts at most ``max_share`` of the
fleet on spot at its effective rate (interruptions redone, fallback to on-demand,
:func:`.cloud.spot_effective_hourly`), the rest on-demand. At a horizon of the hardware's whole life
with no residual, the owned total is seed 003's ``CAPEX + OPEX x months``; the owned fleet's cash,
book and levelized totals are on :attr:`Comparison.owned`.

Variable demand belongs to the commitment mix optimizer (``finops.mix``); this is the steady case.

>>> from finops.tco.reference import reference_case
>>> case = reference_case()
>>> result = compare_options(16, 36, case.node, [case.cloud_price_row()])
>>> [(o.name, str(o.per_gpu_hour), str(o.total)) for o in result.options]
[('owned', '1.91 USD', '990,764.52 USD'), ('aws p5.48xlarge on_demand', '6.88 USD', '2,892,902.40 USD')]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from ..commitments import BASIS, KIND_OF_PRICING_MODEL, OptionKind, commitment_per_hour
from ..errors import CurrencyMismatchError, InputError
from ..money import Money, Number, quantize, to_decimal
from ..price_book import PriceRow
from ..registry import normalize_key
from ._inputs import HOURS_PER_MONTH, share, whole
from .cloud import spot_effective_hourly
from .owned import OwnedNode, OwnedTco, owned_tco
from .unit_cost import cost_per_million_tokens, cost_per_million_tokens_at_average

__all__ = ["TOTAL_BASIS", "Comparison", "OptionCost", "OptionKind", "SpotPolicy", "cloud_rows", "compare_options"]

#: What ``OptionCost.total`` counts, as the table's note and ``--json``'s ``total_basis`` say it.
TOTAL_BASIS = ("what the horizon commits you to: owned purchases + OPEX - resale - the residual value still held "
               "(never its book value); commitments every month of their term; on-demand and spot the horizon")



@dataclass(frozen=True)
class SpotPolicy:
    """How spot is used: redone work, fallback to on-demand, and the cap on the fleet's spot share."""

    lost_work_share: float = 0.05
    fallback_share: float = 0.10
    max_share: float = 0.30

    def __post_init__(self) -> None:
        share(self.lost_work_share, "spot lost_work_share", below_one=True)
        share(self.fallback_share, "spot fallback_share")
        share(self.max_share, "spot max_share")


@dataclass(frozen=True)
class OptionCost:
    """One way to run the fleet, costed over the horizon."""

    name: str
    kind: OptionKind
    instance_type: str
    units: int
    gpus: int
    per_gpu_hour: Money
    monthly: Money
    total: Money
    capex: Money
    opex: Money
    upfront: Money
    term_months: int
    note: str

    def per_million_tokens(self, tokens_per_s_per_gpu: float, peak_to_average: Number | None = None) -> Money:
        """Cost of a million tokens at ``tokens_per_s_per_gpu`` served per GPU at the peak, running 24/7; with
        ``peak_to_average``, at the average load, the fleet still sized for the peak
        (:func:`.unit_cost.cost_per_million_tokens_at_average`)."""
        if peak_to_average is None:
            return cost_per_million_tokens(self.per_gpu_hour, tokens_per_s_per_gpu)
        return cost_per_million_tokens_at_average(self.per_gpu_hour, tokens_per_s_per_gpu, peak_to_average)

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON: money rounded to the cent, the GPU-hour rate to 1/10,000."""
        return {"name": self.name, "kind": self.kind, "instance_type": self.instance_type, "units": self.units,
                "gpus": self.gpus, "per_gpu_hour": quantize(self.per_gpu_hour.amount, Decimal("0.0001")),
                "monthly": _cents(self.monthly), "total": _cents(self.total), "capex": _cents(self.capex),
                "opex": _cents(self.opex), "upfront": _cents(self.upfront), "term_months": self.term_months,
                "note": self.note}


@dataclass(frozen=True)
class Comparison:
    gpus: int
    months: int
    owned: OwnedTco | None
    options: tuple[OptionCost, ...]  # cheapest total first

    @property
    def cheapest(self) -> OptionCost:
        return self.options[0]

    def to_dict(self) -> dict[str, object]:
        payload: dict[str, object] = {"gpus": self.gpus, "months": self.months,
                                      "currency": self.options[0].total.currency, "cheapest": self.cheapest.name,
                                      "total_basis": TOTAL_BASIS,
                                      "options": [o.to_dict() for o in self.options]}
        if self.owned is not None:
            payload["owned"] = self.owned.to_dict()
        return payload


def _cents(value: Money) -> Decimal:
    return quantize(value.amount)


def cloud_rows(rows: Iterable[PriceRow], *, gpu_model: str | None = None, provider: str | None = None,
               region: str | None = None, instance_type: str | None = None, gpus_per_instance: int = 8,
               cited: PriceRow | None = None) -> list[PriceRow]:
    """The price rows of one instance type and region per provider.

    Without ``instance_type``, the type with ``gpus_per_instance`` GPUs of ``gpu_model`` (else the one
    with the most GPUs); without ``region``, the region with the lowest on-demand price per GPU-hour.
    ``cited`` (a reference case's sourced price) is added when it matches the filters and the rows
    have no price for its provider and instance type.
    """
    wanted = {"provider": provider, "region": region, "instance_type": instance_type,
              "gpu_model": None if instance_type else gpu_model}
    keys = {k: normalize_key(v) for k, v in wanted.items() if v}
    matching = [r for r in rows if all(normalize_key(getattr(r, k)) == v for k, v in keys.items())]
    chosen: list[PriceRow] = []
    for name in sorted({r.provider for r in matching}):
        mine = [r for r in matching if r.provider == name]
        best_type = min(mine, key=lambda r: (r.gpu_count != gpus_per_instance, -r.gpu_count, r.instance_type))
        mine = [r for r in mine if r.instance_type == best_type.instance_type]
        on_demand = [r for r in mine if r.pricing_model == "on_demand"] or mine
        best_region = min(on_demand, key=lambda r: (r.per_gpu_hour, r.region)).region
        chosen.extend(r for r in mine if r.region == best_region)
    if cited is not None and all(normalize_key(getattr(cited, k)) == v for k, v in keys.items()) \
            and not any(r.provider == cited.provider and r.instance_type == cited.instance_type for r in chosen):
        chosen.append(cited)
    return chosen


def _owned_option(node: OwnedNode, gpus: int, months: int, start: str, discount_rate: Number | None,
                  name: str) -> tuple[OwnedTco, OptionCost]:
    nodes = math.ceil(gpus / node.gpus_per_node)
    result = owned_tco(node, nodes, months, start, discount_rate)
    rate = node.cost_per_gpu_hour()
    monthly = rate * (result.gpus * HOURS_PER_MONTH)
    note = (f"{nodes} node{'s' if nodes > 1 else ''}, {node.life_months}-month life, "
            + (f"{node.cost_of_capital:.0%} cost of capital" if node.cost_of_capital else "straight-line"))
    if result.held_residual.amount:
        note += f"; total less the {_plain(result.held_residual)} residual value still held"
    return result, OptionCost(name, "owned", name, nodes, result.gpus, rate, monthly, result.net_cash_total,
                              result.capex, result.opex, Money.zero(node.currency), node.life_months, note)


def _plain(value: Money) -> str:
    return f"{value.amount:,.2f}"


def _cloud_option(row: PriceRow, gpus: int, months: int, rate: Money, kind: OptionKind, name: str,
                  note: str) -> OptionCost:
    instances = math.ceil(gpus / max(row.gpu_count, 1))
    gpus_run = instances * max(row.gpu_count, 1)
    # a commitment commits its hourly figure on its basis (a savings plan: S = GPUs x discounted rate per hour)
    hourly = commitment_per_hour(kind, gpus_run, rate) if kind in BASIS else rate * gpus_run
    monthly = hourly * HOURS_PER_MONTH
    term = row.term_hours // HOURS_PER_MONTH
    past = max(0, term - months)
    if past:  # only a commitment has a term, and only spot (no term) comes with a note of its own
        note = f"includes {past} months of commitment past the horizon"
    upfront = Money.of(row.upfront_cost, row.currency) * instances
    return OptionCost(name, kind, row.instance_type, instances, instances * max(row.gpu_count, 1), rate, monthly,
                      monthly * (months + past), Money.zero(row.currency), monthly * months, upfront, term, note)


def compare_options(gpus: int, months: int, owned: OwnedNode | None, prices: Iterable[PriceRow], *,
                    spot: SpotPolicy = SpotPolicy(), start: str = "2026-01", discount_rate: Number | None = None,
                    owned_name: str = "owned", currency: str | None = None) -> Comparison:
    """Cost ``gpus`` GPUs for ``months`` months under each option; cheapest total first.

    ``prices`` are the rows of the instance types to compare (see :func:`cloud_rows`); money must be in
    ``currency`` (default: the owned node's, else the first row's), never converted silently.
    """
    whole(gpus, "gpus")
    whole(months, "months")
    rows = list(prices)
    if owned is None and not rows:
        raise InputError("nothing to compare: no owned node and no cloud prices",
                         hint="check the provider, region and instance type against `finops prices show`")
    currency = currency or (owned.currency if owned else rows[0].currency)
    priced = [("the owned node", owned.currency)] if owned else []
    priced += [(f"{row.provider} {row.instance_type}", row.currency) for row in rows]
    for name, code in priced:
        if code != currency:
            raise CurrencyMismatchError(f"{name} is priced in {code}, the comparison in {currency}",
                                        hint="convert one side explicitly first")
    options: list[OptionCost] = []
    owned_result = None
    if owned is not None:
        owned_result, option = _owned_option(owned, gpus, months, start, discount_rate, owned_name)
        options.append(option)
    for row in rows:
        label = f"{row.provider} {row.instance_type} {row.pricing_model}"
        label += f" {row.payment_option}" if row.payment_option and row.term_hours else ""
        rate = Money.of(row.per_gpu_hour, row.currency)
        if row.pricing_model != "spot":
            options.append(_cloud_option(row, gpus, months, rate, KIND_OF_PRICING_MODEL[row.pricing_model], label, ""))
            continue
        on_demand = [r for r in rows if r.pricing_model == "on_demand" and r.provider == row.provider
                     and r.instance_type == row.instance_type and r.region == row.region]
        if not on_demand:
            continue
        od_rate = Money.of(on_demand[0].per_gpu_hour, row.currency)
        effective = spot_effective_hourly(rate, od_rate, lost_work_share=spot.lost_work_share,
                                          fallback_share=spot.fallback_share)
        cap = to_decimal(spot.max_share)  # a share in [0, 1], checked by SpotPolicy
        blended = od_rate * (1 - cap) + effective * cap
        options.append(_cloud_option(
            row, gpus, months, blended, "spot", f"{label} {spot.max_share:.0%} + on_demand",
            f"spot {row.per_gpu_hour:.2f}/GPU-h -> {effective.amount:.2f} effective "
            f"({spot.lost_work_share:.0%} work redone, {spot.fallback_share:.0%} fallback)"))
    options.sort(key=lambda o: (o.total.amount, o.name))
    return Comparison(gpus, months, owned_result, tuple(options))
