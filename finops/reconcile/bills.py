"""FOCUS bill files as one DuckDB view, checked before a cent is summed.

:func:`open_bills` takes Parquet, CSV or gzip CSV files (one or many), checks each one's header
against its FOCUS version, 1.0 to 1.4 (:func:`focus_version`), refuses the same content given twice, and
creates the view ``focus_bills`` with every FOCUS column (plus the ``x_`` GPU columns) cast to its
FOCUS type (money as ``DECIMAL(38, 10)``) and :data:`FILE_COLUMN`, the file each row comes from.
Optional columns a file lacks read as NULL. Nothing is loaded into Python: DuckDB streams the files
when the aggregation runs.

The same bill in two formats or exports has other bytes but the same charges: see
:mod:`finops.reconcile.fingerprint`, which groups by :data:`FILE_COLUMN`.

When a cast fails during that scan, :func:`locate_bad_value` finds the first offending file, row
and column (rows are counted like a spreadsheet: the header is row 1), and
:func:`locate_currency` finds the first row in a second billing currency.

>>> import duckdb
>>> from finops.reconcile.sample_bills import sample_bill_paths
>>> con = duckdb.connect()
>>> files = open_bills(con, sample_bill_paths())
>>> [f.format for f in files], con.execute("SELECT count(*) FROM focus_bills").fetchone()[0]
(['csv', 'csv'], 2000)
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import io
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, TextIO

import duckdb

from ..errors import InputError, Location
from ..focus import ALLOWED_VALUES, MANDATORY, SUCCESSORS, duckdb_schema
from ..limits import bounded_lines, check_stream, read_line
from .bill_checks import CHECKS
from .contract_applied import APPLIED_COLUMN, BAD_CONTRACT_APPLIED
from .parquet_check import check_parquet

__all__ = ["FILE_COLUMN", "FOCUS_VERSIONS", "MANDATORY_BY_VERSION", "REMOVED_IN", "SUCCESSORS", "VIEW", "BillFile",
           "BillFormat", "bill_format", "bill_provenance", "focus_version", "locate_bad_value", "locate_currency",
           "locate_row", "located_errors", "open_bills"]

BillFormat = Literal["parquet", "csv"]

#: The name of the view every reconciliation query reads.
VIEW = "focus_bills"

#: Column of :data:`VIEW`: the position of the row's file in the list :func:`open_bills` returns.
FILE_COLUMN = "bill_file"

#: FOCUS version -> the columns that version added (what tells a file of it from an older one), newest first.
#: Every column the reconciliation reads kept its name from 1.0 to 1.3; the columns an older file lacks read as
#: NULL. 1.4 removed ``ProviderName`` and ``PublisherName`` (:data:`SUCCESSORS` reads them from
#: ``ServiceProviderName``) and made ``InvoiceId`` mandatory (:data:`MANDATORY_BY_VERSION`). Sources: FOCUS 1.1 to
#: 1.4 specifications (https://focus.finops.org/focus-specification/), column "Introduced (version)" notes; the
#: FinOps Foundation's FOCUS 1.0 sample (FOCUS-Sample-Data).
FOCUS_VERSIONS: dict[str, tuple[str, ...]] = {
    "1.4": ("ServiceProviderName",),
    "1.3": ("ServiceProviderName", "HostProviderName", "AllocatedMethodId", "AllocatedResourceId",
            "AllocatedResourceName", "AllocatedTags", "AllocatedMethodDetails", "ContractApplied"),
    "1.2": ("InvoiceId", "BillingAccountType", "SubAccountType", "PricingCurrency", "PricingCurrencyEffectiveCost",
            "PricingCurrencyListUnitPrice", "PricingCurrencyContractedUnitPrice"),
    "1.1": ("ServiceSubcategory", "SkuMeter", "SkuPriceDetails", "CapacityReservationId", "CapacityReservationStatus",
            "CommitmentDiscountQuantity", "CommitmentDiscountUnit"),
    "1.0": (),
}
#: Columns a version removed: a file with any of them is older than that version.
REMOVED_IN: dict[str, tuple[str, ...]] = {"1.4": ("ProviderName", "PublisherName")}
#: The mandatory columns of each version this tool reads (1.0 to 1.3 share :data:`finops.focus.MANDATORY`).
MANDATORY_BY_VERSION: dict[str, tuple[str, ...]] = {
    "1.4": tuple(c for c in MANDATORY if c not in REMOVED_IN["1.4"]) + ("ServiceProviderName", "HostProviderName",
                                                                       "InvoiceId"),
} | {version: MANDATORY for version in ("1.3", "1.2", "1.1", "1.0")}
#: Cell texts read as NULL in a CSV bill: empty, and the literal NULL of SQL dumps (FOCUS-Sample-Data 1.0).
_NULL_TEXTS = ("", "NULL")

#: Names that are case-insensitive where they are used (SQL, codecs, hashlib), kept here so that a change of
#: their case, which changes nothing, is not a mutant (docs/testing.md).
_TEXT_TYPE = "VARCHAR"
_UTF8 = "utf-8"
_UTF8_BOM = "utf-8-sig"  # UTF-8 with the byte-order mark Excel's "CSV UTF-8" writes skipped
#: A CSV bill's bytes as text for Python's csv reader: UTF-8 (a byte-order mark skipped), line ends left to the
#: reader (csv's documented ``newline=""``). Only fields are counted through it (:func:`locate_malformed_row`).
_CSV_TEXT = functools.partial(io.TextIOWrapper, encoding=_UTF8_BOM, newline="")
_DIGEST = "sha256"
#: Session settings of the connection the view lives on: instants in UTC; DuckDB's progress for the caller's
#: bar (query_progress()), never DuckDB's own bar on stdout.
_SESSION = ("SET TimeZone = 'UTC'", "SET enable_progress_bar = true", "SET enable_progress_bar_print = false")
#: Settings of the error-path scan: one thread, so row_number() follows the file order.
_SCAN_SESSION = ("SET threads = 1", "SET TimeZone = 'UTC'")
_UNION = " UNION ALL "
_TRY_CAST = "TRY_CAST"
_CURRENCY_COLUMN = "BillingCurrency"
_SUFFIXES: dict[str, BillFormat] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".gz": "csv"}


@dataclass(frozen=True)
class BillFile:
    """One checked bill file: where it is, how to read it, its columns and their types in the file, and its
    FOCUS text columns that may hold empty text (``empty_text``, read as NULL by :func:`_select`: the Parquet
    text columns whose statistics do not rule it out, :func:`_empty_text_columns`; none in a CSV file, whose
    reader reads an empty field as NULL)."""

    path: Path
    format: BillFormat
    columns: tuple[str, ...]
    types: tuple[str, ...] = ()
    empty_text: frozenset[str] = frozenset()
    version: str = ""

    def reader(self) -> str:
        """The DuckDB table function reading this file.

        CSV is read with a fixed dialect (RFC 4180: comma, double quotes) and the header's names, every
        column as text (cast afterwards, so a bad value can be located), never sniffed: one odd row
        cannot change how the whole file is read.
        """
        if self.format == "parquet":
            return _parquet_reader(self.path)
        columns = ", ".join(f"{_sql_text(name)}: '{_TEXT_TYPE}'" for name in self.columns)
        nulls = ", ".join(f"'{text}'" for text in _NULL_TEXTS)
        return (f"read_csv({_sql_text(str(self.path))}, header = true, auto_detect = false, delim = ',', "
                f"quote = '\"', escape = '\"', nullstr = [{nulls}], columns = {{{columns}}})")

    def stored_types(self) -> dict[str, str]:
        """Column -> its type in the file (none when the file was described without types)."""
        return dict(zip(self.columns, self.types))


def _sql_text(text: str) -> str:
    """``text`` as an SQL string literal (a quote doubled).

    >>> _sql_text("o'brien")
    "'o''brien'"
    """
    return "'" + text.replace("'", "''") + "'"


def _parquet_reader(path: Path) -> str:
    """The DuckDB table function reading the Parquet file at ``path``."""
    return f"read_parquet({_sql_text(str(path))})"


def bill_format(path: Path) -> BillFormat:
    """The format of a bill file from its name.

    >>> bill_format(Path("may.csv.gz")), bill_format(Path("may.parquet"))
    ('csv', 'parquet')
    """
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None or (path.suffix.lower() == ".gz" and not path.name.lower().endswith(".csv.gz")):
        raise InputError(f"cannot read bill file {path.name!r}", where=Location(file=str(path)),
                         hint="give FOCUS bills as .parquet, .csv or .csv.gz files")
    return fmt


def _digest(path: Path) -> str:
    """SHA-256 of the content; of the uncompressed content for gzip, so ``may.csv`` and ``may.csv.gz`` match."""
    try:
        with _open_bytes(path) as handle:
            return hashlib.file_digest(handle, _DIGEST).hexdigest()
    except (OSError, EOFError) as exc:
        raise InputError("cannot read the bill file", where=Location(file=str(path)),
                         hint="check that the file is a FOCUS export in Parquet, CSV or gzip CSV") from exc


def _check_gzip(path: Path) -> int:
    """Inflate a gzip bill whole, streamed, so its checksum and length are verified (DuckDB reads a
    gzip stream without checking them): a damaged or truncated file is an error naming it. Returns the size
    of the content (the bytes inflated)."""
    try:
        with _open_bytes(path) as handle:
            size = check_stream(handle, path)  # lines and total bounded (finops.limits)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"the gzip file is damaged or truncated ({exc})", where=Location(file=str(path)),
                         hint="download or export the bill again") from exc
    return size


def _refuse_repeated_columns(path: Path, columns: tuple[str, ...]) -> None:
    """A column named twice (in any case: SQL names are case-insensitive) has no one meaning: refused."""
    seen: set[str] = set()
    for name in columns:
        if name.lower() in seen:
            raise InputError(f"the header names the column {name} twice", where=Location(file=str(path), row=1,
                                                                                        column=name),
                             hint="keep one column of each name (a bill export names each once)")
        seen.add(name.lower())


def _refuse_duplicates(sizes: dict[Path, int]) -> None:
    """Same content twice would double the month: compare the content sizes (``sizes``: path -> size, of the
    inflated content for gzip) first, hash only equal sizes."""
    by_size: dict[int, list[Path]] = {}
    for path, size in sizes.items():
        by_size.setdefault(size, []).append(path)
    for same_size in by_size.values():
        if len(same_size) == 1:
            continue  # a size of its own: nothing to read
        seen: dict[str, Path] = {}
        for path in same_size:
            digest = _digest(path)
            if digest in seen:
                raise InputError(f"duplicated bill file: same content as {seen[digest]}",
                                 where=Location(file=str(path)),
                                 hint="give each bill file once; a copy would count its charges twice")
            seen[digest] = path


def _open_text(path: Path) -> TextIO:
    return _CSV_TEXT(_open_bytes(path))


def _open_bytes(path: Path) -> BinaryIO:
    """The file's content as bytes: inflated for gzip (gzip.open reads bytes unless told otherwise)."""
    return gzip.open(path) if path.suffix.lower() == ".gz" else path.open("rb")  # type: ignore[return-value]


