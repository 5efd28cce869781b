"""Held-out residuals by class: every published row the bundled constants never fitted, predicted as the
product answers it, with the reach of that answer (``finops.sizing.bands``).

Rows come from two bundled files, neither fitted by the engines' constants:

* ``finops/data/calibration/published-wide-2026-12.csv`` (a copy of the project's collection: AWS Neuron
  SDK 2.18's Inferentia2 tables, TensorRT-LLM perf-overview v0.9 / v0.13 / v1.0 on A100, L40S, H100, H200
  and B200);
* ``finops/data/calibration/published_other_accelerators.csv`` (AMD's vLLM results on MI300X), predicted
  with the engine's constants alone: the vendor fit is left out, as on a family never measured;

and, from the fit itself, the AIConfigurator rows of each GPU predicted by a fit on the other GPUs' rows
(leave-one-GPU-out: a family whose kernels were measured but whose end-to-end rows were not fitted).

A row the catalog cannot state is skipped and counted (a model not in the catalog, FP4, an accelerator
outside it). A Neuron row counts its tensor parallelism in NeuronCores over ``n_gpus`` chips; the product
shards whole heads over chips, so such a row is predicted at the two chip counts nearest ``n_gpus`` that
shard the model's heads and interpolated geometrically in the chip count (decode time is close to
inversely proportional to the chips a memory-bound step reads from). Models published under an older
name with the same architecture are read as the catalog's (``SAME_ARCHITECTURE``).

``python benchmarks/bench_calibration.py --write`` writes the residuals of the rows reached as
``kernels`` and ``unmeasured`` to ``finops/data/calibration/held_out_families.csv.gz``, from which the
product derives those reaches' bands when it loads (``finops.sizing.bands.bands_by_class``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import resources

from finops.catalog import get_accelerator, resolve_model
from finops.errors import InputError
from finops.sizing.bands import HeldOutRatio
from finops.sizing.calibration import FoldReport
from finops.sizing.engine_constants import Calibration, model_class
from finops.sizing.memory import PRECISIONS, tp_shards_heads
from finops.sizing.performance import estimate
from finops.sizing.published import published_rows


@dataclass(frozen=True)
class WideRow:
    """One published figure of the wide collection, stated in the catalog's terms."""

    model: str
    gpu: str
    chips: int
    precision: str
    engine: str
    source: str
    isl: int
    osl: int
    concurrency: int | str
    metric: str
    value: float          # of the replica (a per-GPU figure multiplied by the chips)


WIDE_FILE = "published-wide-2026-12.csv"
#: Published names -> the catalog model of the same architecture (layers, heads, widths, vocabulary).
SAME_ARCHITECTURE = {"llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b", "mistral-7b-v0.2": "mistral-7b"}
#: The engine each published engine is answered with: Neuron's own stack has no constants; a user sizing
#: Inferentia2 sizes it under vLLM (its Neuron backend), the product's default engine.
ENGINE_AS = {"tensorrt-llm": "trtllm", "transformers-neuronx": "vllm"}
_PRECISION = {"int8-weights(bf16 compute)": "int8"}
_METRICS = ("output_tokens_per_s", "ttft_ms", "tpot_ms")


def _source(url: str, version: str) -> str:
    if "aws-neuron" in url:
        return f"neuron-sdk-{version.split()[-1]}"
    return f"trtllm-perf-overview-{version.split()[0]}"


def wide_rows() -> tuple[list[WideRow], dict[str, int]]:
    """The rows the catalog can state, and why the others were skipped (reason -> rows)."""
    text = resources.files("finops").joinpath("data", "calibration", WIDE_FILE).read_text(encoding="utf-8")
    rows, skipped = [], {}
    for r in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
        precision = _PRECISION.get(r["precision"], r["precision"])
        why = None
        if r["metric"] not in _METRICS:
            why = f"metric {r['metric']}"
        elif r["gpu"].startswith("other:"):
            why = "accelerator not in the catalog"
        elif precision not in PRECISIONS:
            why = f"precision {precision}"
        else:
            try:
                resolve_model(SAME_ARCHITECTURE.get(r["model"], r["model"]))
            except InputError:
                why = "model not in the catalog"
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        chips = int(r["n_gpus"])
        value = float(r["value"]) * (chips if r["scope"].startswith("per GPU") else 1)
        concurrency = r["concurrency"]
        rows.append(WideRow(model=SAME_ARCHITECTURE.get(r["model"], r["model"]), gpu=r["gpu"], chips=chips,
                            precision=precision, engine=ENGINE_AS[r["engine"]],
                            source=_source(r["source_url"], r["engine_version"]), isl=int(r["isl"]),
                            osl=int(r["osl"]), metric=r["metric"], value=value,
                            concurrency="max" if concurrency == "max" else int(concurrency.split(":")[-1])))
    return rows, skipped


