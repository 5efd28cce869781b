"""Derive the bundled calibration rows from an installed aiconfigurator-core (development only).

aiconfigurator-core (NVIDIA, Apache-2.0; ``pip install aiconfigurator-core==0.12.0`` into a separate
virtual environment, never a dependency of this product) ships ``systems/silicon_sample.csv``: mean
TTFT and TPOT of real serving runs at fixed concurrency. This script keeps the rows the performance
model can describe and writes the columns it reads to
``finops/data/calibration/aiconfigurator-silicon.csv.gz``, every row with its source and date:

* aggregated serving (``mode == agg``), no pipeline parallelism and no data-parallel attention: one group
  of ``tp`` GPUs holds the whole model, attention split by tensor parallelism and the experts of a MoE
  model spread over the same GPUs (``moe_tp x moe_ep == tp``). Expert parallelism is kept because each
  GPU then holds and multiplies the same share of the expert weights as under tensor parallelism,
  which is what the performance model describes (it does not model the all-to-all of EP, nor expert
  load imbalance; the held-out error of the MoE rows includes both). ``expert_parallel`` is 1 where the
  experts are split by expert parallelism (``moe_ep > 1``, whole experts per GPU: the measured expert
  kernels differ), 0 under tensor parallelism (and for dense models);
* weight precisions the catalog knows (BF16, FP8; FP4 rows are left out), models and GPUs the catalog
  knows (``MODELS``, ``GPUS`` below).

Run: ``/tmp/aic/bin/python scripts/derive_calibration_rows.py`` (the interpreter of the environment
that has aiconfigurator-core). It reads the package, not the network.
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from importlib import metadata, resources
from pathlib import Path

AS_OF = "2026-12-03"
TARGET = Path(__file__).resolve().parents[1] / "finops" / "data" / "calibration" / "aiconfigurator-silicon.csv.gz"
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1": "deepseek-v3",      # the same architecture and size as V3
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
}
GPUS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200"}
PRECISIONS = {"": "bf16", "bf16": "bf16", "fp8": "fp8"}
#: Tensor-parallel sizes of one 8-GPU node. The sample also holds DeepSeek rows with ``tp_size`` 64 on
#: 8-GPU systems (``moe_tp 8 x moe_ep 8``), which no single group of GPUs runs; they are left out.
ONE_NODE_TP = (1, 2, 4, 8)
COLUMNS = ("engine", "engine_version", "model", "gpu", "precision", "isl", "osl", "concurrency", "tp",
           "expert_parallel", "ttft_ms", "tpot_ms", "source", "as_of")


def _size(text: str) -> int:
    """A parallel size of the sample (``""`` and ``"0"`` mean not used: 1)."""
    return int(text) if text not in ("", "0") else 1


def keep(row: dict[str, str]) -> bool:
    """A row the model describes: aggregated, one group of ``tp`` GPUs (attention tensor-parallel, the
    experts over the same GPUs), a known model, GPU and precision."""
    tp = _size(row["tp_size"])
    experts_over_tp = _size(row["moe_tp_size"]) * _size(row["moe_ep_size"]) in (1, tp)
    return (row["mode"] == "agg" and row["pp_size"] == "1" and row["attention_dp_size"] in ("", "1")
            and tp in ONE_NODE_TP and experts_over_tp and row["model_path"] in MODELS and row["system"] in GPUS
            and row["precision"] in PRECISIONS)


def derive() -> list[dict[str, str]]:
    version = metadata.version("aiconfigurator-core")
    text = resources.files("aiconfigurator_core").joinpath("systems", "silicon_sample.csv").read_text("utf-8")
    source = (f"NVIDIA AIConfigurator silicon measurements (aiconfigurator-core {version} "
              "systems/silicon_sample.csv, github.com/ai-dynamo/aiconfigurator, Apache-2.0)")
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        if not keep(row):
            continue
        out.append({"engine": row["backend"], "engine_version": row["backend_version"],
                    "model": MODELS[row["model_path"]], "gpu": GPUS[row["system"]],
                    "precision": PRECISIONS[row["precision"]], "isl": row["isl"], "osl": row["osl"],
                    "concurrency": row["batch_size"], "tp": row["tp_size"],
                    "expert_parallel": "1" if _size(row["moe_ep_size"]) > 1 else "0",
                    "ttft_ms": f"{float(row['silicon_ttft_ms']):.6g}", "tpot_ms": f"{float(row['silicon_tpot_ms']):.6g}",
                    "source": source, "as_of": AS_OF})
    return out


def main() -> None:
    rows = derive()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    TARGET.write_bytes(gzip.compress(buffer.getvalue().encode("utf-8"), mtime=0))
    print(f"wrote {len(rows)} rows to {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
