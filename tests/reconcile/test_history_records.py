"""The history database (:class:`~finops.reconcile.history.History`): what it keeps of each month and gives
back, over the three months of hourly bills of ``hourly_commitments.py``, and the files it refuses.

Each month is reconciled from the aggregation's charge groups with the months before read from the history,
then recorded. What comes back must be what was recorded (a round trip), the month totals must be the files'
(csv + Decimal), and the commitments carried into a month must be the earlier months' sums read from the files
(:func:`earlier_from_csv`).
"""

from __future__ import annotations

import dataclasses
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from finops.errors import InputError
from finops.money import Money
from finops.reconcile.bills import open_bills
from finops.reconcile.commitment_schedule import EarlierCommitment
from finops.reconcile.engine import reconcile_groups, run_aggregation
from finops.reconcile.history import HISTORY_FILE, History, MonthRecord
from templates.plan_reader import read_plan

from .conftest import write_plan
from .hourly_commitments import MONTHS, RATES, csv_month, earlier_from_csv, kept_between_runs, write_month

RUN_AT = datetime(2026, 6, 2, 7, 30)
HINT = ("if another program has it open, close that program; if the file is not a history written by finops, "
        "move it away to start a new history")


@pytest.fixture(scope="module")
def bills():
    """month -> (plan, the aggregation's summary, the files' figures); the plan has lines for April and May
    only and one server bought 20 March, in service from 2 April (12,000 USD over 24 months, no residual)."""
    return kept_between_runs("history", _bills)


def _bills(folder: Path):
    plan = read_plan(write_plan(
        folder / "plan.xlsx",
        budget=[(month, line, "cc-1", "OPEX", provider, amount, "USD", None)
                for month in ("2026-04", "2026-05")
                for line, provider, amount in (("gpu", "AWS", 80_000), ("ml", "AWS", 25_000),
                                               ("gcp", "Google Cloud", 40_000))],
        assets=[("SRV-1", "8x H100", "onprem", "cc-2", "h100-sxm", 8, date(2026, 3, 20), date(2026, 4, 2),
                 12_000, 0, 24, "USD")],
        mapping=[(1, "gpu", "AWS", "", "AmazonEC2", "p5.*", "", "", ""),
                 (2, "ml", "AWS", "", "AmazonSageMaker", "", "", "", ""),
                 (3, "gcp", "Google Cloud", "", "Compute Engine", "", "", "", "")]))
    out = {}
    for month in MONTHS:
        paths = write_month(folder, month)
        con = duckdb.connect()
        summary = run_aggregation(con, open_bills(con, paths), month, plan, rates=RATES)
        con.close()
        out[month] = (plan, summary, csv_month(paths))
    return out


def reconcile(bills, month: str, history: History):
    plan, summary, _ = bills[month]
    return reconcile_groups(plan, summary, month, rates=RATES, **history.earlier_inputs(month, "USD"))


def kept(rec) -> MonthRecord:
    """What the history must give back of ``rec``."""
    return MonthRecord(rec.month, rec.currency, rec.planned.amount, rec.opex.amount, rec.capex.amount,
                       rec.billed_cost.amount, rec.unmapped_effective_cost.amount, rec.capex_cash.amount,
                       rec.one_off_cost.amount, {line.plan_line: line.actual.amount for line in rec.lines})


@pytest.fixture(scope="module")
def recorded(bills, tmp_path_factory):
    """The three months recorded in order, each run with the months before from the history."""
    history = History(tmp_path_factory.mktemp("history") / HISTORY_FILE)
    recs = {}
    for month in MONTHS:
        recs[month] = reconcile(bills, month, history)
        history.record(recs[month], RUN_AT)
    return history, recs


def test_each_month_comes_back_as_recorded_with_the_files_totals(bills, recorded):
    history, recs = recorded
    assert history.months() == [kept(recs[month]) for month in MONTHS]
    assert history.months("USD") == history.months() and history.months("EUR") == []
    # the commitments of March and April, carried into May (this test is the one that records them: a mutation
    # run credits the module's fixture to its first test)
    assert history.commitments_before("2026-05", "USD") == earlier_from_csv(
        {m: sums for m, (_, _, sums) in bills.items()}, "2026-05")
    for month, rec in recs.items():
        sums = bills[month][2]
        assert (rec.opex.amount, rec.billed_cost.amount, rec.one_off_cost.amount) == (
            sums.effective, sums.billed, sums.one_off)
    march, april, may = history.months()
    # March has no plan line, the server's cash is March's; depreciation 500 a month from April
    assert (march.planned, march.capex, march.capex_cash) == (0, 0, 12_000)
    assert (april.planned, april.capex, april.capex_cash, may.capex) == (145_000, 500, 0, 500)
    assert april.lines["onprem"] == 500 and may.unmapped > 0 and set(may.lines) == {
        "gpu", "ml", "gcp", "onprem", "Unmapped"}
    assert (may.actual, may.cash, march.actual, march.cash) == (
        may.opex + 500, may.billed_cost, march.opex, march.billed_cost + 12_000)


