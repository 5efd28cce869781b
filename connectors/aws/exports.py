"""AWS Data Exports deliveries (CUR 2.0 or FOCUS 1.2) in S3 or a local copy: find and read one month.

Layout (AWS "Understanding export delivery")::

    <prefix>/<export-name>/data/BILLING_PERIOD=YYYY-MM/[<execution-id>/]<export-name>-<n>.parquet|.csv.gz
    <prefix>/<export-name>/metadata/BILLING_PERIOD=YYYY-MM/[<execution-id>/]<export-name>-Manifest.json

The manifest of a delivery lists its data files (``dataFiles``, full ``s3://`` URIs) and ``columns``. A month
is re-delivered as the bill changes: with *overwrite* the manifest and files are replaced (stale parts of an
older, larger delivery may linger), with *create new* each execution gets its own folder. Either way the
newest manifest of the month names the one current delivery, and only its files are read, so nothing is
counted twice. Two different exports under one source would double count, so that is refused.

The store is a narrow interface (:class:`ExportStore`) with two real implementations: S3 through boto3 and
a local folder (a downloaded copy of the bucket prefix).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from finops.errors import InputError, Location, ProviderError
from finops.limits import bounded_lines

__all__ = ["Delivery", "ExportKind", "ExportStore", "LocalExportStore", "S3ExportStore", "find_delivery",
           "iter_record_batches", "open_store", "read_records"]

ExportKind = Literal["cur2", "focus"]
#: a column that only one export kind has -> that kind
KIND_MARKERS: dict[str, ExportKind] = {"line_item_line_item_type": "cur2", "BilledCost": "focus"}


@dataclass(frozen=True)
class StoredObject:
    key: str
    last_modified: datetime


class ExportStore(Protocol):
    """Where an export lives: list objects under the source, read one."""

    url: str

    def objects(self) -> list[StoredObject]: ...

    def read(self, key: str) -> bytes: ...


@dataclass
class S3ExportStore:
    """``s3://bucket/prefix`` through an S3 client (paginated listing, errors translated)."""

    client: Any
    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def objects(self) -> list[StoredObject]:
        from .session import pages

        found = []
        for page in pages(self.client, "s3", "list_objects_v2", Bucket=self.bucket, Prefix=self.prefix):
            found.extend(StoredObject(o["Key"], o["LastModified"]) for o in page.get("Contents", []))
        return found

    def read(self, key: str) -> bytes:
        from .session import translated

        with translated("s3", "get_object", self.client):
            return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()


@dataclass
class LocalExportStore:
    """A local folder holding a copy of the export prefix (keys are paths relative to it)."""

    root: Path

    @property
    def url(self) -> str:
        return str(self.root)

    def files(self) -> list[Path]:
        """Every file of the copy, sorted."""
        if not self.root.is_dir():
            raise InputError(f"export folder {self.root} does not exist",
                             hint="pass s3://BUCKET/PREFIX or a folder with a downloaded export")
        return [p for p in sorted(self.root.rglob("*")) if p.is_file()]

    def objects(self) -> list[StoredObject]:
        return [StoredObject(p.relative_to(self.root).as_posix(), datetime.fromtimestamp(p.stat().st_mtime, tz=UTC))
                for p in self.files()]

    def read(self, key: str) -> bytes:
        return (self.root / key).read_bytes()


def open_store(source: str, s3_client: Any = None) -> ExportStore:
    """``s3://bucket/prefix`` (``s3_client`` made on demand by the caller) or a local folder."""
    if source.startswith("s3://"):
        bucket, _, prefix = source[5:].partition("/")
        if not bucket:
            raise InputError(f"no bucket in {source!r}", hint="use s3://BUCKET/PREFIX")
        return S3ExportStore(s3_client, bucket, prefix)
    return LocalExportStore(Path(source))


@dataclass(frozen=True)
class Delivery:
    """The current delivery of one month: its manifest, the data files it lists, and the export kind."""

    month: str
    manifest_key: str
    data_keys: tuple[str, ...]
    kind: ExportKind
    execution_id: str


