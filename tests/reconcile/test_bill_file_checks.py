"""The checks finops/reconcile/bills.py makes on bill files, called directly: each bad file gives one
message naming the file (and row and column where there is one) with its hint, worked out from the file
the test writes (row numbers count the header as row 1, as a spreadsheet does)."""
from __future__ import annotations

import gzip
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from finops.errors import InputError, Location
from finops.focus import COLUMNS, MANDATORY
from finops.reconcile.bills import (VIEW, BillFile, bill_format, focus_version, locate_bad_value, locate_currency,
                                    locate_malformed_row, open_bills)

from .conftest import write_bill

ALL = [c.name for c in COLUMNS]


def refused(paths) -> InputError:
    with pytest.raises(InputError) as caught:
        open_bills(duckdb.connect(), [Path(p) for p in paths])
    return caught.value


def test_no_files_and_a_missing_file(tmp_path):
    error = refused([])
    assert (error.message, error.hint) == ("no bill files given", "pass FOCUS files with --bills or a source with --from")
    error = refused([tmp_path / "nowhere.csv"])
    assert (error.message, error.where) == ("bill file not found", Location(file=str(tmp_path / "nowhere.csv")))
    assert error.hint == "check the path; bills are FOCUS .parquet, .csv or .csv.gz files"


@pytest.mark.parametrize("name,fmt", [("may.csv", "csv"), ("MAY.CSV.GZ", "csv"), ("may.parquet", "parquet"),
                                      ("may.PQ", "parquet")])
def test_formats_by_name(name, fmt):
    assert bill_format(Path(name)) == fmt


@pytest.mark.parametrize("name", ["may.xlsx", "may.json.gz", "may"])
def test_an_unknown_format_is_refused(name):
    with pytest.raises(InputError) as caught:
        bill_format(Path("bills") / name)
    assert caught.value.message == f"cannot read bill file {name!r}"
    assert caught.value.where == Location(file=str(Path("bills") / name))
    assert caught.value.hint == "give FOCUS bills as .parquet, .csv or .csv.gz files"


def test_the_same_content_twice_plain_and_gzip(tmp_path):
    good = write_bill(tmp_path / "good.csv", [{}, {}])
    other = write_bill(tmp_path / "other.csv", [{}, {"BilledCost": "2"}])
    copy = tmp_path / "good-again.csv.gz"
    copy.write_bytes(gzip.compress(good.read_bytes()))
    error = refused([good, other, copy])
    assert error.message == f"duplicated bill file: same content as {good}"
    assert error.where == Location(file=str(copy))
    assert error.hint == "give each bill file once; a copy would count its charges twice"
    # the same size but other bytes: both are read, neither is refused
    same_size = tmp_path / "same-size.csv"
    same_size.write_bytes(good.read_bytes().replace(b"AWS", b"AWZ", 1))
    assert len(open_bills(duckdb.connect(), [good, same_size])) == 2


