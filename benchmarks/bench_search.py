"""Speed of the sizing search: candidate configurations (GPU x precision x TP x replicas) per second.

Goal: at least 100,000 candidates per second on one core. Three figures:

1. end to end, ``finops.sizing.search`` on every preset over all catalog GPUs (memory fits, the
   vectorized latency/queueing pass, pricing and ranking), with the price book loaded once. Candidates
   are the whole search space; ``evaluated`` those that went through the queueing model (the others
   were settled without it: a smaller replica count already met the SLOs, the configuration misses a
   target even idle, or it cannot reach the top ranks);
2. the same for the workbook's ``LLM_SIZE`` call (Llama-3.1-8B, 5000/500 tokens, 50 concurrent, TTFT
   1 s at P99, every GPU and precision, top 5) on a series of new concurrencies;
3. the vectorized core alone, :func:`finops.sizing.queueing.operating_point` over a large grid.

Run: ``python benchmarks/bench_search.py`` (BLAS threads are pinned to one; times are CPU seconds of
this process, best of three).

Last run 2026-12-03, load average 0.6 on 2 cores: all presets 37,720 candidates in 0.030 s; the
``LLM_SIZE`` search 4.0 ms mean (the whole ``LLM_SIZE`` call, with the Prices range, is timed by
``bench_udfs.py``: 4.0 ms, goal 5 ms); the core 0.77 million candidates per second.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time

import numpy as np

from finops.catalog import accelerators, get_model
from finops.price_book import PriceBook
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import ReplicaPhysics, replica_physics
from finops.sizing.queueing import operating_point
from finops.sizing.search import search
from finops.sizing.workload import Workload, presets


def _best_of(runs: int, fn):
    best = float("inf")
    result = None
    for _ in range(runs):
        start = time.process_time()     # CPU time of this process: robust to other load on the machine
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def end_to_end() -> None:
    book = PriceBook.current()
    print(f"{'preset':32} {'candidates':>10} {'evaluated':>10} {'seconds':>8} {'per second':>12} options")
    total_candidates, total_evaluated, total_seconds = 0, 0, 0.0
    for name in presets():
        workload = presets()[name]
        seconds, result = _best_of(3, lambda w=workload: search(w, gpus=list(accelerators()), price_book=book))
        total_candidates += result.candidates
        total_evaluated += result.evaluated
        total_seconds += seconds
        print(f"{name:32} {result.candidates:>10,} {result.evaluated:>10,} {seconds:>8.3f} "
              f"{result.candidates / seconds:>12,.0f} {len(result.options)}")
    print(f"{'all presets':32} {total_candidates:>10,} {total_evaluated:>10,} {total_seconds:>8.3f} "
          f"{total_candidates / total_seconds:>12,.0f}")


def excel_size(calls: int = 40) -> None:
    book = PriceBook.current()
    loads = [Workload(name="LLM_SIZE", model="llama-3.1-8b", isl=5000, osl=500, concurrency=c, ttft_ms=1000)
             for c in range(30, 30 + calls)]
    search(loads[0], price_book=book, top=5)        # the candidate table of the model, built once
    start = time.process_time()
    results = [search(w, price_book=book, top=5) for w in loads]
    seconds = (time.process_time() - start) / calls
    candidates = sum(r.candidates for r in results) / calls
    evaluated = sum(r.evaluated for r in results) / calls
    print(f"{'LLM_SIZE workloads (mean)':32} {candidates:>10,.0f} {evaluated:>10,.0f} {seconds:>8.4f} "
          f"{candidates / seconds:>12,.0f} 5")


def core(replicas_per_combo: int = 2000) -> None:
    model = get_model("llama-3.1-70b")
    constants = Calibration.bundled().constants("vllm")
    rows = [replica_physics(model, gpu, precision=p, tp=tp)
            for gpu in accelerators().values() for p in ("bf16", "fp8", "int4") if gpu.supports(p)
            for tp in (1, 2, 4, 8)]
    n = len(rows) * replicas_per_combo
    phys = ReplicaPhysics(**{f: np.repeat([getattr(r, f) for r in rows], replicas_per_combo)
                             for f in ReplicaPhysics.__dataclass_fields__})
    rate = np.tile(20.0 / np.arange(1, replicas_per_combo + 1), len(rows))
    seconds, _ = _best_of(3, lambda: operating_point(phys, constants, arrival_rate=rate, isl=2048, osl=512,
                                                     max_batch=256))
    print(f"vectorized core: {n:,} candidates in {seconds:.3f} s = {n / seconds:,.0f} per second")


if __name__ == "__main__":
    end_to_end()
    excel_size()
    core()