def _chip_counts(model: str, chips: int) -> list[int]:
    """``chips`` when it shards the model's heads, else the nearest counts below and above that do."""
    spec = resolve_model(model)
    if tp_shards_heads(spec, chips):
        return [chips]
    below = next(t for t in range(chips, 0, -1) if tp_shards_heads(spec, t))
    above = next((t for t in range(chips, 8 * chips) if tp_shards_heads(spec, t)), below)
    return [below, above]


def predict_wide(row: WideRow, calibration: Calibration) -> float:
    """The product's figure for ``row``'s metric (NaN where the model does not fit the accelerators)."""
    counts = _chip_counts(row.model, row.chips)
    values = []
    for tp in counts:
        e = estimate(row.model, row.gpu, precision=row.precision, tp=tp, isl=row.isl, osl=row.osl,
                     concurrency=row.concurrency, engine=row.engine, calibration=calibration)
        value = getattr(e, row.metric)
        if value is None:
            return math.nan
        values.append(value)
    if len(values) == 1 or counts[0] == counts[1]:
        return values[0]
    share = math.log(row.chips / counts[0]) / math.log(counts[1] / counts[0])
    return math.exp(math.log(values[0]) + share * (math.log(values[1]) - math.log(values[0])))


def gpu_out_ratios(report: FoldReport) -> list[HeldOutRatio]:
    """The AIConfigurator rows of each GPU predicted by a fit on the other GPUs' rows
    (``leave_one_model_out(hold_out="gpu")``): what an accelerator whose kernels were measured, but no
    end-to-end row of it fitted, gets (reach ``kernels``)."""
    return [HeldOutRatio(reach="kernels", engine=r.engine, model_class=model_class(resolve_model(r.model)), tp=r.tp,
                         family=r.gpu, source="aiconfigurator-gpu-out", metric=metric, ratio=round(float(x), 4))
            for metric in _METRICS for r, x in zip(report.rows, report.ratio(metric))]


def held_out_ratios(calibration: Calibration | None = None,
                    gpu_out: FoldReport | None = None) -> tuple[list[HeldOutRatio], dict[str, int]]:
    """Measured / modelled of every bundled published row the engines' constants never fitted, with its
    class (reach as the product answers it, engine, model class, TP, family, source), and the rows skipped;
    with ``gpu_out``, the AIConfigurator rows held out by GPU as well (:func:`gpu_out_ratios`)."""
    cal = calibration or Calibration.bundled()
    engine_only = replace(cal, vendors={})
    rows, skipped = wide_rows()
    out: list[HeldOutRatio] = []
    for row in rows:
        try:
            modelled = predict_wide(row, cal)
        except InputError as exc:     # a length past the catalog's context, a precision the engine lacks
            modelled, why = math.nan, str(exc).split(";")[0].split(" (")[0][:60]
        else:
            why = "does not fit"
        if not math.isfinite(modelled):
            skipped[why] = skipped.get(why, 0) + 1
            continue
        out.append(_ratio(cal, row.engine, row.model, row.gpu, row.chips, row.source, row.metric,
                          row.value / modelled))
    amd = published_rows()
    for row, value in zip(amd, _amd_predictions(amd, engine_only)):
        metric = "tpot_ms" if row.metric == "request_latency_ms" else row.metric
        out.append(_ratio(engine_only, row.engine, row.model, row.gpu, row.tp, row.source_id, metric,
                          row.value / value))
    return out + (gpu_out_ratios(gpu_out) if gpu_out is not None else []), skipped


def _amd_predictions(rows: Iterable, calibration: Calibration) -> list[float]:
    from finops.sizing.published import predict

    return list(predict(list(rows), calibration))


def _ratio(cal: Calibration, engine: str, model: str, gpu: str, tp: int, source: str, metric: str,
           ratio: float) -> HeldOutRatio:
    device = get_accelerator(gpu)
    return HeldOutRatio(reach=cal.reach(engine, device), engine=engine, model_class=model_class(resolve_model(model)),
                        tp=tp, family=device.id, source=source, metric=metric, ratio=round(float(ratio), 4))


HEADER = """Held-out residuals by class: measured / modelled of every bundled published row the engines' constants never
fitted, predicted as the product answers it (reach: how far that answer extrapolates, finops.sizing.bands).
Written by `python benchmarks/bench_calibration.py --write` (benchmarks/held_out_families.py) from
finops/data/calibration/published-wide-2026-12.csv and published_other_accelerators.csv (the vendor fit left
out); the product derives the kernels and unmeasured reaches' bands from it when it loads. Add a row by adding
the published figure to one of those files and rerunning."""


def write(path, ratios) -> None:
    from finops.sizing.bands import write_held_out

    write_held_out(path, sorted(ratios, key=lambda r: (r.reach, r.family, r.engine, r.source, r.metric, r.ratio)),
                   HEADER)

