"""Write the bundled sample serving metrics: a synthetic month (2026-05) of vLLM, SGLang and DCGM series
(:mod:`finops.serving.synthetic_metrics` draws them).

Synthetic, not recorded from a real cluster. For each serving plan line of the demo plan
(``finops/data/metrics/serving-lines.csv``, the plan lines of ``templates/demo_plan.py``):

* the month's tokens are the demo plan's Usage (``ActualMTokens``), split into prompt and generation
  tokens by the line's mean prompt and output lengths; requests = tokens / (ISL + OSL);
* hourly traffic follows a daily cycle (peak 14:00 UTC, trough at 0.35 of the peak's base), weekends at
  70 %, and 5 % multiplicative noise (NumPy ``default_rng(2026_05)``), shared evenly by the replicas;
* TTFT and inter-token latency are lognormal (median and sigma per line, the median rising with the
  square root of the hour's load), binned into a subset of vLLM's default histogram buckets;
* the running-requests gauge follows Little's law: request rate x (TTFT + OSL x ITL) per replica;
* DCGM ``DCGM_FI_DEV_GPU_UTIL`` per GPU: 15 % + 75 % x the hour's load over the peak, +-3 points noise;
* one replica of ``aws-inference-prod`` restarts at hour 400 (its counters start again from 0) and
  ``gcp-inference-prod`` misses the scrapes of hours 200-202 (a gap), to show both being handled.

Samples are hourly, at the top of each hour from 2026-05-01 00:00 to 2026-06-01 00:00 UTC, written as
``/api/v1/query_range`` answers (one gzipped file per plan line). Run ``python scripts/make_sample_metrics.py``
to rewrite them; the output is deterministic.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from finops.serving.synthetic_metrics import LineSpec, answer, line_results

OUT = Path(__file__).resolve().parents[1] / "finops" / "data" / "metrics"
MONTH = "2026-05"
SPECS = (
    LineSpec("aws-inference-prod", "inference-aws-prod", "vllm", "meta-llama/Llama-3.1-8B-Instruct",
             "NVIDIA L40S", 2, 1, 1_150, 1500, 350, 0.18, 0.016, restart=(1, 400)),
    LineSpec("aws-inference-staging", "inference-aws-staging", "vllm", "meta-llama/Llama-3.1-8B-Instruct",
             "NVIDIA L40S", 1, 1, 95, 1200, 300, 0.15, 0.015),
    LineSpec("gcp-inference-prod", "inference-gcp-prod", "vllm", "meta-llama/Llama-3.1-70B-Instruct",
             "NVIDIA H100 80GB HBM3", 2, 4, 1_940, 2000, 400, 0.30, 0.014, missing_hours=(200, 201, 202)),
    LineSpec("gcp-inference-staging", "inference-gcp-staging", "sglang", "meta-llama/Llama-3.1-8B-Instruct",
             "NVIDIA L4", 1, 1, 110, 1000, 300, 1.2, 0.045),
    LineSpec("onprem-inference", "inference-onprem", "vllm", "meta-llama/Llama-3.1-70B-Instruct",
             "NVIDIA H100 80GB HBM3", 4, 4, 2_480, 2000, 500, 0.28, 0.013),
)


def main() -> None:
    for spec in SPECS:
        body = json.dumps(answer(line_results(spec, MONTH)), separators=(",", ":")).encode()
        (OUT / f"{MONTH}-{spec.plan_line}.json.gz").write_bytes(gzip.compress(body, mtime=0))


if __name__ == "__main__":
    main()
