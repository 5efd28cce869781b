"""The Sizing sheet: per workload, add-in formulas for concurrency, memory fit, latency and GPUs.

Column by column (``W`` = the workload's row on the Workloads sheet)::

    Concurrency        = Concurrency x Growth, else PeakRequestsPerHour / 3600 x SecondsPerRequest x Growth,
                         else LLM_CONCURRENCY(DAU, OnlineShare, RequestsPerUserPerHour, SecondsPerRequest)
                         x Growth, else DAU x OnlineShare x Growth (sessions)     -- finops.sizing.demand
    WeightsGiB         = LLM_WEIGHTS_GIB(Model, Precision)
    KvGiB              = LLM_KV_GIB(Model, ISL + OSL, ROUNDUP(Concurrency))
    MaxConcurrency     = LLM_MAX_CONCURRENCY(Model, Gpu, Precision, TP, ISL, OSL)      (per replica)
    ReplicaConcurrency = MAX(1, MIN(ROUNDUP(Concurrency), MaxConcurrency))
    TtftMs, TpotMs, ReplicaTokensPerS = LLM_TTFT_MS / LLM_TPOT_MS / LLM_TOKENS_PER_S at ReplicaConcurrency
    RequiredTokensPerS = Concurrency x OSL / SecondsPerRequest, else Concurrency x 1000 / (TpotTargetMs,
                         else TpotMs)                        -- Little's law; seed 003's R = C x V_gen
    Gpus               = LLM_DEVICES(RequiredTokensPerS, ReplicaTokensPerS / TP, Spare, Redundancy)
    Replicas           = ROUNDUP(Gpus / TP)

Below the table, ``LLM_SIZE`` spills the cheapest configurations for the first workload (its model,
lengths, concurrency and targets; every catalog GPU and precision; prices from ``PriceTable``).

Every formula is stored with the value the add-in computes for it, by calling the add-in's own
functions at build time, so a cell reads the same before and after recalculation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xlsxwriter.workbook import Workbook

from addin import udfs
from finops.price_book import PriceBook

from ..styles import Styles
from ._table import Column, Formula, TablePlace, titled_sheet, write_cell, write_table
from .catalog import prices_range
from .workloads import WorkloadRow

__all__ = ["SIZING_COLUMNS", "SizingValues", "write_sizing"]

SIZING_COLUMNS = (
    Column("Workload", role="computed", width=30),
    Column("Concurrency", "number", "computed", 12),
    Column("WeightsGiB", "number", "computed", 11),
    Column("KvGiB", "number", "computed", 10),
    Column("MaxConcurrency", "int", "computed", 12),
    Column("Fits", role="computed", width=6),
    Column("ReplicaConcurrency", "int", "computed", 12),
    Column("TtftMs", "number", "computed", 10),
    Column("TpotMs", "number", "computed", 10),
    Column("ReplicaTokensPerS", "number", "computed", 12),
    Column("RequiredTokensPerS", "number", "computed", 12),
    Column("Gpus", "int", "computed", 7),
    Column("Replicas", "int", "computed", 8),
    Column("TtftOk", role="computed", width=7),
    Column("TpotOk", role="computed", width=7),
)


@dataclass(frozen=True)
class SizingValues:
    """What the Sizing row of one workload shows (the cached values)."""

    concurrency: float
    replica_tokens_per_s: Any
    gpus: Any
    replicas: Any


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _roundup(x: float) -> int:
    return math.ceil(round(x, 9))


def _row(i: int, row: WorkloadRow, w: TablePlace, s: TablePlace) -> tuple[list[Any], SizingValues]:
    """Formulas and cached values of Sizing row ``i`` (Workloads row ``i``)."""

    def ref(header: str) -> str:
        return w.cell(i, header, sheet=True)

    def own(header: str) -> str:
        return s.cell(i, header, absolute=False)

    wl = row.workload
    model, gpu, precision, tp = wl.model, row.gpu, row.precision, row.tp
    growth = wl.growth
    if wl.concurrency is not None:
        conc = wl.concurrency * growth
    elif wl.peak_requests_per_hour is not None:
        conc = wl.peak_requests_per_hour / 3600 * wl.seconds_per_request * growth  # type: ignore[operator]
    elif wl.requests_per_user_per_hour is not None:
        conc = (
            udfs.LLM_CONCURRENCY(
                wl.dau, wl.online_share, wl.requests_per_user_per_hour, wl.seconds_per_request
            )
            * growth
        )
    else:
        conc = wl.dau * wl.online_share * growth  # type: ignore[operator]
    concurrency_f = (
        f"=IF(ISNUMBER({ref('Concurrency')}),{ref('Concurrency')},"
        f"IF(ISNUMBER({ref('PeakRequestsPerHour')}),{ref('PeakRequestsPerHour')}/3600*{ref('SecondsPerRequest')},"
        f"IF(ISNUMBER({ref('RequestsPerUserPerHour')}),LLM_CONCURRENCY({ref('DAU')},{ref('OnlineShare')},"
        f"{ref('RequestsPerUserPerHour')},{ref('SecondsPerRequest')}),{ref('DAU')}*{ref('OnlineShare')})))"
        f"*{ref('Growth')}"
    )
    args = f"{ref('Model')},{ref('Gpu')},{ref('Precision')},{ref('TP')},{ref('ISL')},{ref('OSL')}"
    weights = udfs.LLM_WEIGHTS_GIB(model, precision)
    kv = udfs.LLM_KV_GIB(model, wl.isl + wl.osl, _roundup(conc))
    max_conc = udfs.LLM_MAX_CONCURRENCY(model, gpu, precision, tp, wl.isl, wl.osl)
    fits = "yes" if _num(max_conc) and max_conc >= 1 else "no"
    replica_conc = max(1, min(_roundup(conc), max_conc)) if _num(max_conc) else 1
    perf = (model, gpu, precision, tp, wl.isl, wl.osl, replica_conc, row.engine, wl.cache_hit_rate)
    perf_f = f"{args},{own('ReplicaConcurrency')},{ref('Engine')},{ref('CacheHitRate')}"
    ttft, tpot, tps = udfs.LLM_TTFT_MS(*perf), udfs.LLM_TPOT_MS(*perf), udfs.LLM_TOKENS_PER_S(*perf)
    if wl.seconds_per_request is not None:
        required: Any = conc * wl.osl / wl.seconds_per_request
    else:
        pace = wl.itl_ms if wl.itl_ms is not None else tpot
        required = conc * 1000 / pace if _num(pace) else "#FINOPS: no TPOT"
    per_gpu = tps / tp if _num(tps) else tps
    gpus = udfs.LLM_DEVICES(required, per_gpu, wl.spare, wl.redundancy) if _num(per_gpu) else per_gpu
    replicas = _roundup(gpus / tp) if _num(gpus) else gpus
    ttft_ok = "" if wl.ttft_ms is None or not _num(ttft) else ("yes" if ttft <= wl.ttft_ms else "no")
    tpot_ok = "" if wl.itl_ms is None or not _num(tpot) else ("yes" if tpot <= wl.itl_ms else "no")
    cells = [
        Formula(f"={ref('Workload')}", wl.name),
        Formula(concurrency_f, conc),
        Formula(f"=LLM_WEIGHTS_GIB({ref('Model')},{ref('Precision')})", weights),
        Formula(f"=LLM_KV_GIB({ref('Model')},{ref('ISL')}+{ref('OSL')},ROUNDUP({own('Concurrency')},0))", kv),
        Formula(f"=LLM_MAX_CONCURRENCY({args})", max_conc),
        Formula(f'=IF(AND(ISNUMBER({own("MaxConcurrency")}),{own("MaxConcurrency")}>=1),"yes","no")', fits),
        Formula(
            f"=IF(ISNUMBER({own('MaxConcurrency')}),MAX(1,MIN(ROUNDUP({own('Concurrency')},0),"
            f"{own('MaxConcurrency')})),1)",
            replica_conc,
        ),
        Formula(f"=LLM_TTFT_MS({perf_f})", ttft),
        Formula(f"=LLM_TPOT_MS({perf_f})", tpot),
        Formula(f"=LLM_TOKENS_PER_S({perf_f})", tps),
        Formula(
            f"=IF(ISNUMBER({ref('SecondsPerRequest')}),{own('Concurrency')}*{ref('OSL')}/"
            f"{ref('SecondsPerRequest')},{own('Concurrency')}*1000/IF(ISNUMBER({ref('TpotTargetMs')}),"
            f"{ref('TpotTargetMs')},{own('TpotMs')}))",
            required,
        ),
        Formula(
            f"=LLM_DEVICES({own('RequiredTokensPerS')},{own('ReplicaTokensPerS')}/{ref('TP')},"
            f"{ref('Spare')},{ref('Redundancy')})",
            gpus,
        ),
        Formula(f"=IF(ISNUMBER({own('Gpus')}),ROUNDUP({own('Gpus')}/{ref('TP')},0),{own('Gpus')})", replicas),
        Formula(
            f'=IF(OR(NOT(ISNUMBER({ref("TtftTargetMs")})),NOT(ISNUMBER({own("TtftMs")}))),"",'
            f'IF({own("TtftMs")}<={ref("TtftTargetMs")},"yes","no"))',
            ttft_ok,
        ),
        Formula(
            f'=IF(OR(NOT(ISNUMBER({ref("TpotTargetMs")})),NOT(ISNUMBER({own("TpotMs")}))),"",'
            f'IF({own("TpotMs")}<={ref("TpotTargetMs")},"yes","no"))',
            tpot_ok,
        ),
    ]
    return cells, SizingValues(conc, tps, gpus, replicas)


def _cheapest(
    ws: Any,
    styles: Styles,
    rows: list[WorkloadRow],
    workloads: TablePlace,
    place: TablePlace,
    sized: list[SizingValues],
    book: PriceBook,
) -> None:
    """``LLM_SIZE`` for the first workload, spilled below the table, with its cached values."""
    top = place.row(place.rows) + 2
    wl = rows[0].workload
    ws.write_string(
        top,
        0,
        f"Cheapest configurations for {wl.name} (every catalog GPU and precision, on-demand)",
        styles.label,
    )

    def ref(header: str) -> str:
        return workloads.cell(0, header, sheet=True)

    formula = (
        f"=LLM_SIZE({ref('Model')},{ref('ISL')},{ref('OSL')},{place.cell(0, 'Concurrency')},"
        f'{ref("TtftTargetMs")},{ref("TpotTargetMs")},"","","on_demand",5,PriceTable)'
    )
    result = udfs.LLM_SIZE(
        wl.model,
        wl.isl,
        wl.osl,
        sized[0].concurrency,
        wl.ttft_ms,
        wl.itl_ms,
        None,
        None,
        "on_demand",
        5,
        prices_range(book),
    )
    anchor = top + 1
    if isinstance(result, str):
        ws.write_formula(anchor, 0, formula, styles.bad, result)
        return
    ws.write_dynamic_array_formula(
        anchor,
        0,
        anchor + len(result) - 1,
        len(result[0]) - 1,
        formula,
        styles.computed("text"),
        result[0][0],
    )
    for i, values in enumerate(result):
        for j, value in enumerate(values):
            if i or j:
                write_cell(
                    ws,
                    anchor + i,
                    j,
                    value,
                    styles.computed("usd" if j in (8, 9) else "text" if isinstance(value, str) else "number"),
                )


def write_sizing(
    wb: Workbook, styles: Styles, rows: list[WorkloadRow], workloads: TablePlace, book: PriceBook
) -> tuple[TablePlace, list[SizingValues]]:
    """The Sizing sheet (``tblSizing``), one row per Workloads row, same order."""
    ws = titled_sheet(
        wb,
        styles,
        "Sizing",
        "Per workload: peak concurrency, memory (GiB), latency at the replica's load and the "
        "GPUs to deploy (seed 003: ceil(ceil(R / T) x (1 + spare)) + redundancy). All computed; "
        "change the Workloads sheet.",
    )
    ws.freeze_panes(3, 1)
    place = TablePlace("Sizing", "tblSizing", tuple(c.header for c in SIZING_COLUMNS), 2, 0, len(rows))
    built = [_row(i, row, workloads, place) for i, row in enumerate(rows)]
    write_table(ws, styles, "tblSizing", SIZING_COLUMNS, [cells for cells, _ in built], first_row=2)
    for header in ("TtftOk", "TpotOk", "Fits"):
        col = place.col(header)
        for text, fmt in (("yes", styles.ok), ("no", styles.bad)):
            ws.conditional_format(
                place.row(0),
                col,
                place.row(place.rows - 1),
                col,
                {"type": "cell", "criteria": "==", "value": f'"{text}"', "format": fmt},
            )
    sized = [values for _, values in built]
    _cheapest(ws, styles, rows, workloads, place, sized, book)
    return place, sized
