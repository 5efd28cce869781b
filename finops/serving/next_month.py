"""The next month's plan from the month production served: demand, fleet and commitment mix.

Per serving plan line, from its realized month (:mod:`~finops.serving.realized`):

* demand: the observed hourly requests (generation tokens per hour / mean output length) times
  ``growth``, hour for hour; the peak is the largest hour;
* fleet: :func:`finops.sizing.search` for the line's engine, GPU, precision and TP at the peak, the
  line's TTFT/ITL targets and spare, through the sizing's correction hook
  (:func:`finops.sizing.corrections.corrected_search`) with the correction of the line's engine, GPU
  and model once this month's production ratio and its load tests are recorded. A line no fleet
  serves (its targets cannot be met on its configuration, or it served no request to size from) is
  refused with :class:`~finops.errors.InputError` at its row: a plan line without a fleet would carry
  no cost, or last month's, into a budget that reads as planned;
* mix (cloud lines): the fleet follows the hourly demand in whole units: hour ``h`` runs
  ``ceil(replicas x requests_h / peak)`` replicas, in whole instances (``ceil(replicas_h x GPUs per replica /
  GPUs per instance)``, :func:`finops.mix.demand_units.instances_needed`); the month's profile repeats over
  ``horizon_months`` x 730 hours (the horizon commitments are judged on); commitments already bought
  (:mod:`~finops.serving.commitments`) serve first, while they last, at no new cost (a plan line's serving
  lines draw on them in row order); :func:`finops.mix.optimize_mix` buys the rest from the price book's
  options for the line's instance type and region: commitments for the hours that are always busy,
  on-demand (or spot) for the rest, paid only in the hours that need it. The GPU-hours paid
  (``instances_h x GPUs per instance``, per :data:`HOURS_PER_MONTH` hours) are the next plan's
  PlannedGpuHours; an on-prem line's are its GPUs x :data:`HOURS_PER_MONTH` (owned, every hour);
* budget (cloud lines): the mix's monthly cost of what is bought plus the month's amortization of every
  instance-hour commitment already bought on the plan line (:meth:`SunkCommitment.amortization` over
  the first :data:`HOURS_PER_MONTH` hours of the month, counted once per plan line: on its first serving
  line): sunk, but still the line's cost.

Every change is a :class:`Change` row: what moved, from what to what, and why. The monthly cost moves as a
bridge from the month's actual cost (``C0``: ``GPU-hours_0`` paid at ``p0 = C0 / GPU-hours_0`` per GPU-hour) to
the next budget, one row per cause, each row's before the previous row's after:

* fleet: ``C0 x GPUs_1 / GPUs_0`` (the GPUs at the peak, at this month's hours per GPU and price);
* hours paid: ``GPU-hours_1 x p0`` (hours paid per GPU: every hour of a fixed fleet this month, the hours the
  demand needs next month);
* price: ``C1`` (the mix's cost; ``p1 = C1 / GPU-hours_1``: commitments and on-demand against this month's price);
* commitments already bought: ``C1 + amortization`` (when there is any).

A plan line may have several serving lines (one per workload or configuration, each with its own label
rule): each is sized and bought on its own, and the next plan's Budget row of the plan line sums them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

import numpy as np

from ..errors import InputError
from ..money import Money
from ..price_book import PriceBook
from ..sizing.corrections import CorrectionTable, ThroughputCorrection
from .commitments import SunkCommitment
from .load_tests import load_test_ratios
from .realized import RealizedLine, ServingMonth, month_window

__all__ = ["HOURS_PER_MONTH", "Change", "NextLine", "NextPlan", "hourly_instances", "next_month", "plan_next_month"]

HOURS_PER_MONTH = 730


def next_month(month: str) -> str:
    """``'2026-12'`` -> ``'2027-01'``.

    >>> next_month("2026-12"), next_month("2026-05")
    ('2027-01', '2026-06')
    """
    year, number = (int(p) for p in month.split("-"))
    return f"{year + number // 12}-{number % 12 + 1:02d}"


@dataclass(frozen=True)
class Change:
    """One row of the Changes sheet."""

    plan_line: str
    what: str
    before: float | str | None
    after: float | str | None
    why: str
    #: The serving line's label rule (``namespace=prod-*``): which of a plan line's serving lines moved.
    serving_line: str = ""

    @property
    def change(self) -> float | None:
        """``after / before - 1`` for numbers (``None`` otherwise)."""
        if isinstance(self.before, int | float) and isinstance(self.after, int | float) and self.before:
            return self.after / self.before - 1
        return None


@dataclass(frozen=True)
class NextLine:
    """One serving line of the next month's plan."""

    realized: RealizedLine
    observed_month: str
    month: str
    hourly_requests: np.ndarray = field(repr=False)
    factor: float
    band: float
    correction_months: tuple[str, ...]
    replicas: int
    gpus: int
    instances: int | None
    sunk_units: int
    committed_units: dict[str, int]
    monthly_cost: Money | None
    sunk_amortization: Money | None
    #: GPU-hours paid per :data:`HOURS_PER_MONTH` hours (whole instances hour by hour; on-prem: every hour).
    gpu_hours: float = 0.0

    @property
    def note(self) -> str:
        """What the Fleet sheet says of a line the mix does not price (its Budget row is carried over)."""
        if self.realized.line.buys_capacity:
            return ""
        return f"capacity not bought in the cloud ({self.realized.line.provider}): the Budget row of " \
               f"{self.observed_month} is carried over"

    @property
    def budget(self) -> Money | None:
        """The line's next-month budget: the mix's cost plus the sunk commitments' amortization."""
        if self.monthly_cost is None:
            return None
        return self.monthly_cost + self.sunk_amortization if self.sunk_amortization is not None else self.monthly_cost

    @property
    def plan_line(self) -> str:
        return self.realized.plan_line

    @property
    def rule(self) -> str:
        """The serving line's label rule (``namespace=prod-*``): which of its plan line's serving lines it is."""
        return self.realized.line.rule

    @property
    def gpus_paid(self) -> float:
        """GPUs paid on average over the month: :attr:`gpu_hours` / :data:`HOURS_PER_MONTH`."""
        return self.gpu_hours / HOURS_PER_MONTH

    @property
    def peak_requests_per_hour(self) -> float:
        return float(self.hourly_requests.max()) if self.hourly_requests.size else 0.0

    @property
    def planned_mtokens(self) -> Decimal:
        """Million tokens the next month is planned to serve (observed x growth)."""
        scale = self.hourly_requests.sum() / max(self.realized.requests, 1e-12)
        return Decimal(repr(round(float(self.realized.tokens * scale) / 1e6, 3)))