@pytest.mark.parametrize("month", list(MONTHS))
def test_commitments_carried_into_a_month_are_the_earlier_files_sums(bills, recorded, month):
    history, _ = recorded
    assert history.commitments_before(month, "USD") == earlier_from_csv(
        {m: sums for m, (_, _, sums) in bills.items()}, month)
    assert history.commitments_before(month, "EUR") == {}


def test_a_run_takes_the_earlier_months_actuals_and_one_off_costs(bills, recorded):
    history, recs = recorded
    earlier = history.earlier_inputs("2026-05", "USD")
    assert earlier == {"past_actuals": {m: recs[m].actual.amount for m in ("2026-03", "2026-04")},
                       "past_one_off": {m: bills[m][2].one_off for m in ("2026-03", "2026-04")},
                       "earlier_commitments": history.commitments_before("2026-05", "USD")}
    assert history.earlier_inputs("2026-03", "USD") == {"past_actuals": {}, "past_one_off": {},
                                                        "earlier_commitments": {}}


def test_a_rerun_replaces_its_month_only_and_comments_are_kept_until_replaced(recorded, tmp_path):
    history = History(tmp_path / HISTORY_FILE)
    shutil.copyfile(recorded[0].path, history.path)  # March, April and May recorded
    before = history.months()
    may_commitments = history.commitments_before("2026-06", "USD")
    april = recorded[1]["2026-04"]
    # a re-run of April with other plan figures (a different tax line): April's rows only change
    changed = dataclasses.replace(april, planned=Money(Decimal("99.5"), "USD"))
    history.record(changed, datetime(2026, 6, 3), {"gpu": "  p5 hours over plan  ", "ml": "   ", "gcp": "cud"})
    after = history.months()
    assert [m.month for m in after] == list(MONTHS)
    assert (after[0], after[2]) == (before[0], before[2]) and after[1] == dataclasses.replace(before[1], planned=Decimal("99.5"))
    assert history.commitments_before("2026-06", "USD") == may_commitments
    assert history.comments("2026-04") == {"gcp": "cud", "gpu": "p5 hours over plan"}
    assert history.comments("2026-05") == {}
    history.record(april, RUN_AT)  # no comments given: April's stay
    assert history.comments("2026-04") == {"gcp": "cud", "gpu": "p5 hours over plan"}
    history.record(april, RUN_AT, {"ml": "new"})
    assert history.comments("2026-04") == {"ml": "new"}
    history.record(april, RUN_AT, {})
    assert history.comments("2026-04") == {}
    stored = duckdb.connect(str(history.path), read_only=True)
    assert stored.execute("SELECT DISTINCT run_at FROM months ORDER BY 1").fetchall() == [(RUN_AT,)]
    stored.close()


def _plans(folder: Path):
    return {currency: read_plan(write_plan(folder / f"{currency}.xlsx", budget=[
        (month, "gpu", "cc-1", "OPEX", "AWS", 10, currency, None)])) for currency, month in (("USD", "2026-06"),
                                                                                            ("EUR", "2026-01"))}


@pytest.fixture(scope="module")
def plans():
    """Plans of one line: in USD in June 2026 only, in EUR in January 2026 only."""
    return kept_between_runs("history-plans", _plans)


def test_a_month_without_plan_lines_or_charges_is_kept(plans, tmp_path):
    """February: no plan line, no commitment, no purchase (one_off_cost not known): kept with no lines and 0."""
    rec = dataclasses.replace(reconcile_groups(plans["USD"], [], "2026-02"), one_off_cost=None)
    assert rec.lines == () and rec.commitment_lines == ()
    history = History(tmp_path / HISTORY_FILE)
    history.record(rec, RUN_AT)
    assert history.months() == [MonthRecord("2026-02", "USD", Decimal(0), Decimal(0), Decimal(0), Decimal(0),
                                            Decimal(0), Decimal(0), Decimal(0), {})]


