"""Owned GPU servers: CAPEX and OPEX month by month, cost per GPU-hour, NPV, and seed 003's TCO.

Formulas (per node, a month being 730 hours):

* power = node power (kW, the nameplate "TDP" of the whole server) x average draw share x PUE x 730 h
  x price per kWh. PUE is facility power over IT power (The Green Grid, ISO/IEC 30134-2).
* colocation = node power (kW) x price per kW-month (space, cooling and power delivery capacity; the
  energy itself is the power line).
* support and operations = a fixed amount per node-month + a share of the node price per year.
* straight-line capital = (price - residual) / life (:mod:`finops.depreciation`).
* with a cost of capital r (annual, compounded monthly, i = r / 12), the levelized capital charge is
  (price - residual) x CRF(i, life) + residual x i, where CRF(i, n) = i / (1 - (1 + i)^-n) is the
  capital recovery factor (standard engineering economics, e.g. NREL's levelized cost definitions).
* cost per GPU-hour = (capital + OPEX) per node-month / (730 x GPUs per node).

An owned fleet over a horizon has three labelled totals (:class:`OwnedTco`), and the one the comparison
ranks on:

* **cash**: purchases when bought + OPEX as paid - resale of the residual at the end of a life;
* **book**: straight-line depreciation + OPEX (what the P&L shows, IAS 16);
* **levelized**: (levelized capital charge + OPEX) x months, the capital recovery factor annuity that
  spreads the purchase and its cost of capital evenly over the life (equal to book at a zero rate);
* **net cash** (ranked): cash - the residual value of the nodes still held at the horizon's end
  (price x residual share: what the hardware is assumed to fetch, no more), so a horizon shorter than
  the life is charged the whole purchase, as a commitment is charged its whole term
  (:mod:`.compare`).

>>> from finops.money import Money
>>> node = OwnedNode(node_price=Money.of(400_000, "USD"), gpus_per_node=8, node_power_kw=10.2,
...                  electricity_per_kwh=Money.of("0.08", "USD"), colocation_per_kw_month=Money.of(150, "USD"),
...                  support_per_node_month=Money.of(500, "USD"), cost_of_capital=0.10)
>>> node.cost_per_gpu_hour(cost_of_capital=False).rounded(), node.cost_per_gpu_hour().rounded()
(Money(amount=Decimal('1.60'), currency='USD'), Money(amount=Decimal('1.91'), currency='USD'))
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal, get_args

from ..depreciation import DEFAULT_LIFE_MONTHS, month_index, month_label, monthly_depreciation
from ..errors import InputError
from ..money import MONEY_CONTEXT, Money, Number, quantize, to_decimal
from ._inputs import HOURS_PER_MONTH, money, positive, share, whole

__all__ = ["OWNED_BASES", "OwnedBasis", "OwnedMonth", "OwnedNode", "OwnedTco", "capital_recovery_factor", "npv",
           "owned_tco", "tco"]

OwnedBasis = Literal["cash", "book", "levelized", "net_cash"]
OWNED_BASES: tuple[str, ...] = get_args(OwnedBasis)


def tco(capex: Money, opex_per_month: Money, months: int) -> Money:
    """Seed 003's total cost of ownership: ``capex + opex_per_month x months``.

    >>> tco(Money.of(160_000, "CNY") * 9, Money.of(9_000, "CNY") * 9, 36)
    Money(amount=Decimal('4356000'), currency='CNY')
    """
    money(capex, "capex")
    money(opex_per_month, "opex_per_month", capex.currency)
    whole(months, "months", minimum=0)
    return capex + opex_per_month * months


def capital_recovery_factor(annual_rate: Number, months: int) -> Decimal:
    """Share of a principal to pay each month to repay it with interest over ``months`` payments.

    CRF(i, n) = i / (1 - (1 + i)^-n) with i = annual_rate / 12; 1 / n at a zero rate.

    >>> round(capital_recovery_factor(0.10, 60), 6)
    Decimal('0.021247')
    """
    rate = positive(annual_rate, "cost_of_capital", allow_zero=True)
    n = whole(months, "life_months")
    if rate == 0:
        return MONEY_CONTEXT.divide(Decimal(1), Decimal(n))
    i = rate / 12
    return MONEY_CONTEXT.divide(i, 1 - MONEY_CONTEXT.power(1 + i, -n))


def npv(cash_flows: list[Money], annual_rate: Number, currency: str) -> Money:
    """Net present value of monthly cash flows, month k (from 0) discounted by (1 + r / 12)^k.

    Flows fall at the start of each month, so a purchase in the first month is not discounted.

    >>> npv([Money.of(100, "USD"), Money.of(101, "USD")], 0.12, "USD")
    Money(amount=Decimal('200'), currency='USD')
    """
    rate = positive(annual_rate, "discount_rate", allow_zero=True)
    factor = 1 + rate / 12
    total = Money.zero(currency)
    for k, flow in enumerate(cash_flows):
        total = total + flow / MONEY_CONTEXT.power(factor, k)
    return total


@dataclass(frozen=True)
class OwnedNode:
    """One owned server model and the assumptions that cost it (all money in one currency).

    ``node_power_kw`` is the server's maximum power (for an 8x H100 HGX/DGX node about 10.2 kW) and
    ``avg_power_share`` the average draw as a share of it (the "TDP x average utilization" of the
    power formula). ``colocation_per_kw_month`` is charged on ``node_power_kw``.
    """

    node_price: Money
    gpus_per_node: int
    node_power_kw: float
    electricity_per_kwh: Money
    colocation_per_kw_month: Money
    avg_power_share: float = 0.8
    pue: float = 1.3
    support_per_node_month: Money | None = None
    support_share_per_year: float = 0.0
    life_months: int = DEFAULT_LIFE_MONTHS
    residual_share: float = 0.0
    cost_of_capital: float = 0.0

    def __post_init__(self) -> None:
        currency = money(self.node_price, "node_price").currency
        whole(self.gpus_per_node, "gpus_per_node")
        positive(self.node_power_kw, "node_power_kw", allow_zero=True)
        money(self.electricity_per_kwh, "electricity_per_kwh", currency)
        money(self.colocation_per_kw_month, "colocation_per_kw_month", currency)
        share(self.avg_power_share, "avg_power_share")
        if positive(self.pue, "pue") < 1:
            raise InputError(f"pue must be >= 1 (facility power over IT power), got {self.pue!r}",
                             hint="a modern data centre runs at about 1.1-1.5")
        if self.support_per_node_month is not None:
            money(self.support_per_node_month, "support_per_node_month", currency)
        share(self.support_share_per_year, "support_share_per_year")
        whole(self.life_months, "life_months")
        share(self.residual_share, "residual_share")
        positive(self.cost_of_capital, "cost_of_capital", allow_zero=True)

    @property
    def currency(self) -> str:
        return self.node_price.currency

    @property
    def residual(self) -> Money:
        """Residual value of one node at the end of its life."""
        return self.node_price * self.residual_share

    def power_per_month(self) -> Money:
        """kW x average draw share x PUE x 730 h x price per kWh."""
        kwh = (to_decimal(self.node_power_kw) * to_decimal(self.avg_power_share) * to_decimal(self.pue)
               * HOURS_PER_MONTH)
        return self.electricity_per_kwh * kwh

    def colocation_per_month(self) -> Money:
        return self.colocation_per_kw_month * self.node_power_kw

    def support_per_month(self) -> Money:
        fixed = self.support_per_node_month or Money.zero(self.currency)
        return fixed + self.node_price * self.support_share_per_year / 12

    def opex_per_month(self) -> Money:
        """Power + colocation + support for one node-month."""
        return self.power_per_month() + self.colocation_per_month() + self.support_per_month()

    def capital_per_month(self, *, cost_of_capital: bool = True) -> Money:
        """Straight-line depreciation, or the levelized charge at ``cost_of_capital`` when asked and set."""
        depreciable = self.node_price - self.residual
        if not cost_of_capital or self.cost_of_capital == 0:
            return depreciable / self.life_months
        i = to_decimal(self.cost_of_capital) / 12
        return depreciable * capital_recovery_factor(self.cost_of_capital, self.life_months) + self.residual * i

    def cost_per_gpu_hour(self, *, cost_of_capital: bool = True) -> Money:
        """(capital + OPEX) per node-month / (730 x GPUs per node), at full-time availability."""
        per_node_month = self.capital_per_month(cost_of_capital=cost_of_capital) + self.opex_per_month()
        return per_node_month / (HOURS_PER_MONTH * self.gpus_per_node)


@dataclass(frozen=True)
class OwnedMonth:
    """One month of an owned fleet: cash (CAPEX, OPEX, resale) and book cost (depreciation + OPEX)."""

    month: str
    capex: Money
    depreciation: Money
    power: Money
    colocation: Money
    support: Money
    residual_recovery: Money

    @property
    def opex(self) -> Money:
        return self.power + self.colocation + self.support

    @property
    def book_cost(self) -> Money:
        return self.depreciation + self.opex

    @property
    def cash(self) -> Money:
        return self.capex + self.opex - self.residual_recovery


@dataclass(frozen=True)
class OwnedTco:
    """An owned fleet over a horizon: the monthly schedule and its totals."""

    schedule: tuple[OwnedMonth, ...]
    nodes: int
    gpus: int
    capex: Money
    opex: Money
    depreciation: Money
    residual_recovery: Money
    closing_book_value: Money
    npv: Money | None
    levelized_total: Money          # (levelized capital charge + OPEX) per node-month x nodes x months
    held_residual: Money            # residual value of the nodes still held at the horizon's end

    @property
    def cash_total(self) -> Money:
        """Purchases + OPEX as paid - resale at the end of a life inside the horizon."""
        return self.capex + self.opex - self.residual_recovery

    @property
    def book_total(self) -> Money:
        """Straight-line depreciation + OPEX."""
        return self.depreciation + self.opex

    @property
    def net_cash_total(self) -> Money:
        """Cash - the residual value of the nodes still held at the end: what the horizon commits."""
        return self.cash_total - self.held_residual

    def total(self, basis: str) -> Money:
        """The horizon's total in one basis of :data:`OWNED_BASES` (``cash``, ``book``, ``levelized``,
        ``net_cash``); another name fails with the list."""
        key = basis.strip().lower().replace("-", "_").replace(" ", "_")
        if key not in OWNED_BASES:
            raise InputError(f"unknown owned cost basis {basis!r}", hint=f"use one of: {', '.join(OWNED_BASES)}")
        return getattr(self, f"{key}_total")

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON, money rounded to the cent, with the monthly schedule."""
        def cents(value: Money) -> Decimal:
            return quantize(value.amount)

        return {"nodes": self.nodes, "gpus": self.gpus, "capex": cents(self.capex), "opex": cents(self.opex),
                "depreciation": cents(self.depreciation), "residual_recovery": cents(self.residual_recovery),
                "closing_book_value": cents(self.closing_book_value), "cash_total": cents(self.cash_total),
                "book_total": cents(self.book_total), "levelized_total": cents(self.levelized_total),
                "held_residual": cents(self.held_residual), "net_cash_total": cents(self.net_cash_total),
                "npv": None if self.npv is None else cents(self.npv),
                "schedule": [{"month": m.month, "capex": cents(m.capex), "depreciation": cents(m.depreciation),
                              "power": cents(m.power), "colocation": cents(m.colocation),
                              "support": cents(m.support), "opex": cents(m.opex),
                              "residual_recovery": cents(m.residual_recovery), "book_cost": cents(m.book_cost),
                              "cash": cents(m.cash)} for m in self.schedule]}


