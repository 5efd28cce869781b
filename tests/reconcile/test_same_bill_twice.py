"""The same bill given twice in two formats or exports is refused; part files, accounts and months are not.

A bill re-exported (Parquet instead of CSV, another column order, quoting, number and time format) has
other bytes but the same charges: `finops reconcile` exits 2 naming both files and writes nothing. Files
that hold different charges of the month (an export split into parts, two providers, two accounts, another
month) reconcile as before, and their totals add up.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import duckdb
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from finops.cli import main
from finops.reconcile.aggregation import ChargeGroup, Summary
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.dialects import remote_sql
from finops.reconcile.engine import run_aggregation
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

from .conftest import write_bill


def as_parquet(bill: Path, out: Path) -> Path:
    """The bill as pyarrow reads the CSV (costs as DOUBLE, times as timestamps, empty text as '') in Parquet."""
    pq.write_table(pa_csv.read_csv(bill), out)
    return out


def reexported(bill: Path, out: Path) -> Path:
    """The bill as another tool writes it: columns reversed, every field quoted, numbers and times retyped
    (``560.920320`` becomes ``560.92032``, ``2026-05-01T00:00:00Z`` becomes ``2026-05-01 00:00:00+00``)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    names = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM read_csv('{bill}')").fetchall()]
    columns = ", ".join(f'"{name}"' for name in reversed(names))
    con.execute(f"COPY (SELECT {columns} FROM read_csv('{bill}')) TO '{out}' (HEADER, FORCE_QUOTE *)")
    return out