def test_months_in_another_currency_are_left_out_of_a_run(plans, tmp_path):
    """January was reconciled with a plan in EUR, February with one in USD: a March run in USD takes February
    only."""
    history = History(tmp_path / HISTORY_FILE)
    history.record(reconcile_groups(plans["EUR"], [], "2026-01"), RUN_AT)
    history.record(reconcile_groups(plans["USD"], [], "2026-02"), RUN_AT)
    assert [(m.month, m.currency) for m in history.months()] == [("2026-01", "EUR"), ("2026-02", "USD")]
    assert history.earlier_inputs("2026-03", "USD") == {"past_actuals": {"2026-02": Decimal(0)},
                                                        "past_one_off": {"2026-02": Decimal(0)},
                                                        "earlier_commitments": {}}
    assert history.earlier_inputs("2026-03", "EUR")["past_actuals"] == {"2026-01": Decimal(0)}


def test_commitments_carry_their_first_purchase_date_term_and_payment(plans, tmp_path):
    """Months of one commitment kept by hand: sums over the months before, the provider and kind first given,
    the purchase date, payment and term of the first month that has a purchase date."""
    history = History(tmp_path / HISTORY_FILE)
    history.record(reconcile_groups(plans["USD"], [], "2025-12"), RUN_AT)
    con = duckdb.connect(str(history.path))
    con.executemany("INSERT INTO commitment_months VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        ("2026-01", "sp-1", "USD", "", "", "upfront", None, None, 0, 100, 0),
        ("2026-02", "sp-1", "USD", "AWS", "Savings Plan", "monthly fee", date(2026, 2, 3), 12, 50, "100.25", 0),
        ("2026-03", "sp-1", "USD", "AWS GovCloud", "Compute Savings Plan", "upfront", date(2026, 3, 1), 36, 50, 90, 0),
        ("2026-01", "cud-2", "EUR", "Google Cloud", "CUD", "monthly fee", date(2026, 1, 1), 12, 30, 30, 0),
        ("2026-02", "ri-3", "USD", "AWS", "Reserved Instance", "partial upfront", date(2026, 2, 9), None, 700, 40,
         600),
        ("2026-03", "ri-3", "USD", "AWS", "Reserved Instance", "upfront", None, 12, "100.5", 45, "0.5")])
    con.close()
    assert history.commitments_before("2026-03", "USD") == {
        "sp-1": EarlierCommitment("sp-1", "AWS", "Savings Plan", "monthly fee", date(2026, 2, 3), 12, Decimal(50),
                                  Decimal("200.25"), "2026-01", Decimal(100)),
        "ri-3": EarlierCommitment("ri-3", "AWS", "Reserved Instance", "partial upfront", date(2026, 2, 9), None,
                                  Decimal(700), Decimal(40), "2026-02", Decimal(40), Decimal(600))}
    assert history.commitments_before("2026-04", "USD") == {
        "sp-1": EarlierCommitment("sp-1", "AWS", "Savings Plan", "monthly fee", date(2026, 2, 3), 12, Decimal(100),
                                  Decimal("290.25"), "2026-01", Decimal(100)),
        "ri-3": EarlierCommitment("ri-3", "AWS", "Reserved Instance", "partial upfront", date(2026, 2, 9), 12,
                                  Decimal("800.5"), Decimal(85), "2026-02", Decimal(40), Decimal("600.5"))}
    assert history.commitments_before("2026-02", "EUR") == {
        "cud-2": EarlierCommitment("cud-2", "Google Cloud", "CUD", "monthly fee", date(2026, 1, 1), 12,
                                   Decimal(30), Decimal(30), "2026-01", Decimal(30))}


def test_no_history_yet_reads_empty_and_creates_nothing(tmp_path):
    history = History(tmp_path / HISTORY_FILE)
    assert (history.months(), history.commitments_before("2026-05", "USD"), history.comments("2026-05")) == (
        [], {}, {})
    assert history.earlier_inputs("2026-05", "USD") == {"past_actuals": {}, "past_one_off": {},
                                                        "earlier_commitments": {}}
    assert list(tmp_path.iterdir()) == []


