"""The commands and options the other tables reach least: ``size --workload`` and ``--api-offers``, ``estimate``,
``mix scenarios`` / ``ladder`` / ``generate``, ``prices``, ``template build --prices``, ``tco --price-book`` and
``reconcile --usage`` / ``--rate`` / ``--contract-commitments``, fed what a hurried user types: thousands separators
(``1,200``), European decimals (``1,5``), percentages as text (``12%``), dates as text, a binary file under a text
name, a figure that contradicts the catalog, a line name misspelt.

Each is refused with exit 2 at its place, nothing written, unless the table says it is sound (``1,200`` is 1200).
Marked "was exit 0" or "was exit 1" where the tool took it before: silently (a price of a 4-GPU p5.48xlarge, usage
of a plan line that does not exist, the second of two rates, a CSV it did not write replaced) or with an internal
error.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from .desk import MONTH, Case, bill, check, plan, reconcile_argv, text_file, write_plan

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = (ROOT / "examples" / "sizing" / "support-bot.toml").read_text()
DEMAND = (ROOT / "examples" / "mix" / "demand.csv").read_text()
OPTIONS = (ROOT / "examples" / "mix" / "options.csv").read_text()
OFFER_CSV = ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.csv"
OFFERS = "provider,model,kind,price,unit,term_months,tokens_per_unit_s\n"
OUTPUT = "aws,llama-3.1-8b,on_demand,0.2,M output tokens,,\n"
IN_ROW = "aws,llama-3.1-8b,on_demand,{price},M input tokens,,\n"
PRICES = ("provider,region,instance_type,gpu_model,gpu_count,pricing_model,payment_option,hourly_cost,upfront_cost,"
          "currency,effective_date,source\n")
P5 = "aws,us-east-1,p5.48xlarge,h100-sxm,{count},on_demand,,55.04,0,USD,{date},quote\n"
ESTIMATE = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--isl", "100",
            "--osl", "100"]
USAGE = "Month,PlanLine,ActualMTokens\n"
_text = text_file


def _workload(old: str, new: str):
    def build(folder: Path) -> list[object]:
        assert old in WORKLOAD
        return ["size", "--workload", _text(folder, "w.toml", WORKLOAD.replace(old, new)), "--top", "1"]
    return build


def _offers(rows: str):
    return lambda d: ["size", "--preset", "seed003-customer-service", "--api-offers", _text(d, "o.csv", OFFERS + rows)]


def _mix(command: str, demand: str = DEMAND, options: str = OPTIONS, *extra: object):
    return lambda d: ["mix", command, "--demand", _text(d, "d.csv", demand), "--options", _text(d, "o.csv", options),
                      *extra]


def _book(row: str):
    return lambda d: ["tco", "--price-book", _text(d, "p.csv", PRICES + row)]


def _usage(rows: str):
    return lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--usage", _text(d, "u.csv", USAGE + rows)])


def _binary(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(b"\xff\xfe\x00isl = 3\x00")
    return path


def _usage_counted(expected: str):
    def verify(folder: Path, out: str, err: str) -> None:
        from openpyxl import load_workbook

        book = load_workbook(folder / "out" / f"budget-review-{MONTH}.xlsx", read_only=True)
        found = [row for sheet in book for row in sheet.iter_rows(values_only=True)
                 if row and "gpu" in row and float(expected) in row]
        assert found, f"{expected} million tokens of gpu not in the review"
    return verify


CASES: dict[str, Case] = {
    # size --workload
    "workload isl negative": Case(_workload("isl = 1500", "isl = -1500"), names=("w.toml", "'isl'")),
    "workload isl with a thousands separator, as text": Case(_workload("isl = 1500", 'isl = "1,500"'),
                                                             names=("w.toml", "'isl'", "1,500")),
    "workload dau as text 20,000": Case(_workload("dau = 20000", 'dau = "20,000"'), names=("w.toml", "'dau'")),
    "workload online share as text 10%": Case(_workload("online_share = 0.1", 'online_share = "10%"'),
                                              names=("w.toml", "'online_share'", "10%")),
    "workload online share 10 (a percentage, not a share)": Case(
        _workload("online_share = 0.1", "online_share = 10"), names=("w.toml", "'online_share'", "(0, 1]")),
    "workload spare nan": Case(_workload("spare = 0.2", "spare = nan"), names=("w.toml", "'spare'")),
    "workload spare inf": Case(_workload("spare = 0.2", "spare = inf"), names=("w.toml", "'spare'")),
    "workload TTFT target 0": Case(_workload("ttft_ms = 800", "ttft_ms = 0"), names=("w.toml", "'ttft_ms'")),
    "workload key misspelt": Case(_workload("spare = 0.2", "spare = 0.2\nsapre = 0.3"),
                                  names=("w.toml", "'sapre'", "did you mean 'spare'")),
    "workload SLO percentile p100": Case(_workload('slo_percentile = "p99"', 'slo_percentile = "p100"'),
                                         names=("w.toml", "'slo_percentile'")),
    "workload redundancy -1": Case(_workload("redundancy = 1", "redundancy = -1"), names=("w.toml", "'redundancy'")),
    "workload file a JSON list": Case(lambda d: ["size", "--workload", _text(d, "w.json", "[1, 2]")],
                                      names=("w.json", "one object")),
    "workload file not TOML": Case(lambda d: ["size", "--workload", _text(d, "w.toml", "isl = = 3")],
                                   names=("w.toml", "TOML", "line 1")),
    # was exit 2 after two RuntimeWarnings, naming "arrival rate", no key
    "workload requests a user 1e300 an hour": Case(
        _workload("requests_per_user_per_hour = 12", "requests_per_user_per_hour = 1e300"),
        names=("w.toml", "'requests_per_user_per_hour'", "at most")),
    # was exit 1: the error printer read a missing strerror of a UnicodeDecodeError
    "workload file binary": Case(lambda d: ["size", "--workload", _binary(d, "w.toml")], names=("w.toml", "UTF-8")),
    # size --api-offers: (the quote's rows, what the message names besides o.csv)
    **{name: Case(_offers(rows), names=("o.csv", *names)) for name, rows, names in (
        ("offer price negative", IN_ROW.format(price="-0.1") + OUTPUT, ("row 2", "column price")),
        ("offer price with a European decimal 1,5", IN_ROW.format(price='"1,5"') + OUTPUT,
         ("row 2", "column price", "'1,5'")),
        ("offer price as a percentage", IN_ROW.format(price="12%") + OUTPUT, ("row 2", "column price", "12%")),
        ("offer unit per token", "aws,llama-3.1-8b,on_demand,0.1,per token,,\n", ("row 2", "column unit")),
        ("offer without its output price", IN_ROW.format(price="0.1"), ("row 2", "no output price")),
        ("offer kind misspelt", IN_ROW.format(price="0.1").replace("on_demand", "ondemand"), ("row 2", "column kind")),
        ("provisioned offer without tokens a second", "aws,llama-3.1-8b,provisioned,20,unit-hour,6,\n",
         ("row 2", "tokens_per_unit_s")),
        ("provisioned offer of 1.5 months", "aws,llama-3.1-8b,provisioned,20,unit-hour,1.5,1000\n",
         ("row 2", "term_months")),
        ("provisioned offer with nan tokens", "aws,llama-3.1-8b,provisioned,20,unit-hour,6,nan\n",
         ("row 2", "tokens_per_unit_s")),
        ("offer price 1e400", IN_ROW.format(price="1e400") + OUTPUT, ("row 2", "column price", "out of range")),
        ("provisioned offer with 1e400 tokens a second", "aws,llama-3.1-8b,provisioned,20,unit-hour,6,1e400\n",
         ("row 2", "tokens_per_unit_s", "out of range")),
        ("offer of an unknown model", IN_ROW.format(price="0.1").replace("llama-3.1-8b", "llama-99b"),
         ("row 2", "column model")),
        ("offer with its input price twice", IN_ROW.format(price="0.1") + IN_ROW.format(price="0.3") + OUTPUT,
         ("row 3", "twice")),
    )},
    # estimate
    "estimate --max-batch 0": Case(lambda d: [*ESTIMATE, "--max-batch", "0"], names=("--max-batch",)),
    # was named as "prefill token budget", no option
    "estimate --prefill-token-budget -1": Case(lambda d: [*ESTIMATE, "--prefill-token-budget", "-1"],
                                               names=("--prefill-token-budget",)),
    "estimate --kv-precision fp3": Case(lambda d: [*ESTIMATE, "--kv-precision", "fp3"], names=("fp3",)),
    "estimate --calibration a JSON list": Case(lambda d: [*ESTIMATE, "--calibration", _text(d, "c.json", "[]")],
                                               names=("c.json", "engines")),
    "estimate --model a config.json with a negative width": Case(
        lambda d: ["estimate", "--model", _text(d, "config.json", '{"hidden_size": -1}'), *ESTIMATE[3:]],
        names=("config.json", "'hidden_size'")),
    # mix
    "mix scenarios weights negative": Case(_mix("scenarios", DEMAND, OPTIONS, "--weights", "-0.5,1,0.5"),
                                           names=("weights",)),
    "mix ladder hourly cost with a European decimal": Case(
        _mix("ladder", DEMAND, 'name,kind,hourly_cost\nod,on_demand,"1,5"\n'), names=("o.csv", "row 2", "hourly_cost")),
    "mix ladder demand as a percentage": Case(_mix("ladder", "hour,units\n0,12%\n1,3\n"),
                                              names=("d.csv", "row 2", "column units")),
    "mix ladder demand hour repeated": Case(_mix("ladder", "hour,units\n0,1\n0,3\n"), names=("d.csv", "row 3", "hour")),
    "mix ladder negative hourly cost": Case(_mix("ladder", DEMAND, "name,kind,hourly_cost\nod,on_demand,-2\n"),
                                            names=("o.csv", "row 2", "hourly_cost")),
    "mix ladder max_share 1.2": Case(
        _mix("ladder", DEMAND, "name,kind,hourly_cost,max_share\nod,on_demand,2,\nsp,spot,1,1.2\n"),
        names=("o.csv", "row 3", "max_share")),
    # was exit 0: a campaign after the profile's last day changed no hour
    "mix generate --campaign past the profile": Case(
        lambda d: ["mix", "generate", "--out", d / "x.csv", "--peak", "8", "--hours", "48", "--campaign", "400:3:10"],
        names=("--campaign", "400", "2 days")),
    "mix profile --gpus-per-unit 0": Case(lambda d: ["mix", "profile", "--bills", bill(d), "--out", d / "x.csv",
                                                     "--gpus-per-unit", "0"], names=("--gpus-per-unit",)),
    # prices
    "prices show an unknown provider": Case(lambda d: ["prices", "show", "--provider", "azure"], names=("azure",)),
    "prices show a pricing model misspelt": Case(lambda d: ["prices", "show", "--pricing-model", "ondemand"],
                                                 names=("--pricing-model", "did you mean")),
    "prices pull --out x.txt": Case(lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", OFFER_CSV,
                                               "--out", d / "x.txt"], names=("x.txt",)),
    # was exit 0: the CSV was replaced by the price book
    "prices pull --out a CSV of someone else": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", OFFER_CSV, "--out",
                   _text(d, "notes.csv", "a,b\n1,2\n")], names=("notes.csv", "not a price book this tool wrote")),
    "prices pull --out x.parquet beside a CSV of someone else": Case(
        lambda d: ["prices", "pull", "--provider", "aws", "--offer-file", OFFER_CSV, "--out", d / "x.parquet"]
        if _text(d, "x.csv", "team,budget\nml,100\n") else [], names=("x.csv", "not a price book this tool wrote")),
    "prices pull-tokens --out x.parquet": Case(lambda d: ["prices", "pull-tokens", "--provider", "aws", "--out",
                                                          d / "x.parquet"], names=("x.parquet", ".csv")),
    # template build --prices and tco --price-book read one price book
    "price book hourly cost with a European decimal": Case(
        lambda d: ["template", "build", "--prices", _text(d, "p.csv", PRICES + P5.format(count=8, date="2026-07-30")
                                                          .replace("55.04", '"55,04"')), "--out", d / "t.xlsx"],
        names=("p.csv", "row 2", "hourly_cost")),
    # was exit 0: a date in words written into the workbook as the price's date
    "price book date as text 30/07/2026": Case(
        lambda d: ["template", "build", "--prices", _text(d, "p.csv", PRICES + P5.format(count=8, date="30/07/2026")),
                   "--out", d / "t.xlsx"], names=("p.csv", "row 2", "effective_date")),
    # was exit 0: a price per GPU-hour divided by nothing
    "price book with 0 GPUs an instance": Case(_book(P5.format(count=0, date="2026-07-30")),
                                               names=("p.csv", "row 2", "gpu_count")),
    # was exit 0: the p5.48xlarge priced as 4 GPUs, each GPU-hour at twice its price
    "price book with the GPUs of another instance": Case(_book(P5.format(count=4, date="2026-07-30")),
                                                         names=("p.csv", "row 2", "gpu_count", "8 GPUs")),
    "price book pricing model misspelt": Case(_book(P5.format(count=8, date="2026-07-30").replace("on_demand", "ondemand")),
                                              names=("p.csv", "row 2", "pricing_model")),
    "tco --node-price with a European decimal": Case(lambda d: ["tco", "--node-price", "1,5"], names=("--node-price",)),
    "tco --node-price as a percentage": Case(lambda d: ["tco", "--node-price", "12%"], names=("--node-price",)),
    "tco --tokens-per-s -5": Case(lambda d: ["tco", "--tokens-per-s", "-5"], names=("--tokens-per-s",)),
    # reconcile --usage, --rate, --threshold, --contract-commitments
    "usage with a European decimal": Case(_usage('2026-05,gpu,"1,5"\n'), names=("u.csv", "row 2", "ActualMTokens")),
    "usage negative": Case(_usage("2026-05,gpu,-3\n"), names=("u.csv", "row 2", "ActualMTokens")),
    "usage month in words": Case(_usage("May 2026,gpu,3\n"), names=("u.csv", "row 2", "Month")),
    "usage of a plan line twice": Case(_usage("2026-05,gpu,3\n2026-05,gpu,3\n"), names=("u.csv", "row 3", "twice")),
    # was exit 0: the tokens of a misspelt plan line fed no line
    "usage of a plan line the plan does not have": Case(_usage("2026-05,gpx,3\n"),
                                                        names=("u.csv", "row 2", "PlanLine", "'gpx'", "gpu")),
    "usage with a thousands separator is 1200": Case(_usage('2026-05,gpu,"1,200"\n'), exit=0, unchanged=False,
                                                     verify=_usage_counted("1200")),
    "--threshold as a percentage": Case(lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--threshold", "12%"]),
                                        names=("--threshold", "12%")),
    "--rate with a European decimal": Case(lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--rate", "EUR=1,08"]),
                                           names=("--rate", "EUR=1,08")),
    # was exit 0: the second rate was taken
    "--rate of one currency twice, differently": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--rate", "EUR=1.08", "--rate", "eur=1.10"]),
        names=("--rate EUR", "twice", "1.08", "1.10")),
    "--contract-commitments of another dataset": Case(
        lambda d: reconcile_argv(d, plan(d), bill(d), extra=["--contract-commitments", _text(d, "c.csv", "a,b\n1,2\n")]),
        names=("c.csv", "ContractCommitmentId")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_less_covered_commands(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)


def test_the_bundled_price_books_agree_with_the_instance_catalog():
    """Every bundled price row passes the check a user's price book gets (GPUs of the catalog, an ISO date)."""
    from finops.price_book import PriceBook

    book = PriceBook.bundled()
    assert len(book) > 1000 and all(row.gpu_count >= 1 for row in book)


