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
    "bill rows without a BillingCurrency, a rate given (was 'no rate from (blank)')": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d, BillingCurrency=""), extra=["--rate", "EUR=1.08"]),
        names=("bill.csv", "row 2", "column BillingCurrency", "is empty")),
    "bill rows without a BillingCurrency (was 'bills are in no currency', naming no row)": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d, BillingCurrency="")),
        names=("bill.csv", "row 2", "column BillingCurrency", "is empty")),
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


# ---- more of each family, across the commands --------------------------------------------------------------
# Each case is refused with exit 2 at its place, nothing written. Marked "was exit 0" or "was exit 1" where the
# tool took the input before: silently (wrong money, a fallback the user did not ask for) or with an internal
# error.

ROOT = Path(__file__).resolve().parents[2]
METRICS = ROOT / "finops" / "data" / "metrics" / "2026-05-aws-inference-prod.json.gz"
LOAD_TEST = ROOT / "tests" / "sizing" / "fixtures" / "vllm-bench-serve.json"
PRICE_HEADER = ("provider,region,instance_type,gpu_model,gpu_count,pricing_model,payment_option,hourly_cost,"
                "upfront_cost,currency,effective_date,source\n")
SERVING_LINE = ("PlanLine,Engine,Model,Gpu,Precision,TP,LabelKey,LabelValue,TtftTargetMs,ItlTargetMs,Spare,Provider,"
                "InstanceType,Region\naws-inference-prod,vllm,llama-3.1-8b,l40s,fp8,1,namespace,inference-aws-prod,500,"
                "50,0.2,aws,g6e.xlarge,us-east-1\n")
CALIBRATE = ["--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8"]
ESTIMATE = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--isl", "100",
            "--osl", "100"]
HOURS = "hour,units\n0,1\n1,2\n"


def _bill_text(folder: Path, name: str, text: str | bytes) -> Path:
    """The one-row-per-charge bill of :func:`bill` rewritten as ``text`` (its header and rows, changed)."""
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _header(folder: Path) -> str:
    text = bill(folder, "model.csv").read_text()
    (folder / "model.csv").unlink()
    return text


