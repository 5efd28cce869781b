"""Unmapped charges, bounded: the review lists the 200 largest charge groups and one row for the rest;
``--unmapped-csv`` holds all of them."""

from __future__ import annotations

import csv
import json
from decimal import Decimal

import duckdb

from finops.cli import main
from finops.reconcile.engine import reconcile_month
from finops.reconcile.fleet_bill import fleet_bill_sql
from finops.reconcile.sample_bills import sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE
from templates.plan_reader import read_plan

from .figures_plan import MONTH, PLAN


def test_the_csv_holds_every_unmapped_group_and_the_review_the_largest(tmp_path, capsys):
    out, listing = tmp_path / "out", tmp_path / "unmapped.csv"
    code = main(["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", MONTH, "--out", str(out), "--json",
                 "--unmapped-csv", str(listing), "--bills", *map(str, sample_bill_paths())])
    assert code == 0
    totals = json.loads(capsys.readouterr().out, parse_float=Decimal)
    with listing.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    effective = [Decimal(r["EffectiveCost"]) for r in rows]
    assert len(rows) > 200 and effective == sorted(effective, reverse=True)
    assert sum(effective).quantize(Decimal("0.01")) == totals["unmapped_effective_cost"]
    rec = reconcile_month(read_plan(DEFAULT_TEMPLATE), sample_bill_paths(), MONTH)
    listed, rest = rec.unmapped[:200], rec.unmapped[200]
    assert len(rec.unmapped) == 201
    key = ("ProviderName", "SubAccount", "ServiceName", "InstanceType", "RegionId", "Tags")
    by_key = {tuple(r[k] for k in key): Decimal(r["EffectiveCost"]) for r in rows}
    assert all(by_key[(u.provider_name, u.sub_account, u.service_name, u.instance_type, u.region_id, u.tags)]
               == u.effective_cost.amount for u in listed)
    assert rest.provider_name.startswith(f"{len(rows) - 200:,} more unmapped charge groups")
    assert rest.effective_cost.amount == sum(effective[200:])
    assert rest.billed_cost.amount == sum(Decimal(r["BilledCost"]) for r in rows[200:])
    assert 0 < sum(int(r["Charges"]) for r in rows) < rec.bill_rows


def test_a_bill_with_many_unmapped_groups_keeps_the_review_at_201_rows(tmp_path):
    path = tmp_path / "fleet.parquet"
    duckdb.connect().execute(fleet_bill_sql(path, rows=20_000, resources=5_000))
    rec = reconcile_month(PLAN, [path], MONTH, unmapped_csv=tmp_path / "all.csv")
    with (tmp_path / "all.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) > 1_000 and len(rec.unmapped) == 201
    assert sum((u.effective_cost.amount for u in rec.unmapped), Decimal(0)) == rec.unmapped_effective_cost.amount
    assert sum(Decimal(r["EffectiveCost"]) for r in rows) == rec.unmapped_effective_cost.amount
    assert not list(tmp_path.glob(".*partial"))


def test_no_unmapped_csv_with_a_remote_engine(tmp_path, capsys):
    code = main(["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", MONTH, "--out", str(tmp_path / "o"),
                 "--engine", "athena", "--table", "d.t", "--unmapped-csv", str(tmp_path / "u.csv")])
    assert code == 2 and "--unmapped-csv is for local bills" in capsys.readouterr().err
    assert not (tmp_path / "u.csv").exists()
