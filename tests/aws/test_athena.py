"""Athena's query client: typed results, pagination, failed and overrunning queries (botocore Stubber)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber

from connectors.aws.athena import run_query, typed
from finops.errors import ProviderError, TransientProviderError


class StubbedSession:
    """An :class:`~connectors.aws.session.AwsSession` stand-in whose Athena client is botocore-stubbed."""

    def __init__(self) -> None:
        self.athena = boto3.session.Session(region_name="us-east-1").client("athena")
        self.stub = Stubber(self.athena)

    def client(self, service: str, region: str | None = None):
        assert service == "athena"
        return self.athena


@pytest.fixture
def session(aws_env):
    stubbed = StubbedSession()
    with stubbed.stub:
        yield stubbed
    stubbed.stub.assert_no_pending_responses()


def column(name: str, kind: str) -> dict:
    return {"Name": name, "Label": name, "Type": kind}


def datum(text: str | None) -> dict:
    return {} if text is None else {"VarCharValue": text}


def expect_start(session: StubbedSession, **request) -> None:
    session.stub.add_response("start_query_execution", {"QueryExecutionId": "q-1"}, request)


def expect_state(session: StubbedSession, state: str, **status) -> None:
    session.stub.add_response("get_query_execution", {"QueryExecution": {
        "QueryExecutionId": "q-1", "Status": {"State": state, **status}}}, {"QueryExecutionId": "q-1"})


@pytest.mark.parametrize("text, kind, expected", [
    ("1234.5678", "decimal", Decimal("1234.5678")),
    ("0E-10", "decimal", Decimal(0)),
    ("7", "bigint", 7),
    ("7", "integer", 7),
    ("2.5", "double", 2.5),
    ("false", "boolean", False),
    ("TRUE", "boolean", True),
    ("2026-05-01", "date", date(2026, 5, 1)),
    ("2026-05-31 23:00:00.000", "timestamp", datetime(2026, 5, 31, 23)),
    ("2026-05-31 23:00:00.123456", "timestamp(6)", datetime(2026, 5, 31, 23, 0, 0, 123456)),
    ("2026-05-31 23:00:00.000 UTC", "timestamp with time zone", datetime(2026, 5, 31, 23)),
    ("2026-06-01 01:00:00.000 +02:00", "timestamp with time zone", datetime(2026, 5, 31, 23)),
    ("2026-05-31 19:00:00.000 America/New_York", "timestamp with time zone", datetime(2026, 5, 31, 23)),
    ('{"team":"ml"}', "varchar", '{"team":"ml"}'),
    ("{a=1}", "map(varchar, varchar)", "{a=1}"),
    (None, "decimal", None),
])
def test_values_come_back_in_their_column_type(text, kind, expected):
    value = typed(text, {"Type": kind})
    assert value == expected and type(value) is type(expected)


def test_pages_are_read_and_only_the_first_label_row_is_skipped(session, monkeypatch):
    monkeypatch.setenv("FINOPS_ATHENA_WORKGROUP", "finops")
    columns = [column("provider_name", "varchar"), column("billed_cost", "decimal"), column("committed", "boolean")]
    expect_start(session, QueryString="SELECT 1", WorkGroup="finops", QueryExecutionContext={"Database": "cur"},
                 ResultConfiguration={"OutputLocation": "s3://results/finops/"})
    expect_state(session, "QUEUED")
    expect_state(session, "SUCCEEDED")
    first = [["provider_name", "billed_cost", "committed"], ["AWS", "1.50", "true"], ["Google Cloud", "2.25", None]]
    session.stub.add_response("get_query_results", {
        "ResultSet": {"Rows": [{"Data": [datum(t) for t in row]} for row in first],
                      "ResultSetMetadata": {"ColumnInfo": columns}}, "NextToken": "page-2"},
        {"QueryExecutionId": "q-1"})
    second = [["provider_name", "0.25", "false"]]  # a data row that happens to look like the labels' first value
    session.stub.add_response("get_query_results", {
        "ResultSet": {"Rows": [{"Data": [datum(t) for t in row]} for row in second],
                      "ResultSetMetadata": {"ColumnInfo": columns}}},
        {"QueryExecutionId": "q-1", "NextToken": "page-2"})
    rows = run_query("SELECT 1", database="cur", output_location="s3://results/finops/", session=session)
    assert rows == [("AWS", Decimal("1.50"), True), ("Google Cloud", Decimal("2.25"), None),
                    ("provider_name", Decimal("0.25"), False)]


@pytest.mark.parametrize("error, kind, message, hint", [
    ({"ErrorCategory": 2, "ErrorType": 1006, "Retryable": False}, ProviderError,
     "COLUMN_NOT_FOUND: line 24:7: Column 'x_gpuhours' cannot be resolved", "--table-lacks"),
    ({"ErrorCategory": 1, "ErrorType": 401, "Retryable": True}, TransientProviderError,
     "GENERIC_INTERNAL_ERROR: internal", "transient"),
    ({"ErrorCategory": 3, "ErrorType": 1301, "Retryable": False}, ProviderError,
     "Access denied when writing to location s3://nope/", "output location"),
])
def test_a_failed_query_is_reported_with_athenas_reason(session, error, kind, message, hint):
    expect_start(session, QueryString="SELECT 1", WorkGroup="primary")
    expect_state(session, "FAILED", StateChangeReason=message, AthenaError=error)
    with pytest.raises(ProviderError) as caught:
        run_query("SELECT 1", session=session)
    assert type(caught.value) is kind
    assert message in str(caught.value) and "q-1 failed" in str(caught.value) and hint in caught.value.hint


def test_a_query_still_running_at_the_deadline_is_stopped(session):
    expect_start(session, QueryString="SELECT 1", WorkGroup="primary")
    expect_state(session, "RUNNING")
    expect_state(session, "RUNNING")
    session.stub.add_response("stop_query_execution", {}, {"QueryExecutionId": "q-1"})
    with pytest.raises(TransientProviderError, match="still RUNNING after 0.3 s; stopped it") as caught:
        run_query("SELECT 1", session=session, timeout=0.3)
    assert "FINOPS_ATHENA_TIMEOUT" in caught.value.hint


def _interrupts() -> list[type[BaseException]]:
    from finops.cli import Interrupted

    return [KeyboardInterrupt, Interrupted]  # Python's, and the command line's own (a BaseException, not a KeyboardInterrupt)


@pytest.mark.parametrize("interrupt_kind", _interrupts())
def test_ctrl_c_while_waiting_stops_the_query(session, interrupt_kind):
    def interrupt(**_):
        raise interrupt_kind

    expect_start(session, QueryString="SELECT 1", WorkGroup="primary")
    session.stub.add_response("stop_query_execution", {}, {"QueryExecutionId": "q-1"})
    session.athena.meta.events.register("provide-client-params.athena.GetQueryExecution", interrupt)
    with pytest.raises(interrupt_kind):
        run_query("SELECT 1", session=session)


def test_ctrl_c_stays_the_error_when_the_query_cannot_be_stopped(session):
    def interrupt(**_):
        raise KeyboardInterrupt

    expect_start(session, QueryString="SELECT 1", WorkGroup="primary")
    session.stub.add_client_error("stop_query_execution", "InternalServerException", http_status_code=500)
    session.athena.meta.events.register("provide-client-params.athena.GetQueryExecution", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_query("SELECT 1", session=session)


def test_a_value_that_does_not_read_as_its_type_is_a_provider_error(session):
    expect_start(session, QueryString="SELECT 1", WorkGroup="primary")
    expect_state(session, "SUCCEEDED")
    session.stub.add_response("get_query_results", {"ResultSet": {
        "Rows": [{"Data": [datum("billed_cost")]}, {"Data": [datum("n/a")]}],
        "ResultSetMetadata": {"ColumnInfo": [column("billed_cost", "decimal")]}}}, {"QueryExecutionId": "q-1"})
    with pytest.raises(ProviderError, match="does not read as its column type"):
        run_query("SELECT 1", session=session)


def test_api_errors_are_translated(session):
    session.stub.add_client_error("start_query_execution", "InvalidRequestException",
                                  "WorkGroup finops is not found", http_status_code=400)
    with pytest.raises(ProviderError, match="AWS athena start_query_execution failed: InvalidRequestException"):
        run_query("SELECT 1", workgroup="finops", session=session)