# ---- plan workbooks: openpyxl-readable, typed in a hurry ------------------------------------------------------
BUDGET = {"Month": MONTH, "PlanLine": "gpu", "CostCentre": "cc", "Category": "OPEX", "Provider": "AWS", "Amount": 100,
          "Currency": "USD", "PlannedMTokens": None}
ASSET = {"AssetId": "SRV-1", "Description": "8x H100", "PlanLine": "onprem", "CostCentre": "cc-2", "GpuModel": "h100-sxm",
         "GpuCount": 8, "PurchaseDate": date(2025, 12, 20), "InServiceDate": date(2026, 1, 2), "Cost": 73_000,
         "ResidualValue": 1_000, "LifeMonths": 60, "Currency": "USD"}
RULE = (1, "gpu", "AWS", "", "", "", "", "", "")


def _budget(**cells: object):
    return lambda d: reconcile_argv(d, write_plan(d / "plan.xlsx", budget=[tuple({**BUDGET, **cells}.values())],
                                                  mapping=[RULE]), bill(d))


def _asset(**cells: object):
    budget = [tuple(BUDGET.values()), (MONTH, "onprem", "cc-2", "CAPEX", "On-prem", 1000, "USD", None)]
    return lambda d: reconcile_argv(d, write_plan(d / "plan.xlsx", budget=budget,
                                                  assets=[tuple({**ASSET, **cells}.values())], mapping=[RULE]), bill(d))


