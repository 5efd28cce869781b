"""A byte flipped in a data page of a Parquet bill: DuckDB alone sums it as a wrong amount without a word
(it verifies no page checksum). With the writer's page checksums the bill is refused, exit 2 naming it;
without them a value pushed outside its row group's footer minimum/maximum is refused; one that stays
inside is undetectable in principle (docs/durability.md) and this suite pins that limit down."""

from __future__ import annotations

import json
import struct
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from .conftest import run_cli, snapshot, write_bill, write_plan

MONTH = "2026-05"
ROWS = 2000
#: row ROWS // 2 bills 20.00 = 1.25 x 2^4; the byte flips below, in its little-endian PLAIN double.
TARGET = 20.0
FLIPS = {
    "exponent": (7, 0x40),  # 0x40 34 ... -> 0x00 34 ...: about 1e-308, below the row group's minimum
    "mantissa": (6, 0x01),  # mantissa bit 48 of 1.25 x 2^4: 20.00 -> 21.00, inside the minimum and maximum
}


def _amount(i: int) -> Decimal:
    return Decimal(1000 + i) / 100 if i != ROWS // 2 else Decimal(TARGET)


def _bill(folder: Path, *, checksums: bool, flip: str | None) -> Path:
    """A FOCUS bill of ROWS rows, costs stored as uncompressed PLAIN doubles, one byte of one cost flipped."""
    source = write_bill(folder / "source.csv", [{"BilledCost": str(_amount(i)), "EffectiveCost": str(_amount(i))}
                                                for i in range(ROWS)])
    table = pacsv.read_csv(source, convert_options=pacsv.ConvertOptions(
        column_types={name: pa.string() for name in pacsv.read_csv(source).column_names}))
    source.unlink()
    for name in ("BilledCost", "EffectiveCost"):
        table = table.set_column(table.column_names.index(name), name, table.column(name).cast(pa.float64()))
    bill = folder / "bill.parquet"
    pq.write_table(table, bill, compression="none", use_dictionary=False, write_page_checksum=checksums)
    if flip is not None:
        data = bytearray(bill.read_bytes())
        at = data.index(struct.pack("<d", TARGET))  # BilledCost comes first in the file
        offset, mask = FLIPS[flip]
        data[at + offset] ^= mask
        bill.write_bytes(bytes(data))
    return bill


def _duckdb_total(bill: Path) -> Decimal:
    """What DuckDB alone reads: the cents of the summed BilledCost."""
    return Decimal(str(duckdb.connect().execute(f"SELECT sum(BilledCost) FROM '{bill}'").fetchone()[0])
                   ).quantize(Decimal("0.01"))


def _reconcile(folder: Path, bill: Path, capsys) -> tuple[int, str, str]:
    plan = write_plan(folder / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)])
    return run_cli(["reconcile", "--plan", plan, "--month", MONTH, "--bills", bill, "--out", folder / "out",
                    "--json"], capsys)


TRUE_TOTAL = sum(_amount(i) for i in range(ROWS))


@pytest.mark.parametrize("checksums, flip", [(True, "exponent"), (True, "mantissa"), (False, "exponent")])
def test_a_flipped_byte_in_a_data_page_is_refused_naming_the_file(tmp_path, capsys, checksums, flip):
    bill = _bill(tmp_path, checksums=checksums, flip=flip)
    assert _duckdb_total(bill) != TRUE_TOTAL  # what DuckDB alone would have reported
    before = snapshot(tmp_path)
    code, _, err = _reconcile(tmp_path, bill, capsys)
    assert code == 2, err
    assert "bill.parquet" in err and "damaged" in err and "BilledCost" in err, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [err.splitlines()[0]], err
    assert set(snapshot(tmp_path)) == set(before) | {"plan.xlsx"}  # nothing written


def test_an_undamaged_bill_with_or_without_checksums_reads_whole(tmp_path, capsys):
    for checksums in (True, False):
        folder = tmp_path / str(checksums)
        folder.mkdir()
        code, out, err = _reconcile(folder, _bill(folder, checksums=checksums, flip=None), capsys)
        assert code == 0, err
        assert Decimal(json.loads(out, parse_float=Decimal)["actual_billed_cost"]) == TRUE_TOTAL


def test_without_checksums_a_value_kept_within_its_statistics_is_undetectable(tmp_path, capsys):
    """The documented limit: no checksum, and 20.00 read as 21.00 lies inside the row group's 10.00 to
    29.99; the bill reads, one unit high. A writer's page checksums (the connectors write them) close it."""
    code, out, err = _reconcile(tmp_path, _bill(tmp_path, checksums=False, flip="mantissa"), capsys)
    assert code == 0, err
    assert Decimal(json.loads(out, parse_float=Decimal)["actual_billed_cost"]) == TRUE_TOTAL + 1


def test_the_amounts_check_reads_the_cost_columns_and_a_bad_setting_is_named(tmp_path, capsys, monkeypatch):
    bill = _bill(tmp_path, checksums=True, flip="mantissa")
    monkeypatch.setenv("FINOPS_PARQUET_CHECK", "amounts")
    code, _, err = _reconcile(tmp_path, bill, capsys)
    assert code == 2 and "BilledCost" in err and "checksum" in err, err
    monkeypatch.setenv("FINOPS_PARQUET_CHECK", "some")
    code, _, err = _reconcile(tmp_path, bill, capsys)
    assert code == 2 and "FINOPS_PARQUET_CHECK='some'" in err, err


def test_a_damaged_text_page_is_read_by_default_and_refused_by_the_full_check(tmp_path, capsys, monkeypatch):
    """The default reads the amounts only (docs/durability.md): a byte flipped in a ServiceName page of a
    bill with page checksums changes no amount and is read; FINOPS_PARQUET_CHECK=full refuses it."""
    bill = _bill(tmp_path, checksums=True, flip=None)
    data = bytearray(bill.read_bytes())
    found = [i for i in range(len(data)) if data.startswith(b"AmazonEC2", i)]
    at = found[len(found) // 2]  # a ServiceName value in a data page (not the header's min/max statistics)
    data[at + 1] ^= 0x20  # 'm' -> 'M': still valid UTF-8, another service name
    bill.write_bytes(bytes(data))
    code, out, err = _reconcile(tmp_path, bill, capsys)
    assert code == 0, err
    assert Decimal(json.loads(out, parse_float=Decimal)["actual_billed_cost"]) == TRUE_TOTAL
    monkeypatch.setenv("FINOPS_PARQUET_CHECK", "full")
    (tmp_path / "again").mkdir()
    code, _, err = _reconcile(tmp_path / "again", bill, capsys)
    assert code == 2 and "ServiceName" in err and "checksum" in err, err
