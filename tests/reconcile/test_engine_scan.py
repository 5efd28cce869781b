"""The engine's scan with DuckDB (:func:`~finops.reconcile.engine.run_aggregation`, :func:`reconcile_month`):
the progress it reports, a scan stopped midway, errors that name file, row and column, the unmapped CSV, bills
split over files, and the instance catalog it falls back on. Expected figures are worked here from the rows
written (csv + Decimal) and from the catalog files themselves.
"""

from __future__ import annotations

import csv
import dataclasses
import threading
import time
from collections import defaultdict
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from finops.errors import CurrencyMismatchError, InputError
from finops.money import Money
from finops.reconcile.bills import open_bills
from finops.reconcile.commitment_schedule import EarlierCommitment
from finops.reconcile import engine
from finops.reconcile.engine import catalog_gpus, reconcile_month, run_aggregation
from finops.reconcile.plan import BudgetLine, MappingRule, Plan

from .conftest import BASE_ROW, write_bill

D = Decimal
MONTH = "2026-05"
PLAN = Plan(budget=(BudgetLine(MONTH, "gpu", "cc", "OPEX", "AWS", Money.of(100, "USD")),),
            mapping=(MappingRule(1, "gpu", service_name="AmazonEC2"),))
CATALOG = Path(__file__).parents[2] / "finops" / "catalog" / "data"


def hourly(n: int, **fields: Any) -> list[dict[str, Any]]:
    """``n`` hourly rows of May, costs varying by hour."""
    return [{"ChargePeriodStart": f"2026-05-{1 + h // 24:02d}T{h % 24:02d}:00:00Z",
             "ChargePeriodEnd": f"2026-05-{1 + h // 24:02d}T{h % 24:02d}:59:59Z",
             "BilledCost": str(D("1.25") + D(h % 5) / 100), "EffectiveCost": str(D("1.2") + D(h % 3) / 100),
             **fields} for h in range(n)]


class ScriptedConnection:
    """A DuckDB connection whose scan takes ``delay`` seconds and whose progress reads from ``progress``
    (then -1, DuckDB's "none"); every other call goes to the real connection. Records interrupts."""

    def __init__(self, con: duckdb.DuckDBPyConnection, progress: list[float], delay: float,
                 wait_for_interrupt: bool = False) -> None:
        self.con, self.progress, self.delay = con, list(progress), delay
        self.interrupted = threading.Event()
        self.wait_for_interrupt = wait_for_interrupt

    def execute(self, sql: str, *args: Any):
        if sql.startswith("CREATE OR REPLACE TEMP TABLE"):
            if self.wait_for_interrupt:
                self.interrupted.wait(5)
                raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
            time.sleep(self.delay)
        return self.con.execute(sql, *args)

    def query_progress(self) -> float:
        return self.progress.pop(0) if self.progress else -1.0

    def interrupt(self) -> None:
        self.interrupted.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


@pytest.fixture
def bill(tmp_path) -> Path:
    return write_bill(tmp_path / "may.csv", hourly(30) + hourly(6, ServiceName="AmazonS3"))


def scan(bill_paths: list[Path], **options: Any):
    con = duckdb.connect()
    files = open_bills(con, bill_paths)
    return run_aggregation(con, files, MONTH, PLAN, **options)


def test_progress_as_duckdb_reports_it_then_100(bill):
    """DuckDB's -1 ("no progress yet") is not passed on; 0 and every later figure are, then 100 at the end."""
    con = duckdb.connect()
    files = open_bills(con, [bill])
    seen: list[float] = []
    scripted = ScriptedConnection(con, [-1.0, 0.0, 0.5, 42.0, -1.0, 99.5], delay=1.2)
    threads: list[set[str]] = []

    def record(progress: float) -> None:
        seen.append(progress)
        threads.append({t.name for t in threading.enumerate()})

    summary = run_aggregation(scripted, files, MONTH, PLAN, record)
    assert seen == [0.0, 0.5, 42.0, 99.5, 100.0]
    assert sum(g.row_count for g in summary.groups) == 36
    # while it runs, the scan is a thread of its own, named so that a stack dump (py-spy, faulthandler) says so
    assert all("finops-reconcile-scan" in names for names in threads[:-1])
    assert "finops-reconcile-scan" not in threads[-1]


