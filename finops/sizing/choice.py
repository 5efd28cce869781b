"""One workload sized one way: the planner's own configuration checked, beside the cheapest that works.

Every face (the ``finops size`` command, the workbook's Sizing sheet through ``LLM_SIZING``, the
Python API ``finops.size``) answers a workload through :func:`size_workload`, so they give the same
fleet and cost:

* ``choice``: the planner's GPU x precision x TP, searched alone (:func:`~finops.sizing.search.search`
  with one GPU, one precision and one TP): its fewest replicas meeting the SLOs, deployed with spare and
  redundancy, on whole instances. When no replica count meets the targets, ``why_not`` says so in a
  few words ("misses TPOT 33 ms: 44 ms") and nothing is priced.
* ``best``: the cheapest configuration of the whole search (the first row of ``finops size``).

The latency in ``why_not`` is the configuration's idle figure (one request, no queue): the least it
can reach at any replica count, since every term of a decode step and the queueing delay only grow
with load (:mod:`finops.sizing.search`, ``_out_of_reach``).

>>> from finops.sizing.workload import presets
>>> sized = size_workload(presets()["seed003-customer-service"], gpu="a100-80gb", precision="int8", tp=1)
>>> sized.choice.meets_targets, sized.choice.option.gpus, sized.best.gpu, sized.best.gpus, sized.best.gpus_paid
(True, 694, 'a100-80gb', 204, 208)
>>> size_workload(presets()["seed002-drug-discovery-agent"], gpu="h100-sxm", precision="bf16", tp=1).choice.why_not
'misses TTFT 2000 ms: 2565 ms'
>>> size_workload(presets()["seed003-customer-service"], gpu="a10g", precision="bf16", tp=1).choice.why_not
'misses TPOT 33 ms at the P90 end of its band (fitted): 42 ms'

Every search sizes at the default confidence (:mod:`finops.sizing.confidence`): where the model meets a
target but the pessimistic end of the configuration's band does not, ``why_not`` says so, with that end's
idle figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..catalog import get_accelerator
from ..price_book import PriceBook
from .corrections import ThroughputCorrection, corrected_search
from .engine_constants import Calibration
from .memory import memory_fit
from .performance import estimate
from .search import SearchResult, SizingOption, search
from .support import supports
from .workload import Workload

__all__ = ["Choice", "WorkloadSizing", "device_noun", "size_workload"]

#: What an accelerator is called in labels, by vendor: Inferentia, Trainium and TPUs are chips.
_NOUNS = {"nvidia": "GPUs", "amd": "GPUs", "google": "chips", "aws": "chips"}


def device_noun(gpu: str) -> str:
    """``"GPUs"`` or ``"chips"``, as a label should count this accelerator.

    >>> device_noun("h100-sxm"), device_noun("inferentia2"), device_noun("tpu-v6e")
    ('GPUs', 'chips', 'chips')
    """
    return _NOUNS.get(get_accelerator(gpu).vendor, "accelerators")


@dataclass(frozen=True)
class Choice:
    """The planner's configuration and whether it meets the workload's targets."""

    gpu: str
    precision: str
    tp: int
    engine: str
    option: SizingOption | None     # priced deployment when it meets the targets
    why_not: str                    # "" when it meets them

    @property
    def meets_targets(self) -> bool:
        return self.option is not None

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "precision": self.precision, "tp": self.tp, "engine": self.engine,
                "meets_targets": self.meets_targets, "why_not": self.why_not,
                "deployment": None if self.option is None else self.option.to_dict()}


@dataclass(frozen=True)
class WorkloadSizing:
    """A workload's answer: the planner's choice checked, and the cheapest configuration that works."""

    workload: Workload
    choice: Choice
    search: SearchResult            # the whole search; ``best`` is its first option

    @property
    def best(self) -> SizingOption | None:
        return self.search.options[0] if self.search.options else None

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload.name, "choice": self.choice.to_dict(),
                "best": None if self.best is None else self.best.to_dict(),
                "best_reason": self.search.infeasible_reason}


def size_workload(workload: Workload, *, gpu: str, precision: str, tp: int, engine: str = "vllm",
                  pricing_model: str = "on_demand", price_book: PriceBook | None = None, top: int = 1,
                  calibration: Calibration | None = None,
                  correction: ThroughputCorrection | None = None) -> WorkloadSizing:
    """Check the planner's ``gpu`` x ``precision`` x ``tp`` and search for the cheapest configuration.

    ``top`` options of the whole search are kept (``WorkloadSizing.search.options``). ``correction``
    (the loop's realized / predicted throughput of this engine, GPU and model,
    :mod:`~finops.sizing.corrections`) sizes the planner's configuration for the throughput it delivered.
    """
    book = PriceBook.current() if price_book is None else price_book
    common: dict[str, Any] = {"engine": engine, "pricing_model": pricing_model, "price_book": book,
                              "calibration": calibration}
    gpu_id, precision = get_accelerator(gpu).id, precision.lower()
    own = corrected_search(workload, correction or ThroughputCorrection(), gpus=[gpu_id], precisions=[precision],
                           tps=[tp], top=1, **common)
    option = own.options[0] if own.options else None
    why_not = "" if option else _why_not(workload, gpu_id, precision, tp, engine, own, calibration)
    best = search(workload, top=top, **common)
    return WorkloadSizing(workload, Choice(gpu_id, precision, tp, engine, option, why_not), best)


def _why_not(workload: Workload, gpu: str, precision: str, tp: int, engine: str, own: SearchResult,
             calibration: Calibration | None) -> str:
    """A few words on why one configuration serves the workload at no replica count."""
    if not supports(engine, gpu, precision):
        return f"{engine} does not run {precision} on {gpu}"
    fit = memory_fit(workload.model, gpu, precision=precision, tp=tp, isl=workload.isl, osl=workload.osl,
                     kv_precision=workload.kv_precision, context_length=workload.context_length)
    if not fit.fits:
        return f"does not fit: short {fit.shortfall_gib:.1f} GiB per {device_noun(gpu)[:-1]}"
    if gpu in own.unpriced:
        return f"no {own.pricing_model} price for {gpu}"
    idle = estimate(workload.model, gpu, precision=precision, tp=tp, isl=workload.isl, osl=workload.osl,
                    concurrency=1, engine=engine, cache_hit_rate=workload.cache_hit_rate,
                    kv_precision=workload.kv_precision, calibration=calibration,
                    context_length=workload.context_length)
    figures = (("TTFT", workload.ttft_ms, idle.ttft_ms, idle.ttft_ms_band), ("TPOT", workload.itl_ms, idle.tpot_ms,
                                                                          idle.tpot_ms_band))
    misses = [f"misses {label} {target:.0f} ms: {reached:.0f} ms"
              for label, target, reached, _ in figures if target is not None and reached is not None and reached > target]
    if misses:
        return "; ".join(misses)
    level = f"P{round(own.confidence * 100)}" if own.confidence is not None else ""
    pessimistic = [f"misses {label} {target:.0f} ms at the {level} end of its band ({idle.extrapolation}): "
                   f"{reached * ratio:.0f} ms"
                   for label, target, reached, band in figures
                   if target is not None and reached is not None and band is not None and own.confidence is not None
                   and (ratio := _ratio_at(idle, label, own.confidence, calibration)) * reached > target]
    if pessimistic:
        return "; ".join(pessimistic)
    return f"misses the targets at {workload.slo_percentile.upper()} at every replica count searched"


def _ratio_at(idle: Any, label: str, confidence: float, calibration: Calibration | None) -> float:
    """The held-out ratio of ``idle``'s class at ``confidence`` for TTFT or TPOT (1 without a band)."""
    cal = calibration or Calibration.bundled()
    device = get_accelerator(idle.gpu)
    metric = {"TTFT": "ttft_ms", "TPOT": "tpot_ms"}[label]
    found = cal.band(idle.engine, metric, confidence, idle.model_class, cal.vendor_efficiency(idle.engine, device),
                     tp=idle.tp, reach=idle.extrapolation)
    return 1.0 if found is None else found
