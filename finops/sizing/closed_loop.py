"""The wait of a closed loop of clients at one server: Schweitzer-Bard mean-value analysis.

A load test at fixed concurrency ``c`` (``vllm bench serve --max-concurrency``, GenAI-Perf/AIPerf
``--concurrency``, AIConfigurator's silicon runs) is a closed system: each of ``c`` clients sends a
request, waits for it to finish, and sends the next. Such a system is not an open queue: a client
never waits behind more than the ``c - 1`` others, and one client alone never waits at all. Exact
mean-value analysis (Reiser and Lavenberg, 1980) needs a loop over 1..c; the Schweitzer-Bard
approximation (Schweitzer 1979; Bard 1979) replaces the queue an arrival sees, ``Q(c - 1)``, by
``Q(c) (c - 1) / c``, which for one server with service ``S`` and think time ``Z`` (here: the rest
of a request's cycle) closes into a quadratic::

    R = S (1 + (c - 1) / c x Q),   Q = c R / (R + Z)   =>   R^2 + (Z - c S) R - S Z = 0
    R = ((c S - Z) + sqrt((c S - Z)^2 + 4 S Z)) / 2,     wait = R - S

``wait`` is 0 at ``c = 1`` and at most ``(c - 1) S`` (reached when ``Z = 0``: every client queued).

>>> closed_loop_wait(1, 0.1, 2.0), closed_loop_wait(8, 0.1, 0.0)
(0.0, 0.7000000000000001)
>>> 0.0 < closed_loop_wait(32, 0.1, 2.0) < 31 * 0.1
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["closed_loop_wait"]


def closed_loop_wait(clients: Any, service_s: Any, think_s: Any) -> Any:
    """Mean seconds a client waits for the server, ``R - S`` of the module formula; arrays broadcast."""
    c = np.maximum(np.asarray(clients, dtype=float), 1.0)
    s = np.asarray(service_s, dtype=float)
    z = np.maximum(np.asarray(think_s, dtype=float), 0.0)
    excess = c * s - z
    response = (excess + np.sqrt(excess * excess + 4.0 * s * z)) / 2.0
    wait = np.clip(response - s, 0.0, (c - 1.0) * s)
    return wait if wait.ndim else float(wait)
