"""The month's story for finance: materiality, favourable or not, volume and rate, the main cause, the
commitment tie-out. Pure functions of a :class:`~finops.reconcile.result.Reconciliation`; the review
workbook writes them as formulas with these values cached.

* **Materiality**: a line is flagged when its variance is beyond *both* thresholds, a share of its plan
  (``pct``, e.g. 10 %: more than it) and an amount (``amount``, e.g. 100 in the plan currency: at least it), so neither a 1 USD miss
  on a 5 USD line nor a 0.5 % miss on a large one is flagged; a line with no plan is flagged on the amount.
* **Favourable**: for cost, under plan is favourable, over plan unfavourable.
* **Volume and rate** (price-volume analysis) on the quantity the line is bought by: GPU-hours where the plan
  prices its fleet (Budget ``PlannedGpuHours``: accelerators paid x hours) and the bill has its usage hours,
  else tokens (a line priced per token, or a fleet whose bill gives no hours). ``volume = (actual - planned
  quantity) x planned cost per unit``, ``rate = variance - volume = (actual - planned cost per unit) x actual
  quantity``; lines with neither pair of quantities have no split.
* **Year to date and full year** per line: the plan of the year's months up to this one against the
  actuals the history kept for them plus this month's; the full-year forecast is the year-to-date actual
  plus the plan of the months to come (what is left of the plan is assumed spent as planned).
* **Tie-out**: the commitments' amortization on their own schedule (purchase / term) against what the bills
  amortized (used + unused commitment): a gap beyond 1 % (and 1 unit of currency) means a partial bill or
  unused commitment missing from it.

>>> from decimal import Decimal as D
>>> material_flag(D("1.19"), D("10"), D(10), D(100)), material_flag(D("149.31"), D("1000"), D(10), D(100))
('', 'over')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, NamedTuple

from ..money import Money
from .mapping import UNMAPPED
from .result import Flag, LineVariance, Reconciliation

__all__ = [
    "DEFAULT_MATERIALITY",
    "TIE_OUT_SHARE",
    "Driver",
    "LineYear",
    "TieOut",
    "VolumeBasis",
    "driver_label",
    "favourable",
    "headline",
    "main_drivers",
    "material_flag",
    "tie_out",
    "volume_basis",
    "volume_quantities",
    "volume_rate",
    "year_to_date",
]

#: The default materiality amount, in the plan currency: variances smaller than this are never flagged
#: (the reconciliation's own default, :attr:`Reconciliation.materiality`).
DEFAULT_MATERIALITY: Decimal = Reconciliation.materiality
#: The share of the scheduled amortization by which the bills may differ before the tie-out is flagged.
TIE_OUT_SHARE = Decimal("0.01")


def material_flag(variance: Decimal, planned: Decimal, pct: Decimal, amount: Decimal) -> Flag:
    """``over`` / ``under`` when ``|variance| >= amount`` and ``|variance| > pct % x |planned|`` (any share
    when nothing was planned), else ``""``: the one rule of a line's flag, which the reconciliation stores
    (``LineVariance.flag``, what ``finops reconcile`` prints) and the review writes as a formula."""
    if variance == 0 or abs(variance) < amount:
        return ""
    if planned != 0 and abs(variance) <= pct / 100 * abs(planned):
        return ""
    return "over" if variance > 0 else "under"


def favourable(variance: Decimal) -> str:
    """Cost under plan is favourable."""
    return "favourable" if variance < 0 else "unfavourable" if variance > 0 else "on plan"


#: The quantity a line's volume is counted in.
VolumeBasis = Literal["GPU-hours", "tokens"]


def volume_basis(line: LineVariance) -> VolumeBasis | None:
    """``GPU-hours`` where the plan has the line's fleet hours and the bill its usage hours, else ``tokens`` where
    both token counts are there (million tokens), else ``None`` (no split)."""
    if line.planned_gpu_hours and line.actual_gpu_hours is not None:
        return "GPU-hours"
    if line.planned_mtokens and line.actual_mtokens is not None:
        return "tokens"
    return None


def volume_quantities(line: LineVariance) -> tuple[Decimal, Decimal] | None:
    """(planned, actual) quantity of ``line`` in its :func:`volume_basis`, or ``None``."""
    basis = volume_basis(line)
    if basis == "GPU-hours":
        return line.planned_gpu_hours, line.actual_gpu_hours  # type: ignore[return-value]
    if basis == "tokens":
        return line.planned_mtokens, line.actual_mtokens  # type: ignore[return-value]
    return None


def volume_rate(line: LineVariance) -> tuple[Decimal, Decimal] | None:
    """(volume, rate) parts of ``line``'s variance in its :func:`volume_basis`, or ``None`` without one.

    >>> from decimal import Decimal as D
    >>> from finops.money import Money
    >>> usd = lambda x: Money.of(x, "USD")
    >>> fleet = LineVariance("gpu", "OPEX", usd(730), usd(900), usd(900), usd(170), None, "", planned_mtokens=D(10),
    ...                      actual_mtokens=D(8), planned_gpu_hours=D(730), actual_gpu_hours=D(744))
    >>> volume_basis(fleet), [str(x) for x in volume_rate(fleet)]     # 14 more hours at 1 USD, the rest rate
    ('GPU-hours', ['14', '156'])
    """
    quantities = volume_quantities(line)
    if quantities is None:
        return None
    planned, actual = quantities
    volume = (actual - planned) * line.planned.amount / planned
    return volume, line.variance.amount - volume


class Driver(NamedTuple):
    """A plan line's part of the month's variance."""

    plan_line: str
    variance: Money


def driver_label(plan_line: str) -> str:
    """How the story names a line: the unmapped cost as what it is."""
    return "cost no plan line covers (Unmapped)" if plan_line == UNMAPPED else plan_line


def main_drivers(rec: Reconciliation, top: int = 5) -> tuple[list[Driver], Money]:
    """The ``top`` lines by absolute variance, largest first, and the variance of all the others."""
    ranked = sorted(rec.lines, key=lambda line: (-abs(line.variance.amount), line.plan_line))
    drivers = [Driver(line.plan_line, line.variance) for line in ranked[:top] if line.variance.amount != 0]
    rest = Money.total([line.variance for line in ranked[len(drivers):]], rec.currency)
    return drivers, rest


def headline(rec: Reconciliation) -> str:
    """The month's result against plan and its main cause (for cost no plan line covers, its largest charge),
    the other flagged lines, and the commitment tie-out when it does not tie out.

    e.g. ``2026-05: P&L actual 16,314.85 USD against a plan of 23,145.00 USD, 6,830.15 USD (29.5 %) under
    plan, favourable; the main cause: aws-storage, 1,200.00 USD under (17.6 % of the variance).``
    """
    variance = rec.variance.amount
    pct = "" if rec.planned.amount == 0 else f" ({abs(variance) / rec.planned.amount:.1%})"
    side = "over" if variance > 0 else "under" if variance < 0 else "on"
    text = (f"{rec.month}: P&L actual {_money(rec.actual)} against a plan of {_money(rec.planned)}, "
            f"{_money(_abs(rec.variance))}{pct} {side} plan, {favourable(variance)}")
    drivers, _ = main_drivers(rec, 1)
    if not drivers or variance == 0:
        return text + "."
    lead = drivers[0]
    share = f" ({abs(lead.variance.amount) / abs(variance):.0%} of the variance)" if variance else ""
    way = "over" if lead.variance.amount > 0 else "under"
    text = f"{text}; the main cause: {driver_label(lead.plan_line)}, {_money(_abs(lead.variance))} {way}{share}"
    if lead.plan_line == UNMAPPED and rec.unmapped:
        top = max(rec.unmapped, key=lambda u: (u.effective_cost.amount, u.sub_account))
        what = " ".join(x for x in (top.provider_name, top.sub_account, top.instance_type or top.service_name) if x)
        text += f", most of it {what} ({_money(top.effective_cost)})"
    others = [f"{line.plan_line} {_money(_abs(line.variance))} {line.flag}" for line in rec.lines
              if line.flag and line.plan_line not in (lead.plan_line, UNMAPPED)]
    if others:
        text += "; also flagged: " + ", ".join(others)
    t = tie_out(rec)
    if not t.agrees:
        side = "less" if t.difference.amount < 0 else "more"
        said = ("the provider applied" if rec.commitments.applied_amortization is not None
                else "the bills amortize")  # FOCUS ContractApplied: the provider's own statement
        text += (f". Commitments do not tie out: {said} {_money(t.billed)} against a schedule of "
                 f"{_money(t.scheduled)}, {_money(_abs(t.difference))} {side}" +
                 (" (a commitment paid but unused, or a partial bill)" if side == "less" else ""))
    return text + "."


def _abs(value: Money) -> Money:
    return -value if value.amount < 0 else value


def _money(value: Money) -> str:
    return f"{value.rounded().amount:,.2f} {value.currency}"


@dataclass(frozen=True)
class TieOut:
    """Commitments' amortization on their schedule against the bills' amortized commitment cost."""

    scheduled: Money
    billed: Money

    @property
    def difference(self) -> Money:
        return self.billed - self.scheduled

    @property
    def agrees(self) -> bool:
        tolerance = max(abs(self.scheduled.amount) * TIE_OUT_SHARE, Decimal(1))
        return abs(self.difference.amount) <= tolerance


def tie_out(rec: Reconciliation) -> TieOut:
    """The month's tie-out: the sum of each commitment's scheduled monthly amortization (where its term says
    how much was bought) against the bills' used + unused commitment cost, where the bills carry FOCUS 1.3
    ContractApplied with each commitment it names at the cost the provider applied to it
    (:attr:`~finops.reconcile.result.CommitmentSummary.applied_amortization`)."""
    scheduled = Money.total([line.scheduled_monthly for line in rec.commitment_lines
                             if line.scheduled_monthly is not None], rec.currency)
    stated = rec.commitments.applied_amortization
    return TieOut(scheduled, rec.commitments.amortization if stated is None else stated)


@dataclass(frozen=True)
class LineYear:
    """A plan line's year so far and whole year (plan currency amounts)."""

    plan_line: str
    ytd_plan: Decimal
    ytd_actual: Decimal
    year_plan: Decimal
    months_actual: int

    @property
    def year_forecast(self) -> Decimal:
        """Year-to-date actual plus the plan of the months to come."""
        return self.ytd_actual + (self.year_plan - self.ytd_plan)


