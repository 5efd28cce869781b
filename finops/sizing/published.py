"""Published serving results, and the per-family efficiencies fitted on them.

``finops/data/calibration/published_other_accelerators.csv`` (AMD's MI300X results, Qwen's Qwen3 speed tables
on the H20 under SGLang, an llmperf comparison of vLLM and TGI on the A10G, SGLang-JAX's cookbook and Qwen3
report on TPU v6e; collected by hand) and
``published_serving.csv`` (derived by ``scripts/derive_published_serving.py``: TensorRT-LLM's performance
overviews on A100, H100, H200, L40S and RTX PRO 6000, AWS Neuron's Inferentia2 decoder tables) hold one
published figure per line (source URL, date, engine version and conditions on every line;
:func:`published_rows`). A row is predicted as the product answers it (:func:`predict`:
:func:`~finops.sizing.performance.estimate` at its configuration, ``concurrency="max"`` for a
maximum-throughput figure). For each accelerator family (the catalog's ``family``) and engine with rows on
accelerators outside the kernel tables (:func:`fittable`), :func:`fit_vendor` fits the roofline's two hardware
terms, the share of peak HBM bandwidth a decode step reaches (``eta_bw``) and of dense peak FLOPS a prefill
reaches (``eta_c``), minimizing the sum of squared ``log(modelled / published)`` with every other constant
the engine's (``scipy.optimize.least_squares``, bounds 0.05-1). Rows on accelerators the kernel tables cover
are checks of the kernel-timed model, never fitted. :func:`held_out` predicts every row from a fit that
never saw its group (its source, or its model where a family has one source), and :func:`with_vendors`
stores the fit on all rows with those held-out ratios as the family's band
(:class:`~finops.sizing.vendor_efficiency.VendorEfficiency`). ``benchmarks/bench_calibration.py`` prints the
held-out errors per family.

>>> rows = published_rows()
>>> len(rows), sorted({(r.gpu, r.engine) for r in fittable(rows)})
(609, [('a10g', 'vllm'), ('h20', 'sglang'), ('inferentia2', 'vllm'), ('mi300x', 'vllm'), ('tpu-v6e', 'sglang')])
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources

import numpy as np

from ..catalog import get_accelerator
from ..errors import InputError
from .engine_constants import Calibration
from .kernels import kernel_gpus
from .performance import estimate
from .vendor_efficiency import BAND_LEVELS, EFFICIENCY_RANGE, VendorEfficiency, family_gpus, vendor_gpus

__all__ = ["PUBLISHED_FILE", "PUBLISHED_FILES", "PublishedRow", "answerable", "family_gpus", "fit_vendor", "fittable", "held_out",
           "predict", "published_rows", "vendor_gpus", "with_vendors"]

PUBLISHED_FILE = "published_other_accelerators.csv"
#: Every bundled file of published rows, in the columns of :data:`PUBLISHED_FILE`: the AMD, H20, A10G and TPU v6e
#: results collected by hand, and the rows ``scripts/derive_published_serving.py`` derives from the collected wide table
#: (TensorRT-LLM's performance overviews on A100, H100, H200, L40S and RTX PRO 6000; Neuron on Inferentia2).
PUBLISHED_FILES: tuple[str, ...] = (PUBLISHED_FILE, "published_serving.csv")
#: What a row may report: the Estimate field it is compared with.
METRICS = ("output_tokens_per_s", "request_latency_ms", "ttft_ms", "tpot_ms")
#: Metrics a vendor band is kept for (those of Estimate's bands that rows can report).
_BAND_METRICS = ("output_tokens_per_s", "ttft_ms", "tpot_ms")
_BOUNDS = tuple(np.log(EFFICIENCY_RANGE))
#: The largest fixed cost of a prefill pass a family fit may find, in ms (Neuron's is about 15-20).
_PASS_MS_MAX = 200.0


@dataclass(frozen=True)
class PublishedRow:
    """One published figure and the configuration it was measured at."""

    source_id: str
    gpu: str
    engine: str
    engine_version: str
    model: str
    precision: str
    kv_precision: str
    tp: int
    isl: int
    osl: int
    concurrency: int | str     # a batch size, or "max": the maximum-throughput point
    max_batch: int | None      # the engine's sequence limit where the source states it
    metric: str
    value: float
    published: str
    url: str
    client: str = "synchronized"   # how the benchmark's clients ran (performance.CLIENTS): "static" for a static batch
    context_length: int | None = None   # the sequence length the run's engine served, where the source states it


def _int(text: str, column: str, line: int, name: str = PUBLISHED_FILE) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{name} line {line}, column {column}: not a whole number: {text!r}") from None


def published_rows(files: Sequence[str] = PUBLISHED_FILES) -> list[PublishedRow]:
    """The bundled published rows of ``files`` (comment lines, ``#``, carry each file's source and date)."""
    return [row for name in files for row in _read_published(name)]


def _read_published(name: str) -> list[PublishedRow]:
    text = resources.files("finops").joinpath("data", "calibration", name).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    rows = []
    for n, r in enumerate(csv.DictReader(io.StringIO("".join(lines))), start=2):
        if r["metric"] not in METRICS:
            raise InputError(f"{name} line {n}, column metric: unknown metric {r['metric']!r}",
                             hint=f"use one of: {', '.join(METRICS)}")
        rows.append(PublishedRow(
            source_id=r["source_id"], gpu=get_accelerator(r["gpu"]).id, engine=r["engine"],
            engine_version=r["engine_version"], model=r["model"], precision=r["precision"],
            kv_precision=r["kv_precision"], tp=_int(r["tp"], "tp", n, name), isl=_int(r["isl"], "isl", n, name),
            osl=_int(r["osl"], "osl", n, name),
            concurrency="max" if r["concurrency"] == "max" else _int(r["concurrency"], "concurrency", n, name),
            max_batch=_int(r["max_batch"], "max_batch", n, name) if r["max_batch"] else None, metric=r["metric"],
            value=float(r["value"]), published=r["published"], url=r["url"],
            client=r.get("client") or "synchronized",
            context_length=_int(r["context_length"], "context_length", n, name) if r.get("context_length") else None))
    return rows


def answerable(row: PublishedRow) -> bool:
    """True when the product estimates the row's configuration (a row beyond the context its engine served,
    or at a precision the accelerator lacks, is refused)."""
    try:
        predict([row], Calibration.bundled())
    except InputError:
        return False
    return True


def fittable(rows: Sequence[PublishedRow]) -> list[PublishedRow]:
    """The rows a family fit can learn from: those the product answers, on accelerators outside the kernel
    tables, where the roofline's efficiencies time the steps (elsewhere the measured kernels do, and the
    rows are checks)."""
    tables = set(kernel_gpus())
    return [r for r in rows if r.gpu not in tables and answerable(r)]


def _family(row: PublishedRow) -> tuple[str, str]:
    return get_accelerator(row.gpu).family, row.engine


def _reach(rows: Sequence[PublishedRow]) -> dict[str, tuple[float, float]]:
    """The span of the rows a fit was made on: TP, active parameters (billions), batch (a maximum-throughput
    row's batch is unknown and counts as its stated limit, else as unbounded)."""
    from ..catalog import resolve_model

    params = [resolve_model(r.model).active_params_b for r in rows]
    batches = [float(r.concurrency if r.concurrency != "max" else r.max_batch or np.inf) for r in rows]
    return {"tp": (float(min(r.tp for r in rows)), float(max(r.tp for r in rows))),
            "params_b": (min(params), max(params)), "batch": (min(batches), max(batches))}


def predict(rows: Sequence[PublishedRow], calibration: Calibration) -> np.ndarray:
    """The product's figure for each row's metric at its configuration."""
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl, engine=r.engine,
                     concurrency=r.concurrency, kv_precision=r.kv_precision, max_batch=r.max_batch,
                     calibration=calibration, client=r.client, context_length=r.context_length)
        out[i] = getattr(e, r.metric)
    return out