def _not_utf8(path: Path) -> InputError | None:
    """The first line that is not UTF-8 text (FOCUS CSV is UTF-8), as an error naming file and row."""
    with _open_bytes(path) as handle:
        for number, line in enumerate(bounded_lines(handle, path), start=1):
            try:
                line.decode(_UTF8)
            except UnicodeDecodeError as exc:
                return InputError(f"this row is not UTF-8 text (byte {line[exc.start]:#04x})",
                                  where=Location(file=str(path), row=number),
                                  hint="export the bill as UTF-8, or re-save the CSV with UTF-8 encoding")
    return None


def _header(con: duckdb.DuckDBPyConnection, path: Path, fmt: BillFormat) -> list[tuple[str, str]]:
    """(name, DuckDB type) of each column of the file (every CSV column is text until cast)."""
    unreadable = InputError("cannot read the bill file's header", where=Location(file=str(path), row=1),
                            hint="check that the file is a FOCUS export in Parquet or CSV")
    if fmt == "csv":
        try:  # the first line only: a bad byte further down is located later, with its row
            with _open_bytes(path) as handle:
                first = read_line(handle, path).decode(_UTF8_BOM)  # bounded: finops.limits
            names = next(csv.reader([first]))  # one record, empty for an empty line
        except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
            raise unreadable from exc
        return [(name.strip(), _TEXT_TYPE) for name in names]
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {_parquet_reader(path)}").fetchall()
    except duckdb.Error as exc:
        raise unreadable from exc
    return [(row[0], str(row[1])) for row in rows]


