"""An independent reference: the hourly mixed-integer programme solved by HiGHS (scipy.optimize.milp).

Variables: whole units x_k per committed option, and per hour t the unit-hours y_kt served by each
committed option, z_it by each spot option and o_t by on-demand. Constraints: y_kt <= x_k,
z_it <= spot cap_i(t), sum_k y_kt + sum_i z_it + o_t = d_t. Objective: sum_k hourly_k x hours x x_k +
sum_t w_t (sum_k var_k y_kt + sum_i price_i z_it + price_od o_t). Dispatch order is left free.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp


def hourly_milp(demand, options, weights=None, integral=True):
    d = np.asarray(demand, dtype=float)
    w = np.ones(len(d)) if weights is None else np.asarray(weights, dtype=float)
    n = len(d)
    committed = [o for o in options if o.committed]
    spots = [o for o in options if o.kind == "spot"]
    od = min(float(o.hourly_cost) for o in options if o.kind == "on_demand")
    k, s = len(committed), len(spots)
    hours = w.sum()
    # layout: x (k) | y (k*n) | z (s*n) | o (n)
    size = k + k * n + s * n + n
    c = np.concatenate([[float(o.hourly_cost) * hours for o in committed]]
                       + [float(o.variable_cost) * w for o in committed]
                       + [float(o.hourly_cost) * w for o in spots] + [od * w])
    lower = np.zeros(size)
    upper = np.full(size, np.inf)
    for j, o in enumerate(committed):
        upper[j] = np.inf if o.max_units is None else o.max_units
    for i, o in enumerate(spots):
        upper[k + k * n + i * n: k + k * n + (i + 1) * n] = o.spot_capacity(d)
    rows = []
    # y_kt - x_k <= 0
    for j in range(k):
        block = sparse.hstack([sparse.csr_matrix(np.eye(1, k, j).repeat(n, 0) * -1),
                               sparse.csr_matrix((n, k * n)), sparse.csr_matrix((n, s * n + n))]).tolil()
        block[:, k + j * n: k + (j + 1) * n] = sparse.eye(n)
        rows.append(block.tocsr())
    capacity = sparse.vstack(rows) if rows else None
    balance = sparse.hstack([sparse.csr_matrix((n, k))] + [sparse.eye(n)] * (k + s + 1)).tocsr()
    constraints = [LinearConstraint(balance, d, d)]
    if capacity is not None:
        constraints.append(LinearConstraint(capacity, -np.inf, 0))
    integrality = np.zeros(size)
    if integral:
        integrality[:k] = 1
    res = milp(c, constraints=constraints, integrality=integrality, bounds=Bounds(lower, upper),
               options={"mip_rel_gap": 1e-12})
    assert res.success, res.message
    return res.fun, {o.name: round(res.x[j]) for j, o in enumerate(committed)}


def coupled_milp(pools, shared_plan=True, budget=None, integral=True):
    """Reference for coupled pools, written out hour by hour with explicit on-demand variables.

    Per pool p and hour t: y (one per committed option), z (one per spot option), u (plan coverage,
    if the pool has a plan rate), o (on-demand); y <= x, z <= cap, y + z + u + o = d, and per hour
    sum_p rate_p u <= S. Returns (objective, units per pool, S).
    """
    n = len(pools[0].demand)
    names, c, lower, upper, integrality = [], [], [], [], []

    def var(name, cost, up=np.inf, whole=False):
        names.append(name)
        c.append(cost)
        lower.append(0.0)
        upper.append(up)
        integrality.append(1 if whole and integral else 0)
        return len(names) - 1

    rows, cols, vals, lo, hi = [], [], [], [], []
    row = 0

    def constraint(entries, low, high):
        nonlocal row
        for col, val in entries:
            rows.append(row)
            cols.append(col)
            vals.append(val)
        lo.append(low)
        hi.append(high)
        row += 1

    s = var("S", float(n)) if shared_plan else None
    xs = {}
    plan_terms = [[] for _ in range(n)]
    for pool in pools:
        od = min(float(o.hourly_cost) for o in pool.options if o.kind == "on_demand")
        committed = [o for o in pool.options if o.committed]
        spots = [o for o in pool.options if o.kind == "spot"]
        for o in committed:
            xs[(pool.name, o.name)] = var(("x", pool.name, o.name), float(o.hourly_cost) * n,
                                          np.inf if o.max_units is None else o.max_units, whole=True)
        for t in range(n):
            d = float(pool.demand[t])
            entries = []
            for o in committed:
                y = var("y", float(o.variable_cost))
                constraint([(y, 1.0), (xs[(pool.name, o.name)], -1.0)], -np.inf, 0.0)
                entries.append((y, 1.0))
            for o in spots:
                entries.append((var("z", float(o.hourly_cost), float(o.spot_capacity(np.array([d]))[0])), 1.0))
            if shared_plan and pool.plan_rate is not None:
                u = var("u", 0.0)
                entries.append((u, 1.0))
                plan_terms[t].append((u, float(pool.plan_rate)))
            entries.append((var("o", od), 1.0))
            constraint(entries, d, d)
    if shared_plan:
        for t in range(n):
            constraint(plan_terms[t] + [(s, -1.0)], -np.inf, 0.0)
    if budget is not None:
        constraint([(xs[(p.name, o.name)], float(o.upfront)) for p in pools for o in p.options
                    if o.committed and o.upfront], -np.inf, budget)
    a = sparse.csr_matrix((vals, (rows, cols)), shape=(row, len(names)))
    res = milp(np.array(c), constraints=[LinearConstraint(a, lo, hi)], integrality=np.array(integrality),
               bounds=Bounds(np.array(lower), np.array(upper)), options={"mip_rel_gap": 1e-12})
    assert res.success, res.message
    units = {p.name: {o.name: round(res.x[xs[(p.name, o.name)]]) for o in p.options if o.committed}
             for p in pools}
    return res.fun, units, (res.x[s] if shared_plan else 0.0)