def test_a_damaged_gzip_is_named(tmp_path):
    bill = write_bill(tmp_path / "may.csv.gz", [{}] * 50)
    data = bill.read_bytes()
    bill.write_bytes(data[: len(data) // 2])
    error = refused([bill])
    assert error.message.startswith("the gzip file is damaged or truncated (")
    assert error.where == Location(file=str(bill)) and error.hint == "download or export the bill again"


def test_two_gzip_files_of_the_same_size_are_told_apart_by_content(tmp_path):
    first = write_bill(tmp_path / "a.csv.gz", [{"BilledCost": "1"}])
    second = write_bill(tmp_path / "b.csv.gz", [{"BilledCost": "2"}])
    assert len(open_bills(duckdb.connect(), [first, second])) == 2
    shutil.copyfile(first, tmp_path / "c.csv.gz")
    assert refused([first, tmp_path / "c.csv.gz"]).message == f"duplicated bill file: same content as {first}"


def test_missing_mandatory_columns_are_all_listed():
    short = tuple(c for c in MANDATORY if c not in ("BilledCost", "ChargePeriodEnd"))
    with pytest.raises(InputError) as caught:
        focus_version(Path("old.csv"), short)
    missing = [c for c in MANDATORY if c in ("BilledCost", "ChargePeriodEnd")]
    assert caught.value.message == ("not a FOCUS 1.0, 1.1, 1.2, 1.3 or 1.4 bill: missing mandatory FOCUS columns "
                                    + ", ".join(missing))
    assert caught.value.where == Location(file="old.csv", row=1, column=missing[0])
    assert caught.value.hint == ("export the bill as FOCUS 1.0 to 1.4 (1.4 names the provider in ServiceProviderName); "
                                 "mandatory columns are listed in docs/focus.md")


@pytest.mark.parametrize("added,version", [((), "1.0"), (("SkuMeter",), "1.1"), (("InvoiceId",), "1.2"),
                                           (("SkuMeter", "PricingCurrency"), "1.2")])
def test_the_version_is_the_newest_whose_columns_it_has(added, version):
    assert focus_version(Path("b.csv"), MANDATORY + added) == version


def test_the_view_reads_every_file_with_its_position(tmp_path):
    a = write_bill(tmp_path / "a.csv", [{"BilledCost": "1.5"}, {"BilledCost": "2.25"}])
    b = write_bill(tmp_path / "b.csv.gz", [{"BilledCost": "10"}])
    con = duckdb.connect()
    files = open_bills(con, [a, b])
    assert [(f.path, f.format) for f in files] == [(a, "csv"), (b, "csv")]
    assert files[0].columns == tuple(ALL)
    rows = con.execute(f"SELECT bill_file, count(*), SUM(BilledCost) FROM {VIEW} GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [(0, 2, Decimal("3.75")), (1, 1, Decimal("10"))]


def test_a_csv_header_that_cannot_be_read(tmp_path):
    bill = tmp_path / "bad.csv"
    bill.write_bytes(b"\xff\xfeB\x00i\x00l\x00l\x00\n")
    error = refused([bill])
    assert error.message == "cannot read the bill file's header"
    assert error.where == Location(file=str(bill), row=1)
    assert error.hint == "check that the file is a FOCUS export in Parquet or CSV"


def test_a_parquet_file_that_cannot_be_read(tmp_path):
    bill = tmp_path / "bad.parquet"
    bill.write_bytes(b"not parquet at all")
    error = refused([bill])  # the page-by-page Parquet check (finops/reconcile/parquet_check.py) reads it first
    assert error.message.startswith("the Parquet file is damaged: ") and "magic bytes" in error.message
    assert error.where == Location(file=str(bill))


def parquet(tmp_path, csv_bill: Path, column: str, expression: str) -> Path:
    out = tmp_path / (csv_bill.stem + ".parquet")
    duckdb.connect().execute(f"COPY (SELECT * REPLACE ({expression} AS {column}) FROM read_csv('{csv_bill}')) "
                             f"TO '{out}' (FORMAT parquet)")
    return out


@pytest.mark.parametrize("column,expression,stored,word", [
    ("BilledCost", "BilledCost > 0", "BOOLEAN", "decimal"),
    ("ChargePeriodStart", "epoch(ChargePeriodStart)::BIGINT", "BIGINT", "timestamp"),
    ("BilledCost", "[BilledCost]", "DOUBLE[]", "decimal"),
])
def test_a_parquet_column_stored_as_the_wrong_type(tmp_path, column, expression, stored, word):
    bill = parquet(tmp_path, write_bill(tmp_path / "b.csv", [{}, {}]), column, expression)
    error = refused([bill])
    assert error.message == f"column {column} is stored as {stored}, not as a {word}"
    assert error.where == Location(file=str(bill), column=column)
    assert error.hint == f"FOCUS column {column} must hold a {word}; export it as one (or as text)"


def test_parquet_columns_stored_as_numbers_text_or_dates_are_read(tmp_path):
    source = write_bill(tmp_path / "b.csv", [{"BilledCost": "4.5"}, {"BilledCost": "0.5"}])
    bill = parquet(tmp_path, source, "BilledCost", "BilledCost::DOUBLE")
    con = duckdb.connect()
    open_bills(con, [bill])
    assert con.execute(f"SELECT SUM(BilledCost) FROM {VIEW}").fetchone()[0] == Decimal(5)
    dated = parquet(tmp_path, write_bill(tmp_path / "d.csv", [{}]), "ChargePeriodStart", "ChargePeriodStart::DATE")
    open_bills(duckdb.connect(), [dated])


def bill_file(path: Path) -> BillFile:
    return BillFile(path, "csv", tuple(ALL), tuple("VARCHAR" for _ in ALL))


@pytest.mark.parametrize("change,row,column,message,hint", [
    ({"EffectiveCost": "12,5 EUR"}, 4, "EffectiveCost", "value '12,5 EUR' is not a decimal",
     "FOCUS column EffectiveCost must hold a decimal"),
    ({"ChargePeriodStart": "yesterday"}, 4, "ChargePeriodStart", "value 'yesterday' is not a timestamp",
     "FOCUS column ChargePeriodStart must hold a timestamp"),
    ({"BilledCost": ""}, 4, "BilledCost", "BilledCost is empty; FOCUS requires an amount on every row (0 for none)",
     "fix BilledCost on this row, or export the bill again"),
    ({"Tags": "[1, 2]"}, 4, "Tags", "Tags is not a JSON object; FOCUS Tags are a JSON object of key-value pairs, "
     "e.g. {\"team\": \"ml\"}, got '[1, 2]'", "fix Tags on this row, or export the bill again"),
])
def test_the_first_bad_value_is_named_by_row_and_column(tmp_path, change, row, column, message, hint):
    good = write_bill(tmp_path / "good.csv", [{}])
    bill = write_bill(tmp_path / "b.csv", [{}, {}, change, change])
    error = locate_bad_value([bill_file(good), bill_file(bill)])
    assert (error.message, error.where, error.hint) == (message, Location(file=str(bill), row=row, column=column), hint)
    assert locate_bad_value([bill_file(good)]) is None


def test_a_long_bad_value_is_quoted_to_sixty_characters(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{"PricingQuantity": "n" * 59 + "AB"}])
    assert locate_bad_value([bill_file(bill)]).message == f"value {'n' * 59 + 'A'!r} is not a decimal"


def test_rows_with_the_wrong_number_of_fields(tmp_path):
    bill = write_bill(tmp_path / "ragged.csv", [{}, {}, {}])
    lines = bill.read_text().splitlines()
    lines[2] += ",x,y"
    bill.write_text("\n".join(lines) + "\n")
    error = locate_malformed_row([bill_file(bill)])
    assert error.message == f"this row has {len(ALL) + 2} fields, the header has {len(ALL)}"
    assert error.where == Location(file=str(bill), row=3)
    assert error.hint == "a field with a comma or a line break must be in double quotes"
    assert locate_malformed_row([bill_file(write_bill(tmp_path / "fine.csv", [{}, {}]))]) is None
    assert locate_malformed_row([BillFile(bill, "parquet", tuple(ALL))]) is None  # CSV rows only


def test_a_row_not_in_utf8(tmp_path):
    bill = write_bill(tmp_path / "latin.csv", [{}, {"SubAccountName": "équipe"}])
    bill.write_bytes(bill.read_text(encoding="utf-8").encode("latin-1"))
    error = locate_malformed_row([bill_file(bill)])
    assert error.message == "this row is not UTF-8 text (byte 0xe9)"
    assert error.where == Location(file=str(bill), row=3)
    assert error.hint == "export the bill as UTF-8, or re-save the CSV with UTF-8 encoding"


def test_the_first_row_in_a_second_currency(tmp_path):
    good = write_bill(tmp_path / "usd.csv", [{}, {}])
    bill = write_bill(tmp_path / "fx.csv", [{}, {}, {"BillingCurrency": "EUR"}])
    error = locate_currency([bill_file(good), bill_file(bill)], "USD")
    assert error.message == "several billing currencies without a rate table: EUR here, USD elsewhere"
    assert error.where == Location(file=str(bill), row=4, column="BillingCurrency")
    assert error.hint == "give a rate into the plan currency (--rate EUR=1.08) or bills in one currency"
    assert locate_currency([bill_file(good)], "USD") is None


def test_a_currency_with_a_rate_is_not_the_one_named(tmp_path):
    """EUR has a rate, GBP has none: the error points at the first GBP row, past the EUR rows before it."""
    bill = write_bill(tmp_path / "fx.csv", [{}, {"BillingCurrency": "EUR"}, {"BillingCurrency": "EUR"},
                                            {"BillingCurrency": "GBP"}, {"BillingCurrency": "EUR"}])
    error = locate_currency([bill_file(bill)], "USD", ["EUR"])
    assert error.message == "no rate from GBP into USD (rates given for EUR)"
    assert error.where == Location(file=str(bill), row=5, column="BillingCurrency")
    assert error.hint == "give a rate into the plan currency (--rate EUR=1.08) or bills in one currency"
    # rates for every currency: nothing to name; a rate given for the plan currency itself changes nothing
    assert locate_currency([bill_file(bill)], "USD", ["GBP", "EUR"]) is None
    error = locate_currency([bill_file(bill)], "CHF", ["USD", "GBP", "CHF"])  # plan in CHF: EUR lacks a rate
    assert (error.message, error.where.row) == ("no rate from EUR into CHF (rates given for GBP, USD)", 3)
    error = locate_currency([bill_file(bill)], "USD", ["USD"])
    assert (error.message, error.where.row) == ("several billing currencies without a rate table: EUR here, "
                                                "USD elsewhere", 3)


def test_a_row_without_a_currency_is_named_too(tmp_path):
    bill = write_bill(tmp_path / "blank.csv", [{}, {"BillingCurrency": "EUR"}, {"BillingCurrency": ""}])
    error = locate_currency([bill_file(bill)], "USD", ["EUR"])
    assert error.where == Location(file=str(bill), row=4, column="BillingCurrency")
    assert error.message == "BillingCurrency is empty; FOCUS requires the billing currency on every row"
    error = locate_currency([bill_file(bill)], "USD")
    assert (error.message, error.where.row) == ("several billing currencies without a rate table: EUR here, "
                                                "USD elsewhere", 3)


def test_quotes_in_a_path_or_a_column_name_and_null_text(tmp_path):
    folder = tmp_path / "o'brien's bills"
    folder.mkdir()
    bill = write_bill(folder / "may.csv", [{"BilledCost": "1.5", "SubAccountName": "NULL"}, {"BilledCost": "2"}])
    text = bill.read_text().splitlines()
    text[0] += ",it's extra"
    bill.write_text("\n".join([text[0]] + [line + ",x" for line in text[1:]]) + "\n")
    con = duckdb.connect()
    files = open_bills(con, [bill])
    assert files[0].columns[-1] == "it's extra"
    assert con.execute(f"SELECT SUM(BilledCost), count(SubAccountName), count(*) FROM {VIEW}").fetchone() == (
        Decimal("3.5"), 1, 2)  # the literal NULL of SQL dumps reads as NULL
    plain = tmp_path / "plain.csv"
    shutil.copyfile(bill, plain)
    parquet_copy = folder / "may.parquet"
    shutil.move(parquet(tmp_path, plain, "BilledCost", "BilledCost"), parquet_copy)
    con = duckdb.connect()
    open_bills(con, [parquet_copy])
    assert con.execute(f"SELECT SUM(BilledCost) FROM {VIEW}").fetchone()[0] == Decimal("3.5")


def test_parquet_tags_as_a_map_and_empty_text_read_as_in_csv(tmp_path):
    source = write_bill(tmp_path / "b.csv", [{"SubAccountName": ""}, {"SubAccountName": "ml-prod"}])
    out = tmp_path / "b.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * REPLACE (MAP {{'team': 'ml'}} AS Tags, COALESCE(SubAccountName, '') AS SubAccountName) "
        f"FROM read_csv('{source}', all_varchar = true)) TO '{out}' (FORMAT parquet)")
    con = duckdb.connect()
    open_bills(con, [out])
    assert con.execute(f"SELECT Tags, SubAccountName FROM {VIEW} ORDER BY SubAccountName NULLS FIRST").fetchall() == [
        ('{"team":"ml"}', None), ('{"team":"ml"}', "ml-prod")]


def test_a_timestamp_with_an_offset_lands_in_utc(tmp_path):
    from datetime import datetime

    bill = write_bill(tmp_path / "b.csv", [{"ChargePeriodStart": "2026-05-31T23:00:00-05:00"}])
    con = duckdb.connect()
    open_bills(con, [bill])
    assert con.execute(f"SELECT ChargePeriodStart FROM {VIEW}").fetchone()[0] == datetime(2026, 6, 1, 4, 0)


def test_a_field_past_the_csv_limit_is_named_by_row(tmp_path):
    import csv as csv_module

    bill = write_bill(tmp_path / "b.csv", [{}, {"SubAccountName": "x" * (csv_module.field_size_limit() + 10)}])
    error = locate_malformed_row([bill_file(bill)])
    assert error.message.startswith("malformed CSV: field larger than field limit")
    assert error.where == Location(file=str(bill), row=3)


def test_a_file_that_cannot_be_read_while_hashed(tmp_path, monkeypatch):
    import finops.reconcile.bills as bills

    first = write_bill(tmp_path / "a.csv", [{"BilledCost": "1"}])
    second = write_bill(tmp_path / "b.csv", [{"BilledCost": "2"}])  # the same size: both are hashed

    def unreadable(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(bills, "_open_bytes", unreadable)
    error = refused([first, second])
    assert (error.message, error.where) == ("cannot read the bill file", Location(file=str(first)))
    assert error.hint == "check that the file is a FOCUS export in Parquet, CSV or gzip CSV"


def test_parquet_tags_as_a_struct_read_as_json_text(tmp_path):
    source = write_bill(tmp_path / "b.csv", [{}])
    out = tmp_path / "s.parquet"
    duckdb.connect().execute(f"COPY (SELECT * REPLACE ({{'team': 'ml'}} AS Tags) FROM read_csv('{source}', "
                             f"all_varchar = true)) TO '{out}' (FORMAT parquet)")
    con = duckdb.connect()
    open_bills(con, [out])
    assert con.execute(f"SELECT Tags FROM {VIEW}").fetchone()[0] == '{"team":"ml"}'


def test_a_damaged_parquet_file_is_named_with_duckdb_s_reason(tmp_path, monkeypatch):
    """The fallback for damage DuckDB meets that the page check did not read (a text page under the default
    FINOPS_PARQUET_CHECK=amounts): here the check is switched off so DuckDB meets the damage itself."""
    monkeypatch.setattr("finops.reconcile.bills.check_parquet", lambda path: None)
    source = write_bill(tmp_path / "b.csv", [{"BilledCost": str(k)} for k in range(2000)])
    bill = tmp_path / "b.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{source}')) TO '{bill}' (FORMAT parquet)")
    data = bytearray(bill.read_bytes())
    data[4:len(data) // 2] = b"\x00" * (len(data) // 2 - 4)  # the pages, not the footer: the header still reads
    bill.write_bytes(bytes(data))
    files = open_bills(duckdb.connect(), [bill])
    with pytest.raises(duckdb.Error) as duckdb_says:  # DuckDB's own reason, read here without the product
        duckdb.connect().execute(f"SELECT * FROM read_parquet('{bill}')").fetchall()
    with pytest.raises(InputError) as caught:
        locate_bad_value(files)
    assert caught.value.message == "cannot read the bill file: " + str(duckdb_says.value).splitlines()[0][:200]
    assert caught.value.where == Location(file=str(bill))
    assert caught.value.hint == "export the bill again; the file is damaged or not a FOCUS export"


def test_a_header_whose_quoted_name_runs_past_the_csv_limit_on_the_next_line(tmp_path):
    import csv as csv_module

    bill = tmp_path / "b.csv"
    bill.write_text('BilledCost,"Tags\n' + "x" * (csv_module.field_size_limit() + 10) + '"\n1,2\n')
    error = locate_malformed_row([BillFile(bill, "csv", ("BilledCost", "Tags"))])
    assert error.message.startswith("malformed CSV: field larger than field limit")
    assert error.where == Location(file=str(bill), row=2)  # the first record fails on its second line


def test_an_empty_csv_has_no_mandatory_column(tmp_path):
    bill = tmp_path / "empty.csv"
    bill.write_text("")
    error = refused([bill])
    assert error.message.startswith("not a FOCUS 1.0, 1.1, 1.2, 1.3 or 1.4 bill: missing mandatory FOCUS columns ")
    assert error.where == Location(file=str(bill), row=1, column=MANDATORY[0])


def test_a_duplicate_after_a_file_of_a_size_of_its_own_is_found(tmp_path):
    unique = write_bill(tmp_path / "unique.csv", [{}, {}, {}])
    good = write_bill(tmp_path / "good.csv", [{}])
    copy = tmp_path / "copy.csv"
    shutil.copyfile(good, copy)
    assert refused([unique, good, copy]).message == f"duplicated bill file: same content as {good}"


def ragged(path: Path, row: int) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        lines = handle.read().splitlines()
    lines[row - 1] += ",x"
    with opener(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def test_ragged_rows_in_gzip_and_on_the_first_data_row_after_a_parquet_file(tmp_path):
    gz = ragged(write_bill(tmp_path / "b.csv.gz", [{}, {}, {}]), 4)
    error = locate_malformed_row([bill_file(gz)])
    assert (error.message, error.where) == (f"this row has {len(ALL) + 1} fields, the header has {len(ALL)}",
                                            Location(file=str(gz), row=4))
    first = ragged(write_bill(tmp_path / "c.csv", [{}, {}]), 2)
    other = BillFile(tmp_path / "p.parquet", "parquet", tuple(ALL))
    assert locate_malformed_row([other, bill_file(first)]).where == Location(file=str(first), row=2)


def test_strict_values_stop_the_scan_of_the_view(tmp_path):
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "b.csv", [{}, {"BilledCost": ""}])])
    with pytest.raises(duckdb.Error, match="BilledCost is empty; FOCUS requires an amount on every row"):
        con.execute(f"SELECT SUM(BilledCost) FROM {VIEW}").fetchall()
    source = write_bill(tmp_path / "t.csv", [{"Tags": "[1, 2]"}])
    out = tmp_path / "t.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{source}', all_varchar = true)) TO '{out}' (FORMAT parquet)")
    con = duckdb.connect()
    open_bills(con, [out])
    with pytest.raises(duckdb.Error, match="Tags is not a JSON object"):
        con.execute(f"SELECT Tags FROM {VIEW}").fetchall()


