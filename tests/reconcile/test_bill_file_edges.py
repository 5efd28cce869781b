"""Edges of finops/reconcile/bills.py's checks, called directly: a gzip bill longer than one read, DuckDB's
reason for a damaged file cut to 200 characters, a CSV without any row."""
from __future__ import annotations

import gzip

import duckdb
import pytest

from finops.errors import InputError, Location
from finops.reconcile.bills import BillFile, locate_currency, locate_malformed_row, open_bills

from .conftest import write_bill


def test_a_long_bill_and_its_gzip_copy_are_the_same_content(tmp_path):
    """2,000 rows (about 0.9 MB, many reads of the inflated stream): the copy's inflated size is counted whole."""
    bill = write_bill(tmp_path / "may.csv", [{"BilledCost": f"{k}.25"} for k in range(2_000)])
    assert bill.stat().st_size > 512 * 1024
    copy = tmp_path / "may-again.csv.gz"
    copy.write_bytes(gzip.compress(bill.read_bytes()))
    with pytest.raises(InputError) as caught:
        open_bills(duckdb.connect(), [copy, bill])
    assert (caught.value.message, caught.value.where) == (
        f"duplicated bill file: same content as {copy}", Location(file=str(bill)))
    # one byte more in the plain file: other sizes, both read
    bill.write_bytes(bill.read_bytes() + b"\n")
    assert len(open_bills(duckdb.connect(), [copy, bill])) == 2


def test_duckdb_s_reason_for_a_damaged_file_is_cut_to_200_characters(tmp_path):
    """A Parquet file too short to be one, in a folder with a long name: DuckDB's reason names the file and
    runs past 200 characters; the message keeps its first 200."""
    folder = tmp_path / ("bills-exported-from-the-billing-console-" * 5)
    folder.mkdir()
    bill = folder / "may.parquet"
    bill.write_bytes(b"PAR1")
    with pytest.raises(duckdb.Error) as duckdb_says:
        duckdb.connect().execute(f"SELECT * FROM read_parquet('{bill}')").fetchall()
    reason = str(duckdb_says.value).splitlines()[0]
    assert len(reason) > 201
    with pytest.raises(InputError) as caught:
        locate_currency([BillFile(bill, "parquet", ("BillingCurrency",), ("VARCHAR",))], "USD")
    assert caught.value.message == "cannot read the bill file: " + reason[:200]
    assert caught.value.where == Location(file=str(bill))


def test_a_csv_without_rows_has_no_malformed_row(tmp_path):
    empty, header_only = tmp_path / "empty.csv", tmp_path / "header.csv"
    empty.write_bytes(b"")
    header_only.write_text("BilledCost,Tags\r\n")
    assert locate_malformed_row([BillFile(empty, "csv", ()), BillFile(header_only, "csv", ("BilledCost", "Tags"))]) is None


def test_only_files_of_equal_content_size_are_hashed(tmp_path, monkeypatch):
    """Sizes first: a file of a size of its own is never read for its hash (a month's files are gigabytes)."""
    import finops.reconcile.bills as bills

    hashed = []
    digest = bills._digest
    monkeypatch.setattr(bills, "_digest", lambda path: hashed.append(path) or digest(path))
    alone = write_bill(tmp_path / "alone.csv.gz", [{}, {}, {}])
    first = write_bill(tmp_path / "a.csv", [{"BilledCost": "1"}])
    second = write_bill(tmp_path / "b.csv", [{"BilledCost": "2"}])
    also_alone = write_bill(tmp_path / "c.csv", [{}, {}])
    assert len(open_bills(duckdb.connect(), [alone, first, second, also_alone])) == 4
    assert hashed == [first, second]


def test_parquet_text_columns_and_their_empty_text(tmp_path):
    """Which columns of a Parquet bill are read through NULLIF(column, ''): the FOCUS text columns whose
    statistics do not rule out empty text; none of a CSV bill."""
    source = write_bill(tmp_path / "b.csv", [{"SubAccountName": "", "RegionId": "us-east-1"}] * 3)
    bill = tmp_path / "b.parquet"
    duckdb.connect().execute(f"COPY (SELECT * REPLACE (COALESCE(SubAccountName, '') AS SubAccountName) FROM "
                             f"read_csv('{source}', all_varchar = true)) TO '{bill}' (FORMAT parquet)")
    parquet, csv_file = open_bills(duckdb.connect(), [bill, source])
    assert "SubAccountName" in parquet.empty_text and "RegionId" not in parquet.empty_text
    assert "BilledCost" not in parquet.empty_text and csv_file.empty_text == frozenset()