def year_to_date(rec: Reconciliation, earlier: Iterable[tuple[str, dict[str, Decimal]]]) -> list[LineYear]:
    """Per plan line of the month: year-to-date plan and actual, full-year plan, from the plan's Budget rows of
    the year (``rec.year_plan``) and the ``earlier`` months' actuals by line (``(month, {line: actual})``, the
    history's; months of other years, this month and later ones are left out).
    """
    year, month = rec.month[:4], rec.month
    actuals: dict[str, Decimal] = {}
    counted: dict[str, int] = {}
    for m, lines in earlier:
        if m[:4] != year or m >= month:
            continue
        for line, amount in lines.items():
            actuals[line] = actuals.get(line, Decimal(0)) + amount
            counted[line] = counted.get(line, 0) + 1
    result = []
    for line in rec.lines:
        plans = [p for p in rec.year_plan if p.plan_line == line.plan_line]
        result.append(LineYear(
            line.plan_line,
            ytd_plan=sum((p.amount.amount for p in plans if p.month <= month), Decimal(0)),
            ytd_actual=actuals.get(line.plan_line, Decimal(0)) + line.actual.amount,
            year_plan=sum((p.amount.amount for p in plans), Decimal(0)),
            months_actual=counted.get(line.plan_line, 0) + 1))
    return result
