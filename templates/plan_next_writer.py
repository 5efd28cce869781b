"""Write the next month's plan workbook: a copy of the input plan with the loop's answer added.

The input plan is read, never written; the output is a new file (written beside its target, then
renamed into place), the input's package with parts added and changed (:mod:`templates.xlsx_package`),
so its charts, formulas with their cached values, data validation and styles stay as they were. What
the copy gains:

* ``tblBudget``: one row per plan line for the next month (serving cloud lines: the mix's monthly
  cost plus the amortization of commitments already bought, and the planned tokens; the other lines: this month's row carried over), appended below the
  existing rows (the table grows; rows of that month already there are replaced);
* ``Serving`` (``tblServing``): the serving lines, so the next run reads them from the plan;
* ``Demand``: the next month's hourly requests per serving line (observed profile x growth);
* ``Fleet``: per line the GPUs observed and sized, replicas, instances, commitments sunk and new,
  monthly cost, the throughput correction with its band and months;
* ``Changes``: what moved, from what to what, by how much, and why.

Sheets of these names from an earlier run are replaced.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from finops.errors import InputError, Location
from finops.files import write_atomically
from finops.reconcile import Plan
from finops.serving import SERVING_COLUMNS, NextPlan, ServingLine, serving_lines_from_rows

from .plan_reader import check_package
from .plan_tables import BUDGET, SERVING, check_cells, find_table, workbook_tables
from .xlsx_package import XlsxPackage

__all__ = ["ADDED_SHEETS", "read_serving_sheet", "write_next_plan"]

ADDED_SHEETS = ("Serving", "Demand", "Fleet", "Changes")
FLEET_HEADERS = ("PlanLine", "GpusObserved", "GpusNext", "Replicas", "Instances", "SunkCommitted",
                 "NewCommitted", "MonthlyCost", "SunkAmortization", "Currency", "ThroughputCorrection", "ErrorBand",
                 "CorrectionMonths", "Note")
CHANGES_HEADERS = ("PlanLine", "What", "Before", "After", "ChangePct", "Why")
_MONEY, _INT, _SHARE = "#,##0.00", "#,##0", "0.0%"
#: Number formats and widths of the added sheets, as the plan's own sheets show theirs (templates/styles.py).
_SERVING_FORMATS = {"TP": _INT, "TtftTargetMs": _INT, "ItlTargetMs": "#,##0.0", "Spare": _SHARE}
_FLEET_FORMATS = (None, _INT, _INT, _INT, _INT, _INT, None, _MONEY, _MONEY, None, "0.0000", _SHARE, None, None)
_FLEET_WIDTHS = (24, 9, 9, 9, 9, 9, 22, 14, 14, 9, 11, 9, 14, 40)
_CHANGES_FORMATS = (None, None, _MONEY, _MONEY, _SHARE, None)
_CHANGES_WIDTHS = (24, 22, 14, 14, 10, 70)


def read_serving_sheet(path: Path) -> tuple[ServingLine, ...] | None:
    """The plan's ``tblServing`` (written by an earlier ``plan next``; found by role, as the plan's other
    tables: :mod:`templates.plan_tables`), or ``None`` when it has none."""
    import openpyxl

    check_package(Path(path))
    table = find_table(workbook_tables(path), SERVING, str(path))
    if table is None:
        return None
    check_cells(Path(path), [table])
    wb = openpyxl.load_workbook(path, data_only=True)
    ws = wb[table.sheet]
    cells = ws[table.ref]
    header = [str(c.value or "").strip() for c in cells[0]]
    rows = [(row[0].row, {h: "" if c.value is None else str(c.value).strip() for h, c in zip(header, row)})
            for row in cells[1:] if any(c.value not in (None, "") for c in row)]
    return serving_lines_from_rows(rows, f"{path}, sheet {ws.title}")


def _budget_rows(plan: Plan, nxt: NextPlan, observed_month: str) -> list[dict[str, object]]:
    serving = {n.plan_line: n for n in nxt.lines}
    rows = []
    for b in plan.budget_for(observed_month):
        line = serving.get(b.plan_line)
        amount, mtokens = b.amount.amount, b.planned_mtokens
        if line is not None:
            mtokens = line.planned_mtokens
            if line.budget is not None:
                amount = line.budget.rounded().amount
        rows.append({"Month": nxt.month, "PlanLine": b.plan_line, "CostCentre": b.cost_centre, "Category": b.category,
                     "Provider": b.provider, "Amount": float(amount), "Currency": b.amount.currency,
                     "PlannedMTokens": None if mtokens is None else float(mtokens),
                     # a fleet the next month resizes has no planned GPU-hours of its own yet: its volume is tokens
                     "PlannedGpuHours": None if line is not None or b.planned_gpu_hours is None
                     else float(b.planned_gpu_hours)})
    return rows


def write_next_plan(plan_path: Path, plan: Plan, nxt: NextPlan, observed_month: str, out: Path) -> Path:
    """Write the next plan to ``out`` (never ``plan_path``) and return ``out``."""
    plan_path, out = Path(plan_path), Path(out)
    if out.suffix.lower() != ".xlsx":
        raise InputError("the next plan is written as .xlsx", where=Location(file=str(out)),
                         hint="for example --out plan-next.xlsx")
    if out.exists() and plan_path.exists() and out.resolve() == plan_path.resolve():
        raise InputError("--out is the input plan; the input plan is never modified", where=Location(file=str(out)),
                         hint="write the next plan to another file, e.g. --out plan-next.xlsx")
    check_package(plan_path)
    package = XlsxPackage(plan_path)
    budget = find_table(workbook_tables(plan_path), BUDGET, str(plan_path))
    assert budget is not None  # the Budget role is required: find_table refuses a plan without one
    package.append_table_rows(budget.sheet, budget.name, _budget_rows(plan, nxt, observed_month),
                              drop_tail=[b.row for b in plan.budget if b.month == nxt.month and b.row is not None])
    lines = [n.realized.line for n in nxt.lines]
    stamp = f"written by `finops plan next` from {observed_month} on {datetime.now(UTC):%Y-%m-%d}"
    package.put_table_sheet("Serving", "tblServing", SERVING_COLUMNS, [line.values() for line in lines],
                            "Serving plan lines: configuration, targets, how capacity is bought, and the label rule "
                            "that assigns metric series to the line (first match wins). " + stamp,
                            formats=[_SERVING_FORMATS.get(c) for c in SERVING_COLUMNS],
                            widths=[24 if c == "PlanLine" else 13 for c in SERVING_COLUMNS], like=budget.sheet)
    hours = max((n.hourly_requests.size for n in nxt.lines), default=0)
    demand = [[h] + [round(float(n.hourly_requests[h]), 3) if h < n.hourly_requests.size else None
                     for n in nxt.lines] for h in range(hours)]
    package.put_table_sheet("Demand", "tblDemand", ["Hour"] + [n.plan_line for n in nxt.lines], demand,
                            f"Requests per hour planned for {nxt.month}: the observed hours of {observed_month} x growth "
                            f"{nxt.growth:g}. " + stamp, formats=[_INT] + ["#,##0.0"] * len(nxt.lines),
                            widths=[8] + [max(12, len(n.plan_line) + 2) for n in nxt.lines], like=budget.sheet)
    fleet = [[n.plan_line, n.realized.gpus, n.gpus, n.replicas, n.instances, n.sunk_units,
              ", ".join(f"{u} x {name}" for name, u in sorted(n.committed_units.items())),
              None if n.monthly_cost is None else float(n.monthly_cost.rounded().amount),
              None if n.sunk_amortization is None else float(n.sunk_amortization.rounded().amount),
              None if n.monthly_cost is None else n.monthly_cost.currency,
              round(n.factor, 4), round(n.band, 4), ", ".join(n.correction_months), n.note]
             for n in nxt.lines]
    package.put_table_sheet("Fleet", "tblFleet", FLEET_HEADERS, fleet,
                            f"Fleet and commitments for {nxt.month}, sized with the recalibrated model. " + stamp,
                            formats=_FLEET_FORMATS, widths=_FLEET_WIDTHS, like=budget.sheet)
    changes = [[c.plan_line, c.what, c.before, c.after, None if c.change is None else round(c.change, 4), c.why]
               for c in nxt.changes]
    package.put_table_sheet("Changes", "tblChanges", CHANGES_HEADERS, changes,
                            f"What moved from {observed_month} to {nxt.month}, by how much, and why. " + stamp,
                            formats=_CHANGES_FORMATS, widths=_CHANGES_WIDTHS, like=budget.sheet)
    return write_atomically(out, package.to_bytes())
