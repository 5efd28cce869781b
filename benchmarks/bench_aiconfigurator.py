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

Run: ``python benchmarks/bench_aiconfigurator.py --aiconfigurator-python /tmp/aic/bin/python``
(``--per-group N``: N rows per engine and model, spread over each group's rows; default 8). Without an
AIConfigurator environment it says so and prints ours alone.
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


# ---- our side ---------------------------------------------------------------------------------------

def _spread(indices: list[int], count: int) -> list[int]:
    """``count`` of ``indices`` spread evenly over them (all of them when there are fewer)."""
    if len(indices) <= count:
        return indices
    step = len(indices) / count
    return [indices[int(i * step)] for i in range(count)]


def main() -> None:
    import numpy as np

    from finops.sizing.calibration import (BUNDLED_CLASSES, bundled_measurements, bundled_rows, leave_one_model_out,
                                           throughput)
    from finops.sizing.performance import estimate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aiconfigurator-python", help="the interpreter of an environment with aiconfigurator 0.12")
    parser.add_argument("--per-group", type=int, default=8, help="rows per engine and model (default 8)")
    args = parser.parse_args()

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
    else:
        main()
