"""The search's candidate table: every GPU x precision x TP an engine runs a model on, built once.

Nothing in it depends on the workload's traffic, so it is cached per (model, GPUs, precisions, TP
degrees, engine, calibration, KV precision): a workbook that sizes many workloads of one model, or
recalculates one with new request sizes, rebuilds none of it. Per row it holds what
:func:`~finops.sizing.memory.memory_fit` and :func:`~finops.sizing.performance.replica_physics` compute
without the workload (weights and KV budget per GPU, KV bytes per token per GPU, the replica physics
as stacked arrays); :meth:`CandidateTable.fit` then finishes the memory fit of every row for a
request size in one vectorized step, with the same arithmetic as ``memory_fit``::

    kv_budget = memory x 0.90 - weights / tp - runtime overhead      (per GPU, cached)
    max_concurrency = floor(kv_budget / (kv_per_token_per_gpu x sequence_tokens(isl + osl)))

>>> from finops.catalog import get_model
>>> from finops.sizing.performance import Calibration
>>> table = candidate_table(get_model("llama-3.1-70b"), ("h100-sxm",), ("bf16", "fp8"), (1, 2, 4, 8), "vllm",
...                         Calibration.bundled())
>>> len(table), table.label(0)
(8, 'h100-sxm bf16 TP1')
>>> slots, short = table.fit(2048, 512)
>>> int(slots[0]), round(float(short[0]), 1), int(slots[1]) > 0
(0, 62.9, True)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..catalog import ModelSpec, get_accelerator
from .engine_constants import Calibration, model_class
from .engine_defaults import default_kv_precision, engine_defaults
from .memory import (
    DEFAULT_RUNTIME_OVERHEAD_GIB,
    kv_bytes_per_token_per_gpu,
    kv_slots,
    sequence_tokens,
    weight_bytes_per_gpu,
)
from .performance import ReplicaPhysics, kernel_share, replica_physics
from .support import supports
from .vendor_efficiency import VendorEfficiency

__all__ = ["CandidateTable", "candidate_table", "clear_candidate_tables"]

_GIB = 2.0**30
_GPU_MEMORY_UTILIZATION = 0.90   # memory_fit's default (vLLM's gpu_memory_utilization)
_CACHE_SIZE = 32


@dataclass(frozen=True)
class CandidateTable:
    """Rows of (GPU, precision, TP) in search order, with their workload-independent memory and physics."""

    model: ModelSpec
    gpus: tuple[str, ...]
    precisions: tuple[str, ...]
    tps: tuple[int, ...]
    calibrated: tuple[bool, ...]
    efficiency_sources: tuple[str, ...]  # "engine", or the vendor fit whose eta_bw and eta_c the row uses
    # which measurements answer the row (Calibration.evidence; its range judged at a batch of one), and the family
    # fit whose span the running batch is checked against and whose eta_bw, eta_c it uses (None: the engine's)
    evidence: tuple[dict[str, Any], ...]
    family_fits: tuple[VendorEfficiency | None, ...]
    # held-out ratio measured / modelled at P10 and P90 of (TTFT, TPOT, output tokens/s) for the row's class
    # (Calibration.band_ratios: engine, model class, TP, reach, family fit); None where the calibration has none
    band_ratios: tuple[tuple[tuple[float, float] | None, ...], ...]
    reaches: tuple[str, ...]             # how far each row extrapolates (finops.sizing.bands)
    weights_gib_per_gpu: np.ndarray
    max_batch: np.ndarray                # sequences the engine's scheduler runs at once on that GPU
    kv_budget_gib: np.ndarray            # per GPU, before any sequence (negative: the weights overflow)
    kv_bytes_per_token_per_gpu: np.ndarray
    physics: ReplicaPhysics              # fields are arrays, one value per row
    skipped: tuple[str, ...]             # "gpu precision" the engine does not run (or is not calibrated for)
    # the search's factors per (calibration, engine, confidence), worked out once (finops.sizing.confidence)
    factors: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.gpus)

    def label(self, row: int) -> str:
        return f"{self.gpus[row]} {self.precisions[row]} TP{self.tps[row]}"

    def fit(self, isl: int, osl: int, context_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per row: sequences of ``isl + osl`` tokens the replica holds, and the GiB per GPU short of one
        (``context_length``: the engine's, where it extends the model's native context)."""
        per_sequence = self.kv_bytes_per_token_per_gpu * sequence_tokens(self.model, isl, osl, context_length)
        return kv_slots(self.kv_budget_gib, per_sequence)

    def physics_of(self, rows: np.ndarray) -> ReplicaPhysics:
        """The stacked physics of some rows (an index array), in that order."""
        return ReplicaPhysics(**{f.name: getattr(self.physics, f.name)[rows] for f in fields(ReplicaPhysics)})


_tables: OrderedDict[tuple[Any, ...], tuple[Calibration, CandidateTable]] = OrderedDict()


