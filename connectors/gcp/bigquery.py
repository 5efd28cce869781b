"""Run a query on BigQuery with bounded retries and return typed rows, errors translated into
:mod:`finops.errors`.

Queries go through ``Client.query_and_wait`` (``jobs.query``, then ``jobs.getQueryResults`` page by
page when the result does not fit the first response). Every API call, each page included, is
retried with BigQuery's own predicate (``rateLimitExceeded``, ``backendError``, ``internalError``,
429/500/502/503) and exponential backoff until the command's deadline: ``FINOPS_GCP_RETRY_TIMEOUT``
seconds (default 120) from its first failure, shared by every call, page, re-run job and query of the
command (:mod:`connectors.retry_deadline`), so a refused or failing endpoint is given up within it. A job still running
after ``FINOPS_GCP_QUERY_TIMEOUT`` seconds (default 900) is cancelled. What still fails is a
:class:`~finops.errors.TransientProviderError` (retryable) or a :class:`~finops.errors.ProviderError`.

Values come back as the client decodes them from the REST rows: NUMERIC and BIGNUMERIC as
:class:`~decimal.Decimal`, INT64 as ``int``, BOOL as ``bool``, FLOAT64 as ``float``. TIMESTAMPs
(instants) are returned as naive UTC datetimes, as DuckDB returns them locally.

The billing-export reader (:mod:`connectors.gcp.bills`) queries through :func:`query_rows` too, so both
have the same bounds. ``FINOPS_GCP_BIGQUERY_ENDPOINT`` overrides the API endpoint (a proxy, or ``http://127.0.0.1:PORT``, which is called without
credentials); otherwise Application Default Credentials are used. Errors are translated by
:class:`connectors.gcp.catalog.translate_errors`, as the other Google APIs' are.

>>> naive_utc(datetime(2026, 5, 31, 23, 0, tzinfo=UTC))
datetime.datetime(2026, 5, 31, 23, 0)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlparse

from finops.errors import DependencyError, InputError, TransientProviderError

from ..retry_deadline import one_deadline
from .catalog import RetrySettings, translate_errors

__all__ = ["BIGQUERY_ENDPOINT_ENV", "QUERY_TIMEOUT_ENV", "bigquery_client", "naive_utc", "query_rows", "run_query"]

#: Optional BigQuery API endpoint (a proxy or a local server); a local one is called anonymously.
BIGQUERY_ENDPOINT_ENV = "FINOPS_GCP_BIGQUERY_ENDPOINT"
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")

#: Seconds to wait for a query job to finish before cancelling it (default 900).
QUERY_TIMEOUT_ENV = "FINOPS_GCP_QUERY_TIMEOUT"
_DEFAULT_QUERY_TIMEOUT = "900"
_API = "BigQuery"


def _retries(settings: RetrySettings) -> tuple[Any, Any]:
    """(API-call retry, job retry): BigQuery's predicates with the timing of ``settings``, both ending at the
    command's one deadline (:meth:`~connectors.gcp.catalog.RetrySettings.until_deadline`). Each alone has a
    ``timeout``, but the job retry re-runs calls that retry on their own, so without the shared deadline
    their budgets would add up (a refused endpoint took 221 s for 120)."""
    from google.cloud.bigquery.retry import DEFAULT_JOB_RETRY, DEFAULT_RETRY

    call = DEFAULT_RETRY.with_delay(initial=settings.initial, maximum=settings.maximum,
                                    multiplier=settings.multiplier).with_timeout(settings.timeout)
    job = DEFAULT_JOB_RETRY.with_timeout(settings.timeout)
    return (call.with_predicate(settings.until_deadline(call._predicate)),
            job.with_predicate(settings.until_deadline(job._predicate)))


def naive_utc(value: Any) -> Any:
    """An aware datetime as naive UTC; any other value unchanged."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def bigquery_client(project: str | None) -> Any:
    """A ``google.cloud.bigquery.Client`` for ``project``, honouring ``FINOPS_GCP_BIGQUERY_ENDPOINT``."""
    from google.cloud import bigquery

    endpoint = os.environ.get(BIGQUERY_ENDPOINT_ENV) or None
    if not endpoint:
        return bigquery.Client(project=project)
    credentials = None
    if (urlparse(endpoint if "://" in endpoint else f"//{endpoint}").hostname or "") in _LOCAL_HOSTS:
        from google.auth.credentials import AnonymousCredentials

        credentials = AnonymousCredentials()
    return bigquery.Client(project=project, credentials=credentials, client_options={"api_endpoint": endpoint})


def query_rows(sql: str, *, parameters: Sequence[tuple[str, str, Any]] = (), project: str | None = None,
               client: Any = None, doing: str = "running a query") -> list[Any]:
    """Every row (all pages) of standard-SQL ``sql`` with named ``(name, type, value)`` parameters, as the
    client's ``Row`` objects, with the retry and wait bounds of the module docstring."""
    try:
        from google.cloud import bigquery
    except ImportError as exc:  # pragma: no cover - the gcp extra is installed in tests
        raise DependencyError("google-cloud-bigquery", "gcp") from exc
    with translate_errors(doing, api=_API, endpoint_env=BIGQUERY_ENDPOINT_ENV):
        client = client if client is not None else bigquery_client(project)
        if not client.project:
            raise InputError("no Google Cloud project to run the BigQuery job in",
                             hint="pass --project, or set GOOGLE_CLOUD_PROJECT")
        call_retry, job_retry = _retries(RetrySettings.from_env())
        config = bigquery.QueryJobConfig(query_parameters=[bigquery.ScalarQueryParameter(name, kind, value)
                                                           for name, kind, value in parameters])
        wait = _wait_timeout()
        try:
            return list(client.query_and_wait(sql, job_config=config, retry=call_retry, job_retry=job_retry,
                                              wait_timeout=wait))
        except TimeoutError as exc:  # the client has cancelled the job
            raise TransientProviderError(f"the BigQuery job was still running after {wait:g} s; cancelled it",
                                         hint=f"try again, or allow longer with {QUERY_TIMEOUT_ENV}=SECONDS") from exc


@one_deadline()
def run_query(sql: str, *, project: str | None = None, client: Any = None) -> list[tuple[Any, ...]]:
    """Run standard-SQL ``sql`` and return every row (all pages) as a tuple in column order.

    ``project`` is where the query job runs (and is billed); it defaults to the credentials' project
    (``GOOGLE_CLOUD_PROJECT``). The tables the query reads may live in other projects. ``client`` is
    a ready ``google.cloud.bigquery.Client``, if the caller has one.
    """
    rows = query_rows(sql, project=project, client=client, doing="running the FOCUS aggregation")
    return [tuple(naive_utc(value) for value in row.values()) for row in rows]


def _wait_timeout() -> float:
    value = os.environ.get(QUERY_TIMEOUT_ENV) or _DEFAULT_QUERY_TIMEOUT
    try:
        return float(value)
    except ValueError:
        raise InputError(f"{QUERY_TIMEOUT_ENV} must be a number of seconds, got {value!r}") from None