@dataclass(frozen=True)
class NextPlan:
    month: str
    growth: float
    lines: tuple[NextLine, ...]
    changes: tuple[Change, ...]
    corrections: CorrectionTable

    def line(self, plan_line: str) -> NextLine:
        return next(n for n in self.lines if n.plan_line == plan_line)

    def names(self) -> list[str]:
        """Each serving line's name, in order: its plan line, followed by its label rule where the plan line has
        several serving lines (``aws-inference-prod namespace=doc-qa``)."""
        count: dict[str, int] = {}
        for n in self.lines:
            count[n.plan_line] = count.get(n.plan_line, 0) + 1
        return [n.plan_line if count[n.plan_line] == 1 else f"{n.plan_line} {n.rule}" for n in self.lines]


#: What to do about a line no fleet serves, by why: the Serving table's columns that decide it.
_NO_FLEET_HINTS = {
    "targets": "loosen its TtftTargetMs or ItlTargetMs, or give it another Gpu, Precision or TP, in the serving lines "
               "(--serving, or the plan's Serving sheet). Nothing was written",
    "idle": "a retired line needs no fleet: take it out of the serving lines (--serving, or the plan's Serving "
            "sheet); else check its Engine (whose metric names are read) and its LabelKey and LabelValue against "
            "the series. Nothing was written",
}


def _no_fleet(realized: RealizedLine, month: str, why: str, cause: str) -> InputError:
    return InputError(f"plan line {realized.line.plan_line!r} has no fleet for {month}: {why}",
                      where=realized.line.where, hint=_NO_FLEET_HINTS[cause])


