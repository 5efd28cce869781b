"""FOCUS 1.3 ContractApplied ties a charge's cost to the contract commitment the provider applied it to, and the
review's commitment tie-out counts what the provider says was applied.

The bill (1.3-shaped, and 1.4-shaped: ServiceProviderName, no ProviderName) is shaped as the specification writes
it (``specification/columns/contractapplied.md``): an ``Elements`` array per charge; a contract's purchase row applies
the whole contract; the keys spelled ``...ID`` as in the text and ``...Id`` as in its errata. The expected figures are sums of the rows below, worked out by hand:

* ``ai-pool``, a 2,400 USD prepaid pool for 12 months from 2026-05-01 (Contract Commitment dataset): the month's
  charges apply 98.32 (EC2) + 1.80 (Bedrock input) + 0.36 (Bedrock output) = 100.48; its purchase row's 2,400 is
  not a drawdown. Schedule 2,400 / 12 = 200 a month; balance 2,400 - 100.48 = 2,299.52.
* ``ri-1``, a reservation (1,200 USD up front for 12 months from 2026-01-01): used 75 + unused 25 = 100, and
  ContractApplied says the same 100. Schedule 1,200 / 12 = 100.
* Tie-out: scheduled 200 + 100 = 300 against the bills' 100 (ri-1) + 100.48 (ai-pool) = 200.48; without
  ContractApplied the pool is invisible and the bills' side is 100.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
import sqlglot

from finops.money import Money
from finops.reconcile.bills import VIEW, open_bills
from finops.reconcile.contract_applied import read_applied
from finops.reconcile.contract_commitments import read_contract_commitments
from finops.reconcile.dialects import remote_contract_applied_sql
from finops.reconcile.engine import contract_applied, reconcile_month
from finops.reconcile.story import headline, tie_out

from .conftest import write_bill
from .test_focus_1_3_1_4 import BEDROCK_IN, BEDROCK_OUT, CONTRACTS, EC2, V13, V14, _plan

AWS_13 = {"ProviderName": "AWS", "PublisherName": "AWS", "ServiceProviderName": "AWS", "HostProviderName": "AWS",
          "InvoiceIssuerName": "Amazon Web Services, Inc."}
RI = {**AWS_13, **EC2, "CommitmentDiscountId": "ri-1", "CommitmentDiscountType": "Reserved Instance",
      "CommitmentDiscountName": "gpu reservation", "PricingCategory": "Committed", "BilledCost": "0"}


def _applied(*elements: tuple[str, str | None, float | None], id_key: str = "ID") -> str:
    """ContractApplied of one charge: (commitment, applied cost, applied quantity in Hours) per element."""
    out = []
    for commitment, cost, hours in elements:
        element = {f"Contract{id_key}": "edp-2026", f"ContractCommitment{id_key}": commitment}
        if cost is not None:
            element["ContractCommitmentAppliedCost"] = json.loads(cost)
        if hours is not None:
            element |= {"ContractCommitmentAppliedQuantity": hours, "ContractCommitmentAppliedUnit": "Hours"}
        out.append(element)
    return json.dumps({"Elements": out})


def _rows() -> list[dict[str, str]]:
    return [
        {**AWS_13, **EC2, "ContractApplied": _applied(("ai-pool", "98.32", None))},
        {**AWS_13, **BEDROCK_IN, "ContractApplied": _applied(("ai-pool", "1.80", None))},
        {**AWS_13, **BEDROCK_OUT, "ContractApplied": _applied(("ai-pool", "0.36", None), id_key="Id")},
        {**RI, "CommitmentDiscountStatus": "Used", "EffectiveCost": "75.00",
         "ContractApplied": _applied(("ri-1", "75.00", None), ("ai-pool", None, 1.0))},
        {**RI, "CommitmentDiscountStatus": "Unused", "EffectiveCost": "25.00",
         "ContractApplied": _applied(("ri-1", "25.00", None))},
        {**AWS_13, "ServiceName": "AWS Marketplace", "ChargeCategory": "Purchase", "ChargeFrequency": "One-Time",
         "BilledCost": "2400.00", "EffectiveCost": "0", "ListCost": "2400.00",
         "ContractApplied": _applied(("ai-pool", "2400.00", None))},
    ]


def _bill(tmp_path: Path, rows: list[dict[str, str]] | None = None, columns: list[str] = V13) -> Path:
    return write_bill(tmp_path / "may.csv", _rows() if rows is None else rows, columns=columns)


def _dataset(tmp_path: Path, *commitments: str) -> Path:
    lines = {"ai-pool": "ai-pool,2026-05-01T00:00:00Z,2027-05-01T00:00:00Z,2400.00,USD,Prepaid Pool,Spend,"
                        "All Upfront,edp-2026\n",
             "ri-1": "ri-1,2026-01-01T00:00:00Z,2027-01-01T00:00:00Z,1200.00,USD,Reserved Instance,Usage,"
                     "All Upfront,edp-2026\n"}
    path = tmp_path / "contract-commitments.csv"
    path.write_text(CONTRACTS + "".join(lines[c] for c in commitments))
    return path


def usd(amount: str | int) -> Money:
    return Money.of(amount, "USD")


@pytest.mark.parametrize("columns", [V13, V14], ids=["focus-1.3", "focus-1.4"])
def test_contract_applied_ties_cost_to_its_commitments_and_the_tie_out_uses_it(tmp_path, columns):
    contracts = read_contract_commitments(_dataset(tmp_path, "ai-pool", "ri-1"))
    rec = reconcile_month(_plan(), [_bill(tmp_path, columns=columns)], "2026-05", contracts=contracts)
    assert rec.bill_versions[0].startswith(f"may.csv: FOCUS {'1.3' if columns is V13 else '1.4'}")
    assert (rec.effective_cost, rec.billed_cost) == (usd("200.48"), usd("2500.48"))
    lines = {line.commitment_id: line for line in rec.commitment_lines}
    pool, ri = lines["ai-pool"], lines["ri-1"]
    assert (pool.source, pool.term_months, pool.payment, str(pool.purchase_date)) == ("contract", 12, "upfront",
                                                                                    "2026-05-01")
    assert (pool.applied, pool.amortized, pool.scheduled_monthly, pool.paid_to_date, pool.balance_left) == (
        usd("100.48"), usd("100.48"), usd(200), usd(2400), usd("2299.52"))
    assert (ri.applied, ri.amortized, ri.scheduled_monthly, ri.balance_left) == (usd(100), usd(100), usd(100),
                                                                                 usd(1100))
    assert (rec.commitments.used, rec.commitments.unused) == (usd(75), usd(25))  # the P&L's figures stay
    t = tie_out(rec)
    assert (t.scheduled, t.billed, t.difference, t.agrees) == (usd(300), usd("200.48"), usd("-99.52"), False)
    assert "the provider applied 200.48 USD against a schedule of 300.00 USD, 99.52 USD less" in headline(rec)


def test_without_the_dataset_the_pool_is_listed_with_what_was_applied_and_no_schedule(tmp_path):
    rec = reconcile_month(_plan(), [_bill(tmp_path)], "2026-05")
    pool = {line.commitment_id: line for line in rec.commitment_lines}["ai-pool"]
    assert (pool.applied, pool.amortized, pool.scheduled_monthly, pool.source) == (usd("100.48"), usd("100.48"),
                                                                                   None, "")
    t = tie_out(rec)  # nothing scheduled: the unscheduled pool does not count on the bills' side either
    assert (t.scheduled, t.billed) == (usd(0), usd(100))


def test_a_1_2_bill_has_no_applied_figures(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "ContractApplied"} for r in _rows()]
    bill = write_bill(tmp_path / "may.csv", rows, columns=[c for c in V13 if c != "ContractApplied"])
    rec = reconcile_month(_plan(), [bill], "2026-05")
    assert rec.commitments.applied_amortization is None
    assert [line.commitment_id for line in rec.commitment_lines] == ["ri-1"]


def _reconcile_cli(tmp_path: Path, bill: Path, capsys, dataset: Path | None = None) -> tuple[int, str]:
    from finops.cli import main

    from .conftest import write_plan
    plan = write_plan(tmp_path / "plan.xlsx", budget=[("2026-05", "gpu", "cc", "OPEX", "AWS", 5, "USD", None)])
    extra = ["--contract-commitments", str(dataset)] if dataset is not None else []
    code = main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--out", str(tmp_path / "o"), "--quiet",
                 "--bills", str(bill), *extra])
    return code, capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize("value", [
    '{"Elements": [{"ContractCommitmentID": "ai-pool", "ContractCommitmentAppliedCost": 1.80}',  # cut short
    '{"Elements": {"ContractCommitmentID": "ai-pool"}}',  # not an array
    '{"Elements": [{"ContractID": "edp-2026", "ContractCommitmentAppliedCost": 1.80}]}',  # no commitment
    '{"Elements": [{"ContractCommitmentID": "ai-pool", "ContractCommitmentAppliedCost": "a lot"}]}',
])
def test_a_malformed_contract_applied_exits_2_naming_file_row_and_column(tmp_path, capsys, value):
    rows = _rows()
    rows[1] = {**rows[1], "ContractApplied": value}
    code, message = _reconcile_cli(tmp_path, _bill(tmp_path, rows), capsys)
    assert code == 2, message
    for fragment in ("may.csv", "row 3", "ContractApplied"):
        assert fragment in message
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").glob("*"))


def test_a_commitment_the_dataset_does_not_list_exits_2_naming_file_row_and_column(tmp_path, capsys):
    code, message = _reconcile_cli(tmp_path, _bill(tmp_path), capsys, _dataset(tmp_path, "ri-1"))
    assert code == 2, message
    for fragment in ("may.csv", "row 2", "ContractApplied", "ai-pool", "does not list"):
        assert fragment in message


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
def test_the_remote_sql_parses_there_and_gives_the_local_sums(tmp_path, engine):
    """The remote engines run the same SQL transpiled; Athena's, transpiled back, runs here on DuckDB."""
    with duckdb.connect() as con:
        files = open_bills(con, [_bill(tmp_path)])
        local = contract_applied(con, files, "2026-05")
        sql = remote_contract_applied_sql(engine, VIEW, "2026-05")
        sqlglot.parse_one(sql, read=engine)  # raises on a syntax error
        if engine == "athena":
            back = sqlglot.transpile(sql, read="athena", write="duckdb")[0]
            text_rows = [tuple(None if v is None else str(v) for v in row) for row in con.execute(back).fetchall()]
            assert read_applied(text_rows) == local
        else:
            assert "JSON_EXTRACT_ARRAY(ContractApplied, '$.Elements')" in sql
    sums = {(s.commitment_id, s.purchase): s.cost for s in local}
    assert sums == {("ai-pool", False): Money.of("100.48", "USD").amount, ("ai-pool", True): 2400,
                    ("ri-1", False): 100}