def _budget_row(folder: Path, **cells: object) -> Path:
    row = {"Month": MONTH, "PlanLine": "gpu", "CostCentre": "cc", "Category": "OPEX", "Provider": "AWS",
           "Amount": 100, "Currency": "USD", "PlannedMTokens": None, **cells}
    return write_plan(folder / "plan.xlsx", budget=[tuple(row.values())],
                      mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")])


def _rec(folder: Path, *bills: Path, book: Path | None = None, extra: tuple[object, ...] = ()) -> list[object]:
    return reconcile_argv(folder, book or plan(folder), *(bills or (bill(folder),)), extra=extra)


def _plan_next(folder: Path, *extra: object, serving: str = SERVING_LINE) -> list[object]:
    from templates.builder import DEFAULT_TEMPLATE

    if not (folder / "plan.xlsx").exists():  # a case may have made its own plan
        (folder / "plan.xlsx").write_bytes(DEFAULT_TEMPLATE.read_bytes())
    return ["plan", "next", "--plan", folder / "plan.xlsx", "--history", folder / "h", "--month", MONTH, "--serving",
            _text(folder, "s.csv", serving), "--metrics", METRICS, "--out", folder / "n.xlsx", "--quiet", *extra]


def _template_edited(plan: Path, old: bytes, new: bytes) -> Path:
    """``plan``: the template (as ``_plan_next`` copies it) with ``old`` replaced by ``new`` in the one part holding
    it, every other part (the cached values of its formulas included) as it was."""
    import zipfile

    from templates.builder import DEFAULT_TEMPLATE

    with zipfile.ZipFile(DEFAULT_TEMPLATE) as source, zipfile.ZipFile(plan, "w") as edited:
        found = 0
        for item in source.infolist():
            data = source.read(item)
            if old in data:
                data, found = data.replace(old, new, 1), found + 1
            edited.writestr(item, data)
    assert found == 1, (old, found)
    return plan


def _text_copy(source: Path, copy: Path) -> Path:
    copy.write_bytes(source.read_bytes())
    return copy


def _sheet_renamed(plan: Path, old: str, new: str) -> Path:
    """The template with its sheet ``old`` named ``new`` in the workbook part."""
    return _template_edited(plan, f'<sheet name="{old}"'.encode(), f'<sheet name="{new}"'.encode())


def _serving(old: str, new: str) -> str:
    return SERVING_LINE.replace(old, new, 1) if old.startswith(",") else SERVING_LINE.replace("\n" + old, "\n" + new)


def _empty_zip(folder: Path) -> Path:
    import zipfile

    zipfile.ZipFile(folder / "plan.xlsx", "w").close()
    return folder / "plan.xlsx"


def _one_hint(folder: Path, out: str, err: str) -> None:
    assert err.count("Hint:") == 1, err


MORE: dict[str, Case] = {
    # bills
    "bill in UTF-16": Case(lambda d: _rec(d, _bill_text(d, "b.csv", _header(d).encode("utf-16"))), names=("b.csv", "row 1")),
    "bill with a header and no rows": Case(lambda d: _rec(d, _bill_text(d, "b.csv", _header(d).splitlines()[0] + "\n")),
                                           names=("b.csv", "no rows")),
    "bill of zero bytes": Case(lambda d: _rec(d, _bill_text(d, "b.csv", "")), names=("b.csv", "row 1", "ProviderName")),
    "BilledCost with a thousands separator": Case(lambda d: _rec(d, bill(d, BilledCost="1,234.50")),
                                                   names=("bill.csv", "row 2", "column BilledCost", "1,234.50")),
    "EffectiveCost with a currency sign": Case(lambda d: _rec(d, bill(d, EffectiveCost="$10")),
                                               names=("bill.csv", "row 2", "column EffectiveCost")),
    "ChargePeriodStart that is no date": Case(lambda d: _rec(d, bill(d, ChargePeriodStart="not a date")),
                                              names=("bill.csv", "row 2", "column ChargePeriodStart")),
    "ChargePeriodStart on February 30": Case(lambda d: _rec(d, bill(d, ChargePeriodStart="2026-02-30T00:00:00Z")),
                                             names=("bill.csv", "row 2", "column ChargePeriodStart")),
    "BillingPeriodStart blank on every row": Case(lambda d: _rec(d, bill(d, BillingPeriodStart="")),
                                                  names=("bill.csv", "charges with no BillingPeriodStart"),
                                                  hidden=("None",)),
    "BillingPeriodStart that is a month name": Case(lambda d: _rec(d, bill(d, BillingPeriodStart="May")),
                                                    names=("bill.csv", "row 2", "column BillingPeriodStart")),
    "Tags that are not JSON": Case(lambda d: _rec(d, bill(d, Tags="{team:ml")), names=("bill.csv", "row 2", "column Tags")),
    "ConsumedQuantity in words": Case(lambda d: _rec(d, bill(d, ConsumedQuantity="lots")),
                                      names=("bill.csv", "row 2", "column ConsumedQuantity")),
    "bill that is a folder": Case(lambda d: _rec(d, _text(d, "b.csv/x", "x").parent), names=("b.csv", "not found")),
    "Parquet bill holding CSV text": Case(lambda d: _rec(d, _bill_text(d, "b.parquet", _header(d))),
                                          names=("b.parquet", "damaged")),
    "workbook given as a bill": Case(lambda d: _rec(d, plan(d, "other.xlsx")), names=("other.xlsx",)),
    "csv.gz bill that is not gzip": Case(lambda d: _rec(d, _bill_text(d, "b.csv.gz", _header(d))), names=("b.csv.gz",)),
    "bill row with three fields": Case(lambda d: _rec(d, _bill_text(d, "b.csv", _header(d) + "only,three,fields\n")),
                                       names=("b.csv", "row 5", "3 fields")),
    "bill in EUR without a rate": Case(lambda d: _rec(d, bill(d, BillingCurrency="EUR")),
                                       names=("bill.csv", "column BillingCurrency", "--rate EUR=")),
    # the plan
    "plan that is a CSV named .xlsx": Case(lambda d: _rec(d, book=_text(d, "plan.xlsx", "a,b\n1,2\n")),
                                           names=("plan.xlsx", "not an Excel workbook")),
    "plan of zero bytes": Case(lambda d: _rec(d, book=_text(d, "plan.xlsx", "")), names=("plan.xlsx",)),
    "plan that is an empty zip": Case(lambda d: _rec(d, book=_empty_zip(d)), names=("plan.xlsx", "damaged"),
                                      verify=_one_hint),  # was two hints, one inside the other
    "Budget month in words": Case(lambda d: _rec(d, book=_budget_row(d, Month="May 2026")),
                                  names=("plan.xlsx", "sheet Budget", "cell A3", "May 2026")),
    "Budget currency US$": Case(lambda d: _rec(d, book=_budget_row(d, Currency="US$")), names=("sheet Budget", "cell G3")),
    "Budget category Rent": Case(lambda d: _rec(d, book=_budget_row(d, Category="Rent")), names=("sheet Budget", "cell D3")),
    "Budget amount with its currency": Case(lambda d: _rec(d, book=_budget_row(d, Amount="100 USD")),
                                            names=("sheet Budget", "cell F3", "100 USD")),
    "Budget PlannedMTokens below 0 (was exit 0: a negative unit cost)": Case(
        lambda d: _rec(d, book=_budget_row(d, PlannedMTokens=-5)), names=("sheet Budget", "cell H3", "PlannedMTokens")),
    "Budget row given twice (was exit 0: planned 200 for 100)": Case(
        lambda d: _rec(d, book=write_plan(d / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)] * 2,
                                          mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")])),
        names=("plan.xlsx", "sheet Budget", "row 4", "rows 3 and 4")),
    "Budget PlanLine blank": Case(lambda d: _rec(d, book=_budget_row(d, PlanLine="")), names=("sheet Budget", "cell B3")),
    "Mapping Rule number given twice (was exit 0: row order decided the line)": Case(
        lambda d: _rec(d, book=write_plan(d / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)],
                                          mapping=[(1, "gpu", "AWS", "", "", "", "", "", ""),
                                                   (1, "cpu", "AWS", "", "", "", "", "", "")])),
        names=("sheet Mapping", "row 4", "column Rule", "rows 3 and 4")),
    "Mapping rule number in words": Case(
        lambda d: _rec(d, book=write_plan(d / "plan.xlsx", budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)],
                                          mapping=[("first", "gpu", "AWS", "", "", "", "", "", "")])),
        names=("sheet Mapping", "cell A3", "first")),
    # reconcile's options and side files
    "--month without its leading zero": Case(lambda d: ["2026-5" if a == MONTH else a for a in _rec(d)],
                                             names=("--month", "2026-5")),
    "--threshold below 0": Case(lambda d: _rec(d, extra=("--threshold", "-5")), names=("--threshold",)),
    "--rate of 0": Case(lambda d: _rec(d, bill(d, BillingCurrency="EUR"), extra=("--rate", "EUR=0")), names=("--rate",)),
    "--rate nan": Case(lambda d: _rec(d, bill(d, BillingCurrency="EUR"), extra=("--rate", "EUR=nan")), names=("--rate",)),
    "usage tokens below 0": Case(lambda d: _rec(d, extra=("--usage", _text(
        d, "u.csv", f"Month,PlanLine,ActualMTokens\n{MONTH},gpu,-4\n"))), names=("u.csv", "row 2", "column ActualMTokens")),
    "usage month in words": Case(lambda d: _rec(d, extra=("--usage", _text(
        d, "u.csv", "Month,PlanLine,ActualMTokens\nMay,gpu,4\n"))), names=("u.csv", "row 2", "column Month")),
    "usage file without its tokens column": Case(lambda d: _rec(d, extra=("--usage", _text(
        d, "u.csv", f"Month,PlanLine\n{MONTH},gpu\n"))), names=("u.csv", "ActualMTokens")),
    "--out that is a file": Case(lambda d: reconcile_argv(d, plan(d), bill(d), out=_text(d, "outfile", "x")),
                                 names=("outfile", "folder")),
    "--unmapped-csv that is a folder": Case(lambda d: _rec(d, extra=("--unmapped-csv", _text(d, "u/x", "x").parent)),
                                            names=("folder",)),
    # bills pull
    "bills pull of a GCP export that is not there": Case(
        lambda d: ["bills", "pull", "--provider", "gcp", "--source", d / "nope.csv", "--month", MONTH, "--out",
                   d / "f.parquet"], names=("nope.csv", "does not exist")),
    "bills pull --out .csv (was exit 0: Parquet under a CSV name)": Case(
        lambda d: ["bills", "pull", "--provider", "gcp", "--source", ROOT / "tests" / "gcp" / "fixtures" /
                   "billing_export_standard.csv", "--month", MONTH, "--out", d / "f.csv"], names=("--out", ".parquet")),
    "bills pull of an AWS export folder that is not there": Case(
        lambda d: ["bills", "pull", "--provider", "aws", "--source", d / "nodir", "--month", MONTH, "--out",
                   d / "f.parquet"], names=("nodir", "does not exist")),
    "bills pull of a month range that ends before it starts": Case(
        lambda d: ["bills", "pull", "--provider", "aws", "--source", "ce", "--month", "2026-06..2026-05", "--out",
                   d / "f.parquet"], names=("--month", "2026-06..2026-05")),
    # prices
    "offer file cut short": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", _text(d, "o.json", (
            ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.json").read_text()[:5000]), "--out",
                   d / "p.parquet"], names=("o.json", "not valid JSON")),
    "prices pull --out .txt": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", ROOT / "tests" / "aws" / "data" /
                   "offer-AmazonEC2-excerpt.json", "--out", d / "p.txt"], names=("p.txt", ".parquet")),
    # tco
    "tco --price-book of zero bytes (was exit 0 on the reference case's price)": Case(
        lambda d: ["tco", "--price-book", _text(d, "pb.csv", "")], names=("pb.csv", "no prices")),
    "tco --price-book with a header alone": Case(
        lambda d: ["tco", "--price-book", _text(d, "pb.csv", PRICE_HEADER)], names=("pb.csv", "no prices")),
    "tco --concurrency 0 (was exit 0, read as 'max')": Case(
        lambda d: ["tco", "--model", "llama-3.1-8b", "--concurrency", "0", "--no-owned"], names=("--concurrency",)),
    "tco --electricity below 0": Case(lambda d: ["tco", "--electricity", "-0.1", "--no-cloud"],
                                      names=("--electricity",), hidden=("electricity_per_kwh",)),
    "tco --what-if-utilization from 0": Case(lambda d: ["tco", "--what-if-utilization", "0:0.8", "--no-cloud"],
                                             names=("--what-if-utilization",), hidden=("utilization_before",)),
    "tco --spot-max-share 2": Case(lambda d: ["tco", "--spot-max-share", "2"], names=("--spot-max-share",)),
    "tco --cache-hit-rate 2": Case(lambda d: ["tco", "--model", "llama-3.1-8b", "--cache-hit-rate", "2", "--no-owned"],
                                   names=("--cache-hit-rate",)),
    "tco --pue below 1": Case(lambda d: ["tco", "--pue", "0.5", "--no-cloud"], names=("--pue",)),
    "tco --node-price 1e400": Case(lambda d: ["tco", "--node-price", "1e400", "--no-cloud"], names=("--node-price",)),
    # size and estimate
    "size --peak-to-average nan": Case(lambda d: ["size", "--preset", "seed000-doc-qa", "--peak-to-average", "nan"],
                                       names=("--peak-to-average",), hidden=("key 'peak_to_average'",)),
    "workload file with isl below 0": Case(lambda d: ["size", "--workload", _text(
        d, "w.toml", 'name="w"\nmodel="llama-3.1-8b"\nisl=-5\nosl=100\npeak_requests_per_hour=1000\n')],
        names=("w.toml", "'isl'")),
    "estimate --arrival-rate below 0": Case(lambda d: [*ESTIMATE, "--arrival-rate", "-1"], names=("--arrival-rate",)),
    "estimate --max-batch 0": Case(lambda d: [*ESTIMATE, "--max-batch", "0"], names=("--max-batch",)),
    "model config with layers below 0": Case(lambda d: [*ESTIMATE[:2], _text(d, "config.json", (
        '{"hidden_size": 4096, "num_hidden_layers": -2, "num_attention_heads": 32, "num_key_value_heads": 8, '
        '"intermediate_size": 14336, "vocab_size": 128256}')), *ESTIMATE[3:]], names=("config.json", "num_hidden_layers")),
    # mix
    "mix --spot-share 2 (was exit 0)": Case(
        lambda d: ["mix", "--demand", _text(d, "d.csv", "hour,accelerators\n0,8\n1,16\n"), "--provider", "aws",
                   "--instance-type", "p5.48xlarge", "--region", "us-east-1", "--spot-share", "2"], names=("--spot-share",)),
    "mix --shift-batch 2": Case(lambda d: ["mix", "--demand", _text(d, "d.csv", HOURS), "--options",
                                           _text(d, "o.csv", OPTIONS), "--shift-batch", "2"], names=("--shift-batch",)),
    "mix option priced below 0": Case(lambda d: ["mix", "--demand", _text(d, "d.csv", HOURS), "--options", _text(
        d, "o.csv", "name,kind,hourly_cost\nod,on_demand,-2.0\n")], names=("o.csv", "row 2", "column hourly_cost")),
    "mix reserved option priced 0 (was exit 0: all demand at no cost)": Case(lambda d: ["mix", "--demand", _text(
        d, "d.csv", HOURS), "--options", _text(d, "o.csv", "name,kind,hourly_cost\nod,on_demand,2.0\nri,reserved,0\n")],
        names=("o.csv", "row 3", "column hourly_cost", "costs nothing")),
    "mix spot option priced 0": Case(lambda d: ["mix", "--demand", _text(d, "d.csv", HOURS), "--options", _text(
        d, "o.csv", "name,kind,hourly_cost\nod,on_demand,2.0\nsp,spot,0.0\n")], names=("o.csv", "row 3", "costs nothing")),
    "mix option named twice": Case(lambda d: ["mix", "--demand", _text(d, "d.csv", HOURS), "--options", _text(
        d, "o.csv", "name,kind,hourly_cost\nod,on_demand,2.0\nod,spot,1.0\n")], names=("o.csv", "row 3", "column name")),
    "mix profile --gpus-per-unit 0": Case(lambda d: ["mix", "profile", "--bills", bill(d), "--out", d / "dem.csv",
                                                     "--gpus-per-unit", "0"], names=("--gpus-per-unit",)),
    # calibrate
    "calibrate --prior-weight nan": Case(lambda d: ["calibrate", LOAD_TEST, *CALIBRATE, "--prior-weight", "nan", "--out",
                                                    d / "c.json"], names=("--prior-weight",)),
    "load test with a TTFT below 0": Case(lambda d: ["calibrate", _text(d, "lt.json", LOAD_TEST.read_text().replace(
        '"mean_ttft_ms": ', '"mean_ttft_ms": -', 1)), *CALIBRATE, "--out", d / "c.json"], names=("lt.json", "ttft")),
    # plan next
    "plan next --growth inf": Case(lambda d: _plan_next(d, "--growth", "inf"), names=("--growth",),
                                   hidden=("peak_requests_per_hour",)),
    "plan next --growth 1e308": Case(lambda d: _plan_next(d, "--growth", "1e308"), names=("--growth",),
                                     hidden=("Warning",)),
    "plan next --horizon-months 0": Case(lambda d: _plan_next(d, "--horizon-months", "0"), names=("--horizon-months",)),
    "plan next --horizon-months 100000 (was exit 0, 73 million hours)": Case(
        lambda d: _plan_next(d, "--horizon-months", "100000"), names=("--horizon-months",)),
    "serving Spare 5 (was exit 0: 500 % headroom)": Case(
        lambda d: _plan_next(d, serving=_serving(",0.2,", ",5,")), names=("s.csv", "row 2", "column Spare")),
    "serving TtftTargetMs 0": Case(lambda d: _plan_next(d, serving=_serving(",500,", ",0,")),
                                   names=("s.csv", "row 2", "column TtftTargetMs")),
    "serving Engine unknown": Case(lambda d: _plan_next(d, serving=_serving(",vllm,", ",foo,")),
                                   names=("s.csv", "row 2", "column Engine")),
    "serving Precision unknown": Case(lambda d: _plan_next(d, serving=_serving(",fp8,", ",fp3,")),
                                      names=("s.csv", "row 2", "column Precision")),
    "serving Model unknown": Case(lambda d: _plan_next(d, serving=_serving(",llama-3.1-8b,", ",llama-9,")),
                                  names=("s.csv", "row 2", "column Model")),
    "serving Provider unknown": Case(lambda d: _plan_next(d, serving=_serving(",aws,", ",azure,")),
                                     names=("s.csv", "row 2", "column Provider")),
    "serving line without a Budget row (was exit 0: a fleet with no cost in the plan)": Case(
        lambda d: _plan_next(d, serving=_serving("aws-inference-prod", "nowhere")),
        names=("s.csv", "row 2", "column PlanLine", "no Budget row")),
    "serving TP 0 (was exit 0, read as TP 1)": Case(lambda d: _plan_next(d, serving=_serving(",fp8,1,", ",fp8,0,")),
                                                    names=("s.csv", "row 2", "column TP")),
    "plan next over a plan with a sheet 'fleet' (was exit 0: a second sheet Excel takes for Fleet)": Case(
        lambda d: _plan_next(d) if _sheet_renamed(d / "plan.xlsx", "Start", "fleet") else [],
        names=("plan.xlsx", "sheet fleet", "Fleet")),
    "plan next over a plan with a table 'TBLFLEET' (was exit 0: two tables Excel takes for one)": Case(
        lambda d: _plan_next(d) if _template_edited(d / "plan.xlsx", b'name="tblMixOptions" displayName="tblMixOptions"',
                                                    b'name="TBLFLEET" displayName="TBLFLEET"') else [],
        names=("plan.xlsx", "TBLFLEET", "tblFleet")),
    "plan next --metrics the same answer twice (was exit 0: the fleet's demand doubled)": Case(
        lambda d: _plan_next(d, "--metrics", METRICS), names=(Path(METRICS).name, "given twice")),
    "plan next --metrics a copy of the answer (was exit 0: 2 x the GPUs)": Case(
        lambda d: _plan_next(d, "--metrics", _text_copy(Path(METRICS), d / "copy.json.gz")),
        names=("copy.json.gz", "also in", Path(METRICS).name)),
    "plan next --step with saved answers (was exit 0, ignored)": Case(
        lambda d: _plan_next(d, "--step", "60"), names=("--step", "--prometheus")),
    "plan next --step 0 against a live Prometheus (windows that never advance)": Case(
        lambda d: ["plan", "next", "--plan", _plan_next(d)[3], "--history", d / "h", "--month", MONTH, "--serving",
                   d / "s.csv", "--prometheus", "http://127.0.0.1:9", "--step", "0", "--out", d / "n.xlsx"],
        names=("--step", "above 0")),
    "plan next --step nan": Case(
        lambda d: ["plan", "next", "--plan", _plan_next(d)[3], "--history", d / "h", "--month", MONTH, "--serving",
                   d / "s.csv", "--prometheus", "http://127.0.0.1:9", "--step", "nan", "--out", d / "n.xlsx"],
        names=("--step", "nan")),
    "serving InstanceType without a Provider (was exit 0: priced as owned, May's budget carried)": Case(
        lambda d: _plan_next(d, serving=_serving(",aws,g6e.xlarge,", ",,g6e.xlarge,")),
        names=("s.csv", "row 2", "column Provider", "g6e.xlarge")),
    "serving TP 1.5": Case(lambda d: _plan_next(d, serving=_serving(",fp8,1,", ",fp8,1.5,")),
                           names=("s.csv", "row 2", "column TP", "whole number")),
    "reconcile --serving without metrics (was exit 0, ignored)": Case(
        lambda d: _rec(d, extra=("--serving", _text(d, "s.csv", SERVING_LINE))), names=("--serving", "--metrics")),
    "reconcile --table-lacks on local bills (was exit 0, ignored)": Case(
        lambda d: _rec(d, extra=("--table-lacks", "Tags")), names=("--table-lacks", "--engine")),
    "tco --start in year 0 (was exit 1)": Case(lambda d: ["tco", "--start", "0000-01", "--no-cloud"],
                                              names=("--start", "0000-01")),
    # template build
    "template build --prices with a header alone (was exit 1)": Case(
        lambda d: ["template", "build", "--prices", _text(d, "pb.csv", PRICE_HEADER), "--out", d / "p.xlsx"],
        names=("pb.csv", "no prices")),
    "template build --prices priced below 0": Case(
        lambda d: ["template", "build", "--prices", _text(d, "pb.csv", PRICE_HEADER + (
            "aws,us-east-1,p5.48xlarge,h100-sxm,8,on_demand,,-55.04,0,USD,2026-05-01,x\n")), "--out", d / "p.xlsx"],
        names=("pb.csv", "row 2", "hourly_cost")),
}


