"""`finops reconcile --engine bigquery|athena` end to end, through the real cloud clients and wire protocols.

BigQuery: a local server speaking the BigQuery v2 REST API runs the SQL it receives (transpiled back
from BigQuery to DuckDB) over the bundled sample bills, so the generated BigQuery SQL is shown to give
the local answer through ``google-cloud-bigquery``. Athena: moto serves the Athena API; its result
set is configured (moto's ``/moto-api/static/athena/query-results``) to what DuckDB computes for the
SQL the engine is sent, encoded as Athena encodes results (text values, typed ``ColumnInfo``, a label row).
"""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime
from decimal import Decimal

import boto3
import duckdb
import openpyxl
import pytest

from finops.cli import main
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.dialects import remote_checks_sql, remote_sql
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.plan_reader import read_plan

from ..aws.conftest import aws_env, moto, moto_url  # noqa: F401  (the AWS tests' moto server fixtures)
from .bigquery_jobs_server import BigQueryJobsServer, run_on_duckdb
from .conftest import write_plan

BQ_TABLE = "finops-demo.billing.focus_v1"
ATHENA_TABLE = "focus_db.focus_1_2"


@pytest.fixture(scope="module")
def bills() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    open_bills(con, sample_bill_paths())
    return con


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    return write_plan(tmp_path_factory.mktemp("plan") / "plan.xlsx",
                      budget=[(SAMPLE_MONTH, "aws-compute", "cc-1", "OPEX", "AWS", 5000, "USD", None),
                              (SAMPLE_MONTH, "gcp-compute", "cc-1", "OPEX", "Google Cloud", 5000, "USD", None),
                              (SAMPLE_MONTH, "aws-other", "cc-2", "OPEX", "AWS", 2000, "USD", None)],
                      mapping=[(1, "aws-compute", "AWS", "", "AmazonEC2", "", "", "", ""),
                               (2, "gcp-compute", "", "", "Compute Engine", "", "", "", ""),
                               (3, "aws-other", "AWS", "", "Amazon*", "", "", "", "")])