def _with(calibration: Calibration, entry: VendorEfficiency) -> Calibration:
    return replace(calibration, vendors={**calibration.vendors, entry.key: entry})


def fit_vendor(rows: Sequence[PublishedRow], calibration: Calibration, source: str = "") -> VendorEfficiency:
    """``eta_bw`` and ``eta_c`` of the rows' one accelerator family and engine, fitted on them (the engine's
    other constants as ``calibration`` has them), for the family's accelerators outside the kernel tables;
    where the rows report TTFT, also the fixed cost of a prefill pass on the family's runtime
    (``prefill_pass_ms``, 0-200 ms; :mod:`finops.sizing.performance`).

    A time to first token measured under several clients is left out of the fit (it is kept as a check): it
    times how the engine's scheduler admits prompts between decode steps, an engine constant. Two kinds time
    prompts' compute and are fitted: a static batch's (client ``static``: the whole batch prefilled at once,
    Neuron's decoder tables) and a prefill-only load's (``osl`` 1: no decode step between the prompts, so the
    first tokens wait on the prompts' compute alone; SGLang-JAX's TPU v6e sweep)."""
    from scipy.optimize import least_squares

    rows = [r for r in rows if not (r.metric == "ttft_ms" and r.concurrency != 1 and r.client != "static"
                                    and r.osl != 1)] or list(rows)
    families = {_family(r) for r in rows}
    if len(families) != 1:
        raise InputError(f"a family fit takes the rows of one accelerator family and engine, got {sorted(families)}")
    (family, engine), = families
    values = np.array([r.value for r in rows])
    c = calibration.constants(engine)
    vendor = get_accelerator(rows[0].gpu).vendor

    timed = any(r.metric == "ttft_ms" for r in rows)   # only TTFT rows tell the prefill pass's fixed cost

    def entry(x: np.ndarray) -> VendorEfficiency:
        bw, eta_c = (float(v) for v in np.exp(x[:2]))
        return VendorEfficiency(vendor=vendor, engine=engine, bandwidth_efficiency=bw,
                                compute_efficiency=eta_c, rows=len(rows), source=source, family=family,
                                measured_on=tuple(sorted({r.gpu for r in rows})),
                                sources=tuple(sorted({r.source_id for r in rows})), reach=_reach(rows),
                                prefill_pass_ms=float(x[2]) if timed else 0.0)

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(predict(rows, _with(calibration, entry(x))) / values)

    start = np.log([c.bandwidth_efficiency, c.compute_efficiency]).clip(*_BOUNDS)
    low, high = [_BOUNDS[0]] * 2, [_BOUNDS[1]] * 2
    if timed:
        start, low, high = np.append(start, 5.0), low + [0.0], high + [_PASS_MS_MAX]
    result = least_squares(residuals, start, bounds=(low, high), diff_step=1e-3)
    return entry(result.x)


