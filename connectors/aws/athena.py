"""Run one SQL query on Amazon Athena and return its rows as typed Python values.

The flow is Athena's own (API reference, ``StartQueryExecution`` / ``GetQueryExecution`` /
``GetQueryResults``): start the query, poll its state with a growing pause (0.2 s doubling to 5 s)
for at most ``FINOPS_ATHENA_TIMEOUT`` seconds (default 900), then read every page of the result set.
A query still running at the deadline is stopped and reported as transient; Ctrl-C stops it too, so
no query is left scanning. Each API call is bounded by the AWS retry budget
(:mod:`connectors.aws.retry_budget`): an unreachable endpoint is given up within it, not after the query's timeout. Athena returns every value as text (``VarCharValue``; a NULL has none)
with the column types in ``ResultSetMetadata.ColumnInfo``; :func:`typed` turns each value back into
its type: ``decimal`` -> :class:`~decimal.Decimal`, integers -> ``int``, ``boolean`` -> ``bool``,
timestamps -> naive UTC :class:`~datetime.datetime` (as DuckDB returns them locally), ``date`` ->
:class:`~datetime.date`. The first row of a SELECT's first page repeats the column labels and is
skipped.

Where the query runs: ``database`` (``FINOPS_ATHENA_DATABASE``) resolves unqualified table names,
``workgroup`` (``FINOPS_ATHENA_WORKGROUP``, else ``primary``) and ``output_location``
(``FINOPS_ATHENA_OUTPUT_LOCATION``, an ``s3://`` folder; needed unless the workgroup sets one). The
region is the AWS session's (``AWS_REGION`` / ``AWS_DEFAULT_REGION``). Calls go through
:mod:`connectors.aws.session` (botocore retries, ``AWS_ENDPOINT_URL``, errors translated).

>>> typed("12.3400", {"Type": "decimal"}), typed("true", {"Type": "boolean"})
(Decimal('12.3400'), True)
>>> typed("2026-05-31 22:00:00.000 America/New_York", {"Type": "timestamp with time zone"})
datetime.datetime(2026, 6, 1, 2, 0)
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from finops.errors import InputError, ProviderError, TransientProviderError

from ..retry_deadline import one_deadline
from .session import AwsSession, pages, translated

__all__ = ["DATABASE_ENV", "OUTPUT_LOCATION_ENV", "TIMEOUT_ENV", "WORKGROUP_ENV", "run_query", "typed"]

DATABASE_ENV = "FINOPS_ATHENA_DATABASE"
WORKGROUP_ENV = "FINOPS_ATHENA_WORKGROUP"
OUTPUT_LOCATION_ENV = "FINOPS_ATHENA_OUTPUT_LOCATION"
TIMEOUT_ENV = "FINOPS_ATHENA_TIMEOUT"
_DEFAULT_TIMEOUT = 900.0
_FIRST_PAUSE, _LONGEST_PAUSE = 0.2, 5.0
_RUNNING = ("QUEUED", "RUNNING")

_INTEGER = {"tinyint", "smallint", "integer", "int", "bigint"}
_FLOAT = {"double", "float", "real"}
_OFFSET = re.compile(r"^[+-]\d{2}:?\d{2}$")


def typed(text: str | None, column: Mapping[str, Any]) -> Any:
    """One Athena result value (text, or ``None`` for NULL) as the Python value of its column type.

    Types Athena returns as text and that have no Python counterpart here (``array``, ``map``,
    ``row``, ``json``, ``varchar``...) stay text.

    >>> typed(None, {"Type": "bigint"}), typed("42", {"Type": "bigint"}), typed("2026-05-01", {"Type": "date"})
    (None, 42, datetime.date(2026, 5, 1))
    """
    if text is None:
        return None
    kind = str(column.get("Type", "varchar")).lower().split("(", 1)[0].strip()
    if kind == "decimal":
        return Decimal(text)
    if kind in _INTEGER:
        return int(text)
    if kind in _FLOAT:
        return float(text)
    if kind == "boolean":
        return text.strip().lower() == "true"
    if kind == "date":
        return date.fromisoformat(text)
    if kind == "timestamp with time zone":
        return _instant(text)
    if kind == "timestamp":
        return datetime.fromisoformat(text)
    return text


def _instant(text: str) -> datetime:
    """``2026-05-01 00:00:00.000 UTC`` (or a zone name, or ``+02:00``) -> naive UTC datetime."""
    from zoneinfo import ZoneInfo

    moment, _, zone = text.strip().rpartition(" ")
    if not moment:
        return datetime.fromisoformat(text).astimezone(UTC).replace(tzinfo=None)
    if _OFFSET.match(zone):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz: Any = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    else:
        tz = UTC if zone.upper() in ("UTC", "Z") else ZoneInfo(zone)
    return datetime.fromisoformat(moment).replace(tzinfo=tz).astimezone(UTC).replace(tzinfo=None)


def _timeout() -> float:
    value = os.environ.get(TIMEOUT_ENV)
    if not value:
        return _DEFAULT_TIMEOUT
    try:
        return float(value)
    except ValueError:
        raise InputError(f"{TIMEOUT_ENV} must be a number of seconds, got {value!r}") from None


@one_deadline()
def run_query(sql: str, *, database: str | None = None, workgroup: str | None = None,
              output_location: str | None = None, session: AwsSession | None = None,
              timeout: float | None = None) -> list[tuple[Any, ...]]:
    """Run ``sql`` on Athena and return every result row as a tuple of typed values (see :func:`typed`).

    Unset arguments come from the environment (module docstring). Raises
    :class:`~finops.errors.ProviderError` when the query fails or is cancelled (with Athena's
    reason), :class:`~finops.errors.TransientProviderError` when Athena says the failure is
    retryable, when the API keeps failing after botocore's retries, or when the query is still
    running after ``timeout`` seconds (it is then stopped).
    """
    client = (session or AwsSession()).client("athena")
    request: dict[str, Any] = {"QueryString": sql, "WorkGroup": workgroup or os.environ.get(WORKGROUP_ENV) or "primary"}
    if database := database or os.environ.get(DATABASE_ENV):
        request["QueryExecutionContext"] = {"Database": database}
    if output_location := output_location or os.environ.get(OUTPUT_LOCATION_ENV):
        request["ResultConfiguration"] = {"OutputLocation": output_location}
    with translated("athena", "start_query_execution", client):
        query_id = client.start_query_execution(**request)["QueryExecutionId"]
    try:
        _wait(client, query_id, _timeout() if timeout is None else timeout)
    except Exception:
        raise
    except BaseException:  # Ctrl-C (KeyboardInterrupt, or the command line's own): stop the query scanning
        _stop_quietly(client, query_id)  # (and billing) in Athena, then go on being interrupted
        raise
    return _rows(client, query_id)


def _stop(client: Any, query_id: str) -> None:
    with translated("athena", "stop_query_execution", client):
        client.stop_query_execution(QueryExecutionId=query_id)


def _stop_quietly(client: Any, query_id: str) -> None:
    """Stop the query on the way out of an interrupt; a failure to stop it (the endpoint gone) is not the
    error to report: the interrupt is."""
    try:
        _stop(client, query_id)
    except ProviderError:
        pass


def _wait(client: Any, query_id: str, timeout: float) -> None:
    """Poll until the query leaves QUEUED/RUNNING; raise unless it SUCCEEDED."""
    deadline, pause = time.monotonic() + timeout, _FIRST_PAUSE
    while True:
        with translated("athena", "get_query_execution", client):
            execution = client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]
        status = execution.get("Status", {})
        state = status.get("State")
        if state == "SUCCEEDED":
            return
        if state not in _RUNNING:
            raise _failure(query_id, state, status)
        if time.monotonic() + pause > deadline:
            _stop(client, query_id)
            raise TransientProviderError(f"Athena query {query_id} was still {state} after {timeout:g} s; stopped it",
                                         hint=f"try again, or allow longer with {TIMEOUT_ENV}=SECONDS")
        time.sleep(pause)
        pause = min(pause * 2, _LONGEST_PAUSE)


def _failure(query_id: str, state: str | None, status: Mapping[str, Any]) -> ProviderError:
    reason = status.get("StateChangeReason") or "no reason given"
    error = status.get("AthenaError", {})
    message = f"Athena query {query_id} {str(state).lower()}: {reason}"
    if error.get("Retryable"):
        return TransientProviderError(message, hint="Athena says this failure is transient; try again")
    hint = ("check --table, --database and that the table has the FOCUS columns (--table-lacks names the absent ones)"
            if error.get("ErrorCategory") == 2 else "check the workgroup, its output location and the IAM policy")
    return ProviderError(message, hint=hint)


def _rows(client: Any, query_id: str) -> list[tuple[Any, ...]]:
    """Every page of the results, typed by ``ColumnInfo``; the label row of the first page skipped."""
    rows: list[tuple[Any, ...]] = []
    columns: list[Mapping[str, Any]] = []
    for number, page in enumerate(pages(client, "athena", "get_query_results", QueryExecutionId=query_id)):
        result = page.get("ResultSet", {})
        if number == 0:
            columns = result.get("ResultSetMetadata", {}).get("ColumnInfo", [])
        texts = [[datum.get("VarCharValue") for datum in row.get("Data", [])] for row in result.get("Rows", [])]
        if number == 0 and texts and texts[0] == [c.get("Label") or c.get("Name") for c in columns]:
            texts = texts[1:]
        for values in texts:
            if len(values) != len(columns):
                raise ProviderError(f"Athena query {query_id} returned a row of {len(values)} values for "
                                    f"{len(columns)} columns", hint="run the query again; report it if it persists")
            try:
                rows.append(tuple(typed(text, column) for text, column in zip(values, columns, strict=True)))
            except (ValueError, ArithmeticError) as exc:
                raise ProviderError(f"Athena query {query_id} returned a value that does not read as its column "
                                    f"type: {exc}", hint="check the table's column types against FOCUS") from exc
    return rows
