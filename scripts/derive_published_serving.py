"""Derive ``finops/data/calibration/published_serving.csv`` from the collected published-measurement table.

Input: ``published-wide-2026-12.csv`` (502 published serving measurements, one per row, each with its source URL,
a quote proving the number and caveats; collected 2026-12). Output: the rows the performance model can be fitted
on or checked against, in the columns of ``published_other_accelerators.csv`` (:mod:`finops.sizing.published`),
one line per figure, with the source id, URL and the stored copy's date on every line.

What the conversion does, row by row:

* ``gpu``: catalog ids; ``other:rtx-pro-6000-blackwell-server`` is the catalog's ``rtx-pro-6000``. A GPU the
  catalog lacks (GB200) is skipped.
* ``precision``: ``fp16`` stays, ``int8-weights(bf16 compute)`` is ``int8`` (weight-only, 16-bit compute),
  ``int4-weights(gptq)`` is ``int4`` (GPTQ 4-bit weights, 16-bit activations and KV cache). FP4 weights are
  skipped: the catalog has no FP4 precision.
* ``engine``: ``tensorrt-llm`` is ``trtllm``. ``tgi`` (Hugging Face Text Generation Inference 1.x) is filed under
  ``vllm``: it batches continuously and decodes with vLLM's paged-attention kernels behind its own router, so its
  figures time the same kind of steps; ``engine_version`` names TGI. ``transformers-neuronx`` is filed under ``vllm``, the engine the
  product plans Inferentia2 and Trainium with: vLLM on Neuron runs its models through transformers-neuronx (and,
  later, NxD Inference), so the chip's reached bandwidth and FLOPS are the library's. ``engine_version`` names
  the library and SDK instead of a vLLM version.
* ``tp``: the number of accelerator chips in the replica (``n_gpus``). Neuron's tables count tensor parallelism
  in NeuronCores (two per Inferentia2 chip); the catalog's ``tp_units_per_chip`` turns chips back into cores.
* ``concurrency``: ``max`` stays, a static batch ``batch:N`` is ``N`` clients with ``client`` ``static``: every
  prompt of the batch is prefilled before any decodes; ``clients:N`` is ``N`` closed-loop clients measured at
  steady state over a fixed duration, out of step with each other (``client`` ``staggered``;
  finops.sizing.performance.CLIENTS).
* ``value``: a per-GPU throughput is multiplied by the replica's GPUs.
* ``context_length``: the sequence length the engine was built or compiled for, where the source states it:
  Neuron's "Sequence Length" (the compiled ``n_positions``), and ``isl + osl`` for ``trtllm-bench`` runs, whose
  engine build takes ``max_seq_len`` from the dataset's longest input plus output. It is what lets the product
  estimate a run past the model's native context (Llama-2's 4,096 tokens at 5,000 + 500 or 128 + 8,064),
  which the engines ran with that extended position range.
* Left out (:data:`ENGINE_CHECKS`): TGI 1.0.3's rows, A10G and A100 40GB. They time that engine's per-step
  overhead (no CUDA graphs, one SageMaker endpoint per run), not the chip. One client on one A10G decodes
  Llama-2-7B at 31 ms a token, 73 % of the memory bandwidth, as today's engines do; at twenty clients the
  step takes 61 ms though it reads the same weights (median measured/model throughput 0.32 at TP 1, 0.27 at
  TP 4, 0.25 at TP 8 under today's vLLM constants; TPOT 2.8-10x the model's). Fitted, they give the A10G a bandwidth efficiency of 0.26 and a compute efficiency at its floor
  (0.05), three to four times too slow for a vLLM of today. The wide table keeps them as a record of that
  engine; the A10G's efficiencies come from vLLM 0.4.3 and TGI 2.0.4 rows (``published_other_accelerators.csv``).

Usage: ``python scripts/derive_published_serving.py [SOURCE_CSV] [OUTPUT_CSV]`` (defaults: the collected table and the
derived file, both in ``finops/data/calibration/``). Prints what it skipped and why.
"""

from __future__ import annotations

import csv
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT / "finops" / "data" / "calibration" / "published-wide-2026-12.csv"
DEFAULT_OUTPUT = ROOT / "finops" / "data" / "calibration" / "published_serving.csv"
COLLECTED = "2026-12-06"

GPUS = {"other:rtx-pro-6000-blackwell-server": "rtx-pro-6000"}
PRECISIONS = {"fp16": "fp16", "bf16": "bf16", "fp8": "fp8", "int8-weights(bf16 compute)": "int8",
              "int4-weights(gptq)": "int4"}
ENGINES = {"tensorrt-llm": "trtllm", "transformers-neuronx": "vllm", "tgi": "vllm"}
#: (engine, gpu) of the wide table whose rows time the engine rather than the accelerator: not derived.
ENGINE_CHECKS = {
    ("tgi", "a100-40gb"): "TGI 1.0.3 on the A100 40GB times the engine's per-step overhead, not the chip",
    ("tgi", "a10g"): "TGI 1.0.3 on the A10G times the engine's per-step overhead past one client, not the chip",
}
#: ``client`` of each wide-table concurrency prefix (finops.sizing.performance.CLIENTS); ``max`` has none.
CLIENT_OF = {"batch:": "static", "clients:": "staggered"}
MODELS = {"mistral-7b-v0.2": "mistral-7b-v0.2"}
METRICS = ("output_tokens_per_s", "ttft_ms", "tpot_ms", "request_latency_ms")
HEADER = ["source_id", "gpu", "engine", "engine_version", "model", "precision", "kv_precision", "tp", "isl", "osl", "concurrency", "max_batch", "metric", "value", "published", "url", "note", "client", "context_length"]


