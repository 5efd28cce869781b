"""Time one call of each Excel function of the add-in (goal: about a millisecond) and one template build.

Run: ``python benchmarks/bench_udfs.py``. Prints the median and 90th-percentile wall time per call over
repeated calls with the arguments the template uses (warm caches, as in a recalculating workbook),
the first (cold) FINOPS_PRICE call on the full bundled Prices table, and LLM_SIZE three ways:

* cold, new model: the first call for a model (the GPU x precision x TP candidate table is built);
* cold, new workload: a model already sized, new request sizes or concurrency (the table is reused,
  the search runs);
* warm: the same arguments again (Excel recalculating; the add-in remembers the answer).

Every LLM_SIZE call here passes the full Prices table (3,712 rows), as the template does; comparing that
range with the ranges already parsed costs about what one FINOPS_PRICE call costs.

Last run 2026-12-03, load average 0.6 on 2 cores (goal for LLM_SIZE: 5 ms): LLM_SIZE cold, new load 3.97 ms
median (p90 4.39), warm 0.20 ms, cold new model 9.6 ms; FINOPS_PRICE 0.16 ms. The code before (da905a2),
alternating with it in one run: new load 5.2 ms, warm 1.33 ms, FINOPS_PRICE 1.29 ms (the range was made
into a hashable tuple key on every call).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from addin import udfs
from addin._price_range import clear_parsed
from finops.mix import WorkloadShape, generate_profile
from finops.price_book import PriceBook
from finops.sizing.candidates import clear_candidate_tables
from templates import build_template
from templates.sheets.catalog import prices_range

PERF = ("llama-3.1-8b", "h100-sxm", "bf16", 1, 5000, 500, 50)
PRICES = prices_range(PriceBook.bundled())
DEMAND = [[float(u)] for u in generate_profile(WorkloadShape(peak_units=24, noise=0.05, seed=7), hours=672)]
OPTIONS = [
    ["name", "kind", "hourly_cost", "max_share", "max_units"],
    ["owned", "owned", 1.91, None, 16],
    ["cud-3y", "reserved", 4.86, None, None],
    ["od", "on_demand", 11.06, None, None],
    ["spot", "spot", 6.33, 0.3, None],
]
SIZE = ("llama-3.1-8b", 5000, 500, 50, 1000, None, None, None, "on_demand", 5, PRICES)
CALLS = {
    "LLM_CONCURRENCY": (10_000, 0.05, 60, 5),
    "LLM_DEVICES": (5000, 800, 0.25),
    "LLM_WEIGHTS_GIB": ("llama-3.1-8b", "bf16"),
    "LLM_KV_GIB": ("llama-3.1-8b", 5500, 50),
    "LLM_MAX_CONCURRENCY": PERF[:6],
    "LLM_TTFT_MS": PERF,
    "LLM_TPOT_MS": PERF,
    "LLM_TOKENS_PER_S": PERF,
    "FINOPS_TCO": (1_440_000, 81_000, 36, "CNY"),
    "FINOPS_COST_PER_MTOK": (11.06, 1566.7),
    "FINOPS_PRICE": ("gcp", "a3-highgpu-1g", "on_demand", "us-central1", PRICES),
    "FINOPS_MIX": (DEMAND, OPTIONS),
}
#: Models for the cold, new-model LLM_SIZE figure (dense, GQA, MoE, MLA).
SIZE_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-8b", "qwen3-30b-a3b", "deepseek-v3")


def timed(function, args, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function(*args)
        samples.append(time.perf_counter() - start)
    return samples


def _row(name: str, samples: list[float], calls: int) -> str:
    samples = sorted(samples)
    return (f"{name:24s} {statistics.median(samples) * 1e3:10.3f} {samples[int(0.9 * len(samples))] * 1e3:10.3f}"
            f"  {calls}")


def _size_call(args: tuple) -> float:
    start = time.perf_counter()
    answer = udfs.LLM_SIZE(*args)
    elapsed = time.perf_counter() - start
    assert isinstance(answer, list), answer
    return elapsed


def llm_size_figures() -> None:
    """LLM_SIZE cold for a new model, cold for a new workload of a sized model, and warm."""
    new_model = []
    for _ in range(4):
        for model in SIZE_MODELS:
            clear_candidate_tables()
            udfs._ranked.cache_clear()
            new_model.append(_size_call((model, *SIZE[1:])))
    udfs.LLM_SIZE(*SIZE)
    new_workload = [_size_call((SIZE[0], isl, osl, concurrency, *SIZE[4:]))
                    for isl, osl in ((5000, 500), (2048, 512), (1024, 256)) for concurrency in range(20, 60, 4)]
    warm = timed(udfs.LLM_SIZE, SIZE, 50)
    print(_row("LLM_SIZE cold, new model", new_model, len(new_model)))
    print(_row("LLM_SIZE cold, new load", new_workload, len(new_workload)))
    print(_row("LLM_SIZE warm", warm, len(warm)))


def main() -> None:
    clear_parsed()
    cold = timed(udfs.FINOPS_PRICE, CALLS["FINOPS_PRICE"], 1)[0]
    print(f"{'function':24s} {'median ms':>10s} {'p90 ms':>10s}  calls")
    for name, args in CALLS.items():
        answer = udfs.UDFS[name](*args)
        assert not (isinstance(answer, str) and answer.startswith("#FINOPS")), (name, answer)
        repeat = {"FINOPS_MIX": 20}.get(name, 300)
        print(_row(name, timed(udfs.UDFS[name], args, repeat), repeat))
    llm_size_figures()
    print(f"FINOPS_PRICE, first call on the {len(PRICES) - 1}-row Prices table (parse): {cold * 1e3:.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        build_template(Path(folder) / "plan.xlsx")
        print(f"template build: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