def test_a_remote_table_with_contract_applied_gives_the_local_commitments(tmp_path):
    """Athena (here its SQL transpiled back and run by DuckDB over the 1.3 bill) gives the local review's commitments,
    tie-out included; a commitment the dataset does not list exits 2 naming the table and the column."""
    from finops.errors import InputError
    from finops.reconcile.dialects import reconcile_remote

    contracts = read_contract_commitments(_dataset(tmp_path, "ai-pool", "ri-1"))
    bill = _bill(tmp_path)
    with duckdb.connect() as con:
        open_bills(con, [bill])

        def athena_like(sql: str):
            rows = con.execute(sqlglot.transpile(sql, read="athena", write="duckdb")[0]).fetchall()
            return [tuple(None if v is None else str(v).lower() if isinstance(v, bool) else str(v) for v in row)
                    for row in rows]

        remote = reconcile_remote(_plan(), athena_like, "athena", VIEW, "2026-05", contracts=contracts)
        with pytest.raises(InputError) as refused:
            reconcile_remote(_plan(), athena_like, "athena", VIEW, "2026-05",
                             contracts=read_contract_commitments(_dataset(tmp_path, "ri-1")))
    here = reconcile_month(_plan(), [bill], "2026-05", contracts=contracts)
    assert remote.commitments == here.commitments and tie_out(remote) == tie_out(here)
    assert "ai-pool" in str(refused.value) and refused.value.where.column == "ContractApplied"


