"""The Workloads sheet: one input row per workload, pre-filled with the seed presets of ``finops.sizing``.

Each preset brings its model, lengths, demand inputs and targets. The workbook needs one concrete
configuration per row; the builder takes the preset's first precision and its first GPU that has a
price in the price book (else H100 SXM), and the tensor-parallel degree of the cheapest configuration
``finops.sizing.search`` finds for that GPU and precision (when it finds none: the smallest TP at which
the model fits, ``finops.sizing.memory_fit``). ``SearchGpus`` and ``SearchPrecisions`` narrow the
search for the cheapest configuration as the preset does (blank: every accelerator, every precision),
so the Sizing sheet's ``Best*`` columns are ``finops size --preset NAME``'s first row. ``ContextLength``
(blank: the model's native context) is the sequence length the engine serves when it runs the model past its
native context (RoPE scaling); a row whose ISL + OSL exceeds the native context without it is refused in its
Sizing cells, as ``finops estimate`` refuses it. ``PlanLine`` names
the Budget line the workload's fleet is planned on: that line's Amount is then the sum of its workloads'
monthly cost on the TCO sheet (:mod:`templates.sheets.plan`). The planner changes any yellow cell;
Sizing follows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from xlsxwriter.workbook import Workbook

from finops.price_book import PriceBook
from finops.sizing import ENGINES, PRECISIONS, SLO_PERCENTILES, Workload, memory_fit, presets, search

from ..styles import Styles
from ._table import Column, TablePlace, fit_for_print, titled_sheet, validate_column, write_table

__all__ = ["WORKLOAD_COLUMNS", "WorkloadRow", "workload_rows", "write_workloads"]

_VALIDATED_ROWS = 200  # rows under the header that keep the dropdowns as the table grows

WORKLOAD_COLUMNS = (
    Column("Workload", width=30),
    Column("Model", width=16),
    Column("Precision", width=10),
    Column("Gpu", width=11),
    Column("TP", "int", width=5),
    Column("Engine", width=8),
    Column("DAU", "int", width=10),
    Column("OnlineShare", "percent", width=9),
    Column("RequestsPerUserPerHour", "number", width=12),
    Column("SecondsPerRequest", "number", width=10),
    Column("PeakRequestsPerHour", "int", width=11),
    Column("Concurrency", "number", width=11),
    Column("Growth", "number", width=8),
    Column("PeakToAverage", "number", width=9),
    Column("ISL", "int", width=8),
    Column("OSL", "int", width=8),
    Column("ContextLength", "int", width=9),
    Column("CacheHitRate", "percent", width=9),
    Column("TtftTargetMs", "int", width=10),
    Column("TpotTargetMs", "number", width=10),
    Column("SloPercentile", width=9),
    Column("SearchGpus", width=18),
    Column("SearchPrecisions", width=14),
    Column("Spare", "percent", width=8),
    Column("Redundancy", "int", width=10),
    Column("PlanLine", width=22),
    Column("Description", width=60),
    Column("Source", width=40),
)
_DEFAULT_GPU = "h100-sxm"
_TPS = (1, 2, 4, 8)


@dataclass(frozen=True)
class WorkloadRow:
    """The concrete inputs of one Workloads row (what the yellow cells hold)."""

    workload: Workload
    precision: str
    gpu: str
    tp: int
    engine: str = "vllm"
    #: the cheapest instance the search found for this GPU and TP: (provider, region, instance type)
    instance: tuple[str, str, str] | None = None
    #: the Budget line this workload's fleet is planned on (blank: none; its cost feeds no Budget line)
    plan_line: str = ""
    #: how the fleet is paid for on the TCO sheet (a price book pricing model: on_demand, spot, ...)
    pricing_model: str = "on_demand"

    def values(self) -> list[object]:
        w = self.workload
        return [
            w.name,
            w.model,
            self.precision,
            self.gpu,
            self.tp,
            self.engine,
            w.dau,
            w.online_share,
            w.requests_per_user_per_hour,
            w.seconds_per_request,
            w.peak_requests_per_hour,
            w.concurrency,
            w.growth,
            w.peak_to_average,
            w.isl,
            w.osl,
            w.context_length,
            w.cache_hit_rate,
            w.ttft_ms,
            w.itl_ms,
            w.slo_percentile,
            ",".join(w.gpus),
            ",".join(w.precisions),
            w.spare,
            w.redundancy,
            self.plan_line,
            w.description,
            w.source,
        ]


def _row(w: Workload, gpu: str, precision: str, book: PriceBook) -> WorkloadRow:
    best = search(w, gpus=[gpu], precisions=[precision], price_book=book, top=1).options
    if best:
        option = best[0]
        return WorkloadRow(
            w, precision, gpu, option.tp, instance=(option.provider, option.region, option.instance_type)
        )
    tp = next(
        (
            tp
            for tp in _TPS
            if memory_fit(w.model, gpu, precision=precision, tp=tp, isl=w.isl, osl=w.osl,
                          context_length=w.context_length).fits
        ),
        _TPS[-1],
    )
    return WorkloadRow(w, precision, gpu, tp)


def workload_rows(book: PriceBook, plan_lines: Mapping[str, str] | None = None,
                  pricing_models: Mapping[str, str] | None = None) -> list[WorkloadRow]:
    """One row per seed preset, with a concrete precision, GPU and TP (see the module docstring), on the
    Budget line ``plan_lines`` names for it (workload name -> plan line; blank otherwise), priced on the
    TCO sheet under the pricing model ``pricing_models`` names for it (on-demand otherwise).

    Presets stated per day are left out: the sheet's demand columns are per hour.
    """
    priced = {r.gpu_model for r in book}
    rows = []
    for w in presets().values():
        if w.requests_per_user_per_day is not None:
            continue
        precision = w.precisions[0] if w.precisions else "bf16"
        gpu = next((g for g in w.gpus if g in priced), _DEFAULT_GPU)
        rows.append(dataclasses.replace(_row(w, gpu, precision, book), plan_line=(plan_lines or {}).get(w.name, ""),
                                        pricing_model=(pricing_models or {}).get(w.name, "on_demand")))
    return rows


def write_workloads(wb: Workbook, styles: Styles, rows: list[WorkloadRow]) -> TablePlace:
    """The Workloads sheet with ``tblWorkloads`` and its validation lists."""
    ws = titled_sheet(
        wb,
        styles,
        "Workloads",
        "One row per workload. Demand: give Concurrency, or PeakRequestsPerHour with "
        "SecondsPerRequest, or DAU x OnlineShare (x RequestsPerUserPerHour x SecondsPerRequest; "
        "without them every online user is one streaming session). Gpu, Precision, TP: your own "
        "configuration (Gpu names any accelerator: GPUs, TPU, Inferentia and Trainium chips); Sizing checks "
        "it against the targets and shows the cheapest that meets them. PeakToAverage: peak over average "
        "load (e.g. the Mix sheet's Peak / average; 1 = the peak all the time), for the cost per million "
        "tokens at the average load. ContextLength (blank: the model's native context): the sequence length "
        "the engine serves past the model's native context (RoPE scaling). Pre-filled: the seed scenarios.",
        widths=[c.width for c in WORKLOAD_COLUMNS],
    )
    ws.freeze_panes(3, 1)
    fit_for_print(ws, 2, [c.width for c in WORKLOAD_COLUMNS])
    place = write_table(ws, styles, "tblWorkloads", WORKLOAD_COLUMNS, [r.values() for r in rows], first_row=2)
    lists = {
        "Model": "=ModelIds",
        "PlanLine": "=PlanLines",
        "Gpu": "=GpuIds",
        "Precision": list(PRECISIONS),
        "Engine": list(ENGINES),
        "TP": ["1", "2", "4", "8"],
        "SloPercentile": list(SLO_PERCENTILES),
    }
    for header, source in lists.items():
        validate_column(ws, place, header, _VALIDATED_ROWS, {
            "validate": "list",
            "source": source,
            "error_title": header,
            "error_message": f"pick a {header} from the list (Catalog sheet)",
        })
    for header in ("OnlineShare", "CacheHitRate", "Spare"):
        validate_column(ws, place, header, _VALIDATED_ROWS, {
            "validate": "decimal",
            "criteria": "between",
            "minimum": 0,
            "maximum": 1,
            "error_message": f"{header} is a share between 0 % and 100 %",
            "ignore_blank": True,
        })
    validate_column(ws, place, "ContextLength", _VALIDATED_ROWS, {
        "validate": "integer",
        "criteria": ">=",
        "value": 1,
        "error_message": "ContextLength is a whole number of tokens (blank: the model's native context)",
        "ignore_blank": True,
    })
    validate_column(ws, place, "PeakToAverage", _VALIDATED_ROWS, {
        "validate": "decimal",
        "criteria": ">=",
        "value": 1,
        "error_message": "PeakToAverage is peak over average load, at least 1",
        "ignore_blank": True,
    })
    return place