def test_a_long_strict_value_is_quoted_to_sixty_characters(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{"Tags": "[" + "1," * 40 + "1]"}])
    error = locate_bad_value([bill_file(bill)])
    assert error.message.endswith(f", got {('[' + '1,' * 40)[:60]!r}")


def test_a_bill_without_one_strict_column_is_still_checked_for_the_others(tmp_path):
    columns = [c for c in ALL if c != "BilledCost"]
    bill = write_bill(tmp_path / "b.csv", [{"Tags": "[1]"}], columns=columns)
    error = locate_bad_value([BillFile(bill, "csv", tuple(columns), tuple("VARCHAR" for _ in columns))])
    assert error.where == Location(file=str(bill), row=2, column="Tags")


def test_columns_outside_focus_are_not_cast(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{}])
    lines = bill.read_text().splitlines()
    bill.write_text("\n".join([lines[0] + ",x_Team"] + [line + ",not a number" for line in lines[1:]]) + "\n")
    assert locate_bad_value([BillFile(bill, "csv", tuple(ALL) + ("x_Team",), ("VARCHAR",) * (len(ALL) + 1))]) is None
    assert locate_bad_value([BillFile(bill, "csv", tuple(ALL) + ("x_Team",))]) is None  # types unknown: text


def test_a_plan_currency_with_a_quote_is_compared_as_text(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{}])
    error = locate_currency([bill_file(bill)], "US'D")
    assert error.message == "several billing currencies without a rate table: USD here, US'D elsewhere"
    assert error.where == Location(file=str(bill), row=2, column="BillingCurrency")