def test_a_no_upfront_spend_commitment_is_scheduled_at_its_monthly_share_with_nothing_prepaid(tmp_path):
    """A 1,200 USD no-upfront spend commitment over 12 months: 100 a month committed, nothing paid ahead; the EC2
    charge applies 98.32 to it. Its row: paid 0, amortized 0 (no prepaid balance), applied 98.32, schedule 100."""
    dataset = tmp_path / "cc.csv"
    dataset.write_text(CONTRACTS + "edp-spend,2026-01-01T00:00:00Z,2027-01-01T00:00:00Z,1200.00,USD,"
                       "Enterprise Agreement,Spend,No Upfront,edp-2026\n")
    bill = _bill(tmp_path, [{**AWS_13, **EC2, "ContractApplied": _applied(("edp-spend", "98.32", None))}])
    rec = reconcile_month(_plan(), [bill], "2026-05", contracts=read_contract_commitments(dataset))
    (line,) = rec.commitment_lines
    assert (line.payment, line.paid_to_date, line.amortized, line.applied, line.scheduled_monthly,
            line.balance_left) == ("monthly fee", usd(0), usd(0), usd("98.32"), usd(100), usd(0))
    assert rec.commitments.prepaid().closing == usd(0)
    assert (tie_out(rec).scheduled, tie_out(rec).billed) == (usd(100), usd("98.32"))


