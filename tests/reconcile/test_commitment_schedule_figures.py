"""The commitment schedule (:func:`~finops.reconcile.commitment_schedule.commitment_summary`) over three months
of hourly bills with seven commitments (``tests/reconcile/hourly_commitments.py`` tells their story).

The charge groups come from the aggregation's scan of the files; the months before come as the history keeps
them (:class:`EarlierCommitment`), built here from the earlier months' files. Every money figure expected is read
from the files with csv and Decimal (:func:`csv_month`); purchase dates, terms, end dates, payments and
sources are the commitments' story worked by hand (:data:`STORY`); the formulas are the module's docstring:
scheduled = paid / term (upfront), the month's fee (monthly fee) or the first month's amortization (estimate);
balance = paid to date - amortized to date, with an estimate's paid = first month's amortization x term.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from finops.money import Money
from finops.reconcile.aggregation import ChargeGroup
from finops.reconcile.bills import open_bills
from finops.reconcile.commitment_schedule import _add_months, commitment_summary, term_months
from finops.reconcile.engine import run_aggregation

from .hourly_commitments import (CID, MONTHS, PLAN_CURRENCY, RATES, STORY, CsvMonth, csv_month, earlier_from_csv,
                                 estimated_end, kept_between_runs, short, write_month)

ORDER = list(MONTHS)


def to_usd(amount: Decimal, currency: str | None) -> Money:
    """Bill money into the plan currency at :data:`RATES` (a currency without a rate is an error)."""
    return Money(amount * RATES[str(currency)], PLAN_CURRENCY)


def _months(folder: Path) -> dict[str, tuple[list, CsvMonth]]:
    out = {}
    for month in MONTHS:
        paths = write_month(folder, month)
        con = duckdb.connect()
        files = open_bills(con, paths)
        out[month] = (list(run_aggregation(con, files, month, rates=RATES).groups), csv_month(paths))
        con.close()
    return out


@pytest.fixture(scope="module")
def months() -> dict[str, tuple[list, CsvMonth]]:
    """month -> (the aggregation's charge groups, the figures read from the files)."""
    return kept_between_runs("schedule", _months)


def expected_lines(months: dict[str, tuple[list, CsvMonth]], month: str) -> dict[str, tuple]:
    """short id -> the line's figures worked from the files and the story."""
    upto = ORDER[:ORDER.index(month) + 1]
    lines = {}
    for name, (provider, kind, payment, bought, term, ends, sources) in STORY.items():
        if month not in sources:
            continue
        cid = CID[name]
        this = months[month][1].commitments.get(cid)
        seen = [m for m in upto if cid in months[m][1].commitments]
        paid = sum(months[m][1].commitments[cid].paid for m in seen)
        amortized = sum(months[m][1].commitments[cid].amortized for m in seen)
        first_amortized = months[seen[0]][1].commitments[cid].amortized
        source = sources[month]
        if source == "estimate":
            paid = first_amortized * term
            scheduled = first_amortized
            bought, ends = None, estimated_end(seen[0], term)
        elif source == "":
            scheduled = None
        elif payment == "monthly fee":
            scheduled = this.paid if this else 0
        else:
            scheduled = paid / term
        balance = None if source == "" else paid - amortized
        lines[name] = (provider, kind, payment, bought, term, ends, paid, this.paid if this else 0,
                       this.amortized if this else 0, this.unused if this else 0, amortized, scheduled, balance,
                       source, seen[0])
    return lines


def figures(line) -> tuple:
    def amount(money: Money | None) -> Decimal | None:
        if money is None:
            return None
        assert money.currency == PLAN_CURRENCY
        return money.amount

    return (line.provider_name, line.kind, line.payment, line.purchase_date, line.term_months, line.end_date,
            amount(line.paid_to_date), amount(line.paid_this_month), amount(line.amortized), amount(line.unused),
            amount(line.amortized_to_date), amount(line.scheduled_monthly), amount(line.balance_left), line.source,
            line.first_month)


@pytest.mark.parametrize("month", ORDER)
def test_every_line_of_the_month_from_the_files_and_the_history(months, month):
    groups, sums = months[month]
    summary = commitment_summary(groups, to_usd, PLAN_CURRENCY, month, earlier_from_csv({m: sums for m, (_, sums) in months.items()}, month))
    got = {short(line.commitment_id): figures(line) for line in summary.lines}
    expected = expected_lines(months, month)
    assert sorted(got) == sorted(expected)
    for name, line in expected.items():  # one commitment at a time: a short report when one differs
        assert got[name] == line, name
    # sorted by provider, then id
    assert [(line.provider_name, line.commitment_id) for line in summary.lines] == sorted(
        (line.provider_name, line.commitment_id) for line in summary.lines)


@pytest.mark.parametrize("month", ORDER)
def test_the_month_totals_from_the_files(months, month):
    groups, sums = months[month]
    summary = commitment_summary(groups, to_usd, PLAN_CURRENCY, month, earlier_from_csv({m: sums for m, (_, sums) in months.items()}, month))
    assert (summary.purchases.amount, summary.used.amount, summary.unused.amount, summary.savings.amount) == (
        sums.purchases, sums.used, sums.unused, sums.savings)
    assert {m.currency for m in (summary.purchases, summary.used, summary.unused, summary.savings)} == {"USD"}
    assert abs(summary.utilization - sums.used / (sums.used + sums.unused)) < Decimal("1e-25")
    assert abs(summary.coverage - sums.used / sums.eligible) < Decimal("1e-25")


def test_the_figures_by_hand(months):
    """A few of the csv figures worked by hand, so that the csv reading is checked too."""
    march, april, may = (months[m][1].commitments for m in ORDER)
    ri = CID["ri-up-1"]
    # ri-up-1 in March: instance 1 from the 10th (22 days, 528 h), instance 2 from the 20th (12 days, 288 h)
    assert (march[ri].paid, march[ri].amortized) == (Decimal(21900), Decimal("1.25") * (528 + 288))
    assert march[ri].unused == Decimal("1.25") * (88 + 48)  # every sixth hour of each
    # sp-up-2 in April: 16 days from the 15th, 384 h at 1.20, every fourth unused
    sp = CID["sp-up-2"]
    assert (april[sp].paid, april[sp].amortized, april[sp].unused) == (Decimal(31536), Decimal("460.8"),
                                                                       Decimal("115.2"))
    # cud-end-6: 744 h at 0.30 EUR, fee 0.50 EUR above: 0.54 USD left
    end = CID["cud-end-6"]
    assert march[end].paid - march[end].amortized == Decimal("0.54")
    assert CID["cud-end-6"] not in april and CID["cud-old-5"] not in may


def test_without_earlier_months_every_commitment_starts_this_month(months):
    """May alone: the reservation of March is seen without its purchase (an estimate from May's amortization),
    the savings plan of April likewise; the monthly fees are bought in May's bills."""
    groups, sums = months["2026-05"]
    lines = {short(line.commitment_id): line for line in commitment_summary(groups, to_usd, PLAN_CURRENCY,
                                                                             "2026-05").lines}
    ri = sums.commitments[CID["ri-up-1"]]
    assert (lines["ri-up-1"].source, lines["ri-up-1"].term_months, lines["ri-up-1"].purchase_date) == (
        "", None, None)  # its name has no term and its purchase row is in March's bills
    assert lines["ri-up-1"].balance_left is None and lines["ri-up-1"].amortized.amount == ri.amortized
    old = sums.commitments[CID["ri-old-4"]]
    assert (lines["ri-old-4"].source, lines["ri-old-4"].first_month, lines["ri-old-4"].end_date,
            lines["ri-old-4"].paid_to_date.amount, lines["ri-old-4"].balance_left.amount) == (
        "estimate", "2026-05", date(2029, 5, 1), old.amortized * 36, old.amortized * 35)
    fee = sums.commitments[CID["cud-fee-3"]]
    assert (lines["cud-fee-3"].source, lines["cud-fee-3"].purchase_date, lines["cud-fee-3"].payment,
            lines["cud-fee-3"].scheduled_monthly.amount) == ("bills", date(2026, 5, 1), "monthly fee", fee.paid)


def test_a_month_without_commitments_has_no_ratios():
    assert commitment_summary([], to_usd, PLAN_CURRENCY, "2026-05").utilization is None
    summary = commitment_summary([], to_usd, PLAN_CURRENCY, "2026-05")
    assert (summary.coverage, summary.lines, summary.purchases) == (None, (), Money.zero(PLAN_CURRENCY))


@pytest.mark.parametrize(("term", "name", "months"), [
    ("1yr", None, 12), ("3yr", "EC2ReservedInstance-1yr-AllUpfront", 36), (" 3 Years ", None, 36),
    ("1 YEAR", "", 12), ("TWELVE_MONTH", None, 12), ("thirty_six_month", None, 36),
    (None, "ComputeSavingsPlan-3yr-NoUpfront", 36), ("", "cud 1 year", 12), ("monthly", "SP-3-yr", 36),
    (None, "x13yr", None), (None, "p5-prod", None), (None, None, None), ("", "", None), ("2yr", None, None),
])
def test_term_months(term, name, months):
    assert term_months(term, name) == months


@pytest.mark.parametrize(("day", "months", "ends"), [
    (date(2026, 1, 31), 1, date(2026, 2, 28)), (date(2024, 1, 31), 1, date(2024, 2, 29)),
    (date(2026, 3, 10), 12, date(2027, 3, 10)), (date(2026, 11, 30), 3, date(2027, 2, 28)),
    (date(2026, 9, 15), 3, date(2026, 12, 15)), (date(2026, 12, 31), 36, date(2029, 12, 31)),
    (date(2026, 10, 31), 1, date(2026, 11, 30)),
])
def test_add_months(day, months, ends):
    assert _add_months(day, months) == ends


def _group(**given) -> ChargeGroup:
    """A charge group of the aggregation with ``given`` fields, the others empty."""
    empty = {f.name: None for f in fields(ChargeGroup)}
    sums = {"billed_cost": Decimal(0), "effective_cost": Decimal(0), "list_cost": Decimal(0),
            "consumed_quantity": Decimal(0), "row_count": 1}
    return ChargeGroup(**{**empty, **sums, "billing_currency": "USD", "charge_category": "Usage", **given})


def test_a_purchase_the_schedule_cannot_name():
    """A purchase without a provider, with a ChargeFrequency that names no payment and no term anywhere: its
    balance is what was paid less what was amortized, with no end and no schedule."""
    cid = "commitment-without-term"
    groups = [_group(commitment_id=cid, charge_category="Purchase", charge_frequency="Usage-Based",
                     billed_cost=Decimal("1000"), first_charge_start=datetime(2026, 5, 4, 8)),
              _group(commitment_id=cid, commitment_status="Used", effective_cost=Decimal("120.5"),
                     list_cost=Decimal("150"), service_name="AmazonEC2"),
              _group(commitment_id=cid, commitment_status="Unused", effective_cost=Decimal("9.5"),
                     service_name="AmazonEC2")]
    (line,) = commitment_summary(groups, to_usd, PLAN_CURRENCY, "2026-05").lines
    assert (line.provider_name, line.kind, line.payment, line.purchase_date, line.term_months, line.end_date,
            line.scheduled_monthly, line.balance_left.amount, line.source) == (
        "", "", "", date(2026, 5, 4), None, None, None, Decimal(1000 - 130), "bills")
