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
    return res.fun, {o.name: int(round(res.x[j])) for j, o in enumerate(committed)}
