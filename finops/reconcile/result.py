"""What a reconciliation produces: plain values the faces print, write to a workbook or keep.

Money is :class:`~finops.money.Money` in the plan currency, exact to the input's precision (round
only for display); ratios are :class:`~decimal.Decimal` fractions (``0.25`` = 25 %) or ``None`` when
the denominator is zero. See :func:`finops.reconcile.engine.reconcile_month` for the formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from ..money import Money
from .mapping import UNMAPPED

__all__ = ["AssetCharge", "BridgeStep", "CommitmentLine", "CommitmentSummary", "Flag", "Forecast", "GpuHours",
           "GroupVariance", "InvoiceTotal", "LineVariance", "ProviderTotal", "Reconciliation", "UnmappedCharge"]

Flag = Literal["over", "under", ""]

#: The group of plan lines whose budget names no provider or cost centre (lines not in the plan).
_NOT_IN_PLAN = "not in plan"


@dataclass(frozen=True)
class InvoiceTotal:
    """BilledCost summed per invoice: ties out to the provider's invoice."""

    provider_name: str
    invoice_id: str
    billed_cost: Money


@dataclass(frozen=True)
class ProviderTotal:
    provider_name: str
    effective_cost: Money
    billed_cost: Money


@dataclass(frozen=True)
class CommitmentSummary:
    """Reservations, savings plans and CUDs in the month.

    ``purchases`` is cash (BilledCost of commitment purchases); ``used`` and ``unused`` are the
    amortized EffectiveCost of committed usage and of the unused part; ``utilization = used / (used +
    unused)``; ``coverage = used / EffectiveCost of all usage in services that had committed usage``;
    ``savings = ListCost - EffectiveCost`` of committed usage.
    """

    purchases: Money
    used: Money
    unused: Money
    savings: Money
    utilization: Decimal | None
    coverage: Decimal | None

    @property
    def amortization(self) -> Money:
        """What the month's commitments put into the P&L: amortized cost of used plus unused commitment."""
        return self.used + self.unused


@dataclass(frozen=True)
class CommitmentLine:
    """One commitment (a ``CommitmentDiscountId``) in the month, from the FOCUS rows that carry its id.

    ``purchased`` is the BilledCost of its purchase rows in this month's bills (zero when it was bought
    earlier), ``purchase_date`` the first of their ChargePeriodStart; ``term_months`` comes from the
    purchase row's SkuPriceDetails (``x_PurchaseTerm``, ``x_Plan``), ``None`` when the bill does not say;
    ``end_date = purchase_date + term``. ``amortized`` is the EffectiveCost of its covered usage and its
    unused part this month (FOCUS amortization); ``scheduled_monthly = purchased / term_months``
    (straight line) and ``balance_left = purchased - amortized``: prepaid cost not yet in the P&L
    (``None`` for a commitment bought before these bills).
    """

    commitment_id: str
    provider_name: str
    kind: str
    payment: str
    purchase_date: date | None
    term_months: int | None
    end_date: date | None
    purchased: Money
    amortized: Money
    unused: Money
    scheduled_monthly: Money | None
    balance_left: Money | None


@dataclass(frozen=True)
class BridgeStep:
    """One step of the bridge from cash to the P&L; the steps add up from cash to the P&L actual."""

    label: str
    amount: Money
    explanation: str


@dataclass(frozen=True)
class GroupVariance:
    """Planned vs P&L actual of the plan lines sharing a provider or a cost centre."""

    name: str
    planned: Money
    actual: Money

    @property
    def variance(self) -> Money:
        return self.actual - self.planned

    @property
    def variance_pct(self) -> Decimal | None:
        return None if self.planned.amount == 0 else self.variance.amount / self.planned.amount


@dataclass(frozen=True)
class GpuHours:
    """GPU-hours of one GPU model; ``source`` says whether the bill gave them or the instance catalog."""

    gpu_model: str
    hours: Decimal
    source: Literal["bill", "catalog"]


@dataclass(frozen=True)
class AssetCharge:
    """Depreciation (CAPEX, P&L) and purchase cash of one owned asset in the month."""

    asset_id: str
    plan_line: str
    depreciation: Money
    purchase_cash: Money


@dataclass(frozen=True)
class LineVariance:
    """A plan line: planned vs actual (P&L view), variance and unit cost per million tokens.

    ``actual_cash`` is the cash view of the same line: BilledCost mapped to it plus its assets bought
    this month. ``provider`` and ``cost_centre`` come from the line's budget rows (its assets' cost
    centre for an unplanned CAPEX line; blank when the plan does not say).
    """

    plan_line: str
    category: str
    planned: Money
    actual: Money
    actual_cash: Money
    variance: Money
    variance_pct: Decimal | None
    flag: Flag
    planned_mtokens: Decimal | None = None
    actual_mtokens: Decimal | None = None
    planned_unit_cost: Money | None = None
    actual_unit_cost: Money | None = None
    provider: str = ""
    cost_centre: str = ""


@dataclass(frozen=True)
class UnmappedCharge:
    """Charges no mapping rule matched, grouped by what a rule could match on."""

    provider_name: str
    sub_account: str
    service_name: str
    instance_type: str
    region_id: str
    tags: str
    effective_cost: Money
    billed_cost: Money


@dataclass(frozen=True)
class Forecast:
    """Run-rate forecast of the P&L actual to year end, on the plan's months (see
    :mod:`finops.reconcile.forecast` for the formulas).

    ``year_end`` (actuals of the planned months so far + run rate x ``months_to_forecast``) and
    ``year_plan`` cover the same ``planned_months``; ``unplanned_actual`` and ``unplanned_forecast``
    are the months without a plan, shown apart.
    """

    months_known: int
    run_rate: Money
    planned_months: tuple[str, ...]
    actual_to_date: Money
    months_to_forecast: int
    year_end: Money
    year_plan: Money
    unplanned_actual: Money
    unplanned_forecast: Money