def candidate_table(model: ModelSpec, gpus: Sequence[str], precisions: Sequence[str], tps: Sequence[int],
                    engine: str, calibration: Calibration, *, calibrated_only: bool = False,
                    kv_precision: str | None = None) -> CandidateTable:
    """The candidate table, from the cache when this model and these constraints were seen before.

    ``gpus`` are catalog ids, ``precisions`` lower case, ``tps`` the degrees that shard the model's
    heads. FP16 is left out when BF16 is also asked for (it sizes and runs exactly like BF16). The cache
    holds the last 32 tables; a calibration is matched by identity (the bundled one is a singleton).
    """
    key = (model, tuple(gpus), tuple(precisions), tuple(tps), engine, id(calibration), calibrated_only,
           kv_precision)
    held = _tables.get(key)
    if held is not None and held[0] is calibration:
        _tables.move_to_end(key)
        return held[1]
    table = _build(model, key[1], key[2], key[3], engine, calibration, calibrated_only, kv_precision)
    _tables[key] = (calibration, table)
    while len(_tables) > _CACHE_SIZE:
        _tables.popitem(last=False)
    return table


def _build(model: ModelSpec, gpus: tuple[str, ...], precisions: tuple[str, ...], tps: tuple[int, ...], engine: str,
           calibration: Calibration, calibrated_only: bool, kv_precision: str | None) -> CandidateTable:
    rows: list[tuple[str, str, int, bool, str, Any, VendorEfficiency | None, str]] = []
    skipped: list[str] = []
    kind = model_class(model)
    batch_limits: list[int] = []
    weights: list[float] = []
    budgets: list[float] = []
    kv_per_token: list[float] = []
    physics: list[ReplicaPhysics] = []
    evidence: list[dict[str, Any]] = []
    for gpu_id in gpus:
        device = get_accelerator(gpu_id)
        vendor = calibration.vendor_efficiency(engine, device)
        source = calibration.efficiency_source(engine, device)
        reach = calibration.reach(engine, device)
        for precision in precisions:
            if not device.supports(precision) or (precision == "fp16" and "bf16" in precisions):
                continue
            covered = [calibration.covers(engine, gpu_id, precision, kind, tp, model.active_params_b) for tp in tps]
            if not supports(engine, gpu_id, precision) or (calibrated_only and not any(covered)):
                skipped.append(f"{gpu_id} {precision}")
                continue
            kv_p = kv_precision or default_kv_precision(engine, precision)
            defaults = engine_defaults(engine, device)
            for tp, calibrated in zip(tps, covered):
                if calibrated_only and not calibrated:
                    continue
                weights_gib = weight_bytes_per_gpu(model, device, precision, tp) / _GIB
                ratios = tuple(calibration.band_ratios(engine, metric, kind, vendor, tp=tp, reach=reach)
                               for metric in ("ttft_ms", "tpot_ms", "output_tokens_per_s"))
                rows.append((gpu_id, precision, tp, calibrated, source, ratios, vendor, reach))
                batch_limits.append(defaults.max_batch)
                weights.append(weights_gib)
                if defaults.kv_of_free_memory:   # memory_fit's two forms of the KV share
                    budgets.append((device.memory_gib_usable - weights_gib - DEFAULT_RUNTIME_OVERHEAD_GIB)
                                   * _GPU_MEMORY_UTILIZATION)
                else:
                    budgets.append(device.memory_gib_usable * _GPU_MEMORY_UTILIZATION - weights_gib
                                   - DEFAULT_RUNTIME_OVERHEAD_GIB)
                kv_per_token.append(kv_bytes_per_token_per_gpu(model, tp, kv_p, device))
                physics.append(replica_physics(model, device, precision=precision, tp=tp, kv_precision=kv_p,
                                               prefill_token_budget=defaults.prefill_token_budget, engine=engine,
                                               efficiency=vendor))
                kernels = bool(kernel_share(physics[-1], calibration.constants(engine)))
                evidence.append(calibration.evidence(engine, device, precision=precision, model_class=kind, tp=tp,
                                                     active_params_b=model.active_params_b, batch=1.0,
                                                     vendor=vendor, kernels=kernels))
    stacked = ReplicaPhysics(**{f.name: np.array([getattr(p, f.name) for p in physics], dtype=float)
                                for f in fields(ReplicaPhysics)})
    return CandidateTable(model=model, gpus=tuple(r[0] for r in rows), precisions=tuple(r[1] for r in rows),
                          tps=tuple(r[2] for r in rows), calibrated=tuple(r[3] for r in rows),
                          efficiency_sources=tuple(r[4] for r in rows), band_ratios=tuple(r[5] for r in rows),
                          evidence=tuple(evidence), family_fits=tuple(r[6] for r in rows),
                          reaches=tuple(r[7] for r in rows),
                          weights_gib_per_gpu=np.array(weights, dtype=float),
                          max_batch=np.array(batch_limits, dtype=float), kv_budget_gib=np.array(budgets, dtype=float),
                          kv_bytes_per_token_per_gpu=np.array(kv_per_token, dtype=float), physics=stacked,
                          skipped=tuple(skipped))


def clear_candidate_tables() -> None:
    """Forget every cached table (benchmarks measure a first call with it; results never depend on it)."""
    _tables.clear()
