"""The hostile desk, money in: every amount that enters is checked, kept whole and booked once, or refused.

Each table row is an input -> the exit code, the places the one message names, the inputs unchanged,
and, when the input is sound, the money worked out by hand here (never by the code under test).

Hand figures:

* GCP standard export fixture (``tests/gcp/fixtures/billing_export_standard.csv``), invoice month 202605
  (its first eight rows): costs 78.372404552 + 6.70176 + 5.273424 + 54.39046856 + 0.224016 + 3.034656 + 4.8
  + 15.1 = 167.896729112; credits -78.372404552 (CUD) - 0.606931 (SUD) - 1.0 (free trial) = -79.979335552;
  BilledCost of the month 87.917393560.
* GCP FOCUS export fixture (``focus_export_sample.csv``), all May: 782.951280 + 0 + 0 + 268.835688 + 109.327974
  + 56.470509 + 20.950875 + 88.489999903 + 0.448032 = 1,327.474357903.
* FOCUS bills: rows of 10.00 USD, every AWS charge mapped to ``gpu`` (budget 100): May holds the rows whose
  billing period starts on May 1st in their own zone.
* Negative budget: a ``credits`` line planned at -1,000 USD that received -500: variance +500, 50 % of the
  plan's size, over plan.
* Scenario weights: 10 units for 10 hours, on-demand 10, reserved 6 (break-even share 0.6); low x 0.7 = 7
  units, high x 1.3 = 13. At 0.25 / 0.5 / 0.25, units 1-7 run in every outcome and 8-10 in 75 % (> 60 %): reserve
  10, expected cost 10 x 6 x 10 h + 0.25 x 3 x 10 x 10 h = 675.00. Scaled to fit, 0.5 / 0.3 / 0.3 would reserve
  7 and cost 665.45 (units 8-10 in 6 / 11 of the outcomes): the money of a plan nobody chose.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from finops.cli import main
from tests.reconcile.conftest import write_bill, write_plan

from .desk import AWS_CUR_SAMPLE, AWS_FOCUS_SAMPLE, aws_export, gcp_jsonl_pull
from .desk import Case as DeskCase
from .desk import check as desk_check

ROOT = Path(__file__).resolve().parents[2]
GCP_EXPORT = ROOT / "tests" / "gcp" / "fixtures" / "billing_export_standard.csv"
GCP_FOCUS_EXPORT = ROOT / "tests" / "gcp" / "fixtures" / "focus_export_sample.csv"
OFFER_CSV = ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.csv"
OFFER_JSON = ROOT / "tests" / "aws" / "data" / "offer-AmazonEC2-excerpt.json"
MAY_BILLED = Decimal("87.917393560")
MAY_FOCUS_BILLED = Decimal("1327.474357903")


@dataclass(frozen=True)
class Case:
    """``build(folder)`` writes the inputs and returns the argv; ``money(folder, stdout)`` checks the figures."""

    build: Callable[[Path], Sequence[object]]
    exit: int = 2
    names: tuple[str, ...] = ()
    money: Callable[[Path, str], None] | None = None


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*") if p.is_file()}


def _check(case: Case, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(a) for a in case.build(folder)]
    before = _digests(folder)
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == case.exit, err
    assert "Traceback" not in out + err
    after = _digests(folder)
    assert {p: d for p, d in after.items() if p in before} == before, "an input changed"
    if case.exit == 2:
        assert err.startswith("error:") and after == before, err
        for text in case.names:
            assert text in err, f"{text!r} not named in {err}"
    if case.money is not None:
        case.money(folder, out)


# ---- scenario weights: probabilities, never scaled to fit --------------------------------------------------

def _scenarios(weights: str) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        (folder / "d.csv").write_text("hour,units\n" + "".join(f"{hour},10\n" for hour in range(10)))
        (folder / "o.csv").write_text("name,kind,hourly_cost\nod,on_demand,10\nri,reserved,6\n")
        return ["mix", "scenarios", "--demand", folder / "d.csv", "--options", folder / "o.csv", "--weights", weights,
                "--json"]
    return build


def _reserves_ten_for_675(_: Path, out: str) -> None:
    expected = json.loads(out)["expected"]
    assert expected["units"] == {"ri": 10} and Decimal(str(expected["total_cost"])) == Decimal("675.00")


WEIGHTS = {
    "fractions summing to 1": Case(_scenarios("0.25,0.5,0.25"), exit=0, money=_reserves_ten_for_675),
    "percentages summing to 100": Case(_scenarios("25,50,25"), exit=0, money=_reserves_ten_for_675),
    "percentages with their signs": Case(_scenarios("25%, 50%, 25%"), exit=0, money=_reserves_ten_for_675),
    "fractions summing to 1.1": Case(_scenarios("0.5,0.3,0.3"), names=("--weights", "0.5, 0.3, 0.3", "sum to 1.1")),
    "fractions summing to 0.999": Case(_scenarios("0.333,0.333,0.333"), names=("--weights", "sum to 0.999")),
    "percentages summing to 110": Case(_scenarios("50,30,30"), names=("--weights", "sum to 110")),
    "percentages with their signs summing to 1": Case(_scenarios("0.25%,0.5%,0.25%"),
                                                       names=("--weights", "sum to 1.00, not 100")),
    "some with a percent sign": Case(_scenarios("25%,50,25"), names=("--weights", "every weight is a percentage")),
    "a negative weight": Case(_scenarios("-0.25,1,0.25"), names=("--weights", "0 or more", "'-0.25'")),
    "a NaN weight": Case(_scenarios("nan,0.5,0.5"), names=("--weights", "0 or more", "'nan'")),
    "an infinite weight": Case(_scenarios("inf,0,0"), names=("--weights", "0 or more", "'inf'")),
    "all zero": Case(_scenarios("0,0,0"), names=("--weights", "sum to 0")),
    "an astronomical weight": Case(_scenarios("1e400,0,0"), names=("--weights", "sum to 1e+400")),
}


@pytest.mark.parametrize("name", WEIGHTS)
def test_scenario_weights(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(WEIGHTS[name], tmp_path, capsys)


# ---- prices: positive where a price is meant ---------------------------------------------------------------

def _offer(source: Path, old: str, new: str, name: str) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        text = source.read_text()
        assert old in text
        (folder / name).write_text(text.replace(old, new, 1))
        return ["prices", "pull", "--provider", "aws", "--offer-file", folder / name, "--out", folder / "book.parquet"]
    return build


PRICES = {
    "negative on-demand price, CSV": Case(_offer(OFFER_CSV, '"55.0400000000"', '"-55.0400000000"', "index.csv"),
                                          names=("index.csv", "row 7", "PricePerUnit", "0 or more")),
    "negative upfront fee, CSV": Case(_offer(OFFER_CSV, '"160676.0000000000"', '"-160676"', "index.csv"),
                                      names=("index.csv", "row 10", "PricePerUnit")),
    "negative on-demand price, JSON": Case(_offer(OFFER_JSON, '"55.0400000000"', '"-55.04"', "index.json"),
                                           names=("index.json", "terms.OnDemand.EXAMPLESKUP5USE1", "pricePerUnit")),
    "price as words, CSV": Case(_offer(OFFER_CSV, '"55.0400000000"', '"free"', "index.csv"),
                                names=("index.csv", "row 7", "is not a number")),
}


@pytest.mark.parametrize("name", PRICES)
def test_prices(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(PRICES[name], tmp_path, capsys)


@pytest.mark.parametrize("hourly, upfront, column", [("-3.06", "0", "hourly_cost"), ("0", "0", "hourly_cost"),
                                                     ("3.06", "-100", "upfront_cost")])
def test_a_price_book_row_without_a_price_is_refused_with_its_row(tmp_path: Path, hourly: str, upfront: str,
                                                                  column: str) -> None:
    from finops.errors import InputError
    from finops.price_book import COLUMNS, PriceBook

    row = {"provider": "aws", "region": "us-east-1", "instance_type": "g6e.xlarge", "gpu_model": "l40s",
           "gpu_count": 1, "pricing_model": "on_demand", "payment_option": "", "hourly_cost": hourly,
           "upfront_cost": upfront, "currency": "USD", "effective_date": "2026-07-30", "source": "hand"}
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerow(row)
    (tmp_path / "book.csv").write_text(buffer.getvalue())
    with pytest.raises(InputError) as caught:
        PriceBook.read_csv(tmp_path / "book.csv")
    assert (caught.value.where.file, caught.value.where.row, caught.value.where.column) == ("book.csv", 2, column)


def test_a_zero_hourly_fee_with_an_upfront_payment_is_a_price() -> None:
    """All Upfront: the hourly dimension is 0 and the fee pays it all; 315,000 / 8,760 h = 35.958904... USD/h."""
    from connectors.aws.offer_file import read_offer_file
    from connectors.aws.pricing import price_rows

    offer = read_offer_file(OFFER_CSV)
    rows = [r for doc in offer.documents for r in price_rows(doc, gpu_of=lambda t: ("h100-sxm", 8), as_of="x",
                                                             source="x") if r.payment_option == "all_upfront"]
    assert rows and rows[0].hourly_cost.quantize(Decimal("1E-9")) == Decimal("35.958904110")


# ---- GCP export rows: cost, invoice month in both forms, credits in both shapes -------------------------------

def _export(change: Callable[[list[dict[str, str]]], None], source: Path = GCP_EXPORT,
            ) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        with source.open(newline="") as handle:
            reader = csv.DictReader(handle)
            rows, names = list(reader), list(reader.fieldnames or [])
        change(rows)
        with (folder / "export.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=names)
            writer.writeheader()
            writer.writerows(rows)
        return ["bills", "pull", "--provider", "gcp", "--source", folder / "export.csv", "--month", "2026-05",
                "--out", folder / "focus.parquet"]
    return build


def _credit_alone(index: int) -> Callable[[list[dict[str, object]]], None]:
    def change(rows: list[dict[str, object]]) -> None:
        (credit,) = rows[index]["credits"]  # type: ignore[misc]
        rows[index]["credits"] = credit
    return change


def _set(index: int, column: str, value: str) -> Callable[[list[dict[str, str]]], None]:
    def change(rows: list[dict[str, str]]) -> None:
        rows[index][column] = value
    return change


def _billed(expected: Decimal) -> Callable[[Path, str], None]:
    def check(folder: Path, out: str) -> None:
        import duckdb

        with duckdb.connect() as con:
            (total,) = con.execute("SELECT SUM(BilledCost) FROM read_parquet(?)", [str(folder / "focus.parquet")]
                                   ).fetchone()
        assert Decimal(total) == expected
    return check


_SUD_ALONE = ('{"name": "Sustained usage discount", "amount": -0.606931, "full_name": null, "id": "", '
              '"type": "SUSTAINED_USAGE_DISCOUNT"}')

GCP = {
    "as exported": Case(_export(lambda rows: None), exit=0, money=_billed(MAY_BILLED)),
    "invoice month written 2026-05": Case(_export(_set(2, "invoice.month", "2026-05")), exit=0,
                                          money=_billed(MAY_BILLED)),
    "every invoice month written 2026-05": Case(
        _export(lambda rows: [row.update({"invoice.month": row["invoice.month"][:4] + "-" + row["invoice.month"][4:]})
                              for row in rows]), exit=0, money=_billed(MAY_BILLED)),
    # the SUD row keeps its SUD credit, given alone as an object (the free-trial credit of -1.0 left out)
    "one credit as an object": Case(_export(_set(5, "credits", _SUD_ALONE)), exit=0,
                                    money=_billed(MAY_BILLED + Decimal("1.0"))),
    # the detailed export holds the same May money; its CUD credit given alone, the other rows' as lists
    "JSONL: credits a list on some rows, a record on one": Case(gcp_jsonl_pull(_credit_alone(0)), exit=0,
                                                               money=_billed(MAY_BILLED)),
    "JSONL as exported": Case(gcp_jsonl_pull(lambda rows: None), exit=0, money=_billed(MAY_BILLED)),
    "a row without its cost": Case(_export(_set(3, "cost", "")), names=("export.csv", "row 5", "column cost")),
    "an invoice month in words": Case(_export(_set(1, "invoice.month", "May 2026")),
                                      names=("export.csv", "row 3", "invoice.month")),
    "a credit without its amount": Case(_export(_set(5, "credits", '[{"name": "Sustained usage discount"}]')),
                                        names=("export.csv", "row 7", "credits.amount")),
    "credits neither a list nor a record": Case(_export(_set(5, "credits", "-0.606931")),
                                                names=("export.csv", "row 7", "credits")),
    "FOCUS export as exported": Case(_export(lambda rows: None, GCP_FOCUS_EXPORT), exit=0,
                                     money=_billed(MAY_FOCUS_BILLED)),
    # May's period written at +02:00, or as that instant in UTC (30 April 22:00), is May's
    "FOCUS export periods at +02:00": Case(
        _export(lambda rows: [row.update(BillingPeriodStart="2026-05-01T00:00:00+02:00") for row in rows],
                GCP_FOCUS_EXPORT), exit=0, money=_billed(MAY_FOCUS_BILLED)),
    "FOCUS export period as the UTC instant of +02:00": Case(
        _export(_set(0, "BillingPeriodStart", "2026-04-30T22:00:00Z"), GCP_FOCUS_EXPORT), exit=0,
        money=_billed(MAY_FOCUS_BILLED)),
    "a FOCUS export row without its BillingPeriodStart": Case(_export(_set(2, "BillingPeriodStart", ""), GCP_FOCUS_EXPORT),
                                                              names=("export.csv", "row 4", "BillingPeriodStart")),
    "a row without its currency (was exit 0: a charge in no currency)": Case(
        _export(_set(3, "currency", "")), names=("export.csv", "row 5", "column currency", "ISO 4217")),
    "a row in US$": Case(_export(_set(2, "currency", "US$")), names=("export.csv", "row 4", "column currency")),
    "JSONL: a row without its currency": Case(gcp_jsonl_pull(lambda rows: rows[1].update(currency=None)),
                                              names=("export.jsonl", "row 2", "column currency")),
    "a FOCUS export row without its BillingCurrency (was exit 0)": Case(
        _export(_set(1, "BillingCurrency", ""), GCP_FOCUS_EXPORT), names=("export.csv", "row 3", "BillingCurrency")),
    "a FOCUS export row without its BilledCost": Case(_export(_set(1, "BilledCost", ""), GCP_FOCUS_EXPORT),
                                                      names=("export.csv", "row 3", "column BilledCost")),
    "a FOCUS export row without its EffectiveCost": Case(_export(_set(0, "EffectiveCost", ""), GCP_FOCUS_EXPORT),
                                                         names=("export.csv", "row 2", "column EffectiveCost")),
}


@pytest.mark.parametrize("name", GCP)
def test_gcp_export_rows(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(GCP[name], tmp_path, capsys)


def test_credits_as_a_list_or_one_record_map_alike() -> None:
    from connectors.gcp.normalize import export_row, nest

    flat = {"cost": "3.034656", "currency": "USD", "cost_type": "regular", "invoice.month": "202605",
            "sku.description": "N2 Instance Core running in Americas"}
    as_list = export_row(nest({**flat, "credits": f"[{_SUD_ALONE}]"}))
    as_record = export_row(nest({**flat, "credits": _SUD_ALONE}))
    assert [(r["ChargeCategory"], r["BilledCost"]) for r in as_record] == \
           [(r["ChargeCategory"], r["BilledCost"]) for r in as_list] == \
           [("Usage", Decimal("3.034656")), ("Credit", Decimal("-0.606931"))]


# ---- billing periods in the provider's zone, usage once, flags by the budget's sign -------------------------

def _reconcile(rows: Sequence[dict[str, str]], *extra: object, usage: Sequence[Sequence[object]] | None = None,
               budget: object = 100, usage_csv: str | None = None) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        write_plan(folder / "plan.xlsx", budget=[("2026-05", "gpu", "cc", "OPEX", "AWS", budget, "USD", None)],
                   mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")], usage=usage)
        write_bill(folder / "bill.csv", [{"InvoiceId": "I1", **row} for row in rows])
        argv: list[object] = ["reconcile", "--plan", folder / "plan.xlsx", "--month", "2026-05",
                              "--bills", folder / "bill.csv", "--out", folder / "out", "--json", *extra]
        if usage_csv is not None:
            (folder / "usage.csv").write_text(usage_csv)
            argv += ["--usage", folder / "usage.csv"]
        return argv
    return build


def _period(start: str, end: str) -> dict[str, str]:
    return {"BillingPeriodStart": start, "BillingPeriodEnd": end}


def _totals(**expected: str) -> Callable[[Path, str], None]:
    def check(folder: Path, out: str) -> None:
        totals = json.loads(out, parse_float=Decimal)
        assert {k: totals[k] for k in expected} == {k: Decimal(v) for k, v in expected.items()}
    return check


MAY_UTC2 = _period("2026-05-01T00:00:00+02:00", "2026-06-01T00:00:00+02:00")
APRIL_UTC2 = _period("2026-04-01T00:00:00+02:00", "2026-05-01T00:00:00+02:00")
JUNE_UTC14 = _period("2026-06-01T00:00:00+14:00", "2026-07-01T00:00:00+14:00")
MAY_PACIFIC = _period("2026-05-01T00:00:00-07:00", "2026-06-01T00:00:00-07:00")
MAY_PACIFIC_IN_UTC = _period("2026-05-01T07:00:00Z", "2026-06-01T07:00:00Z")
MAY_UTC12_WEST = _period("2026-05-01T00:00:00-12:00", "2026-06-01T00:00:00-12:00")
APRIL_UTC12_WEST = _period("2026-04-01T00:00:00-12:00", "2026-05-01T00:00:00-12:00")
USAGE_HEADER = "Month,PlanLine,ActualMTokens\n"

BOOKING = {
    "May billed at +02:00": Case(_reconcile([MAY_UTC2] * 3 + [APRIL_UTC2]), exit=0, money=_totals(opex="30.00")),
    "May billed in Pacific time": Case(_reconcile([MAY_PACIFIC, MAY_PACIFIC_IN_UTC, {}]), exit=0,
                                       money=_totals(opex="30.00")),
    "May and its neighbours at the zones' ends": Case(
        _reconcile([MAY_UTC12_WEST, APRIL_UTC12_WEST, JUNE_UTC14, {}]), exit=0, money=_totals(opex="20.00")),
    "usage file repeats the workbook": Case(
        _reconcile([{}], usage=[("2026-05", "gpu", 4)], usage_csv=USAGE_HEADER + "2026-05,gpu,4\n"),
        names=("usage.csv", "row 2", "PlanLine", "given twice", "sheet Usage", "row 3")),
    "usage file repeats itself": Case(
        _reconcile([{}], usage_csv=USAGE_HEADER + "2026-05,gpu,4\n2026-05,gpu,4\n"),
        names=("usage.csv", "row 3", "rows 2 and 3")),
    "usage table repeats itself": Case(_reconcile([{}], usage=[("2026-05", "gpu", 4), ("2026-05", "gpu", 4)]),
                                       names=("plan.xlsx", "sheet Usage", "row 4", "rows 3 and 4")),
    # its tokens fed no line and the line's cost per million tokens stayed blank, exit 0
    "usage table names a line the plan does not have": Case(
        _reconcile([{}], usage=[("2026-05", "gpus", 4)]), names=("plan.xlsx", "sheet Usage", "row 3", "'gpus'")),
    "usage file adds another month": Case(
        _reconcile([{}], usage=[("2026-04", "gpu", 4)], usage_csv=USAGE_HEADER + "2026-05,gpu,4\n"), exit=0,
        money=_totals(opex="10.00")),
    # --fail-on-variance exits 1 for a line over plan: a credit line planned at -1,000 that got -500 is over
    "negative budget overspent": Case(
        _reconcile([{"ChargeCategory": "Credit", "BilledCost": "-500", "EffectiveCost": "-500",
                     "ListCost": "0", "ContractedCost": "-500"}], "--fail-on-variance", "10", budget=-1000),
        exit=1),
    "negative budget on plan": Case(
        _reconcile([{"ChargeCategory": "Credit", "BilledCost": "-1000", "EffectiveCost": "-1000",
                     "ListCost": "0", "ContractedCost": "-1000"}], "--fail-on-variance", "10", budget=-1000),
        exit=0, money=_totals(variance="0.00")),
}


@pytest.mark.parametrize("name", BOOKING)
def test_booking(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(BOOKING[name], tmp_path, capsys)


@pytest.mark.parametrize("planned, actual, flag, share", [
    (-1000, -500, "over", Decimal("0.5")),      # credits short by 500: 500 / |-1000| over
    (-1000, -1500, "under", Decimal("-0.5")),   # 500 more credit than planned
    (1000, 1500, "over", Decimal("0.5")),
    (1000, 500, "under", Decimal("-0.5")),
])
def test_flags_follow_the_sign_of_the_budget(tmp_path: Path, planned: int, actual: int, flag: str,
                                             share: Decimal) -> None:
    from finops.money import Money
    from finops.reconcile import reconcile_month
    from finops.reconcile.plan import BudgetLine, MappingRule, Plan

    plan = Plan(budget=(BudgetLine("2026-05", "credits", "cc", "OPEX", "AWS", Money.of(planned, "USD")),),
                mapping=(MappingRule(1, "credits", provider_name="AWS"),))
    bill = write_bill(tmp_path / "bill.csv", [{"BilledCost": str(actual), "EffectiveCost": str(actual),
                                               "ContractedCost": str(actual)}])
    line = reconcile_month(plan, [bill], "2026-05").lines[0]
    assert (line.flag, line.variance_pct, line.variance.amount) == (flag, share, Decimal(actual - planned))


# ---- plan next: each line on its own accelerator's instance -------------------------------------------------

SERVING_HEADER = "PlanLine,Engine,Model,Gpu,Precision,TP,LabelKey,LabelValue,TtftTargetMs,ItlTargetMs,Spare,Provider," \
                 "InstanceType,Region\n"
METRICS = ROOT / "finops" / "data" / "metrics" / "2026-05-aws-inference-prod.json.gz"


def _idle_metrics(folder: Path) -> Path:
    """The bundled month with every counter and histogram flat: the line's series are there, serving nothing."""
    import gzip

    answer = json.loads(gzip.decompress(METRICS.read_bytes()))
    for series in answer["data"]["result"]:
        if series["metric"]["__name__"].endswith(("_total", "_bucket")):
            series["values"] = [[t, series["values"][0][1]] for t, _ in series["values"]]
    path = folder / "idle.json"
    path.write_text(json.dumps(answer))
    return path


