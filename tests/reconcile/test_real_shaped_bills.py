"""A month of hourly bills (:mod:`month_bill`): every figure of the reconciliation against sums worked
here from the files themselves, with Python's csv and Decimal (FOCUS 1.2 definitions), and GPU-hours
cross-checked with a DuckDB query written in the test.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from decimal import Decimal
from fnmatch import fnmatchcase
from pathlib import Path

import duckdb
import pytest

from finops.cli import main
from finops.money import Money
from finops.reconcile import BudgetLine, MappingRule, Plan, reconcile_month

from .conftest import write_plan
from .month_bill import HOURS, MONTH, SP_USED_HOURS, write_month_bills

PLAN = Plan(budget=(BudgetLine(MONTH, "gpu-aws", "cc-ml", "OPEX", "AWS", Money.of(150_000, "USD")),
                    BudgetLine(MONTH, "gpu-gcp", "cc-ml", "OPEX", "Google Cloud", Money.of(60_000, "USD")),
                    BudgetLine(MONTH, "storage", "cc-ml", "OPEX", "AWS", Money.of(1_000, "USD"))),
            mapping=(MappingRule(1, "gpu-aws", provider_name="AWS", instance_type="p*.*xlarge"),
                     MappingRule(2, "gpu-gcp", instance_type="a3-*"),
                     MappingRule(3, "storage", service_name="AmazonS3")))

#: plan line -> (provider glob, instance glob, service glob), the same rules as PLAN, first match wins
RULES = [("gpu-aws", "AWS", "p*.*xlarge", "*"), ("gpu-gcp", "*", "a3-*", "*"),
         ("storage", "*", "*", "AmazonS3")]
#: instance type -> GPUs, from the providers' instance pages (p4d.24xlarge: 8x A100 40GB)
CATALOG_GPUS = {"p4d.24xlarge": ("a100-40gb", 8)}


@pytest.fixture(scope="module")
def bills(tmp_path_factory) -> list[Path]:
    return write_month_bills(tmp_path_factory.mktemp("month"))


def rows_of(paths: list[Path]) -> list[dict[str, str]]:
    rows = []
    for path in paths:
        with gzip.open(path, "rt", newline="") as handle:
            rows.extend(csv.DictReader(handle))
    return rows


def amount(row: dict[str, str], column: str) -> Decimal:
    return Decimal(row[column]) if row.get(column) else Decimal(0)


def instance_of(row: dict[str, str]) -> str:
    if row.get("x_InstanceType"):
        return row["x_InstanceType"]
    details = row.get("SkuPriceDetails") or "{}"
    return json.loads(details).get("InstanceType", "")


def plan_line_of(row: dict[str, str]) -> str:
    for line, provider, instance, service in RULES:
        if (fnmatchcase(row["ProviderName"], provider) and fnmatchcase(instance_of(row), instance)
                and fnmatchcase(row["ServiceName"], service)):
            return line
    return "Unmapped"


def expected_figures(rows: list[dict[str, str]]) -> dict[str, object]:
    """The FOCUS definitions, row by row."""
    sums: dict[str, Decimal] = defaultdict(Decimal)
    lines: dict[str, Decimal] = defaultdict(Decimal)
    invoices: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    gpu_hours: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    committed_services = set()
    for row in rows:
        billed, effective = amount(row, "BilledCost"), amount(row, "EffectiveCost")
        sums["billed"] += billed
        sums["effective"] += effective
        lines[plan_line_of(row)] += effective
        invoices[(row["ProviderName"], row["InvoiceId"])] += billed
        status = row.get("CommitmentDiscountStatus", "")
        if row["ChargeCategory"] == "Purchase" and row.get("CommitmentDiscountId"):
            sums["purchases"] += billed
        if status == "Used":
            sums["used"] += effective
            sums["savings"] += amount(row, "ListCost") - effective
            committed_services.add(row["ServiceName"])
        elif status == "Unused":
            sums["unused"] += effective
        if row["ChargeCategory"] == "Usage":
            sums["usage"] += effective
            if row["PricingCategory"] == "Dynamic":
                sums["spot"] += effective
            if row.get("x_GpuHours"):
                gpu_hours[(row["x_GpuModel"], "bill")] += Decimal(row["x_GpuHours"])
            elif instance_of(row) in CATALOG_GPUS and row["ConsumedUnit"] == "Hours":
                model, count = CATALOG_GPUS[instance_of(row)]
                gpu_hours[(model, "catalog")] += Decimal(row["ConsumedQuantity"]) * count
    eligible = sum((amount(r, "EffectiveCost") for r in rows if r["ChargeCategory"] == "Usage"
                    and r["ServiceName"] in committed_services
                    and r.get("CommitmentDiscountStatus") != "Unused"),
                   Decimal(0))
    return {"sums": sums, "lines": lines, "invoices": invoices, "gpu_hours": gpu_hours, "eligible": eligible,
            "rows": len(rows), "data_through": max(r["ChargePeriodEnd"] for r in rows)}


def close(ratio: Decimal | None, expected: Decimal) -> bool:
    """Ratios agree to 20 significant digits (the money context carries more than Decimal's default)."""
    return ratio is not None and abs(ratio - expected) < Decimal("1e-20")


@pytest.fixture(scope="module")
def expected(bills) -> dict[str, object]:
    return expected_figures(rows_of(bills))


@pytest.fixture(scope="module")
def reconciliation(bills):
    return reconcile_month(PLAN, bills, MONTH)


def test_the_fixture_is_shaped_like_a_real_bill(bills):
    """Hundreds of rows per charge group, several commitments, credits: the premise of the other tests."""
    rows = rows_of(bills)
    per_resource = defaultdict(int)
    for row in rows:
        per_resource[(row["ResourceId"], row.get("CommitmentDiscountStatus", ""))] += 1
    assert per_resource[("i-0p5od", "")] == HOURS and per_resource[("i-0p4d", "")] == HOURS
    assert per_resource[("i-0p5sp", "Used")] == SP_USED_HOURS
    assert len({r["CommitmentDiscountId"] for r in rows if r.get("CommitmentDiscountId")}) == 2
    assert sum(1 for r in rows if r["ChargeCategory"] == "Credit") == 4


def test_totals_and_invoices_are_the_sums_of_every_row(reconciliation, expected):
    sums = expected["sums"]
    assert reconciliation.billed_cost.amount == sums["billed"]
    assert reconciliation.effective_cost.amount == sums["effective"]
    assert {(i.provider_name, i.invoice_id): i.billed_cost.amount for i in reconciliation.invoices} == \
        dict(expected["invoices"])
    assert reconciliation.bill_rows == expected["rows"]


def test_plan_lines_carry_the_sum_of_their_rows(reconciliation, expected):
    actual = {line.plan_line: line.actual.amount for line in reconciliation.lines}
    assert actual == {k: v for k, v in expected["lines"].items()}
    assert reconciliation.unmapped_effective_cost.amount == expected["lines"]["Unmapped"]
    planned = {line.plan_line: line.planned.amount for line in reconciliation.lines}
    for line in reconciliation.lines:
        assert line.variance.amount == actual[line.plan_line] - planned[line.plan_line]


def test_commitments_over_a_month_of_hourly_rows(reconciliation, expected):
    sums, c = expected["sums"], reconciliation.commitments
    assert c.purchases.amount == sums["purchases"]
    assert c.used.amount == sums["used"]
    assert c.unused.amount == sums["unused"]
    assert c.savings.amount == sums["savings"]
    assert close(c.utilization, sums["used"] / (sums["used"] + sums["unused"]))
    assert close(c.coverage, sums["used"] / expected["eligible"])


def test_spot_share_of_usage(reconciliation, expected):
    sums = expected["sums"]
    assert close(reconciliation.spot_share, sums["spot"] / sums["usage"])


def test_gpu_hours_sum_every_hour(reconciliation, expected):
    got = {(g.gpu_model, g.source): g.hours for g in reconciliation.gpu_hours}
    assert got == dict(expected["gpu_hours"])


def test_gpu_hours_agree_with_a_duckdb_query_over_the_files(bills, reconciliation):
    files = ", ".join(f"'{p}'" for p in bills)
    (bill_hours,) = duckdb.connect().execute(
        f"SELECT SUM(CAST(x_GpuHours AS DECIMAL(38, 10))) FROM read_csv([{files}], union_by_name = true, "
        f"all_varchar = true) WHERE ChargeCategory = 'Usage' AND x_GpuModel = 'h100-sxm'").fetchone()
    (p4d_hours,) = duckdb.connect().execute(
        f"SELECT 8 * SUM(CAST(ConsumedQuantity AS DECIMAL(38, 10))) FROM read_csv([{files}], "
        f"union_by_name = true, all_varchar = true) WHERE SkuPriceDetails LIKE '%p4d.24xlarge%'").fetchone()
    got = {g.gpu_model: g.hours for g in reconciliation.gpu_hours}
    assert got == {"h100-sxm": bill_hours, "a100-40gb": p4d_hours}


def test_data_through_is_the_last_charge_end(reconciliation, expected):
    assert reconciliation.data_through.strftime("%Y-%m-%dT%H:%M:%SZ") == expected["data_through"]


def test_one_file_or_three_give_the_same_figures(tmp_path, bills, reconciliation):
    """The per-file scan and its regrouping fold to what one file of all the rows gives."""
    rows = rows_of(bills)
    one = tmp_path / "all.csv"
    with one.open("w", newline="") as handle:
        names = list(dict.fromkeys(k for r in rows for k in r))
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    single = reconcile_month(PLAN, [one], MONTH)
    assert single.billed_cost == reconciliation.billed_cost
    assert single.bill_rows == reconciliation.bill_rows
    assert single.commitments == reconciliation.commitments
    assert single.gpu_hours == reconciliation.gpu_hours
    assert single.lines == reconciliation.lines


def test_cli_json_totals(tmp_path, capsys, bills, expected):
    plan = write_plan(tmp_path / "plan.xlsx",
                      budget=[(MONTH, "gpu-aws", "cc-ml", "OPEX", "AWS", 150_000, "USD", None),
                              (MONTH, "gpu-gcp", "cc-ml", "OPEX", "Google Cloud", 60_000, "USD", None),
                              (MONTH, "storage", "cc-ml", "OPEX", "AWS", 1_000, "USD", None)],
                      mapping=[(1, "gpu-aws", "AWS", "", "", "p*.*xlarge", "", "", ""),
                               (2, "gpu-gcp", "", "", "", "a3-*", "", "", ""),
                               (3, "storage", "", "", "AmazonS3", "", "", "", "")])
    code = main(["reconcile", "--plan", str(plan), "--month", MONTH, "--bills", *map(str, bills),
                 "--out", str(tmp_path / "out"), "--json", "--quiet"])
    assert code == 0
    totals = json.loads(capsys.readouterr().out)
    sums = expected["sums"]
    cent = Decimal("0.01")
    assert Decimal(str(totals["actual_billed_cost"])) == sums["billed"].quantize(cent)
    assert Decimal(str(totals["actual_effective_cost"])) == sums["effective"].quantize(cent)
    assert Decimal(str(totals["unmapped_effective_cost"])) == expected["lines"]["Unmapped"].quantize(cent)
    assert Decimal(str(totals["variance"])) == (sums["effective"] - 211_000).quantize(cent)
