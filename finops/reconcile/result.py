"""What a reconciliation produces: plain values the faces print, write to a workbook or keep.

Money is :class:`~finops.money.Money` in the plan currency, exact to the input's precision (round
only for display); ratios are :class:`~decimal.Decimal` fractions (``0.25`` = 25 %) or ``None`` when
the denominator is zero. See :func:`finops.reconcile.engine.reconcile_month` for the formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from ..money import Money

__all__ = ["AssetCharge", "CommitmentSummary", "Flag", "Forecast", "GpuHours", "InvoiceTotal", "LineVariance",
           "ProviderTotal", "Reconciliation", "UnmappedCharge"]

Flag = Literal["over", "under", ""]


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
    this month.
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
    """Run-rate forecast of the P&L actual to year end.

    ``run_rate`` is the mean actual of the last (up to) three reconciled months of the year;
    ``year_end = known actuals of the year + run_rate x months not yet reconciled``.
    """

    months_known: int
    actual_to_date: Money
    run_rate: Money
    year_end: Money
    year_plan: Money


@dataclass(frozen=True)
class Reconciliation:
    """A month of plan vs actual. ``opex`` is cloud EffectiveCost (amortized), ``capex`` depreciation.

    ``data_through`` is the latest ChargePeriodEnd in the bills (how complete the month is).
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
