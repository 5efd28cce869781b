"""The serving side of ``finops demo``'s own plan: the Serving table of its fleet lines and a synthetic month of
their metrics, so the serving loop (the review's Serving sheet, ``finops plan next``) runs on the plan the demo
bills.

Each workload on a cloud plan line becomes a serving line: its engine, model, GPU, precision and TP from the
Workloads sheet, its targets and spare, the instance the TCO sheet prices, and the label rule ``namespace =
<plan line>`` (``namespace = <workload>`` on a line that several workloads share: one serving line per model). Its
month of metrics (:mod:`finops.serving.synthetic_metrics`) peaks at the load the plan sized for (the TCO sheet's
MTokensPerMonth, output tokens a month at the plan's HoursPerMonth, x the workload's PeakToAverage, at the month's
busiest hour; prompt tokens in the workload's ISL : OSL ratio) on the replicas the Sizing sheet deploys, at the
TTFT and inter-token latency the performance model gives its mean running batch (:data:`SLOWER`: one line
generates slower than modelled, the month's surprise on the serving side).
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

from finops.catalog import get_accelerator
from finops.files import make_folder, write_atomically
from finops.serving import SERVING_COLUMNS, month_window
from finops.serving.synthetic_metrics import LineSpec, answer, line_results, peak_to_average

from .plan_reader import range_rows, table_places

__all__ = ["write_serving_month"]

#: The label every demo series carries, whose value is the plan line (the serving lines' rule).
LABEL = "namespace"
#: The month's surprise on the serving side: the agents' fleet generates 15 % slower than the model says, so the
#: loop's throughput correction sizes it up next month.
SLOWER = {"aws-agents-prod": 1.15}


def _table(book: object, path: Path, name: str) -> list[dict[str, object]]:
    sheet, ref = table_places(path)[name.lower()]
    _, _, cells = range_rows(book[sheet], ref)  # type: ignore[index]
    headers = [str(h) for h in next(cells)]
    return [dict(zip(headers, values)) for values in cells if values[0] not in (None, "")]


def write_serving_month(plan: Path, month: str, folder: Path) -> tuple[Path, list[Path]]:
    """The Serving table (``serving-lines.csv``) of the plan at ``plan`` and one saved ``query_range`` answer per
    serving line for ``month`` (``metrics/<month>-<line>.json.gz``), written into ``folder``."""
    import openpyxl

    book = openpyxl.load_workbook(plan, read_only=True, data_only=True)
    try:
        workloads = {str(r["Workload"]): r for r in _table(book, plan, "tblWorkloads")}
        sizing = {str(r["Workload"]): r for r in _table(book, plan, "tblSizing")}
        tco = [r for r in _table(book, plan, "tblTco") if r["PlanLine"] and isinstance(r["CloudMonthly"], int | float)]
        budget = {(r["Month"], r["PlanLine"]): r for r in _table(book, plan, "tblBudget")}
        sheet, cell = book.defined_names["HoursPerMonth"].value.split("!")  # type: ignore[attr-defined]
        planned_hours = float(book[sheet.strip("'")][cell.replace("$", "")].value)  # type: ignore[index]
    finally:
        book.close()
    by_line: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in tco:
        by_line[str(row["PlanLine"])].append(row)
    _, hours = month_window(month)
    make_folder(folder / "metrics")
    rows, paths = [",".join(SERVING_COLUMNS)], []
    for line, fleets in sorted(by_line.items()):
        if not isinstance(budget.get((month, line), {}).get("PlannedMTokens"), int | float):
            continue
        for fleet in fleets:
            # one serving line per workload; its series' namespace is the plan line's when the line has one workload
            name = line if len(fleets) == 1 else str(fleet["Workload"])
            rows.append(_serving_row(line, name, workloads[str(fleet["Workload"])], fleet))
            paths.append(_write_metrics(folder, month, line, name, workloads[str(fleet["Workload"])],
                                        sizing[str(fleet["Workload"])], float(fleet["MTokensPerMonth"]),  # type: ignore[arg-type]
                                        planned_hours, hours))
    return write_atomically(folder / "serving-lines.csv", ("\n".join(rows) + "\n").encode()), paths


def _serving_row(line: str, name: str, w: dict[str, object], fleet: dict[str, object]) -> str:
    return ",".join(str(v) for v in (
        line, w["Engine"], w["Model"], w["Gpu"], w["Precision"], w["TP"], LABEL, name,
        _blank(w["TtftTargetMs"]), _blank(w["TpotTargetMs"]), _blank(w["Spare"]),
        fleet["Provider"], fleet["InstanceType"], fleet["Region"]))


def _write_metrics(folder: Path, month: str, line: str, name: str, w: dict[str, object], s: dict[str, object],
                   planned: float, planned_hours: float, hours: int) -> Path:
    """The month of one serving line's series (namespace ``name``), peaking at the load the plan sized it for."""
    isl, osl = int(w["ISL"]), int(w["OSL"])  # type: ignore[arg-type]
    # the planned peak (average output tokens an hour x PeakToAverage) at the month's busiest hour
    peak_per_hour = planned / planned_hours * float(w["PeakToAverage"] or 1)  # type: ignore[arg-type]
    output = peak_per_hour * hours / peak_to_average(name, month)
    replicas = int(s["Replicas"])  # type: ignore[arg-type]
    ttft_s, itl_s = _modelled_latencies(w, output * 1e6 / hours / 3600 / osl / replicas)
    spec = LineSpec(name, name, str(w["Engine"]), str(w["Model"]), get_accelerator(str(w["Gpu"])).name,
                    replicas, int(w["TP"]), output * (isl + osl) / osl, isl, osl,  # type: ignore[arg-type]
                    ttft_s, itl_s * SLOWER.get(line, 1.0))
    body = json.dumps(answer(line_results(spec, month)), separators=(",", ":")).encode()
    return write_atomically(folder / "metrics" / f"{month}-{name}.json.gz", gzip.compress(body, mtime=0))


def _modelled_latencies(workload: dict[str, object], requests_per_s: float) -> tuple[float, float]:
    """TTFT and inter-token latency (seconds) the performance model gives one replica of ``workload`` at its
    running batch for ``requests_per_s`` (Little's law: batch = rate x (TTFT + OSL x ITL), iterated to a fixed
    point from one sequence)."""
    from finops.sizing import estimate

    osl = int(workload["OSL"])  # type: ignore[arg-type]
    batch, ttft, itl = 1, 0.0, 0.0
    for _ in range(6):
        e = estimate(str(workload["Model"]), str(workload["Gpu"]), precision=str(workload["Precision"]),
                     tp=int(workload["TP"]), isl=int(workload["ISL"]), osl=osl,  # type: ignore[arg-type]
                     concurrency=batch, engine=str(workload["Engine"]))
        ttft, itl = (e.ttft_ms or 0.0) / 1000, (e.tpot_ms or 0.0) / 1000
        batch = max(1, round(requests_per_s * (ttft + osl * itl)))
    return ttft, itl


def _blank(value: object) -> object:
    return "" if value is None else value