def _mix_shows_the_missing_price(folder: Path, out: str, err: str) -> None:
    import openpyxl

    texts = [c.value for ws in openpyxl.load_workbook(folder / "p.xlsx", data_only=True) for row in ws.iter_rows()
             for c in row if isinstance(c.value, str) and c.value.startswith("#FINOPS: no cud_3y price for gcp")]
    assert texts, "the Mix sheet shows the price the book lacks"


#: A JSON file holding an integer of 5,001 digits (Python's json refuses past 4,300): each was exit 1.
_HUGE = "1" + "0" * 5000
MORE.update({
    "load test with a 5,001-digit integer (was exit 1)": Case(
        lambda d: ["calibrate", _text(d, "lt.json", LOAD_TEST.read_text().replace('"completed": 200', '"completed": ' + _HUGE)),
                   *CALIBRATE, "--out", d / "c.json"], names=("lt.json",)),
    "calibration with a 5,001-digit integer (was exit 1)": Case(
        lambda d: ["size", "--preset", "seed000-doc-qa", "--calibration", _text(d, "c.json", '{"engines": ' + _HUGE + "}")],
        names=("c.json", "4,300 digits")),
    "workload JSON with a 5,001-digit integer (was exit 1)": Case(
        lambda d: ["size", "--workload", _text(d, "w.json", '{"name": "w", "model": "llama-3.1-8b", "isl": ' + _HUGE + "}")],
        names=("w.json", "4,300 digits")),
    "offer file with a 5,001-digit integer (was exit 1)": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", _text(d, "o.json", '{"formatVersion": ' + _HUGE + "}"),
                   "--out", d / "p.parquet"], names=("o.json", "4,300 digits")),
    "model config with a 5,001-digit integer (was exit 1)": Case(
        lambda d: [*ESTIMATE[:2], _text(d, "config.json", '{"hidden_size": ' + _HUGE + "}"), *ESTIMATE[3:]],
        names=("config.json", "4,300 digits")),
})

#: A price book of one AWS price builds the workbook (was exit 1): the cells it cannot price say so.
MORE["template build --prices of one AWS price (was exit 1)"] = Case(
    lambda d: ["template", "build", "--prices", _text(d, "pb.csv", PRICE_HEADER + (
        "aws,us-east-1,p5.48xlarge,h100-sxm,8,on_demand,,55.04,0,USD,2026-05-01,x\n")), "--out", d / "p.xlsx"],
    exit=0, may_write=("p.xlsx",), verify=_mix_shows_the_missing_price)


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_bad_input_exits_2_naming_its_place(name, tmp_path, capsys, monkeypatch):
    check(MORE[name], tmp_path, capsys, monkeypatch)
