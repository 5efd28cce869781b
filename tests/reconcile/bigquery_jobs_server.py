"""A local BigQuery v2 REST server that answers queries by running them on DuckDB.

It speaks what ``google-cloud-bigquery``'s ``query_and_wait`` uses
(https://cloud.google.com/bigquery/docs/reference/rest/v2/jobs):

- ``POST /bigquery/v2/projects/{p}/queries`` (``jobs.query``);
- ``GET .../queries/{jobId}`` (``jobs.getQueryResults``, paged by ``pageToken``), ``GET .../jobs/{jobId}``
  (``jobs.get``) and ``POST .../jobs/{jobId}/cancel`` (``jobs.cancel``).

A received query is parsed as BigQuery SQL with sqlglot, its table names are mapped to DuckDB
relations (``tables``), and it runs on the given DuckDB connection. Results are encoded as the
service does: ``schema.fields`` with BigQuery types (NUMERIC / BIGNUMERIC for decimals), ``rows[].f[].v``
as strings (TIMESTAMP as int64 microseconds when ``formatOptions.useInt64Timestamp`` is asked),
``totalRows`` as a string, ``pageToken`` while rows remain. ``running_polls`` keeps a job running
(``jobComplete: false``, state ``RUNNING``) for that many status requests, so the client has to wait for
it. ``fail_pages`` makes the next N page requests (those with a ``pageToken``) answer 503
``backendError``. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlparse

import duckdb
import sqlglot
from sqlglot import exp

from ..gcp.local_server import JsonHandler, LocalServer

PREFIX = "/bigquery/v2/projects/"


def bigquery_type(duckdb_type: str) -> str:
    """The BigQuery REST type of a DuckDB result column."""
    kind = str(duckdb_type).upper()
    if kind.startswith("DECIMAL"):
        precision, scale = (int(x) for x in kind[kind.index("(") + 1:-1].split(","))
        return "NUMERIC" if scale <= 9 and precision - scale <= 29 else "BIGNUMERIC"
    return {"VARCHAR": "STRING", "BOOLEAN": "BOOLEAN", "BIGINT": "INTEGER", "INTEGER": "INTEGER",
            "HUGEINT": "INTEGER", "DOUBLE": "FLOAT", "TIMESTAMP": "TIMESTAMP", "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
            "DATE": "DATE"}[kind]


def duckdb_sql(sql: str, dialect: str, tables: dict[str, str] | None = None) -> str:
    """``sql`` written in ``dialect`` as DuckDB runs it, its table names mapped by ``tables`` (dotted name -> DuckDB
    relation). BigQuery's ``SAFE.`` prefix (NULL where the function fails) runs as DuckDB's ``TRY``, which sqlglot
    does not write by itself."""
    tables = tables or {}

    def relation(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and ".".join(part.name for part in node.parts) in tables:
            return exp.to_table(tables[".".join(part.name for part in node.parts)], dialect="duckdb")
        if isinstance(node, exp.SafeFunc):
            return exp.Try(this=node.this)
        return node

    return sqlglot.parse_one(sql, read=dialect).transform(relation).sql(dialect="duckdb")


def run_on_duckdb(con: duckdb.DuckDBPyConnection, sql: str, dialect: str,
                  tables: dict[str, str]) -> tuple[list[tuple[str, str]], list[tuple[Any, ...]]]:
    """Run ``sql`` written in ``dialect`` on DuckDB, its table names mapped by ``tables`` (:func:`duckdb_sql`):
    ``([(column, DuckDB type)], rows)``."""
    result = con.execute(duckdb_sql(sql, dialect, tables))
    return [(name, str(kind)) for name, kind, *_ in result.description], result.fetchall()


def _encode(value: Any, kind: str, int64_timestamps: bool) -> Any:
    if value is None:
        return None
    if kind == "TIMESTAMP":
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value
        micros = int((moment - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1_000_000)
        return str(micros) if int64_timestamps else f"{Decimal(micros) / 1_000_000}"
    if kind == "BOOLEAN":
        return "true" if value else "false"
    return str(value)


class BigQueryJobsServer(LocalServer):
    """``with BigQueryJobsServer(con, tables) as endpoint:`` on 127.0.0.1; ``requests`` records
    ``(method, path, query parameters, body)``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tables: dict[str, str], *, page_rows: int = 40,
                 running_polls: int = 0, fail_pages: int = 0) -> None:
        self.con, self.tables, self.page_rows, self.fail_pages = con, tables, page_rows, fail_pages
        self.running_polls = running_polls
        self.requests: list[tuple[str, str, dict[str, str], dict[str, Any]]] = []
        self.queries: list[str] = []
        self.cancelled: list[str] = []
        self.jobs: dict[str, tuple[list[dict[str, str]], list[dict[str, Any]]]] = {}
        self.lock = threading.Lock()
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                self.answer("GET")

            def do_POST(self) -> None:
                self.answer("POST")

            def answer(self, method: str) -> None:
                url = urlparse(self.path)
                params = {k: v[-1] for k, v in parse_qs(url.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else {}
                with server.lock:
                    server.requests.append((method, url.path, params, body))
                    status, answer = server.route(method, url.path, params, body)
                self.send_json(status, answer)

        super().__init__(Handler)

    # ---- the API -------------------------------------------------------------------------------------
    def route(self, method: str, path: str, params: dict[str, str], body: dict[str, Any]) -> tuple[int, dict]:
        if not path.startswith(PREFIX):
            return 404, {"error": {"code": 404, "message": f"no route {path}"}}
        project, _, rest = path.removeprefix(PREFIX).partition("/")
        kind, _, job_id = rest.partition("/")
        if method == "POST" and kind == "queries":  # jobs.query
            job = self.run(body["query"], body.get("requestId", "query"))
            if self.still_running(job):
                return 200, self.running(project, job, "bigquery#queryResponse")
            return 200, self.page(project, job, params | {"maxResults": body.get("maxResults")},
                                  body.get("formatOptions", {}).get("useInt64Timestamp", False),
                                  kind="bigquery#queryResponse")
        if method == "POST" and kind == "jobs" and job_id.endswith("/cancel"):  # jobs.cancel
            self.cancelled.append(job_id.removesuffix("/cancel"))
            return 200, {"kind": "bigquery#jobCancelResponse",
                         "job": self.job_resource(project, self.cancelled[-1], "DONE")}
        if method == "GET" and kind == "jobs" and job_id in self.jobs:  # jobs.get
            state = "RUNNING" if self.still_running(job_id) else "DONE"
            return 200, self.job_resource(project, job_id, state)
        if method == "GET" and kind == "queries" and job_id in self.jobs:  # jobs.getQueryResults
            if self.still_running(job_id):
                return 200, self.running(project, job_id, "bigquery#getQueryResultsResponse")
            if params.get("pageToken") and self.fail_pages > 0:
                self.fail_pages -= 1
                return 503, {"error": {"code": 503, "message": "backend unavailable", "status": "UNAVAILABLE",
                                       "errors": [{"reason": "backendError", "message": "backend unavailable"}]}}
            return 200, self.page(project, job_id, params, str(params.get("formatOptions.useInt64Timestamp")).lower() == "true",
                                  kind="bigquery#getQueryResultsResponse")
        return 404, {"error": {"code": 404, "message": f"Not found: {method} {path}",
                               "errors": [{"reason": "notFound"}]}}

    def run(self, sql: str, job_id: str) -> str:
        """Execute BigQuery ``sql`` on DuckDB; keep its schema and rows under ``job_id``."""
        self.queries.append(sql)
        columns, rows = run_on_duckdb(self.con, sql, "bigquery", self.tables)
        fields = [{"name": name, "type": bigquery_type(kind), "mode": "NULLABLE"} for name, kind in columns]
        self.jobs[job_id] = (fields, [dict(zip([f["name"] for f in fields], row)) for row in rows])
        return job_id

    def still_running(self, job_id: str) -> bool:
        """One status request: True while the job is kept running."""
        if self.running_polls > 0:
            self.running_polls -= 1
            return True
        return False

    def running(self, project: str, job_id: str, kind: str) -> dict[str, Any]:
        return {"kind": kind, "jobReference": {"projectId": project, "jobId": job_id, "location": "US"},
                "jobComplete": False}

    def job_resource(self, project: str, job_id: str, state: str) -> dict[str, Any]:
        return {"kind": "bigquery#job", "id": f"{project}:US.{job_id}",
                "jobReference": {"projectId": project, "jobId": job_id, "location": "US"},
                "configuration": {"jobType": "QUERY", "query": {"query": self.queries[-1], "useLegacySql": False}},
                "status": {"state": state},
                "statistics": {"creationTime": "1780000000000", "startTime": "1780000000000",
                               "endTime": "1780000001000", "query": {"totalBytesProcessed": "0"}}}

    def page(self, project: str, job_id: str, params: dict[str, Any], int64_timestamps: bool,
             kind: str) -> dict[str, Any]:
        fields, rows = self.jobs[job_id]
        start = int(params.get("pageToken") or params.get("startIndex") or 0)
        asked = params.get("maxResults")
        size = self.page_rows if asked in (None, "") else min(int(asked), self.page_rows)
        chosen = rows[start:start + size]
        answer: dict[str, Any] = {
            "kind": kind, "jobReference": {"projectId": project, "jobId": job_id, "location": "US"},
            "schema": {"fields": fields}, "totalRows": str(len(rows)), "jobComplete": True, "cacheHit": False,
            "totalBytesProcessed": "0"}
        if chosen:
            answer["rows"] = [{"f": [{"v": _encode(row[f["name"]], f["type"], int64_timestamps)} for f in fields]}
                              for row in chosen]
        if start + size < len(rows):
            answer["pageToken"] = str(start + size)
        return answer