def test_no_progress_callback_on_a_slow_scan(bill):
    con = duckdb.connect()
    files = open_bills(con, [bill])
    summary = run_aggregation(ScriptedConnection(con, [0.0, 50.0], delay=0.35), files, MONTH, PLAN)
    assert sum(g.row_count for g in summary.groups) == 36


def test_a_failing_callback_stops_the_scan(bill):
    """Ctrl-C (or a callback that raises) interrupts DuckDB's scan and is raised as it is."""
    con = duckdb.connect()
    files = open_bills(con, [bill])
    scripted = ScriptedConnection(con, [10.0], delay=0, wait_for_interrupt=True)

    def stop(progress: float) -> None:
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_aggregation(scripted, files, MONTH, PLAN, stop)
    assert scripted.interrupted.is_set() and time.monotonic() - started < 4


def test_a_scan_error_neither_row_nor_value_explains(bill):
    con = duckdb.connect()
    files = open_bills(con, [bill])

    class Failing(ScriptedConnection):
        def execute(self, sql: str, *args: Any):
            if sql.startswith("CREATE OR REPLACE TEMP TABLE"):
                raise duckdb.IOException("IO Error: disk full\nsecond line")
            return self.con.execute(sql, *args)

    with pytest.raises(InputError) as err:
        run_aggregation(Failing(con, [], 0), files, MONTH, PLAN)
    assert str(err.value) == (f"{bill}: cannot read the bills: IO Error: disk full. "
                              "Hint: check that every file is a FOCUS 1.2 export")
    assert err.value.where.file == str(bill)


def test_a_scan_error_over_two_files_names_both(tmp_path):
    files = [write_bill(tmp_path / "a.csv", hourly(2)), write_bill(tmp_path / "b.csv", hourly(3, ServiceName="AmazonS3"))]
    con = duckdb.connect()
    opened = open_bills(con, files)

    class Failing(ScriptedConnection):
        def execute(self, sql: str, *args: Any):
            if sql.startswith("CREATE OR REPLACE TEMP TABLE"):
                raise duckdb.IOException("IO Error: disk full")
            return self.con.execute(sql, *args)

    with pytest.raises(InputError, match="cannot read the bills") as err:
        run_aggregation(Failing(con, [], 0), opened, MONTH, PLAN)
    assert err.value.where.file == f"{files[0]}, {files[1]}"


def test_a_value_that_does_not_cast_names_its_row_and_column(tmp_path):
    rows = hourly(5)
    rows[3]["BilledCost"] = "12,5"
    bill = write_bill(tmp_path / "bad.csv", rows)
    with pytest.raises(InputError) as err:
        scan([bill])
    assert (err.value.where.file, err.value.where.row, err.value.where.column) == (str(bill), 5, "BilledCost")


@pytest.mark.parametrize("column", ["ContractedCost", "PricingQuantity", "BillingPeriodEnd"])
def test_a_checked_column_no_figure_sums_is_still_cast(tmp_path, column):
    """Columns the figures do not sum are read from a text file only to be cast: a bad one is found."""
    rows = hourly(4)
    rows[2][column] = "n/a"
    bill = write_bill(tmp_path / "bad.csv", rows)
    with pytest.raises(InputError) as err:
        scan([bill])
    assert (err.value.where.row, err.value.where.column) == (4, column)


def test_a_malformed_row_is_named(tmp_path):
    bill = write_bill(tmp_path / "ok.csv", hourly(3))
    lines = bill.read_text().splitlines()
    lines.insert(2, lines[1] + ",extra,fields")
    bill.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        scan([bill])
    assert (err.value.where.file, err.value.where.row) == (str(bill), 3)


@pytest.mark.parametrize("basis, column", [("invoice", "BillingPeriodStart"), ("usage", "ChargePeriodStart")])
def test_a_month_without_charges_names_the_months_held(tmp_path, basis, column):
    april = [{**r, "ChargePeriodStart": r["ChargePeriodStart"].replace("2026-05", "2026-04"),
              "ChargePeriodEnd": r["ChargePeriodEnd"].replace("2026-05", "2026-04")} for r in hourly(2)]
    files = [write_bill(tmp_path / "a.csv", hourly(2)), write_bill(tmp_path / "b.csv", april)]
    con = duckdb.connect()
    opened = open_bills(con, files)
    with pytest.raises(InputError) as err:
        run_aggregation(con, opened, "2026-07", PLAN, basis=basis)
    assert str(err.value) == (f"{files[0]}, {files[1]}, column {column}: no charges in 2026-07; the bills hold "
                              "2026-04, 2026-05. Hint: pick a month the bills cover, or give that month's bills")
    assert (err.value.where.file, err.value.where.column) == (f"{files[0]}, {files[1]}", column)


