"""Remote engines (finops/reconcile/dialects.py): the options a remote reconciliation takes reach the
figures exactly as for local bills, and what goes wrong says so. The local reconciliation of the same
sample bills is the expected answer (DuckDB runs the engine's SQL transpiled back)."""
from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from finops.errors import InputError
from finops.money import Money
from finops.reconcile import BudgetLine
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.dialects import canonical_engine, reconcile_remote, remote_sql
from finops.reconcile.engine import reconcile_month
from finops.reconcile.plan import MappingRule, Plan
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

from .bigquery_jobs_server import duckdb_sql

PLAN = Plan(budget=(BudgetLine(SAMPLE_MONTH, "compute", "cc", "OPEX", "", Money.of(1000, "USD")),
                    BudgetLine("2026-06", "compute", "cc", "OPEX", "", Money.of(1000, "USD"))),
            mapping=(MappingRule(1, "compute", service_name="Compute Engine"),
                     MappingRule(2, "compute", service_name="AmazonEC2")))


def runner_on(con, dialect):
    return lambda sql: con.execute(duckdb_sql(sql, dialect)).fetchall()


@pytest.mark.parametrize("name,engine", [("presto", "athena"), ("TRINO", "athena"), ("BQ", "bigquery"),
                                         ("duckdb", "duckdb"), ("Athena", "athena")])
def test_engine_names_and_aliases(name, engine):
    assert canonical_engine(name) == engine


def test_threshold_and_past_months_reach_the_figures(local):
    kwargs = dict(threshold_pct=Decimal(1), past_actuals={"2026-03": Decimal(900), "2026-04": Decimal(1100)},
                  past_one_off={"2026-04": Decimal(100)})
    remote = reconcile_remote(PLAN, runner_on(local, "bigquery"), "bigquery", VIEW, SAMPLE_MONTH, **kwargs)
    here = reconcile_month(PLAN, sample_bill_paths(), SAMPLE_MONTH, **kwargs)
    assert remote.threshold_pct == Decimal(1)
    assert remote.forecast == here.forecast
    assert remote.forecast.months_known == 3
    # the run rate is the mean of March, April less its one-off, and May
    may = here.actual - (here.one_off_cost or Money.zero("USD"))
    assert remote.forecast.run_rate == (Money.of(900, "USD") + Money.of(1000, "USD") + may) / 3
    assert [line.flag for line in remote.lines] == [line.flag for line in here.lines]


def test_a_rate_table_reaches_the_figures(local):
    rates = {"USD": Decimal("0.5")}
    plan = Plan(budget=(BudgetLine(SAMPLE_MONTH, "compute", "cc", "OPEX", "", Money.of(1000, "EUR")),),
                mapping=PLAN.mapping)
    remote = reconcile_remote(plan, runner_on(local, "athena"), "athena", VIEW, SAMPLE_MONTH, rates=rates)
    here = reconcile_month(plan, sample_bill_paths(), SAMPLE_MONTH, rates=rates)
    usd = reconcile_month(PLAN, sample_bill_paths(), SAMPLE_MONTH)
    assert remote.totals() == here.totals()
    assert remote.effective_cost.currency == "EUR"
    assert remote.effective_cost.amount == usd.effective_cost.amount * Decimal("0.5")


def test_no_rows_from_the_engine_is_an_error_naming_the_table():
    with pytest.raises(InputError) as caught:
        reconcile_remote(PLAN, lambda sql: [], "athena", "focus_db.focus_1_2", SAMPLE_MONTH)
    assert caught.value.message == "no charges in 2026-05 in focus_db.focus_1_2"
    assert caught.value.hint == "check the table and the month"


def test_a_table_name_the_engine_cannot_write_is_an_input_error():
    with pytest.raises(InputError) as caught:
        remote_sql("bigquery", "`proj.billing.focus", SAMPLE_MONTH)  # a backquote left open
    assert caught.value.message.startswith("cannot write the aggregation for bigquery: ")
    assert caught.value.hint == "check the table name (e.g. project.dataset.table)"