@dataclass(frozen=True)
class Reconciliation:
    """A month of plan vs actual. ``opex`` is cloud EffectiveCost (amortized), ``capex`` depreciation.

    ``data_through`` is the latest ChargePeriodEnd in the bills (how complete the month is);
    ``one_off_cost`` the EffectiveCost of purchases (left out of the run rate), ``purchases_billed``
    their BilledCost (commitments included); ``commitment_lines``
    one row per commitment seen in the bills (empty when the engine gives none).
    """

    month: str
    currency: str
    effective_cost: Money
    billed_cost: Money
    planned: Money
    opex: Money
    capex: Money
    capex_cash: Money
    unmapped_effective_cost: Money
    lines: tuple[LineVariance, ...]
    invoices: tuple[InvoiceTotal, ...]
    providers: tuple[ProviderTotal, ...]
    commitments: CommitmentSummary
    spot_share: Decimal | None
    gpu_hours: tuple[GpuHours, ...]
    assets: tuple[AssetCharge, ...]
    unmapped: tuple[UnmappedCharge, ...]
    forecast: Forecast
    threshold_pct: Decimal
    bill_rows: int
    data_through: datetime | None
    one_off_cost: Money | None = None
    purchases_billed: Money | None = None
    commitment_lines: tuple[CommitmentLine, ...] = ()

    @property
    def actual(self) -> Money:
        """P&L actual: OPEX (amortized cloud cost) plus CAPEX (depreciation)."""
        return self.opex + self.capex

    @property
    def variance(self) -> Money:
        return self.actual - self.planned

    @property
    def cash(self) -> Money:
        """Cash view: what was paid this month (BilledCost, upfront purchases included) plus assets bought."""
        return self.billed_cost + self.capex_cash

    def bridge(self) -> tuple[BridgeStep, ...]:
        """Cash -> P&L: cash - commitment purchases - other purchases' billed cost beyond their
        EffectiveCost + commitment amortization - assets bought + depreciation + other differences = P&L
        actual. "Other" is whatever else BilledCost and EffectiveCost differ by (credits, discounts billed
        apart); it is zero when the bills carry nothing else.
        """
        c = self.commitments
        zero = Money.zero(self.currency)
        other_purchases = (self.purchases_billed or zero) - c.purchases - (self.one_off_cost or zero)
        steps = [("Cash paid this month", self.cash, "cloud BilledCost plus owned assets bought"),
                 ("less commitment purchases", -c.purchases, "prepaid: enters the P&L over the term"),
                 ("less other purchases with no P&L cost", -other_purchases,
                  "fees billed whose EffectiveCost the bill gives as 0"),
                 ("plus commitment amortization", c.amortization, "this month's share of prepaid commitments"),
                 ("less assets bought", -self.capex_cash, "capitalized: enters the P&L as depreciation"),
                 ("plus depreciation", self.capex, "this month's straight-line depreciation of owned assets")]
        other = self.actual - Money.total([amount for _, amount, _ in steps], self.currency)
        steps.append(("other differences", other, "credits and discounts billed apart from the usage"))
        return tuple(BridgeStep(*step) for step in steps)

    @property
    def prepaid_added(self) -> Money:
        """Commitment purchases not yet in the P&L: purchases - amortization this month."""
        return self.commitments.purchases - self.commitments.amortization

    def by_provider(self) -> tuple[GroupVariance, ...]:
        """Plan lines grouped by the provider their budget names (lines without one: "not in plan")."""
        return self._grouped(lambda line: line.provider)

    def by_cost_centre(self) -> tuple[GroupVariance, ...]:
        """Plan lines grouped by their cost centre (lines without one: "not in plan")."""
        return self._grouped(lambda line: line.cost_centre)

    def _grouped(self, key: Callable[[LineVariance], str]) -> tuple[GroupVariance, ...]:
        groups: dict[str, list[Money]] = {}
        for line in self.lines:
            name = key(line) or (UNMAPPED if line.plan_line == UNMAPPED else _NOT_IN_PLAN)
            planned, actual = groups.setdefault(name, [Money.zero(self.currency), Money.zero(self.currency)])
            groups[name] = [planned + line.planned, actual + line.actual]
        order = sorted(groups, key=lambda n: (n == UNMAPPED, n == _NOT_IN_PLAN, n))  # named, not in plan, unmapped
        return tuple(GroupVariance(name, *groups[name]) for name in order)

    def lines_over(self, pct: Decimal) -> list[LineVariance]:
        """Plan lines whose actual exceeds plan by more than ``pct`` percent (unplanned spend counts)."""
        return [line for line in self.lines
                if line.actual.amount > line.planned.amount
                and (line.variance_pct is None or line.variance_pct * 100 > pct)]

    def totals(self) -> dict[str, object]:
        """The headline figures (the CLI's ``--json``), money rounded half-up to the cent."""
        return {
            "month": self.month,
            "actual_effective_cost": self.effective_cost.rounded().amount,
            "actual_billed_cost": self.billed_cost.rounded().amount,
            "planned": self.planned.rounded().amount,
            "variance": self.variance.rounded().amount,
            "capex": self.capex.rounded().amount,
            "opex": self.opex.rounded().amount,
            "unmapped_effective_cost": self.unmapped_effective_cost.rounded().amount,
            "currency": self.currency,
        }
