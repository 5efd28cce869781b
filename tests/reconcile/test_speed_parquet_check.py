"""The Parquet check's DuckDB pass (finops/reconcile/parquet_check.py, ``verified_without_checksums``): which files
it vouches for alone, which it hands to the pyarrow pass, and that a damaged file handed over is still refused
with the pyarrow pass's message. Files are written here by pyarrow (row groups, checksums and statistics chosen)
and by DuckDB's own COPY (no checksums, like the benchmark's fleet bill); damage is made byte by byte and the
expected ranges are worked from the values written."""

from __future__ import annotations

import struct
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from finops.errors import InputError
from finops.reconcile import parquet_check
from finops.reconcile.parquet_check import check_parquet, may_carry_checksum, verified_without_checksums

#: rows per row group of the files below
GROUP = 500


def _costs(rows: int) -> list[float]:
    """Distinct costs 1.00, 1.01, ... (no value repeats, so a byte pattern is found once)."""
    return [(100 + i) / 100 for i in range(rows)]


def _write(path: Path, groups: list[int], *, checksums: bool = False, dictionary: bool = False,
           statistics: bool = True) -> Path:
    """BilledCost (PLAIN doubles), ChargePeriodStart (timestamps), ServiceName (text) in row groups of ``groups`` rows."""
    rows = sum(groups)
    table = pa.table({"BilledCost": _costs(rows),
                      "ChargePeriodStart": pa.array([i * 3_600_000_000 for i in range(rows)], pa.timestamp("us")),
                      "ServiceName": [f"service-{i % 3}" for i in range(rows)]})
    with pq.ParquetWriter(path, table.schema, compression="none", use_dictionary=dictionary,
                          write_page_checksum=checksums, write_statistics=statistics) as writer:
        start = 0
        for size in groups:
            writer.write_table(table.slice(start, size))
            start += size
    return path


def _pyarrow_forbidden(monkeypatch) -> None:
    def forbidden(path: Path, mode: str) -> None:
        raise AssertionError(f"the pyarrow pass read {path} ({mode})")
    monkeypatch.setattr(parquet_check, "_check_with_pyarrow", forbidden)


@pytest.mark.parametrize("groups", [[GROUP] * 3, [GROUP, GROUP, GROUP - 1], [GROUP, GROUP - 1], [GROUP], [1]],
                         ids=["alike", "last shorter", "two, last shorter", "one group", "one row"])
def test_a_sound_file_without_checksums_is_vouched_for_without_pyarrow(tmp_path, monkeypatch, groups):
    bill = _write(tmp_path / "bill.parquet", groups)
    _pyarrow_forbidden(monkeypatch)
    assert verified_without_checksums(bill)
    check_parquet(bill)


def test_a_fleet_bill_written_by_duckdb_is_vouched_for(tmp_path, monkeypatch):
    """DuckDB's COPY writes no page checksum and dictionary pages for repeated values (row groups of 2,048 rows,
    its least, and a last one of 904)."""
    from finops.reconcile.fleet_bill import fleet_bill_sql

    bill = tmp_path / "fleet.parquet"
    duckdb.connect().execute(fleet_bill_sql(bill, rows=5000, resources=40).replace(
        "ROW_GROUP_SIZE 122880", "ROW_GROUP_SIZE 1024"))
    assert pq.ParquetFile(bill).metadata.num_row_groups == 3
    _pyarrow_forbidden(monkeypatch)
    assert verified_without_checksums(bill)


@pytest.mark.parametrize("groups, why", [
    ([GROUP, GROUP + 1, GROUP], "a row group longer than the first"),
    ([GROUP, GROUP - 1, GROUP], "a row group shorter than the first but not the last"),
    ([GROUP, GROUP + 1], "the last row group longer than the first"),
])
def test_row_groups_unlike_the_first_go_to_pyarrow(tmp_path, groups, why):
    bill = _write(tmp_path / "bill.parquet", groups)
    assert not verified_without_checksums(bill), why
    check_parquet(bill)  # sound: the pyarrow pass accepts it


@pytest.mark.parametrize("dictionary", [False, True], ids=["plain pages", "dictionary pages"])
def test_a_file_with_page_checksums_goes_to_pyarrow(tmp_path, dictionary):
    bill = _write(tmp_path / "bill.parquet", [GROUP] * 2, checksums=True, dictionary=dictionary)
    assert not verified_without_checksums(bill)
    check_parquet(bill)


