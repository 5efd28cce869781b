"""Pools coupled by a shared savings plan / flexible CUD or a capex budget: one LP through HiGHS.

Each pool (an instance type in a region) has its own hourly demand and options; a spend-based
savings plan of S per hour (paid every hour) covers, each hour, eligible usage in any pool at that
pool's plan rate, sum_p rate_p u_p,t <= S (the spend commitment of :mod:`finops.commitments`); a pool's
plan rate is its ``plan_rate``, else the discounted rate of its ``savings_plan`` option, which with a
shared plan is that plan and no per-pool units; a capex budget caps sum of units x upfront. Pools without
a coupling are solved one by one with the exact duration-curve DP. With a coupling the hourly model

    min  sum_p,k c_p,k T x_p,k + T S + sum_t w_t sum_p [sum_k v_p,k y_p,k,t + sum_i q_p,i z_p,i,t + p_p o_p,t]
    s.t. y_p,k,t <= x_p,k ;  sum_k y + sum_i z + u + o = d_p,t ;  z_p,i,t <= cap_p,i,t ;
         sum_p rate_p u_p,t <= S ;  sum_p,k upfront_p,k x_p,k <= budget ;  x_p,k whole units

has no link between hours, so only the distribution of hour vectors (d_1,t ... d_P,t) matters:
identical hours merge exactly (weights add up), and ``representatives`` > 0 further clusters the
hours into that many k-means centroids with their counts as weights (scipy's ``kmeans2``). The
compressed MILP goes to HiGHS (``scipy.optimize.milp``); the chosen units and S are then re-costed
exactly on every hour: per hour the plan is a fractional knapsack (cover the dearest unit-hours per
plan dollar first), which is what the LP does.

>>> import numpy as np
>>> from decimal import Decimal
>>> from finops.mix.options import MixOption
>>> od = lambda price: MixOption("od", "on_demand", Decimal(price))
>>> pools = [Pool("a", np.array([4.0, 0.0]), (od(10),), plan_rate=Decimal(6)),
...          Pool("b", np.array([0.0, 4.0]), (od(10),), plan_rate=Decimal(6))]
>>> r = optimize_pools(pools, shared_plan=True)   # a plan of 24/h covers a by day and b by night
>>> r.plan_per_hour, str(r.total_cost), str(r.on_demand_only_cost)
(Decimal('24.000'), '48.00 USD', '80.00 USD')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, linprog, milp

from ..commitments import BASIS
from ..errors import InputError
from ..money import Money, quantize
from .dispatch import as_demand, cheapest_on_demand, cost_mix, hourly_dispatch
from .duration_curve import flexible_tiers, merit_order
from .optimize import optimize_mix
from .options import MixOption, check_options
from .result import MixResult

__all__ = ["Pool", "PoolsResult", "compress_hours", "evaluate_pools", "hourly_lp_bound", "optimize_pools", "plan_pools"]

DEFAULT_REPRESENTATIVES = 48  # within 0.013 % of the full 8,760-hour LP on the benchmark (benchmarks/bench_mix.py)
PLAN_STEP = Decimal("0.001")  # savings plan commitments are bought in steps of 0.001 per hour
_GAP = "mip_rel_gap"  # HiGHS option names and scipy method names: constants (option names ignore case)
_INTERIOR_POINT = "highs-ipm"


@dataclass(frozen=True)
class Pool:
    """One pool: hourly demand (any numbers: ints, floats, Decimals; kept as a float array, checked by
    :func:`~finops.mix.dispatch.as_demand`), its options, and its rate under the shared plan (None: not
    covered)."""

    name: str
    demand: np.ndarray
    options: tuple[MixOption, ...]
    plan_rate: Decimal | None = None

    def __post_init__(self) -> None:
        try:
            values, _ = as_demand(self.demand)
        except InputError as exc:
            raise InputError(f"pool {self.name!r}: {exc.message}") from exc
        object.__setattr__(self, "demand", values)


@dataclass(frozen=True)
class PoolsResult:
    """Units per pool, the shared plan per hour, and the exact cost over every hour."""

    units: dict[str, dict[str, int]]
    plan_per_hour: Decimal
    plan_used: float  # share of the plan's dollars that displaced usage
    total_cost: Money
    on_demand_only_cost: Money
    solved_hours: int  # hours in the (compressed) model that was solved

    @property
    def savings(self) -> Money:
        return self.on_demand_only_cost - self.total_cost

    def to_dict(self) -> dict[str, object]:
        return {"units": self.units, "plan_per_hour": self.plan_per_hour, "plan_used": round(self.plan_used, 6),
                "total_cost": quantize(self.total_cost.amount),
                "on_demand_only_cost": quantize(self.on_demand_only_cost.amount),
                "savings": quantize(self.savings.amount), "currency": self.total_cost.currency,
                "solved_hours": self.solved_hours}


def optimize_pools(pools: Sequence[Pool], *, shared_plan: bool = False, capex_budget: Money | None = None,
                   representatives: int | None = None) -> PoolsResult:
    """Cheapest units per pool (and plan per hour when ``shared_plan``), exact on every hour.

    Without a coupling each pool is solved exactly and independently; with one, the hourly MILP is
    solved on merged hours, clustered into ``representatives`` centroids (default: 48 when more
    distinct hours remain; 0 never clusters, which is exact but slow on a year), then re-costed
    exactly on every hour.
    """
    pools = plan_pools(pools) if shared_plan else pools
    demand, currency = _checked(pools)
    budget = _budget(capex_budget, currency)
    if not shared_plan and budget is None:
        results = [optimize_mix(pool.demand, pool.options) for pool in pools]
        return _summary({p.name: r.units for p, r in zip(pools, results)}, Decimal(0), results, 0.0, currency,
                        len(demand), len(demand))
    hours, weights = compress_hours(demand, DEFAULT_REPRESENTATIVES if representatives is None else representatives)
    solution = _solve(pools, hours, weights, float(demand.shape[0]), shared_plan, budget, _whole_units)
    units = {pool: {name: round(x) for name, x in row.items()} for pool, row in solution.units.items()}
    plan = Decimal(repr(solution.plan)).quantize(PLAN_STEP, rounding=ROUND_DOWN)
    return evaluate_pools(pools, units, plan, solved_hours=len(hours))


def hourly_lp_bound(pools: Sequence[Pool], *, shared_plan: bool = False, capex_budget: Money | None = None) -> float:
    """The LP relaxation over every hour (fractional units): a lower bound on any mix's cost.

    Solved by HiGHS's interior-point method (a year of 60 pools takes about 14 minutes on one core). The
    benchmark measures the compressed answer against it; the gap bounds its distance from optimal.
    """
    pools = plan_pools(pools) if shared_plan else pools
    demand, currency = _checked(pools)
    hours, weights = compress_hours(demand)
    return _solve(pools, hours, weights, float(demand.shape[0]), shared_plan, _budget(capex_budget, currency),
                  _interior_point).objective


def plan_pools(pools: Sequence[Pool]) -> list[Pool]:
    """The pools under one shared plan: a pool's spend-commitment option (``savings_plan``) is its rate under
    the plan (``plan_rate``, unless given) and leaves its options; one ``S`` covers every pool.

    >>> sp = Pool("a", np.array([1.0]), (MixOption("od", "on_demand", Decimal(10)),
    ...                                  MixOption("sp", "savings_plan", Decimal(6))))
    >>> [(p.plan_rate, [o.name for o in p.options]) for p in plan_pools([sp])]
    [(Decimal('6'), ['od'])]
    """
    out = []
    for pool in pools:
        spend = [o for o in pool.options if BASIS.get(o.kind) == "spend"]
        if not spend:
            out.append(pool)
            continue
        rate = pool.plan_rate if pool.plan_rate is not None else min(o.hourly_cost for o in spend)
        out.append(replace(pool, options=tuple(o for o in pool.options if BASIS.get(o.kind) != "spend"),
                           plan_rate=rate))
    return out


def _budget(capex_budget: Money | None, currency: str) -> float | None:
    """The capex budget as a number in the options' currency (None: no budget); refused if negative."""
    if capex_budget is None:
        return None
    if capex_budget.currency != currency:
        raise InputError(f"capex budget in {capex_budget.currency}, options in {currency}")
    if capex_budget.amount < 0:
        raise InputError(f"capex_budget must be >= 0, got {capex_budget}",
                         hint="give the cash available for upfront payments (0: buy nothing with an upfront)")
    return float(capex_budget.amount)


