"""The balance left of every commitment still running, carried by the history from month to month.

Three consecutive months (March, April, May 2026) of bills shaped like real exports: every commitment's
usage hour by hour (used, with every fifth hour unused), beside on-demand hours, each month's bill in two
files. Four commitments:

* ``ri-up-1``: AWS reserved instance bought 1 March 2026, 1 year all upfront: 3.00 an hour x 8,760 hours =
  26,280 paid in March; amortized 3.00 an hour: 2,232 (March, 744 h), 2,160 (April, 720 h), 2,232 (May).
  Balance left: 24,048 -> 21,888 -> 19,656.
* ``sp-up-2``: AWS savings plan bought 15 April 2026, 3 years all upfront: 1.25 x 26,280 h = 32,850 paid in
  April; amortized 480 (April, 384 h from the 15th), 930 (May). Balance: 32,370 -> 31,440.
* ``cud-fee-3``: Google Cloud CUD, 1 year, monthly fee equal to its amortization (0.90 an hour): balance 0.
* ``ri-old-4``: AWS reserved instance bought before the history began (no purchase row in any month),
  named ``EC2ReservedInstance-3yr-AllUpfront``; 2.00 an hour: 1,488 in March. Estimate: 1,488 x 36 =
  53,568 bought by March; balance 52,080 -> 50,640 -> 49,152.

The expected balances are the hand-worked figures above, and the same sums read straight from the CSV
files with ``csv`` and ``Decimal``.
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl

from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile.history import HISTORY_FILE, History

from .conftest import write_bill

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
MONTHS = {"2026-03": (datetime(2026, 3, 1, tzinfo=timezone.utc), 744),
          "2026-04": (datetime(2026, 4, 1, tzinfo=timezone.utc), 720),
          "2026-05": (datetime(2026, 5, 1, tzinfo=timezone.utc), 744)}
P5 = {"x_InstanceType": "p5.48xlarge", "ServiceName": "AmazonEC2"}
GCP = {"ProviderName": "Google Cloud", "PublisherName": "Google Cloud", "InvoiceIssuerName": "Google Cloud",
       "InvoiceId": "G-1", "ServiceName": "Compute Engine", "x_InstanceType": "a3-highgpu-8g"}
#: commitment id -> (fields of its rows, hourly amortization, first hour it covers: (month, hour))
COMMITMENTS: dict[str, tuple[dict[str, Any], Decimal, tuple[str, int]]] = {
    "arn:aws:ec2:us-east-1:111:reservation/ri-up-1": (
        {**P5, "CommitmentDiscountType": "Reserved Instance",
         "CommitmentDiscountName": "EC2ReservedInstance-1yr-AllUpfront"},
        Decimal("3.00"), ("2026-03", 0)),
    "arn:aws:savingsplans::111:savingsplan/sp-up-2": (
        {**P5, "CommitmentDiscountType": "Savings Plan",
         "CommitmentDiscountName": "ComputeSavingsPlan-3yr-AllUpfront"},
        Decimal("1.25"), ("2026-04", 14 * 24)),
    "//compute.googleapis.com/projects/p/regions/us-central1/commitments/cud-fee-3": (
        {**GCP, "CommitmentDiscountType": "Committed Use Discount", "CommitmentDiscountName": "ResourceBasedCUD-1yr"},
        Decimal("0.90"), ("2026-03", 0)),
    "arn:aws:ec2:us-east-1:111:reservation/ri-old-4": (
        {**P5, "CommitmentDiscountType": "Reserved Instance",
         "CommitmentDiscountName": "EC2ReservedInstance-3yr-AllUpfront"},
        Decimal("2.00"), ("2026-03", 0)),
}
#: The purchase rows: commitment id -> (month, hour, BilledCost, ChargeFrequency, SkuPriceDetails).
UPFRONT = {"arn:aws:ec2:us-east-1:111:reservation/ri-up-1":
           ("2026-03", 0, "26280", '{"x_PurchaseTerm":"1yr","x_PaymentOption":"AllUpfront"}'),
           "arn:aws:savingsplans::111:savingsplan/sp-up-2":
           ("2026-04", 14 * 24, "32850", '{"x_PurchaseTerm":"3yr","x_PaymentOption":"AllUpfront"}')}
CUD_FEE = "//compute.googleapis.com/projects/p/regions/us-central1/commitments/cud-fee-3"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _month_rows(month: str) -> list[dict[str, Any]]:
    start, hours = MONTHS[month]
    rows: list[dict[str, Any]] = []
    for h in range(hours):
        at = {"ChargePeriodStart": _stamp(start + timedelta(hours=h)),
              "ChargePeriodEnd": _stamp(start + timedelta(hours=h + 1))}
        drift = Decimal(h % 7) / 1000
        rows.append({**P5, **at, "ResourceId": "i-od", "BilledCost": 55 + drift, "EffectiveCost": 55 + drift,
                     "ListCost": 55 + drift, "ContractedCost": 55 + drift})
        for cid, (fields, rate, (first_month, first_hour)) in COMMITMENTS.items():
            if (month, h) < (first_month, first_hour):
                continue
            status = "Unused" if h % 5 == 0 else "Used"
            rows.append({**fields, **at, "CommitmentDiscountId": cid, "CommitmentDiscountStatus": status,
                         "CommitmentDiscountCategory": "Usage", "PricingCategory": "Committed", "BilledCost": 0,
                         "EffectiveCost": rate, "ListCost": 0 if status == "Unused" else 55, "ContractedCost": rate,
                         "ConsumedQuantity": 0 if status == "Unused" else 1})
    for cid, (purchase_month, hour, billed, details) in UPFRONT.items():
        if purchase_month == month:
            rows.append(_purchase(cid, start + timedelta(hours=hour), start + timedelta(hours=hours), billed,
                                  "One-Time", details))
    fee = COMMITMENTS[CUD_FEE][1] * hours
    rows.append(_purchase(CUD_FEE, start, start + timedelta(hours=hours), fee, "Recurring", '{"x_Plan":"TWELVE_MONTH"}'))
    return rows


def _purchase(cid: str, start: datetime, end: datetime, billed: Any, frequency: str, details: str) -> dict[str, Any]:
    fields = COMMITMENTS[cid][0]
    return {**fields, "ChargePeriodStart": _stamp(start), "ChargePeriodEnd": _stamp(end), "ChargeCategory": "Purchase",
            "ChargeFrequency": frequency, "CommitmentDiscountId": cid, "BilledCost": billed, "EffectiveCost": 0,
            "ListCost": 0, "ContractedCost": 0, "SkuPriceDetails": details, "ConsumedQuantity": "",
            "x_InstanceType": ""}


def write_month(folder: Path, month: str) -> list[Path]:
    """The month's bill in two files (first and second half of the rows), gzip CSV."""
    rows = _month_rows(month)
    half = len(rows) // 2
    return [write_bill(folder / f"{month}-a.csv.gz", rows[:half]), write_bill(folder / f"{month}-b.csv.gz", rows[half:])]