#: The text (BYTE_ARRAY) columns of the Parquet file ``?`` whose statistics show no empty text (:func:`_non_empty_columns`).
_NON_EMPTY_SQL = ("SELECT path_in_schema FROM parquet_metadata(?) WHERE type = 'BYTE_ARRAY' GROUP BY 1 "
                  "HAVING bool_and(COALESCE(stats_null_count = num_values, FALSE) OR COALESCE(stats_min_value <> '', FALSE))")


def _non_empty_columns(con: duckdb.DuckDBPyConnection, path: Path) -> frozenset[str]:
    """Text columns of a Parquet file that hold no empty text, by the statistics in its footer: in every row
    group the column is all NULL or its smallest value (a lower bound of every value, ``min_value`` of the
    Parquet format) is not empty, since the empty text is smaller than any other. Such a column needs no
    ``NULLIF(column, '')`` on each row (see :func:`_select`); a column without statistics keeps it.
    """
    return frozenset(name for (name,) in con.execute(_NON_EMPTY_SQL, [str(path)]).fetchall())


def _empty_text_columns(con: duckdb.DuckDBPyConnection, path: Path, columns: tuple[str, ...]) -> frozenset[str]:
    """The FOCUS text columns of a Parquet file that may hold empty text: all it has but those whose statistics
    rule it out (:func:`_non_empty_columns`)."""
    text = {name for name, kind in duckdb_schema().items() if kind == _TEXT_TYPE}
    return frozenset(name for name in columns if name in text) - _non_empty_columns(con, path)


