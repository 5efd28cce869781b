"""finops/reconcile/parquet_check.py called directly: which damage it refuses, and the message, column, row
group and hint it names. Each damaged file is built here byte by byte from a known-good one; the expected
message is worked from the bytes changed (the row group, the footer's figures), not read from the code."""

from __future__ import annotations

import re
import struct
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from finops.errors import InputError
from finops.reconcile.parquet_check import CHECK_ENV, check_parquet

HINT = "export the bill again (or copy it again); the file is damaged and its amounts cannot be trusted"
#: rows per row group: three groups of different sizes, so a row group's number and row count are its own
GROUP_ROWS = (1000, 1100, 1200)


def _groups(column: str) -> list[list[float]]:
    """Per row group, cost values 1.00, 1.01, ... distinct across groups and columns (no value repeats)."""
    offset = {"BilledCost": 0, "EffectiveCost": 50_000}[column]
    start = 0
    groups = []
    for rows in GROUP_ROWS:
        groups.append([(offset + start + i + 100) / 100 for i in range(rows)])
        start += rows
    return groups


def _write(path: Path, *, checksums: bool, statistics: bool = True, extra: dict | None = None) -> Path:
    """A bill of three row groups (BilledCost, EffectiveCost as PLAIN doubles, ServiceName as text)."""
    schema = pa.schema([("BilledCost", pa.float64()), ("EffectiveCost", pa.float64()), ("ServiceName", pa.string())]
                       + [(name, array.type) for name, array in (extra or {}).items()])
    with pq.ParquetWriter(path, schema, compression="none", use_dictionary=False, write_page_checksum=checksums,
                          write_statistics=statistics) as writer:
        start = 0
        for group, rows in enumerate(GROUP_ROWS):
            columns = {"BilledCost": _groups("BilledCost")[group], "EffectiveCost": _groups("EffectiveCost")[group],
                       "ServiceName": [f"service-{group}-{i}" for i in range(rows)]}
            columns.update({name: array.slice(start, rows) for name, array in (extra or {}).items()})
            writer.write_table(pa.table(columns, schema=schema))
            start += rows
    return path


def _flip(path: Path, needle: bytes, offset: int, mask: int) -> None:
    """XOR one byte at ``offset`` from the only occurrence of ``needle`` in the file."""
    data = bytearray(path.read_bytes())
    assert data.count(needle) == 1
    data[data.index(needle) + offset] ^= mask
    path.write_bytes(bytes(data))


