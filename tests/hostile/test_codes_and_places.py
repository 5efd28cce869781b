"""Wrong codes and places: bad input exits 2 (never 1, "internal error") with one message naming the file,
row, column, cell or option at fault, and leaves every file as it was."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from .desk import (
    MONTH,
    OPTIONS_CSV,
    SERVING_CSV,
    Case,
    bill,
    check,
    plan,
    reconcile_argv,
    text_file,
    write_plan,
)

OPTIONS = OPTIONS_CSV
SERVING = SERVING_CSV
DEMAND = "hour,units\n" + "".join(f"{h},{1 + h % 3}\n" for h in range(48))
_text = text_file


def _header_twice(folder: Path, column: str = "BilledCost", instead_of: str = "InvoiceId") -> Path:
    path = bill(folder)
    lines = path.read_text().splitlines()
    lines[0] = lines[0].replace(instead_of, column, 1)
    path.write_text("\n".join(lines) + "\n")
    return path


def _budget_amount(folder: Path, amount: object) -> Path:
    return write_plan(folder / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", amount, "USD", None)],
                      mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")])


def _history(folder: Path, create: str) -> Path:
    out = folder / "out"
    out.mkdir()
    con = duckdb.connect(str(out / "reconcile-history.duckdb"))
    con.execute(create)
    con.close()
    return out


CASES: dict[str, Case] = {
    "a month out of range for tco --start": Case(lambda d: ["tco", "--start", "2026-13"], names=("--start", "2026-13")),
    "a month out of range for reconcile --month": Case(
        lambda d: ["2026-13" if a == MONTH else a for a in reconcile_argv(d, plan(d), bill(d))],
        names=("--month", "2026-13")),
    "a price book without its price columns": Case(
        lambda d: ["tco", "--price-book", _text(d, "prices.csv", "provider,region\naws,us-east-1\n")],
        names=("prices.csv", "header", "hourly_cost"), hidden=("row 2",)),
    "bill naming a column twice": Case(
        lambda d: reconcile_argv(d, plan(d), _header_twice(d)), names=("bill.csv", "row 1", "column BilledCost")),
    "bill naming a column twice in another case": Case(
        lambda d: reconcile_argv(d, plan(d), _header_twice(d, "billedcost")), names=("bill.csv", "row 1")),
    "usage CSV naming a column twice": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _text(
            d, "usage.csv", f"Month,PlanLine,ActualMTokens,Month\n{MONTH},gpu,1,2026-06\n")]),
        names=("usage.csv", "row 1", "column Month")),
    "mix demand naming a column twice": Case(
        lambda d: ["mix", "--demand", _text(d, "d.csv", "hour,units,units\n0,1,2\n1,2,3\n"), "--options",
                   _text(d, "o.csv", OPTIONS)], names=("d.csv", "row 1", "column units")),
    "mix options naming a column twice": Case(
        lambda d: ["mix", "--demand", _text(d, "d.csv", DEMAND), "--options",
                   _text(d, "o.csv", "name,kind,hourly_cost,kind\nod,on_demand,2.0,spot\n")],
        names=("o.csv", "row 1", "column kind")),
    "serving lines naming a column twice": Case(
        lambda d: ["plan", "next", "--plan", plan(d), "--history", d / "h", "--month", MONTH, "--metrics",
                   _text(d, "m.json", '{"status":"success","data":{"resultType":"matrix","result":[]}}'),
                   "--serving", _text(d, "s.csv", SERVING.replace("LabelValue", "LabelValue,TP", 1)),
                   "--out", d / "n.xlsx"], names=("s.csv", "row 1", "column TP")),
    "Budget amount 1e400": Case(
        lambda d: reconcile_argv(d, _budget_amount(d, "1e400"), bill(d)), names=("plan.xlsx", "cell F3")),
    "Budget amount INF": Case(
        lambda d: reconcile_argv(d, _budget_amount(d, "INF"), bill(d)), names=("plan.xlsx", "cell F3")),
    "Budget amount 1e16": Case(
        lambda d: reconcile_argv(d, _budget_amount(d, 1e16), bill(d)), names=("plan.xlsx", "cell F3")),
    "usage tokens 1e400": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _text(
            d, "usage.csv", f"Month,PlanLine,ActualMTokens\n{MONTH},gpu,1e400\n")]),
        names=("usage.csv", "row 2", "column ActualMTokens")),
    "usage tokens INF": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _text(
            d, "usage.csv", f"Month,PlanLine,ActualMTokens\n{MONTH},gpu,INF\n")]),
        names=("usage.csv", "row 2", "column ActualMTokens")),
    "bill cost INF": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d, BilledCost="INF", EffectiveCost="INF")),
        names=("bill.csv", "row 2", "column BilledCost")),
    "--threshold 1e400": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--threshold", "1e400"]), names=("--threshold",)),
    "--fail-on-variance inf": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--fail-on-variance", "inf"]),
        names=("--fail-on-variance",)),
    "history database of another schema": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), out=_history(d, "CREATE TABLE months(x INT)")),
        names=("reconcile-history.duckdb", "not a history database")),
    "history database whose months table lacks columns": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), out=_history(
            d, "CREATE TABLE months(month VARCHAR, currency VARCHAR)")),
        names=("reconcile-history.duckdb", "planned")),
    "history database whose other tables have another shape": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), out=_history(
            d, "CREATE TABLE months(month VARCHAR, currency VARCHAR, planned DECIMAL(38, 10), opex DECIMAL(38, 10), "
               "capex DECIMAL(38, 10), billed_cost DECIMAL(38, 10)); CREATE TABLE lines(x INT)")),
        names=("reconcile-history.duckdb",)),
    "history file that is text": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), out=_text(d, "out/reconcile-history.duckdb", "x").parent),
        names=("reconcile-history.duckdb",)),
    "calibrate --base that is not a calibration": Case(
        lambda d: ["calibrate", _text(d, "b.json", "{}"), "--base", _text(d, "base.json", '{"x": 1}'), "--engine",
                   "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--out",
                   d / "c.json"], names=("base.json",)),
    "tco --residual-share 1e400": Case(
        lambda d: ["tco", "--residual-share", "1e400", "--no-cloud"], names=("--residual-share",)),
    "tco --cost-of-capital nan": Case(
        lambda d: ["tco", "--cost-of-capital", "nan", "--no-cloud"], names=("--cost-of-capital",)),
    "mix scenarios --weights 1e400,0,0": Case(
        lambda d: ["mix", "scenarios", "--demand", _text(d, "d.csv", DEMAND), "--options", _text(d, "o.csv", OPTIONS),
                   "--weights", "1e400,0,0"], names=("--weights",)),
    "bills pull --provider azure": Case(
        lambda d: ["bills", "pull", "--provider", "azure", "--source", "x.csv", "--month", MONTH],
        names=("--provider", "'azure'")),
    "size --gpus h10": Case(lambda d: ["size", "--preset", "seed000-doc-qa", "--gpus", "h10"], names=("--gpus", "h10")),
    "reconcile --from zz:abc": Case(
        lambda d: ["reconcile", "--plan", plan(d), "--month", MONTH, "--from", "zz:abc", "--out", d / "out"],
        names=("--from", "'zz'")),
    "reconcile --rate EUR=abc": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--rate", "EUR=abc"]), names=("--rate",)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_exits_2_naming_its_place(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)


def _empty_range_mapping(folder: Path) -> list[object]:
    book = write_plan(folder / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)],
                      mapping=[(1, "gpu", "AWS", "", "", "", "", "team", "[z-a]*"),
                               (2, "gpu", "AWS", "", "", "", "", "", "")])
    return reconcile_argv(folder, book, bill(folder), extra=["--json"])


def test_a_mapping_set_with_a_reversed_range_is_empty_not_an_error_of_the_bills(tmp_path, capsys, monkeypatch):
    """``[z-a]`` is an empty set, as fnmatch reads it; the regular expression refused it, and the error named
    the bills. The first rule matches nothing; the second maps every charge."""
    import json

    def all_mapped(folder: Path, out: str, err: str) -> None:
        assert json.loads(out)["unmapped_effective_cost"] == 0

    check(Case(_empty_range_mapping, exit=0, unchanged=False, verify=all_mapped), tmp_path, capsys, monkeypatch)