def test_the_next_month_carries_the_pool_from_the_history_with_its_contract(tmp_path):
    """June after May (kept in the history): the pool's June charges apply 50.00; paid stays the contract's 2,400,
    drawn 100.48 + 50.00 = 150.48 to date, balance 2,249.52, schedule still 200; the reservation 1,200 / 12 = 100."""
    from datetime import UTC, datetime

    from finops.reconcile.history import History

    contracts = read_contract_commitments(_dataset(tmp_path, "ai-pool", "ri-1"))
    history = History(tmp_path / "history.duckdb")
    may = reconcile_month(_plan(), [_bill(tmp_path)], "2026-05", contracts=contracts)
    history.record(may, datetime(2026, 6, 2, tzinfo=UTC))
    june_rows = [{**AWS_13, **EC2, "BilledCost": "50.00", "EffectiveCost": "50.00",
                  "ChargePeriodStart": "2026-06-01T00:00:00Z", "ChargePeriodEnd": "2026-06-01T01:00:00Z",
                  "ContractApplied": _applied(("ai-pool", "50.00", None))}]
    june_bill = write_bill(tmp_path / "june.csv", june_rows, columns=V13)
    june = reconcile_month(_plan(), [june_bill], "2026-06", contracts=contracts,
                           **history.earlier_inputs("2026-06", "USD"))
    lines = {line.commitment_id: line for line in june.commitment_lines}
    pool, ri = lines["ai-pool"], lines["ri-1"]
    assert (pool.paid_to_date, pool.amortized, pool.amortized_to_date, pool.balance_left, pool.scheduled_monthly) == (
        usd(2400), usd(50), usd("150.48"), usd("2249.52"), usd(200))
    assert (ri.paid_to_date, ri.balance_left, ri.scheduled_monthly) == (usd(1200), usd(1100), usd(100))


def test_the_review_shows_what_was_applied_beside_the_schedule_and_the_bill(tmp_path):
    """The Commitments sheet's schedule: per commitment its schedule (the dataset's cost / term), the bill's
    amortization and what ContractApplied applied to it (the figures of the bill above, summed by hand)."""
    import openpyxl

    from templates.review_writer import write_review

    contracts = read_contract_commitments(_dataset(tmp_path, "ai-pool", "ri-1"))
    rec = reconcile_month(_plan(), [_bill(tmp_path)], "2026-05", contracts=contracts)
    path = write_review(rec, tmp_path / "out", run_at=datetime(2026, 6, 2, 7, 30))
    ws = openpyxl.load_workbook(path, data_only=True)["Commitments"]
    rows = [[c.value for c in row] for row in ws[ws.tables["tblCommitmentSchedule"].ref]]
    header = rows[0]
    shown = {r[0]: tuple(r[header.index(h)] for h in ("Scheduled per month", "Amortized this month",
                                                      "Applied by provider")) for r in rows[1:]}
    # pool: 2400 / 12 scheduled; 98.32 + 1.80 + 0.36 applied by charges (the purchase's 2400 is not a draw-down)
    # ri-1: 1200 / 12; used 75 + unused 25 billed and applied
    assert shown == {"ai-pool": (200, 100.48, 100.48), "ri-1": (100, 100, 100)}
    total = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "Total")
    assert ws.cell(total, header.index("Applied by provider") + 1).value == 200.48


