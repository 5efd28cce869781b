"""Every malformed input ends with exit code 2, a message naming file, column and row, and no output."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import duckdb
import pytest

from finops.cli import main
from finops.focus import COLUMNS

from .conftest import write_bill, write_plan

ALL = [c.name for c in COLUMNS]


def bad_bills(tmp: Path) -> dict[str, tuple[list[Path], list[str]]]:
    """case -> (bill files, fragments the error message must contain)."""
    good = write_bill(tmp / "good.csv", [{}, {}])
    copy = tmp / "copy-of-good.csv"
    shutil.copyfile(good, copy)
    return {
        "missing mandatory column": (
            [write_bill(tmp / "nocost.csv", [{}], columns=[c for c in ALL if c != "BilledCost"])],
            ["nocost.csv", "column BilledCost", "missing mandatory FOCUS column"]),
        "text in a money column": (
            [write_bill(tmp / "money.csv", [{}, {}, {"EffectiveCost": "12,5 EUR"}])],
            ["money.csv", "row 4", "column EffectiveCost", "'12,5 EUR'"]),
        "text in a timestamp column, gzip": (
            [write_bill(tmp / "when.csv.gz", [{}, {"ChargePeriodStart": "yesterday"}])],
            ["when.csv.gz", "row 3", "column ChargePeriodStart", "'yesterday'"]),
        "bad value in the second file": (
            [good, write_bill(tmp / "second.csv", [{"PricingQuantity": "n/a"}])],
            ["second.csv", "row 2", "column PricingQuantity"]),
        "two currencies, no rate": (
            [write_bill(tmp / "fx.csv", [{}, {"BillingCurrency": "EUR"}])],
            ["fx.csv", "row 3", "column BillingCurrency", "several billing currencies"]),
        "month with no data": (
            [write_bill(tmp / "june.csv", [{"ChargePeriodStart": "2026-06-01T00:00:00Z"}])],
            ["june.csv", "column BillingPeriodStart", "no charges in 2026-05", "2026-06"]),
        "duplicated file": ([good, copy], ["copy-of-good.csv", "duplicated bill file", "good.csv"]),
        "the same bill, plain and gzip": ([good, _gzip(good, tmp / "good-again.csv.gz")],
                                          ["good-again.csv.gz", "duplicated bill file", "good.csv"]),
        "row with extra fields": ([_edit(write_bill(tmp / "ragged.csv", [{}, {}, {}]), 3, ",x,y")],
                                  ["ragged.csv", "row 3", "59 fields, the header has"]),
        "truncated row": ([_edit(write_bill(tmp / "cut.csv.gz", [{}, {}]), 2, None)],
                          ["cut.csv.gz", "row 2", "2 fields, the header has"]),
        "row not in UTF-8": ([_latin1(write_bill(tmp / "latin.csv", [{}, {"SubAccountName": "équipe"}]))],
                             ["latin.csv", "row 3", "not UTF-8"]),
        "Parquet cost stored as booleans": (
            [_parquet(write_bill(tmp / "flags.csv", [{}, {}]), "BilledCost", "BilledCost > 0")],
            ["flags.parquet", "column BilledCost", "stored as BOOLEAN"]),
        "Parquet time stored as epoch seconds": (
            [_parquet(write_bill(tmp / "epoch.csv", [{}]), "ChargePeriodStart", "epoch(ChargePeriodStart)::BIGINT")],
            ["epoch.parquet", "column ChargePeriodStart", "stored as BIGINT"]),
        "missing file": ([tmp / "nowhere.csv"], ["nowhere.csv", "not found"]),
        "unknown format": ([tmp / "bill.xlsx"], ["bill.xlsx", ".parquet, .csv or .csv.gz"]),
    }


def _parquet(csv_bill: Path, column: str, expression: str) -> Path:
    """The bill as Parquet with ``column`` replaced by ``expression`` (stored as that expression's type)."""
    out = csv_bill.with_suffix(".parquet")
    duckdb.connect().execute(f"COPY (SELECT * REPLACE ({expression} AS {column}) FROM read_csv('{csv_bill}')) "
                             f"TO '{out}' (FORMAT parquet)")
    return out


def _gzip(path: Path, out: Path) -> Path:
    out.write_bytes(gzip.compress(path.read_bytes()))
    return out


def _latin1(path: Path) -> Path:
    """The same bill saved in Latin-1 instead of UTF-8."""
    path.write_bytes(path.read_text(encoding="utf-8").encode("latin-1"))
    return path


def _edit(path: Path, row: int, append: str | None) -> Path:
    """Row ``row`` (spreadsheet numbering) gets ``append`` added, or is cut to its first two fields."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        lines = handle.read().splitlines()
    lines[row - 1] = lines[row - 1] + append if append else "AWS,AWS"
    with opener(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


CASES = ["row with extra fields", "truncated row", "missing mandatory column", "text in a money column", "text in a timestamp column, gzip",
         "bad value in the second file", "two currencies, no rate", "month with no data", "duplicated file", "the same bill, plain and gzip",
         "row not in UTF-8", "Parquet cost stored as booleans", "Parquet time stored as epoch seconds", "missing file",
         "unknown format"]


@pytest.mark.parametrize("case", CASES)
def test_bad_bill_exits_2_with_location_and_writes_nothing(case, tmp_path, simple_plan, capsys):
    (tmp_path / "bill.xlsx").write_bytes(b"PK")
    bills, fragments = bad_bills(tmp_path)[case]
    out = tmp_path / "out"
    args = ["reconcile", "--plan", str(simple_plan), "--month", "2026-05", "--out", str(out), "--quiet"]
    for bill in bills:
        args += ["--bills", str(bill)]
    assert main(args) == 2
    message = capsys.readouterr().err.replace("\n", "")
    for fragment in fragments:
        assert fragment in message
    assert "Traceback" not in message
    assert not out.exists() or list(out.iterdir()) == []


PLAN_CASES = {
    "amount is text": ({"budget": [("2026-05", "gpu", "cc", "OPEX", "AWS", "lots", "USD", None)]},
                       ["sheet Budget", "cell F3", "column Amount", "'lots'"]),
    "month is not YYYY-MM": ({"budget": [("May", "gpu", "cc", "OPEX", "AWS", 1, "USD", None)]},
                             ["sheet Budget", "cell A3", "column Month"]),
    "category unknown": ({"budget": [("2026-05", "gpu", "cc", "Cloud", "AWS", 1, "USD", None)]},
                         ["sheet Budget", "cell D3", "OPEX or CAPEX"]),
    "two plan currencies": ({"budget": [("2026-05", "a", "cc", "OPEX", "AWS", 1, "USD", None),
                                        ("2026-05", "b", "cc", "OPEX", "AWS", 1, "EUR", None)]},
                            ["sheet Budget", "row 4", "column Currency", "mixes USD and EUR"]),
    "asset life not whole": ({"budget": [("2026-05", "a", "cc", "OPEX", "AWS", 1, "USD", None)],
                               "assets": [("S", "d", "a", "cc", "h100", 8, "2026-01-01", None, 10, 0, 12.5, "USD")]},
                             ["sheet Assets", "cell K3", "column LifeMonths"]),
}


@pytest.mark.parametrize("case", list(PLAN_CASES))
def test_bad_plan_exits_2_naming_sheet_and_cell(case, tmp_path, capsys):
    tables, fragments = PLAN_CASES[case]
    plan = write_plan(tmp_path / "plan.xlsx", **tables)
    bill = write_bill(tmp_path / "may.csv", [{}])
    out = tmp_path / "out"
    assert main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--bills", str(bill),
                 "--out", str(out), "--quiet"]) == 2
    message = capsys.readouterr().err.replace("\n", "")
    for fragment in ["plan.xlsx", *fragments, "Hint:"]:
        assert fragment in message
    assert not out.exists()


@pytest.mark.parametrize("args, fragment", [
    (["--month", "2026-13"], "month must be 'YYYY-MM'"),
    (["--month", "2026-05", "--rate", "EUR"], "CODE=RATE"),
    (["--month", "2026-05", "--from", "nowhere"], "provider:uri"),
    (["--month", "2026-05", "--rate", "EUR=abc"], "CODE=RATE"),
    (["--month", "2026-05", "--fail-on-variance", "ten"], "--fail-on-variance must be a percentage"),
    (["--month", "2026-05", "--threshold", "-5"], "--threshold must be a percentage"),
])
def test_bad_options_exit_2(args, fragment, tmp_path, simple_plan, capsys):
    bill = write_bill(tmp_path / "may.csv", [{}])
    assert main(["reconcile", "--plan", str(simple_plan), "--bills", str(bill), "--out", str(tmp_path / "o"),
                 "--quiet", *args]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert fragment in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_out_that_is_a_file_exits_2(tmp_path, simple_plan, capsys):
    bill = write_bill(tmp_path / "may.csv", [{}])
    out = tmp_path / "out.txt"
    out.write_text("not a folder")
    assert main(["reconcile", "--plan", str(simple_plan), "--bills", str(bill), "--month", "2026-05",
                 "--out", str(out), "--quiet"]) == 2
    assert "--out must be a folder" in capsys.readouterr().err