def test_page_checksums_on_the_figure_columns_alone_go_to_pyarrow(tmp_path):
    """Only the figure columns' pages are looked at, so a file of nothing else is sent on by them."""
    bill = tmp_path / "bill.parquet"
    pq.write_table(pa.table({"BilledCost": _costs(GROUP), "EffectiveCost": _costs(GROUP)}), bill,
                   write_page_checksum=True)
    assert not verified_without_checksums(bill)


def test_a_file_of_no_row_group_has_nothing_to_read(tmp_path, monkeypatch):
    bill = tmp_path / "bill.parquet"
    pq.ParquetWriter(bill, pa.schema([("BilledCost", pa.float64())])).close()
    assert pq.ParquetFile(bill).metadata.num_row_groups == 0
    _pyarrow_forbidden(monkeypatch)
    assert verified_without_checksums(bill)


def test_a_file_without_statistics_is_read_and_vouched_for(tmp_path, monkeypatch):
    bill = _write(tmp_path / "bill.parquet", [GROUP] * 2, statistics=False)
    _pyarrow_forbidden(monkeypatch)
    check_parquet(bill)


def test_a_file_without_figure_columns_has_nothing_to_check(tmp_path, monkeypatch):
    bill = tmp_path / "bill.parquet"
    pq.write_table(pa.table({"ServiceName": ["a", "b"]}), bill)
    _pyarrow_forbidden(monkeypatch)
    assert verified_without_checksums(bill)


def _flip_exponent(path: Path, value: float) -> None:
    """0x40 in the last byte of a PLAIN double -> 0x00: ``value`` (2 to 32) becomes a tiny number below any minimum."""
    data = bytearray(path.read_bytes())
    needle = struct.pack("<d", value)
    assert data.count(needle) == 1
    data[data.index(needle) + 7] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("row", [GROUP + 7, 150, 3 * GROUP - 2], ids=["middle group", "first group", "last group"])
def test_a_value_outside_its_row_groups_range_is_handed_over_and_refused(tmp_path, row):
    bill = _write(tmp_path / "bill.parquet", [GROUP] * 3)
    value = _costs(3 * GROUP)[row]
    _flip_exponent(bill, value)
    raw = bytearray(struct.pack("<d", value))
    raw[7] ^= 0x40
    (damaged,) = struct.unpack("<d", bytes(raw))
    assert 0 < damaged < 1e-300
    assert not verified_without_checksums(bill)
    with pytest.raises(InputError) as caught:
        check_parquet(bill)
    group = row // GROUP
    values = sorted([damaged if i == row else v for i, v in enumerate(_costs(3 * GROUP))][group * GROUP:(group + 1) * GROUP])
    recorded = _costs(3 * GROUP)[group * GROUP:(group + 1) * GROUP]
    assert caught.value.message == (f"the Parquet file is damaged: row group {group} of column BilledCost holds values "
                                    f"from {values[0]} to {values[-1]} where the footer records {recorded[0]} to "
                                    f"{recorded[-1]}")


def _set_last_group_rows(path: Path, old: int, new: int) -> None:
    """Rewrite the last row group's RowGroup.num_rows in the footer (Thrift compact i64 field 3: header 0x16 after
    total_byte_size, then a zigzag varint of the same length), leaving its chunks' value counts as written."""
    data = bytearray(path.read_bytes())
    start = len(data) - 8 - struct.unpack("<i", data[-8:-4])[0]

    def varint(n: int) -> bytes:
        n, out = n << 1, bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    footer = bytes(data[start:len(data) - 8])
    needle = b"\x16" + varint(old)
    at = footer.rindex(needle)
    assert footer[at - 2:at] != b"\x15\x00" and len(varint(new)) == len(varint(old))
    data[start + at + 1:start + at + 1 + len(varint(new))] = varint(new)
    path.write_bytes(bytes(data))
    assert pq.ParquetFile(path).metadata.row_group(pq.ParquetFile(path).metadata.num_row_groups - 1).num_rows == new


def test_a_row_group_whose_footer_records_more_rows_than_its_chunks_hold_is_handed_over_and_refused(tmp_path):
    bill = _write(tmp_path / "bill.parquet", [GROUP, GROUP - 100])
    _set_last_group_rows(bill, GROUP - 100, GROUP - 99)
    assert not verified_without_checksums(bill)  # DuckDB refuses to read it
    with pytest.raises(InputError) as caught:
        check_parquet(bill)
    assert caught.value.message == (f"the Parquet file is damaged: row group 1 of column BilledCost holds "
                                    f"{GROUP - 100} rows where the footer records {GROUP - 99}")