def _actual_of(expected: str):
    def verify(folder: Path, out: str, err: str) -> None:
        from openpyxl import load_workbook

        book = load_workbook(folder / "out" / f"budget-review-{MONTH}.xlsx", read_only=True)
        assert any(float(expected) in row for sheet in book for row in sheet.iter_rows(values_only=True) if row)
    return verify


def _sheet(folder: Path, change) -> Path:
    from openpyxl import load_workbook

    path = write_plan(folder / "plan.xlsx", budget=[tuple(BUDGET.values())], mapping=[RULE])
    book = load_workbook(path)
    change(book)
    book.save(path)
    return path


WORKBOOKS: dict[str, Case] = {
    "Amount with a European decimal": Case(_budget(Amount="1,5"), names=("plan.xlsx", "sheet Budget", "cell F3")),
    "Amount as a percentage": Case(_budget(Amount="12%"), names=("plan.xlsx", "cell F3", "12%")),
    "Amount with a currency sign": Case(_budget(Amount="$100"), names=("plan.xlsx", "cell F3")),
    "Amount in European thousands 1.200,50": Case(_budget(Amount="1.200,50"), names=("plan.xlsx", "cell F3")),
    "Amount TRUE": Case(_budget(Amount=True), names=("plan.xlsx", "cell F3")),
    "Amount as text 1,200 is 1200": Case(_budget(Amount="1,200"), exit=0, unchanged=False, verify=_actual_of("1200")),
    "Month in words": Case(_budget(Month="May 2026"), names=("plan.xlsx", "cell A3", "May 2026")),
    "Month as 05/2026": Case(_budget(Month="05/2026"), names=("plan.xlsx", "cell A3")),
    "Month as 2026-5": Case(_budget(Month="2026-5"), names=("plan.xlsx", "cell A3")),
    "Month typed as a date is its month": Case(_budget(Month=date(2026, 5, 1)), exit=0, unchanged=False,
                                              verify=_actual_of("100")),
    "Currency US$": Case(_budget(Currency="US$"), names=("plan.xlsx", "cell G3", "US$")),
    "Category misspelt": Case(_budget(Category="CAPX"), names=("plan.xlsx", "cell D3", "CAPX")),
    "PlannedMTokens as a percentage": Case(_budget(PlannedMTokens="12%"), names=("plan.xlsx", "cell H3")),
    "Asset PurchaseDate as text 20/12/2025": Case(_asset(PurchaseDate="20/12/2025"),
                                                  names=("plan.xlsx", "sheet Assets", "cell G3")),
    "Asset Cost as text 73,000 is 73000": Case(_asset(Cost="73,000"), exit=0, unchanged=False),
    "Asset LifeMonths in words": Case(_asset(LifeMonths="60 months"), names=("plan.xlsx", "cell K3")),
    "Asset GpuCount 8.5": Case(_asset(GpuCount=8.5), names=("plan.xlsx", "cell F3")),
    # were exit 2 naming no file, sheet or cell (the depreciation found them)
    "Asset LifeMonths 0": Case(_asset(LifeMonths=0), names=("plan.xlsx", "sheet Assets", "cell K3", "LifeMonths")),
    "Asset ResidualValue above its Cost": Case(_asset(ResidualValue=100_000),
                                               names=("plan.xlsx", "cell J3", "ResidualValue")),
    "Asset Cost negative": Case(_asset(Cost=-73_000), names=("plan.xlsx", "cell I3", "Cost")),
    # was exit 0: depreciated from before the asset was bought
    "Asset in service before it was bought": Case(_asset(InServiceDate=date(2025, 1, 1)),
                                                  names=("plan.xlsx", "cell H3", "InServiceDate", "2025-12-20")),
    "Budget sheet hidden is read": Case(lambda d: reconcile_argv(d, _sheet(d, lambda b: setattr(
        b["Budget"], "sheet_state", "hidden")), bill(d)), exit=0, unchanged=False, verify=_actual_of("100")),
}


@pytest.mark.parametrize("name", sorted(WORKBOOKS))
def test_plan_workbooks_typed_in_a_hurry(name, tmp_path, capsys, monkeypatch):
    check(WORKBOOKS[name], tmp_path, capsys, monkeypatch)
