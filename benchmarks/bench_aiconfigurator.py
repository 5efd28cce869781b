"""Our held-out predictions beside NVIDIA AIConfigurator's on the same measured rows.

Every bundled AIConfigurator silicon row (``finops/data/calibration/``) is predicted by our model from a
fit that never saw its model (leave-one-model-out, as ``bench_calibration.py`` reports), and by
AIConfigurator 0.12 (``pip install aiconfigurator==0.12.0``, NVIDIA, Apache-2.0) from its own measured
kernel database. AIConfigurator is never a dependency of this product: it runs in its own
environment, named by ``--aiconfigurator-python``, as a child process that receives the rows as JSON on
stdin (``--worker`` mode of this file, which imports nothing of ``finops``). The child finds each row's
full serving configuration (parallel sizes, GEMM and MoE quantization) in the sample it ships
(``systems/silicon_sample.csv``, the rows ``scripts/derive_calibration_rows.py`` keeps) and calls its
``cli_estimate`` with it, the engine version included where its database has that version (else its
default, which the table counts).

AIConfigurator's kernel database comes from the same NVIDIA campaigns as these end-to-end rows, and
nothing of it is held out from them; our figures are held out by model. Read the comparison with that
in mind: it says how far each is from the measurements, not which would do better on a model neither
has seen.

``--published`` compares instead on the published TensorRT-LLM rows AIConfigurator can express
(``published_serving.csv``: the performance overviews v0.9 on A100 and L40S, static batches; v0.13 on A100
and H100, FP16, TP 1-8; v1.0 on H100 and H200, FP8), none of which either tool was fitted on. Ours is the
bundled model as it ships; AIConfigurator gets each row's GPU, TP, ISL, OSL and precision, a static batch
in its ``static`` mode, and a maximum-throughput row as the best of its in-flight estimates at batches
8, 16, ..., 2048, doubling until a doubling adds under 1 % or its KV-cache or memory check refuses the
batch, then halving the interval up to the largest batch it serves, to within 1/8 (trtllm-bench's batch
is not published). Models it does not ship (Llama 2, Mistral 7B) are handed to it as a Hugging Face
``config.json`` written from the catalog's architecture; Llama 3.3 70B is its Llama 3.1 70B (the same
architecture). Its databases hold other TensorRT-LLM versions than the rows' (1.0 on A100, 1.3 on
H100/H200/L40S): it runs its default version. Errors are reported per source and per TP.

Run: ``python benchmarks/bench_aiconfigurator.py --aiconfigurator-python /tmp/aic/bin/python``
(``--per-group N``: N rows per engine and model, spread over each group's rows; default 8;
``--published``: the published rows instead). Without an AIConfigurator environment it says so and
prints ours alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Our catalog id -> the model path AIConfigurator 0.12 knows (its bundled model_configs/).
AIC_MODEL = {
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B-FP8",
    "minimax-m2.5": "MiniMaxAI/MiniMax-M2.5",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
}
#: Published models AIConfigurator 0.12 ships no config for but the same architecture as one it does.
AIC_SAME_ARCHITECTURE = {"llama-3.3-70b": "meta-llama/Meta-Llama-3.1-70B",
                         "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B"}
#: Our accelerator id -> AIConfigurator 0.12's system (its systems/*.yaml).
AIC_SYSTEM = {"a100-80gb": "a100_sxm", "h100-sxm": "h100_sxm", "h200": "h200_sxm", "l40s": "l40s", "l4": "l4",
              "b200": "b200_sxm", "rtx-pro-6000": "rtx_pro_6000_server"}
#: Our weight / KV precision -> AIConfigurator's GEMM / KV-cache quantization mode (16-bit runs as bfloat16).
AIC_QUANT = {"fp16": "bfloat16", "bf16": "bfloat16", "fp8": "fp8"}
#: The published sources compared: TensorRT-LLM's performance overviews.
PUBLISHED_SOURCES = ("trtllm-perf-overview-v0.9.0", "trtllm-perf-overview-v0.13.0", "trtllm-perf-overview-v1.0")
#: Batches a maximum-throughput row is tried at (the published runs' batch is not stated).
MAX_BATCHES = tuple(2 ** k for k in range(3, 12))
KEY_FIELDS = ("engine", "engine_version", "model", "gpu", "precision", "isl", "osl", "concurrency", "tp",
              "ttft_ms", "tpot_ms")


# ---- the AIConfigurator side (its own interpreter; no finops import) ----------------------------------

def _sample_configurations() -> dict[tuple[str, ...], dict[str, str]]:
    """Each kept sample row by the key of the bundled row it became (``derive_calibration_rows``)."""
    import csv
    import importlib.util
    import io
    from importlib import resources

    spec = importlib.util.spec_from_file_location("derive", ROOT / "scripts" / "derive_calibration_rows.py")
    derive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(derive)  # type: ignore[union-attr]
    text = resources.files("aiconfigurator_core").joinpath("systems", "silicon_sample.csv").read_text("utf-8")
    found = {}
    for row in csv.DictReader(io.StringIO(text)):
        if derive.keep(row):
            key = (row["backend"], row["backend_version"], derive.MODELS[row["model_path"]], derive.GPUS[row["system"]],
                   derive.PRECISIONS[row["precision"]], row["isl"], row["osl"], row["batch_size"], row["tp_size"],
                   f"{float(row['silicon_ttft_ms']):.6g}", f"{float(row['silicon_tpot_ms']):.6g}")
            found[key] = row
    return found


def _size(text: str) -> int | None:
    return int(text) if text not in ("", "0") else None


def worker() -> None:
    """Read rows (JSON list of {index, key}) on stdin; print {index: [ttft, tpot, seconds, version note]}."""
    import logging

    logging.disable(logging.WARNING)
    from aiconfigurator.cli.api import cli_estimate

    configurations = _sample_configurations()
    out = {}
    for item in json.load(sys.stdin):
        row = configurations.get(tuple(item["key"]))
        if row is None:
            out[item["index"]] = None
            continue
        arguments = dict(backend_name=row["backend"], isl=int(row["isl"]), osl=int(row["osl"]),
                         batch_size=int(row["batch_size"]), tp_size=int(row["tp_size"]), pp_size=1,
                         attention_dp_size=_size(row["attention_dp_size"]) or 1,
                         moe_tp_size=_size(row["moe_tp_size"]), moe_ep_size=_size(row["moe_ep_size"]),
                         gemm_quant_mode=row["gemm_quant_mode"] or None, moe_quant_mode=row["moe_quant_mode"] or None)
        start = time.perf_counter()
        version = "measured version"
        try:
            try:
                result = cli_estimate(AIC_MODEL[item["key"][2]], row["system"], backend_version=row["backend_version"],
                                      **arguments)
            except Exception:   # a version its database lacks: its default version
                version = "default version"
                result = cli_estimate(AIC_MODEL[item["key"][2]], row["system"], **arguments)
            out[item["index"]] = [float(result.ttft), float(result.tpot), time.perf_counter() - start, version]
        except Exception as exc:   # a configuration it cannot estimate
            out[item["index"]] = [None, None, time.perf_counter() - start, f"{type(exc).__name__}"]
    json.dump(out, sys.stdout)


def _published_estimate(cli_estimate, item: dict, model: str) -> tuple[float | None, str]:
    """AIConfigurator's figure for one published row, and what it ran (the batch, or why none)."""
    common = {"backend_name": "trtllm", "isl": item["isl"], "tp_size": item["tp"], "gemm_quant_mode": item["gemm"],
              "kvcache_quant_mode": item["kv"]}
    if item["concurrency"] != "max":   # a static batch: one pass, every prompt prefilled before decoding
        osl = 1 if item["metric"] == "ttft_ms" else item["osl"]
        result = cli_estimate(model, item["system"], mode="static", osl=osl, batch_size=item["concurrency"], **common)
        return float(result.ttft if item["metric"] == "ttft_ms" else result.tokens_per_second), "static"
    def served(b: int):
        """Its estimate at batch ``b``, or None where its memory or KV-cache check refuses the batch (beyond
        the KV capacity the runtime queues: not a batch it serves)."""
        try:
            result = cli_estimate(model, item["system"], osl=item["osl"], batch_size=b, **common)
        except RuntimeError as exc:
            if "OOM" not in str(exc):
                raise
            return None
        return None if result.kv_cache_warning else result

    best, batch, refused = None, 0, None
    for b in MAX_BATCHES:
        result = served(b)
        if result is None:
            refused = b
            break
        if best is not None and result.tokens_per_second < best * 1.01:   # a doubling adds under 1 %: its peak
            break
        best, batch = float(result.tokens_per_second), b
    if refused is not None:   # the largest batch it serves lies between the last served and the refused one
        low, high = batch, refused
        while high - low > max(1, low // 8):
            middle = (low + high) // 2
            result = served(middle)
            if result is None:
                high = middle
            else:
                low = middle
                if best is None or result.tokens_per_second > best:
                    best, batch = float(result.tokens_per_second), middle
    return best, (f"batch {batch}" if best is not None else "no batch fits")


def published_worker() -> None:
    """Read published rows (JSON list) on stdin; print {index: [value, seconds, what ran, engine version]}."""
    import logging
    import tempfile

    logging.disable(logging.WARNING)
    from aiconfigurator.cli.api import cli_estimate

    configs = Path(tempfile.mkdtemp(prefix="aic-configs-"))
    out = {}
    for item in json.load(sys.stdin):
        model = item["model"]
        if item.get("config"):   # a model it ships no config for: the catalog's architecture as HF config.json
            (configs / model).mkdir(exist_ok=True)
            (configs / model / "config.json").write_text(json.dumps(item["config"]), encoding="utf-8")
            model = str(configs / model)
        start = time.perf_counter()
        try:
            value, ran = _published_estimate(cli_estimate, item, model)
        except Exception as exc:   # a configuration it cannot estimate
            value, ran = None, type(exc).__name__
        out[item["index"]] = [value, time.perf_counter() - start, ran]
    json.dump(out, sys.stdout)


# ---- our side ---------------------------------------------------------------------------------------

def _hf_config(model_id: str) -> dict:
    """A Hugging Face ``config.json`` of a dense catalog model, for AIConfigurator to read its architecture."""
    from finops.catalog import resolve_model

    m = resolve_model(model_id)
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": m.hidden_size,
            "intermediate_size": m.intermediate_size, "num_attention_heads": m.num_attention_heads,
            "num_key_value_heads": m.num_kv_heads, "num_hidden_layers": m.layers, "head_dim": m.head_dim,
            "vocab_size": m.vocab_size, "max_position_embeddings": m.max_context, "torch_dtype": "bfloat16",
            "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": m.tied_embeddings}