def _size(realized: RealizedLine, peak: float, correction: ThroughputCorrection, book: PriceBook,
          observed_month: str, month: str) -> object:
    """The cheapest option that serves the line's peak at its targets; refused when there is none."""
    from ..sizing.corrections import corrected_search
    from ..sizing.workload import Workload

    line = realized.line
    if not realized.requests or peak <= 0:
        raise _no_fleet(realized, month, f"its series (label {line.label_key} matching {line.label_value!r}) "
                                         f"served no request in {observed_month}, so there is no demand to size", "idle")
    workload = Workload(name=line.plan_line, model=line.model, isl=max(1, round(realized.isl or 1)),
                        osl=max(1, round(realized.osl or 1)), peak_requests_per_hour=peak,
                        ttft_ms=line.ttft_target_ms, itl_ms=line.itl_target_ms, spare=line.spare)
    result = corrected_search(workload, correction, gpus=[line.gpu], precisions=[line.precision], tps=[line.tp],
                              engine=line.engine, price_book=book, top=1)
    if not result.options:
        raise _no_fleet(realized, month, result.infeasible_reason or "no configuration meets its targets",
                        "targets")
    return result.options[0]


def _sunk_per_hour(commitments: Sequence[SunkCommitment], realized: RealizedLine, start: datetime,
                   hours: int) -> tuple[np.ndarray, int]:
    line = realized.line
    mine = [c for c in commitments if c.covers(line.plan_line, line.region, line.instance_type)]
    sunk = np.zeros(hours)
    for c in mine:
        sunk[: min(hours, int(c.hours_left(start)))] += c.units
    return sunk, sum(c.units for c in mine)


def hourly_instances(replicas: int, gpus: int, hourly: np.ndarray, per_instance: int) -> np.ndarray:
    """Whole instances hour by hour for a fleet of ``replicas`` (``gpus`` in all) sized for the peak of ``hourly``:
    ``ceil(replicas x requests_h / peak)`` replicas, in whole instances of ``per_instance`` GPUs.

    >>> hourly_instances(7, 56, np.array([100.0, 50.0, 10.0, 0.0]), 8).tolist()
    [7.0, 4.0, 1.0, 0.0]
    >>> hourly_instances(2, 2, np.array([100.0, 40.0]), 1).tolist()   # one GPU a replica, one per instance
    [2.0, 1.0]
    """
    from ..mix.demand_units import instances_needed

    peak = float(hourly.max()) if hourly.size else 0.0
    if peak <= 0:
        return np.zeros(hourly.size)
    running = np.ceil(np.round(replicas * hourly / peak, 9))
    return instances_needed(running * (gpus / replicas), accelerators_per_instance=per_instance)


def _mix(realized: RealizedLine, option: object, hourly: np.ndarray, sunk: np.ndarray, horizon_months: int,
         book: PriceBook) -> tuple[int, dict[str, int], Money, float, np.ndarray]:
    """(instances at the peak, new committed units by option, monthly cost of what is bought, GPU-hours paid per
    :data:`HOURS_PER_MONTH` hours, the sunk units left after this line)."""
    from ..catalog.instances import instance
    from ..mix import optimize_mix
    from ..mix.price_options import options_from_prices

    line = realized.line
    per_instance = instance(line.provider, line.instance_type).gpu_count
    hours = horizon_months * HOURS_PER_MONTH
    gpus, replicas = option.gpus, option.replicas  # type: ignore[attr-defined]
    need = np.resize(hourly_instances(replicas, gpus, hourly, per_instance), hours)
    residual = np.maximum(need - sunk, 0.0)
    options = options_from_prices(book, line.provider, line.instance_type, line.region, horizon_hours=hours)
    result = optimize_mix(residual, options)
    share = Decimal(HOURS_PER_MONTH) / Decimal(hours)
    monthly = result.total_cost * share
    committed = {name: units for name, units in result.units.items() if units}
    paid = float(need.sum()) * per_instance * HOURS_PER_MONTH / hours
    return math.ceil(gpus / per_instance), committed, monthly, paid, np.maximum(sunk - need, 0.0)


