"""The plan ``finops demo`` builds for 2026-05: the seed workloads' own fleets, on plan lines, by formula.

Each workload below names its plan line (Workloads' PlanLine), so that line's Budget Amount is a formula over
the TCO sheet: the sum of its workloads' ``Instances x InstanceHourly x HoursPerMonth`` (the fleet the Sizing
sheet deployed, at the price book's price under the workload's pricing model). The translation batch runs on
spot. The on-prem line's Amount is the depreciation of its owned servers (the Assets sheet, as in the
samples' plan). The customer-service scenario (thousands of A10G instances) is sized and costed but not in
this budget.

The mapping assigns bill rows to lines by sub-account: each line's fleet runs in its own AWS linked account
or Google Cloud project named after the line (:mod:`finops.reconcile.demo_bills`, which generates the
month's bills of this fleet). A sub-account the plan does not know (a research team's account) stays
unmapped.
"""

from __future__ import annotations

from pathlib import Path

from finops.reconcile.demo_bills import FleetLine

from .demo_plan import ASSETS, DEMO_MONTH, PlanTables
from .plan_reader import range_rows, table_places

__all__ = ["FLEET_PLAN", "PLAN_LINES", "PRICING_MODELS", "planned_fleets", "served_tokens"]

#: Workload -> the plan line its fleet is budgeted on.
PLAN_LINES = {
    "seed000-doc-qa": "aws-inference-prod",
    "seed002-financial-copilot": "aws-inference-prod",
    "seed002-marketing-content": "aws-inference-prod",
    "seed000-doc-qa-as-printed": "aws-inference-staging",
    "seed002-drug-discovery-agent": "aws-agents-prod",
    "seed002-translation": "gcp-batch-translation",
}
#: Workload -> pricing model on the TCO sheet (others: on-demand).
PRICING_MODELS = {"seed002-translation": "spot"}

#: Month, PlanLine, CostCentre, Category, Provider, Amount, Currency, PlannedMTokens (an OPEX line's Amount
#: and PlannedMTokens are the TCO sheet's formulas, the CAPEX line's Amount the Assets' depreciation).
_BUDGET: tuple[tuple[object, ...], ...] = (
    (DEMO_MONTH, "aws-inference-prod", "cc-1042", "OPEX", "AWS", 0, "USD", None),
    (DEMO_MONTH, "aws-inference-staging", "cc-1042", "OPEX", "AWS", 0, "USD", None),
    (DEMO_MONTH, "aws-agents-prod", "cc-1042", "OPEX", "AWS", 0, "USD", None),
    (DEMO_MONTH, "gcp-batch-translation", "cc-1042", "OPEX", "Google Cloud", 0, "USD", None),
    (DEMO_MONTH, "onprem-inference", "cc-1042", "CAPEX", "On-prem", 11_475, "USD", None),
)

#: Rule, PlanLine, ProviderName, SubAccount, ServiceName, InstanceType, RegionId, TagKey, TagValue
_MAPPING: tuple[tuple[object, ...], ...] = (
    (1, "aws-inference-prod", "AWS", "aws-inference-prod", "AmazonEC2", "", "", "", ""),
    (2, "aws-inference-staging", "AWS", "aws-inference-staging", "AmazonEC2", "", "", "", ""),
    (3, "aws-agents-prod", "AWS", "aws-agents-prod", "AmazonEC2", "", "", "", ""),
    (4, "gcp-batch-translation", "Google Cloud", "gcp-batch-translation", "Compute Engine", "", "", "", ""),
)

FLEET_PLAN = PlanTables(
    _BUDGET, ASSETS, _MAPPING, (),   # the month's tokens come with its bills (served_tokens), not typed here
    "demo plan of the seed workloads' fleets (finops demo bills this fleet's month), as of 2026-11-30",
)


def served_tokens(path: Path, month: str, folder: Path) -> Path:
    """The month's served output tokens per plan line, as a usage file (``Month,PlanLine,ActualMTokens``) in
    ``folder``: each OPEX line's planned average load (its Budget PlannedMTokens, stored with the formula, for
    the plan's ``HoursPerMonth``) over every hour of ``month``, so a line's volume variance is the month's
    length and the rest of its variance is rate. Derived from the plan, so it follows the sizing."""
    import openpyxl

    from finops.files import write_atomically
    from finops.serving import month_window

    _, hours = month_window(month)
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        planned_hours = _named_value(book, "HoursPerMonth")
        sheet, ref = table_places(path)["tblbudget"]
        _, _, cells = range_rows(book[sheet], ref)
        headers = [str(h) for h in next(cells)]
        lines = ["Month,PlanLine,ActualMTokens"]
        for values in cells:
            row = dict(zip(headers, values))
            if row["Month"] == month and row["Category"] == "OPEX" and isinstance(row["PlannedMTokens"], int | float):
                lines.append(f"{month},{row['PlanLine']},{round(row['PlannedMTokens'] * hours / planned_hours, 3)}")
    finally:
        book.close()
    return write_atomically(folder / f"usage-{month}.csv", ("\n".join(lines) + "\n").encode())


def _named_value(book: object, name: str) -> float:
    """The value of the one-cell name ``name`` (``Start!$B$4``) of an openpyxl workbook loaded with data_only."""
    sheet, cell = book.defined_names[name].value.split("!")  # type: ignore[attr-defined]
    return float(book[sheet.strip("'")][cell.replace("$", "")].value)  # type: ignore[index]


def planned_fleets(path: Path) -> list[FleetLine]:
    """The fleets the plan at ``path`` budgets: each ``tblTco`` row on a plan line whose configuration is priced
    (the values the workbook stores with its formulas)."""
    import openpyxl

    sheet, ref = table_places(path)["tbltco"]
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        _, _, cells = range_rows(book[sheet], ref)
        headers = [str(h) for h in next(cells)]
        fleets = []
        for values in cells:
            row = dict(zip(headers, values))
            if row["PlanLine"] and isinstance(row["CloudMonthly"], int | float) and row["Instances"]:
                fleets.append(FleetLine(str(row["PlanLine"]), str(row["Workload"]), str(row["Provider"]),
                                        str(row["Region"]), str(row["InstanceType"]), int(row["Instances"]),
                                        str(row["PricingModel"])))
        return fleets
    finally:
        book.close()
