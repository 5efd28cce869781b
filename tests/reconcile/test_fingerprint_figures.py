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


def month_groups(con, files):
    from finops.reconcile.aggregation import charge_groups_sql
    from finops.reconcile.bills import FILE_COLUMN, VIEW
    con.execute("CREATE OR REPLACE TABLE g AS " + charge_groups_sql(VIEW, "2026-05", (), per=FILE_COLUMN))
    return "g"


def test_the_same_charges_in_the_month_are_refused_with_the_month_named(tmp_path):
    from finops.reconcile.fingerprint import refuse_same_charges
    from .conftest import write_bill

    rows = [{"BilledCost": "1.25", "EffectiveCost": "1"}, {"BilledCost": "2", "EffectiveCost": "2.5"}]
    first = write_bill(tmp_path / "may.csv", rows)
    again = tmp_path / "may.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{first}', all_varchar = true)) TO '{again}' (FORMAT parquet)")
    con = duckdb.connect()
    files = open_bills(con, [first, again])
    with pytest.raises(InputError) as caught:
        refuse_same_charges(con, files, month_groups(con, files), "2026-05", "invoice")
    assert caught.value.message == (f"same charges as {first}: the same 2 charges of 2026-05, "
                                    "BilledCost 3.25, EffectiveCost 3.50")
    assert caught.value.where == Location(file=str(again))


def test_files_of_other_shapes_are_never_the_same_bill(tmp_path):
    """Charges compare only between files of the same shape (groups by plan line and review dimensions):
    the same amounts on the same resources under another service name are another bill, both counted."""
    from finops.reconcile.fingerprint import refuse_same_charges
    from .conftest import write_bill

    rows = [{"BilledCost": "1.25"}, {"BilledCost": "2"}]
    first = write_bill(tmp_path / "a.csv", rows)
    renamed = write_bill(tmp_path / "b.csv", [{**r, "ServiceName": "Another service"} for r in rows])
    con = duckdb.connect()
    files = open_bills(con, [first, renamed])
    refuse_same_charges(con, files, month_groups(con, files), "2026-05", "invoice")  # accepted
    with pytest.raises(InputError):  # the charges alone would call them the same
        refuse_identical_files(con, files)


def test_on_the_usage_basis_only_the_months_usage_is_compared(tmp_path):
    """B is A plus an April charge on May's invoice: on the usage basis May's charges are the same (refused),
    on the invoice basis B has one more (accepted)."""
    from finops.reconcile.aggregation import charge_groups_sql
    from finops.reconcile.bills import FILE_COLUMN, VIEW
    from finops.reconcile.fingerprint import refuse_same_charges
    from .conftest import write_bill

    rows = [{"BilledCost": "1.25"}, {"BilledCost": "2"}]
    april = {"BilledCost": "7", "ChargePeriodStart": "2026-04-30T23:00:00Z", "ChargePeriodEnd": "2026-05-01T00:00:00Z",
             "BillingPeriodStart": "2026-05-01T00:00:00Z", "BillingPeriodEnd": "2026-06-01T00:00:00Z"}
    a = write_bill(tmp_path / "a.csv", rows)
    b = write_bill(tmp_path / "b.csv", rows + [april])
    con = duckdb.connect()
    files = open_bills(con, [a, b])
    for basis in ("usage", "invoice"):
        con.execute(f"CREATE OR REPLACE TABLE g_{basis} AS "
                    + charge_groups_sql(VIEW, "2026-05", (), per=FILE_COLUMN, basis=basis))
    refuse_same_charges(con, files, "g_invoice", "2026-05", "invoice")
    with pytest.raises(InputError) as caught:
        refuse_same_charges(con, files, "g_usage", "2026-05", "usage")
    assert caught.value.message.startswith(f"same charges as {a}: the same 2 charges of 2026-05, BilledCost 3.25")


def test_only_files_of_one_shape_are_compared_by_their_charges(tmp_path):
    """X and Y share a shape (same groups and row counts) but not their amounts; Z has X's charges under
    another service name (another shape). X and Y are compared and differ; Z is compared with neither."""
    from finops.reconcile.fingerprint import refuse_same_charges
    from .conftest import write_bill

    rows = [{"BilledCost": "1.25"}, {"BilledCost": "2"}]
    x = write_bill(tmp_path / "x.csv", rows)
    y = write_bill(tmp_path / "y.csv", [{"BilledCost": "3"}, {"BilledCost": "4"}])
    z = write_bill(tmp_path / "z.csv", [{**r, "ServiceName": "Another service"} for r in rows])
    con = duckdb.connect()
    files = open_bills(con, [x, y, z])
    refuse_same_charges(con, files, month_groups(con, files), "2026-05", "invoice")  # accepted