def _plan_next(line: str, metrics: Callable[[Path], Path] = lambda folder: METRICS) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        from templates.builder import DEFAULT_TEMPLATE

        (folder / "serving.csv").write_text(SERVING_HEADER + line + "\n")
        (folder / "plan.xlsx").write_bytes(DEFAULT_TEMPLATE.read_bytes())
        return ["plan", "next", "--plan", folder / "plan.xlsx", "--history", folder / "history", "--month", "2026-05",
                "--serving", folder / "serving.csv", "--metrics", metrics(folder), "--out", folder / "next.xlsx",
                "--quiet"]
    return build


_L40S = "aws-inference-prod,vllm,llama-3.1-8b,l40s,fp8,{tp},namespace,inference-aws-prod,{ttft},50,0.2,aws,{it},us-east-1"

PLAN_NEXT = {
    "an L40S line on an H100 instance": Case(_plan_next(_L40S.format(ttft=500, tp=1, it="p5.48xlarge")),
                                             names=("serving.csv", "row 2", "InstanceType", "h100-sxm", "g6e.xlarge")),
    "TP 3 on a 32-head model": Case(_plan_next(_L40S.format(ttft=500, tp=3, it="g6e.xlarge")),
                                    names=("serving.csv", "row 2", "column TP", "32 attention heads", "1, 2, 4, 8")),
    "TP 4 on a one-GPU instance": Case(_plan_next(_L40S.format(ttft=500, tp=4, it="g6e.xlarge")),
                                       names=("serving.csv", "row 2", "InstanceType", "g6e.12xlarge")),
    # a line no fleet serves is refused, never written with a blank fleet and last month's amount (exit 0)
    "targets no fleet meets": Case(_plan_next(_L40S.format(ttft=1, tp=1, it="g6e.xlarge")),
                                   names=("serving.csv", "row 2", "'aws-inference-prod'", "no fleet for 2026-06",
                                          "TTFT 1 ms", "TtftTargetMs")),
    "a line that served no request": Case(_plan_next(_L40S.format(ttft=500, tp=1, it="g6e.xlarge"), _idle_metrics),
                                          names=("serving.csv", "row 2", "'aws-inference-prod'", "no request in 2026-05",
                                                 "take it out of the serving lines")),
    "a cloud line without an instance type": Case(_plan_next(_L40S.format(ttft=500, tp=1, it="")),
                                                  names=("serving.csv", "row 2", "InstanceType", "g6e.xlarge")),
}


