"""Throughput corrections learnt from production and load tests, and the hook the sizing reads them by.

Each observation is ``ratio = realized / predicted`` generation tokens per GPU-hour for one
``(engine, GPU, model)``: a month of production (:mod:`finops.serving.realized`, labelled
``'2026-05'``) or a load test run that month (:mod:`finops.serving.load_tests`, labelled
``'2026-05 load test FILE'``); an observation recorded again replaces its ratio. The table is kept in
its own file (``throughput-corrections.json`` in the loop's history folder) and read by the sizing
path beside the performance model's constants (:class:`~finops.sizing.engine_constants.Calibration`).
With ``x_i = ln(ratio_i)`` over ``n`` observations:

    factor = exp(mean(x))                                  (the geometric mean ratio)
    band   = sqrt((B0^2 + sum((x_i - mean(x))^2)) / n) / sqrt(n)

``B0`` (:data:`PRIOR_BAND`) is the model's own relative uncertainty before any observation, counted as
one observation's spread, so the band is ``B0`` after one and narrows about as ``1 / n`` while they
agree (it widens when they scatter).

The hook (:meth:`ThroughputCorrection.apply`): a replica that delivers ``factor`` of the modelled
throughput serves ``factor`` of the modelled demand, so the search sizes the workload for its demand
divided by ``factor`` (the workload's ``growth`` over ``factor``: rate and concurrency alike);
:func:`corrected_search` is :func:`~finops.sizing.search.search` through it.

>>> table = CorrectionTable().with_ratio("vllm", "l40s", "llama-3.1-8b", "2026-05", 0.8)
>>> c = table.correction("vllm", "l40s", "llama-3.1-8b")
>>> round(c.factor, 3), c.band, c.sources
(0.8, 0.3, ('2026-05',))
>>> t2 = table.with_ratio("vllm", "l40s", "llama-3.1-8b", "2026-06", 0.8)
>>> round(t2.band("vllm", "l40s", "llama-3.1-8b"), 3), table.factor("sglang", "l4", "qwen3-8b")
(0.15, 1.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import InputError, Location
from ..files import write_atomically
from ..limits import json_document
from .workload import Workload

__all__ = ["CORRECTIONS_FILE", "PRIOR_BAND", "CorrectionTable", "ThroughputCorrection", "corrected_search"]

#: File name of the table in the history folder.
CORRECTIONS_FILE = "throughput-corrections.json"
#: Relative band of the performance model before any observation: an assumption of this module
#: (docs/loop.md), the spread of uncalibrated throughput predictions it starts from.
PRIOR_BAND = 0.30

Key = tuple[str, str, str]


@dataclass(frozen=True)
class ThroughputCorrection:
    """What the sizing applies for one ``(engine, GPU, model)``: the factor, its band, where it comes from."""

    factor: float = 1.0
    band: float = PRIOR_BAND
    sources: tuple[str, ...] = ()

    def apply(self, workload: Workload) -> Workload:
        """``workload`` with its demand over ``factor`` (module docstring).

        >>> from finops.sizing.workload import presets
        >>> w = presets()["seed003-customer-service"]
        >>> ThroughputCorrection(0.8).apply(w).growth == w.growth / 0.8
        True
        """
        return workload if self.factor == 1.0 else replace(workload, growth=workload.growth / self.factor)


def corrected_search(workload: Workload, correction: ThroughputCorrection, **search_options: Any):  # type: ignore[no-untyped-def]
    """:func:`~finops.sizing.search.search` for ``workload`` with the throughput the correction says is delivered."""
    from .search import search

    return search(correction.apply(workload), **search_options)


@dataclass(frozen=True)
class CorrectionTable:
    """``ratios[(engine, gpu, model)][source] = realized / predicted`` (source: a month, or a month's load test)."""

    ratios: Mapping[Key, Mapping[str, float]] = field(default_factory=dict)

    def with_ratio(self, engine: str, gpu: str, model: str, source: str, ratio: float) -> CorrectionTable:
        """A new table with ``source``'s ratio for the key (replacing one already there)."""
        if not ratio > 0 or not math.isfinite(ratio):
            raise InputError(f"a throughput ratio must be a positive number, got {ratio!r}")
        merged = {k: dict(v) for k, v in self.ratios.items()}
        merged.setdefault((engine, gpu, model), {})[source] = float(ratio)
        return CorrectionTable(merged)

    def with_ratios(self, ratios: Mapping[Key, float], source: str) -> CorrectionTable:
        """A new table with one ratio per key from ``source``."""
        table = self
        for key, ratio in ratios.items():
            table = table.with_ratio(*key, source, ratio)
        return table

    def months(self, engine: str, gpu: str, model: str) -> tuple[str, ...]:
        """The observations (months, load tests) the key's correction comes from, oldest first."""
        return tuple(sorted(self.ratios.get((engine, gpu, model), {})))

    def factor(self, engine: str, gpu: str, model: str) -> float:
        """Geometric mean of the key's ratios; 1 when none is known."""
        logs = [math.log(r) for r in self.ratios.get((engine, gpu, model), {}).values()]
        return math.exp(sum(logs) / len(logs)) if logs else 1.0

    def band(self, engine: str, gpu: str, model: str) -> float:
        """Relative error band of the corrected model (module docstring); :data:`PRIOR_BAND` with none."""
        logs = [math.log(r) for r in self.ratios.get((engine, gpu, model), {}).values()]
        if not logs:
            return PRIOR_BAND
        mean = sum(logs) / len(logs)
        spread = math.sqrt((PRIOR_BAND ** 2 + sum((x - mean) ** 2 for x in logs)) / len(logs))
        return spread / math.sqrt(len(logs))

    def correction(self, engine: str, gpu: str, model: str) -> ThroughputCorrection:
        """What the sizing applies for the key."""
        return ThroughputCorrection(self.factor(engine, gpu, model), self.band(engine, gpu, model),
                                    self.months(engine, gpu, model))

    def rows(self) -> Iterable[tuple[str, str, str, float, float, tuple[str, ...]]]:
        """``(engine, gpu, model, factor, band, sources)`` per key, sorted."""
        for key in sorted(self.ratios):
            yield (*key, self.factor(*key), self.band(*key), self.months(*key))

    @classmethod
    def read(cls, path: Path) -> CorrectionTable:
        """The table in ``path``; an empty one when the file does not exist yet."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            data = json_document(path.read_text(encoding="utf-8"))
            ratios = {(e["engine"], e["gpu"], e["model"]): {m: float(r) for m, r in e["months"].items()}
                      for e in data["corrections"]}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"cannot read the throughput corrections: {exc}", where=Location(file=str(path)),
                             hint=f"{CORRECTIONS_FILE} is written by `finops plan next`; move a damaged one away") from None
        return cls(ratios)

    def write(self, path: Path) -> Path:
        """Write the table as JSON (atomically), with what it is and where it comes from."""
        data = {"what": "realized / predicted generation tokens per GPU-hour, per month (production) and per "
                        "load test, per engine, GPU and model; measured by `finops plan next` (docs/loop.md)",
                "prior_band": PRIOR_BAND,
                "corrections": [{"engine": e, "gpu": g, "model": m, "months": dict(sorted(self.ratios[(e, g, m)].items()))}
                                for e, g, m in sorted(self.ratios)]}
        return write_atomically(Path(path), (json.dumps(data, indent=2) + "\n").encode())
