"""The review's figures are the same as before the mapping moved into SQL (issue 15).

``data/figures-*.json`` hold what the reconciliation of main before issue 15 (mapping in Python, one
Unmapped row per charge group) gave for :data:`figures_plan.PLAN` over the bundled samples and over a
generated fleet bill (30,000 rows, 3,000 resources); the 200 largest unmapped groups are listed and the
rest is one row with their sums. The plan lines and totals are also derived here, independently, from
the bill rows with DuckDB sums, Python's ``fnmatch`` and Decimal.
"""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from fnmatch import fnmatchcase
from pathlib import Path

import duckdb
import pytest

from finops.reconcile.engine import reconcile_month
from finops.reconcile.fleet_bill import fleet_bill_sql
from finops.reconcile.sample_bills import sample_bill_paths

from .figures_plan import MONTH, PLAN

DATA = Path(__file__).parent / "data"
LIMIT = 200


def figures(rec) -> dict:
    """The review's figures as text (the form of ``data/figures-*.json``)."""
    def m(x):
        return None if x is None else str(x.amount)

    def d(x):
        return None if x is None else str(x)

    listed, rest = rec.unmapped[:LIMIT], rec.unmapped[LIMIT:]
    assert len(rest) <= 1
    return {
        "totals": {k: str(v) for k, v in rec.totals().items()},
        "cash": m(rec.cash), "capex_cash": m(rec.capex_cash),
        "lines": [[x.plan_line, x.category, m(x.planned), m(x.actual), m(x.actual_cash), m(x.variance),
                   d(x.variance_pct), x.flag, d(x.planned_mtokens), d(x.actual_mtokens), m(x.planned_unit_cost),
                   m(x.actual_unit_cost)] for x in rec.lines],
        "invoices": [[i.provider_name, i.invoice_id, m(i.billed_cost)] for i in rec.invoices],
        "providers": [[p.provider_name, m(p.effective_cost), m(p.billed_cost)] for p in rec.providers],
        "commitments": [m(rec.commitments.purchases), m(rec.commitments.used), m(rec.commitments.unused),
                        m(rec.commitments.savings), d(rec.commitments.utilization), d(rec.commitments.coverage)],
        "spot_share": d(rec.spot_share),
        "gpu_hours": [[g.gpu_model, str(g.hours), g.source] for g in rec.gpu_hours],
        "unmapped_top": [[u.provider_name, u.sub_account, u.service_name, u.instance_type, u.region_id, u.tags,
                          m(u.effective_cost), m(u.billed_cost)] for u in listed],
        "unmapped_rest": {"groups": int(rest[0].provider_name.split()[0].replace(",", "")) if rest else 0,
                          "effective_cost": m(rest[0].effective_cost) if rest else "0",
                          "billed_cost": m(rest[0].billed_cost) if rest else "0"},
        "bill_rows": rec.bill_rows, "data_through": d(rec.data_through),
    }


