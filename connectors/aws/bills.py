"""``pull_bills``: AWS bills for one or more months -> one FOCUS 1.2 Parquet file (with the GPU columns).

Sources:

- ``s3://BUCKET/PREFIX``: an AWS Data Exports CUR 2.0 or FOCUS 1.2 export (Parquet or gzip CSV), read
  through its manifest (:mod:`connectors.aws.exports`), mapped by :mod:`connectors.aws.cur` or
  :mod:`connectors.aws.focus_export`;
- a local folder holding a downloaded copy of such a prefix;
- ``ce`` (or ``cost-explorer``): Cost Explorer, the light alternative (:mod:`connectors.aws.cost_explorer`).

Export files are read, mapped and written in batches into a temporary file that replaces ``out`` only
when every month succeeded, so a failure part-way writes nothing and memory stays bounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from connectors.focus_table import FocusParquetWriter
from finops.depreciation import month_index, month_label
from finops.errors import InputError, Location
from finops.files import inputs_kept

from .cost_explorer import cost_explorer_rows, fetch_cost_and_usage
from .cur import GpuOf, focus_rows_from_cur
from .exports import LocalExportStore, find_delivery, iter_record_batches, open_store
from .focus_export import focus_rows_from_focus
from .mapping import CUR_REQUIRED_COLUMNS, FOCUS_REQUIRED_COLUMNS
from .session import AwsSession

__all__ = ["COST_EXPLORER_SOURCES", "months", "pull_bills"]

COST_EXPLORER_SOURCES = ("ce", "cost-explorer")


def months(text: str) -> list[str]:
    """The months of ``YYYY-MM``, ``YYYY-MM..YYYY-MM`` (inclusive) or a comma-separated list.

    >>> months("2025-11..2026-02"), months("2026-05,2026-03")
    (['2025-11', '2025-12', '2026-01', '2026-02'], ['2026-03', '2026-05'])
    """
    if ".." in text:
        first, _, last = text.partition("..")
        start, end = month_index(first), month_index(last)
        if end < start:
            raise InputError(f"month range {text!r} ends before it starts")
        indexes = list(range(start, end + 1))
    else:
        indexes = sorted({month_index(part) for part in text.split(",") if part.strip()})
    if not indexes:
        raise InputError("no month given", hint="e.g. --month 2026-05")
    return [month_label(i) for i in indexes]


def _write_export_month(store: Any, month: str, gpu_of: GpuOf, writer: FocusParquetWriter) -> None:
    delivery = find_delivery(store, month)
    mapper, required = ((focus_rows_from_cur, CUR_REQUIRED_COLUMNS) if delivery.kind == "cur2"
                        else (focus_rows_from_focus, FOCUS_REQUIRED_COLUMNS))
    for key in delivery.data_keys:
        first_row = 1
        for batch in iter_record_batches(store, key):
            missing = [column for column in required if column not in batch[0]]
            if missing:  # a Data Export can leave columns out; without these the costs would read as 0
                raise InputError(f"the export lacks {', '.join(missing)}", where=Location(file=key),
                                 hint="edit the export in AWS Data Exports to include every column of the table")
            writer.write(mapper(batch, gpu_of=gpu_of, file=key, first_row=first_row))
            first_row += len(batch)


def pull_bills(source: str, month: str, out: str | Path, *, gpu_of: GpuOf, session: AwsSession | None = None) -> Path:
    """Read ``month`` (or a range) from ``source`` and write FOCUS Parquet to ``out``; returns ``out``.

    Export files are read and written in batches (bounded memory); the output appears only when every
    month is complete."""
    session = session or AwsSession()
    wanted = months(month)
    if source.strip().lower() in COST_EXPLORER_SOURCES:
        client = session.client("ce", "us-east-1")
        with FocusParquetWriter(out) as writer:
            for m in wanted:
                writer.write(cost_explorer_rows(*fetch_cost_and_usage(client, m), gpu_of=gpu_of))
        return writer.out
    store = open_store(source, session.client("s3") if source.startswith("s3://") else None)
    # A local copy's files are inputs of the run: --out naming one of them (a data file of the export) is refused.
    kept = {path: f"--source {source}" for path in store.files()} if isinstance(store, LocalExportStore) else {}
    with inputs_kept(kept), FocusParquetWriter(out) as writer:
        for m in wanted:
            _write_export_month(store, m, gpu_of, writer)
    return writer.out