def owned_tco(node: OwnedNode, nodes: int, months: int, start: str = "2026-01",
              discount_rate: Number | None = None) -> OwnedTco:
    """Buy ``nodes`` servers in ``start`` (``'YYYY-MM'``), run them ``months`` months, rebuy at end of life.

    Each cohort is depreciated straight-line from its purchase month (full-month convention) and sold
    for its residual value in the last month of its life when that falls inside the horizon. NPV
    discounts the cash column at ``discount_rate`` (defaults to the node's cost of capital). The last
    cohort, when its life runs past the horizon, is held at the end: ``held_residual`` is its residual.

    >>> from finops.money import Money
    >>> node = OwnedNode(Money.of(1200, "USD"), 1, 1.0, Money.of("0.10", "USD"), Money.of(0, "USD"),
    ...                  avg_power_share=1, pue=1, life_months=12, residual_share=0.25)
    >>> result = owned_tco(node, nodes=2, months=12)
    >>> str(result.capex), str(result.depreciation), str(result.opex), str(result.cash_total)
    ('2,400.00 USD', '1,800.00 USD', '1,752.00 USD', '3,552.00 USD')
    >>> str(owned_tco(node, nodes=2, months=6).net_cash_total)       # 2,400 + 876 - 600 held
    '2,676.00 USD'
    """
    whole(nodes, "nodes")
    whole(months, "months")
    first = month_index(start)
    currency = node.currency
    zero = Money.zero(currency)
    fleet_cost = node.node_price * nodes
    fleet_residual = node.residual * nodes
    power, colocation, support = (node.power_per_month() * nodes, node.colocation_per_month() * nodes,
                                  node.support_per_month() * nodes)
    cohorts = list(range(0, months, node.life_months))  # month offsets of each (re)purchase
    schedule = []
    for k in range(months):
        label = month_label(first + k)
        depreciation = Money.total([
            monthly_depreciation(fleet_cost, fleet_residual, node.life_months, _first_day(first + c), label)
            for c in cohorts], currency)
        sold = sum(1 for c in cohorts if k == c + node.life_months - 1)
        schedule.append(OwnedMonth(label, fleet_cost if k in cohorts else zero, depreciation, power, colocation,
                                   support, fleet_residual * sold))
    depreciation_total = Money.total([m.depreciation for m in schedule], currency)
    capex_total = fleet_cost * len(cohorts)
    recovered = Money.total([m.residual_recovery for m in schedule], currency)
    rate = node.cost_of_capital if discount_rate is None else discount_rate
    held = cohorts[-1] + node.life_months > months
    return OwnedTco(
        schedule=tuple(schedule), nodes=nodes, gpus=nodes * node.gpus_per_node, capex=capex_total,
        opex=Money.total([m.opex for m in schedule], currency), depreciation=depreciation_total,
        residual_recovery=recovered, closing_book_value=capex_total - depreciation_total - recovered,
        npv=npv([m.cash for m in schedule], rate, currency) if rate else None,
        levelized_total=(node.capital_per_month() + node.opex_per_month()) * (nodes * months),
        held_residual=fleet_residual if held else zero)


def _first_day(index: int) -> date:
    return date(index // 12, index % 12 + 1, 1)