@pytest.fixture(scope="module")
def fleet_bill(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fleet") / "fleet-30k.parquet"
    duckdb.connect().execute(fleet_bill_sql(path, rows=30_000, resources=3_000))
    return path


def expected(name: str) -> dict:
    figures_before = json.loads((DATA / f"figures-{name}.json").read_text())
    rest = figures_before["unmapped_rest"]
    if rest["groups"] == 0:
        rest.update(effective_cost="0", billed_cost="0")
    return figures_before


def same_amounts(got: dict, want: dict) -> None:
    """Equal figures; amounts compared as numbers (``0E-10`` is ``0``)."""
    def norm(value):
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        if isinstance(value, str):
            try:
                return Decimal(value)
            except ArithmeticError:
                return value
        return value

    for key, value in want.items():
        assert norm(got[key]) == norm(value), key


def test_samples_give_the_figures_of_before():
    # the figures of before were flagged on the percent alone: no materiality amount
    same_amounts(figures(reconcile_month(PLAN, sample_bill_paths(), MONTH, materiality=Decimal(0))), expected("samples"))


def test_fleet_bill_gives_the_figures_of_before(fleet_bill):
    rec = reconcile_month(PLAN, [fleet_bill], MONTH, materiality=Decimal(0))
    want = expected("fleet")
    assert want["unmapped_rest"]["groups"] > 500  # the bound is exercised
    same_amounts(figures(rec), want)


def _plan_line(charge: dict) -> str:
    """Python's reading of the rules (fnmatch, case-folded, first match in Rule order), for the check."""
    def glob(pattern, value):
        return value is not None and fnmatchcase(value.lower(), pattern.lower())

    tags = {k: "" if v is None else str(v) for k, v in json.loads(charge["Tags"] or "{}").items()}
    for rule in sorted(PLAN.mapping, key=lambda r: r.rule):
        fields = ((rule.provider_name, charge["ProviderName"]), (rule.service_name, charge["ServiceName"]),
                  (rule.instance_type, charge["x_InstanceType"]), (rule.region_id, charge["RegionId"]))
        if any(p is not None and not glob(p, v) for p, v in fields):
            continue
        if rule.sub_account is not None and not (glob(rule.sub_account, charge["SubAccountId"])
                                                 or glob(rule.sub_account, charge["SubAccountName"])):
            continue
        if (rule.tag_key or rule.tag_value) and not any(
                (rule.tag_key is None or glob(rule.tag_key, k)) and (rule.tag_value is None or glob(rule.tag_value, v))
                for k, v in tags.items()):
            continue
        return rule.plan_line
    return "Unmapped"


def test_fleet_plan_lines_and_totals_derived_independently(fleet_bill):
    rec = reconcile_month(PLAN, [fleet_bill], MONTH)
    con = duckdb.connect()
    rows = con.execute(
        "SELECT ProviderName, SubAccountId, SubAccountName, ServiceName, x_InstanceType, RegionId, Tags, "
        f"CAST(SUM(EffectiveCost) AS VARCHAR), CAST(SUM(BilledCost) AS VARCHAR) FROM '{fleet_bill}' "
        "WHERE ChargePeriodStart >= TIMESTAMP '2026-05-01' AND ChargePeriodStart < TIMESTAMP '2026-06-01' "
        "GROUP BY ALL").fetchall()
    names = ("ProviderName", "SubAccountId", "SubAccountName", "ServiceName", "x_InstanceType", "RegionId", "Tags")
    effective: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        effective[_plan_line(dict(zip(names, row[:7], strict=True)))] += Decimal(row[7])
    cloud = {line.plan_line: line.actual.amount for line in rec.lines if line.category == "OPEX" and line.actual.amount}
    assert cloud == {k: v for k, v in effective.items() if v}
    assert rec.effective_cost.amount == sum(effective.values())
    assert rec.billed_cost.amount == sum(Decimal(r[8]) for r in rows)
    assert len(rec.unmapped) == LIMIT + 1 and rec.unmapped_effective_cost.amount == effective["Unmapped"]


def test_empty_text_in_parquet_reads_as_null_whichever_row_group(fleet_bill, tmp_path):
    """A Parquet column's empty texts read as NULL (``bills._select``), also when only some row groups hold
    them: the view skips that check only for a column whose statistics show no empty text in any row group."""
    con = duckdb.connect()
    with_empty, with_null = tmp_path / "empty.parquet", tmp_path / "null.parquet"
    blank = ("CASE WHEN i >= 20000 AND i % 13 = 0 THEN {v} ELSE {c} END AS {c}")
    for path, value in ((with_empty, "''"), (with_null, "NULL")):
        columns = ", ".join(blank.format(v=value, c=c) for c in ("SubAccountName", "CommitmentDiscountId", "RegionId"))
        con.execute(f"COPY (SELECT * EXCLUDE (i) REPLACE ({columns}) FROM (SELECT row_number() OVER () - 1 AS i, * "
                    f"FROM '{fleet_bill}')) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 10000)")
    minimums = con.execute(f"SELECT stats_min_value FROM parquet_metadata('{with_empty}') "
                           "WHERE path_in_schema = 'SubAccountName'").fetchall()
    assert ("",) in minimums and any(m != ("",) for m in minimums)  # empty text in some row groups only
    got = figures(reconcile_month(PLAN, [with_empty], MONTH))
    assert got == figures(reconcile_month(PLAN, [with_null], MONTH))
    assert got != figures(reconcile_month(PLAN, [fleet_bill], MONTH))  # the blanks changed the mapping
