"""The Start sheet: what the workbook is, what to do in order, and how to read the colours."""

from __future__ import annotations

from xlsxwriter.workbook import Workbook

from ..styles import Styles
from ._table import fit_for_print

__all__ = ["ASSUMPTIONS", "HOURS_PER_MONTH", "STEPS", "write_start"]

#: Hours in an average month, 8,760 / 12: what a month of an always-on instance is charged.
HOURS_PER_MONTH = 730
#: The workbook's named inputs: label, defined name, value, what it means. Every formula that needs one of
#: these constants reads the name, so changing it here moves every figure that depends on it.
ASSUMPTIONS: tuple[tuple[str, str, float, str], ...] = (
    ("Hours per month", "HoursPerMonth", HOURS_PER_MONTH,
     ("hours an always-on instance runs in an average month (8,760 / 12); every monthly cost of the workbook "
      "is an hourly cost times this")),
)

STEPS: tuple[tuple[str, str], ...] = (
    (
        "Workloads",
        (
            "Describe each workload: model, precision, users, request lengths, latency targets. "
            "Yellow cells are yours; the dropdowns list the catalog."
        ),
    ),
    (
        "Sizing",
        (
            "Read the concurrency, memory fit, TTFT / TPOT and the number of GPUs per workload "
            "(add-in functions LLM_*)."
        ),
    ),
    (
        "TCO",
        "Compare owned hardware with cloud prices: total cost over the term and cost per million tokens.",
    ),
    (
        "Mix",
        (
            "See the recommended units per purchase option (owned, reserved, on-demand, spot) for the demand "
            "profile, and the savings against all on-demand."
        ),
    ),
    (
        "Prices",
        (
            "Check the price snapshot (date and source on every row); refresh it with `finops prices pull`, "
            "then `finops template build --prices`."
        ),
    ),
    ("Budget", "Enter the monthly plan lines (OPEX / CAPEX) per cost centre and provider."),
    ("Assets", "Register owned hardware (purchase date, cost, life, residual) for the CAPEX depreciation."),
    ("Mapping", "Map bill rows to plan lines (first matching rule wins)."),
    ("Usage", "Optionally record the million tokens served per plan line, for unit costs."),
    (
        "Reconcile",
        (
            "Each month run `finops reconcile --plan this-file.xlsx --month YYYY-MM --bills ...` "
            "to get the budget-review workbook."
        ),
    ),
)


def write_start(wb: Workbook, styles: Styles) -> None:
    ws = wb.add_worksheet("Start")
    fit_for_print(ws, None, [4, 14, 100])
    ws.set_column(0, 0, 4)
    ws.set_column(1, 1, 14)
    ws.set_column(2, 2, 100)
    ws.write_string(0, 1, "llm-finops planning workbook", styles.title)
    ws.write_string(
        1,
        1,
        "Plan, price and reconcile GPU fleets for LLM inference. Cells show the values "
        "computed when the file was built; install the add-in (see docs/excel.md) to recalculate.",
        styles.subtitle,
    )
    ws.write_string(3, 1, "Step", styles.header)
    ws.write_string(3, 2, "What to do", styles.header)
    for i, (sheet, what) in enumerate(STEPS, start=1):
        row = 3 + i
        ws.write_number(row, 0, i)
        ws.write_url(
            row, 1, f"internal:'{sheet}'!A1" if sheet != "Reconcile" else "internal:'Budget'!A1", string=sheet
        )
        ws.write_string(row, 2, what, styles.note)
    legend = 5 + len(STEPS)
    ws.write_string(legend, 1, "Legend", styles.label)
    ws.write_string(legend + 1, 1, "input", styles.input("text"))
    ws.write_string(legend + 1, 2, "a value you type (blue on yellow)", styles.note)
    ws.write_string(legend + 2, 1, "computed", styles.computed("text"))
    ws.write_string(
        legend + 2, 2, "a formula: native arithmetic, or an add-in function (LLM_*, FINOPS_*)", styles.note
    )
    ws.write_string(legend + 3, 1, "#FINOPS: ...", styles.bad)
    ws.write_string(legend + 3, 2, "an add-in function rejected its input; the text says why", styles.note)
    top = legend + 5
    ws.write_string(top, 1, "Assumptions", styles.label)
    for i, (label, name, value, what) in enumerate(ASSUMPTIONS, start=1):
        ws.write_number(top + i, 1, value, styles.input("int"))
        ws.write_string(top + i, 2, f"{label} ({name}): {what}", styles.note)
        wb.define_name(name, f"=Start!$B${top + i + 1}")
    ws.activate()
