"""The performance model at a fixed concurrency against published measurements never fitted on.

``fixtures/published-fixed-concurrency.csv``: NVIDIA's NIM LLMs Benchmarking guide v1.0.0, "Performance"
page (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md, read 2026-12-06; the page carries
no date of its own), "Llama-3.3-70b-instruct Results", NIM container version 1.8.0 on "2 x H100 80G",
"fp8 TP2", AIPerf at a fixed concurrency: the 8 rows of the 5,000 input / 500 output tokens table
(concurrency 1-250) and the first row of the 500 / 2,000 table (concurrency 1), with TTFT, ITL and
throughput (output tokens per second: at concurrency 1 it agrees with ``osl / (TTFT + (osl - 1) x ITL)``).
Only the start of the page could be read: its other tables (Llama-3.1-8B, Llama-3.1-70B, older NIM
versions) came without their GPU, TP and ISL/OSL headings, and the rest of the 500 / 2,000 table was cut
off, so they are not here. These are the "2xH100 (NVIDIA NIM)" rows (median throughput error 18 %, TTFT
79 %, worst row 4.9x before the measured kernels and the pooled constants).

With TensorRT-LLM's KV cache sized as a share of the memory left once the model is loaded (its
``free_gpu_memory_fraction``; finops.sizing.memory.memory_fit ``of_free_memory``) the replica holds 92 of these
sequences, not 84, and the rows beyond the cache (100-250 clients) read TTFT 0.89-0.99x and TPOT 1.01x where
they read 1.06-1.43x and 0.93-0.94x: median TTFT error 10.7 %, TPOT 2.1 %, throughput 1.1 % (the figures
below are the earlier ones, kept for the direction of the remaining errors).

Assumptions, not read on the page: the engine is TensorRT-LLM (the page does not name NIM's backend; NIM
prefers its optimized TensorRT-LLM profiles over vLLM where one exists, docs.nvidia.com/nim/large-language-
models/latest/optimization.html) and the GPU is the SXM H100 (the page says "H100 80G"; as
``h100-pcie`` the model is off by 2-6x on every metric, as ``h100-sxm`` by the figures below).

Measured 2026-12-06 (constants partially pooled across engines, and the measured kernels' decode
less a fixed credit per layer instead of scaled; docs/performance.md, "Partial pooling across engines" and
"The decode credit") as ``estimate(model, gpu, precision=..., tp=..., isl=..., osl=..., concurrency=...,
engine="trtllm")`` with the default step times (measured kernels), ratio model / published; in brackets
the constants with each engine fitted alone:

* TTFT (``ttft_ms``): median absolute error 31.6 % (41.8), worst 2.28x (2.37x; concurrency 50, ISL 5,000),
  0.94x at one client and over-predicted (1.06-2.28x) on every other row, most at 25-50 clients: probably
  the fixed-ISL wave of the closed loop, which puts more prompts ahead of each one than AIPerf's clients
  meet (docs/performance.md, "Which client the default reproduces").
* TPOT (``tpot_ms``) against the page's ITL: 6.5 % (3.4), worst 1.12x (1.21x; concurrency 1, ISL 500 / OSL
  2,000), under-predicted on every row (0.89-0.98x).
* Throughput (``output_tokens_per_s``): 1.0 % (9.9), worst 1.12x (the same row), 0.99-1.12x: over at 1-5
  clients, within 1 % from 25.

The roofline step times give 26.9 % / 2.23x, 8.3 % / 1.17x and 1.4 % / 1.17x: better on TTFT, worse on TPOT
and throughput, so no test asserts an order between them here; the 36 published maximum-throughput rows
still do (test_published_results.py). vLLM's or SGLang's constants on the same rows would give TTFT 69 % /
8.6x and 137 % / 14.9x: with BF16 KV they hold 42 sequences, not 84.

With ``client="staggered"`` (clients out of step, the steady state AIPerf measures after warm-up: no wave,
no admission wait; ``finops.sizing.performance.CLIENTS``) TTFT reads 6.3 % median (11.1), 0.79-0.95x at
5-50 clients, 1.0-1.18x beyond the KV cache; its worst row (1.48x) is one client's 500-token prompt, where
the 30 ms the fit puts outside the GPU is most of the time. TPOT is the same, throughput 3.1 % (6.7; worst
1.12x).

Concurrency above the KV cache: with FP8 KV (TensorRT-LLM's default for an FP8 checkpoint) the model holds
84 sequences of 5,000 + 500 tokens on the two GPUs; the published rows at 100-250 clients show the same
ceiling (ITL flat at 92.86-93.2 ms, throughput flat at 917.26-920.9 tokens/s, TTFT growing with the
clients that wait for a slot), which the model answers with Little's law (TTFT 1.16-1.55x).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from finops.sizing.performance import Estimate, estimate

ROWS = list(csv.DictReader((Path(__file__).parent / "fixtures" / "published-fixed-concurrency.csv").open()))
METRICS = {"ttft_ms": "ttft_ms", "tpot_ms": "itl_ms", "output_tokens_per_s": "output_tokens_per_s"}


def _estimate(row: dict[str, str], step_time: str = "auto", client: str = "synchronized") -> Estimate:
    return estimate(row["model"], row["gpu"], precision=row["precision"], tp=int(row["tp"]),
                    isl=int(row["isl"]), osl=int(row["osl"]), concurrency=int(row["concurrency"]),
                    engine=row["engine"], step_time=step_time, client=client)


def _ratios(estimates: list[Estimate]) -> dict[str, np.ndarray]:
    pairs = list(zip(estimates, ROWS, strict=True))
    return {mine: np.array([getattr(e, mine) / float(r[theirs]) for e, r in pairs])
            for mine, theirs in METRICS.items()}


@pytest.fixture(scope="module")
def estimates() -> list[Estimate]:
    return [_estimate(r) for r in ROWS]


@pytest.fixture(scope="module")
def ratios(estimates) -> dict[str, np.ndarray]:
    return _ratios(estimates)


def _error(ratios: np.ndarray) -> tuple[float, float]:
    return float(np.median(np.abs(ratios - 1.0))), float(max(ratios.max(), 1.0 / ratios.min()))


def test_every_published_row_carries_its_source():
    assert len(ROWS) == 9
    assert all(r["source"].startswith("https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md")
               and "Version: 1.8.0" in r["source"] and "2 x H100 80G, fp8 TP2" in r["source"]
               and f"{r['isl']} Input Tokens / {r['osl']} Output Tokens" in r["source"]
               and r["as_of"] == "2026-12-06" for r in ROWS)
    assert all(float(r[c]) > 0 for r in ROWS for c in METRICS.values())   # every cell is from the page


@pytest.mark.parametrize("metric, median_at_most, worst_at_most", [
    ("ttft_ms", 0.12, 2.35),                # 10.7 %, 2.28x (31.6 % with the KV share of the whole GPU)
    ("tpot_ms", 0.03, 1.15),                # 2.1 %, 1.12x (6.5 %)
    ("output_tokens_per_s", 0.02, 1.15),    # 1.1 %, 1.12x (18 % before the kernel tables)
])
def test_fixed_concurrency_error_on_published_nim_rows(ratios, metric, median_at_most, worst_at_most):
    median, worst = _error(ratios[metric])
    assert median <= median_at_most and worst <= worst_at_most


@pytest.mark.parametrize("metric, low, high", [
    ("ttft_ms", 0.85, 2.35),                # 0.89-2.28x: over at 5-50 clients, within 11 % beyond the KV cache
    ("tpot_ms", 0.85, 1.02),                # 0.89-1.01x: under up to 50 clients, within 1 % beyond
    ("output_tokens_per_s", 0.97, 1.15),    # 0.99-1.12x: over at 1-5 clients, within 1 % from 25
])
def test_where_the_published_error_lies(ratios, metric, low, high):
    assert low <= ratios[metric].min() and ratios[metric].max() <= high


def test_the_kv_cache_ceiling_falls_where_the_published_rows_saturate(estimates):
    """The page's throughput and ITL stop growing between 50 and 100 clients at ISL 5,000 / OSL 500."""
    long_prompts = [(e, int(r["concurrency"])) for e, r in zip(estimates, ROWS, strict=True)
                    if r["isl"] == "5000"]
    assert all(e.running_batch == c for e, c in long_prompts if c <= 50)
    assert all(e.running_batch == e.max_concurrency < c for e, c in long_prompts if c >= 100)
    assert 50 < long_prompts[0][0].max_concurrency < 100


def test_a_staggered_client_reads_the_nim_rows_ttft(ratios):
    """AIPerf's clients do not keep the synchronized wave the calibration's campaigns start with: modelled as
    staggered, TTFT at 5-50 clients (under the KV cache, more than one client) comes within 22 % (0.79-0.95x).
    Beyond the KV cache (100 clients on 92 slots) it reads 0.64x: the staggered client has no wave, and the
    queue for a slot is all the wait it sees."""
    staggered = _ratios([_estimate(r, client="staggered") for r in ROWS])
    crowd = np.array([1 < int(r["concurrency"]) <= 50 for r in ROWS])
    assert np.all(np.abs(staggered["ttft_ms"][crowd] - 1.0) <= 0.22)
    assert np.all(np.abs(ratios["ttft_ms"][crowd] - 1.0) >= 0.3)          # synchronized: 1.32-2.28x there
    median, worst = _error(staggered["ttft_ms"])
    assert median <= 0.10 and worst <= 1.6                                 # 9.9 %, 1.55x (100 clients)
    assert np.array_equal(staggered["tpot_ms"], ratios["tpot_ms"])
    assert _error(staggered["output_tokens_per_s"])[0] <= 0.05             # 4.6 %