def reconcile(capsys, plan, out, *args):
    code = main(["reconcile", "--plan", str(plan), "--month", SAMPLE_MONTH, "--out", str(out), "--json", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def local_run(plan, tmp_path_factory):
    """The local DuckDB run over the same sample bills: (reconciliation, review path)."""
    from finops.cli.reconcile import reconcile_to_workbook

    return reconcile_to_workbook(plan, sample_bill_paths(), SAMPLE_MONTH, tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def local_totals(local_run):
    """The totals of the local DuckDB run over the same sample bills."""
    return local_run[0].totals()


def commitment_tables(review) -> dict[str, list[list]]:
    """The Commitments sheet's two tables (totals, one row per commitment) as written in the review."""
    ws = openpyxl.load_workbook(review, data_only=True)["Commitments"]
    return {name: [[c.value for c in row] for row in ws[ws.tables[name].ref]]
            for name in ("tblCommitments", "tblCommitmentSchedule")}


def totals(out: str) -> dict:
    """The --json totals, money read as exact decimals (to the cent, as printed)."""
    return json.loads(out, parse_float=Decimal)


# ---- BigQuery -------------------------------------------------------------------------------------------
@pytest.fixture
def bigquery_env(monkeypatch):
    monkeypatch.setenv("FINOPS_GCP_RETRY_TIMEOUT", "1")
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    return monkeypatch


@pytest.fixture
def on_bigquery(bills, plan, capsys, bigquery_env):
    """``run(out, engine="bigquery", **server_options) -> (server, exit code, stdout, stderr)``: the
    command against a local BigQuery server holding the sample bills as ``BQ_TABLE``."""
    def run(out, engine="bigquery", **options):
        server = BigQueryJobsServer(bills, {BQ_TABLE: VIEW}, page_rows=100, **options)
        with server as endpoint:
            bigquery_env.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", endpoint)
            result = reconcile(capsys, plan, out, "--engine", engine, "--table", BQ_TABLE, "--project", "finops-jobs")
        return (server, *result)

    return run


def page_tokens(server: BigQueryJobsServer) -> list[str]:
    return [params["pageToken"] for _, _, params, _ in server.requests if "pageToken" in params]


def pages_after_the_first(bills, plan) -> list[str]:
    """The page tokens of every page after the first of the summary rows (100 a page), counted by DuckDB."""
    sql = remote_sql("bigquery", BQ_TABLE, SAMPLE_MONTH, rules=read_plan(plan).mapping)
    rows = len(run_on_duckdb(bills, sql, "bigquery", {BQ_TABLE: VIEW})[1])
    assert rows > 300  # one group per commitment too: several pages
    return [str(start) for start in range(100, rows, 100)]


def test_bigquery_engine_gives_the_local_totals_through_the_real_client(on_bigquery, local_totals, local_run, bills,
                                                                       plan, tmp_path):
    server, code, out, err = on_bigquery(tmp_path)
    assert (code, err) == (0, "")
    assert totals(out) == local_totals
    # the checks of the month's charges (none refused), then the aggregation
    assert server.queries == [remote_checks_sql("bigquery", BQ_TABLE, SAMPLE_MONTH),
                              remote_sql("bigquery", BQ_TABLE, SAMPLE_MONTH, rules=read_plan(plan).mapping)]
    method, path, _, _ = server.requests[0]
    assert (method, path) == ("POST", "/bigquery/v2/projects/finops-jobs/queries")  # jobs.query, in the job project
    assert page_tokens(server) == pages_after_the_first(bills, plan)  # every page of the summary, by getQueryResults
    # the commitments come from the same summary rows: the review shows the local run's, every commitment
    remote, local = commitment_tables(tmp_path / f"budget-review-{SAMPLE_MONTH}.xlsx"), commitment_tables(local_run[1])
    assert remote == local and len(local["tblCommitmentSchedule"]) == 1 + 180  # 93 AWS, 87 Google Cloud ids


def test_a_job_still_running_is_waited_for(on_bigquery, local_totals, tmp_path):
    server, code, out, _ = on_bigquery(tmp_path, running_polls=3)
    assert code == 0 and totals(out) == local_totals
    assert server.running_polls == 0  # jobs.query and the client's first two status requests saw it running
    polls = [params for _, path, params, _ in server.requests if "/queries/" in path and "pageToken" not in params]
    assert len(polls) >= 2  # the client polled jobs.getQueryResults until jobComplete


def test_a_job_past_the_wait_timeout_is_cancelled_and_exits_2(on_bigquery, tmp_path, bigquery_env):
    bigquery_env.setenv("FINOPS_GCP_QUERY_TIMEOUT", "0.5")
    server, code, out, err = on_bigquery(tmp_path / "reviews", running_polls=1_000_000)
    assert code == 2 and out == ""
    assert "BigQuery job was still running after 0.5 s; cancelled it" in err
    assert server.cancelled == list(server.jobs)  # jobs.cancel for the one job
    assert not (tmp_path / "reviews").exists()


def test_a_server_error_mid_pagination_is_retried(on_bigquery, local_totals, bills, plan, tmp_path):
    server, code, out, _ = on_bigquery(tmp_path, engine="bq", fail_pages=2)
    assert code == 0 and totals(out) == local_totals
    # two 503s on the first page after the first, then success
    assert page_tokens(server) == ["100", "100", *pages_after_the_first(bills, plan)]


def test_a_persistent_failure_exits_2_with_a_clear_message_and_writes_nothing(on_bigquery, tmp_path):
    out_dir = tmp_path / "reviews"
    started = datetime.now()
    _, code, out, err = on_bigquery(out_dir, fail_pages=10_000)
    assert (datetime.now() - started).total_seconds() < 10  # FINOPS_GCP_RETRY_TIMEOUT bounds the retries
    assert code == 2 and out == ""
    assert "BigQuery kept failing while running the FOCUS aggregation" in err and "Traceback" not in err
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_bigquery_values_come_back_typed(bills, bigquery_env):
    from connectors.gcp import run_query

    sql = ("SELECT CAST('1.25' AS NUMERIC) AS n, CAST('2.5' AS BIGNUMERIC) AS b, CAST(NULL AS NUMERIC) AS z, "
           "TIMESTAMP '2026-05-31 19:00:00-04:00' AS t, TRUE AS f, 3 AS i, 'x' AS s")
    server = BigQueryJobsServer(bills, {})
    with server as endpoint:
        bigquery_env.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", endpoint)
        (row,) = run_query(sql, project="finops-jobs")
    assert [f["type"] for f in server.jobs[next(iter(server.jobs))][0]][:2] == ["NUMERIC", "BIGNUMERIC"]
    assert row == (Decimal("1.25"), Decimal("2.5"), None, datetime(2026, 5, 31, 23), True, 3, "x")
    assert [type(v) for v in row] == [Decimal, Decimal, type(None), datetime, bool, int, str]


# ---- Athena ---------------------------------------------------------------------------------------------
#: DuckDB result type -> Athena ColumnInfo (type, precision, scale) and the text Athena writes for a value.
def athena_column(name: str, duckdb_type: str) -> dict:
    kind = duckdb_type.upper()
    precision, scale, athena = 0, 0, {"VARCHAR": "varchar", "BOOLEAN": "boolean", "BIGINT": "bigint",
                                      "TIMESTAMP": "timestamp", "DOUBLE": "double"}.get(kind)
    if kind.startswith("DECIMAL"):
        athena = "decimal"
        precision, scale = (int(x) for x in kind[kind.index("(") + 1:-1].split(","))
    return {"CatalogName": "hive", "SchemaName": "", "TableName": "", "Name": name, "Label": name, "Type": athena,
            "Precision": precision, "Scale": scale, "Nullable": "UNKNOWN", "CaseSensitive": athena == "varchar"}


def athena_text(value) -> dict:
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"VarCharValue": str(value).lower()}
    if isinstance(value, datetime):
        return {"VarCharValue": value.isoformat(sep=" ", timespec="milliseconds")}
    return {"VarCharValue": str(value)}


@pytest.fixture
def athena(request, monkeypatch):
    """The AWS tests' moto server (fake credentials, us-east-1, state reset), no Athena settings in the environment."""
    endpoint = request.getfixturevalue("moto")
    for name in ("FINOPS_ATHENA_DATABASE", "FINOPS_ATHENA_WORKGROUP", "FINOPS_ATHENA_OUTPUT_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    return endpoint


def queue_athena_result(endpoint: str, columns: list[tuple[str, str]], rows: list[tuple]) -> None:
    info = [athena_column(name, kind) for name, kind in columns]
    label_row = {"Data": [{"VarCharValue": name} for name, _ in columns]}
    body = {"region": "us-east-1",
            "results": [{"column_info": info,
                         "rows": [label_row] + [{"Data": [athena_text(v) for v in row]} for row in rows]}]}
    request = urllib.request.Request(f"{endpoint}/moto-api/static/athena/query-results", method="POST",
                                     data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 201


def queue_athena_results(endpoint: str, bills, table: str, *sqls: str) -> None:
    """DuckDB's answer to each of ``sqls`` (Athena's dialect over ``table``), queued for the queries in that order."""
    for sql in sqls:
        queue_athena_result(endpoint, *run_on_duckdb(bills, sql, "athena", {table: VIEW}))


def athena_execution(sql: str) -> dict:
    """The one query execution moto holds for ``sql``."""
    client = boto3.client("athena", region_name="us-east-1")
    executions = [client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]
                  for query_id in client.list_query_executions()["QueryExecutionIds"]]
    (execution,) = [e for e in executions if e["Query"] == sql]
    return execution


def test_athena_engine_gives_the_local_totals_through_boto3(bills, plan, local_totals, local_run, athena, tmp_path,
                                                           capsys):
    client = boto3.client("athena", region_name="us-east-1")
    client.create_work_group(Name="finops", Configuration={})
    sql = remote_sql("athena", ATHENA_TABLE, SAMPLE_MONTH, rules=read_plan(plan).mapping)
    checks = remote_checks_sql("athena", ATHENA_TABLE, SAMPLE_MONTH, also=["AllocatedTags"])
    queue_athena_results(athena, bills, ATHENA_TABLE, checks, sql)
    code, out, err = reconcile(capsys, plan, tmp_path, "--engine", "athena", "--table", ATHENA_TABLE,
                               "--workgroup", "finops", "--output-location", "s3://finops-athena/results/")
    assert (code, err) == (0, "")
    assert totals(out) == local_totals
    execution = athena_execution(sql)  # the results served are DuckDB's answer to exactly the SQL sent
    athena_execution(checks)
    assert execution["ResultConfiguration"]["OutputLocation"].startswith("s3://finops-athena/results/")
    # commitments read from Athena's text values: the same rows as the local run
    assert commitment_tables(tmp_path / f"budget-review-{SAMPLE_MONTH}.xlsx") == commitment_tables(local_run[1])


def test_athena_settings_come_from_the_environment(bills, plan, athena, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FINOPS_ATHENA_DATABASE", "focus_db")
    monkeypatch.setenv("FINOPS_ATHENA_OUTPUT_LOCATION", "s3://from-env/athena/")
    sql = remote_sql("athena", "focus_1_2", SAMPLE_MONTH, rules=read_plan(plan).mapping)
    queue_athena_results(athena, bills, "focus_1_2",
                         remote_checks_sql("athena", "focus_1_2", SAMPLE_MONTH, also=["AllocatedTags"]), sql)
    code, _, _ = reconcile(capsys, plan, tmp_path, "--engine", "athena", "--table", "focus_1_2")
    assert code == 0
    execution = athena_execution(sql)
    assert execution["QueryExecutionContext"] == {"Database": "focus_db"}
    assert execution["ResultConfiguration"]["OutputLocation"].startswith("s3://from-env/athena/")


@pytest.mark.parametrize("engine, option, message", [
    ("athena", ("--project", "p"), "--project is for --engine bigquery, not athena"),
    ("bigquery", ("--workgroup", "w"), "--workgroup is for --engine athena, not bigquery"),
    ("bigquery", ("--output-location", "s3://b/"), "--output-location is for --engine athena"),
    ("duckdb", ("--database", "cur"), "--database is for --engine bigquery or athena"),
])
def test_an_option_of_the_other_engine_is_refused(plan, tmp_path, capsys, engine, option, message):
    code, _, err = reconcile(capsys, plan, tmp_path / "o", "--engine", engine, "--table", "d.t", *option)
    assert code == 2 and message in err
    assert not (tmp_path / "o").exists()


def test_a_remote_month_forecasts_like_a_local_one_with_past_one_offs_left_out_of_the_run_rate(bills, plan):
    """Earlier months' one-off purchases (from the history) leave the run rate on BigQuery as they do locally:
    the remote and the local forecast are the same, and differ from one that counts the purchase as running cost."""
    from finops.reconcile import reconcile_month
    from finops.reconcile.dialects import reconcile_remote

    the_plan = read_plan(plan)
    past = {"2026-03": Decimal("60000"), "2026-04": Decimal("61000")}
    one_off = {"2026-03": Decimal("0"), "2026-04": Decimal("40000")}  # April bought a commitment up front

    def on_duckdb(sql: str) -> list[tuple]:
        return run_on_duckdb(bills, sql, "bigquery", {BQ_TABLE: VIEW})[1]

    def remote(past_one_off):
        return reconcile_remote(the_plan, on_duckdb, "bigquery", BQ_TABLE, SAMPLE_MONTH, past_actuals=past,
                                past_one_off=past_one_off).forecast

    local = reconcile_month(the_plan, sample_bill_paths(), SAMPLE_MONTH, past_actuals=past,
                            past_one_off=one_off).forecast
    assert remote(one_off) == local
    # the purchase counted as running cost raises the 3-month run rate by a third of it
    assert (remote({}).run_rate - local.run_rate).amount.quantize(Decimal("0.01")) == Decimal("13333.33")
