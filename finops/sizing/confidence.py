"""Size for the risk a planner accepts: SLO targets tightened by the model's held-out error.

The performance model is right on average and wrong by a known spread: the calibration keeps, per
engine, quantiles of the ratio measured / modelled on rows of models the fit never saw
(:meth:`~finops.sizing.engine_constants.Calibration.band`). To buy a fleet that meets a target even when
the model is as optimistic as its ``p``-quantile held-out error, the search is run against::

    ttft_target' = ttft_target / k_ttft(p)        k(p) = quantile p of measured / modelled
    itl_target'  = itl_target / k_tpot(p)

so a configuration passes only if ``modelled x k(p) <= target``. With ``p = 0.9``, nine in ten
held-out configurations measured no slower than that. A ``k(p)`` below 1 (the model is pessimistic
there) loosens the target: the error band says so, and buying for it would waste money.

When every accelerator searched is answered by one vendor's efficiencies (``--gpus mi300x``:
:meth:`~finops.sizing.engine_constants.Calibration.vendor_efficiency`), ``k`` is that vendor's held-out ratio
for the metrics its published rows report (the band ``estimate`` shows there); otherwise, and for the
other metrics, the engine's. A search over several vendors keeps the engine's: the targets are one per
search.

>>> from finops.sizing.workload import presets
>>> from finops.sizing.performance import Calibration
>>> base = presets()["seed002-financial-copilot"]
>>> tight = at_confidence(base, Calibration.bundled(), "vllm", 0.9)
>>> tight.ttft_ms < base.ttft_ms, tight.name == base.name
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..catalog import get_accelerator
from ..errors import InputError
from .engine_constants import Calibration, model_class
from .workload import Workload

__all__ = ["at_confidence"]


def at_confidence(workload: Workload, calibration: Calibration, engine: str, confidence: float,
                  gpus: Sequence[str] = ()) -> Workload:
    """``workload`` with its TTFT and ITL targets divided by the ``confidence`` quantile of held-out
    measured / modelled TTFT and TPOT of ``engine`` and the workload's model class, or of the one vendor
    whose efficiencies answer on every GPU of ``gpus`` (module formula)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be a number between 0 and 1 (exclusive), got {confidence!r}",
                         hint="0.9 sizes for the model's 90th-percentile held-out error; 0.5 for its median")
    kind = model_class(workload.model_spec())
    keys = {None if (v := calibration.vendor_efficiency(engine, get_accelerator(g))) is None else v.key for g in gpus}
    vendor = calibration.vendors.get(next(iter(keys))) if len(keys) == 1 else None   # one vendor answers on all
    factors = {metric: calibration.band(engine, metric, float(confidence), kind, vendor)
               for metric in ("ttft_ms", "tpot_ms")}
    if None in factors.values():
        raise InputError(f"the calibration has no held-out error bands for {engine}, so it cannot size at a "
                         "confidence", hint="use the bundled calibration, or refit from it with `finops calibrate`")
    ttft = None if workload.ttft_ms is None else workload.ttft_ms / factors["ttft_ms"]
    itl = None if workload.itl_ms is None else workload.itl_ms / factors["tpot_ms"]
    return replace(workload, ttft_ms=ttft, itl_ms=itl)
