"""The Sizing sheet: per workload, the planner's own configuration checked, beside the cheapest that works.

Column by column (``W`` = the workload's row on the Workloads sheet, ``H`` its header row)::

    Concurrency        = Concurrency x Growth, else PeakRequestsPerHour / 3600 x SecondsPerRequest x Growth,
                         else DAU x OnlineShare x RequestsPerUserPerHour / 3600 x SecondsPerRequest
                         x Growth (Little's law, finops.sizing.concurrency), else DAU x OnlineShare x Growth
                         (sessions)                                               -- finops.sizing.demand
    WeightsGiB         = LLM_WEIGHTS_GIB(Model, Precision)
    KvGiB              = LLM_KV_GIB(Model, ISL + OSL, ROUNDUP(Concurrency))
    MaxConcurrency     = LLM_MAX_CONCURRENCY(Model, Gpu, Precision, TP, ISL, OSL, ContextLength)  (per replica)
    MeetsTargets ... BestExtrapolation = LLM_SIZING(H, W, "<column>", PriceTable), but:
    MonthlyCost        = HourlyCost x HoursPerMonth (the why-not text when it misses its targets)
    BestMonthlyCost    = LLM_SIZING(H, W, "BestHourlyCost", PriceTable) x HoursPerMonth
    CostPerMTokPeak    = hourly / (peak output tokens/s x 3,600 / 10^6)        (at the peak, running 24/7)
    CostPerMTokAverage = CostPerMTokPeak x PeakToAverage   (average load, fleet fixed at its peak size)
    Calibrated         = yes when the planner's engine, GPU, precision, model class and TP were measured
                         (else the figures are extrapolated: finops.sizing.engine_constants
                         .Calibration.covers)
    EfficiencySource   = engine, or the vendor fit (amd-cdna3:vllm) whose efficiencies the roofline uses
    TtftMsP90, TpotMsP90 = TtftMs, TpotMs x the held-out P90 ratio measured / modelled of the planner's
                         engine, model class and vendor: what a load test would show were the model as
                         optimistic as its 90th-percentile error (blank without a band)
    Extrapolation      = how far the planner's figures reach beyond what was measured: measured, fitted,
                         kernels or unmeasured (finops.sizing.bands); BestExtrapolation the same of Best*
    GpusAtP10, GpusAtP90 = accelerators the planner's configuration deploys were the model at the optimistic
                         or the pessimistic end of its P10-P90 band (Gpus is sized at the P90 end:
                         finops.sizing.confidence)
    BeyondNativeContext = yes when the row's ISL + OSL run past the model's native context, served on its
                         ContextLength (RoPE scaling; finops.sizing.memory.check_context): the figures hold, what
                         the model answers that far out is the operator's to check
    ApiPerMTok         = FINOPS_API_PER_MTOK(Model, ISL, OSL): the cheapest managed API serving the model per
                         token on demand (Amazon Bedrock, Vertex AI), per million output tokens, input price x
                         ISL / OSL + output price, beside CostPerMTokPeak and CostPerMTokAverage ("no API" where
                         none serves the model; finops.sizing.managed)
    ApiModel           = FINOPS_API_OFFER(Model, ISL, OSL, "model"): that API's model id

``LLM_SIZING`` calls ``finops.sizing.choice.size_workload``, the function behind ``finops size`` and
``finops.size``: the planner's Gpu x Precision x TP at its fewest replicas meeting the SLOs (with
spare and redundancy, whole TP groups on whole instances: ``GpusPaid = Instances x accelerators per
instance``), priced as ``HourlyCost = Instances x hourly`` and a month of ``HoursPerMonth`` (the Start sheet's
input, 730 as the core's month); a configuration that misses its targets shows why
("misses TPOT 33 ms: 44 ms") in ``MonthlyCost`` and is priced nowhere. The ``Best*`` columns are the
cheapest configuration of the whole search, ``finops size``'s first row for the same workload and
price book.

Every formula reads its own row of Workloads (row-relative references, one formula per column), and the
table holds ``ROOM`` rows (50): a row's formulas show blank while its Workloads row is empty, so a workload
added below the others in Excel is sized at once.

Below the table, the cheapest configurations for the first workload: each cell picks its figure of
``LLM_RANKING`` (``=INDEX(LLM_RANKING(...), r, c)``, a plain formula, not a spilled array: a spreadsheet
without the add-in shows the stored figures on opening, as it does every other formula's).

Every formula is stored with the value the add-in computes for it, by calling the add-in's own
functions at build time, so a cell reads the same before and after recalculation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xlsxwriter.workbook import Workbook

from finops.price_book import PriceBook
from finops.sizing import concurrency

from ..styles import Kind, Styles
from . import _answers
from ._table import (
    ROOM,
    Column,
    Formula,
    TablePlace,
    fit_for_print,
    spare,
    titled_sheet,
    unless_blank,
    write_picked,
    write_table,
)
from .start import HOURS_PER_MONTH
from .workloads import WorkloadRow

__all__ = ["SIZING_COLUMNS", "SizedRow", "sizing_formula", "write_sizing"]

#: The columns ``LLM_SIZING`` fills: (header, number format, width). The names are a contract.
_ANSWER: tuple[tuple[str, Kind, float], ...] = (
    ("MeetsTargets", "text", 8),
    ("WhyNot", "text", 26),
    ("TtftMs", "number", 10),
    ("TpotMs", "number", 10),
    ("Replicas", "int", 8),
    ("Gpus", "int", 7),
    ("Instances", "int", 9),
    ("GpusPaid", "int", 8),
    ("InstanceType", "text", 16),
    ("HourlyCost", "usd_rate", 11),
    ("MonthlyCost", "usd", 14),
    ("CostPerMTokPeak", "usd_rate", 11),
    ("CostPerMTokAverage", "usd_rate", 11),
    ("BestGpu", "text", 11),
    ("BestPrecision", "text", 9),
    ("BestTp", "int", 6),
    ("BestGpus", "int", 8),
    ("BestInstanceType", "text", 16),
    ("BestInstances", "int", 9),
    ("BestMonthlyCost", "usd", 14),
    ("Calibrated", "text", 9),
    ("EfficiencySource", "text", 12),
    ("TtftMsP90", "number", 10),
    ("TpotMsP90", "number", 10),
    ("Extrapolation", "text", 11),
    ("GpusAtP10", "int", 9),
    ("GpusAtP90", "int", 9),
    ("BestExtrapolation", "text", 11),
    ("BeyondNativeContext", "text", 10),
)
SIZING_COLUMNS = (
    Column("Workload", role="computed", width=30),
    Column("Concurrency", "number", "computed", 12),
    Column("WeightsGiB", "number", "computed", 11),
    Column("KvGiB", "number", "computed", 10),
    Column("MaxConcurrency", "int", "computed", 12),
    Column("Fits", role="computed", width=6),
    *(Column(header, kind, "computed", width) for header, kind, width in _ANSWER),
    Column("ApiPerMTok", "usd_rate", "computed", 10),
    Column("ApiModel", role="computed", width=26),
)


@dataclass(frozen=True)
class SizedRow:
    """What the Sizing row of one workload shows (the cached values of the ``LLM_SIZING`` columns)."""

    values: dict[str, Any]

    @property
    def meets_targets(self) -> bool:
        return self.values["MeetsTargets"] == "yes"


def _roundup(x: float) -> int:
    return math.ceil(round(x, 9))


def sizing_formula(workloads: TablePlace, i: int, field: str) -> str:
    """``LLM_SIZING`` of Workloads row ``i`` for one field (the Sizing and TCO sheets share it)."""
    return f'LLM_SIZING({workloads.row_range(None)},{workloads.row_range(i, follow=True)},"{field}",PriceTable)'


def sizing_value(row: WorkloadRow, field: str, book: PriceBook) -> Any:
    """What ``LLM_SIZING`` answers for ``row`` and ``field`` (the cached value of that formula)."""
    return _answers.sizing_figure(row.workload, (row.gpu, row.precision, row.tp, row.engine), field, book)


def _formulas(i: int, w: TablePlace, s: TablePlace) -> list[str]:
    """The formulas of Sizing row ``i``: each reads its own row of Workloads (row-relative references, the
    same formula in every row, so the table's rows follow Workloads' rows one for one)."""

    def ref(header: str) -> str:
        return w.cell(i, header, sheet=True, follow=True)

    def own(header: str) -> str:
        return s.cell(i, header, absolute=False)

    concurrency_f = (
        f"=IF(ISNUMBER({ref('Concurrency')}),{ref('Concurrency')},"
        f"IF(ISNUMBER({ref('PeakRequestsPerHour')}),{ref('PeakRequestsPerHour')}/3600*{ref('SecondsPerRequest')},"
        f"IF(ISNUMBER({ref('RequestsPerUserPerHour')}),{ref('DAU')}*{ref('OnlineShare')}"
        f"*{ref('RequestsPerUserPerHour')}/3600*{ref('SecondsPerRequest')},{ref('DAU')}*{ref('OnlineShare')})))"
        f"*{ref('Growth')}"
    )
    args = f"{ref('Model')},{ref('Gpu')},{ref('Precision')},{ref('TP')},{ref('ISL')},{ref('OSL')},{ref('ContextLength')}"
    best_hourly = sizing_formula(w, i, "BestHourlyCost")
    # a month's cost is native arithmetic over the hourly cost and the HoursPerMonth input
    monthly = {
        "MonthlyCost": f'=IF({own("MeetsTargets")}="yes",{own("HourlyCost")}*HoursPerMonth,{own("WhyNot")})',
        "BestMonthlyCost": f"=IF(ISNUMBER({best_hourly}),{best_hourly}*HoursPerMonth,{best_hourly})",
    }
    request = f"{ref('Model')},{ref('ISL')},{ref('OSL')}"
    return [
        f"={ref('Workload')}",
        concurrency_f,
        f"=LLM_WEIGHTS_GIB({ref('Model')},{ref('Precision')})",
        f"=LLM_KV_GIB({ref('Model')},{ref('ISL')}+{ref('OSL')},ROUNDUP({own('Concurrency')},0))",
        f"=LLM_MAX_CONCURRENCY({args})",
        f'=IF(ISNUMBER({own("MaxConcurrency")}),IF({own("MaxConcurrency")}>=1,"yes","no"),{own("MaxConcurrency")})',
        *(monthly.get(header, f"={sizing_formula(w, i, header)}") for header, _, _ in _ANSWER),
        *(f'=IF(ISNUMBER(SEARCH("no managed API",{call})),"no API",{call})'
          for call in (f"FINOPS_API_PER_MTOK({request})", f'FINOPS_API_OFFER({request},"model")')),
    ]


def _values(row: WorkloadRow, book: PriceBook) -> tuple[list[Any], SizedRow]:
    """The cached values of one Sizing row: what the core and the add-in compute for ``row``."""
    wl = row.workload
    model, gpu, precision, tp = wl.model, row.gpu, row.precision, row.tp
    growth = wl.growth
    if wl.concurrency is not None:
        conc = wl.concurrency * growth
    elif wl.peak_requests_per_hour is not None:
        conc = wl.peak_requests_per_hour / 3600 * wl.seconds_per_request * growth  # type: ignore[operator]
    elif wl.requests_per_user_per_hour is not None:
        conc = concurrency(wl.dau, wl.online_share, wl.requests_per_user_per_hour, wl.seconds_per_request) * growth
    else:
        conc = wl.dau * wl.online_share * growth  # type: ignore[operator]
    max_conc = _answers.max_concurrency(model, gpu, precision, tp, wl.isl, wl.osl, wl.context_length)
    answer = {header: sizing_value(row, header, book) for header, _, _ in _ANSWER}
    for monthly, hourly in (("MonthlyCost", answer["HourlyCost"]), ("BestMonthlyCost",
                                                                      sizing_value(row, "BestHourlyCost", book))):
        if isinstance(hourly, float):
            answer[monthly] = hourly * HOURS_PER_MONTH
    api = _answers.cheapest_api(wl, None, None)
    values = [wl.name, conc, _answers.weights_gib(model, precision),
              _answers.kv_gib(model, wl.isl + wl.osl, _roundup(conc)), max_conc,
              ("yes" if max_conc >= 1 else "no") if isinstance(max_conc, int) else max_conc,
              *(answer[header] for header, _, _ in _ANSWER),
              float(api.cost_per_million_output_tokens.amount) if api else "no API",
              api.offer_model if api else "no API"]
    return values, SizedRow(answer)


def _row(i: int, values: list[Any] | None, w: TablePlace, s: TablePlace) -> list[Any]:
    """Sizing row ``i``: its formulas with ``values`` cached, blank while Workloads row ``i`` is (``values``
    None: room to grow)."""
    key = w.cell(i, "Workload", sheet=True, follow=True)
    texts = _formulas(i, w, s)
    if values is None:
        return spare(unless_blank(key, [Formula(t, "") for t in texts]))
    return unless_blank(key, [Formula(t, v) for t, v in zip(texts, values)])


_RANKED = 5


def _ranking(ws: Any, styles: Styles, rows: list[WorkloadRow], workloads: TablePlace, place: TablePlace,
             book: PriceBook) -> None:
    """``LLM_RANKING`` for the first workload below the table, one ``INDEX`` formula per cell with its cached value."""
    top = place.row(place.rows) + 2
    ws.write_string(top, 0, f"Cheapest configurations for {rows[0].workload.name} (on-demand; the first is "
                            "its Best* columns; accelerators: GPUs or chips)", styles.label)
    call = f"LLM_RANKING({workloads.row_range(None)},{workloads.row_range(0)},{_RANKED},PriceTable)"
    first = rows[0]
    result = _answers.ranking(first.workload, (first.gpu, first.precision, first.tp, first.engine), _RANKED, book)
    anchor = top + 1
    if isinstance(result, str):
        ws.write_formula(anchor, 0, f"={call}", styles.bad, result)
        return
    money = {result[0].index(h) for h in ("monthly_cost", "cost_per_mtok_peak", "cost_per_mtok_avg")}

    def fmt(i: int, j: int, value: Any) -> Any:
        kind: Kind = "usd" if j in money and i else "text" if isinstance(value, str) else "number"
        return styles.computed(kind)

    write_picked(ws, anchor, 0, call, result, fmt)


def write_sizing(
    wb: Workbook, styles: Styles, rows: list[WorkloadRow], workloads: TablePlace, book: PriceBook
) -> tuple[TablePlace, list[SizedRow]]:
    """The Sizing sheet (``tblSizing``), one row per Workloads row, same order."""
    ws = titled_sheet(
        wb,
        styles,
        "Sizing",
        "Per workload: your configuration (Workloads' Gpu, Precision, TP) checked against the targets, "
        "deployed on whole instances (GpusPaid = Instances x accelerators per instance), and beside it the "
        "cheapest configuration that meets them (Best*, as `finops size`). A configuration that misses "
        "its targets is not priced. Cost per million output tokens: CostPerMTokPeak at the peak load "
        "running 24/7; CostPerMTokAverage at the average load (Workloads' PeakToAverage), the fleet still "
        "sized and paid for the peak. All computed; change the Workloads sheet.",
        widths=[c.width for c in SIZING_COLUMNS],
    )
    ws.freeze_panes(3, 1)
    fit_for_print(ws, 2, [c.width for c in SIZING_COLUMNS])
    place = TablePlace("Sizing", "tblSizing", tuple(c.header for c in SIZING_COLUMNS), 2, 0, max(ROOM, len(rows)))
    computed = [_values(row, book) for row in rows]
    table = [_row(i, computed[i][0] if i < len(rows) else None, workloads, place) for i in range(place.rows)]
    write_table(ws, styles, "tblSizing", SIZING_COLUMNS, table, first_row=2)
    for header in ("MeetsTargets", "Fits"):
        col = place.col(header)
        for text, fmt in (("yes", styles.ok), ("no", styles.bad)):
            ws.conditional_format(
                place.row(0),
                col,
                place.row(place.rows - 1),
                col,
                {"type": "cell", "criteria": "==", "value": f'"{text}"', "format": fmt},
            )
    _ranking(ws, styles, rows, workloads, place, book)
    return place, [sized for _, sized in computed]
