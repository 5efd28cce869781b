"""The one aggregation, written for BigQuery and Athena: it parses there and gives DuckDB's answer."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot

from finops.money import Money
from finops.reconcile import BudgetLine
from finops.reconcile.aggregation import Summary
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.dialects import reconcile_remote, remote_sql
from finops.reconcile.engine import reconcile_month
from finops.reconcile.plan import MappingRule, Plan
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

from .bigquery_jobs_server import duckdb_sql
from .conftest import write_bill

PLAN = Plan(budget=(BudgetLine(SAMPLE_MONTH, "compute", "cc", "OPEX", "", Money.of(1000, "USD")),),
            mapping=(MappingRule(1, "compute", service_name="Compute Engine"),
                     MappingRule(2, "compute", service_name="AmazonEC2")))


def summary_of(rows):
    """The summary's parts, each in a fixed order (engines return rows in any order)."""
    summary = Summary.from_rows([tuple(r) for r in rows])
    return (sorted(summary.groups, key=repr), sorted(summary.unmapped, key=repr), sorted(summary.rest, key=repr),
            summary.rest_count)


def duckdb_answer(con, month=SAMPLE_MONTH, **kwargs):
    return summary_of(con.execute(remote_sql("duckdb", VIEW, month, **kwargs)).fetchall())


@pytest.mark.parametrize("engine, dialect", [("bigquery", "bigquery"), ("athena", "athena"), ("athena", "trino")])
def test_sql_parses_in_the_engine_dialect_and_gives_the_duckdb_answer(local, engine, dialect):
    sql = remote_sql(engine, VIEW, SAMPLE_MONTH, rules=PLAN.mapping)
    parsed = sqlglot.parse_one(sql, read=dialect)  # raises on a syntax error
    assert VIEW in {table.name for table in parsed.find_all(sqlglot.exp.Table)}
    back = sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
    expected = duckdb_answer(local, rules=PLAN.mapping)
    assert summary_of(local.execute(back).fetchall()) == expected
    assert len(expected[0]) > 20 and len(expected[1]) > 20


@pytest.mark.parametrize("engine, relation, parts", [
    ("bigquery", "my-project.billing.focus_v1", ("my-project", "billing", "focus_v1")),
    ("bigquery", "`my-project.billing.focus_v1`", ("my-project", "billing", "focus_v1")),
    ("athena", "cur.focus", ("", "cur", "focus")),
    ("athena", 'awsdatacatalog.cur."focus-2026"', ("awsdatacatalog", "cur", "focus-2026")),
])
def test_table_names_are_written_for_the_engine(engine, relation, parts):
    tables = sqlglot.parse_one(remote_sql(engine, relation, "2026-05"), read=engine).find_all(sqlglot.exp.Table)
    assert parts in {(table.catalog, table.db, table.name) for table in tables}


def test_missing_columns_read_as_null_and_the_answer_is_the_same(tmp_path, local):
    bill = write_bill(tmp_path / "may.csv", [{}, {"EffectiveCost": "2.5"}])
    con = duckdb.connect()
    open_bills(con, [bill])
    sql = remote_sql("athena", VIEW, "2026-05", missing=["x_GpuHours", "x_GpuModel", "x_InstanceType"])
    assert "x_GpuHours" not in sql
    back = sqlglot.transpile(sql, read="athena", write="duckdb")[0]
    assert summary_of(con.execute(back).fetchall()) == duckdb_answer(con, "2026-05")


def test_remote_reconciliation_equals_the_local_one(local):
    """A runner that executes the engine's SQL (transpiled back) on DuckDB stands in for the remote engine."""
    def athena_like(sql: str):
        rows = local.execute(sqlglot.transpile(sql, read="athena", write="duckdb")[0]).fetchall()
        # Athena's result API returns every value as text
        return [tuple(None if v is None else str(v).lower() if isinstance(v, bool) else str(v) for v in row)
                for row in rows]

    remote = reconcile_remote(PLAN, athena_like, "athena", VIEW, SAMPLE_MONTH)
    here = reconcile_month(PLAN, sample_bill_paths(), SAMPLE_MONTH)
    assert remote.totals() == here.totals()
    assert remote.lines == here.lines and remote.commitments == here.commitments
    assert remote.invoices == here.invoices