def in_parts(bill: Path, folder: Path, parts: int) -> list[Path]:
    """The bill's rows dealt into ``parts`` CSV files by position, each with the header (as AWS splits exports)."""
    with gzip.open(bill, "rt", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    paths = []
    for k in range(parts):
        path = folder / f"part-{k + 1}.csv"
        with path.open("w", newline="") as handle:
            csv.writer(handle).writerows([header, *rows[k * len(rows) // parts:(k + 1) * len(rows) // parts]])
        paths.append(path)
    return paths


def header_only(bill: Path, out: Path) -> Path:
    with gzip.open(bill, "rt", newline="") as handle:
        out.write_text(handle.readline())
    return out


def reconcile(plan: Path, bills: list[Path], out: Path, capsys) -> tuple[int, str, str]:
    args = ["reconcile", "--plan", str(plan), "--month", SAMPLE_MONTH, "--out", str(out), "--json"]
    for bill in bills:
        args += ["--bills", str(bill)]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.replace("\n", "")


REFUSED = {  # case -> (bills, the file named as the duplicate, the file it repeats)
    "CSV and Parquet": (lambda aws, gcp, tmp: [aws, as_parquet(aws, tmp / "may.parquet")], "may.parquet", "aws"),
    "Parquet first, then CSV": (lambda aws, gcp, tmp: [as_parquet(aws, tmp / "may.parquet"), aws], "aws",
                                "may.parquet"),
    "CSV and a re-exported CSV": (lambda aws, gcp, tmp: [aws, reexported(aws, tmp / "may-export.csv")],
                                  "may-export.csv", "aws"),
    "Parquet and a re-exported CSV, among other bills": (
        lambda aws, gcp, tmp: [as_parquet(aws, tmp / "may.parquet"), gcp, reexported(aws, tmp / "may-export.csv")],
        "may-export.csv", "may.parquet"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_same_bill_twice_exits_2_naming_both_files_and_writes_nothing(case, tmp_path, simple_plan, capsys):
    aws, gcp = sample_bill_paths()
    make, duplicate, original = REFUSED[case]
    bills = make(aws, gcp, tmp_path)
    out = tmp_path / "out"
    code, stdout, err = reconcile(simple_plan, bills, out, capsys)
    assert code == 2 and stdout == ""
    named = {"aws": aws.name}
    assert err.index(named.get(duplicate, duplicate)) < err.index("same charges as") < err.index(
        named.get(original, original))
    assert "the same bill in two formats or exports; give it once" in err
    assert "Traceback" not in err
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.parametrize("copy", [as_parquet, reexported])
def test_either_copy_alone_reconciles_like_the_original(copy, tmp_path, template_plan, capsys):
    """What makes the two copies the same bill also makes them reconcile the same, each given alone."""
    aws, _ = sample_bill_paths()
    suffix = ".parquet" if copy is as_parquet else ".csv"
    original = totals(template_plan, [aws], tmp_path / "original", capsys)
    assert totals(template_plan, [copy(aws, tmp_path / f"copy{suffix}")], tmp_path / "copy", capsys) == original


def test_tags_written_another_way_do_not_hide_a_copy(tmp_path, simple_plan, capsys):
    """Tags are JSON text; a re-export may space it differently. The charges are still the same."""
    rows = [{"ResourceId": "i-1", "Tags": '{"team":"ml","env":"prod"}'}, {"ResourceId": "i-2", "Tags": '{"team":"ml"}'}]
    spaced = [{**row, "Tags": row["Tags"].replace(":", ": ").replace(",", ", ")} for row in rows]
    first = write_bill(tmp_path / "may.csv", rows)
    again = write_bill(tmp_path / "may-spaced.csv", spaced[::-1])
    code, _, err = reconcile(simple_plan, [first, again], tmp_path / "out", capsys)
    assert code == 2
    assert "may-spaced.csv" in err and "same charges as" in err and "may.csv" in err.split("same charges as")[1]


def test_a_longer_export_that_repeats_the_month_is_refused(tmp_path, simple_plan, capsys):
    """April and May in one export, May alone in another: May's charges would count twice."""
    may = write_bill(tmp_path / "may.csv", [{"BilledCost": "7"}, {"ResourceId": "i-2", "BilledCost": "3"}])
    april_may = write_bill(tmp_path / "april-may.csv", [
        {"ChargePeriodStart": "2026-04-03T00:00:00Z", "ChargePeriodEnd": "2026-04-03T01:00:00Z"},
        {"ResourceId": "i-2", "BilledCost": "3.000"}, {"BilledCost": "7.0"}])
    code, _, err = reconcile(simple_plan, [may, april_may], tmp_path / "out", capsys)
    assert code == 2
    assert "april-may.csv" in err and "same charges as" in err and "may.csv" in err.split("same charges as")[1]


def totals(plan: Path, bills: list[Path], out: Path, capsys) -> dict:
    code, stdout, err = reconcile(plan, bills, out, capsys)
    assert code == 0, err
    return json.loads(stdout)


@pytest.mark.parametrize("parts", [2, 3])
def test_an_export_in_part_files_is_accepted_and_adds_up_to_the_whole(parts, tmp_path, simple_plan, capsys):
    aws, _ = sample_bill_paths()
    whole = totals(simple_plan, [aws], tmp_path / "whole", capsys)
    split = totals(simple_plan, in_parts(aws, tmp_path, parts), tmp_path / "parts", capsys)
    assert split == whole
    assert whole["actual_billed_cost"] > 0


def test_two_providers_are_accepted_and_add_up(tmp_path, simple_plan, capsys):
    aws, gcp = sample_bill_paths()
    both = totals(simple_plan, [aws, gcp], tmp_path / "both", capsys)
    alone = [totals(simple_plan, [bill], tmp_path / bill.name, capsys) for bill in (aws, gcp)]
    for key in ("actual_billed_cost", "actual_effective_cost"):
        assert both[key] == pytest.approx(alone[0][key] + alone[1][key], abs=0.005)


ACCEPTED = {  # case -> (what makes the second file's one charge differ from the first's, May's BilledCost)
    "two accounts with the same usage": ({"BillingAccountId": "999"}, 20),
    "two sub-accounts with the same usage": ({"SubAccountId": "333"}, 20),
    "another resource at the same price": ({"ResourceId": "i-other"}, 20),
    "another hour": ({"ChargePeriodStart": "2026-05-03T01:00:00Z", "ChargePeriodEnd": "2026-05-03T02:00:00Z"}, 20),
    "another price": ({"BilledCost": "10.01"}, 20.01),
    "another month": ({"ChargePeriodStart": "2026-04-03T00:00:00Z", "ChargePeriodEnd": "2026-04-03T01:00:00Z"}, 10),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_bills_with_other_charges_are_accepted(case, tmp_path, simple_plan, capsys):
    """Each file holds one charge of 10.00 (``BASE_ROW``); the second differs in one column only."""
    changes, billed = ACCEPTED[case]
    first = write_bill(tmp_path / "first.csv", [{"ResourceId": "i-1"}])
    second = write_bill(tmp_path / "second.csv", [{"ResourceId": "i-1", **changes}])
    assert totals(simple_plan, [first, second], tmp_path / "out", capsys)["actual_billed_cost"] == pytest.approx(billed)


def test_files_without_charges_in_the_month_are_never_duplicates(tmp_path, simple_plan, capsys):
    """A header-only CSV and an empty Parquet file add nothing, so both are accepted beside the bill."""
    aws, _ = sample_bill_paths()
    empty_csv = header_only(aws, tmp_path / "empty.csv")
    empty_parquet = as_parquet(empty_csv, tmp_path / "empty.parquet")
    assert pq.read_metadata(empty_parquet).num_rows == 0
    alone = totals(simple_plan, [aws], tmp_path / "alone", capsys)
    assert totals(simple_plan, [aws, empty_csv, empty_parquet], tmp_path / "out", capsys) == alone


def test_groups_per_file_fold_into_the_single_query_groups():
    """With several files the scan groups per file, then regroups: the same groups as one GROUP BY."""
    con = duckdb.connect()
    files = open_bills(con, sample_bill_paths())
    folded = run_aggregation(con, files, SAMPLE_MONTH).groups
    single = Summary.from_rows(con.execute(remote_sql("duckdb", VIEW, SAMPLE_MONTH)).fetchall()).groups

    def key(group: ChargeGroup) -> str:
        return repr(group)

    assert len(folded) == len(single) > 50
    assert sorted(folded, key=key) == sorted(single, key=key)