def csv_sums(paths: list[Path]) -> dict[str, tuple[Decimal, Decimal]]:
    """Per commitment id: (BilledCost of its Purchase rows, EffectiveCost of its Used and Unused rows), read
    from the files with csv and Decimal."""
    sums: dict[str, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for path in paths:
        with gzip.open(path, "rt", newline="") as handle:
            for row in csv.DictReader(handle):
                cid = row["CommitmentDiscountId"]
                if not cid:
                    continue
                if row["ChargeCategory"] == "Purchase":
                    sums[cid][0] += Decimal(row["BilledCost"])
                if row["CommitmentDiscountStatus"] in ("Used", "Unused"):
                    sums[cid][1] += Decimal(row["EffectiveCost"])
    return {cid: (paid, amortized) for cid, (paid, amortized) in sums.items()}


def short(cid: str) -> str:
    return cid.rsplit("/", 1)[-1]


def test_balances_carry_over_three_months_of_bills(tmp_path, simple_plan):
    out = tmp_path / "out"
    bills = {month: write_month(tmp_path, month) for month in MONTHS}
    recs = {month: reconcile_to_workbook(simple_plan, bills[month], month, out, run_at=RUN_AT) for month in MONTHS}

    # the balances read from the CSV files: paid to date - amortized to date (ri-old-4: 36 x its March amortization)
    paid: dict[str, Decimal] = defaultdict(Decimal)
    amortized: dict[str, Decimal] = defaultdict(Decimal)
    from_csv: dict[str, dict[str, Decimal]] = {}
    for month in MONTHS:
        for cid, (p, a) in csv_sums(bills[month]).items():
            paid[cid] += p
            amortized[cid] += a
        old = next(c for c in COMMITMENTS if c.endswith("ri-old-4"))
        march_rate = csv_sums(bills["2026-03"])[old][1]
        from_csv[month] = {short(c): (march_rate * 36 if c == old else paid[c]) - amortized[c]
                           for c in paid}

    by_hand = {"2026-03": {"ri-up-1": Decimal(24048), "cud-fee-3": Decimal(0), "ri-old-4": Decimal(52080)},
               "2026-04": {"ri-up-1": Decimal(21888), "sp-up-2": Decimal(32370), "cud-fee-3": Decimal(0),
                           "ri-old-4": Decimal(50640)},
               "2026-05": {"ri-up-1": Decimal(19656), "sp-up-2": Decimal(31440), "cud-fee-3": Decimal(0),
                           "ri-old-4": Decimal(49152)}}
    for month, (rec, _) in recs.items():
        got = {short(line.commitment_id): line.balance_left.amount for line in rec.commitment_lines}
        assert got == by_hand[month] == from_csv[month], month

    may, path = recs["2026-05"]
    lines = {short(line.commitment_id): line for line in may.commitment_lines}
    ri, sp, old = lines["ri-up-1"], lines["sp-up-2"], lines["ri-old-4"]
    # bought in March, seen again in May: its purchase from the history
    assert (ri.source, ri.purchase_date, ri.term_months, ri.end_date, ri.paid_to_date.amount, ri.paid_this_month.amount,
            ri.amortized.amount, ri.amortized_to_date.amount, ri.scheduled_monthly.amount) == (
        "history", date(2026, 3, 1), 12, date(2027, 3, 1), Decimal(26280), Decimal(0), Decimal(2232),
        Decimal(2232 + 2160 + 2232), Decimal(2190))
    assert (sp.source, sp.purchase_date, sp.end_date, sp.amortized_to_date.amount) == (
        "history", date(2026, 4, 15), date(2029, 4, 15), Decimal(480 + 930))
    assert (old.source, old.purchase_date, old.term_months, old.end_date, old.paid_to_date.amount) == (
        "estimate", None, 36, date(2029, 3, 1), Decimal(53568))
    # May's roll-forward: April's closing balance, plus May's fee, less May's amortization
    prepaid = may.commitments.prepaid()
    april_closing = sum(by_hand["2026-04"].values())
    cud_may = Decimal("0.90") * 744
    assert (prepaid.opening.amount, prepaid.bought.amount, prepaid.closing.amount, prepaid.estimated.amount) == (
        april_closing, cud_may, sum(by_hand["2026-05"].values()), Decimal(49152))
    assert prepaid.amortized.amount == Decimal(2232 + 930) + cud_may + Decimal(1488)

    # the review shows them: the schedule's balances and the bridge's roll-forward
    book = openpyxl.load_workbook(path, data_only=True)
    ws = book["Commitments"]
    ref = ws.tables["tblCommitmentSchedule"].ref
    rows = [[c.value for c in row] for row in ws[ref]]
    header = rows[0]
    shown = {r[0].rsplit("/", 1)[-1]: (r[header.index("Balance left")], r[header.index("Source")]) for r in rows[1:]}
    assert shown == {"ri-up-1": (19656, "bought in 2026-03's bills"), "sp-up-2": (31440, "bought in 2026-04's bills"),
                     "cud-fee-3": (0, "bought in 2026-03's bills"), "ri-old-4": (49152, "estimate: bought by 2026-03")}
    bridge = {row[0].value: row[1].value for row in book["P&L and cash"].iter_rows(max_col=2) if row[0].value}
    assert bridge["Balance at the start of the month"] == float(april_closing)
    assert bridge["= Balance left at the end of the month"] == float(sum(by_hand["2026-05"].values()))

    # a re-run of April replaces April's rows only: May's carried balances stay the same
    reconcile_to_workbook(simple_plan, bills["2026-04"], "2026-04", out, run_at=RUN_AT)
    kept = History(out / HISTORY_FILE).commitments_before("2026-05", "USD")
    assert {short(c): (e.paid, e.amortized) for c, e in kept.items()} == {
        short(c): (paid_c, amortized_c) for c, paid_c, amortized_c in (
            (c, sum(csv_sums(bills[m]).get(c, (Decimal(0), Decimal(0)))[0] for m in ("2026-03", "2026-04")),
             sum(csv_sums(bills[m]).get(c, (Decimal(0), Decimal(0)))[1] for m in ("2026-03", "2026-04")))
            for c in COMMITMENTS)}


def test_a_remote_engine_carries_the_same_balances(tmp_path, simple_plan):
    """May on BigQuery (the SQL sent, run by DuckDB over May's files) with the history of March and April
    kept by local runs: the same rows, balances included, as May run locally."""
    import duckdb

    from finops.reconcile.bills import VIEW, open_bills
    from finops.reconcile.dialects import reconcile_remote
    from templates.plan_reader import read_plan

    from .bigquery_jobs_server import run_on_duckdb

    out = tmp_path / "out"
    bills = {month: write_month(tmp_path, month) for month in MONTHS}
    for month in ("2026-03", "2026-04"):
        reconcile_to_workbook(simple_plan, bills[month], month, out, run_at=RUN_AT)
    earlier = History(out / HISTORY_FILE).earlier_inputs("2026-05", "USD")
    con = duckdb.connect()
    open_bills(con, bills["2026-05"])
    def runner(sql):
        return run_on_duckdb(con, sql, "bigquery", {"p.d.focus": VIEW})[1]

    remote = reconcile_remote(read_plan(simple_plan), runner, "bigquery", "p.d.focus", "2026-05", **earlier)
    local, _ = reconcile_to_workbook(simple_plan, bills["2026-05"], "2026-05", out, run_at=RUN_AT)
    assert remote.commitments == local.commitments
    assert {short(line.commitment_id): line.balance_left.amount for line in remote.commitment_lines} == {
        "ri-up-1": Decimal(19656), "sp-up-2": Decimal(31440), "cud-fee-3": Decimal(0), "ri-old-4": Decimal(49152)}