def compress_hours(demand: np.ndarray, representatives: int = 0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Hour vectors (rows) and weights (hours each stands for): identical rows merged; then k-means centroids if asked.

    >>> compress_hours(np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 0.0]]))[1].tolist()
    [2, 1]
    """
    rows, counts = np.unique(demand, axis=0, return_counts=True)
    if representatives <= 0 or representatives >= len(rows):
        return rows, counts
    from scipy.cluster.vq import kmeans2

    # a centroid is a mean of hours with demand >= 0, so it is >= 0 too; a cluster left empty is dropped
    centroids, labels = kmeans2(demand, representatives, seed=seed, minit="++")
    clusters, weights = np.unique(labels, return_counts=True)
    return centroids[clusters], weights


def evaluate_pools(pools: Sequence[Pool], units: dict[str, dict[str, int]], plan_per_hour: Decimal,
                   solved_hours: int | None = None) -> PoolsResult:
    """Exact cost of given units and plan on every hour (the plan as a per-hour fractional knapsack)."""
    demand, currency = _checked(pools)
    results = [cost_mix(pool.demand, pool.options, units[pool.name]) for pool in pools]
    if plan_per_hour == 0:
        return _summary(units, plan_per_hour, results, 0.0, currency, len(demand), solved_hours or len(demand))
    # what the plan can displace in each pool, per hour: (pool, price per unit-hour, unit-hours)
    pieces: list[tuple[int, float, np.ndarray]] = []
    for p, pool in enumerate(pools):
        if pool.plan_rate is not None:
            pieces.extend((p, price, amount) for price, amount in _coverable_pieces(pool, units[pool.name]))
    pieces.sort(key=lambda piece: -piece[1] / float(pools[piece[0]].plan_rate))  # type: ignore[arg-type]
    budget = np.full(len(demand), float(plan_per_hour))
    displaced = np.zeros(len(demand))
    spent = np.zeros(len(demand))
    for p, price, amount in pieces:
        rate = float(pools[p].plan_rate)  # type: ignore[arg-type]
        covered = np.minimum(amount, budget / rate)
        budget -= covered * rate
        spent += covered * rate
        displaced += covered * price
    total_plan = float(plan_per_hour) * len(demand)
    return _summary(units, plan_per_hour, results, math.fsum(displaced), currency, len(demand),
                    solved_hours or len(demand), used=math.fsum(spent) / total_plan)


def _coverable_pieces(pool: Pool, units: dict[str, int]) -> list[tuple[float, np.ndarray]]:
    """Each hour's usage by what it costs at the margin: on-demand, spot tiers, committed capacity with
    a variable cost (the plan displaces the dearest per plan dollar first, i.e. from the top down)."""
    served = hourly_dispatch(pool.demand, pool.options, units)
    on_demand = cheapest_on_demand(pool.options)
    pieces = [(float(o.variable_cost), served[o.name]) for o in merit_order(pool.options) if o.variable_cost]
    pieces += [(float(spot.hourly_cost), served[spot.name]) for spot in flexible_tiers(pool.options)]
    return [*pieces, (float(on_demand.hourly_cost), served[on_demand.name])]


def _summary(units: dict[str, dict[str, int]], plan: Decimal, results: list[MixResult], displaced: float,
             currency: str, hours: int, solved_hours: int, used: float = 0.0) -> PoolsResult:
    """Totals over the pools: their costs, plus the plan paid every hour, less what it displaced."""
    total = Money.total([r.total_cost for r in results], currency) + Money(plan * hours, currency) \
        - Money(Decimal(repr(displaced)), currency)
    on_demand = Money.total([r.on_demand_only_cost for r in results], currency)
    return PoolsResult(units, plan, used, total, on_demand, solved_hours)


def _checked(pools: Sequence[Pool]) -> tuple[np.ndarray, str]:
    if not pools:
        raise InputError("no pools given")
    lengths = {len(p.demand) for p in pools}
    if len(lengths) != 1:
        raise InputError("every pool needs a demand profile of the same length")
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise InputError("pool names must be unique")
    horizon = lengths.pop()
    currencies = {check_options(p.options, hours=horizon) for p in pools}
    if len(currencies) != 1:
        raise InputError(f"pools priced in several currencies: {sorted(currencies)}")
    return np.column_stack([p.demand for p in pools]), currencies.pop()  # hours x pools


@dataclass(frozen=True)
class _Solution:
    units: dict[str, dict[str, float]]
    plan: float
    objective: float


def _solve(pools: Sequence[Pool], hours: np.ndarray, weights: np.ndarray, horizon: float, shared_plan: bool,
           budget: float | None, solver: Callable[[_Columns, list[LinearConstraint]], OptimizeResult]) -> _Solution:
    """Build the (compressed) hourly model and solve it: ``_whole_units`` (the MILP) or ``_interior_point``
    (its LP relaxation).

    Lean form: per pool and hour, sum_k x_k (zero-variable-cost commitments) + sum_k y_k (those with a
    variable cost, y_k <= x_k) + sum_i z_i + u + o >= d. Over-serving never pays, so it is the model
    of the module docstring.
    """
    n = len(weights)
    builder = _Columns()
    plan = builder.add(np.array([horizon]), np.array([np.inf]))  # the plan per hour: 0 when nothing may use it
    demand_rows: list[tuple[int, np.ndarray, np.ndarray]] = []  # (pool, columns, row offsets 0..n-1)
    linking: list[tuple[int, int]] = []                        # (x column, y block)
    coverage: list[tuple[float, int]] = []                     # (plan rate, u block)
    budget_terms: list[tuple[int, float]] = []
    units_at: list[tuple[str, str, int]] = []
    every_hour = np.arange(n)
    for p, pool in enumerate(pools):
        d = hours[:, p]
        for option in merit_order(pool.options):
            cap = np.inf if option.max_units is None else float(option.max_units)
            x = builder.add(np.array([float(option.hourly_cost) * horizon]), np.array([cap]), whole=True)
            units_at.append((pool.name, option.name, x))
            if option.upfront:
                budget_terms.append((x, float(option.upfront)))
            if option.variable_cost:
                y = builder.add(weights * float(option.variable_cost), np.full(n, np.inf))
                linking.append((x, y))
                demand_rows.append((p, y + every_hour, every_hour))
            else:
                demand_rows.append((p, np.full(n, x), every_hour))
        for spot in flexible_tiers(pool.options):
            z = builder.add(weights * float(spot.hourly_cost), spot.spot_capacity(d))
            demand_rows.append((p, z + every_hour, every_hour))
        o = builder.add(weights * float(cheapest_on_demand(pool.options).hourly_cost), np.full(n, np.inf))
        demand_rows.append((p, o + every_hour, every_hour))
        if pool.plan_rate is not None:  # plan coverage, held at 0 without a shared plan
            u = builder.add(np.zeros(n), np.full(n, np.inf if shared_plan else 0.0))
            demand_rows.append((p, u + every_hour, every_hour))
            coverage.append((float(pool.plan_rate), u))
    size = builder.size
    # every pool-hour has a row (its on-demand column) and the last block added is in these rows
    # (on-demand or plan coverage), so the matrix is (pools x hours) by size without saying so
    meets = sparse.csr_matrix((np.ones(n * len(demand_rows)),
                               (np.concatenate([p * n + r for p, _, r in demand_rows]),
                                np.concatenate([c for _, c, _ in demand_rows]))))
    constraints = [LinearConstraint(meets, hours.T.ravel())]  # at least the demand; no upper bound
    if linking:
        rows = np.concatenate([np.r_[i * n + every_hour, i * n + every_hour] for i in range(len(linking))])
        cols = np.concatenate([np.r_[y + every_hour, np.full(n, x)] for x, y in linking])
        vals = np.tile(np.r_[np.ones(n), -np.ones(n)], len(linking))
        constraints.append(LinearConstraint(sparse.csr_matrix((vals, (rows, cols)), shape=(len(linking) * n, size)),
                                            -np.inf, 0))
    if coverage:
        rows = np.concatenate([every_hour] * (len(coverage) + 1))
        cols = np.concatenate([u + every_hour for _, u in coverage] + [np.full(n, plan)])
        vals = np.concatenate([np.full(n, rate) for rate, _ in coverage] + [-np.ones(n)])
        constraints.append(LinearConstraint(sparse.csr_matrix((vals, (rows, cols)), shape=(n, size)), -np.inf, 0))
    if budget is not None and budget_terms:
        row = np.zeros(size)
        for x, upfront in budget_terms:
            row[x] = upfront
        constraints.append(LinearConstraint(sparse.csr_matrix(row), -np.inf, budget))
    solution = solver(builder, constraints)
    if solution.x is None:
        raise InputError(f"the coupled mix model has no solution: {solution.message}")
    units: dict[str, dict[str, float]] = {pool.name: {} for pool in pools}
    for pool_name, option_name, x in units_at:
        units[pool_name][option_name] = float(solution.x[x])
    return _Solution(units, float(solution.x[plan]), float(solution.fun))


def _whole_units(builder: _Columns, constraints: list[LinearConstraint]) -> OptimizeResult:
    """The MILP through HiGHS's branch and bound, to a relative gap of 1e-5 (whole units only where asked)."""
    return milp(builder.cost, constraints=constraints, integrality=builder.integrality,
                bounds=Bounds(np.zeros(builder.size), builder.upper), options={_GAP: 1e-5})


