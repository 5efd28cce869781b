"""Values FOCUS refuses, found by the reconcile scan itself (``aggregation.BAD_VALUES``, ``bad_values_sql``) while
the view reads them as they are (``open_bills(strict=False)``): an empty BilledCost or EffectiveCost, and Tags that
are not a JSON object, on a mapped charge (counted per charge) or an unmapped one (checked once per group, on its
key). Each is named by file, row and column as before; a charge of another month is not checked, as before.
Expected counts are worked here from the rows written."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import pytest

from finops.errors import InputError
from finops.money import Money
from finops.reconcile import engine
from finops.reconcile.aggregation import BAD_VALUES, bad_values_sql, charge_groups_sql
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.engine import reconcile_month
from finops.reconcile.plan import BudgetLine, MappingRule, Plan

from .conftest import write_bill

MONTH = "2026-05"
#: EC2 maps, every other service stays unmapped
PLAN = Plan(budget=(BudgetLine(MONTH, "gpu", "cc", "OPEX", "AWS", Money.of(100, "USD")),),
            mapping=(MappingRule(1, "gpu", service_name="AmazonEC2"),))
APRIL = {"ChargePeriodStart": "2026-04-03T00:00:00Z", "ChargePeriodEnd": "2026-04-03T01:00:00Z"}
UNMAPPED = {"ServiceName": "AmazonS3"}


def groups(tmp_path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The strict scan's groups of a CSV bill of ``rows``, over the view that reads values as they are."""
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "b.csv", rows)], strict=False)
    cursor = con.execute(charge_groups_sql(VIEW, MONTH, PLAN.mapping, strict=True))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def test_the_scan_counts_empty_costs_and_mapped_tags_that_are_not_objects(tmp_path):
    rows = [{}, {"BilledCost": ""}, {"EffectiveCost": ""}, {"EffectiveCost": ""}, {"Tags": "[1, 2]"},
            {"Tags": '"text"'}, {"Tags": ""}, {"Tags": "{}"},
            {**UNMAPPED, "BilledCost": ""}, {**UNMAPPED, "Tags": "[3]"}, {**APRIL, "BilledCost": ""}]
    found = groups(tmp_path, rows)
    mapped = [g for g in found if g["plan_line"] == "gpu"]
    unmapped = [g for g in found if g["plan_line"] is None]
    # rows 1-8 map: one group (Tags are no key of a mapped group); the April row is no charge of May
    assert [(g["row_count"], g["empty_billed_cost"], g["empty_effective_cost"], g["mapped_bad_tags"],
             g["bad_charge_class"]) for g in mapped] == [(8, 1, 2, 2, 0)]
    # unmapped: one group per Tags; their Tags are checked on the key, not counted
    assert sorted((g["tags"], g["empty_billed_cost"], g["empty_effective_cost"], g["mapped_bad_tags"])
                  for g in unmapped) == [("[3]", 0, 0, 0), ('{"team":"ml"}', 1, 0, 0)]
    assert list(BAD_VALUES) == ["empty_billed_cost", "empty_effective_cost", "mapped_bad_tags", "bad_charge_class"]


@pytest.mark.parametrize("rows, bad", [
    ([{}, {**UNMAPPED}], 0),
    ([{}, {"BilledCost": ""}], 1),
    ([{}, {"EffectiveCost": ""}], 1),
    ([{"Tags": "[1]"}, {**UNMAPPED}], 1),
    ([{}, {**UNMAPPED, "Tags": "[1]"}, {**UNMAPPED, "Tags": "true"}], 2),  # two unmapped groups, by their Tags
    ([{**UNMAPPED, "Tags": ""}, {**UNMAPPED, "Tags": '{"a": 1}'}], 0),  # empty Tags are none
])
def test_bad_values_count_the_groups_that_hold_one(tmp_path, rows, bad):
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "b.csv", rows)], strict=False)
    con.execute("CREATE TABLE g AS " + charge_groups_sql(VIEW, MONTH, PLAN.mapping, strict=True))
    assert con.execute(bad_values_sql("g")).fetchone()[0] == bad


def test_without_strict_the_scan_has_no_counts():
    assert "empty_billed_cost" not in charge_groups_sql(VIEW, MONTH, PLAN.mapping)


def test_a_view_that_is_not_strict_reads_the_values_as_they_are(tmp_path):
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "b.csv", [{}, {"BilledCost": "", "Tags": "[1, 2]"}])], strict=False)
    assert con.execute(f"SELECT COUNT(BilledCost), SUM(BilledCost), MIN(Tags) FROM {VIEW}").fetchone() == (
        1, Decimal(10), "[1, 2]")


@pytest.mark.parametrize("change, column", [
    ({"BilledCost": ""}, "BilledCost"), ({"EffectiveCost": ""}, "EffectiveCost"),
    ({**UNMAPPED, "BilledCost": ""}, "BilledCost"), ({"Tags": "[1, 2]"}, "Tags"),
    ({**UNMAPPED, "Tags": "[1, 2]"}, "Tags"), ({"Tags": "not json"}, "Tags"), ({**UNMAPPED, "Tags": "{"}, "Tags"),
])
def test_a_refused_value_of_the_month_is_named_by_row_and_column(tmp_path, change, column):
    bill = write_bill(tmp_path / "b.csv", [{}, {}, {**UNMAPPED}, change])
    with pytest.raises(InputError) as err:
        reconcile_month(PLAN, [bill], MONTH)
    assert (err.value.where.file, err.value.where.row, err.value.where.column) == (str(bill), 5, column)


def test_a_refused_value_of_another_month_is_not_read(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{}, {**APRIL, "BilledCost": ""}, {**APRIL, **UNMAPPED, "Tags": "[1]"}])
    rec = reconcile_month(PLAN, [bill], MONTH)
    assert (str(rec.billed_cost), rec.bill_rows) == ("10.00 USD", 1)


def test_a_counted_bad_value_no_row_shows(tmp_path, monkeypatch):
    """The scan counted a bad value but the rows, read again, show none (the file changed meanwhile)."""
    bill = write_bill(tmp_path / "b.csv", [{}, {"BilledCost": ""}])
    monkeypatch.setattr(engine, "locate_bad_value", lambda files: None)
    with pytest.raises(InputError, match=r": cannot read the bills: a charge of the month holds an empty cost or "
                                         r"Tags that are not a JSON object\. Hint: check that every file") as err:
        reconcile_month(PLAN, [bill], MONTH)
    assert err.value.where.file == str(bill)