@pytest.mark.parametrize("column, value", [("ChargeCategory", "usage"), ("ChargeCategory", "Usgae"),
                                           ("PricingCategory", "On Demand"), ("ChargeFrequency", "Monthly"),
                                           ("ChargeClass", "Corection"), ("ChargeClass", "correction")])
def test_a_value_outside_focus_on_the_remote_engine_is_refused_naming_its_column(tmp_path, column, value):
    """A misspelt closed value would drop its charges from every total (the aggregation matches FOCUS's exact
    values): the remote engine checks the month's charges in one query before the aggregation, with the local
    scan's tests (finops/reconcile/bill_checks.py)."""
    from finops.errors import InputError

    bill = write_bill(tmp_path / "may.csv", [{}, {column: value}])
    con = duckdb.connect()
    open_bills(con, [bill], strict=False)

    def athena_like(sql: str):
        return con.execute(sqlglot.transpile(sql, read="athena", write="duckdb")[0]).fetchall()

    with pytest.raises(InputError) as refused:
        reconcile_remote(PLAN, athena_like, "athena", VIEW, "2026-05")
    message = str(refused.value)
    assert column in message and repr(value) in message and "athena:" in message
    assert (refused.value.where.file, refused.value.where.column) == (f"athena:{VIEW}", column)


def test_a_correction_on_the_remote_engine_is_summed_as_locally(tmp_path):
    """ChargeClass empty or Correction passes the remote check, and the totals are the local scan's."""
    bill = write_bill(tmp_path / "may.csv", [{}, {"ChargeClass": "Correction", "BilledCost": "-2.5",
                                                  "EffectiveCost": "-2.5"}])
    con = duckdb.connect()
    open_bills(con, [bill])
    sent = []

    def athena_like(sql: str):
        sent.append(sql)
        return con.execute(sqlglot.transpile(sql, read="athena", write="duckdb")[0]).fetchall()

    remote = reconcile_remote(PLAN, athena_like, "athena", VIEW, "2026-05")
    assert remote.totals() == reconcile_month(PLAN, [bill], "2026-05").totals()
    assert len(sent) == 2 and "focus_value" in sent[0]  # the checks, then the aggregation