def _interior_point(builder: _Columns, constraints: list[LinearConstraint]) -> OptimizeResult:
    """The LP relaxation (whole units ignored) through HiGHS's interior-point solver: on a year of hours
    (60 pools: 1.6 M columns, 0.5 M rows) it finishes in about 14 minutes where the dual simplex that
    ``milp`` runs did not in an hour."""
    rows, limits = [], []
    for constraint in constraints:  # every row here is one-sided: lb <= A x becomes -A x <= -lb
        matrix = sparse.csr_matrix(constraint.A)
        lower, top = (np.broadcast_to(bound, matrix.shape[0]) for bound in (constraint.lb, constraint.ub))
        below = np.isinf(top)
        rows.append(sparse.diags(np.where(below, -1.0, 1.0)) @ matrix)
        limits.append(np.where(below, -lower, top))
    return linprog(builder.cost, A_ub=sparse.vstack(rows).tocsc(), b_ub=np.concatenate(limits),
                   bounds=np.column_stack([np.zeros(builder.size), builder.upper]), method=_INTERIOR_POINT)


class _Columns:
    """Variable blocks of the model: cost, upper bound and integrality, appended block by block."""

    def __init__(self) -> None:
        self._cost: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._whole: list[np.ndarray] = []
        self.size = 0

    def add(self, cost: np.ndarray, upper: np.ndarray, whole: bool = False) -> int:
        """Append a block; returns its first column."""
        first = self.size
        self._cost.append(cost)
        self._upper.append(upper)
        self._whole.append(np.full(len(cost), 1.0 if whole else 0.0))
        self.size += len(cost)
        return first

    @property
    def cost(self) -> np.ndarray:
        return np.concatenate(self._cost)

    @property
    def upper(self) -> np.ndarray:
        return np.concatenate(self._upper)

    @property
    def integrality(self) -> np.ndarray:
        return np.concatenate(self._whole)
