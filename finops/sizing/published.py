"""Published serving results on accelerators outside the measured kernel tables, and the per-vendor
efficiencies fitted on them.

``finops/data/calibration/published_other_accelerators.csv`` holds one published figure per line (source
URL, date, engine version and conditions on every line; :func:`published_rows`). A row is predicted as
the product answers it (:func:`predict`: :func:`~finops.sizing.performance.estimate` at its
configuration, ``concurrency="max"`` for a maximum-throughput figure). For each vendor and engine with
rows, :func:`fit_vendor` fits the roofline's two hardware terms, the share of peak HBM bandwidth a
decode step reaches (``eta_bw``) and of dense peak FLOPS a prefill reaches (``eta_c``), minimizing the
sum of squared ``log(modelled / published)`` with every other constant the engine's
(``scipy.optimize.least_squares``, bounds 0.05-1). :func:`held_out` predicts every row from a fit that
never saw its group (its source, or its model), and :func:`with_vendors` stores the fit on all rows with
those held-out ratios as the vendor's band (:class:`~finops.sizing.vendor_efficiency.VendorEfficiency`).
``benchmarks/bench_calibration.py`` prints the held-out errors per vendor.

>>> rows = published_rows()
>>> len(rows), sorted({(r.gpu, r.engine) for r in rows})
(70, [('mi300x', 'vllm')])
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
from .performance import estimate
from .vendor_efficiency import BAND_LEVELS, VendorEfficiency, vendor_gpus

__all__ = ["PUBLISHED_FILE", "PublishedRow", "fit_vendor", "held_out", "predict", "published_rows", "vendor_gpus",
           "with_vendors"]

PUBLISHED_FILE = "published_other_accelerators.csv"
#: What a row may report: the Estimate field it is compared with.
METRICS = ("output_tokens_per_s", "request_latency_ms", "ttft_ms", "tpot_ms")
#: Metrics a vendor band is kept for (those of Estimate's bands that rows can report).
_BAND_METRICS = ("output_tokens_per_s", "ttft_ms", "tpot_ms")
_BOUNDS = (np.log(0.05), np.log(1.0))


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


def _int(text: str, column: str, line: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{PUBLISHED_FILE} line {line}, column {column}: not a whole number: {text!r}") from None


def published_rows() -> list[PublishedRow]:
    """The bundled published rows (comment lines, ``#``, carry the file's source and date)."""
    text = resources.files("finops").joinpath("data", "calibration", PUBLISHED_FILE).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    rows = []
    for n, r in enumerate(csv.DictReader(io.StringIO("".join(lines))), start=2):
        if r["metric"] not in METRICS:
            raise InputError(f"{PUBLISHED_FILE} line {n}, column metric: unknown metric {r['metric']!r}",
                             hint=f"use one of: {', '.join(METRICS)}")
        rows.append(PublishedRow(
            source_id=r["source_id"], gpu=get_accelerator(r["gpu"]).id, engine=r["engine"],
            engine_version=r["engine_version"], model=r["model"], precision=r["precision"],
            kv_precision=r["kv_precision"], tp=_int(r["tp"], "tp", n), isl=_int(r["isl"], "isl", n),
            osl=_int(r["osl"], "osl", n),
            concurrency="max" if r["concurrency"] == "max" else _int(r["concurrency"], "concurrency", n),
            max_batch=_int(r["max_batch"], "max_batch", n) if r["max_batch"] else None, metric=r["metric"],
            value=float(r["value"]), published=r["published"], url=r["url"]))
    return rows


def predict(rows: Sequence[PublishedRow], calibration: Calibration) -> np.ndarray:
    """The product's figure for each row's metric at its configuration."""
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl, engine=r.engine,
                     concurrency=r.concurrency, kv_precision=r.kv_precision, max_batch=r.max_batch,
                     calibration=calibration)
        out[i] = getattr(e, r.metric)
    return out


def _with(calibration: Calibration, entry: VendorEfficiency) -> Calibration:
    return replace(calibration, vendors={**calibration.vendors, entry.key: entry})


def fit_vendor(rows: Sequence[PublishedRow], calibration: Calibration, source: str = "") -> VendorEfficiency:
    """``eta_bw`` and ``eta_c`` of the rows' one vendor and engine, fitted on them (the engine's other
    constants as ``calibration`` has them), for the vendor's accelerators outside the kernel tables."""
    from scipy.optimize import least_squares

    vendors = {(get_accelerator(r.gpu).vendor, r.engine) for r in rows}
    if len(vendors) != 1:
        raise InputError(f"a vendor fit takes the rows of one vendor and engine, got {sorted(vendors)}")
    (vendor, engine), = vendors
    values = np.array([r.value for r in rows])
    c = calibration.constants(engine)

    def entry(x: np.ndarray) -> VendorEfficiency:
        bw, eta_c = (float(v) for v in np.exp(x))
        return VendorEfficiency(vendor=vendor, engine=engine, bandwidth_efficiency=bw,
                                compute_efficiency=eta_c, rows=len(rows), source=source)

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(predict(rows, _with(calibration, entry(x))) / values)

    start = np.log([c.bandwidth_efficiency, c.compute_efficiency]).clip(*_BOUNDS)
    result = least_squares(residuals, start, bounds=_BOUNDS, diff_step=1e-3)
    return entry(result.x)


def held_out(rows: Sequence[PublishedRow], calibration: Calibration, group: str = "source_id") -> np.ndarray:
    """Ratio published / modelled of every row, each predicted by a fit on the rows of its vendor and
    engine outside its ``group`` (``source_id`` or ``model``); NaN where no other group has rows."""
    ratio = np.full(len(rows), np.nan)
    keys = [(get_accelerator(r.gpu).vendor, r.engine) for r in rows]
    for key in sorted(set(keys)):
        mine = [i for i, k in enumerate(keys) if k == key]
        for value in sorted({getattr(rows[i], group) for i in mine}):
            test = [i for i in mine if getattr(rows[i], group) == value]
            train = [rows[i] for i in mine if getattr(rows[i], group) != value]
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
    rows = published_rows() if rows is None else list(rows)
    ratio = held_out(rows, calibration, group)
    out = calibration
    for key in sorted({(get_accelerator(r.gpu).vendor, r.engine) for r in rows}):
        index = [i for i, r in enumerate(rows) if (get_accelerator(r.gpu).vendor, r.engine) == key]
        mine = [rows[i] for i in index]
        sources = sorted({f"{r.source_id} ({r.url}, {r.published})" for r in mine})
        entry = fit_vendor(mine, calibration, source="; ".join(sources))
        by_metric = {"output_tokens_per_s": ("output_tokens_per_s",),
                     "ttft_ms": ("ttft_ms",), "tpot_ms": ("tpot_ms", "request_latency_ms")}
        bands, errors = {}, {}
        for metric in _BAND_METRICS:
            r = ratio[[i for i in index if rows[i].metric in by_metric[metric] and not np.isnan(ratio[i])]]
            if len(r):
                bands[metric] = tuple(round(float(q), 4) for q in np.quantile(r, BAND_LEVELS))
                errors[metric] = round(float(np.median(np.abs(1.0 / r - 1.0))), 4)
        out = _with(out, replace(entry, bandwidth_efficiency=round(entry.bandwidth_efficiency, 4),
                                 compute_efficiency=round(entry.compute_efficiency, 4), bands=bands,
                                 held_out_error=errors))
    return out