def test_bills_without_rows_say_so(tmp_path):
    bill = write_bill(tmp_path / "empty.csv", [])
    with pytest.raises(InputError, match=r": no charges in 2026-05; the bills hold no rows\. Hint: pick a month"):
        scan([bill])


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_unmapped_csv_holds_every_unmapped_group(tmp_path):
    rows = (hourly(10) + hourly(7, ServiceName="AmazonS3") + hourly(3, ServiceName="AWSDataTransfer", RegionId="eu-west-1")
            + hourly(2, ServiceName="AmazonS3", BillingCurrency="EUR"))
    bill = write_bill(tmp_path / "may.csv", rows)
    out = tmp_path / "o'brien" / "unmapped.csv"
    out.parent.mkdir()
    scan([bill], unmapped_csv=out)
    sums: dict[tuple[str, ...], list[Any]] = defaultdict(lambda: [D(0), D(0), 0])
    for row in rows:
        row = {**BASE_ROW, **row}
        if row["ServiceName"] != "AmazonEC2":
            key = (row["ProviderName"], row["SubAccountName"], row["ServiceName"], "", row["RegionId"], row["Tags"],
                   row["BillingCurrency"])
            sums[key][0] += D(row["EffectiveCost"])
            sums[key][1] += D(row["BilledCost"])
            sums[key][2] += 1
    got = [(*(r[c] for c in ("ProviderName", "SubAccount", "ServiceName", "InstanceType", "RegionId", "Tags",
                             "BillingCurrency")), D(r["EffectiveCost"]), D(r["BilledCost"]), int(r["Charges"]))
           for r in read_csv(out)]
    assert got == sorted(((*k, *v) for k, v in sums.items()), key=lambda r: (-r[7], r[:7]))
    assert list(out.parent.iterdir()) == [out]  # written through a partial file, nothing left beside it