def test_missing_columns_are_named_in_any_case():
    sql = remote_sql("athena", "d.t", SAMPLE_MONTH, missing=["X_GPUHOURS", "x_gpumodel"])
    assert "x_GpuHours" not in sql and "x_GpuModel" not in sql
    assert "x_GpuHours" in remote_sql("athena", "d.t", SAMPLE_MONTH)


def test_only_bigquery_reads_the_month_bounds_as_instants():
    assert "TIMESTAMP" in remote_sql("bigquery", "p.d.t", SAMPLE_MONTH)
    for engine in ("athena", "duckdb"):
        sql = remote_sql(engine, "d.t", SAMPLE_MONTH)
        assert "TIMESTAMP WITH TIME ZONE" not in sql.upper() and "TIMESTAMPTZ" not in sql.upper()


def test_rates_rank_the_unmapped_groups_in_the_plan_currency(tmp_path):
    """200 unmapped USD groups of 10 USD and one of 1,000 JPY (6.70 USD at 0.0067): in the plan currency
    the yen group is the smallest, so it falls past the 200 listed one by one into the rest."""
    from .conftest import write_bill

    rows = [{"ServiceName": f"svc-{k:03d}", "BilledCost": "10", "EffectiveCost": "10"} for k in range(200)]
    rows.append({"ServiceName": "yen-service", "BilledCost": "1000", "EffectiveCost": "1000", "BillingCurrency": "JPY"})
    bill = write_bill(tmp_path / "may.csv", rows)
    con = duckdb.connect()
    open_bills(con, [bill])
    rates = {"JPY": Decimal("0.0067")}
    remote = reconcile_remote(PLAN, runner_on(con, "athena"), "athena", VIEW, SAMPLE_MONTH, rates=rates)
    here = reconcile_month(PLAN, [bill], SAMPLE_MONTH, rates=rates)
    listed = {u.service_name for u in remote.unmapped}
    assert "yen-service" not in listed and "svc-000" in listed
    assert remote.unmapped == here.unmapped
    assert remote.unmapped_effective_cost == Money.of("2006.70", "USD")  # 200 x 10 + 1,000 x 0.0067


def test_a_currency_without_a_rate_names_the_remote_table(tmp_path):
    from .conftest import write_bill

    bill = write_bill(tmp_path / "may.csv", [{"BillingCurrency": "JPY"}])
    con = duckdb.connect()
    open_bills(con, [bill])
    with pytest.raises(InputError) as caught:
        reconcile_remote(PLAN, runner_on(con, "athena"), "athena", VIEW, SAMPLE_MONTH)
    assert caught.value.where.file == f"athena:{VIEW}"


def test_an_instance_catalog_given_reaches_the_gpu_hours(local):
    def three_gpus(provider: str, instance_type: str):
        return ("test-gpu", 3)

    remote = reconcile_remote(PLAN, runner_on(local, "bigquery"), "bigquery", VIEW, SAMPLE_MONTH,
                              instance_gpus=three_gpus)
    here = reconcile_month(PLAN, sample_bill_paths(), SAMPLE_MONTH, instance_gpus=three_gpus)
    default = reconcile_month(PLAN, sample_bill_paths(), SAMPLE_MONTH)
    assert remote.gpu_hours == here.gpu_hours
    assert remote.gpu_hours != default.gpu_hours


def test_missing_columns_reach_the_sql_the_engine_runs(local):
    sent = []

    def recording(sql):
        sent.append(sql)
        return runner_on(local, "athena")(sql)

    reconcile_remote(PLAN, recording, "athena", VIEW, SAMPLE_MONTH, missing=["x_GpuHours", "ChargeClass"])
    closed_values, sql = sent  # the checks of the month's charges, then the aggregation
    assert "x_GpuHours" not in sql and "x_GpuModel" in sql
    assert "CAST(NULL AS VARCHAR) AS focus_value" in closed_values and "CAST(ChargeClass" not in closed_values
