"""Size for the risk a planner accepts: each configuration judged as slow as its own error band allows.

The performance model is right on average and wrong by a known spread, which depends on how far an
estimate extrapolates (:mod:`finops.sizing.bands`: an H100 the engine was measured on, an A100 whose
kernels were measured, an Inferentia2 answered by NVIDIA constants). A search at confidence ``p``
judges every configuration as if the model were as optimistic there as the ``p``-quantile of its own
class's held-out error::

    k_ttft(p) = quantile p of measured / modelled TTFT       TTFT judged as  modelled x k_ttft(p)
    k_tpot(p) = quantile p of measured / modelled TPOT       ITL judged as   modelled x k_tpot(p)
    k_load(p) = 1 / quantile (1 - p) of measured / modelled throughput

A replica ``k`` times slower than modelled behaves like the modelled one under ``k`` times the load,
with every latency ``k`` times longer (time dilation: the fixed point ``b = lambda (TTFT + (osl - 1)
TPOT)`` is unchanged when every time is scaled by ``k`` and ``lambda`` by ``k``), so an arrival-rate
workload is sized at ``k_load x`` its rate; a closed population runs the same batch either way, only
slower. At ``p = 0.9`` (:data:`DEFAULT_CONFIDENCE`) a configuration passes only if it meets the
targets at the pessimistic end of its P10-P90 band: where the band is wide it needs more replicas, and
it never ranks first on optimism its class's held-out error cannot back. ``p = 0.5`` sizes at the
median; a ``k`` below 1 (the model pessimistic there) loosens the target, as the error says.

>>> from finops.catalog import get_model
>>> from finops.sizing.candidates import candidate_table
>>> from finops.sizing.engine_constants import Calibration
>>> table = candidate_table(get_model("llama-3.1-8b"), ("h100-sxm", "inferentia2"), ("bf16",), (1,), "vllm",
...                         Calibration.bundled())
>>> p = pessimism(table, Calibration.bundled(), "vllm", 0.9)
>>> table.reaches, bool(p.tpot[1] > p.tpot[0] > 1.0), bool(p.load[1] > p.load[0])
(('measured', 'fitted'), True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .engine_constants import Calibration, model_class

__all__ = ["DEFAULT_CONFIDENCE", "Pessimism", "check_confidence", "pessimism"]

#: The confidence ``finops size`` sizes at unless told: the pessimistic end of each option's P10-P90 band.
DEFAULT_CONFIDENCE = 0.9


@dataclass(frozen=True)
class Pessimism:
    """Per candidate row, the factors a search applies at one confidence (module formulas); 1 where the
    calibration has no band."""

    ttft: np.ndarray
    tpot: np.ndarray
    load: np.ndarray

    def at(self, rows: Any) -> Pessimism:
        """The factors of some rows (an index array), in that order."""
        return Pessimism(self.ttft[rows], self.tpot[rows], self.load[rows])

    @staticmethod
    def none(n: int) -> Pessimism:
        """The model's own figures for ``n`` rows (every factor 1)."""
        return Pessimism(np.ones(n), np.ones(n), np.ones(n))


def check_confidence(confidence: Any) -> float:
    """``confidence`` as a float in (0, 1), or :class:`InputError`."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be a number between 0 and 1 (exclusive), got {confidence!r}",
                         hint="0.9 sizes at the pessimistic end of each option's P10-P90 band (the default); "
                              "0.5 at its median")
    return float(confidence)


def pessimism(table: Any, calibration: Calibration, engine: str, confidence: float | None) -> Pessimism:
    """The factors of every row of a :class:`~finops.sizing.candidates.CandidateTable` at ``confidence``
    (``None``: the model's own figures), each from its own class's band (:meth:`Calibration.band`)."""
    if confidence is None:
        return Pessimism.none(len(table))
    level = check_confidence(confidence)
    key = (id(calibration), engine, level)
    held = table.factors.get(key)
    if held is not None:
        return held
    kind = model_class(table.model)
    columns: dict[tuple[Any, ...], tuple[float, float, float]] = {}
    values = []
    for vendor, tp, reach in zip(table.family_fits, table.tps, table.reaches):
        cls = (None if vendor is None else vendor.key, tp, reach)
        if cls not in columns:
            ratios = [calibration.band(engine, metric, q, kind, vendor, tp=tp, reach=reach)
                      for metric, q in (("ttft_ms", level), ("tpot_ms", level), ("output_tokens_per_s", 1.0 - level))]
            ttft, tpot, rate = (1.0 if r is None else r for r in ratios)
            columns[cls] = (ttft, tpot, 1.0 / rate)
        values.append(columns[cls])
    array = np.array(values, dtype=float).reshape(len(values), 3)
    out = Pessimism(array[:, 0].copy(), array[:, 1].copy(), array[:, 2].copy())
    table.factors[key] = out
    return out