def test_an_unmapped_csv_that_cannot_be_written_names_the_file(bill, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    out = tmp_path / "a-file" / "unmapped.csv"
    with pytest.raises(InputError, match=": cannot write unmapped.csv: Not a directory") as err:
        scan([bill], unmapped_csv=out)
    assert err.value.where.file == str(out)


def test_duckdb_failing_to_write_the_unmapped_csv_names_the_file(bill, tmp_path):
    con = duckdb.connect()
    files = open_bills(con, [bill])

    class FullDisk(ScriptedConnection):
        def execute(self, sql: str, *args: Any):
            if sql.startswith("COPY"):
                raise duckdb.IOException("IO Error: no space left\nsecond line")
            return self.con.execute(sql, *args)

    out = tmp_path / "unmapped.csv"
    with pytest.raises(InputError) as err:
        run_aggregation(FullDisk(con, [], 0), files, MONTH, PLAN, unmapped_csv=out)
    assert str(err.value) == (f"{out}: cannot write the unmapped charges: IO Error: no space left. "
                              "Hint: check that the folder exists and is writable")
    assert err.value.where.file == str(out) and not out.exists()


def test_bills_split_over_files_fold_to_the_same_groups(tmp_path):
    rows = hourly(24) + hourly(5, ServiceName="AmazonS3")
    whole = scan([write_bill(tmp_path / "all.csv", rows)])
    parts = scan([write_bill(tmp_path / "a.csv", rows[:11]), write_bill(tmp_path / "b.csv", rows[11:])])
    assert sorted(parts.groups, key=repr) == sorted(whole.groups, key=repr)
    assert sum(g.row_count for g in parts.groups) == 29


def test_the_same_charges_in_two_files_are_refused(tmp_path):
    """Two files with the same charges of May (the second also holds June's) count them once only if refused."""
    rows = hourly(6)
    june = [{**r, "ChargePeriodStart": r["ChargePeriodStart"].replace("2026-05", "2026-06"),
             "ChargePeriodEnd": r["ChargePeriodEnd"].replace("2026-05", "2026-06")} for r in hourly(2)]
    files = [write_bill(tmp_path / "a.csv", rows), write_bill(tmp_path / "b.csv", rows + june)]
    with pytest.raises(InputError, match=r"same charges as .*a\.csv: the same 6 charges of 2026-05") as err:
        scan(files, basis="usage")
    assert err.value.where.file == str(files[1])


def test_a_second_currency_without_a_rate_is_located_only_when_rates_miss_it(tmp_path):
    rows = hourly(3) + hourly(2, BillingCurrency="EUR")
    bill = write_bill(tmp_path / "mixed.csv", rows)
    with pytest.raises(InputError, match="several billing currencies") as err:
        reconcile_month(PLAN, [bill], MONTH)
    assert (err.value.where.row, err.value.where.column) == (5, "BillingCurrency")
    rec = reconcile_month(PLAN, [bill], MONTH, rates={"EUR": D(2)})
    expected = sum(D(r["BilledCost"]) * (2 if r.get("BillingCurrency") == "EUR" else 1) for r in rows)
    assert rec.billed_cost.amount == expected


def test_a_rated_currency_in_any_case_is_converted_not_refused(tmp_path):
    """EUR spelled "EUR" and "eur" on the bill, the rate given as "eur": every row converts (as the engine's
    converter reads codes in upper case); nothing is located as lacking a rate."""
    rows = hourly(3) + hourly(2, BillingCurrency="EUR") + hourly(2, BillingCurrency="eur", ServiceName="AmazonS3")
    bill = write_bill(tmp_path / "mixed.csv", rows)
    rec = reconcile_month(PLAN, [bill], MONTH, rates={"eur": D("1.5")})
    expected = sum(D(r["BilledCost"]) * (D("1.5") if r.get("BillingCurrency", "USD") != "USD" else 1) for r in rows)
    assert rec.billed_cost.amount == expected


@pytest.mark.parametrize("rows", [
    hourly(3) + hourly(2, BillingCurrency="EUR"),
    hourly(2, BillingCurrency="usd") + hourly(2, BillingCurrency="eur") + hourly(1, BillingCurrency="GBP"),
    hourly(2, BillingCurrency="EUR") + hourly(2, BillingCurrency="GBP", ServiceName="AmazonS3"),
], ids=["plan-currency-and-a-rated-one", "codes-in-lower-case", "no-plan-currency"])
def test_a_bill_whose_currencies_all_convert_is_not_read_again(tmp_path, monkeypatch, rows):
    """Every currency is the plan's or has a rate: nothing lacks one, so the files are not scanned a second time
    looking for it (on a large bill, a second pass over every row)."""
    searched: list[tuple[Any, ...]] = []
    monkeypatch.setattr(engine, "locate_currency", lambda *args: searched.append(args))
    bill = write_bill(tmp_path / "mixed.csv", rows)
    rates = {"EUR": D(2), "gbp": D(3)}
    rec = reconcile_month(PLAN, [bill], MONTH, rates=rates)
    factor = {"USD": 1, "EUR": 2, "GBP": 3}
    assert rec.billed_cost.amount == sum(D(r["BilledCost"]) * factor[r.get("BillingCurrency", "USD").upper()]
                                         for r in rows)
    assert searched == []


def test_with_a_rate_for_one_currency_the_unrated_one_is_named(tmp_path):
    """USD (the plan's), EUR (rated) and GBP (not): the GBP row is named, with the rates that were given."""
    rows = hourly(3) + hourly(2, BillingCurrency="EUR") + hourly(1, BillingCurrency="GBP") + hourly(1)
    bill = write_bill(tmp_path / "mixed.csv", rows)
    with pytest.raises(InputError) as err:
        reconcile_month(PLAN, [bill], MONTH, rates={"EUR": D(2)})
    assert (err.value.where.row, err.value.where.column) == (7, "BillingCurrency")  # the sixth charge, below the header
    assert err.value.message == "no rate from GBP into USD (rates given for EUR)"


def test_one_other_currency_without_a_rate_names_every_file(tmp_path):
    files = [write_bill(tmp_path / "a.csv", hourly(2, BillingCurrency="EUR")),
             write_bill(tmp_path / "b.csv", hourly(3, BillingCurrency="EUR", ServiceName="AmazonS3"))]
    with pytest.raises(CurrencyMismatchError, match="bills are in EUR but the plan is in USD") as err:
        reconcile_month(PLAN, files, MONTH)
    assert err.value.where.file == f"{files[0]}, {files[1]}"


def catalog_rows() -> list[dict[str, str]]:
    rows = []
    for provider in ("aws", "gcp"):
        with (CATALOG / f"instances_{provider}.csv").open(newline="") as handle:
            rows += list(csv.DictReader(handle))
    return rows


@pytest.mark.parametrize("name, provider", [("AWS", "aws"), ("Amazon Web Services", "aws"), (" aws ", "aws"),
                                            ("Google Cloud", "gcp"), ("GCP", "gcp"), ("google cloud platform", "gcp")])
def test_catalog_gpus_of_every_instance_of_the_catalog_files(name, provider):
    rows = [r for r in catalog_rows() if r["provider"] == provider]
    assert len(rows) >= 3
    for row in rows:
        expected = (row["gpu_model"], int(row["gpu_count"]))
        assert catalog_gpus(name, row["instance_type"]) == expected
        assert catalog_gpus(name, f" {row['instance_type'].upper()} ") == expected


def test_catalog_gpus_of_other_instances_and_providers():
    aws = next(r for r in catalog_rows() if r["provider"] == "aws")
    gcp = next(r for r in catalog_rows() if r["provider"] == "gcp")
    assert catalog_gpus("Oracle", aws["instance_type"]) is None
    assert catalog_gpus("Microsoft", gcp["instance_type"]) is None
    assert catalog_gpus("AWS", "m6i.large") is None
    assert catalog_gpus("AWS", gcp["instance_type"]) is None and catalog_gpus("Google Cloud", aws["instance_type"]) is None


def test_without_a_plan_every_charge_is_unmapped(bill):
    con = duckdb.connect()
    summary = run_aggregation(con, open_bills(con, [bill]), MONTH)
    assert {g.plan_line for g in summary.groups} == {None} and sum(g.row_count for g in summary.groups) == 36


def test_a_file_whose_types_are_unknown_is_read_as_text(tmp_path):
    """A BillFile without its types (made by hand) has its checked columns cast as a text file's are."""
    rows = hourly(4)
    rows[1]["ContractedCost"] = "n/a"
    bill = write_bill(tmp_path / "bad.csv", rows)
    con = duckdb.connect()
    files = [dataclasses.replace(f, types=()) for f in open_bills(con, [bill])]
    with pytest.raises(InputError) as err:
        run_aggregation(con, files, MONTH, PLAN)
    assert (err.value.where.row, err.value.where.column) == (3, "ContractedCost")


def test_rates_choose_the_largest_unmapped_groups_past_the_listed_ones(tmp_path):
    """201 unmapped services: 200 at 1.00 USD and one at 0.90 EUR, 1.80 USD at the rate given. The review lists
    200 one by one: the EUR one among them (it is the largest in USD), one USD service in the rest."""
    rows = [{"ServiceName": f"Service{i:03d}", "BilledCost": "1.00", "EffectiveCost": "1.00"} for i in range(200)]
    rows.append({"ServiceName": "EuroService", "BillingCurrency": "EUR", "BilledCost": "0.90", "EffectiveCost": "0.90"})
    bill = write_bill(tmp_path / "many.csv", rows)
    unmapped = reconcile_month(PLAN, [bill], MONTH, rates={"EUR": D(2)}).unmapped
    assert unmapped[0].service_name == "EuroService" and unmapped[0].effective_cost.amount == D("1.8")
    assert unmapped[-1].provider_name == "1 more unmapped charge groups (all in --unmapped-csv)"
    assert unmapped[-1].effective_cost.amount == 1 and len(unmapped) == 201


def test_reconcile_month_passes_on_its_options(tmp_path):
    """The unmapped CSV, the threshold, the materiality amount and the history's commitments reach the figures."""
    rows = hourly(10) + hourly(4, ServiceName="AmazonS3")
    bill = write_bill(tmp_path / "may.csv", rows)
    out = tmp_path / "unmapped.csv"
    earlier = {"ri-0": EarlierCommitment("ri-0", "AWS", "Reserved Instance", "All Upfront", date(2026, 1, 1), 12,
                                         D(1200), D(400), "2026-01", D(100))}
    rec = reconcile_month(PLAN, [bill], MONTH, unmapped_csv=out, threshold_pct=D(2000), materiality=D(0),
                          earlier_commitments=earlier)
    s3 = [r for r in rows if r.get("ServiceName") == "AmazonS3"]
    assert [(r["ServiceName"], D(r["EffectiveCost"])) for r in read_csv(out)] == [
        ("AmazonS3", sum(D(r["EffectiveCost"]) for r in s3))]
    assert {line.plan_line: line.flag for line in rec.lines} == {"gpu": "", "Unmapped": "over"}
    assert [c.commitment_id for c in rec.commitment_lines] == ["ri-0"]


def test_the_default_thresholds_are_ten_percent_and_100(tmp_path):
    """110.50 against a plan of 100 is 10.5 % over, yet 10.50 is under the default 100 materiality amount:
    not flagged, as it is under an amount of 10.50 or less."""
    bill = write_bill(tmp_path / "may.csv", [{"BilledCost": "110.50", "EffectiveCost": "110.50"}])
    line = reconcile_month(PLAN, [bill], MONTH).lines[0]
    assert (line.variance_pct, line.flag) == (D("0.105"), "")
    assert reconcile_month(PLAN, [bill], MONTH, materiality=D("10.50")).lines[0].flag == "over"
    assert reconcile_month(PLAN, [bill], MONTH, materiality=D("10.51")).lines[0].flag == ""


def test_a_file_whose_types_do_not_match_its_columns_is_refused(tmp_path):
    """A hand-made BillFile with fewer types than columns is refused, not read with its last columns unchecked."""
    con = duckdb.connect()
    files = [dataclasses.replace(f, types=f.types[:-1]) for f in open_bills(con, [write_bill(tmp_path / "a.csv",
                                                                                              hourly(2))])]
    with pytest.raises(ValueError, match="shorter"):
        run_aggregation(con, files, MONTH, PLAN)


def test_the_scan_spills_into_its_own_folder_and_removes_it(tmp_path, monkeypatch):
    """DuckDB's temporary folder is a new one named finops-reconcile-..., with the scan's memory limit; it is
    gone once the month is reconciled."""
    seen: list[tuple[str, bool, str]] = []
    connect = duckdb.connect

    def recording(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        con = connect(*args, **kwargs)
        folder = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
        limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        seen.append((folder, Path(folder).is_dir(), limit))
        return con

    monkeypatch.setattr(duckdb, "connect", recording)
    reconcile_month(PLAN, [write_bill(tmp_path / "may.csv", hourly(3))], MONTH)
    [(folder, existed, limit)] = seen
    assert Path(folder).name.startswith("finops-reconcile-") and existed and not Path(folder).exists()
    assert limit == duckdb.connect(config={"memory_limit": "512MB"}).execute(
        "SELECT current_setting('memory_limit')").fetchone()[0]


@pytest.mark.parametrize("basis, column", [("invoice", "BillingPeriodStart"), ("usage", "ChargePeriodStart")])
def test_the_month_basis_reaches_the_scan(tmp_path, basis, column):
    """Late usage of April on May's invoice and usage of 31 May on June's: the basis picks which rows are May's."""
    def billed_in(invoice_month: str, usage_day: str, hours: int) -> list[dict[str, Any]]:
        following = "2026-06" if invoice_month == "2026-05" else "2026-07"
        return [{**r, "ChargePeriodStart": f"{usage_day}T{h:02d}:00:00Z", "ChargePeriodEnd": f"{usage_day}T{h:02d}:59:59Z",
                 "BillingPeriodStart": f"{invoice_month}-01T00:00:00Z",
                 "BillingPeriodEnd": f"{following}-01T00:00:00Z"} for h, r in enumerate(hourly(hours))]

    april_on_may, may_on_june = billed_in("2026-05", "2026-04-30", 7), billed_in("2026-06", "2026-05-31", 5)
    rows = hourly(20) + april_on_may + may_on_june
    rec = reconcile_month(PLAN, [write_bill(tmp_path / "may.csv", rows)], MONTH, basis=basis)
    mine = [{**BASE_ROW, **r} for r in rows if {**BASE_ROW, **r}[column].startswith(MONTH)]
    assert len(mine) == (27 if basis == "invoice" else 25)
    assert rec.billed_cost.amount == sum(D(r["BilledCost"]) for r in mine)
    assert rec.effective_cost.amount == sum(D(r["EffectiveCost"]) for r in mine)
    assert rec.bill_rows == len(mine)
