"""The review's Serving sheet: what each serving plan line actually did in the month.

Two tables per serving line of a :class:`finops.serving.ServingMonth`, one under the other so that the
sheet prints one landscape page wide at a legible scale:

* ``tblServingReview``, traffic and latency: tokens and requests served, the hourly peak, TTFT/ITL P50
  and P99 with seed 003's P_ok against the line's targets, and the metrics the month lacked;
* ``tblServingCapacity``, GPUs and cost (with the model, which tells a plan line's serving lines apart): GPUs,
  GPU-hours (the bill's, DCGM's where the bill has none: ``GpuHoursFrom``) and utilization (DCGM), realized against predicted generation tokens per GPU-hour,
  the cost per million tokens and per request actually served (the line's actual cost over its tokens, its
  requests), and the idle GPU-hours (paid, the bill's or DCGM's, less the line's GPUs x the hours it generated
  tokens) with their share of the cost;
* ``tblServingPlanLines`` (only when a plan line has several serving lines, one per workload or configuration):
  per such plan line its serving lines' GPUs, GPU-hours, tokens, requests, cost and idle cost summed.

Below them, when load tests were given (``--load-test``), ``tblServingLoadTests``: one row per
load-test point, measured and predicted throughput per GPU-hour. Each table's header keeps the stable
column names formulas and tests use; the row above it says the same in finance and platform words,
with units. Every cell is computed (the sheet has no input cells, so nothing is yellow).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from xlsxwriter.worksheet import Worksheet

from finops.serving import ServingMonth

from .review.page import ReviewStyles, review_sheet
from .review.tables import label, money_column, text_column
from .sheets._table import Column, write_table

__all__ = ["CAPACITY_COLUMNS", "LOAD_TEST_COLUMNS", "SERVING_REVIEW_COLUMNS", "write_serving_review"]

#: A column and the words printed over its stable name.
Labelled = tuple[Column, str]

_IDENTITY: tuple[Labelled, ...] = (
    (text_column("PlanLine", 20), "Plan line"), (text_column("Engine", 8), "Engine"),
    (text_column("Model", 15), "Model"), (text_column("Gpu", 9), "GPU"),
)
SERVING_REVIEW: tuple[Labelled, ...] = (
    *_IDENTITY,
    (money_column("MTokens", 10, "number"), "Tokens served (millions)"),
    (money_column("Requests", 10, "int"), "Requests served"),
    (money_column("PeakGenTokensPerHour", 11, "int"), "Peak hour, output tokens"),
    (money_column("TtftP50Ms", 8, "number"), "First token P50 (ms)"),
    (money_column("TtftP99Ms", 8, "number"), "First token P99 (ms)"),
    (money_column("TtftPOk", 8, "percent"), "Within first-token target"),
    (money_column("ItlP50Ms", 8, "number"), "Between tokens P50 (ms)"),
    (money_column("ItlP99Ms", 8, "number"), "Between tokens P99 (ms)"),
    (money_column("ItlPOk", 8, "percent"), "Within between-token target"),
    (text_column("NotMeasured", 18), "Metrics missing this month"),
)
CAPACITY: tuple[Labelled, ...] = (
    (text_column("PlanLine", 20), "Plan line"),
    (text_column("Model", 15), "Model"),   # which of a plan line's serving lines, as in the table above
    (money_column("Gpus", 8, "int"), "GPUs"),
    (money_column("GpuHours", 9, "number"), "GPU-hours"),
    (text_column("GpuHoursFrom", 9), "GPU-hours from"),
    (money_column("DcgmGpuHours", 9, "number"), "GPU-hours seen by DCGM"),
    (money_column("GpuUtilization", 8, "percent"), "GPU utilization (DCGM)"),
    (money_column("RealizedTokPerGpuHour", 10, "int"), "Output tokens per GPU-hour, actual"),
    (money_column("PredictedTokPerGpuHour", 10, "int"), "Output tokens per GPU-hour, model"),
    (money_column("RealizedOverPredicted", 8, "number"), "Actual over model (x)"),
    (money_column("CostPerMTokens", 14, "rate"), "Cost per million tokens served"),
    (money_column("GapHours", 8, "number"), "Hours without metrics"),
    (money_column("CostPerRequest", 10, "rate"), "Cost per request served"),
    (money_column("IdleGpuHours", 9, "number"), "GPU-hours paid, not serving"),
    (money_column("IdleGpuCost", 11, "money"), "Cost of the idle GPU-hours"),
)
LOAD_TESTS: tuple[Labelled, ...] = (
    *_IDENTITY,
    (text_column("File", 18), "Load-test file"),
    (money_column("Concurrency", 8, "int"), "Concurrent requests"),
    (money_column("Isl", 8, "int"), "Input tokens per request"),
    (money_column("Osl", 8, "int"), "Output tokens per request"),
    (money_column("TtftMs", 8, "number"), "First token, mean (ms)"),
    (money_column("TpotMs", 8, "number"), "Between tokens, mean (ms)"),
    (money_column("MeasuredTokPerGpuHour", 10, "int"), "Output tokens per GPU-hour, measured"),
    (money_column("PredictedTokPerGpuHour", 10, "int"), "Output tokens per GPU-hour, model"),
    (money_column("MeasuredOverPredicted", 8, "number"), "Measured over model (x)"),
)
_SHOWN = {c.header: (c, words) for c, words in (*SERVING_REVIEW, *CAPACITY)}
#: A plan line served by several serving lines (one per workload or configuration): their fleets and costs summed,
#: in the columns (and words) of the tables above.
PLAN_LINES: tuple[Labelled, ...] = (
    _SHOWN["PlanLine"], (money_column("ServingLines", 8, "int"), "Serving lines"),
    *(_SHOWN[name] for name in ("Gpus", "GpuHours", "MTokens", "Requests")),
    (money_column("Cost", 11, "money"), "Actual cost"),
    *(_SHOWN[name] for name in ("CostPerMTokens", "IdleGpuHours", "IdleGpuCost")),
)
SERVING_REVIEW_COLUMNS = tuple(c for c, _ in SERVING_REVIEW)
CAPACITY_COLUMNS = tuple(c for c, _ in CAPACITY)
LOAD_TEST_COLUMNS = tuple(c for c, _ in LOAD_TESTS)

#: One width per sheet column: the widest of the tables that share it.
_WIDTHS = tuple(max(t[i][0].width for t in (SERVING_REVIEW, CAPACITY, PLAN_LINES, LOAD_TESTS) if i < len(t))
                for i in range(max(map(len, (SERVING_REVIEW, CAPACITY, PLAN_LINES, LOAD_TESTS)))))
#: Points for the row of words over a table header: four wrapped lines of an 11 pt font (8 pt or more printed).
_WORDS_ROW_POINTS = 60


def _round(value: float | None, digits: int = 2) -> Any:
    return None if value is None else round(float(value), digits)


def _money(value: Any, digits: int) -> float | None:
    """A core amount as a worksheet number rounded to ``digits`` places (display only)."""
    return None if value is None else round(float(value.amount), digits)


def _labelled_table(ws: Worksheet, styles: ReviewStyles, words_format: Any, name: str, heading: str,
                    columns: Sequence[Labelled], rows: list[list[Any]], first_row: int) -> int:
    """``heading`` in ``first_row``, the words over the header in the next row, then the table ``name``;
    returns the first row after the table."""
    label(ws, styles, first_row, heading)
    ws.set_row(first_row + 1, _WORDS_ROW_POINTS)
    for col, (_, words) in enumerate(columns):
        ws.write_string(first_row + 1, col, words, words_format)
    place = write_table(ws, styles, name, [c for c, _ in columns], rows, first_row=first_row + 2)
    return place.row(place.rows - 1) + 1


def _plan_line_rows(month: ServingMonth) -> list[list[Any]]:
    """One row per plan line that several serving lines serve: GPUs, GPU-hours, tokens, requests, cost and idle
    cost summed; cost per million tokens = the summed cost / the summed tokens."""
    from decimal import Decimal

    from finops.money import Money

    by_line: dict[str, list[Any]] = {}
    for r in month.lines:
        by_line.setdefault(r.plan_line, []).append(r)
    rows = []
    for line, members in by_line.items():
        if len(members) < 2:
            continue
        costs = [r.cost for r in members]
        cost = Money.total(costs, costs[0].currency) if all(c is not None for c in costs) else None
        tokens = sum(r.tokens for r in members)
        idle = [r.idle_gpu_cost for r in members]
        idle_cost = Money.total(idle, idle[0].currency) if all(c is not None for c in idle) else None
        per_m = None if cost is None or tokens <= 0 else cost * (Decimal(1_000_000) / Decimal(repr(tokens)))
        idle_hours = [r.idle_gpu_hours for r in members]
        rows.append([line, len(members), sum(r.gpus for r in members), _round(sum(r.gpu_hours for r in members), 1),
                     _round(tokens / 1e6, 3), round(sum(r.requests for r in members)), _money(cost, 2),
                     None if per_m is None else float(per_m.rounded().amount),
                     None if None in idle_hours else _round(sum(idle_hours), 1), _money(idle_cost, 2)])
    return rows


def write_serving_review(wb: Any, styles: ReviewStyles, month: ServingMonth, run_at: datetime) -> None:
    """Add the Serving sheet to the review workbook ``wb``, set up for print like the review's other sheets."""
    ws = review_sheet(wb, styles, "Serving", f"Serving: what production did in {month.month}",
                      "Per serving plan line, from its metric series (increase() over the month, resets counted "
                      "as restarts). P_ok = requests within the target / all requests (seed 003). Model: the "
                      "performance model at the month's mean lengths and running batch.",
                      month=month.month, run_at=run_at, widths=_WIDTHS, header_rows=(0, 0))
    words_format = wb.add_format({"bold": True, "text_wrap": True, "valign": "bottom", "font_size": 11,
                                  "bottom": 1, "border_color": "#D9D9D9"})
    traffic, capacity = [], []
    for r in month.lines:
        cost = r.cost_per_million_tokens
        traffic.append([
            r.plan_line, r.line.engine, r.line.model, r.line.gpu, _round(r.tokens / 1e6, 3), round(r.requests),
            round(float(r.hourly_generation_tokens.max())) if r.hourly_generation_tokens.size else None,
            _round(r.ttft_p50_ms, 1), _round(r.ttft_p99_ms, 1), _round(r.ttft_p_ok, 4),
            _round(r.itl_p50_ms, 2), _round(r.itl_p99_ms, 2), _round(r.itl_p_ok, 4), ", ".join(r.missing)])
        capacity.append([
            r.plan_line, r.line.model, r.gpus, _round(r.gpu_hours, 1), r.gpu_hours_source, _round(r.dcgm_gpu_hours, 1),
            _round(r.gpu_utilization, 4), _round(r.realized_tokens_per_gpu_hour, 0),
            _round(r.predicted_tokens_per_gpu_hour, 0), _round(r.throughput_ratio, 3),
            None if cost is None else float(cost.rounded().amount), _round(r.gap_hours, 1),
            _money(r.cost_per_request, 6), _round(r.idle_gpu_hours, 1), _money(r.idle_gpu_cost, 2)])
    row = _labelled_table(ws, styles, words_format, "tblServingReview", "Traffic and latency", SERVING_REVIEW,
                          traffic, first_row=2)
    row = _labelled_table(ws, styles, words_format, "tblServingCapacity", "GPUs, throughput and cost", CAPACITY,
                          capacity, first_row=row + 1)
    summed = _plan_line_rows(month)
    if summed:
        row = _labelled_table(ws, styles, words_format, "tblServingPlanLines",
                              "Plan lines with several serving lines: their fleets and costs summed (the bill's cost "
                              "and GPU-hours are shared among them by the GPU-hours DCGM saw)", PLAN_LINES, summed,
                              first_row=row + 1)
    if month.load_tests:
        tests = [[t.plan_line, t.line.engine, t.line.model, t.line.gpu, t.file, p.concurrency, p.isl, p.osl,
                  _round(p.ttft_ms, 1), _round(p.tpot_ms, 2), round(measured), round(predicted),
                  _round(measured / predicted, 3)]
                 for t in month.load_tests
                 for p, measured, predicted in zip(t.points, t.measured_tokens_per_gpu_hour,
                                                   t.predicted_tokens_per_gpu_hour)]
        _labelled_table(ws, styles, words_format, "tblServingLoadTests",
                        "Load tests: measured (the file's mean TTFT and TPOT, c x osl / (TTFT + (osl - 1) TPOT)) "
                        "against the performance model at the same point, per GPU-hour", LOAD_TESTS, tests,
                        first_row=row + 1)
    for col, width in enumerate(_WIDTHS):
        ws.set_column(col, col, width)