def _kind(columns: list[str], where: str) -> ExportKind:
    for column, kind in KIND_MARKERS.items():
        if column in columns:
            return kind
    raise InputError(f"{where} is neither a CUR 2.0 nor a FOCUS export (no {' or '.join(KIND_MARKERS)} column)",
                     hint="create the export in AWS Data Exports with the CUR 2.0 or FOCUS 1.2 table")


def _resolve(uri: str, keys: set[str]) -> str | None:
    """The stored key a manifest URI names: the URI's path, or the longest stored key it ends with."""
    path = uri[5:].partition("/")[2] if uri.startswith("s3://") else uri
    if path in keys:
        return path
    matches = [k for k in keys if path.endswith("/" + k)]
    return max(matches, key=len) if matches else None


def find_delivery(store: ExportStore, month: str) -> Delivery:
    """The newest manifest of ``month`` and its data files; errors say what is wrong and what to do."""
    objects = store.objects()
    pattern = re.compile(rf"(^|/)metadata/BILLING_PERIOD={re.escape(month)}/([^/]+/)?[^/]*Manifest\.json$")
    manifests = [o for o in objects if pattern.search(o.key)]
    if not manifests:
        raise InputError(f"no Data Exports manifest for {month} under {store.url}",
                         hint="point --source at the export's S3 prefix (the folder holding <export-name>/metadata/)")
    exports = sorted({m.key.rpartition("metadata/BILLING_PERIOD=")[0] or "." for m in manifests})
    if len(exports) > 1:
        raise InputError(f"several exports under {store.url}: {', '.join(exports)}",
                         hint="point --source at one export, so no cost is counted twice")
    newest = max(manifests, key=lambda o: (o.last_modified, o.key))
    try:
        manifest = json.loads(store.read(newest.key))
    except json.JSONDecodeError as exc:
        raise ProviderError(f"manifest {newest.key} is not valid JSON: {exc}",
                            hint="the delivery may be in progress; try again later") from None
    keys = {o.key for o in objects}
    data_keys = []
    for uri in manifest.get("dataFiles", []):
        key = _resolve(uri, keys)
        if key is None:
            raise ProviderError(f"manifest {newest.key} lists {uri}, which is not in {store.url}",
                                hint="the delivery may be in progress; try again later")
        data_keys.append(key)
    if not data_keys:
        raise ProviderError(f"manifest {newest.key} lists no data files")
    columns = [c.get("name", "") for c in manifest.get("columns", []) if isinstance(c, Mapping)]
    if not columns:  # an older or hand-made manifest: look at the first file's header instead
        first = read_records(store, data_keys[0])
        columns = list(first[0]) if first else []
    kind = _kind(columns, newest.key)
    return Delivery(month, newest.key, tuple(data_keys), kind, str(manifest.get("executionId", "")))


def read_records(store: ExportStore, key: str) -> list[dict[str, Any]]:
    """All rows of one data file (Parquet, gzip CSV or CSV) as dicts."""
    return [row for batch in iter_record_batches(store, key) for row in batch]


def iter_record_batches(store: ExportStore, key: str, batch_size: int = 50_000) -> Iterator[list[dict[str, Any]]]:
    """The rows of one data file in batches of at most ``batch_size`` dicts, so a large export is never
    held in memory as Python objects all at once (the compressed file itself is)."""
    data = store.read(key)
    if data[:4] == b"PAR1":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            for batch in pq.ParquetFile(io.BytesIO(data)).iter_batches(batch_size=batch_size):
                yield batch.to_pylist()
        except (pa.ArrowException, OSError) as error:
            raise _damaged(key, error) from error
        return
    raw = gzip.GzipFile(fileobj=io.BytesIO(data)) if data[:2] == b"\x1f\x8b" else io.BytesIO(data)
    text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
    batch: list[dict[str, Any]] = []
    try:
        for row in csv.DictReader(bounded_lines(text, key)):  # finops.limits: each line bounded
            batch.append(row)
            if len(batch) == batch_size:
                yield batch
                batch = []
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error, csv.Error) as error:
        raise _damaged(key, error) from error
    if batch:
        yield batch


def _damaged(key: str, error: Exception) -> InputError:
    return InputError(f"data file is damaged or neither Parquet nor UTF-8 CSV ({type(error).__name__})",
                      where=Location(file=key), hint="download or export the file again")
