"""The performance model on every bundled published row, held out, per source and accelerator family.

Rows on accelerators the kernel tables cover (TensorRT-LLM's performance overviews on A100, H100, H200,
L40S, RTX PRO 6000) are never fitted on: their error is the product's as it ships. Rows a family fit learns
from (:func:`finops.sizing.published.fittable`: Neuron's Inferentia2 tables, AMD's MI300X results, the H20 under
SGLang, the A10G under vLLM and TGI) are each
predicted by a fit that never saw their source, or their model where a family has one source
(:func:`finops.sizing.published.held_out`). A row the product refuses (a context beyond the model's, a
precision the catalog lacks) is counted as refused. Then the accelerator families the catalog holds, with
whether a fit of their own answers them, and the fitted families' rows with the family left out (the engine's
efficiencies, which is what a family without rows of its own gets).

Prints, per source, family and metric: rows, refused, median absolute relative error, median ratio
modelled / published; then per family and metric, and overall per metric. The goals on sources never fitted
are 15 % throughput, 20 % TPOT, 25 % TTFT.

Run: ``python benchmarks/bench_published.py`` (about a minute: the held-out family fits).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import replace

import numpy as np

from finops.catalog import accelerators, get_accelerator
from finops.sizing.engine_constants import Calibration
from finops.sizing.published import answerable, family_gpus, fittable, held_out, predict, published_rows

#: A request latency at the rows' long outputs is decode time: it is read with TPOT.
_METRIC = {"request_latency_ms": "tpot_ms"}


def ratios() -> tuple[list, np.ndarray]:
    """Every bundled row and its ratio modelled / published (NaN where refused), held out where fitted."""
    rows = published_rows()
    bundled = Calibration.bundled()
    out = np.full(len(rows), np.nan)
    fit_rows = fittable(rows)
    fitted = {id(r) for r in fit_rows}
    held = held_out(fit_rows, replace(bundled, vendors={}))   # published / modelled
    for r, ratio in zip(fit_rows, held):
        out[rows.index(r)] = 1.0 / ratio
    for i, r in enumerate(rows):
        if id(r) not in fitted and answerable(r):
            out[i] = float(predict([r], bundled)[0]) / r.value
    return rows, out


def _line(label: str, values: np.ndarray) -> str:
    known = values[~np.isnan(values)]
    head = f"{label:62} {len(values):5} {len(values) - len(known):5}"
    if not len(known):
        return head
    return head + f" {np.median(np.abs(known - 1.0)) * 100:8.1f} % {np.median(known):8.2f}"


def main() -> None:
    start = time.perf_counter()
    rows, out = ratios()
    family = [get_accelerator(r.gpu).family for r in rows]
    metric = [_METRIC.get(r.metric, r.metric) for r in rows]
    print(f"{'source / family / metric':62} {'rows':>5} {'refsd':>5} {'median err':>10} {'ratio':>8}")
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[(r.source_id, family[i], metric[i])].append(i)
    for key in sorted(groups):
        print(_line(" / ".join(key), out[groups[key]]))
    print()
    by_family: dict[tuple, list[int]] = defaultdict(list)
    for i in range(len(rows)):
        by_family[(family[i], metric[i])].append(i)
    for key in sorted(by_family):
        print(_line(" / ".join(key), out[by_family[key]]))
    print()
    for m in sorted(set(metric)):
        print(_line(f"all / {m}", out[[i for i in range(len(rows)) if metric[i] == m]]))
    print()
    bundled = Calibration.bundled()
    fit_rows = fittable(rows)
    engine_only = predict(fit_rows, replace(bundled, vendors={})) / np.array([r.value for r in fit_rows])
    print("the fitted families left out (the engine's efficiencies answer their rows, as for a family without rows)")
    left: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(fit_rows):
        left[(get_accelerator(r.gpu).family, _METRIC.get(r.metric, r.metric))].append(i)
    for key in sorted(left):
        print(_line(" / ".join(key) + " / family out", engine_only[left[key]]))
    print()
    print("accelerator families: fit of their own (rows), or none")
    for fam in sorted({a.family for a in accelerators().values()}):
        fits = [v for v in bundled.vendors.values() if v.family == fam]
        tables = [a.id for a in accelerators().values() if a.family == fam and a.id not in family_gpus(fam)]
        what = ", ".join(f"{v.key} ({v.rows} rows of {', '.join(v.sources)})" for v in fits) or "none"
        print(f"  {fam:22} {what}" + (f"; kernel tables: {', '.join(tables)}" if tables else ""))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n{time.perf_counter() - start:.0f} s, load average {load:.1f}")


if __name__ == "__main__":
    main()