def _refused(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        check_parquet(path)
    return caught.value


def _double(value: float) -> bytes:
    return struct.pack("<d", value)


def test_a_page_that_fails_its_checksum_names_its_column(tmp_path):
    bill = _write(tmp_path / "bill.parquet", checksums=True)
    value = _groups("EffectiveCost")[2][7]  # row group 2, the last
    _flip(bill, _double(value), 0, 0x01)  # the lowest mantissa bit: still a plausible amount
    error = _refused(bill)
    assert error.message.startswith("the Parquet file is damaged in column EffectiveCost: "), error.message
    assert error.where.file == str(bill) and error.where.column == "EffectiveCost"
    assert error.hint == HINT


def test_a_value_outside_its_row_groups_footer_range_names_the_group_and_both_ranges(tmp_path):
    bill = _write(tmp_path / "bill.parquet", checksums=False)
    low, high = _groups("BilledCost")[1][0], _groups("BilledCost")[1][-1]  # 10.00 .. 20.99
    target = _groups("BilledCost")[1][5]
    _flip(bill, _double(target), 7, 0x08)  # sign-preserving exponent bit: 10.05 x 2^128
    damaged = struct.unpack("<d", bytes([*_double(target)[:7], _double(target)[7] ^ 0x08]))[0]
    error = _refused(bill)
    assert error.message == (f"the Parquet file is damaged: row group 1 of column BilledCost holds values from "
                             f"{low} to {damaged} where the footer records {low} to {high}"), error.message
    assert error.where.file == str(bill) and error.where.column == "BilledCost" and error.hint == HINT


def test_a_decimal_amount_outside_its_footer_range_is_refused(tmp_path):
    """Bills exported from BigQuery store NUMERIC amounts as Parquet decimals (big-endian two's complement)."""
    rows = sum(GROUP_ROWS)
    amounts = pa.array([Decimal(1_193_046 + i).scaleb(-2) for i in range(rows)], pa.decimal128(18, 2))
    bill = _write(tmp_path / "bill.parquet", checksums=False, extra={"ListCost": amounts})
    unscaled = 1_193_046 + GROUP_ROWS[0] + 3  # row group 1, its fourth row
    _flip(bill, unscaled.to_bytes(8, "big")[-4:], -1, 0x40)  # the byte above the value's three low bytes
    error = _refused(bill)
    assert error.message.startswith("the Parquet file is damaged: row group 1 of column ListCost holds values from "
                                    ), error.message
    assert error.where.column == "ListCost"


def _set_row_group_rows(path: Path, group: int, rows: int) -> None:
    """Rewrite RowGroup.num_rows of one row group in the footer (Thrift compact: field 3, i64 zigzag varint,
    right after total_byte_size), leaving every column chunk's own value count as written."""
    data = bytearray(path.read_bytes())
    length = struct.unpack("<i", data[-8:-4])[0]
    start = len(data) - 8 - length

    def varint(n: int) -> bytes:
        n, out = n << 1, bytearray()  # zigzag of a non-negative number
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    old, new = varint(GROUP_ROWS[group]), varint(rows)
    assert len(old) == len(new)
    footer = bytes(data[start:len(data) - 8])
    # a ColumnMetaData.num_values is the same field header after codec (0x15 0x00); RowGroup.num_rows is not
    hits = [m.start() for m in re.finditer(re.escape(b"\x16" + old), footer) if footer[m.start() - 2:m.start()]
            != b"\x15\x00"]
    assert len(hits) == 1, hits
    data[start + hits[0] + 1:start + hits[0] + 1 + len(new)] = new
    path.write_bytes(bytes(data))
    assert pq.ParquetFile(path).metadata.row_group(group).num_rows == rows
    assert pq.ParquetFile(path).metadata.row_group(group).column(0).num_values == GROUP_ROWS[group]


def test_a_row_group_holding_fewer_rows_than_its_footer_records_is_refused(tmp_path):
    bill = _write(tmp_path / "bill.parquet", checksums=True)
    _set_row_group_rows(bill, 1, GROUP_ROWS[1] + 1)
    error = _refused(bill)
    assert error.message == (f"the Parquet file is damaged: row group 1 of column BilledCost holds "
                             f"{GROUP_ROWS[1]} rows where the footer records {GROUP_ROWS[1] + 1}"), error.message
    assert error.where.file == str(bill) and error.where.column == "BilledCost" and error.hint == HINT


def test_a_file_that_is_not_parquet_names_no_column(tmp_path):
    bill = tmp_path / "bill.parquet"
    bill.write_text("BilledCost\n1.0\n")
    error = _refused(bill)
    assert error.message == ("the Parquet file is damaged: Parquet magic bytes not found in footer. Either the file "
                             "is corrupted or this is not a parquet file.")
    assert error.where.file == str(bill) and error.where.column is None and error.hint == HINT


def test_a_column_name_damaged_in_the_footer_is_refused_not_raised(tmp_path):
    bill = _write(tmp_path / "bill.parquet", checksums=True)
    data = bytearray(bill.read_bytes())
    footer = len(data) - 8 - struct.unpack("<i", data[-8:-4])[0]
    data[data.index(b"ServiceName", footer)] = 0x90  # not UTF-8
    bill.write_bytes(bytes(data))
    error = _refused(bill)
    assert error.message.startswith("the Parquet file is damaged: 'utf-8' codec can't decode byte 0x90"), error.message
    assert error.where.column is None


def test_a_long_reason_is_cut_at_160_characters(tmp_path):
    """A file gone between listing and reading: the reader's reason holds its (long) path."""
    bill = tmp_path / ("a-bill-exported-under-a-long-name-" * 6 + ".parquet")
    with pytest.raises(OSError) as reader:  # what pyarrow itself says of the file
        pq.ParquetFile(bill)
    reason = str(reader.value).splitlines()[0]
    assert len(reason) > 160
    error = _refused(bill)
    assert error.message == f"the Parquet file is damaged: {reason[:160]}"


@pytest.mark.parametrize("column", [
    pa.array([float("nan")] * sum(GROUP_ROWS)),  # no minimum or maximum recorded, no nulls
    pa.array([None] * sum(GROUP_ROWS), pa.float64()),  # nulls only
])
def test_a_column_whose_footer_records_no_range_is_read_and_not_compared(tmp_path, column):
    check_parquet(_write(tmp_path / "bill.parquet", checksums=False, extra={"ConsumedQuantity": column}))  # a figure column: read


def test_a_file_written_without_statistics_is_read(tmp_path):
    check_parquet(_write(tmp_path / "bill.parquet", checksums=True, statistics=False))


def test_text_columns_are_checked_only_when_asked(tmp_path, monkeypatch):
    bill = _write(tmp_path / "bill.parquet", checksums=True)
    _flip(bill, b"service-2-17\x0c", 0, 0x20)  # a damaged ServiceName page
    check_parquet(bill)  # the default reads the amounts only
    monkeypatch.setenv(CHECK_ENV, " ")  # blank is the default too
    check_parquet(bill)
    monkeypatch.setenv(CHECK_ENV, " FULL ")
    error = _refused(bill)
    assert error.message.startswith("the Parquet file is damaged in column ServiceName: ")
    assert error.where.column == "ServiceName"


def test_an_unknown_mode_is_refused_with_the_modes_there_are(tmp_path, monkeypatch):
    monkeypatch.setenv(CHECK_ENV, "some")
    error = _refused(_write(tmp_path / "bill.parquet", checksums=True))
    assert error.message == "FINOPS_PARQUET_CHECK='some' is not one of full, amounts"
    assert error.hint == ("unset FINOPS_PARQUET_CHECK to check the amounts, or set it to full to check every "
                          "column")