def test_a_row_group_whose_footer_records_fewer_rows_than_its_chunks_hold_is_refused(tmp_path):
    """DuckDB and pyarrow read the footer's rows only, so the last charge would be dropped without a word: the
    chunk's own value count (ColumnMetaData.num_values, one per row of a flat column) tells."""
    bill = _write(tmp_path / "bill.parquet", [GROUP, GROUP - 100])
    _set_last_group_rows(bill, GROUP - 100, GROUP - 101)
    assert duckdb.connect().execute(f"SELECT count(*) FROM '{bill}'").fetchone()[0] == 2 * GROUP - 101
    assert not verified_without_checksums(bill)
    with pytest.raises(InputError) as caught:
        check_parquet(bill)
    assert caught.value.message == (f"the Parquet file is damaged: row group 1 of column BilledCost holds "
                                    f"{GROUP - 100} values where the footer records {GROUP - 101} rows")
    assert caught.value.where.column == "BilledCost" and caught.value.where.file == str(bill)


@pytest.mark.parametrize("mode", ["amounts", "full"])
def test_nulls_and_nested_tags_are_no_missing_values(tmp_path, monkeypatch, mode):
    """A NULL is a value of a flat column's chunk; a MAP column's chunks (Tags.key_value.key, ...) hold one value
    per entry, and their paths are not column names, so neither reads as damage."""
    bill = tmp_path / "bill.parquet"
    rows = 3 * GROUP
    tags = pa.array([[("team", "ml"), ("env", "prod")] if i % 3 else [] for i in range(rows)],
                    pa.map_(pa.string(), pa.string()))
    pq.write_table(pa.table({"x_GpuHours": [None if i % 4 else 8.0 for i in range(rows)], "Tags": tags}), bill,
                   row_group_size=GROUP, write_page_checksum=True)
    monkeypatch.setenv(parquet_check.CHECK_ENV, mode)
    check_parquet(bill)


def test_a_file_duckdb_cannot_read_is_handed_over(tmp_path):
    bill = tmp_path / "bill.parquet"
    bill.write_text("BilledCost\n1.0\n")
    assert not verified_without_checksums(bill)
    with pytest.raises(InputError) as caught:
        check_parquet(bill)
    assert caught.value.message.startswith("the Parquet file is damaged: Parquet magic bytes not found")


def test_the_full_check_always_reads_with_pyarrow(tmp_path, monkeypatch):
    bill = _write(tmp_path / "bill.parquet", [GROUP] * 2)
    read = []
    monkeypatch.setattr(parquet_check, "_check_with_pyarrow", lambda path, mode: read.append((path, mode)))
    monkeypatch.setenv(parquet_check.CHECK_ENV, "full")
    check_parquet(bill)
    assert read == [(bill, "full")]


# Page headers in the Thrift compact protocol (Parquet format, PageHeader): 0x15 = field delta 1, type i32,
# then a zigzag varint; field 4 (the CRC) is 0x15 again, field 5 (a data page header, a struct) is 0x2C.
_TYPE, _SMALL, _LARGE = b"\x15\x00", b"\x15\x08", b"\x15\x80\x80\x01"  # 0, 4 and 8,192 as zigzag varints


@pytest.mark.parametrize("header, may", [
    (_TYPE + _LARGE + _LARGE + b"\x2c", False),  # no CRC: a data page header follows the sizes
    (_TYPE + _SMALL + _SMALL + b"\x2c", False),
    (_TYPE + _LARGE + _LARGE + b"\x15\x07", True),  # field 4: the CRC
    (_TYPE + _LARGE + _LARGE, True),  # cut short after the sizes
    (_TYPE + _LARGE, True),  # cut short in the sizes
    (_TYPE + _LARGE + b"\x15\x80", True),  # cut short in a varint
    (b"\x16\x00" + _LARGE + _LARGE + b"\x2c", True),  # not an i32 first: not a page header as written
    (_TYPE + b"\x16\x08" + _LARGE + b"\x2c", True),
    (_TYPE + _LARGE + b"\x25\x08" + b"\x2c", True),
    (b"", True),
])
def test_a_page_header_may_carry_a_checksum(header, may):
    assert may_carry_checksum(header) is may