def published_main(aiconfigurator_python: str | None) -> None:
    """Ours and AIConfigurator's error on the published TensorRT-LLM rows, per source and per TP."""
    import numpy as np

    from finops.errors import InputError
    from finops.sizing.engine_constants import Calibration
    from finops.sizing.published import predict, published_rows

    rows = [r for r in published_rows() if r.source_id in PUBLISHED_SOURCES and r.gpu in AIC_SYSTEM
            and r.precision in AIC_QUANT and r.kv_precision in AIC_QUANT]
    bundled = Calibration.bundled()
    start = time.perf_counter()
    ours = np.full(len(rows), np.nan)
    for i, r in enumerate(rows):
        try:
            ours[i] = predict([r], bundled)[0]
        except InputError:
            pass
    ours_seconds = (time.perf_counter() - start) / len(rows)
    theirs = np.full(len(rows), np.nan)
    ran: dict[int, list] = {}
    if aiconfigurator_python:
        payload = [{"index": i, "system": AIC_SYSTEM[r.gpu], "isl": r.isl, "osl": r.osl, "tp": r.tp,
                    "gemm": AIC_QUANT[r.precision], "kv": AIC_QUANT[r.kv_precision], "concurrency": r.concurrency,
                    "metric": r.metric,
                    "model": AIC_MODEL.get(r.model) or AIC_SAME_ARCHITECTURE.get(r.model) or r.model,
                    "config": None if r.model in AIC_MODEL or r.model in AIC_SAME_ARCHITECTURE else _hf_config(r.model)}
                   for i, r in enumerate(rows)]
        start = time.perf_counter()
        done = subprocess.run([aiconfigurator_python, __file__, "--worker-published"], input=json.dumps(payload),
                              capture_output=True, text=True, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        wall = time.perf_counter() - start
        ran = {int(k): v for k, v in json.loads(done.stdout).items()}
        theirs = np.array([ran[i][0] if ran.get(i) and ran[i][0] is not None else np.nan for i in range(len(rows))])
    measured = np.array([r.value for r in rows])
    print(f"{len(rows)} published TensorRT-LLM rows AIConfigurator can express (of the sources "
          f"{', '.join(PUBLISHED_SOURCES)}), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"\n{'slice':44} {'rows':>5} {'both':>5} | {'ours':>7} {'ratio':>6} | {'AIC':>7} {'ratio':>6}")

    def line(name: str, mask: np.ndarray) -> None:
        both = mask & ~np.isnan(ours) & (~np.isnan(theirs) if ran else True)   # without it: ours on every row
        cells = []
        for values in (ours, theirs):
            if both.any() and not np.isnan(values[both]).all():
                r = values[both] / measured[both]
                cells.append(f"{np.median(np.abs(r - 1)):7.1%} {np.median(r):6.2f}")
            else:
                cells.append(f"{'-':>7} {'-':>6}")
        print(f"{name:44} {int(mask.sum()):>5} {int(both.sum()):>5} | {cells[0]} | {cells[1]}")

    slices = [("all", np.ones(len(rows), dtype=bool))]
    for source in PUBLISHED_SOURCES:
        in_source = np.array([r.source_id == source for r in rows])
        slices.append((source, in_source))
        for gpu in sorted({r.gpu for r in rows if r.source_id == source}):
            for tp in sorted({r.tp for r in rows if r.source_id == source and r.gpu == gpu}):
                slices.append((f"  {gpu} TP{tp}", in_source & np.array([r.gpu == gpu and r.tp == tp for r in rows])))
    slices += [(f"TP{tp} (all sources)", np.array([r.tp == tp for r in rows])) for tp in sorted({r.tp for r in rows})]
    for name, mask in slices:
        line(name, mask)
    print("\nmedian |modelled / published - 1| on the rows both answer; ratio: median modelled / published")
    print(f"time per row: ours {ours_seconds * 1e3:.2f} ms (estimate, warm)", end="")
    if ran:
        refused = int(np.isnan(theirs).sum())
        print(f"; AIConfigurator {np.median([v[1] for v in ran.values()]):.1f} s median (a batch sweep for a "
              f"maximum-throughput row), {wall:.0f} s for {len(rows)} rows; it answered {len(rows) - refused}, "
              f"{refused} without an answer ({', '.join(sorted({v[2] for v in ran.values() if v[0] is None})) or '-'})")
    else:
        print("; no --aiconfigurator-python: AIConfigurator not run (pip install aiconfigurator==0.12.0 into its own "
              "environment)")
    print(f"ours refused {int(np.isnan(ours).sum())} rows")


def _spread(indices: list[int], count: int) -> list[int]:
    """``count`` of ``indices`` spread evenly over them (all of them when there are fewer)."""
    if len(indices) <= count:
        return indices
    step = len(indices) / count
    return [indices[int(i * step)] for i in range(count)]


def main() -> None:
    import numpy as np

    from finops.sizing.calibration import (
        BUNDLED_CLASSES,
        bundled_measurements,
        bundled_rows,
        leave_one_model_out,
        throughput,
    )
    from finops.sizing.performance import estimate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aiconfigurator-python", help="the interpreter of an environment with aiconfigurator 0.12")
    parser.add_argument("--per-group", type=int, default=8, help="rows per engine and model (default 8)")
    parser.add_argument("--published", action="store_true",
                        help="compare on the published TensorRT-LLM rows instead of AIConfigurator's own silicon rows")
    args = parser.parse_args()
    if args.published:
        published_main(args.aiconfigurator_python)
        return

    measurements = bundled_measurements()
    def identity(engine, model, gpu, precision, isl, osl, concurrency, tp, ttft_ms, tpot_ms) -> tuple:
        return (engine, model, gpu, precision, int(isl), int(osl), int(concurrency), int(tp), float(ttft_ms),
                float(tpot_ms))

    by_identity = {identity(*(r[f] for f in KEY_FIELDS if f != "engine_version")): tuple(r[f] for f in KEY_FIELDS)
                   for r in bundled_rows()}
    report = leave_one_model_out(measurements, classes=BUNDLED_CLASSES)
    keys = [by_identity[identity(m.engine, m.model, m.gpu, m.precision, m.isl, m.osl, m.concurrency, m.tp,
                                 m.ttft_ms, m.tpot_ms)] for m in report.rows]   # the bundled row of each prediction
    groups: dict[tuple[str, str], list[int]] = {}
    for i, m in enumerate(report.rows):
        groups.setdefault((m.engine, m.model), []).append(i)
    chosen = sorted(i for members in groups.values() for i in _spread(members, args.per_group))

    start = time.perf_counter()
    for i in chosen:
        m = report.rows[i]
        estimate(m.model, m.gpu, precision=m.precision, tp=m.tp, isl=m.isl, osl=m.osl, concurrency=m.concurrency,
                 engine=m.engine)
    ours_seconds = (time.perf_counter() - start) / len(chosen)

    theirs: dict[int, list] = {}
    if args.aiconfigurator_python:
        payload = json.dumps([{"index": i, "key": list(keys[i])} for i in chosen])
        start = time.perf_counter()
        done = subprocess.run([args.aiconfigurator_python, __file__, "--worker"], input=payload, capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        wall = time.perf_counter() - start
        theirs = {int(k): v for k, v in json.loads(done.stdout).items()}
    load = os.getloadavg()[0]
    print(f"{len(chosen)} of the {len(report.rows)} held-out rows ({args.per_group} per engine and model), "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")

    rows = [report.rows[i] for i in chosen]
    measured_ttft = np.array([r.ttft_ms for r in rows])
    measured_tpot = np.array([r.tpot_ms for r in rows])
    ours_ttft, ours_tpot = report.ttft_ms[chosen], report.tpot_ms[chosen]
    answered = np.array([theirs.get(i) is not None and theirs[i][0] is not None for i in chosen], dtype=bool)
    aic_ttft = np.array([theirs[i][0] if answered[k] else np.nan for k, i in enumerate(chosen)], dtype=float)
    aic_tpot = np.array([theirs[i][1] if answered[k] else np.nan for k, i in enumerate(chosen)], dtype=float)

    def errors(ttft: np.ndarray, tpot: np.ndarray, mask: np.ndarray) -> str:
        sub = [r for r, k in zip(rows, mask) if k]
        rate = throughput(sub, ttft[mask], tpot[mask]) / throughput(sub, measured_ttft[mask], measured_tpot[mask])
        cells = (np.abs(tpot[mask] / measured_tpot[mask] - 1), np.abs(ttft[mask] / measured_ttft[mask] - 1),
                 np.abs(rate - 1))
        return " ".join(f"{np.median(c):7.1%}" for c in cells)

    print(f"\n{'slice':24} {'rows':>5} | {'ours, held out by model':^23} | {'AIConfigurator 0.12':^23}")
    print(f"{'':24} {'':>5} | {'TPOT':>7} {'TTFT':>7} {'tok/s':>7} | {'TPOT':>7} {'TTFT':>7} {'tok/s':>7}")
    slices = [("all", np.ones(len(rows), dtype=bool))]
    slices += [(e, np.array([r.engine == e for r in rows])) for e in sorted({r.engine for r in rows})]
    slices += [(m, np.array([r.model == m for r in rows])) for m in sorted({r.model for r in rows})]
    for name, mask in slices:
        both = mask & answered
        theirs_cells = errors(aic_ttft, aic_tpot, both) if both.any() else f"{'no answer':>23}"
        print(f"{name:24} {int(both.sum()):>5} | {errors(ours_ttft, ours_tpot, both if both.any() else mask)} | "
              f"{theirs_cells}")
    if theirs:
        times = [theirs[i][2] for i in chosen if theirs.get(i)]
        defaults = sum(1 for i in chosen if theirs.get(i) and theirs[i][3] == "default version")
        failed = sum(1 for i in chosen if not theirs.get(i) or theirs[i][0] is None)
        print(f"\ntime per query: ours {ours_seconds * 1e3:.2f} ms (estimate, warm, one process); AIConfigurator "
              f"{np.median(times):.2f} s median, {wall:.0f} s for {len(chosen)} rows in a fresh process "
              f"(its database load included)")
        print(f"AIConfigurator answered {int(answered.sum())} rows ({defaults} at its default engine version, the "
              f"measured one not in its database; {failed} without an answer)")
    else:
        print(f"\ntime per query: ours {ours_seconds * 1e3:.2f} ms; no --aiconfigurator-python: AIConfigurator not run "
              "(pip install aiconfigurator==0.12.0 into its own environment)")


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
    elif "--worker-published" in sys.argv[1:]:
        published_worker()
    else:
        main()
