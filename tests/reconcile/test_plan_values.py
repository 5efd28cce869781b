"""The plan's values: its one currency, the rows of a month or a year, and a usage CSV read with errors
that name file, row and column (finops/reconcile/plan.py). Expected values are the inputs themselves."""
from datetime import date
from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError, Location
from finops.money import Money
from finops.reconcile.plan import Asset, BudgetLine, Plan, UsageLine, usage_from_csv


def budget(month: str, line: str = "gpu", amount=100, currency: str = "USD", row: int | None = None):
    return BudgetLine(month, line, "cc-1", "OPEX", "aws", Money.of(amount, currency), row=row)


def asset(currency: str = "USD", row: int | None = None) -> Asset:
    return Asset("A-1", "8x H100", "gpu", "cc-1", "H100", 8, date(2026, 1, 5), date(2026, 2, 1),
                 Money.of(250_000, currency), Money.of(25_000, currency), 36, row=row)


def test_the_currency_of_budget_and_assets():
    assert Plan(budget=(budget("2026-05", currency="eur"),)).currency() == "EUR"
    assert Plan(assets=(asset("GBP"),)).currency() == "GBP"  # assets alone set it too
    assert Plan(budget=(budget("2026-05"), budget("2026-06")), assets=(asset(),)).currency() == "USD"


def test_a_second_currency_in_the_budget_is_named_by_its_row():
    plan = Plan(budget=(budget("2026-05", row=4), budget("2026-06", currency="EUR", row=5)), source="plan.xlsx")
    with pytest.raises(CurrencyMismatchError) as caught:
        plan.currency()
    assert caught.value.message == "the plan mixes USD and EUR"
    assert caught.value.where == Location(file="plan.xlsx", sheet="Budget", row=5, column="Currency")
    assert caught.value.hint == "keep one currency in the plan workbook"


def test_a_second_currency_in_the_assets_is_named_by_its_row():
    plan = Plan(budget=(budget("2026-05", row=4),), assets=(asset("EUR", row=9),), source="plan.xlsx")
    with pytest.raises(CurrencyMismatchError) as caught:
        plan.currency()
    assert caught.value.message == "the plan mixes USD and EUR"
    assert caught.value.where == Location(file="plan.xlsx", sheet="Assets", row=9, column="Currency")


def test_an_empty_plan_has_no_currency():
    with pytest.raises(InputError) as caught:
        Plan(source="plan.xlsx").currency()
    assert caught.value.message == "the plan has no budget rows and no assets"
    assert caught.value.where == Location(file="plan.xlsx")
    assert caught.value.hint == "fill the Budget table (tblBudget)"


def test_rows_of_a_month_and_of_its_year_in_workbook_order():
    rows = (budget("2026-05", "b"), budget("2025-05", "old"), budget("2026-01", "a"), budget("2026-05", "c"),
            budget("2027-01", "next"))
    plan = Plan(budget=rows, usage=(UsageLine("2026-05", "b", Decimal(3)), UsageLine("2026-06", "b", Decimal(4))))
    assert [b.plan_line for b in plan.budget_for("2026-05")] == ["b", "c"]
    assert [b.plan_line for b in plan.budget_for_year("2026-05")] == ["b", "a", "c"]
    assert [u.actual_mtokens for u in plan.usage_for("2026-05")] == [Decimal(3)]
    assert plan.budget_for("2026-07") == []


def test_a_usage_csv_is_read_with_its_rows(tmp_path):
    path = tmp_path / "usage.csv"
    path.write_text("\ufeffPlanLine,Month,ActualMTokens\n gpu-a ,２０２６－０５,1250.5\ngpu-b,2026-06,0\n",
                    encoding="utf-8")
    assert usage_from_csv(path) == (UsageLine("2026-05", "gpu-a", Decimal("1250.5"), row=2),
                                    UsageLine("2026-06", "gpu-b", Decimal(0), row=3))


@pytest.mark.parametrize("text,message,column,row", [
    ("Month,PlanLine\n2026-05,gpu\n", "the usage file has no column ActualMTokens", "ActualMTokens", None),
    ("PlanLine,ActualMTokens\n", "the usage file has no column Month", "Month", None),
    ("Month,ActualMTokens\n", "the usage file has no column PlanLine", "PlanLine", None),
    ("Month,PlanLine,ActualMTokens\n2026-05,gpu,1\n2026-06,gpu,-0.5\n", "expected a count of 0 or more, below 1E+15, got '-0.5'",
     "ActualMTokens", 3),
    ("Month,PlanLine,ActualMTokens\n2026-05,gpu,lots\n", "expected a number, got 'lots'", "ActualMTokens", 2),
    ("Month,PlanLine,ActualMTokens\n2026-05,gpu,1\n,gpu,1\n", "month must be 'YYYY-MM', got ''", "Month", 3),
    ("Month,PlanLine,ActualMTokens\n2026-05,gpu\n", "expected a number, got ''", "ActualMTokens", 2),
])
def test_a_bad_usage_csv_names_file_row_and_column(tmp_path, text, message, column, row):
    path = tmp_path / "usage.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        usage_from_csv(path)
    assert caught.value.where == Location(file=str(path), row=row, column=column)
    if message is not None:
        assert caught.value.message == message
    if column == "ActualMTokens" and row is not None and "0 or more" in (message or ""):
        assert caught.value.hint == "millions of tokens served by the plan line in the month"
    if row is None:
        assert caught.value.hint == "columns: Month, PlanLine, ActualMTokens"


def test_an_unreadable_usage_file(tmp_path):
    missing = tmp_path / "none.csv"
    with pytest.raises(InputError) as caught:
        usage_from_csv(missing)
    assert caught.value.message == "cannot read the usage file: No such file or directory"
    assert caught.value.where == Location(file=str(missing))
    assert caught.value.hint == "give a CSV file with the columns Month, PlanLine, ActualMTokens"
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Month,PlanLine,ActualMTokens\n2026-05,caf\xe9,1\n".encode("latin-1"))
    with pytest.raises(InputError) as caught:
        usage_from_csv(latin)
    assert caught.value.message == "cannot read the usage file: it is not a UTF-8 CSV file"


def test_a_blank_plan_line_and_a_quoted_line_break_are_kept_as_written(tmp_path):
    path = tmp_path / "usage.csv"
    path.write_bytes(b'Month,ActualMTokens,PlanLine\r\n2026-05,1,\r\n2026-05,2,"gpu\r\nbatch"\r\n2026-05,3\r\n')
    assert [(u.plan_line, u.actual_mtokens) for u in usage_from_csv(path)] == [
        ("", Decimal(1)), ("gpu\r\nbatch", Decimal(2)), ("", Decimal(3))]