def open_bills(con: duckdb.DuckDBPyConnection, paths: list[Path], *, strict: bool = True) -> list[BillFile]:
    """Check ``paths`` and create the view :data:`VIEW` over all of them on ``con``.

    With ``strict`` (the default) a query of the view stops on a value :data:`_STRICT` refuses; without it the
    view reads such values as they are, for a caller that checks them itself in its own scan (the reconcile scan
    counts them per charge group, :data:`finops.reconcile.aggregation.BAD_VALUES`, which costs less than a test
    on every row: an unmapped charge's Tags is checked once per group).

    Raises :class:`InputError` for a missing file, an unknown format, a duplicated file, a
    missing mandatory FOCUS column, or a Parquet column stored as the wrong type (naming the file and
    the column).
    """
    if not paths:
        raise InputError("no bill files given", hint="pass FOCUS files with --bills or a source with --from")
    paths = [Path(p) for p in paths]
    for path in paths:
        if not path.is_file():
            raise InputError("bill file not found", where=Location(file=str(path)),
                             hint="check the path; bills are FOCUS .parquet, .csv or .csv.gz files")
    sizes: dict[Path, int] = {}
    for path in paths:
        if path.suffix.lower() == ".gz":
            sizes[path] = _check_gzip(path)
            continue
        if bill_format(path) == "parquet":
            check_parquet(path)  # DuckDB verifies no page checksum: a damaged page would be summed
        sizes[path] = path.stat().st_size
    _refuse_duplicates(sizes)
    for setting in _SESSION:
        con.execute(setting)
    files = []
    for path in paths:
        fmt = bill_format(path)
        header = _header(con, path, fmt)
        columns = tuple(name for name, _ in header)
        _refuse_repeated_columns(path, columns)
        version = focus_version(path, columns)
        bill = BillFile(path, fmt, columns, tuple(kind for _, kind in header),
                        _empty_text_columns(con, path, columns) if fmt == "parquet" else frozenset(), version)
        wrong = _wrong_storage_type(bill)
        if wrong is not None:
            raise wrong
        files.append(bill)
    con.execute(f"CREATE OR REPLACE TEMP VIEW {VIEW} AS "
                + _UNION.join(_select(f, i, strict) for i, f in enumerate(files)))
    return files