@pytest.mark.parametrize("name", PLAN_NEXT)
def test_plan_next_lines(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(PLAN_NEXT[name], tmp_path, capsys)


def test_a_next_plan_carries_every_serving_line_with_its_fleet_and_cost(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The counterpart of the refusals above: a line the next plan carries has a fleet, and its Budget row of the
    next month is the Fleet's monthly cost (nothing blank that a total would read as 0)."""
    import openpyxl

    def read(folder: Path, out: str) -> None:
        book = openpyxl.load_workbook(folder / "next.xlsx", data_only=True)
        fleet = [dict(zip([c.value for c in book["Fleet"][3]], [c.value for c in row])) for row in book["Fleet"].iter_rows(min_row=4)]
        budget = {(r[0].value, r[1].value): r[5].value for r in book["Budget"].iter_rows(min_row=4)}
        assert [f["PlanLine"] for f in fleet] == ["aws-inference-prod"]
        line = fleet[0]
        assert line["GpusNext"] >= 1 and line["MonthlyCost"] > 0, line
        assert budget[("2026-06", "aws-inference-prod")] == pytest.approx(line["MonthlyCost"] + (line["SunkAmortization"] or 0))

    _check(Case(_plan_next(_L40S.format(ttft=500, tp=1, it="g6e.xlarge")), exit=0, money=read), tmp_path, capsys)


# ---- AWS FOCUS Data Exports: every row keeps its amounts and its currency ----------------------------------------

def _aws_pull(change: Callable[[list[dict[str, str]]], None], sample: Path = AWS_FOCUS_SAMPLE,
              ) -> Callable[[Path], Sequence[object]]:
    def build(folder: Path) -> Sequence[object]:
        return ["bills", "pull", "--provider", "aws", "--source", aws_export(folder, change, sample), "--month",
                "2026-05", "--out", folder / "may.parquet"]
    return build


def _row(index: int, **values: str) -> Callable[[list[dict[str, str]]], None]:
    return lambda rows: rows[index].update(values)


#: Row numbers as the export's line items count them (the first is 1), as the AWS readers name them.
AWS_EXPORT = {
    "an export row without its BillingCurrency (was exit 0: a charge in no currency)": DeskCase(
        _aws_pull(_row(3, BillingCurrency="")), names=("gpu-focus-00001.parquet", "row 4", "column BillingCurrency")),
    "an export row billed in US$ (was exit 0)": DeskCase(
        _aws_pull(_row(0, BillingCurrency="US$")), names=("row 1", "column BillingCurrency", "ISO 4217")),
    "an export row without its BilledCost (was exit 0: written empty)": DeskCase(
        _aws_pull(_row(5, BilledCost="")), names=("row 6", "column BilledCost", "is empty")),
    "an export row without its EffectiveCost (was exit 0)": DeskCase(
        _aws_pull(_row(7, EffectiveCost="")), names=("row 8", "column EffectiveCost")),
    "a CUR line item without its currency code (was exit 0: a charge in no currency)": DeskCase(
        _aws_pull(_row(3, line_item_currency_code=""), AWS_CUR_SAMPLE),
        names=("row 4", "column line_item_currency_code", "ISO 4217")),
    "a CUR line item without its unblended cost (was exit 0: read as 0, 3,720.00 USD gone)": DeskCase(
        _aws_pull(_row(3, line_item_unblended_cost=""), AWS_CUR_SAMPLE),
        names=("row 4", "column line_item_unblended_cost", "is empty")),
    "an export row's currency in lower case is that currency": DeskCase(
        _aws_pull(_row(2, BillingCurrency="usd")), exit=0, may_write=("may.parquet",),
        verify=lambda d, out, err: _one_currency(d / "may.parquet")),
}


def _one_currency(path: Path) -> None:
    import pyarrow.parquet as pq

    assert set(pq.read_table(path, columns=["BillingCurrency"]).column(0).to_pylist()) == {"USD"}


@pytest.mark.parametrize("name", sorted(AWS_EXPORT))
def test_aws_export_rows(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    desk_check(AWS_EXPORT[name], tmp_path, capsys, monkeypatch)