#: The first history schema (before commitments, comments and the cash and one-off columns).
_FIRST_SCHEMA = """
CREATE TABLE months (
    month VARCHAR PRIMARY KEY, currency VARCHAR NOT NULL, planned DECIMAL(38, 10) NOT NULL,
    opex DECIMAL(38, 10) NOT NULL, capex DECIMAL(38, 10) NOT NULL, billed_cost DECIMAL(38, 10) NOT NULL,
    unmapped DECIMAL(38, 10) NOT NULL, run_at TIMESTAMP NOT NULL);
CREATE TABLE lines (
    month VARCHAR NOT NULL, plan_line VARCHAR NOT NULL, category VARCHAR NOT NULL,
    planned DECIMAL(38, 10) NOT NULL, actual DECIMAL(38, 10) NOT NULL, PRIMARY KEY (month, plan_line));
INSERT INTO months VALUES ('2026-02', 'USD', 900, 850.5, 100, 800, 12.25, '2026-03-02 08:00:00');
INSERT INTO lines VALUES ('2026-02', 'gpu', 'OPEX', 900, 850.5), ('2026-02', 'onprem', 'CAPEX', 0, 100);
"""


def test_a_history_of_the_first_schema_is_read_then_migrated(recorded, tmp_path):
    path = tmp_path / HISTORY_FILE
    con = duckdb.connect(str(path))
    con.execute(_FIRST_SCHEMA)
    con.close()
    history = History(path)
    february = MonthRecord("2026-02", "USD", Decimal(900), Decimal("850.5"), Decimal(100), Decimal(800),
                           Decimal("12.25"), Decimal(0), Decimal(0), {"gpu": Decimal("850.5"), "onprem": Decimal(100)})
    assert history.months() == [february]
    assert (history.commitments_before("2026-05", "USD"), history.comments("2026-02")) == ({}, {})
    assert history.earlier_inputs("2026-03", "USD")["past_actuals"] == {"2026-02": Decimal("950.5")}
    march = recorded[1]["2026-03"]
    history.record(march, RUN_AT, {"gpu": "first note"})
    assert history.months() == [february, kept(march)]
    assert history.comments("2026-03") == {"gpu": "first note"}


#: The commitment table as histories of 2026-12-01 kept it, before the upfront column (for partial upfront).
_COMMITMENTS_BEFORE_UPFRONT = """
CREATE TABLE commitment_months (
    month VARCHAR NOT NULL, commitment_id VARCHAR NOT NULL, currency VARCHAR NOT NULL, provider_name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL, payment VARCHAR NOT NULL, purchase_date DATE, term_months INTEGER,
    paid DECIMAL(38, 10) NOT NULL, amortized DECIMAL(38, 10) NOT NULL, PRIMARY KEY (month, commitment_id));
INSERT INTO commitment_months VALUES ('2026-02', 'ri-9', 'USD', 'AWS', 'Reserved Instance', 'upfront',
    '2026-02-03', 12, 1200, 90.5);
"""


def test_commitments_kept_before_the_upfront_column_read_0_upfront_then_migrate(recorded, tmp_path):
    path = tmp_path / HISTORY_FILE
    con = duckdb.connect(str(path))
    con.execute(_FIRST_SCHEMA + _COMMITMENTS_BEFORE_UPFRONT)
    con.close()
    history = History(path)
    old = EarlierCommitment("ri-9", "AWS", "Reserved Instance", "upfront", date(2026, 2, 3), 12, Decimal(1200),
                            Decimal("90.5"), "2026-02", Decimal("90.5"), Decimal(0))
    assert history.commitments_before("2026-03", "USD") == {"ri-9": old}
    march = recorded[1]["2026-03"]
    history.record(march, RUN_AT)
    kept_after = history.commitments_before("2026-04", "USD")
    assert kept_after["ri-9"] == old
    upfront = {c.commitment_id: c.upfront_this_month.amount for c in march.commitment_lines}
    assert any(upfront.values())
    assert {cid: kept_after[cid].upfront for cid in upfront} == upfront


def _refusal(call) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


def test_a_file_that_is_not_a_duckdb_database_is_refused_naming_it(bills, tmp_path):
    path = tmp_path / HISTORY_FILE
    path.write_text("month,opex\n2026-04,100\n")
    try:
        duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        duckdb_says = str(exc).splitlines()[0]
    rec = bills["2026-03"][1]
    history = History(path)
    for call in (lambda: history.months(), lambda: history.comments("2026-03"),
                 lambda: history.commitments_before("2026-03", "USD"),
                 lambda: history.record(reconcile_groups(bills["2026-03"][0], rec, "2026-03", rates=RATES), RUN_AT)):
        error = _refusal(call)
        assert (error.message, error.where.file, error.hint) == (
            f"cannot open the history database: {duckdb_says}", str(path), HINT)
    assert path.read_text() == "month,opex\n2026-04,100\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_FILE]