def held_out(rows: Sequence[PublishedRow], calibration: Calibration, group: str = "source_id") -> np.ndarray:
    """Ratio published / modelled of every row, each predicted by a fit on the rows of its accelerator
    family and engine outside its ``group`` (``source_id`` or ``model``; a family whose rows come from
    one source is held out by model); NaN where no other group has rows."""
    ratio = np.full(len(rows), np.nan)
    keys = [_family(r) for r in rows]
    for key in sorted(set(keys)):
        mine = [i for i, k in enumerate(keys) if k == key]
        by = group if len({getattr(rows[i], group) for i in mine}) > 1 else "model"
        for value in sorted({getattr(rows[i], by) for i in mine}):
            test = [i for i in mine if getattr(rows[i], by) == value]
            train = [rows[i] for i in mine if getattr(rows[i], by) != value]
            if not train:
                continue
            fitted = _with(calibration, fit_vendor(train, calibration))
            ratio[test] = np.array([rows[i].value for i in test]) / predict([rows[i] for i in test], fitted)
    return ratio


def with_vendors(calibration: Calibration, rows: Sequence[PublishedRow] | None = None,
                 group: str = "source_id") -> Calibration:
    """``calibration`` with one :class:`VendorEfficiency` per vendor and engine of ``rows`` (by default
    the bundled ones): fitted on all its rows, its band and errors from :func:`held_out` by ``group``
    (a throughput band from the maximum-throughput rows; a TPOT band from TPOT rows and from request
    latencies, which at the rows' long outputs are decode time; a metric without rows keeps the engine's
    band)."""
    rows = fittable(published_rows() if rows is None else list(rows))
    ratio = held_out(rows, calibration, group)
    out = calibration
    for key in sorted({_family(r) for r in rows}):
        index = [i for i, r in enumerate(rows) if _family(r) == key]
        mine = [rows[i] for i in index]
        sources = sorted({f"{r.source_id} ({r.url}, {r.published})" for r in mine})
        entry = fit_vendor(mine, calibration, source="; ".join(sources))
        by_metric = {"output_tokens_per_s": ("output_tokens_per_s",),
                     "ttft_ms": ("ttft_ms",), "tpot_ms": ("tpot_ms", "request_latency_ms")}
        bands, errors, band_sources = {}, {}, {}
        for metric in _BAND_METRICS:
            used = [i for i in index if rows[i].metric in by_metric[metric] and not np.isnan(ratio[i])]
            r = ratio[used]
            if len(r):
                bands[metric] = tuple(round(float(q), 4) for q in np.quantile(r, BAND_LEVELS))
                errors[metric] = round(float(np.median(np.abs(1.0 / r - 1.0))), 4)
                band_sources[metric] = len({rows[i].source_id for i in used})
        out = _with(out, replace(entry, bandwidth_efficiency=round(entry.bandwidth_efficiency, 4),
                                 compute_efficiency=round(entry.compute_efficiency, 4),
                                 prefill_pass_ms=round(entry.prefill_pass_ms, 3), bands=bands,
                                 band_sources=band_sources,
                                 held_out_error=errors))
    return out
