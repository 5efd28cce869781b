"""The same bill given twice (CSV and Parquet) is refused with its charge count and totals, worked from
the CSV with csv + Decimal; files left out of the comparison are not compared."""
import csv
import gzip
from decimal import Decimal

import duckdb
import pytest

from finops.errors import InputError, Location
from finops.reconcile.bills import open_bills
from finops.reconcile.fingerprint import refuse_identical_files
from finops.reconcile.sample_bills import sample_bill_paths


@pytest.fixture
def bills(tmp_path):
    aws, gcp = sample_bill_paths()
    copy = tmp_path / "aws-again.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{aws}', all_varchar = true)) TO '{copy}' (FORMAT parquet)")
    con = duckdb.connect()
    return con, open_bills(con, [aws, gcp, copy]), aws, copy


def totals(path):
    with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return len(rows), sum(Decimal(r["BilledCost"]) for r in rows), sum(Decimal(r["EffectiveCost"]) for r in rows)


def test_the_copy_is_refused_naming_both_files_and_its_totals(bills):
    con, files, aws, copy = bills
    count, billed, effective = totals(aws)
    with pytest.raises(InputError) as caught:
        refuse_identical_files(con, files)
    assert caught.value.message == (f"same charges as {aws}: the same {count:,} charges, "
                                    f"BilledCost {billed:,.2f}, EffectiveCost {effective:,.2f}")
    assert count == 1000
    assert caught.value.where == Location(file=str(copy))
    assert caught.value.hint == "the same bill in two formats or exports; give it once"


def test_only_the_files_named_are_compared(bills):
    con, files, _, _ = bills
    refuse_identical_files(con, files, [0, 1])  # AWS and GCP: other charges
    refuse_identical_files(con, files, [1, 2])  # GCP and the AWS copy
    with pytest.raises(InputError):
        refuse_identical_files(con, files, [0, 2])


def test_only_the_rows_selected_are_compared(bills):
    con, files, aws, _ = bills
    refuse_identical_files(con, files, where="FALSE")  # no rows: nothing to compare
    with pytest.raises(InputError) as caught:
        refuse_identical_files(con, files, where="BilledCost > 0", what="of the paid rows")
    with gzip.open(aws, "rt", encoding="utf-8-sig", newline="") as handle:
        paid = [r for r in csv.DictReader(handle) if Decimal(r["BilledCost"]) > 0]
    billed = sum(Decimal(r["BilledCost"]) for r in paid)
    effective = sum(Decimal(r["EffectiveCost"]) for r in paid)
    assert caught.value.message == (f"same charges as {aws}: the same {len(paid):,} charges of the paid rows, "
                                    f"BilledCost {billed:,.2f}, EffectiveCost {effective:,.2f}")
