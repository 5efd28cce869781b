"""Bounds on what one input file can make the tool hold or do: the length of a line, the size of what a
compressed file inflates to. A file past a bound is an :class:`~finops.errors.InputError` naming it (and
the row), raised before the memory is spent; docs/durability.md states the figures.

Every line the tool reads itself (CSV headers and rows read by Python, offer files, usage and mix CSVs)
goes through :func:`bounded_lines` or :func:`read_line`; every inflation into memory through
:func:`inflate`; a gzip bill, streamed, is checked by :func:`check_stream` (its lines and its total); every
JSON file through :func:`json_document`, which holds its nesting to what the parser can read.

>>> import io
>>> [len(line) for line in bounded_lines(io.BytesIO(b"a,b\\n1,2\\n"), "bill.csv")]
[4, 4]
>>> list(bounded_lines(io.BytesIO(b"x" * (MAX_LINE_BYTES + 1)), "bill.csv"))
Traceback (most recent call last):
...
finops.errors.InputError: bill.csv, row 1: this line is longer than 2 MiB...
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, AnyStr, BinaryIO, Protocol

from .errors import InputError, Location

__all__ = ["MAX_INFLATED_BYTES", "MAX_LINE_BYTES", "MAX_STREAMED_BYTES", "bounded_lines", "check_stream",
           "inflate", "json_document", "read_line"]

#: The longest line read: 2 MiB, DuckDB's own limit for a CSV line (``max_line_size``), so a bill that one
#: reader takes the other takes too. A FOCUS row is a few kB; a header of every FOCUS 1.2 column about 1 kB.
MAX_LINE_BYTES = 2 * 1024 * 1024
#: The most a compressed file may inflate to when it is inflated into memory (price books, saved Prometheus
#: answers, export manifests): 512 MiB, about 30 times the largest such file the tool writes or bundles.
MAX_INFLATED_BYTES = 512 * 1024 * 1024
#: The most a gzip bill may inflate to, streamed (never held whole): 64 GiB, about 130 M FOCUS rows;
#: ``FINOPS_MAX_INFLATED_GIB`` raises it for a larger bill.
MAX_STREAMED_BYTES = 64 * 1024 ** 3

_SPLIT_HINT = ("a bill, CSV or offer file has one record a line; check that this is the file meant, not "
               "a damaged or a crafted one")


class _Lines(Protocol[AnyStr]):
    def readline(self, size: int = -1, /) -> AnyStr: ...


def read_line(handle: _Lines[AnyStr], file: str | Path, row: int = 1) -> AnyStr:
    """The next line of ``handle`` (bytes or text), at most :data:`MAX_LINE_BYTES` long; a longer one is an
    :class:`InputError` naming ``file`` and ``row`` (counted from 1), read no further than the bound."""
    line = handle.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise InputError(f"this line is longer than {MAX_LINE_BYTES // 1024 // 1024} MiB (the longest read)",
                         where=Location(file=str(file), row=row), hint=_SPLIT_HINT)
    return line


def bounded_lines(handle: _Lines[AnyStr], file: str | Path, *, first_row: int = 1) -> Iterator[AnyStr]:
    """The lines of ``handle``, each through :func:`read_line` (for ``csv.reader``, ``enumerate``...)."""
    row = first_row
    while line := read_line(handle, file, row):
        yield line
        row += 1


def inflate(raw: bytes, file: str | Path, *, limit: int | None = None) -> bytes:
    """``raw`` gzip data inflated, at most ``limit`` bytes (default :data:`MAX_INFLATED_BYTES`); more is an
    :class:`InputError` naming ``file``.

    >>> inflate(gzip.compress(b"abc"), "a.gz")
    b'abc'
    >>> inflate(gzip.compress(b"0" * 2000), "a.gz", limit=1000)
    Traceback (most recent call last):
    ...
    finops.errors.InputError: a.gz: this file inflates to more than 1000 bytes...
    """
    limit = MAX_INFLATED_BYTES if limit is None else limit
    with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"this file inflates to more than {_size(limit)}", where=Location(file=str(file)),
                         hint="a compressed file this large is damaged or crafted; give the file meant")
    return data


def json_document(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``; a document nested deeper than the parser reads (Python's recursion limit, about 1,000
    levels: every JSON file the tool reads nests fewer than 10) is a :class:`json.JSONDecodeError` like any other
    malformed document, which its reader reports naming the file, instead of a ``RecursionError``. A byte-order
    mark before the document (a file saved by a Windows editor) is skipped, as ``json.loads`` does for bytes.

    >>> json_document('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> json_document('\ufeff{"a": 1}')
    {'a': 1}
    >>> json_document("[" * 100_000 + "]" * 100_000)
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: nested deeper than about 1,000 levels, more than a file of this tool holds: line 1 column 1 (char 0)
    """
    if isinstance(text, str):
        text = text.removeprefix("\ufeff")  # a byte-order mark, as Windows editors save UTF-8: not part of the JSON
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested deeper than about 1,000 levels, more than a file of this tool holds",
                                   "", 0) from None


def streamed_limit() -> int:
    """:data:`MAX_STREAMED_BYTES`, or ``FINOPS_MAX_INFLATED_GIB`` GiB when set."""
    value = os.environ.get("FINOPS_MAX_INFLATED_GIB", "").strip()
    try:
        return int(float(value) * 1024 ** 3) if value else MAX_STREAMED_BYTES
    except ValueError:
        raise InputError(f"FINOPS_MAX_INFLATED_GIB must be a number of GiB, got {value!r}") from None


def check_stream(handle: BinaryIO, file: str | Path) -> int:
    """Read an inflating stream to its end, in chunks, holding its lines to :data:`MAX_LINE_BYTES` and its
    total to :func:`streamed_limit` (an :class:`InputError` naming ``file`` and, for a line, its row); the
    stream's own checks (gzip: CRC-32 and length) run as it ends. Returns the bytes inflated."""
    limit = streamed_limit()
    size = run = 0
    rows = 1
    while chunk := handle.read1(1 << 20):  # type: ignore[attr-defined]
        size += len(chunk)
        last = chunk.rfind(b"\n")
        if last < 0:
            run += len(chunk)
        else:
            rows += chunk.count(b"\n")
            run = len(chunk) - last - 1
        if run > MAX_LINE_BYTES:
            raise InputError(f"this line is longer than {MAX_LINE_BYTES // 1024 // 1024} MiB (the longest read)",
                             where=Location(file=str(file), row=rows), hint=_SPLIT_HINT)
        if size > limit:
            raise InputError(f"this file inflates to more than {_size(limit)}", where=Location(file=str(file)),
                             hint="set FINOPS_MAX_INFLATED_GIB for a larger bill, or split it by month")
    return size


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