def plan_next_month(observed: ServingMonth, *, growth: float, corrections: CorrectionTable,
                    commitments: Sequence[SunkCommitment] = (), price_book: PriceBook | None = None,
                    horizon_months: int = 12, costs: Mapping[str, Money] | None = None) -> NextPlan:
    """The next month's plan for every serving line of ``observed`` (see the module docstring).

    ``corrections`` is the table before this month; the returned plan carries it with this month's
    production ratios and load tests (``observed.load_tests``) added.
    """
    book = price_book if price_book is not None else PriceBook.current()
    month = next_month(observed.month)
    start = datetime.fromtimestamp(month_window(month)[0], UTC).replace(tzinfo=None)
    table = corrections.with_ratios(observed.throughput_ratios(), observed.month)
    for file, ratios in load_test_ratios(observed.load_tests).items():
        table = table.with_ratios(ratios, f"{observed.month} load test {file}")
    lines, changes = [], []
    left: dict[tuple[str, str, str], np.ndarray] = {}   # sunk units per pool not yet drawn by an earlier line
    amortized_lines: set[str] = set()
    hours = horizon_months * HOURS_PER_MONTH
    for realized in observed.lines:
        line = realized.line
        key = (line.engine, line.gpu, line.model)
        hourly = realized.hourly_generation_tokens / (realized.osl or 1) * growth
        peak = float(hourly.max()) if hourly.size else 0.0
        option = _size(realized, peak, table.correction(*key), book, observed.month, month)
        gpus = option.gpus  # type: ignore[attr-defined]
        instances, sunk_units, committed, monthly, amortized = None, 0, {}, None, None
        paid = float(gpus * HOURS_PER_MONTH)
        if line.buys_capacity:
            pool = (line.plan_line, line.region.lower(), line.instance_type.lower())
            if pool not in left:   # the pool's first serving line: the commitments already bought on it
                left[pool], sunk_units = _sunk_per_hour(commitments, realized, start, hours)
            instances, committed, monthly, paid, left[pool] = _mix(realized, option, hourly, left[pool],
                                                                   horizon_months, book)
            first = line.plan_line not in amortized_lines
            amortized_lines.add(line.plan_line)
            amortized = Money.total([c.amortization(start, HOURS_PER_MONTH) for c in commitments
                                     if first and c.plan_line == line.plan_line], monthly.currency)
        nxt = NextLine(realized, observed.month, month, hourly, table.factor(*key), table.band(*key), table.months(*key),
                       option.replicas, gpus, instances, sunk_units, committed, monthly, amortized,  # type: ignore[attr-defined]
                       paid)
        lines.append(nxt)
        before = realized.cost if realized.cost is not None else (costs or {}).get(line.plan_line)
        changes += _changes(nxt, realized, growth, corrections.factor(*key), before)
    return NextPlan(month, growth, tuple(lines), tuple(changes), table)


def _changes(nxt: NextLine, realized: RealizedLine, growth: float, factor_before: float,
             cost_before: Money | None) -> list[Change]:
    name = nxt.plan_line
    observed_peak = nxt.peak_requests_per_hour / growth if growth else 0.0
    rows = [
        (name, "peak requests per hour", round(observed_peak, 1), round(nxt.peak_requests_per_hour, 1),
         f"the busiest hour of {nxt.observed_month} x growth {growth:g}"),
        (name, "million tokens", round(realized.tokens / 1e6, 3), float(nxt.planned_mtokens),
         f"tokens served in {nxt.observed_month} x growth {growth:g}"),
        (name, "throughput correction", round(factor_before, 4), round(nxt.factor, 4),
         (f"realized / predicted tokens per GPU-hour {_fmt(realized.throughput_ratio)} this month; "
         f"from {', '.join(nxt.correction_months) or 'no month'}; band +-{nxt.band:.0%}")),
        (name, "GPUs", realized.gpus, nxt.gpus,
         (f"{nxt.replicas} replicas of TP{realized.line.tp} {realized.line.gpu} meet TTFT "
         f"{_fmt(realized.line.ttft_target_ms)} ms / ITL {_fmt(realized.line.itl_target_ms)} ms "
         f"at the peak / correction, with {realized.line.spare:.0%} spare")),
        (name, "GPU-hours paid", round(realized.gpu_hours, 1), round(nxt.gpu_hours, 1),
         f"{realized.gpu_hours_source}'s in {nxt.observed_month}; next: "
         + (f"whole instances as each hour's requests need them, per {HOURS_PER_MONTH} hours"
            if realized.line.buys_capacity else f"{nxt.gpus} GPUs owned, every one of {HOURS_PER_MONTH} hours")),
    ]
    if realized.line.buys_capacity:
        bought = ", ".join(f"{units} x {name_}" for name_, units in sorted(nxt.committed_units.items())) or "none"
        rows.append((name, "committed instances", nxt.sunk_units, nxt.sunk_units + sum(nxt.committed_units.values()),
                     f"{nxt.sunk_units} already bought (sunk, from the bills) serve first; new: {bought}"))
        rows += _cost_bridge(nxt, realized, cost_before)
        sunk = nxt.sunk_amortization
        rows.append((name, "monthly cost", None if cost_before is None else float(cost_before.rounded().amount),
                     None if nxt.budget is None else float(nxt.budget.rounded().amount),
                     (f"{nxt.observed_month}'s actual cost -> the mix's cost of what is not yet committed, per "
                     f"{HOURS_PER_MONTH} hours{'' if sunk is None else f', plus {sunk.rounded()} amortization of commitments already bought'}"
                     "; the rows above split it into fleet, hours paid and price")))
    return [Change(*row, serving_line=nxt.rule) for row in rows]  # type: ignore[arg-type]


