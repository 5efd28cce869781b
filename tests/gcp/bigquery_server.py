"""A local HTTP server answering BigQuery's ``jobs.query`` REST call over a billing-export table.

``POST /bigquery/v2/projects/{project}/queries`` (https://cloud.google.com/bigquery/docs/reference/rest/v2/jobs/query)
with ``query``, ``queryParameters`` and ``useLegacySql`` in the body; the answer carries ``schema`` and
``rows`` in BigQuery's ``{"f": [{"v": ...}]}`` encoding (RECORD as a nested ``f``, REPEATED as a list of
``v``, TIMESTAMP as int64 microseconds when ``formatOptions.useInt64Timestamp`` is set, as the client
asks). It evaluates only what the connector sends: rows whose ``invoice.month`` equals the
``invoice_month`` parameter (standard and detailed exports, :data:`SCHEMA`), or, for the FOCUS view
(:func:`focus_schema`), rows whose ``BillingPeriodStart`` equals the ``period_start`` TIMESTAMP parameter.
Every request body is kept for assertions.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .local_server import JsonHandler, LocalServer

_PAIRS = [{"name": "key", "type": "STRING"}, {"name": "value", "type": "STRING"}]
#: The detailed export's schema, as far as the fixture rows go (BigQuery JSON schema).
SCHEMA: list[dict[str, Any]] = [
    {"name": "billing_account_id", "type": "STRING"},
    {"name": "service", "type": "RECORD", "fields": [{"name": "id", "type": "STRING"},
                                                      {"name": "description", "type": "STRING"}]},
    {"name": "sku", "type": "RECORD", "fields": [{"name": "id", "type": "STRING"},
                                                  {"name": "description", "type": "STRING"}]},
    {"name": "usage_start_time", "type": "TIMESTAMP"}, {"name": "usage_end_time", "type": "TIMESTAMP"},
    {"name": "project", "type": "RECORD", "fields": [
        {"name": "id", "type": "STRING"}, {"name": "number", "type": "STRING"}, {"name": "name", "type": "STRING"},
        {"name": "labels", "type": "RECORD", "mode": "REPEATED", "fields": _PAIRS},
        {"name": "ancestry_numbers", "type": "STRING"}]},
    {"name": "labels", "type": "RECORD", "mode": "REPEATED", "fields": _PAIRS},
    {"name": "system_labels", "type": "RECORD", "mode": "REPEATED", "fields": _PAIRS},
    {"name": "location", "type": "RECORD", "fields": [{"name": n, "type": "STRING"}
                                                       for n in ("location", "country", "region", "zone")]},
    {"name": "resource", "type": "RECORD", "fields": [{"name": "name", "type": "STRING"},
                                                       {"name": "global_name", "type": "STRING"}]},
    {"name": "cost", "type": "FLOAT"}, {"name": "currency", "type": "STRING"},
    {"name": "currency_conversion_rate", "type": "FLOAT"}, {"name": "cost_at_list", "type": "FLOAT"},
    {"name": "usage", "type": "RECORD", "fields": [
        {"name": "amount", "type": "FLOAT"}, {"name": "unit", "type": "STRING"},
        {"name": "amount_in_pricing_units", "type": "FLOAT"}, {"name": "pricing_unit", "type": "STRING"}]},
    {"name": "credits", "type": "RECORD", "mode": "REPEATED", "fields": [
        {"name": "name", "type": "STRING"}, {"name": "amount", "type": "FLOAT"},
        {"name": "full_name", "type": "STRING"}, {"name": "id", "type": "STRING"}, {"name": "type", "type": "STRING"}]},
    {"name": "invoice", "type": "RECORD", "fields": [{"name": "month", "type": "STRING"},
                                                      {"name": "publisher_type", "type": "STRING"}]},
    {"name": "cost_type", "type": "STRING"},
    {"name": "seller_name", "type": "STRING"},
    {"name": "price", "type": "RECORD", "fields": [
        {"name": "effective_price", "type": "FLOAT"}, {"name": "tier_start_amount", "type": "FLOAT"},
        {"name": "unit", "type": "STRING"}, {"name": "pricing_unit_quantity", "type": "FLOAT"}]},
]


def focus_schema(columns: list[str]) -> list[dict[str, Any]]:
    """The FOCUS view's column types (https://cloud.google.com/billing/docs/how-to/export-data-bigquery-focus):
    costs, prices and quantities NUMERIC, period bounds TIMESTAMP, ``Tags`` / ``SkuPriceDetails`` JSON."""
    def kind(name: str) -> str:
        if name.endswith(("Cost", "Price", "Quantity")):
            return "NUMERIC"
        if name.endswith(("Start", "End")):
            return "TIMESTAMP"
        return "JSON" if name in ("Tags", "SkuPriceDetails") else "STRING"
    return [{"name": name, "type": kind(name)} for name in columns]


def _moment(value: Any) -> datetime:
    return datetime.fromisoformat(str(value).replace(" UTC", "+00:00"))


def _chosen(rows: list[dict[str, Any]], wanted: dict[str, str]) -> list[dict[str, Any]]:
    if "period_start" in wanted:
        return [r for r in rows if _moment(r["BillingPeriodStart"]) == _moment(wanted["period_start"])]
    return [r for r in rows if r["invoice"]["month"] == wanted.get("invoice_month")]


def _cell(field: dict[str, Any], value: Any) -> Any:
    if field.get("mode") == "REPEATED":
        return [{"v": _cell({**field, "mode": "NULLABLE"}, item)} for item in value or []]
    if value is None:
        return None
    if field["type"] == "RECORD":
        return {"f": [{"v": _cell(sub, value.get(sub["name"]))} for sub in field["fields"]]}
    if field["type"] == "TIMESTAMP":
        return str(int(_moment(value).timestamp() * 1_000_000))
    return str(value)


class BigQueryServer(LocalServer):
    """``with BigQueryServer(rows) as endpoint:``; ``requests`` holds the JSON bodies received."""

    def __init__(self, rows: list[dict[str, Any]], fail_with: int | None = None,
                 schema: list[dict[str, Any]] = SCHEMA) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                server.requests.append({"path": self.path, "body": body})
                if fail_with:
                    return self.send_json(fail_with, {"error": {"code": fail_with, "message": "scripted failure",
                                                            "errors": [{"reason": "accessDenied"}]}})
                project = self.path.split("/projects/")[1].split("/")[0]
                wanted = {p["name"]: p["parameterValue"]["value"] for p in body.get("queryParameters", [])}
                encoded = [{"f": [{"v": _cell(f, r.get(f["name"]))} for f in schema]} for r in _chosen(rows, wanted)]
                self.send_json(200, {"kind": "bigquery#queryResponse", "schema": {"fields": schema},
                                 "jobReference": {"projectId": project, "jobId": "job_local_1", "location": "US"},
                                 "totalRows": str(len(encoded)), "rows": encoded, "jobComplete": True,
                                 "cacheHit": False, "totalBytesProcessed": "0"})

        super().__init__(Handler)