def source_id(row: dict[str, str]) -> str:
    """A short id per publication: the engine and its release (one table per release)."""
    if row["engine"] == "transformers-neuronx":
        return "neuron-sdk-2.18-inf2"
    if row["engine"] == "tgi":
        return "hf-tgi-sagemaker-2023-09"
    version = row["engine_version"].split(" ")[0]
    return f"trtllm-perf-overview-v{version}"


def engine_version(row: dict[str, str]) -> str:
    """``<engine> <version>`` as the product's engines are named; Neuron's rows name the library and SDK."""
    if row["engine"] == "transformers-neuronx":
        return f"vllm transformers-neuronx ({row['engine_version']})"
    if row["engine"] == "tgi":
        return f"vllm TGI {row['engine_version']}"
    return f"{ENGINES[row['engine']]} {row['engine_version']}"


def context_length(row: dict[str, str]) -> str:
    """The sequence length the run's engine serves, where the source states it (else empty)."""
    compiled = re.search(r"Sequence Length (\d+)", row["notes"])
    if compiled:
        return compiled.group(1)
    if "trtllm-bench" in row["notes"]:
        return str(int(row["isl"]) + int(row["osl"]))
    return ""


def convert(row: dict[str, str]) -> tuple[dict[str, str] | None, str]:
    """The output row, or ``None`` and why it is skipped."""
    gpu = GPUS.get(row["gpu"], row["gpu"])
    if (row["engine"], gpu) in ENGINE_CHECKS:
        return None, ENGINE_CHECKS[(row["engine"], gpu)]
    if gpu.startswith("other:"):
        return None, f"{row['gpu']} is not in the accelerator catalog"
    precision = PRECISIONS.get(row["precision"])
    if precision is None:
        return None, f"weights at {row['precision']} have no catalog precision"
    if row["metric"] not in METRICS:
        return None, f"metric {row['metric']} is not one the model answers"
    kv = row["kv_precision"].split(" ")[0]
    chips = int(row["n_gpus"])
    value = float(row["value"])
    if "per GPU" in row["scope"] and row["metric"] == "output_tokens_per_s":
        value *= chips
    prefix = next((p for p in CLIENT_OF if row["concurrency"].startswith(p)), "")
    concurrency = row["concurrency"].removeprefix(prefix)
    note = row["notes"].replace("\n", " ")
    if row["engine"] == "transformers-neuronx":
        note = f"TP {row['tp']} NeuronCores on {chips} chips, " + note
    return {
        "source_id": source_id(row), "gpu": gpu, "engine": ENGINES[row["engine"]],
        "engine_version": engine_version(row), "model": MODELS.get(row["model"], row["model"]),
        "precision": precision, "kv_precision": kv, "tp": str(chips), "isl": row["isl"], "osl": row["osl"],
        "concurrency": concurrency, "max_batch": concurrency if concurrency != "max" else "",
        "metric": row["metric"], "value": f"{value:g}", "published": COLLECTED, "url": row["source_url"].split(" (")[0],
        "note": note.split(";")[0][:160], "client": CLIENT_OF.get(prefix, ""),
        "context_length": context_length(row)}, ""


def main(argv: list[str]) -> int:
    source = Path(argv[1]) if len(argv) > 1 else DEFAULT_SOURCE
    output = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUTPUT
    with source.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    kept, skipped = [], Counter()
    for row in rows:
        out, why = convert(row)
        if out is None:
            skipped[why] += 1
        else:
            kept.append(out)
    lines = [
        "# Published serving measurements the performance model is fitted on and checked against, one figure per",
        f"# line. Derived by scripts/derive_published_serving.py from {source.name} (collected {COLLECTED}),",
        "# which keeps a quote proving every number; see the script for each conversion. Sources: TensorRT-LLM's",
        "# perf-overview v0.9.0 (A100, L40S, static batches), v0.13.0 (A100-80GB and H100 FP16, TP 1-8) and v1.0",
        "# (H100, H200, RTX PRO 6000); AWS Neuron SDK 2.18 Inferentia2 decoder tables (transformers-neuronx on",
        "# inf2.48xlarge, P50 latencies; filed under vllm, which runs Neuron models through that library); Hugging",
        "# Face's TGI 1.0.3 benchmark of Llama 2 on SageMaker (A10G at TP 1/4/8 over PCIe; 1-20 closed-loop clients,",
        "# the staggered client; filed under vllm, whose paged-attention kernels TGI decodes with).",
        "# tp: accelerator chips in the replica (Neuron's NeuronCores are the catalog's tp_units_per_chip per chip).",
        "# published: the date the stored copy was read; the release is in engine_version.",
        "# context_length: the sequence length the run's engine was built or compiled for, where the source says.",
    ]
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines) + "\n")
        writer = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    print(f"{output}: {len(kept)} rows of {len(rows)}")
    for why, n in sorted(skipped.items()):
        print(f"  skipped {n}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
