"""GCP bills -> FOCUS Parquet: the billing export in BigQuery, or the same data in exported files.

Sources:

- ``bq://PROJECT.DATASET.TABLE``: the standard (``gcp_billing_export_v1_*``), detailed
  (``gcp_billing_export_resource_v1_*``) or FOCUS (``gcp_billing_export_focus_*``) export table, read
  with ``google-cloud-bigquery`` (Application Default Credentials; ``FINOPS_GCP_BIGQUERY_ENDPOINT``
  overrides the API endpoint) through a query scoped to one invoice month (:func:`build_query`, a
  named query parameter, never string-pasted input), run with ``jobs.query`` through
  :func:`connectors.gcp.bigquery.query_rows` (retries bounded by ``FINOPS_GCP_RETRY_TIMEOUT``, the job's
  wait by ``FINOPS_GCP_QUERY_TIMEOUT``).
- a CSV, JSONL (``.json``/``.jsonl``/``.ndjson``) or Parquet file of one of those tables, read with
  DuckDB. JSONL and Parquet keep the nested shape (``credits`` a list of records); CSV has one column per
  leaf field named by its path (``service.description``) and the repeated records (``credits``,
  ``labels``, ``system_labels``, ``tags``, ``project.labels``) as JSON text, as ``TO_JSON_STRING`` gives.
  A file holding ``BilledCost`` is read as the FOCUS export.

Rows are mapped by :mod:`connectors.gcp.normalize` and written atomically; on any failure nothing is
written. BigQuery errors are translated by :class:`connectors.gcp.catalog.translate_errors`, as the
catalog's are (transient for throttling and 5xx).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from connectors.focus_table import timestamp
from finops.errors import InputError, Location
from finops.reconcile.aggregation import billing_month

from . import mapping as m
from .bigquery import BIGQUERY_ENDPOINT_ENV, query_rows
from .commitments import amortize
from .normalize import (
    export_row,
    focus_export_row,
    get,
    invoice_month,
    month_period,
    nest,
    normalized,
    unused_row,
)

__all__ = ["BIGQUERY_ENDPOINT_ENV", "BillQuery", "build_query", "export_kind", "parse_month", "pull_bills",
           "read_file_rows", "to_focus"]

_TABLE = re.compile(r"^bq://([a-z0-9][a-z0-9.:-]*[a-z0-9])\.([A-Za-z0-9_]+)\.([A-Za-z0-9_$-]+)$")
_FILE_KINDS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet"}
#: Fields a file must have to be read as a billing export (keyed by: is it the FOCUS export).
_REQUIRED_FIELDS = {False: ("cost", "currency", "invoice.month", "usage_start_time", "sku.description"),
                    True: ("BilledCost", "EffectiveCost", "BillingPeriodStart", "ChargePeriodStart")}
#: Row number of data row 0 as an editor shows it: a CSV's first line is its header.
_FIRST_ROW = {"csv": 2, "json": 1, "parquet": 1}


class BillQuery:
    """A parameterized BigQuery statement: ``sql`` plus ``(name, type, value)`` parameters."""

    def __init__(self, sql: str, parameters: list[tuple[str, str, Any]]) -> None:
        self.sql = sql
        self.parameters = parameters


def parse_month(month: str) -> tuple[str, datetime, datetime]:
    """``YYYY-MM`` -> (invoice month ``YYYYMM``, period start, period end).

    >>> parse_month("2026-05")[0]
    '202605'
    """
    start, end = month_period(month)
    return f"{start.year:04d}{start.month:02d}", start, end


def export_kind(table: str) -> m.ExportKind:
    """The export a table name holds, from Google's naming; other names are read as standard exports.

    >>> export_kind("gcp_billing_export_resource_v1_01A2B3_C4D5E6_F70819")
    'detailed'
    """
    return next((kind for prefix, kind in m.TABLE_PREFIXES if table.startswith(prefix)), "standard")


def build_query(source: str, month: str) -> BillQuery:
    """The month's rows of an export table; ``source`` is ``bq://PROJECT.DATASET.TABLE``.

    Standard and detailed exports are scoped by ``invoice.month`` (the invoice the cost lands on, which
    also catches late-arriving usage); the FOCUS export by ``BillingPeriodStart``.

    >>> q = build_query("bq://acme-billing.billing.gcp_billing_export_v1_01A2B3_C4D5E6_F70819", "2026-05")
    >>> q.sql.splitlines()[-1], q.parameters
    ('WHERE invoice.month = @invoice_month', [('invoice_month', 'STRING', '202605')])
    """
    match = _TABLE.match(source.strip())
    if not match:
        raise InputError(f"not a BigQuery table: {source!r}", hint="use bq://PROJECT.DATASET.TABLE")
    project, dataset, table = match.groups()
    invoice_month, start, _ = parse_month(month)
    reference = f"`{project}.{dataset}.{table}`"
    if export_kind(table) == "focus":
        return BillQuery(f"SELECT *\nFROM {reference}\nWHERE BillingPeriodStart = @period_start",
                         [("period_start", "TIMESTAMP", start)])
    return BillQuery(f"SELECT *\nFROM {reference}\nWHERE invoice.month = @invoice_month",
                     [("invoice_month", "STRING", invoice_month)])


def _query_bigquery(query: BillQuery, project: str) -> list[dict[str, Any]]:
    """Run ``query`` (bounded retries and wait, :func:`connectors.gcp.bigquery.query_rows`); rows as dicts."""
    rows = query_rows(query.sql, parameters=query.parameters, project=project, doing="reading the billing export")
    return [dict(row.items()) for row in rows]


def read_file_rows(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """Every row of an exported file as a nested export row (or a FOCUS row), and whether it is FOCUS.

    The file must have the export's key fields (:data:`_REQUIRED_FIELDS`), else it is an ``InputError``
    naming the missing ones.
    """
    import duckdb

    kind = _file_kind(path)
    if not path.exists():
        raise InputError(f"bill file {path} does not exist", where=Location(file=str(path)),
                         hint="check the path given to --source")
    reader = {"csv": "read_csv(?, all_varchar = true, header = true)",
              "json": "read_json(?, format = 'newline_delimited')", "parquet": "read_parquet(?)"}[kind]
    try:
        with duckdb.connect() as con:
            result = con.execute(f"SELECT * FROM {reader}", [str(path)])
            names = [d[0] for d in result.description]
            rows = [dict(zip(names, values)) for values in result.fetchall()]
    except duckdb.Error as exc:
        reason = str(exc).splitlines()[0].strip().rstrip(".")
        raise InputError(f"cannot read {path.name}: {reason}", where=Location(file=str(path)),
                         hint=f"give a complete {kind.upper()} export of the billing table") from exc
    is_focus = "BilledCost" in names
    if kind == "csv" and not is_focus:
        rows = [nest(row) for row in rows]
    missing = [field for field in _REQUIRED_FIELDS[is_focus] if rows and not _has(rows[0], field)]
    if missing:
        raise InputError(f"{path.name} is not a GCP billing export: it has no {', '.join(missing)}",
                         where=Location(file=str(path)),
                         hint="export the standard, detailed or FOCUS billing table (a CSV names nested "
                              "fields by their path, e.g. invoice.month)")
    return rows, is_focus


def _file_kind(path: Path) -> str:
    kind = _FILE_KINDS.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"cannot read bills from {path.name}", where=Location(file=str(path)),
                         hint="give a .csv, .json/.jsonl/.ndjson or .parquet export, or bq://PROJECT.DATASET.TABLE")
    return kind


def _has(row: Mapping[str, Any], path: str) -> bool:
    *parents, leaf = path.split(".")
    parent = get(row, ".".join(parents)) if parents else row
    return isinstance(parent, Mapping) and leaf in parent


def _leaves(row: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    """(dotted path, value) of every leaf; a value inside a repeated record (``credits``) is named by its field."""
    for key, value in row.items():
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{prefix}{key}.")
        elif isinstance(value, list):
            for item in value:
                yield from ((f"{prefix}{key}", leaf) for _, leaf in _leaves(item if isinstance(item, Mapping) else {}))
        else:
            yield f"{prefix}{key}", value


def _file_to_focus(path: Path, numbered: list[tuple[int, Mapping[str, Any]]], is_focus: bool) -> list[dict[str, Any]]:
    """:func:`to_focus`; a bad value is an ``InputError`` naming the file, row and column (found by mapping
    the rows one by one)."""
    try:
        return to_focus([row for _, row in numbered], is_focus)
    except (InputError, ValueError, ArithmeticError):
        pass  # located below
    for number, row in numbered:
        try:
            to_focus([row], is_focus)
        except (InputError, ValueError) as exc:  # ValueError: a timestamp that is not ISO 8601
            message = exc.message if isinstance(exc, InputError) else f"not a valid value: {exc}"
            # the column the error names, else the leaf whose value the message quotes (to_decimal and
            # fromisoformat quote it)
            named = exc.where.column if isinstance(exc, InputError) and exc.where is not None else None
            column = named or next((name for name, value in _leaves(row)
                                    if value not in (None, "") and repr(str(value)) in message), None)
            raise InputError(message, where=Location(file=str(path), row=number, column=column),
                             hint=getattr(exc, "hint", None) or "fix the value in the export or export the month again",
                             ) from exc
    return to_focus([row for _, row in numbered], is_focus)  # not a one-row error: raise it as it is


def _month_rows(rows: Iterable[Mapping[str, Any]], is_focus: bool, month: str, first: int = 1, path: str = "",
                ) -> list[tuple[int, Mapping[str, Any]]]:
    """The rows of one invoice month, each with its row number in the file (``first`` for row 0). A
    standard or detailed export's ``invoice.month`` is read in either form (``202605``, ``2026-05``); a
    row whose invoice month is neither is refused with its row, never left out; a FOCUS export's row belongs to
    the month its billing period starts in, in the zone it is written in
    (:func:`finops.reconcile.aggregation.billing_month`)."""
    wanted = parse_month(month)[0]
    chosen = []
    if is_focus:  # the month a billing period starts in, in the zone it is written in (month_filter's rule)
        for i, row in enumerate(rows):
            where = Location(file=path, row=first + i, column="BillingPeriodStart")
            try:
                start = timestamp(row.get("BillingPeriodStart"))
            except ValueError:
                raise InputError(f"not a timestamp: {str(row.get('BillingPeriodStart'))[:40]!r}", where=where,
                                 hint="FOCUS writes ISO 8601, e.g. 2026-05-01T00:00:00Z") from None
            if start is None:
                raise InputError("BillingPeriodStart is empty", where=where,
                                 hint="FOCUS requires the billing period on every row; export the month again")
            if billing_month(start) == month:
                chosen.append((first + i, row))
        return chosen
    for i, row in enumerate(rows):
        try:
            found = invoice_month(get(row, "invoice.month"))
        except InputError as exc:
            raise InputError(exc.message, where=Location(file=path, row=first + i, column="invoice.month"),
                             hint=exc.hint) from None
        if found == wanted:
            chosen.append((first + i, row))
    return chosen


def to_focus(rows: Iterable[Mapping[str, Any]], is_focus: bool) -> list[dict[str, Any]]:
    """Export rows -> FOCUS records (pure); a standard or detailed export's commitments are amortized over
    the rows given (:func:`connectors.gcp.commitments.amortize`: give a whole invoice month)."""
    if is_focus:
        return [focus_export_row(r) for r in rows]
    rows = [normalized(r) for r in rows]
    plan = amortize(rows)
    charges = [export_row(r, plan.shares.get(i)) for i, r in enumerate(rows)]
    unused = [unused_row(charges[u.fee_row][0], u) for u in plan.unused]
    return [record for records in charges for record in records] + unused


def pull_bills(source: str, month: str, out: Path) -> Path:
    """One invoice month of a GCP billing export as FOCUS Parquet at ``out`` (see the module docstring)."""
    from connectors.focus_table import write_focus_parquet

    if source.startswith("bq://"):
        query = build_query(source, month)
        table = source.removeprefix("bq://").rsplit(".", 1)[-1]
        rows: list[Mapping[str, Any]] = _query_bigquery(query, source.removeprefix("bq://").split(".", 1)[0])
        is_focus = export_kind(table) == "focus"
        _require_rows(rows, source, month)
        return write_focus_parquet(to_focus(rows, is_focus), out)
    path = Path(source)
    all_rows, is_focus = read_file_rows(path)
    numbered = _month_rows(all_rows, is_focus, month, _FIRST_ROW[_file_kind(path)], str(path))
    _require_rows(numbered, source, month)
    return write_focus_parquet(_file_to_focus(path, numbered, is_focus), out)


def _require_rows(rows: list[Any], source: str, month: str) -> None:
    if not rows:
        raise InputError(f"no billing rows for {month} in {source}",
                         hint="check --month against the export's invoice months")