def focus_version(path: Path, columns: tuple[str, ...]) -> str:
    """The FOCUS version of a bill from its columns (:data:`FOCUS_VERSIONS`): 1.4 when it has ``ServiceProviderName``
    and none of the columns 1.4 removed (:data:`REMOVED_IN`), else the newest older version whose added columns it
    has, else 1.0. A file without every mandatory column of that version (:data:`MANDATORY_BY_VERSION`) is none of
    them: :class:`InputError` listing all that are missing.

    >>> focus_version(Path("aws-focus-1.0.csv"), ("ServiceSubcategory",) + MANDATORY)
    '1.1'
    >>> focus_version(Path("tool.csv"), MANDATORY_BY_VERSION["1.4"]), focus_version(Path("t.csv"), MANDATORY_BY_VERSION["1.3"] + ("AllocatedTags",))
    ('1.4', '1.3')
    >>> focus_version(Path("old.csv"), tuple(c for c in MANDATORY if c != "EffectiveCost")).message
    Traceback (most recent call last):
    finops.errors.InputError: old.csv, row 1, column EffectiveCost: not a FOCUS 1.0, 1.1, 1.2, 1.3 or 1.4 bill: missing mandatory FOCUS column EffectiveCost. Hint: export the bill as FOCUS 1.0 to 1.4 (1.4 names the provider in ServiceProviderName); mandatory columns are listed in docs/focus.md
    """
    present = set(columns)
    newer = [v for v, removed in REMOVED_IN.items() if not present & set(removed) and present & set(FOCUS_VERSIONS[v])]
    version = newer[0] if newer else next(
        (v for v, added in FOCUS_VERSIONS.items() if v not in REMOVED_IN and present & set(added)), "1.0")
    missing = [name for name in MANDATORY_BY_VERSION[version] if name not in present]
    if missing:
        known = sorted(FOCUS_VERSIONS)
        raise InputError(f"not a FOCUS {', '.join(known[:-1])} or {known[-1]} bill: missing mandatory FOCUS "
                         f"{version if version in REMOVED_IN else ''}{' ' if version in REMOVED_IN else ''}column"
                         f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         where=Location(file=str(path), row=1, column=missing[0]),  # the header row
                         hint=f"export the bill as FOCUS {known[0]} to {known[-1]} (1.4 names the provider in "
                              "ServiceProviderName); mandatory columns are listed in docs/focus.md")
    return version


def bill_provenance(bill: BillFile) -> str:
    """One line of the review's provenance: the file, its FOCUS version and the columns its provider was read from.

    >>> bill_provenance(BillFile(Path("may.csv"), "csv", ("ServiceProviderName", "HostProviderName"), version="1.4"))
    'may.csv: FOCUS 1.4, provider from ServiceProviderName, host from HostProviderName'
    >>> bill_provenance(BillFile(Path("may.csv"), "csv", ("ProviderName",), version="1.2"))
    'may.csv: FOCUS 1.2, provider from ProviderName'
    """
    provider = next(name for name in SUCCESSORS["ProviderName"] if name in bill.columns or name == "ServiceProviderName")
    host = ", host from HostProviderName" if "HostProviderName" in bill.columns else ""
    return f"{bill.path.name}: FOCUS {bill.version}, provider from {provider}{host}"


