"""Comments typed into a review's tblVariance survive a re-run of the month, and the history keeps them;
a history written before comments existed is migrated when it is opened."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import duckdb
import openpyxl
import pytest

from finops.cli.reconcile import reconcile_to_workbook
from finops.errors import InputError
from finops.reconcile.history import HISTORY_FILE, History

from .conftest import write_bill, write_plan

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
P5 = {"x_InstanceType": "p5.48xlarge"}


def type_comments(path, comments):
    """What finance does in Excel: type into the Comment cells of tblVariance, save."""
    book = openpyxl.load_workbook(path)
    ws = book["Variance"]
    header = [c.value for c in ws[4]]
    line_col, comment_col = header.index("Plan line") + 1, header.index("Comment") + 1
    for row in range(5, ws.max_row + 1):
        line = ws.cell(row, line_col).value
        if line in comments:
            ws.cell(row, comment_col).value = comments[line]
    book.save(path)


def read_comments(path):
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    header = [c.value for c in ws[4]]
    ref = ws.tables["tblVariance"].ref
    last = int(ref.split(":")[1].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    return {ws.cell(r, header.index("Plan line") + 1).value: ws.cell(r, header.index("Comment") + 1).value
            for r in range(5, last + 1) if ws.cell(r, header.index("Comment") + 1).value}


def test_a_comment_survives_a_rerun_and_the_history_keeps_it(tmp_path, simple_plan):
    out = tmp_path / "out"
    first = write_bill(tmp_path / "may1.csv", [{**P5, "EffectiveCost": "160"}])
    corrected = write_bill(tmp_path / "may2.csv", [{**P5, "EffectiveCost": "175"}, {"ServiceName": "AmazonS3"}])
    _, path = reconcile_to_workbook(simple_plan, [first], "2026-05", out, run_at=RUN_AT)
    assert read_comments(path) == {}
    type_comments(path, {"gpu": "=new p5 cluster from 12 May, see ticket FIN-88", "onprem": "L40S server early"})

    rec, path = reconcile_to_workbook(simple_plan, [corrected], "2026-05", out, run_at=datetime(2026, 6, 3, 9, 0))
    assert [line.actual.amount for line in rec.lines if line.plan_line == "gpu"] == [Decimal(175)]  # the new bill
    kept = {"gpu": "=new p5 cluster from 12 May, see ticket FIN-88", "onprem": "L40S server early"}
    assert read_comments(path) == kept  # a comment starting with "=" stays text
    history = History(out / HISTORY_FILE)
    assert history.comments("2026-05") == kept

    # the review file moved away: the comments come back from the history
    path.rename(tmp_path / "elsewhere.xlsx")
    _, path = reconcile_to_workbook(simple_plan, [corrected], "2026-05", out, run_at=RUN_AT)
    assert read_comments(path) == kept

    # a comment cleared in the review stays cleared, in the next review and in the history
    type_comments(path, {"onprem": None})
    _, path = reconcile_to_workbook(simple_plan, [corrected], "2026-05", out, run_at=RUN_AT)
    assert read_comments(path) == {"gpu": kept["gpu"]}

    # a later month starts without comments and leaves May's in the history
    june = write_bill(tmp_path / "june.csv", [{**P5, "ChargePeriodStart": "2026-06-04T00:00:00Z"}])
    _, june_path = reconcile_to_workbook(simple_plan, [june], "2026-06", out, run_at=RUN_AT)
    assert read_comments(june_path) == {}
    assert history.comments("2026-05") == {"gpu": kept["gpu"]}


def test_a_damaged_review_is_not_written_over(tmp_path, simple_plan):
    out = tmp_path / "out"
    bill = write_bill(tmp_path / "may.csv", [P5])
    _, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    path.write_bytes(b"not a workbook")
    with pytest.raises(InputError) as info:
        reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    assert str(path) in str(info.value) and "comments of the review" in str(info.value)
    assert path.read_bytes() == b"not a workbook"


#: The history's schema before the comments table and the capex_cash / one_off columns.
OLD_SCHEMA = """
CREATE TABLE months (
    month VARCHAR PRIMARY KEY, currency VARCHAR NOT NULL, planned DECIMAL(38, 10) NOT NULL,
    opex DECIMAL(38, 10) NOT NULL, capex DECIMAL(38, 10) NOT NULL, billed_cost DECIMAL(38, 10) NOT NULL,
    unmapped DECIMAL(38, 10) NOT NULL, run_at TIMESTAMP NOT NULL);
CREATE TABLE lines (
    month VARCHAR NOT NULL, plan_line VARCHAR NOT NULL, category VARCHAR NOT NULL,
    planned DECIMAL(38, 10) NOT NULL, actual DECIMAL(38, 10) NOT NULL, PRIMARY KEY (month, plan_line));
