"""The review's Serving sheet: what each serving plan line actually did in the month.

One row per serving line of a :class:`finops.serving.ServingMonth`: tokens and requests served, the
hourly peak, TTFT/ITL P50 and P99 with seed 003's P_ok against the line's targets, GPUs, GPU-hours
(the bill's, DCGM's where the bill has none: ``GpuHoursFrom``) and utilization (DCGM), realized
against predicted generation tokens per GPU-hour, and the cost per million tokens actually served
(the line's actual cost from the reconciliation over its tokens). Below it, when load tests were given
(``--load-test``), one row per load-test point: measured and predicted throughput per GPU-hour.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from finops.serving import ServingMonth

from .review.page import ReviewStyles, review_sheet
from .sheets._table import Column, write_table

__all__ = ["LOAD_TEST_COLUMNS", "SERVING_REVIEW_COLUMNS", "write_serving_review"]

SERVING_REVIEW_COLUMNS = (
    Column("PlanLine", width=24), Column("Engine", width=8), Column("Model", width=16), Column("Gpu", width=10),
    Column("MTokens", "number", "computed"), Column("Requests", "int", "computed"),
    Column("PeakGenTokensPerHour", "int", "computed"),
    Column("TtftP50Ms", "number", "computed"), Column("TtftP99Ms", "number", "computed"),
    Column("TtftPOk", "percent", "computed"), Column("ItlP50Ms", "number", "computed"),
    Column("ItlP99Ms", "number", "computed"), Column("ItlPOk", "percent", "computed"),
    Column("Gpus", "int", "computed"), Column("GpuHours", "number", "computed"), Column("GpuHoursFrom", width=8),
    Column("DcgmGpuHours", "number", "computed"),
    Column("GpuUtilization", "percent", "computed"),
    Column("RealizedTokPerGpuHour", "int", "computed"), Column("PredictedTokPerGpuHour", "int", "computed"),
    Column("RealizedOverPredicted", "number", "computed"), Column("CostPerMTokens", "money", "computed"),
    Column("GapHours", "number", "computed"), Column("NotMeasured", width=24),
)

LOAD_TEST_COLUMNS = (
    Column("PlanLine", width=24), Column("Engine", width=8), Column("Model", width=16), Column("Gpu", width=10),
    Column("File", width=24), Column("Concurrency", "int", "computed"), Column("Isl", "int", "computed"),
    Column("Osl", "int", "computed"), Column("TtftMs", "number", "computed"), Column("TpotMs", "number", "computed"),
    Column("MeasuredTokPerGpuHour", "int", "computed"), Column("PredictedTokPerGpuHour", "int", "computed"),
    Column("MeasuredOverPredicted", "number", "computed"),
)


def _round(value: float | None, digits: int = 2) -> Any:
    return None if value is None else round(float(value), digits)


def write_serving_review(wb: Any, styles: ReviewStyles, month: ServingMonth, run_at: datetime) -> None:
    """Add the Serving sheet to the review workbook ``wb``, set up for print like the review's other sheets."""
    ws = review_sheet(wb, styles, "Serving", f"Serving: what production did in {month.month}",
                      "Per serving plan line, from its metric series (increase() over the month, resets counted "
                      "as restarts). P_ok = requests within the target / all requests (seed 003). Predicted: the "
                      "performance model at the month's mean lengths and running batch.",
                      month=month.month, run_at=run_at, widths=tuple(c.width for c in SERVING_REVIEW_COLUMNS),
                      header_rows=(2, 2))
    rows = []
    for r in month.lines:
        cost = r.cost_per_million_tokens
        rows.append([
            r.plan_line, r.line.engine, r.line.model, r.line.gpu, _round(r.tokens / 1e6, 3), round(r.requests),
            round(float(r.hourly_generation_tokens.max())) if r.hourly_generation_tokens.size else None,
            _round(r.ttft_p50_ms, 1), _round(r.ttft_p99_ms, 1), _round(r.ttft_p_ok, 4),
            _round(r.itl_p50_ms, 2), _round(r.itl_p99_ms, 2), _round(r.itl_p_ok, 4),
            r.gpus, _round(r.gpu_hours, 1), r.gpu_hours_source, _round(r.dcgm_gpu_hours, 1),
            _round(r.gpu_utilization, 4),
            _round(r.realized_tokens_per_gpu_hour, 0), _round(r.predicted_tokens_per_gpu_hour, 0),
            _round(r.throughput_ratio, 3), None if cost is None else float(cost.rounded().amount),
            _round(r.gap_hours, 1), ", ".join(r.missing)])
    write_table(ws, styles, "tblServingReview", SERVING_REVIEW_COLUMNS, rows, first_row=2)
    if not month.load_tests:
        return
    tests = [[t.plan_line, t.line.engine, t.line.model, t.line.gpu, t.file, p.concurrency, p.isl, p.osl,
              _round(p.ttft_ms, 1), _round(p.tpot_ms, 2), round(measured), round(predicted),
              _round(measured / predicted, 3)]
             for t in month.load_tests
             for p, measured, predicted in zip(t.points, t.measured_tokens_per_gpu_hour, t.predicted_tokens_per_gpu_hour)]
    first = 2 + max(len(rows), 1) + 3
    ws.write_string(first - 1, 0, "Load tests: measured (the file's mean TTFT and TPOT, c x osl / (TTFT + (osl - 1) "
                                  "TPOT)) against the performance model at the same point, per GPU-hour")
    write_table(ws, styles, "tblServingLoadTests", LOAD_TEST_COLUMNS, tests, first_row=first)