def _cost_bridge(nxt: NextLine, realized: RealizedLine, cost_before: Money | None) -> list[tuple[object, ...]]:
    """The monthly cost from the month's actual to the next budget, one row per cause (the module docstring):
    fleet, hours paid, price, and commitments already bought. None without this month's cost or GPU-hours."""
    if cost_before is None or nxt.monthly_cost is None or not realized.gpus or realized.gpu_hours <= 0 \
            or nxt.gpu_hours <= 0:
        return []
    name, month = nxt.plan_line, nxt.observed_month
    gpu_hours_0, gpu_hours_1 = Decimal(repr(realized.gpu_hours)), Decimal(repr(nxt.gpu_hours))
    price_0 = cost_before / gpu_hours_0
    fleet = cost_before * Decimal(nxt.gpus) / Decimal(realized.gpus)
    hours = price_0 * gpu_hours_1
    price_1 = nxt.monthly_cost / gpu_hours_1
    per_gpu_0, per_gpu_1 = realized.gpu_hours / realized.gpus, nxt.gpu_hours / nxt.gpus
    bought = ", ".join(f"{u} x {n}" for n, u in sorted(nxt.committed_units.items()))
    steps = [
        ("monthly cost: fleet", cost_before, fleet,
         (f"GPUs {realized.gpus} -> {nxt.gpus}, at {month}'s {per_gpu_0:,.0f} hours paid per GPU and "
         f"{_rate(price_0)} per GPU-hour")),
        ("monthly cost: hours paid", fleet, hours,
         (f"hours paid per GPU {per_gpu_0:,.0f} -> {per_gpu_1:,.0f} of {HOURS_PER_MONTH}: the next plan runs whole "
         f"instances as each hour's requests need them ({nxt.instances} at the peak), where {month} paid "
         f"{realized.gpu_hours:,.0f} GPU-hours; at {month}'s price")),
        ("monthly cost: price", hours, nxt.monthly_cost,
         f"price per GPU-hour {_rate(price_0)} -> {_rate(price_1)}: the mix's "
         + (f"commitments ({bought}) and on-demand" if bought else "on-demand and spot prices")
         + (f", after {nxt.sunk_units} instances already committed serve at no new cost" if nxt.sunk_units else "")),
    ]
    if nxt.sunk_amortization is not None and nxt.sunk_amortization.amount:
        steps.append(("monthly cost: commitments already bought", nxt.monthly_cost, nxt.budget,
                      f"plus {nxt.sunk_amortization.rounded()} amortization of commitments already bought (sunk)"))
    return [(name, what, float(a.rounded().amount), float(b.rounded().amount), why)  # type: ignore[union-attr]
            for what, a, b, why in steps]


def _rate(price: Money) -> str:
    """A price per GPU-hour to the cent's hundredth: ``6.8800 USD``."""
    return f"{price.amount:,.4f} {price.currency}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