INSERT INTO months VALUES ('2026-04', 'USD', 1000, 300, 1200, 310, 0, '2026-05-02 07:00:00');
INSERT INTO lines VALUES ('2026-04', 'gpu', 'OPEX', 100, 300);
"""


def test_an_existing_history_is_migrated(tmp_path, simple_plan):
    out = tmp_path / "out"
    out.mkdir()
    con = duckdb.connect(str(out / HISTORY_FILE))
    con.execute(OLD_SCHEMA)
    con.close()
    bill = write_bill(tmp_path / "may.csv", [{**P5, "EffectiveCost": "150"}])
    rec, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    april, may = History(out / HISTORY_FILE).months()
    assert (april.month, april.actual, april.cash, april.one_off, april.lines) == (
        "2026-04", Decimal(1500), Decimal(310), Decimal(0), {"gpu": Decimal(300)})
    assert (may.actual, may.cash) == (Decimal(1350), Decimal(10))
    assert rec.forecast.run_rate.amount == Decimal(1425)  # April's kept actual feeds the run rate
    type_comments(path, {"gpu": "checked"})
    reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    assert History(out / HISTORY_FILE).comments("2026-05") == {"gpu": "checked"}


def test_a_comment_on_a_line_that_left_the_plan_is_shown_and_kept(tmp_path, simple_plan):
    """simple_plan has gpu, storage and onprem; the revised plan drops storage (its S3 charges go unmapped)."""
    out = tmp_path / "out"
    bill = write_bill(tmp_path / "may.csv", [{**P5, "EffectiveCost": "160"}, {"ServiceName": "AmazonS3"}])
    _, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    typed = {"gpu": "new p5 cluster", "storage": "S3 moved to the data team's budget in June"}
    type_comments(path, typed)

    revised = write_plan(tmp_path / "revised.xlsx",
                         budget=[("2026-05", "gpu", "cc-1", "OPEX", "AWS", 100, "USD", None)],
                         mapping=[(1, "gpu", "AWS", "", "AmazonEC2", "p5.*", "", "", "")])
    rec, path = reconcile_to_workbook(revised, [bill], "2026-05", out, run_at=RUN_AT)
    assert "storage" not in {line.plan_line for line in rec.lines}
    assert read_comments(path) == {"gpu": "new p5 cluster"}  # tblVariance: the plan's lines only
    assert former_line_comments(path) == [("storage", typed["storage"])]
    assert History(out / HISTORY_FILE).comments("2026-05") == typed

    # run again: still shown, still kept; and gone from neither when the line comes back
    _, path = reconcile_to_workbook(revised, [bill], "2026-05", out, run_at=RUN_AT)
    assert former_line_comments(path) == [("storage", typed["storage"])]
    _, path = reconcile_to_workbook(simple_plan, [bill], "2026-05", out, run_at=RUN_AT)
    assert read_comments(path) == typed and former_line_comments(path) == []


def former_line_comments(path):
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    if "tblFormerLineComments" not in ws.tables:
        return []
    rows = [[c.value for c in row] for row in ws[ws.tables["tblFormerLineComments"].ref]]
    assert rows[0] == ["Plan line", "Comment"]
    return [tuple(row) for row in rows[1:]]


def _type(path, column, values):
    """Type into one input column of tblVariance (plan line -> text; None clears), as finance does in Excel."""
    book = openpyxl.load_workbook(path)
    ws = book["Variance"]
    header = [c.value for c in ws[4]]
    line_col, col = header.index("Plan line") + 1, header.index(column) + 1
    for row in range(5, ws.max_row + 1):
        if ws.cell(row, line_col).value in values:
            ws.cell(row, col).value = values[ws.cell(row, line_col).value]
    book.save(path)


def _owners_and_actions(path):
    ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
    header = [c.value for c in ws[4]]
    last = int(ws.tables["tblVariance"].ref.split(":")[1].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    cols = [header.index(h) + 1 for h in ("Plan line", "Owner", "Action")]
    rows = ((ws.cell(r, c).value for c in cols) for r in range(5, last + 1))
    return {line: (owner, action) for line, owner, action in rows if owner or action}


def test_owner_and_action_carry_into_next_months_review_until_changed(tmp_path, simple_plan):
    """May's review assigns the gpu line's overrun to an owner with an action; June's review, a new month with no
    file yet, starts from them (the history keeps them); cleared in June, July starts without them."""
    out = tmp_path / "out"
    may = write_bill(tmp_path / "may.csv", [{**P5, "EffectiveCost": "160"}])
    _, may_path = reconcile_to_workbook(simple_plan, [may], "2026-05", out, run_at=RUN_AT)
    assert _owners_and_actions(may_path) == {}
    _type(may_path, "Owner", {"gpu": "Ana (platform)"})
    _type(may_path, "Action", {"gpu": "move the p5 fleet to a 1-year reservation"})
    _, may_path = reconcile_to_workbook(simple_plan, [may], "2026-05", out, run_at=RUN_AT)   # a re-run keeps them
    assigned = {"gpu": ("Ana (platform)", "move the p5 fleet to a 1-year reservation")}
    assert _owners_and_actions(may_path) == assigned

    june = write_bill(tmp_path / "june.csv", [{**P5, "ChargePeriodStart": "2026-06-04T00:00:00Z"}])
    _, june_path = reconcile_to_workbook(simple_plan, [june], "2026-06", out, run_at=RUN_AT)
    assert _owners_and_actions(june_path) == assigned
    _type(june_path, "Action", {"gpu": None})
    _type(june_path, "Owner", {"gpu": None})
    _, june_path = reconcile_to_workbook(simple_plan, [june], "2026-06", out, run_at=RUN_AT)
    assert _owners_and_actions(june_path) == {}
    history = History(out / HISTORY_FILE)
    assert (history.actions("2026-05"), history.actions("2026-06"), history.actions("2026-07")) == (assigned, {}, {})
