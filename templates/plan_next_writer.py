"""Write the next month's plan workbook: a copy of the input plan with the loop's answer added.

The input plan is read, never written; the output is a new file (written beside its target, then
renamed into place), the input's package with parts added and changed (:mod:`templates.xlsx_package`),
so its charts, formulas with their cached values, data validation and styles stay as they were. What
the copy gains:

* ``tblBudget``: one row per plan line for the next month, appended below the existing rows (the table grows;
  rows of that month already there are replaced). A plan line with serving lines (one or several): Amount as a
  formula, ``SUMIFS(Fleet MonthlyCost, PlanLine) + SUMIFS(Fleet SunkAmortization, PlanLine)`` (their mix's monthly
  cost plus the amortization of commitments already bought), their planned tokens, and PlannedGpuHours as a
  formula, ``SUMIFS(Fleet GpusPaid, PlanLine) x HoursPerMonth`` (the GPUs paid on average, whole instances hour by
  hour, x the plan's hours); each formula with its value stored, so a reader without a spreadsheet engine reads
  the same numbers and a planned number leads back to its serving lines' fleet. A line whose capacity is not
  bought in the cloud keeps this month's Amount (typed); the other lines: this month's row carried over;
* ``Serving`` (``tblServing``): the serving lines, so the next run reads them from the plan;
* ``Demand``: the next month's hourly requests per serving line (observed profile x growth);
* ``Fleet``: per serving line (its plan line and label rule) the GPUs observed, sized and paid on average,
  replicas, instances, commitments sunk and new, monthly cost, the throughput correction with its band and months;
* ``Changes``: what moved, from what to what, by how much, and why; a cloud line's monthly cost as a bridge
  from this month's actual cost: fleet, hours paid, price (and commitments already bought), one row each.

Sheets of these names from an earlier run are replaced.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from finops.errors import InputError, Location
from finops.files import write_atomically
from finops.reconcile import Plan
from finops.serving import SERVING_COLUMNS, NextPlan, ServingLine, serving_lines_from_rows

from .plan_reader import check_package
from .plan_tables import BUDGET, SERVING, check_cells, find_table, workbook_tables
from .xlsx_package import FormulaCell, XlsxPackage, column_letter

__all__ = ["ADDED_SHEETS", "read_serving_sheet", "write_next_plan"]

ADDED_SHEETS = ("Serving", "Demand", "Fleet", "Changes")
FLEET_HEADERS = ("PlanLine", "ServingLine", "GpusObserved", "GpusNext", "GpusPaid", "Replicas", "Instances",
                 "SunkCommitted", "NewCommitted", "MonthlyCost", "SunkAmortization", "Currency", "ThroughputCorrection",
                 "ErrorBand", "CorrectionMonths", "Note")
CHANGES_HEADERS = ("PlanLine", "ServingLine", "What", "Before", "After", "ChangePct", "Why")
#: The Fleet columns whose sum over a plan line's serving lines is its Budget Amount (:attr:`NextLine.budget`).
_BUDGET_COSTS = ("MonthlyCost", "SunkAmortization")
_MONEY, _INT, _SHARE = "#,##0.00", "#,##0", "0.0%"
#: Number formats and widths of the added sheets, as the plan's own sheets show theirs (templates/styles.py).
_SERVING_FORMATS = {"TP": _INT, "TtftTargetMs": _INT, "ItlTargetMs": "#,##0.0", "Spare": _SHARE}
_FLEET_FORMATS = (None, None, _INT, _INT, "#,##0.00", _INT, _INT, _INT, None, _MONEY, _MONEY, None, "0.0000", _SHARE,
                  None, None)
_FLEET_WIDTHS = (24, 22, 9, 9, 9, 9, 9, 9, 22, 14, 14, 9, 11, 9, 14, 40)
_CHANGES_FORMATS = (None, None, None, _MONEY, _MONEY, _SHARE, None)
_CHANGES_WIDTHS = (24, 22, 24, 14, 14, 10, 60)


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


def _budget_rows(plan: Plan, nxt: NextPlan, observed_month: str, fleet_rows: int,
                 hours_name: bool) -> list[dict[str, object]]:
    """The next month's Budget rows: a plan line with serving lines gets its planned tokens, its Amount as the sum
    of their budgets over the Fleet sheet when every one is priced (``SUMIFS(MonthlyCost, PlanLine, the row's plan
    line) + SUMIFS(SunkAmortization, ...)``, the cached value the sum of the cents the Fleet sheet shows) and its
    PlannedGpuHours as a formula over the Fleet sheet (``SUMIFS(GpusPaid, PlanLine, ...) x HoursPerMonth``, as the
    plan's own lines over its TCO sheet); the other lines are this month's rows carried over."""
    serving: dict[str, list] = {}
    for n in nxt.lines:
        serving.setdefault(n.plan_line, []).append(n)
    rows = []
    for b in plan.budget_for(observed_month):
        lines = serving.get(b.plan_line)
        amount, mtokens = b.amount.amount, b.planned_mtokens
        gpu_hours: object = None if b.planned_gpu_hours is None else float(b.planned_gpu_hours)
        amount_cell: object = float(amount)
        if lines:
            mtokens = sum((n.planned_mtokens for n in lines), Decimal(0))
            if all(n.budget is not None for n in lines):
                # the sum of what the Fleet sheet shows (each cost to the cent), so the row ties out to it
                amount = sum((m.rounded().amount for n in lines for m in (n.monthly_cost, n.sunk_amortization)
                              if m is not None), Decimal(0))
                amount_cell = FormulaCell("=" + "+".join(_fleet_sum(c, fleet_rows) for c in _BUDGET_COSTS), float(amount))
            paid = sum(n.gpu_hours for n in lines)
            gpu_hours = FormulaCell(f"={_fleet_sum('GpusPaid', fleet_rows)}*HoursPerMonth", paid) if hours_name else paid
        rows.append({"Month": nxt.month, "PlanLine": b.plan_line, "CostCentre": b.cost_centre, "Category": b.category,
                     "Provider": b.provider, "Amount": amount_cell, "Currency": b.amount.currency,
                     "PlannedMTokens": None if mtokens is None else float(mtokens), "PlannedGpuHours": gpu_hours})
    return rows


def _fleet_sum(header: str, rows: int) -> str:
    """The Fleet table's column ``header`` summed over the serving lines of the Budget row's plan line:
    ``SUMIFS('Fleet'!$J$4:$J$7,'Fleet'!$A$4:$A$7,$B12)``."""
    return f"SUMIFS({_fleet_range(header, rows)},{_fleet_range('PlanLine', rows)},{{PlanLine}})"


def _fleet_range(header: str, rows: int) -> str:
    """The Fleet table's column ``header`` as an absolute range (``'Fleet'!$D$4:$D$7``)."""
    letter = column_letter(FLEET_HEADERS.index(header) + 1)
    return f"'Fleet'!${letter}$4:${letter}${3 + max(1, rows)}"


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
    package.append_table_rows(budget.sheet, budget.name,
                              _budget_rows(plan, nxt, observed_month, len(nxt.lines), package.defines("HoursPerMonth")),
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
    names = nxt.names()
    package.put_table_sheet("Demand", "tblDemand", ["Hour"] + names, demand,
                            f"Requests per hour planned for {nxt.month}: the observed hours of {observed_month} x growth "
                            f"{nxt.growth:g}. " + stamp, formats=[_INT] + ["#,##0.0"] * len(nxt.lines),
                            widths=[8] + [max(12, min(40, len(name) + 2)) for name in names], like=budget.sheet)
    fleet = [[n.plan_line, n.rule, n.realized.gpus, n.gpus, n.gpus_paid, n.replicas, n.instances, n.sunk_units,
              ", ".join(f"{u} x {name}" for name, u in sorted(n.committed_units.items())),
              None if n.monthly_cost is None else float(n.monthly_cost.rounded().amount),
              None if n.sunk_amortization is None else float(n.sunk_amortization.rounded().amount),
              None if n.monthly_cost is None else n.monthly_cost.currency,
              round(n.factor, 4), round(n.band, 4), ", ".join(n.correction_months), n.note]
             for n in nxt.lines]
    package.put_table_sheet("Fleet", "tblFleet", FLEET_HEADERS, fleet,
                            f"Fleet and commitments for {nxt.month}, sized with the recalibrated model. " + stamp,
                            formats=_FLEET_FORMATS, widths=_FLEET_WIDTHS, like=budget.sheet)
    changes = [[c.plan_line, c.serving_line, c.what, c.before, c.after, None if c.change is None else round(c.change, 4), c.why]
               for c in nxt.changes]
    package.put_table_sheet("Changes", "tblChanges", CHANGES_HEADERS, changes,
                            f"What moved from {observed_month} to {nxt.month}, by how much, and why. " + stamp,
                            formats=_CHANGES_FORMATS, widths=_CHANGES_WIDTHS, like=budget.sheet)
    return write_atomically(out, package.to_bytes())