#: FOCUS type (DuckDB) -> how a Parquet column may be stored and still be read as that type.
_STORAGE: dict[str, tuple[str, ...]] = {
    "DECIMAL": ("DECIMAL", "DOUBLE", "FLOAT", "REAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "VARCHAR", "NULL"),
    "TIMESTAMP": ("TIMESTAMP", "DATE", "VARCHAR", "NULL"),
}
_STORAGE["INTEGER"] = _STORAGE["DECIMAL"]


def _wrong_storage_type(bill: BillFile) -> InputError | None:
    """A Parquet column stored as a type that DuckDB would cast silently but wrongly (a boolean as a
    cost of 0 or 1, a number of seconds as a timestamp), as an error naming file and column. A column
    with no values at all, which pyarrow stores with its null type (DuckDB names it ``"NULL"``), is fine.

    >>> _wrong_storage_type(BillFile(Path("may.parquet"), "parquet", ("BilledCost", "ChargePeriodStart"),
    ...                              ('"NULL"', "BOOLEAN"))).message
    'column ChargePeriodStart is stored as BOOLEAN, not as a timestamp'
    """
    schema = duckdb_schema()
    for name, stored in bill.stored_types().items():
        kind = schema.get(name, _TEXT_TYPE).split("(")[0]
        allowed = _STORAGE.get(kind)
        if allowed is not None and (not stored.replace('"', "").upper().startswith(allowed) or "[" in stored):
            word = kind.lower()
            return InputError(f"column {name} is stored as {stored}, not as a {word}",
                              where=Location(file=str(bill.path), column=name),
                              hint=f"FOCUS column {name} must hold a {word}; export it as one (or as text)")
    return None


def _cast(name: str, kind: str, stored: str, cast: str = "CAST") -> str:
    """SQL reading column ``name`` (stored as ``stored``) as the FOCUS type ``kind``.

    Text timestamps go through TIMESTAMPTZ, so an ISO 8601 offset is honoured and the instant lands in
    UTC (the session's time zone): a plain cast to TIMESTAMP would drop the offset and could put a
    charge in the wrong month. FOCUS asks for UTC with ``Z``; an offset is read, never ignored.

    >>> _cast("ChargePeriodStart", "TIMESTAMP", "VARCHAR")
    'CAST(CAST("ChargePeriodStart" AS TIMESTAMPTZ) AS TIMESTAMP)'
    >>> _cast("BilledCost", "DECIMAL(38, 10)", "DOUBLE", "TRY_CAST")
    'TRY_CAST("BilledCost" AS DECIMAL(38, 10))'
    """
    if kind == "TIMESTAMP" and stored.upper() == _TEXT_TYPE:
        return f'{cast}({cast}("{name}" AS TIMESTAMPTZ) AS TIMESTAMP)'
    return f'{cast}("{name}" AS {kind})'


def _select(bill: BillFile, index: int, strict: bool) -> str:
    """The file's columns cast to FOCUS types, then its position ``index`` as :data:`FILE_COLUMN`; JSON
    columns stored as MAP or STRUCT (as in Parquet exports that keep ``Tags`` as a map) become JSON
    text, so tag rules see ``{"key": "value"}``. Empty Parquet text reads as NULL, as an empty CSV
    field does. Parquet writers such as pyarrow keep ``''``, which is not JSON, is not NULL for
    ``COALESCE`` or ``IS NOT NULL`` in the aggregation, and would make the same charge look different
    in the two formats; a column whose statistics show no empty text is read as it is (0.5-1 s of CPU
    less on a 10 M-row bill, docs/reconcile.md, Speed). With ``strict``, a value :data:`_STRICT` refuses stops
    the query (:func:`_checked`)."""
    found = bill.stored_types()
    reads: dict[str, str] = {}
    for name, kind in duckdb_schema().items():
        if name not in found:
            continue
        if found[name].upper().startswith(("MAP", "STRUCT")):
            reads[name] = f'CAST(to_json("{name}") AS VARCHAR)'
            continue
        read = _cast(name, kind, found[name])
        if name in bill.empty_text:
            read = f"NULLIF({read}, '')"
        reads[name] = _checked(name, read) if strict else read
    parts = []
    for name, kind in duckdb_schema().items():
        stands_for = [reads[other] for other in SUCCESSORS.get(name, (name,)) if other in reads]
        read = stands_for[0] if len(stands_for) == 1 else f"COALESCE({', '.join(stands_for)})" if stands_for else None
        if name == _TAGS and _ALLOCATED_TAGS in reads:
            read = _with_allocated_tags(read or "CAST(NULL AS VARCHAR)", reads[_ALLOCATED_TAGS])
        parts.append(f'{read or f"CAST(NULL AS {kind})"} AS "{name}"')
    parts.append(f"{index} AS {FILE_COLUMN}")
    return f"SELECT {', '.join(parts)} FROM {bill.reader()}"


_TAGS, _ALLOCATED_TAGS = "Tags", "AllocatedTags"


def _with_allocated_tags(tags: str, allocated: str) -> str:
    """A charge's Tags with the tags of the resource a provider allocated it to (FOCUS 1.3 ``AllocatedTags``) laid
    over them (RFC 7396 merge patch): an allocated charge keeps the Tags of the shared cost it was split from and
    carries its own workload's, so a tag rule maps each share of a shared cluster to its plan line.

    >>> _with_allocated_tags("t", "a")
    "CASE WHEN a IS NULL OR a = '' THEN t ELSE CAST(json_merge_patch(COALESCE(NULLIF(t, ''), '{}'), a) AS VARCHAR) END"
    """
    return (f"CASE WHEN {allocated} IS NULL OR {allocated} = '' THEN {tags} "
            f"ELSE CAST(json_merge_patch(COALESCE(NULLIF({tags}, ''), '{{}}'), {allocated}) AS VARCHAR) END")


#: Columns whose values are checked as the scan reads them: SQL that holds for a bad value (``{c}`` is the
#: column) -> what is wrong, from the one list every engine runs (:data:`finops.reconcile.bill_checks.CHECKS`: empty
#: costs, Tags that are no JSON object, closed FOCUS values, ContractApplied). A bad value stops the scan;
#: :func:`locate_bad_value` then names its row.
_STRICT: dict[str, tuple[str, str]] = {check.column: (check.test(), check.wrong) for check in CHECKS}
_CHECK = {check.column: check for check in CHECKS}
_STRICT[APPLIED_COLUMN] = (BAD_CONTRACT_APPLIED, _STRICT[APPLIED_COLUMN][1])  # DuckDB's own form of the check
#: Column of :data:`_STRICT` -> the test the scan makes, per row: :data:`_STRICT`'s, or a cheaper one that holds
#: for the same values or stops on them itself (``json_type`` fails on text that is not JSON), while
#: :func:`locate_bad_value` still names the row with :data:`_STRICT`'s test. Tags are parsed once per charge
#: instead of twice (``json_valid`` then ``json_type``): 1.4 s of CPU on a 10 M-row bill (docs/reconcile.md, Speed).
_SCAN_TEST: dict[str, str] = {"BilledCost": _STRICT["BilledCost"][0], "EffectiveCost": _STRICT["EffectiveCost"][0],
                              "Tags": "{c} <> '' AND json_type({c}) <> 'OBJECT'"}
_SCAN_TEST["AllocatedTags"] = _SCAN_TEST["Tags"]
_SCAN_TEST[APPLIED_COLUMN] = _STRICT[APPLIED_COLUMN][0]
_SCAN_TEST |= {column: _STRICT[column][0] for column in ALLOWED_VALUES}


def _checked(name: str, expression: str) -> str:
    """``expression`` (column ``name`` as read) that stops the scan with an error on a value
    :data:`_STRICT` refuses.

    >>> _checked("EffectiveCost", "x")
    "CASE WHEN x IS NULL THEN error('EffectiveCost is empty; FOCUS requires an amount on every row (0 for none)') ELSE x END"
    """
    if name not in _STRICT:
        return expression
    message = _sql_text(f"{name} {_STRICT[name][1].format()}")
    return f"CASE WHEN {_SCAN_TEST[name].format(c=expression)} THEN error({message}) ELSE {expression} END"


def _first_row(bill: BillFile, column: str, predicate: str) -> tuple[int, str] | None:
    """Spreadsheet row (header = 1) and value of ``column`` in the first row where ``predicate`` (over any of the
    file's columns) holds.

    Error path only: one thread, so ``row_number()`` follows the file order.
    """
    scan = duckdb.connect()
    try:
        for setting in _SCAN_SESSION:
            scan.execute(setting)
        found = scan.execute(
            f'SELECT rn, "{column}" FROM (SELECT row_number() OVER () AS rn, * FROM {bill.reader()})'
            f" WHERE {predicate} ORDER BY rn LIMIT 1").fetchone()
    except duckdb.Error as exc:  # the file itself is damaged (a Parquet page, a compressed block)
        raise InputError(f"cannot read the bill file: {str(exc).splitlines()[0][:200]}",
                         where=Location(file=str(bill.path)),
                         hint="export the bill again; the file is damaged or not a FOCUS export") from exc
    finally:
        scan.close()
    return None if found is None else (int(found[0]) + 1, "" if found[1] is None else str(found[1]))


def locate_row(files: list[BillFile], column: str, predicate: str) -> tuple[BillFile, int, str] | None:
    """The first row of ``files`` where ``predicate`` (SQL over the file's own columns, as text in a CSV file) holds:
    its file, spreadsheet row (header = 1) and the value of ``column`` (error path only)."""
    for bill in files:
        hit = _first_row(bill, column, predicate)
        if hit is not None:
            return bill, hit[0], hit[1]
    return None


def locate_bad_value(files: list[BillFile]) -> InputError | None:
    """The first value :data:`_STRICT` refuses (an empty cost, Tags that are not a JSON object) or that does
    not cast to its FOCUS type, as an error naming file, row and column."""
    schema = duckdb_schema()
    for bill in files:
        for name, (bad, what) in _STRICT.items():
            if name not in bill.columns:
                continue
            hit = _first_row(bill, name, bad.format(c=f'"{name}"'))
            if hit is not None:
                hint = (_CHECK[name].hint(hit[1]) if name in _CHECK
                        else f"fix {name} on this row, or export the bill again")
                return InputError(f"{name} {what.format()}" + (f", got {hit[1][:60]!r}" if hit[1] else ""),
                                  where=Location(file=str(bill.path), row=hit[0], column=name), hint=hint)
        for name in bill.columns:
            kind = schema.get(name)
            if kind is None or kind == _TEXT_TYPE:
                continue
            # read as text: a column stored as a timestamp casts through TIMESTAMPTZ to itself (the scan is in UTC)
            hit = _first_row(bill, name, f'"{name}" IS NOT NULL AND {_cast(name, kind, _TEXT_TYPE, _TRY_CAST)} IS NULL')
            if hit is not None:
                row, value = hit
                word = kind.split("(")[0].lower()
                return InputError(f"value {value[:60]!r} is not a {word}",
                                  where=Location(file=str(bill.path), row=row, column=name),
                                  hint=f"FOCUS column {name} must hold a {word}")
    return None


@contextmanager
def located_errors(files: list[BillFile]) -> Iterator[None]:
    """A query of :data:`VIEW` in the block that stops on a bad value (one :data:`_STRICT` refuses, or one that does
    not cast) raises :class:`InputError` naming its file, row and column (:func:`locate_malformed_row`,
    :func:`locate_bad_value`), else naming the files."""
    try:
        yield
    except duckdb.Error as exc:
        located = locate_malformed_row(files) or locate_bad_value(files)
        if located is not None:
            raise located from exc
        raise InputError(f"cannot read the bills: {str(exc).splitlines()[0][:200]}",
                         where=Location(file=", ".join(str(f.path) for f in files)),
                         hint="check that every file is a FOCUS export") from exc


def locate_malformed_row(files: list[BillFile]) -> InputError | None:
    """The first CSV row that is not UTF-8, or whose number of fields differs from the header's
    (Python's csv reader)."""
    for bill in files:
        if bill.format != "csv":
            continue
        not_utf8 = _not_utf8(bill.path)
        if not_utf8 is not None:
            return not_utf8
        number = 1  # the header's row
        with _open_text(bill.path) as handle:
            try:
                records = csv.reader(bounded_lines(handle, bill.path))
                next(records, None)  # the header, whose names are the columns
                for number, record in enumerate(records, start=2):
                    if len(record) != len(bill.columns):
                        return InputError(f"this row has {len(record)} fields, the header has {len(bill.columns)}",
                                          where=Location(file=str(bill.path), row=number),
                                          hint="a field with a comma or a line break must be in double quotes")
            except csv.Error as exc:
                return InputError(f"malformed CSV: {exc}", where=Location(file=str(bill.path), row=number + 1))
    return None


def locate_currency(files: list[BillFile], currency: str, rated: Iterable[str] = ()) -> InputError | None:
    """The first row billed in a currency that is neither ``currency`` nor one of ``rated`` (those given a
    rate into it), as an error naming file and row."""
    others = sorted(set(rated) - {currency})
    listed = ", ".join(_sql_text(c) for c in [currency, *others])
    for bill in files:
        hit = _first_row(bill, _CURRENCY_COLUMN,
                         f'("{_CURRENCY_COLUMN}" IS NULL OR "{_CURRENCY_COLUMN}" NOT IN ({listed}))')
        if hit is not None:
            row, found = hit
            where = Location(file=str(bill.path), row=row, column="BillingCurrency")
            if not (found or "").strip():  # not a second currency: no currency at all
                return InputError("BillingCurrency is empty; FOCUS requires the billing currency on every row",
                                  where=where, hint="fix BillingCurrency on this row, or export the bill again")
            other = repr(found) if found != found.strip() else found  # ' USD' is not USD: show the space
            message = (f"no rate from {other} into {currency} (rates given for {', '.join(others)})" if others
                       else f"several billing currencies without a rate table: {other} here, {currency} elsewhere")
            return InputError(message, where=where,
                              hint="give a rate into the plan currency (--rate EUR=1.08) or bills in one currency")
    return None