def test_bigquery_compares_timestamps_with_utc_instants():
    """BigQuery's FOCUS columns are TIMESTAMP (instants): a DATETIME bound would not compare with them. The
    invoice month's bounds are May 1st and June 1st 00:00 at UTC+14:00, the earliest zone a billing period is
    written in (2026-04-30 and 2026-05-31 10:00 UTC)."""
    sql = remote_sql("bigquery", "p.d.t", "2026-05")
    assert "CAST('2026-04-30 10:00:00' AS TIMESTAMP)" in sql and "DATETIME" not in sql
    assert "CAST('2026-05-31 10:00:00' AS TIMESTAMP)" in remote_sql("athena", "d.t", "2026-05")


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
def test_allocated_tags_are_laid_over_tags_on_the_remote_engine_as_locally(tmp_path, engine):
    """A FOCUS 1.3 table as the engine holds it (Tags and AllocatedTags apart): Athena merges them as the local scan
    does; BigQuery, which cannot merge JSON objects, reads Tags as they are."""
    from finops.focus import duckdb_schema

    from .test_focus_1_3_1_4 import V13, _plan

    origin = {"ServiceProviderName": "AWS", "HostProviderName": "AWS", "ServiceName": "AmazonEKS",
              "Tags": '{"cluster":"shared","team":"shared"}'}
    rows = [{**origin, "AllocatedTags": '{"team":"a"}', "BilledCost": "61.235", "EffectiveCost": "61.235"},
            {**origin, "AllocatedTags": '{"team":"b"}', "BilledCost": "28.765", "EffectiveCost": "28.765"},
            {**origin, "Tags": '{"team":"b"}', "BilledCost": "3.10", "EffectiveCost": "3.10"}]
    bill = write_bill(tmp_path / "focus-1.3.csv", rows, columns=V13)
    con = duckdb.connect()
    header = bill.read_text().splitlines()[0].split(",")
    types = ", ".join(f"'{c}': '{duckdb_schema()[c]}'" for c in header if c in duckdb_schema())
    con.execute(f"CREATE TABLE raw AS SELECT * FROM read_csv('{bill}', header = true, types = {{{types}}})")
    present = {r[0] for r in con.execute("DESCRIBE raw").fetchall()}
    missing = [c for c in duckdb_schema() if c not in present]

    def runner(sql: str):
        return con.execute(duckdb_sql(sql, engine)).fetchall()

    remote = reconcile_remote(_plan(), runner, engine, "raw", "2026-05", missing=missing)
    lines = {line.plan_line: line.actual for line in remote.lines}
    if engine == "athena":
        here = reconcile_month(_plan(), [bill], "2026-05")
        assert remote.totals() == here.totals() and remote.lines == here.lines
        assert (lines["team-a"], lines["team-b"]) == (Money.of("61.235", "USD"), Money.of("31.865", "USD"))
    else:  # the shared cost's own tag: the allocated shares stay unmapped
        assert lines["team-a"] == Money.zero("USD") and lines["team-b"] == Money.of("3.10", "USD")


#: (the second charge's values, the column refused, what the message says) -> a value the local scan refuses with its
#: row, and a remote engine refused the same way, naming the charge (no rows there): before the aggregation, which
#: would sum an empty cost as 0 and leave Tags that are not a JSON object unmapped.
REFUSED_ON_BOTH = {
    "empty BilledCost": ({"BilledCost": ""}, "BilledCost", "is empty"),
    "empty EffectiveCost": ({"EffectiveCost": ""}, "EffectiveCost", "is empty"),
    "Tags not JSON": ({"Tags": "team=ml"}, "Tags", "'team=ml'"),
    "Tags a JSON array": ({"Tags": '["team", "ml"]'}, "Tags", "not a JSON object"),
    "Tags a JSON string": ({"Tags": '"ml"'}, "Tags", "not a JSON object"),
    "Tags JSON null": ({"Tags": "null"}, "Tags", "not a JSON object"),
    "a token charge counted in requests": ({"SkuMeter": "USE1-Llama3-3-70B-input-tokens", "ConsumedUnit": "Requests",
                                            "ConsumedQuantity": "1000"}, "ConsumedUnit", "'Requests'"),
}


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
@pytest.mark.parametrize("case", sorted(REFUSED_ON_BOTH))
def test_a_value_the_local_scan_refuses_is_refused_on_the_remote_engine(tmp_path, engine, case):
    from finops.errors import InputError

    values, column, said = REFUSED_ON_BOTH[case]
    bill = write_bill(tmp_path / "may.csv", [{"InvoiceId": "I0"}, {"InvoiceId": "I1", **values}])
    with pytest.raises(InputError) as local:
        reconcile_month(PLAN, [bill], "2026-05")
    assert (local.value.where.row, local.value.where.column) == (3, column) and said in local.value.message
    con = duckdb.connect()
    open_bills(con, [bill], strict=False)  # the engine's table, its values as they are
    with pytest.raises(InputError) as refused:
        reconcile_remote(PLAN, lambda sql: con.execute(duckdb_sql(sql, engine)).fetchall(), engine, VIEW, "2026-05")
    assert (refused.value.where.file, refused.value.where.column) == (f"{engine}:{VIEW}", column)
    assert said in refused.value.message
    if column != "ConsumedUnit":  # a value is named with its charge (the unit: with the groups the engine returns)
        assert ("InvoiceId 'I1', SubAccountId '222', ServiceName 'AmazonEC2', ChargePeriodStart '2026-05-03 00:00:00"
                in refused.value.message)