def test_a_duckdb_database_that_is_not_a_history_is_refused_and_left_alone(bills, tmp_path):
    path = tmp_path / HISTORY_FILE
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE prices (sku VARCHAR, usd DECIMAL(18, 4)); INSERT INTO prices VALUES ('p5', 98.32)")
    con.close()
    content = path.read_bytes()
    history = History(path)
    rec = reconcile_groups(bills["2026-03"][0], bills["2026-03"][1], "2026-03", rates=RATES)
    for call in (lambda: history.months(), lambda: history.record(rec, RUN_AT)):
        error = _refusal(call)
        assert (error.message, error.where.file, error.hint) == (
            "not a history database (it has no table of months)", str(path), HINT)
    assert path.read_bytes() == content


def test_reading_shares_the_file_with_another_reader(recorded):
    """Read-only: a reader that holds the history open (the review's refresh) does not stop a run reading it."""
    history, recs = recorded
    holder = duckdb.connect(str(history.path), read_only=True)
    try:
        assert [m.month for m in history.months()] == list(MONTHS)
        assert set(history.commitments_before("2026-05", "USD")) and history.comments("2026-05") == {}
    finally:
        holder.close()


def test_an_amount_too_large_is_refused_and_nothing_is_written(recorded, tmp_path):
    history = History(tmp_path / HISTORY_FILE)
    history.record(recorded[1]["2026-03"], RUN_AT, {"gpu": "kept"})
    content = history.path.read_bytes()
    april = dataclasses.replace(recorded[1]["2026-04"], opex=Money(Decimal(10) ** 29, "USD"))
    error = _refusal(lambda: history.record(april, RUN_AT, {"gpu": "lost"}))
    assert (error.message, error.where.file, error.hint) == (
        "an amount of this month is too large for the history (at most 28 digits before the decimal point)",
        str(history.path), "check the bills' amounts and the --rate values; nothing was written")
    assert history.path.read_bytes() == content
    assert [m.month for m in history.months()] == ["2026-03"] and history.comments("2026-03") == {"gpu": "kept"}


def test_a_month_of_more_plan_lines_than_one_insert_carries_keeps_every_line(recorded, tmp_path):
    """1,201 plan lines (three statements of up to 500 rows) come back one by one, each with its own actual."""
    _, recs = recorded
    rec = next(iter(recs.values()))
    template = rec.lines[0]
    lines = tuple(dataclasses.replace(template, plan_line=f"line-{i:04d}", actual=Money(Decimal(i) / 100, "USD"))
                  for i in range(1201))
    history = History(tmp_path / HISTORY_FILE)
    history.record(dataclasses.replace(rec, lines=lines), RUN_AT)
    (month,) = history.months()
    assert month.lines == {f"line-{i:04d}": Decimal(i) / 100 for i in range(1201)}


def test_owners_and_actions_are_kept_per_month_and_carried_until_changed_or_cleared(recorded, tmp_path):
    """March assigns gpu and gcp; April (given nothing) carries them; May clears gcp and reassigns gpu: June
    starts from May's, and a re-run of April that gives no actions keeps April's own."""
    history = History(tmp_path / HISTORY_FILE)
    shutil.copyfile(recorded[0].path, history.path)
    march, april, may = (recorded[1][m] for m in ("2026-03", "2026-04", "2026-05"))
    assert history.actions("2026-03") == {}
    history.record(march, RUN_AT, actions={"gpu": (" Ana ", "right-size p5  "), "gcp": ("Li", "buy a 1y CUD"),
                                           "ml": ("", "")})
    assert history.actions("2026-03") == {"gpu": ("Ana", "right-size p5"), "gcp": ("Li", "buy a 1y CUD")}
    assert history.actions("2026-04") == history.actions("2026-03")      # carried: April kept none of its own
    assert history.actions("2026-02") == {}                                # never backwards
    history.record(may, RUN_AT, actions={"gpu": ("Ana", "p5 reserved from June"), "gcp": ("", "")})
    assert history.actions("2026-06") == {"gpu": ("Ana", "p5 reserved from June")}   # gcp cleared in May
    assert history.actions("2026-04") == {"gpu": ("Ana", "right-size p5"), "gcp": ("Li", "buy a 1y CUD")}
    history.record(april, RUN_AT)                                          # no actions given: none recorded
    assert history.actions("2026-04") == {"gpu": ("Ana", "right-size p5"), "gcp": ("Li", "buy a 1y CUD")}
    history.record(march, RUN_AT, actions={})                              # March's replaced by none
    assert history.actions("2026-04") == {}
