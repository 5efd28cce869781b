"""Totals are exact to the cent against an independent sum of the input (Python csv + Decimal)."""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from finops.money import Money, quantize
from finops.reconcile import BudgetLine, MappingRule, Plan, reconcile_month
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

PLAN = Plan(budget=(BudgetLine(SAMPLE_MONTH, "all", "cc", "OPEX", "", Money.of(1000, "USD")),),
            mapping=(MappingRule(1, "ec2", service_name="AmazonEC2"),))


def independent_sums(paths: list[Path]) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for path in paths:
        with gzip.open(path, "rt", newline="") as handle:
            for row in csv.DictReader(handle):
                sums["billed"] += Decimal(row["BilledCost"])
                sums["effective"] += Decimal(row["EffectiveCost"])
                sums[f"invoice:{row['InvoiceId']}"] += Decimal(row["BilledCost"])
                if row["ServiceName"] == "AmazonEC2":
                    sums["ec2"] += Decimal(row["EffectiveCost"])
                sums["rows"] += 1
    return sums


@pytest.mark.parametrize("which", [[0], [1], [0, 1]], ids=["aws", "gcp", "both"])
def test_sample_totals_match_an_independent_sum_to_the_cent(which):
    paths = [sample_bill_paths()[i] for i in which]
    expected = independent_sums(paths)
    rec = reconcile_month(PLAN, paths, SAMPLE_MONTH)
    assert rec.billed_cost.amount == expected["billed"]  # exact, not only to the cent
    assert rec.effective_cost.amount == expected["effective"]
    assert quantize(rec.billed_cost.amount) == quantize(expected["billed"])
    assert rec.bill_rows == expected["rows"]
    assert {f"invoice:{i.invoice_id}": i.billed_cost.amount for i in rec.invoices} == {
        k: v for k, v in expected.items() if k.startswith("invoice:")}
    ec2 = next((line.actual.amount for line in rec.lines if line.plan_line == "ec2"), Decimal(0))
    assert ec2 == expected["ec2"]
    assert rec.unmapped_effective_cost.amount == expected["effective"] - expected["ec2"]


def test_published_sample_figures():
    """The sums published with the samples (SOURCE.md): AWS 67941.200509, GCP 89655.530162 BilledCost."""
    aws, gcp = (reconcile_month(PLAN, [p], SAMPLE_MONTH) for p in sample_bill_paths())
    assert aws.billed_cost.amount == Decimal("67941.200509")
    assert gcp.billed_cost.amount == Decimal("89655.530162")


def test_parquet_plain_csv_and_gzip_give_the_same_answer(tmp_path):
    aws_gz = sample_bill_paths()[0]
    plain = tmp_path / "aws.csv"
    plain.write_bytes(gzip.decompress(aws_gz.read_bytes()))
    parquet = tmp_path / "aws.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * REPLACE (CAST(BilledCost AS DECIMAL(38,10)) AS BilledCost, "
                f"CAST(EffectiveCost AS DECIMAL(38,10)) AS EffectiveCost) FROM read_csv('{plain}')) "
                f"TO '{parquet}' (FORMAT parquet)")
    answers = {p.suffix: reconcile_month(PLAN, [p], SAMPLE_MONTH) for p in (aws_gz, plain, parquet)}
    assert len({(r.billed_cost, r.effective_cost, r.unmapped_effective_cost, r.invoices) for r in answers.values()}) == 1


def test_tags_stored_as_a_parquet_map_match_tag_rules(tmp_path):
    """Some Parquet exports keep Tags as MAP(VARCHAR, VARCHAR); rules must see the same tags as in JSON text."""
    plain = tmp_path / "aws.csv"
    plain.write_bytes(gzip.decompress(sample_bill_paths()[0].read_bytes()))
    as_map = tmp_path / "aws-map.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * REPLACE (CAST(json_transform(Tags, '{{\"Owner\": \"VARCHAR\"}}') AS STRUCT(Owner VARCHAR)) "
        f"AS Tags) FROM read_csv('{plain}', all_varchar=true)) TO '{tmp_path / 'struct.parquet'}' (FORMAT parquet)")
    duckdb.connect().execute(
        f"COPY (SELECT * REPLACE (CASE WHEN Tags IS NULL THEN NULL ELSE MAP {{'Owner': json_extract_string(Tags, "
        f"'$.Owner')}} END AS Tags) FROM read_csv('{plain}', all_varchar=true)) TO '{as_map}' (FORMAT parquet)")
    plan = Plan(budget=PLAN.budget, mapping=(MappingRule(1, "payments", tag_key="owner", tag_value="team-payments"),))
    expected = Decimal(0)
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        for row in csv.DictReader(handle):
            if '"Owner":"team-payments"' in row["Tags"]:
                expected += Decimal(row["EffectiveCost"])
    for path in (plain, as_map, tmp_path / "struct.parquet"):
        rec = reconcile_month(plan, [path], SAMPLE_MONTH)
        assert next(line.actual.amount for line in rec.lines if line.plan_line == "payments") == expected, path.name