#: ContractApplied values -> whether FOCUS refuses them (not JSON, no Elements array, an element without its
#: commitment or with an amount that is not a number), by hand from the specification's column definition.
APPLIED_VALUES = {
    '{"Elements": [{"ContractCommitmentID": "a", "ContractCommitmentAppliedCost": "1.5"}]}': False,
    '{"Elements": [{"ContractCommitmentId": "a", "ContractCommitmentAppliedCost": 2}]}': False,
    '{"Elements": [{"ContractCommitmentID": "a", "ContractCommitmentAppliedQuantity": 3}]}': False,
    '{"Elements": []}': False,
    '{"Elements": [{"ContractCommitmentID": "a", "ContractCommitmentAppliedCost": "x"}]}': True,
    '{"Elements": [{"ContractCommitmentID": "a", "ContractCommitmentAppliedQuantity": "y"}]}': True,
    '{"Elements": [{"ContractID": "c"}]}': True,
    '{"Elements": [1]}': True,
    '{"Elements": {}}': True,
    '{"Elements": null}': True,
    "{}": True,
    "nope": True,
    "[1]": True,
    "null": True,
}


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
def test_the_remote_check_of_contract_applied_refuses_what_the_local_scan_refuses(tmp_path, engine):
    """The check every engine runs (bill_checks.CHECKS), written for the engine and run here on DuckDB, refuses the
    same values as the local scan's own form of it (contract_applied.BAD_CONTRACT_APPLIED) and the table above."""
    from finops.reconcile.contract_applied import BAD_CONTRACT_APPLIED
    from finops.reconcile.dialects import remote_checks_sql

    from .bigquery_jobs_server import duckdb_sql

    rows = [{**AWS_13, **EC2, "InvoiceId": f"I{i}", "ContractApplied": value}
            for i, value in enumerate(APPLIED_VALUES)]
    with duckdb.connect() as con:
        open_bills(con, [_bill(tmp_path, rows)], strict=False)
        local = {value: bool(con.execute(f"SELECT {BAD_CONTRACT_APPLIED.format(c='$v')}", {"v": value}).fetchone()[0])
                 for value in APPLIED_VALUES}
        sql = remote_checks_sql(engine, VIEW, "2026-05", also=["ContractApplied"], limit=len(APPLIED_VALUES))
        hits = {key for column, _, key, *_ in con.execute(duckdb_sql(sql, engine)).fetchall()
                if column == "ContractApplied"}
    remote = {value: f"I{i}" in hits for i, value in enumerate(APPLIED_VALUES)}
    assert "ContractApplied" not in remote_checks_sql(engine, "t", "2026-05")  # not read without the dataset
    assert local == APPLIED_VALUES and remote == APPLIED_VALUES


@pytest.mark.parametrize("engine", ["athena", "bigquery"])
@pytest.mark.parametrize("value", [
    '{"Elements": {}}',
    json.dumps({"Elements": [{"ContractID": "edp-2026", "ContractCommitmentAppliedCost": 5}]}),
], ids=["Elements an object", "an element without its commitment"])
def test_contract_applied_that_is_not_focus_on_a_remote_engine_is_refused_naming_the_charge(tmp_path, engine, value):
    """With the Contract Commitment dataset a remote engine sums ContractApplied; a value without an Elements array
    would add nothing there with no word said, and an element without its commitment named no place, so the checks
    refuse them as the local scan does."""
    from finops.errors import InputError
    from finops.reconcile.dialects import reconcile_remote

    from .bigquery_jobs_server import duckdb_sql

    bill = _bill(tmp_path, [{**AWS_13, **EC2, "InvoiceId": "I7", "ContractApplied": value}])
    contracts = read_contract_commitments(_dataset(tmp_path, "ai-pool"))
    with pytest.raises(InputError) as local:
        reconcile_month(_plan(), [bill], "2026-05", contracts=contracts)
    assert (local.value.where.row, local.value.where.column) == (2, "ContractApplied")
    with duckdb.connect() as con:
        open_bills(con, [bill], strict=False)
        with pytest.raises(InputError, match="not a FOCUS ContractApplied object.*InvoiceId 'I7'") as refused:
            reconcile_remote(_plan(), lambda sql: con.execute(duckdb_sql(sql, engine)).fetchall(), engine, VIEW,
                             "2026-05", contracts=contracts)
    assert (refused.value.where.file, refused.value.where.column) == (f"{engine}:{VIEW}", "ContractApplied")
