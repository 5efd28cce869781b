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

from ..commitments import CommitmentBasis, basis_of
from ..money import MONEY_CONTEXT, Money
from .mapping import UNMAPPED
from .tokens import LineTokens

__all__ = ["AssetCharge", "BridgeStep", "CommitmentLine", "CommitmentSummary", "Flag", "Forecast", "GpuHours",
           "GroupVariance", "InvoiceTotal", "LinePlan", "LineVariance", "PrepaidRollForward", "ProviderTotal",
           "Reconciliation", "UnmappedCharge", "variance_share"]

Flag = Literal["over", "under", ""]


def variance_share(variance: Decimal, planned: Decimal) -> Decimal | None:
    """Variance as a share of the plan's size, ``variance / |planned|``: positive when more was spent than
    planned whatever the sign of the budget (a credit planned at -1,000 of which only -500 came is 50 %
    over, not 50 % under); ``None`` for a plan of 0.

    >>> variance_share(Decimal(500), Decimal(-1000)), variance_share(Decimal(-250), Decimal(1000))
    (Decimal('0.5'), Decimal('-0.25'))
    """
    return None if planned == 0 else MONEY_CONTEXT.divide(variance, abs(planned))

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
class CommitmentLine:
    """One commitment (a ``CommitmentDiscountId``) in the month, from the FOCUS rows that carry its id and
    the months before kept in the history (:mod:`finops.reconcile.commitment_schedule` has the formulas).

    ``paid_this_month`` is the BilledCost of its purchase rows in this month's bills (``upfront_this_month``
    the part of it from one-time rows, kept by the history for a partial-upfront schedule), ``paid_to_date`` with
    the earlier months' (an estimate when ``source == "estimate"``: bought before the history began);
    ``purchase_date`` the first ChargePeriodStart of its purchase rows (``None`` before the history);
    ``end_date = purchase_date + term_months`` (for an estimate: the first month seen + term, the latest
    it can end). ``amortized`` / ``unused`` are this month's EffectiveCost of its covered usage and unused
    part, ``amortized_to_date`` with the earlier months'; ``balance_left = paid_to_date -
    amortized_to_date``: prepaid cost not yet in the P&L (``None`` when no term says how much was bought).
    ``source``: ``bills`` (bought in this month's bills), ``history`` (in an earlier month's),
    ``estimate``, or ``""`` (not known). ``first_month``: the first month it was seen.
    """

    commitment_id: str
    provider_name: str
    kind: str
    payment: str
    purchase_date: date | None
    term_months: int | None
    end_date: date | None
    paid_to_date: Money
    paid_this_month: Money
    amortized: Money
    unused: Money
    amortized_to_date: Money
    scheduled_monthly: Money | None
    balance_left: Money | None
    source: str
    first_month: str
    upfront_this_month: Money
    #: The cost the bills' ContractApplied applied to it from the month's charges other than purchases (FOCUS 1.3);
    #: ``None`` when no charge names it there.
    applied: Money | None = None

    @property
    def basis(self) -> CommitmentBasis | None:
        """``spend`` (a savings plan, a spend-based CUD) or ``resource`` (a reservation, a resource CUD) from
        its FOCUS ``CommitmentDiscountType`` (:func:`finops.commitments.basis_of`); ``None`` if not billed."""
        return basis_of(self.kind)


@dataclass(frozen=True)
class PrepaidRollForward:
    """Prepaid commitments over the month: ``opening + bought - amortized = closing``. ``estimated`` is the
    part of ``closing`` from commitments bought before the history (an upper bound); ``unknown`` counts the
    commitments left out because no term says how much was bought."""

    opening: Money
    bought: Money
    amortized: Money
    closing: Money
    estimated: Money
    unknown: int


@dataclass(frozen=True)
class CommitmentSummary:
    """Reservations, savings plans and CUDs in the month: totals and one row per commitment (``lines``).

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
    lines: tuple[CommitmentLine, ...] = ()
    #: The amortization with each commitment the bills' ContractApplied names counted at its applied cost
    #: (:func:`~finops.reconcile.commitment_schedule.commitment_summary`); ``None`` when no charge has ContractApplied.
    applied_amortization: Money | None = None

    @property
    def amortization(self) -> Money:
        """What the month's commitments put into the P&L: amortized cost of used plus unused commitment."""
        return self.used + self.unused

    def prepaid(self) -> PrepaidRollForward:
        """The prepaid balance of the commitments whose balance is known, from the month's start to its end."""
        known = [line for line in self.lines if line.balance_left is not None]
        currency = self.purchases.currency
        closing = Money.total([line.balance_left for line in known if line.balance_left is not None], currency)
        bought = Money.total([line.paid_this_month for line in known], currency)
        amortized = Money.total([line.amortized for line in known], currency)
        estimated = Money.total([line.balance_left for line in known
                                 if line.source == "estimate" and line.balance_left is not None], currency)
        return PrepaidRollForward(opening=closing - bought + amortized, bought=bought, amortized=amortized,
                                  closing=closing, estimated=estimated, unknown=len(self.lines) - len(known))


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
        return variance_share(self.variance.amount, self.planned.amount)


@dataclass(frozen=True)
class GpuHours:
    """GPU-hours of one GPU model (of one plan line, when ``plan_line`` is set); ``source`` says whether
    the bill gave them or the instance catalog."""

    gpu_model: str
    hours: Decimal
    source: Literal["bill", "catalog"]
    plan_line: str | None = None


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
    #: millions of tokens the line's token charges were billed for, by kind (None: no token charge)
    billed_tokens: LineTokens | None = None
    #: where ``actual_mtokens`` comes from: ``usage`` (a Usage row, which overrides), ``bill`` (token charges), or ""
    tokens_source: str = ""
    #: GPU-hours the plan's fleet runs on the line (Budget PlannedGpuHours) and the bill's usage mapped to it
    #: (GPU-hours billed, else hours of usage x GPUs per instance); None where there are none
    planned_gpu_hours: Decimal | None = None
    actual_gpu_hours: Decimal | None = None


@dataclass(frozen=True)
class LinePlan:
    """One Budget row of the month's year: a plan line's planned amount for one month (year-to-date and
    full-year figures are sums of these)."""

    plan_line: str
    month: str
    amount: Money


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
    their BilledCost (commitments included).
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
    gpu_hours_by_line: tuple[GpuHours, ...] = ()    # the same usage per plan line (the review's Serving sheet)
    year_plan: tuple[LinePlan, ...] = ()    # the Budget rows of the month's year, per line and month
    #: each bill file's FOCUS version and the column its provider was read from (the review's provenance)
    bill_versions: tuple[str, ...] = ()
    #: the materiality amount (plan currency) a line's variance must reach, beside ``threshold_pct``, to be flagged
    materiality: Decimal = Decimal(100)

    @property
    def commitment_lines(self) -> tuple[CommitmentLine, ...]:
        """One row per commitment of the month (and earlier ones with a balance left)."""
        return self.commitments.lines

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
