"""What a mix costs and how each option is used: the answer finance reads.

Costs are exact :class:`~finops.money.Money` recomputed from the whole units chosen: committed
options cost units x hourly_cost x hours (+ variable_cost x unit-hours served), flexible ones
hourly_cost x unit-hours served. A month is 730 hours (8,760 / 12).

>>> from decimal import Decimal
>>> r = MixResult("USD", 8760.0, 100.0, (
...     OptionOutcome("ri", "reserved", 1, 80.0, Money.of(40, "USD")),
...     OptionOutcome("od", "on_demand", None, 20.0, Money.of(20, "USD"))), Money.of(100, "USD"))
>>> r.units, str(r.total_cost), str(r.savings), r.share["ri"], r.utilization["ri"] == 80 / 8760
({'ri': 1}, '60.00 USD', '40.00 USD', 0.8, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..cells import NOT_APPLICABLE
from ..money import Money, quantize, to_decimal

__all__ = ["HOURS_PER_MONTH", "HOURS_PER_YEAR", "MixResult", "OptionOutcome"]

HOURS_PER_YEAR = 8760
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class OptionOutcome:
    """How one option is used: units (committed kinds only), unit-hours served and cost. A committed
    option also states what it commits each hour (``commitment_per_hour``): a savings plan's spend
    ``S``, covering ``units`` each hour at its discounted rate; a resource commitment's units x rate
    (:func:`finops.commitments.commitment_per_hour`)."""

    name: str
    kind: str
    units: int | None
    unit_hours: float
    cost: Money
    upfront: Money | None = None
    commitment_per_hour: Money | None = None


@dataclass(frozen=True)
class MixResult:
    """Units per option, costs and usage over a horizon of ``hours`` (expected hours for scenarios)."""

    currency: str
    hours: float
    demand_unit_hours: float
    outcomes: tuple[OptionOutcome, ...]
    on_demand_only_cost: Money

    @property
    def units(self) -> dict[str, int]:
        """Committed option name -> whole units bought."""
        return {o.name: o.units for o in self.outcomes if o.units is not None}

    @property
    def total_cost(self) -> Money:
        return Money.total([o.cost for o in self.outcomes], self.currency)

    @property
    def upfront(self) -> Money:
        """Cash paid at signing (units x upfront; already amortized inside the hourly costs)."""
        return Money.total([o.upfront for o in self.outcomes if o.upfront is not None], self.currency)

    @property
    def savings(self) -> Money:
        """Savings against serving every unit-hour on-demand."""
        return self.on_demand_only_cost - self.total_cost

    @property
    def cost_per_month(self) -> Money:
        return self.total_cost * HOURS_PER_MONTH / to_decimal(self.hours)

    @property
    def cost_per_year(self) -> Money:
        return self.total_cost * HOURS_PER_YEAR / to_decimal(self.hours)

    @property
    def share(self) -> dict[str, float]:
        """Option name -> share of all demand unit-hours it serves."""
        total = self.demand_unit_hours
        return {o.name: o.unit_hours / total if total else 0.0 for o in self.outcomes}

    @property
    def coverage(self) -> dict[str, float]:
        """Committed option name -> share of demand it covers."""
        return {name: self.share[name] for name in self.units}

    @property
    def utilization(self) -> dict[str, float]:
        """Committed option name -> unit-hours served / unit-hours paid (0 when none bought)."""
        return {o.name: (o.unit_hours / (o.units * self.hours) if o.units else 0.0)
                for o in self.outcomes if o.units is not None}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary; money rounded to cents, shares to 6 decimals."""
        def cents(money: Money) -> Decimal:
            return quantize(money.amount)

        savings_share = (self.savings.amount / self.on_demand_only_cost.amount
                         if self.on_demand_only_cost.amount else Decimal(0))
        return {
            "currency": self.currency,
            "hours": self.hours,
            "units": self.units,
            "total_cost": cents(self.total_cost),
            "on_demand_only_cost": cents(self.on_demand_only_cost),
            "savings": cents(self.savings),
            "savings_share": round(float(savings_share), 6),
            "cost_per_month": cents(self.cost_per_month),
            "cost_per_year": cents(self.cost_per_year),
            "upfront": cents(self.upfront),
            "options": [self._option_dict(o) for o in self.outcomes],
        }

    def _option_dict(self, o: OptionOutcome) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": o.name, "kind": o.kind, "units": o.units, "unit_hours": round(o.unit_hours, 6),
            "share": round(self.share[o.name], 6),
            "utilization": None if o.units is None else round(self.utilization[o.name], 6),
            "cost": quantize(o.cost.amount)}
        if o.commitment_per_hour is not None:   # 0.001 a unit-hour: the step a spend commitment is bought in
            out["commitment_per_hour"] = quantize(o.commitment_per_hour.amount, Decimal("0.001"))
        return out

    def table(self) -> list[list[Any]]:
        """The recommendation as rows for a sheet: the header ``option, kind, units, share, cost``, one row
        per option (units ``-`` for on-demand and spot), then the total, the all-on-demand cost and the
        savings, their other cells ``-`` (money as float, for a cell; ``FINOPS_MIX`` spills it; no cell is
        blank: :mod:`finops.cells`).

        >>> r = MixResult("USD", 1.0, 1.0, (OptionOutcome("od", "on_demand", None, 1.0, Money.of(2, "USD")),),
        ...               Money.of(2, "USD"))
        >>> r.table()[1], r.table()[-1]
        (['od', 'on_demand', '-', 1.0, 2.0], ['savings', '-', '-', '-', 0.0])
        """
        rows: list[list[Any]] = [["option", "kind", "units", "share", "cost"]]
        share = self.share
        rows += [[o.name, o.kind, NOT_APPLICABLE if o.units is None else o.units, share[o.name], float(o.cost.amount)]
                 for o in self.outcomes]
        rows += [[label, NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, float(money.amount)] for label, money in (
            ("total", self.total_cost), ("all on-demand", self.on_demand_only_cost), ("savings", self.savings))]
        return rows