def test_the_first_few_offenders_of_each_check_come_back_in_one_query(tmp_path):
    """Four charges with an empty BilledCost and one with Tags that are not JSON: one query returns the first three
    of the costs and the Tags, and the message names the first check's charge and says there are more."""
    from finops.errors import InputError
    from finops.reconcile.dialects import remote_checks_sql

    rows = [{"InvoiceId": f"I{i}", "BilledCost": ""} for i in range(4)] + [{"InvoiceId": "I9", "Tags": "x"}]
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "may.csv", rows)], strict=False)
    sent = []

    def athena_like(sql: str):
        sent.append(sql)
        return con.execute(duckdb_sql(sql, "athena")).fetchall()

    returned = athena_like(remote_checks_sql("athena", VIEW, "2026-05"))
    assert sorted(row[0] for row in returned) == ["BilledCost"] * 3 + ["Tags"]
    with pytest.raises(InputError, match=r"BilledCost is empty.* on the charge InvoiceId 'I\d'.*\(and 2 more such "
                                         r"charges at least\)"):
        reconcile_remote(PLAN, athena_like, "athena", VIEW, "2026-05")
    assert len(sent) == 2  # the one above, and the reconcile's: refused before the aggregation


def test_allocated_tags_that_are_not_an_object_are_refused_where_the_engine_lays_them_over_tags(tmp_path):
    """Athena merges AllocatedTags into Tags as the local scan does, so it refuses them as the local scan does;
    BigQuery reads no AllocatedTags (a 1.2 table there needs no --table-lacks AllocatedTags)."""
    from finops.errors import InputError
    from finops.focus import duckdb_schema
    from finops.reconcile.dialects import remote_checks_sql

    from .test_focus_1_3_1_4 import V13, _plan

    rows = [{"ServiceProviderName": "AWS", "HostProviderName": "AWS", "InvoiceId": "I1", "AllocatedTags": "team=a"}]
    bill = write_bill(tmp_path / "focus-1.3.csv", rows, columns=V13)
    with pytest.raises(InputError) as local:
        reconcile_month(_plan(), [bill], "2026-05")
    assert local.value.where.column == "AllocatedTags"
    con = duckdb.connect()
    types = ", ".join(f"'{c}': '{duckdb_schema()[c]}'" for c in V13 if c in duckdb_schema())
    con.execute(f"CREATE TABLE raw AS SELECT * FROM read_csv('{bill}', header = true, types = {{{types}}})")
    missing = [c for c in duckdb_schema() if c not in V13]
    with pytest.raises(InputError, match="AllocatedTags is not a JSON object.*'team=a'") as refused:
        reconcile_remote(_plan(), lambda sql: con.execute(duckdb_sql(sql, "athena")).fetchall(), "athena", "raw",
                         "2026-05", missing=missing)
    assert refused.value.where.column == "AllocatedTags"
    assert "AllocatedTags" not in remote_checks_sql("bigquery", "p.d.t", "2026-05")


def test_the_docs_list_every_check_both_engines_run():
    """docs/reconcile.md's table of the checks names each column of the one list (a check added there is documented)."""
    from pathlib import Path

    from finops.reconcile.bill_checks import CHECKS

    text = (Path(__file__).parents[2] / "docs" / "reconcile.md").read_text()
    section = text.split("### The checks of each charge, on every engine")[1].split("\n## ")[0]
    table = [line for line in section.splitlines() if line.startswith("| ")]
    assert [check.column for check in CHECKS if not any(check.column in row for row in table)] == []
