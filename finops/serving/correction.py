"""Throughput corrections learnt from production: realized over predicted, per engine, GPU and model.

Each month the review measures, per plan line, ``ratio = realized / predicted`` generation tokens per
GPU-hour (:mod:`~finops.serving.realized`). The table keeps one ratio per month per ``(engine, GPU,
model)`` (a month recorded again replaces its ratio), beside the performance model's constants but in
its own file (``throughput-corrections.json`` in the history folder). With ``x_i = ln(ratio_i)`` over
``n`` months:

    factor = exp(mean(x))                                  (the geometric mean ratio)
    band   = sqrt((B0^2 + sum((x_i - mean(x))^2)) / n) / sqrt(n)

``B0`` (:data:`PRIOR_BAND`) is the model's own relative uncertainty before any month, counted as one
observation's spread, so the band is ``B0`` after one month and narrows about as ``1 / n`` while the
months agree (it widens when they scatter). The sizing hook (:func:`corrected_rate`) divides the demand
a fleet must serve by ``factor``: a fleet that delivered 80 % of the predicted throughput needs
``1 / 0.8`` of the predicted capacity.

>>> table = CorrectionTable().with_ratio("vllm", "l40s", "llama-3.1-8b", "2026-05", 0.8)
>>> round(table.factor("vllm", "l40s", "llama-3.1-8b"), 3), table.band("vllm", "l40s", "llama-3.1-8b")
(0.8, 0.3)
>>> t2 = table.with_ratio("vllm", "l40s", "llama-3.1-8b", "2026-06", 0.8)
>>> round(t2.band("vllm", "l40s", "llama-3.1-8b"), 3), table.factor("sglang", "l4", "qwen3-8b")
(0.15, 1.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, Location
from ..files import write_atomically
from .realized import ServingMonth

__all__ = ["CORRECTIONS_FILE", "PRIOR_BAND", "CorrectionTable", "corrected_rate"]

#: File name of the table in the history folder.
CORRECTIONS_FILE = "throughput-corrections.json"
#: Relative band of the performance model before any month is measured: an assumption of this
#: module (docs/loop.md), the spread of uncalibrated throughput predictions it starts from.
PRIOR_BAND = 0.30

Key = tuple[str, str, str]


@dataclass(frozen=True)
class CorrectionTable:
    """``ratios[(engine, gpu, model)][month] = realized / predicted``."""

    ratios: Mapping[Key, Mapping[str, float]] = field(default_factory=dict)

    def with_ratio(self, engine: str, gpu: str, model: str, month: str, ratio: float) -> CorrectionTable:
        """A new table with ``month``'s ratio for the key (replacing one already there)."""
        if not ratio > 0 or not math.isfinite(ratio):
            raise InputError(f"a throughput ratio must be a positive number, got {ratio!r}")
        key = (engine, gpu, model)
        merged = {k: dict(v) for k, v in self.ratios.items()}
        merged.setdefault(key, {})[month] = float(ratio)
        return CorrectionTable(merged)

    def with_month(self, month: ServingMonth) -> CorrectionTable:
        """A new table with the ratio of every realized line that has one (lines of one key: mean of logs)."""
        logs: dict[Key, list[float]] = {}
        for line in month.lines:
            if line.throughput_ratio:
                logs.setdefault((line.line.engine, line.line.gpu, line.line.model), []).append(
                    math.log(line.throughput_ratio))
        table = self
        for (engine, gpu, model), values in logs.items():
            table = table.with_ratio(engine, gpu, model, month.month, math.exp(sum(values) / len(values)))
        return table

    def months(self, engine: str, gpu: str, model: str) -> tuple[str, ...]:
        """The months the key's correction comes from, oldest first."""
        return tuple(sorted(self.ratios.get((engine, gpu, model), {})))

    def factor(self, engine: str, gpu: str, model: str) -> float:
        """Geometric mean of the key's monthly ratios; 1 when no month is known."""
        logs = [math.log(r) for r in self.ratios.get((engine, gpu, model), {}).values()]
        return math.exp(sum(logs) / len(logs)) if logs else 1.0

    def band(self, engine: str, gpu: str, model: str) -> float:
        """Relative error band of the corrected model (see the module docstring); :data:`PRIOR_BAND` with none."""
        logs = [math.log(r) for r in self.ratios.get((engine, gpu, model), {}).values()]
        if not logs:
            return PRIOR_BAND
        mean = sum(logs) / len(logs)
        spread = math.sqrt((PRIOR_BAND ** 2 + sum((x - mean) ** 2 for x in logs)) / len(logs))
        return spread / math.sqrt(len(logs))

    def rows(self) -> Iterable[tuple[str, str, str, float, float, tuple[str, ...]]]:
        """``(engine, gpu, model, factor, band, months)`` per key, sorted."""
        for key in sorted(self.ratios):
            yield (*key, self.factor(*key), self.band(*key), self.months(*key))

    @classmethod
    def read(cls, path: Path) -> CorrectionTable:
        """The table in ``path``; an empty one when the file does not exist yet."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            ratios = {(e["engine"], e["gpu"], e["model"]): {m: float(r) for m, r in e["months"].items()}
                      for e in data["corrections"]}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"cannot read the throughput corrections: {exc}", where=Location(file=str(path)),
                             hint=f"{CORRECTIONS_FILE} is written by `finops plan next`; move a damaged one away") from None
        return cls(ratios)

    def write(self, path: Path) -> Path:
        """Write the table as JSON (atomically), with what it is and where it comes from."""
        data = {"what": "realized / predicted generation tokens per GPU-hour, per month, per engine, GPU and "
                        "model; measured by `finops plan next` from serving metrics (docs/loop.md)",
                "prior_band": PRIOR_BAND,
                "corrections": [{"engine": e, "gpu": g, "model": m, "months": dict(sorted(self.ratios[(e, g, m)].items()))}
                                for e, g, m in sorted(self.ratios)]}
        return write_atomically(Path(path), (json.dumps(data, indent=2) + "\n").encode())


def corrected_rate(demand_per_hour: float, factor: float) -> float:
    """The sizing hook: the demand a fleet must be sized for when it delivers ``factor`` of the model.

    >>> corrected_rate(1000.0, 0.8)
    1250.0
    """
    return demand_per_hour / factor
