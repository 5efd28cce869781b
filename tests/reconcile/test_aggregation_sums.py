"""The aggregation's SQL run directly on a small bill table shaped like a real export, against sums worked
here row by row in Python with Decimal (FOCUS 1.2 column definitions), without the engine around it.

The bill (:func:`bill_rows`) holds two days of hourly rows per resource (so every charge group sums tens
of rows whose amounts differ: a SUM taken as MAX, MIN or one row is wrong), two commitments with their
purchases, used and unused hours, credits, a second billing currency, unmapped charges under several
keys, and rows of April and June, of the month edge and with a missing ChargePeriodStart. It is split
over two "files" (``bill_file``), as the engine scans several bill files at once.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import duckdb
import pytest

from finops.focus import duckdb_schema
from finops.reconcile.aggregation import (
    CHECKED_COLUMNS,
    DIMENSIONS,
    MEASURES,
    ChargeGroup,
    Summary,
    UnmappedSums,
    charge_groups_sql,
    decimal_of,
    month_filter,
    summary_sql,
    unmapped_csv_sql,
)
from finops.reconcile.plan import MappingRule

D = Decimal
MONTH = "2026-05"
MAY, JUNE, APRIL = datetime(2026, 5, 1), datetime(2026, 6, 1), datetime(2026, 4, 1)
HOURS = 48
TABLE = "bill"
FILE = "bill_file"

RULES = (MappingRule(2, "gpu-aws", provider_name="AWS", instance_type="p5.*"),
         MappingRule(1, "gpu-gcp", instance_type="a3-*"),
         MappingRule(3, "storage", service_name="AmazonS3"),
         MappingRule(4, "platform", sub_account="platform-*"))
#: The same rules as data for the reference: (plan line, {column of the charge: glob}), in Rule order.
REFERENCE_RULES = [("gpu-gcp", {"instance_type": "a3-*"}),
                   ("gpu-aws", {"ProviderName": "AWS", "instance_type": "p5.*"}),
                   ("storage", {"ServiceName": "AmazonS3"}),
                   ("platform", {"sub_account": "platform-*"})]


def _hour(h: int, **fields: Any) -> dict[str, Any]:
    return {"ChargePeriodStart": MAY + timedelta(hours=h), "ChargePeriodEnd": MAY + timedelta(hours=h + 1), **fields}


def _drift(h: int) -> Decimal:
    """0 to 0.006 by hour, so the rows of one group differ."""
    return D(h % 7) / 1000


def _may_rows() -> Iterator[dict[str, Any]]:
    p5 = {"x_InstanceType": "p5.48xlarge", "x_GpuModel": "h100-sxm", "ServiceName": "AmazonEC2"}
    for h in range(HOURS):
        used = (D(1), D("0.75"), D("0.5"))[h % 3]
        cost = (D("55.04") + _drift(h)) * used
        yield _hour(h, **p5, BilledCost=cost, EffectiveCost=cost, ListCost=cost + D("0.01"), ConsumedQuantity=used,
                    x_GpuHours=8 * used, PricingQuantity=used)
        yield _hour(h, ServiceName="AmazonEC2", SkuPriceDetails='{"InstanceType": "p4d.24xlarge"}',
                    BilledCost=D("32.7726") + _drift(h), EffectiveCost=D("32.7726") + _drift(h), ListCost=D("32.78"),
                    ConsumedQuantity=D(1), PricingQuantity=D(1))
        yield _hour(h, **p5, CommitmentDiscountId="ri-1", CommitmentDiscountType="Reserved Instance",
                    CommitmentDiscountName="p5 reserved", CommitmentDiscountStatus="Used", PricingCategory="Committed",
                    BilledCost=D(0), EffectiveCost=D("30.1") + _drift(h), ListCost=D("55.04") + _drift(h),
                    ConsumedQuantity=D(1), x_GpuHours=D(8) - _drift(h))
        status = "Used" if h < 30 else "Unused"
        yield _hour(h, **p5, CommitmentDiscountId="sp-1", CommitmentDiscountType="Savings Plan",
                    CommitmentDiscountName="compute plan", CommitmentDiscountStatus=status,
                    PricingCategory="Committed", BilledCost=D(0), EffectiveCost=D("36.2"),
                    ListCost=D("55.04") + _drift(h) if status == "Used" else D(0),
                    ConsumedQuantity=D(1) if status == "Used" else D(0), x_GpuHours=D(8) if status == "Used" else None)
        if h % 4 == 1:
            yield _hour(h, **p5, PricingCategory="Dynamic", x_PurchaseOption="spot",
                        BilledCost=D("24.08") + _drift(h), EffectiveCost=D("24.08") + _drift(h), ListCost=D("55.04"),
                        ConsumedQuantity=D(1), x_GpuHours=D(8))
        if h % 24 == 0:
            yield _hour(h, ChargePeriodEnd=MAY + timedelta(hours=h + 24), ServiceName="AmazonS3",
                        ConsumedUnit="GB-Mo", ConsumedQuantity=D("1801.4"), BilledCost=D("41.337") + _drift(h),
                        EffectiveCost=D("41.337") + _drift(h), ListCost=D("41.337"))
        gcp = {"ProviderName": "Google Cloud", "InvoiceId": "G-1", "BillingCurrency": "EUR",
               "SubAccountId": "acme-ml", "SubAccountName": None, "ServiceName": "Compute Engine",
               "RegionId": "us-central1", "Tags": '{"team":"search"}'}
        yield _hour(h, **gcp, x_InstanceType="a3-highgpu-8g", x_GpuModel="h100-sxm", x_GpuHours=D(8),
                    BilledCost=D("88.49") + _drift(h), EffectiveCost=D("80.1") + _drift(h), ListCost=D("88.49"),
                    ConsumedQuantity=D(1))
        # unmapped, under several keys and in two currencies
        yield _hour(h, ServiceName="AmazonCloudWatch", BilledCost=D("0.37") + _drift(h),
                    EffectiveCost=D("0.37") + _drift(h), ListCost=D("0.37"), ConsumedUnit="Requests",
                    ConsumedQuantity=D(1000 + h))
        yield _hour(h, ServiceName="AWSDataTransfer", RegionId=None, SubAccountName=None, SubAccountId="333",
                    Tags=None, BilledCost=D("2.5") + _drift(h), EffectiveCost=D("2.5") + _drift(h), ListCost=D("2.5"),
                    ConsumedUnit="GB", ConsumedQuantity=D(12))
        yield _hour(h, **{**gcp, "ServiceName": "Cloud Storage", "Tags": '{"team":"data"}'},
                    BilledCost=D("1.25") + _drift(h), EffectiveCost=D("1.25") + _drift(h), ListCost=D("1.25"),
                    ConsumedUnit="GiBy.mo", ConsumedQuantity=D(40))
        yield _hour(h, ServiceName="AmazonRDS", SubAccountName="platform-db", RegionId="eu-west-1",
                    BilledCost=D("1.9") + _drift(h), EffectiveCost=D("1.9") + _drift(h), ListCost=D("1.9"))
    whole = {"ChargePeriodStart": MAY, "ChargePeriodEnd": JUNE, "ChargeFrequency": "Recurring",
             "ServiceName": "AmazonEC2", "ConsumedQuantity": None}
    yield {**whole, "ChargeCategory": "Purchase", "CommitmentDiscountId": "ri-1", "BilledCost": D("1444.95"),
           "EffectiveCost": D(0), "ListCost": D(0), "SkuPriceDetails": '{"x_PurchaseTerm": "1yr"}'}
    yield {**whole, "ChargeCategory": "Purchase", "CommitmentDiscountId": "sp-1", "BilledCost": D("1737.6"),
           "EffectiveCost": D(0), "ListCost": D(0), "SkuPriceDetails": '{"x_Plan": "THREE_YEARS"}'}
    yield {**whole, "ChargeCategory": "Purchase", "ChargeFrequency": "One-Time", "ServiceName": "AWSSupport",
           "BilledCost": D("100"), "EffectiveCost": D("100"), "ListCost": D("100"),
           "SkuPriceDetails": '{"x_PurchaseTerm": "1yr", "x_Plan": "ignored"}'}
    # a usage row may carry a term in its details too: only a purchase has a commitment term
    yield {**whole, "CommitmentDiscountId": "ri-1", "CommitmentDiscountStatus": "Used", "BilledCost": D(0),
           "EffectiveCost": D("0.5"), "ListCost": D("1"), "SkuPriceDetails": '{"x_PurchaseTerm": "1yr"}'}
    for credit in ("-500", "-1250.55", "-75.125"):
        yield {**whole, "ChargeCategory": "Credit", "BilledCost": D(credit), "EffectiveCost": D(credit), "ListCost": D(0)}
    yield {**whole, "ChargeCategory": "Tax", "ServiceName": "Tax", "InvoiceId": "INV-TAX", "BilledCost": D("183.07"),
           "EffectiveCost": D("183.07"), "ListCost": D(0)}


def _edge_rows() -> Iterator[dict[str, Any]]:
    """Rows whose month depends on the basis, and rows of other months."""
    # April's usage on May's invoice, and April's invoice with usage starting on 1 May
    yield {"ChargePeriodStart": MAY - timedelta(hours=1), "ChargePeriodEnd": MAY, "ServiceName": "AmazonEC2",
           "BilledCost": D("7.77"), "EffectiveCost": D("7.7"), "ListCost": D("8")}
    yield {"BillingPeriodStart": APRIL, "BillingPeriodEnd": MAY, "ChargePeriodStart": MAY,
           "ChargePeriodEnd": MAY + timedelta(hours=1), "ServiceName": "AmazonEC2", "BilledCost": D("3.33"),
           "EffectiveCost": D("3.3"), "ListCost": D("3")}
    # no charge period, and the earliest timestamp there is: on May's invoice all the same
    yield {"ChargePeriodStart": None, "ChargePeriodEnd": None, "ServiceName": "AmazonEC2", "BilledCost": D("1.11"),
           "EffectiveCost": D("1.1"), "ListCost": D("1")}
    yield {"ChargePeriodStart": datetime(1, 1, 1), "ChargePeriodEnd": datetime(1, 1, 1, 1),
           "ServiceName": "AmazonEC2", "BilledCost": D("2.22"), "EffectiveCost": D("2.2"), "ListCost": D("2")}
    for month_start, month_end in ((APRIL, MAY), (JUNE, datetime(2026, 7, 1))):
        for h in range(5):
            start = month_start + timedelta(hours=h)
            yield {"BillingPeriodStart": month_start, "BillingPeriodEnd": month_end, "ChargePeriodStart": start,
                   "ChargePeriodEnd": start + timedelta(hours=1), "x_InstanceType": "p5.48xlarge",
                   "ServiceName": "AmazonEC2", "BilledCost": D("999"), "EffectiveCost": D("999"), "ListCost": D("999"),
                   "x_GpuHours": D(8)}
    # the last instant of May by usage, and the first of June
    yield {"ChargePeriodStart": JUNE - timedelta(seconds=1), "ChargePeriodEnd": JUNE, "ServiceName": "AmazonS3",
           "BilledCost": D("0.01"), "EffectiveCost": D("0.01"), "ListCost": D("0.01")}
    yield {"BillingPeriodStart": JUNE, "BillingPeriodEnd": datetime(2026, 7, 1), "ChargePeriodStart": JUNE,
           "ChargePeriodEnd": JUNE + timedelta(hours=1), "ServiceName": "AmazonS3", "BilledCost": D("0.02"),
           "EffectiveCost": D("0.02"), "ListCost": D("0.02")}


BASE: dict[str, Any] = {
    "ProviderName": "AWS", "InvoiceId": "INV-1", "BillingCurrency": "USD", "SubAccountId": "222",
    "SubAccountName": "prod", "BillingPeriodStart": MAY, "BillingPeriodEnd": JUNE, "ChargeCategory": "Usage",
    "ChargeFrequency": "Usage-Based", "PricingCategory": "Standard", "ConsumedUnit": "Hours", "RegionId": "us-east-1",
    "Tags": '{"team":"ml"}', "ContractedCost": D(1), "PricingQuantity": D(1)}


def bill_rows() -> list[dict[str, Any]]:
    """Every row of the bill with every column the aggregation reads (``None``: NULL), two files."""
    rows = [{**BASE, **row} for row in [*_may_rows(), *_edge_rows()]]
    for i, row in enumerate(rows):
        row[FILE] = "a.csv" if i % 3 else "b.parquet"
        if i % 11 == 0:  # a few rows without the checked columns, so their counts differ from the row count
            row["ContractedCost"] = row["PricingQuantity"] = None
    return rows


COLUMNS = {**duckdb_schema(), FILE: "VARCHAR"}


@pytest.fixture(scope="module")
def con(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """The bill as a typed DuckDB table (the FOCUS types of :func:`finops.focus.duckdb_schema`)."""
    path = Path(tmp_path_factory.mktemp("bill")) / "bill.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in bill_rows():
            writer.writerow(["" if row.get(c) is None else str(row[c]) for c in COLUMNS])
    con = duckdb.connect()
    types = ", ".join(f"'{name}': '{kind}'" for name, kind in COLUMNS.items())
    con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM read_csv('{path}', header = true, columns = {{{types}}})")
    return con


# --- the reference: the FOCUS definitions in Python --------------------------------------------------------------

def in_month(row: dict[str, Any], basis: str) -> bool:
    """The month a charge belongs to: its invoice's (BillingPeriodStart) or its usage's (ChargePeriodStart)."""
    when = row["BillingPeriodStart"] if basis == "invoice" else row.get("ChargePeriodStart")
    return when is not None and MAY <= when < JUNE


def instance_of(row: dict[str, Any]) -> str | None:
    return row.get("x_InstanceType") or json.loads(row.get("SkuPriceDetails") or "{}").get("InstanceType")


def term_of(row: dict[str, Any]) -> str | None:
    if row["ChargeCategory"] != "Purchase":
        return None
    details = json.loads(row.get("SkuPriceDetails") or "{}")
    return details.get("x_PurchaseTerm") or details.get("x_Plan")


def plan_line_of(row: dict[str, Any]) -> str | None:
    """The first rule whose every glob matches (case-folded); a sub-account matches its id or its name."""
    fields = {"instance_type": [instance_of(row)], "ProviderName": [row["ProviderName"]],
              "ServiceName": [row["ServiceName"]], "sub_account": [row.get("SubAccountId"), row.get("SubAccountName")]}
    for line, globs in REFERENCE_RULES:
        if all(any(v is not None and fnmatchcase(v.lower(), g.lower()) for v in fields[f]) for f, g in globs.items()):
            return line
    return None


def dimensions_of(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["ProviderName"], row["BillingCurrency"], row["InvoiceId"], row["ServiceName"], instance_of(row),
            row["ChargeCategory"], row["ChargeFrequency"], row["PricingCategory"], row.get("CommitmentDiscountStatus"),
            row.get("CommitmentDiscountId"), row.get("CommitmentDiscountType"), row.get("CommitmentDiscountName"),
            term_of(row), row.get("x_GpuModel"), row.get("x_PurchaseOption"), row["ConsumedUnit"], token_kind_of(row))


def token_kind_of(row: dict[str, Any]) -> str | None:
    """A token API's charge (its unit or meter names tokens): cached, output or input by its meter and description,
    else tokens; None for any other charge."""
    if "token" not in f"{row.get('ConsumedUnit') or ''} {row.get('SkuMeter') or ''}".lower():
        return None
    text = f"{row.get('SkuMeter') or ''} {row.get('ChargeDescription') or ''}".lower()
    return next((kind for word, kind in (("cache", "cached"), ("output", "output"), ("input", "input"))
                 if word in text), "tokens")


def unmapped_key_of(row: dict[str, Any]) -> tuple[str, str, str]:
    """(sub-account, region, tags) of an unmapped charge: the name, else the id; '' for none."""
    return (row.get("SubAccountName") or row.get("SubAccountId") or "", row.get("RegionId") or "",
            row.get("Tags") or "")


class Sums:
    """The measures of one group, summed row by row."""

    def __init__(self) -> None:
        self.billed = self.effective = self.listed = D(0)
        self.consumed: Decimal | None = None
        self.gpu_hours: Decimal | None = None
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.rows = 0
        self.checked: Counter[str] = Counter()

    def add(self, row: dict[str, Any]) -> None:
        self.billed += row["BilledCost"]
        self.effective += row["EffectiveCost"]
        self.listed += row["ListCost"]
        if row.get("ConsumedQuantity") is not None:
            self.consumed = (self.consumed or D(0)) + row["ConsumedQuantity"]
        if row.get("x_GpuHours") is not None:
            self.gpu_hours = (self.gpu_hours or D(0)) + row["x_GpuHours"]
        start, end = row.get("ChargePeriodStart"), row.get("ChargePeriodEnd")
        if start is not None:
            self.first = start if self.first is None else min(self.first, start)
        if end is not None:
            self.last = end if self.last is None else max(self.last, end)
        self.rows += 1
        self.checked.update(c for c in CHECKED_COLUMNS if row.get(c) is not None)

    def measures(self) -> tuple[Any, ...]:
        """The sums as SQL gives them (a sum of no value is NULL)."""
        return (self.billed, self.effective, self.listed, self.consumed, self.gpu_hours, self.first, self.last,
                self.rows)


def grouped(basis: str, *, per_file: bool = False, unmapped_keys: bool = False) -> dict[tuple[Any, ...], Sums]:
    groups: dict[tuple[Any, ...], Sums] = defaultdict(Sums)
    for row in bill_rows():
        if in_month(row, basis):
            line = plan_line_of(row)
            key = (line, *dimensions_of(row))
            if unmapped_keys:
                key += unmapped_key_of(row) if line is None else (None, None, None)
            if per_file:
                key += (row[FILE],)
            groups[key].add(row)
    return groups


def expected_groups(basis: str) -> Counter[ChargeGroup]:
    groups = Counter()
    for key, sums in grouped(basis).items():
        billed, effective, listed, consumed, *rest = sums.measures()
        groups[ChargeGroup.from_row((*key, billed, effective, listed, consumed, *rest))] += 1  # NULL quantity: 0
    return groups


def summary(con: duckdb.DuckDBPyConnection, basis: str = "invoice", *, per: str | None = None,
            rates: dict[str, Decimal] | None = None, limit: int = 200, rules=RULES) -> Summary:
    con.execute("CREATE OR REPLACE TEMP TABLE groups AS " + charge_groups_sql(TABLE, MONTH, rules, per=per, basis=basis))
    return Summary.from_rows(con.execute(summary_sql("groups", rates=rates, limit=limit)).fetchall(), limit=limit)


# --- the tests -----------------------------------------------------------------------------------------------------

def test_the_bill_is_shaped_like_a_real_one():
    """Tens of rows in most groups, both commitments used, one also unused, credits, two currencies: the premise."""
    groups = grouped("invoice")
    assert sum(1 for s in groups.values() if s.rows >= HOURS) >= 8
    statuses = {(k[10], k[9]) for k in groups if k[10]}
    assert statuses == {("ri-1", "Used"), ("sp-1", "Used"), ("sp-1", "Unused"), ("ri-1", None), ("sp-1", None)}
    assert {k[2] for k in groups} == {"USD", "EUR"}
    assert sum(s.rows for k, s in groups.items() if k[6] == "Credit") == 3
    assert sum(1 for k in groups if k[0] is None) >= 5


@pytest.mark.parametrize("per", [None, FILE], ids=["one scan", "per file, regrouped"])
@pytest.mark.parametrize("basis", ["invoice", "usage"])
def test_every_group_carries_the_sums_of_its_rows(con, basis, per):
    """Each charge group (plan line and every dimension) against the same grouping done in Python: every
    sum over its rows (costs, quantities, GPU-hours, row count), the first start and the last end; the
    same when the scan groups per bill file and the summary folds the files' groups together."""
    got = summary(con, basis, per=per)
    assert Counter(got.groups) == expected_groups(basis)


@pytest.mark.parametrize("per", [None, FILE], ids=["one scan", "per file, regrouped"])
@pytest.mark.parametrize("basis", ["invoice", "usage"])
def test_the_month_holds_exactly_its_charges(con, basis, per):
    """Totals of the month against a direct filter of the rows: nothing of April or June, nothing lost."""
    rows = [r for r in bill_rows() if in_month(r, basis)]
    got = summary(con, basis, per=per).groups
    for column, measure in (("BilledCost", "billed_cost"), ("EffectiveCost", "effective_cost"),
                            ("ListCost", "list_cost")):
        assert sum((getattr(g, measure) for g in got), D(0)) == sum((r[column] for r in rows), D(0)), column
    assert sum(g.row_count for g in got) == len(rows)
    assert sum((g.gpu_hours or 0 for g in got), D(0)) == sum((r.get("x_GpuHours") or 0 for r in rows), D(0))


def test_the_two_bases_differ_by_the_rows_at_the_month_edge(con):
    """April's usage invoiced in May, a charge without a period and one at year 1 are May's by invoice only;
    April's invoice with usage from 1 May is May's by usage only (the other months' rows by neither)."""
    invoice, usage = summary(con, "invoice").groups, summary(con, "usage").groups
    billed = {basis: sum((g.billed_cost for g in groups), D(0)) for basis, groups in (("invoice", invoice),
                                                                                      ("usage", usage))}
    assert billed["invoice"] - billed["usage"] == D("7.77") + D("1.11") + D("2.22") - D("3.33")
    assert sum(g.row_count for g in invoice) - sum(g.row_count for g in usage) == 2


@pytest.mark.parametrize("per", [None, FILE], ids=["one scan", "per file, regrouped"])
def test_the_named_sums_over_many_rows(con, per):
    """The named mutations (SUM of x_GpuHours or ListCost taken as MAX, in the scan or in the
    regrouping of the files' groups): the p5 on-demand group's GPU-hours, list cost and row count, summed
    here from the hours themselves."""
    group = next(g for g in summary(con, per=per).groups if g.plan_line == "gpu-aws" and g.commitment_id is None
                 and g.pricing_category == "Standard")
    hours = [(D(1), D("0.75"), D("0.5"))[h % 3] for h in range(HOURS)]
    assert group.gpu_hours == sum((8 * u for u in hours), D(0)) == D(8 * 36)
    assert group.list_cost == sum(((D("55.04") + D(h % 7) / 1000) * u + D("0.01") for h, u in enumerate(hours)), D(0))
    assert group.consumed_quantity == D(36) and group.row_count == HOURS


def test_per_file_groups_and_checked_counts(con):
    """The scan itself, per bill file: plan line, dimensions, what a rule could match on (unmapped only),
    the file, the sums and a count of each checked column, against the grouping in Python."""
    sql = charge_groups_sql(TABLE, MONTH, RULES, per=FILE, checked=CHECKED_COLUMNS)
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    assert names == ["plan_line", *DIMENSIONS, "sub_account", "region_id", "tags", FILE, *MEASURES,
                     *(f"checked_{c}" for c in CHECKED_COLUMNS)]
    got = Counter(cursor.fetchall())
    expected = Counter((*key, *sums.measures(), *(sums.checked[c] for c in CHECKED_COLUMNS))
                       for key, sums in grouped("invoice", per_file=True, unmapped_keys=True).items())
    assert got == expected


def test_checked_columns_are_counted_not_summed(con):
    sql = charge_groups_sql(TABLE, MONTH, (), checked=("ContractedCost", "PricingQuantity"))
    rows = con.execute(f"SELECT SUM(row_count), SUM(checked_ContractedCost), SUM(checked_PricingQuantity) "
                       f"FROM ({sql})").fetchone()
    month = [r for r in bill_rows() if in_month(r, "invoice")]
    with_values = sum(1 for r in month if r["ContractedCost"] is not None)
    assert rows == (len(month), with_values, with_values) and with_values < len(month)


def test_no_rules_leave_every_charge_unmapped_with_the_same_totals(con):
    groups = summary(con, rules=()).groups
    assert {g.plan_line for g in groups} == {None}
    month = [r for r in bill_rows() if in_month(r, "invoice")]
    assert sum((g.effective_cost for g in groups), D(0)) == sum((r["EffectiveCost"] for r in month), D(0))
    assert sum(g.row_count for g in groups) == len(month)


RATES = {"EUR": D("1.1")}


def unmapped_reference(rates: dict[str, Decimal] | None, limit: int):
    """Unmapped keys ranked by EffectiveCost in the plan currency (largest first, then by key); the first
    ``limit`` keys listed per billing currency, the others summed per billing currency with their count."""
    sums: dict[tuple[tuple[str, ...], str], list[Decimal]] = defaultdict(lambda: [D(0), D(0)])
    for row in bill_rows():
        if in_month(row, "invoice") and plan_line_of(row) is None:
            sub_account, region, tags = unmapped_key_of(row)
            key = (row["ProviderName"], sub_account, row["ServiceName"], instance_of(row) or "", region, tags)
            sums[(key, row["BillingCurrency"])][0] += row["EffectiveCost"]
            sums[(key, row["BillingCurrency"])][1] += row["BilledCost"]
    weight: dict[tuple[str, ...], Decimal] = defaultdict(Decimal)
    for (key, currency), (effective, _) in sums.items():
        weight[key] += effective * (rates or {}).get(currency, D(1))
    ranked = sorted(weight, key=lambda k: (-weight[k], k))
    listed = Counter(UnmappedSums(k, c, *v) for (k, c), v in sums.items() if k in ranked[:limit])
    rest: dict[str, list[Decimal]] = defaultdict(lambda: [D(0), D(0)])
    for (key, currency), (effective, billed) in sums.items():
        if key not in ranked[:limit]:
            rest[currency][0] += effective
            rest[currency][1] += billed
    return listed, Counter(UnmappedSums(("",) * 6, c, *v) for c, v in rest.items()), max(len(ranked) - limit, 0)


@pytest.mark.parametrize("rates", [None, RATES], ids=["no rates", "EUR rate"])
@pytest.mark.parametrize("limit", [0, 1, 3, 200])
def test_unmapped_groups_largest_first_then_the_rest(con, rates, limit):
    got = summary(con, rates=rates, limit=limit)
    listed, rest, count = unmapped_reference(rates, limit)
    assert (Counter(got.unmapped), Counter(got.rest), got.rest_count) == (listed, rest, count)


def test_a_rate_changes_which_unmapped_key_comes_first(con):
    """Cloud Storage billed in EUR (1.25 an hour) is not the largest unmapped key in its own currency's
    figures; at 100 USD per EUR it is, so the ranking converts before it compares."""
    plain, converted = summary(con, limit=1), summary(con, rates={"EUR": D(100)}, limit=1)
    assert [u.key[2] for u in converted.unmapped] == ["Cloud Storage"]
    assert [u.key[2] for u in plain.unmapped] != ["Cloud Storage"]
    keys = unmapped_reference(None, 0)[2]
    assert converted.rest_count == plain.rest_count == keys - 1 and keys >= 5


def test_unmapped_csv_lists_every_unmapped_group_largest_first(con):
    con.execute("CREATE OR REPLACE TEMP TABLE groups AS " + charge_groups_sql(TABLE, MONTH, RULES, per=FILE))
    cursor = con.execute(unmapped_csv_sql("groups"))
    assert [d[0] for d in cursor.description] == ["ProviderName", "SubAccount", "ServiceName", "InstanceType",
                                                  "RegionId", "Tags", "BillingCurrency", "EffectiveCost", "BilledCost",
                                                  "Charges"]
    sums: dict[tuple[str, ...], list[Any]] = defaultdict(lambda: [D(0), D(0), 0])
    for row in bill_rows():
        if in_month(row, "invoice") and plan_line_of(row) is None:
            sub_account, region, tags = unmapped_key_of(row)
            key = (row["ProviderName"], sub_account, row["ServiceName"], instance_of(row) or "", region, tags,
                   row["BillingCurrency"])
            sums[key][0] += row["EffectiveCost"]
            sums[key][1] += row["BilledCost"]
            sums[key][2] += 1
    expected = sorted(((*k, *v) for k, v in sums.items()), key=lambda r: (-r[7], r[:7]))
    assert cursor.fetchall() == expected


def test_summary_read_from_text_as_a_remote_engine_returns_it(con):
    """BigQuery and Athena return sums and timestamps as text: the summary read from them is the same."""
    con.execute("CREATE OR REPLACE TEMP TABLE groups AS " + charge_groups_sql(TABLE, MONTH, RULES))
    rows = con.execute(summary_sql("groups", rates=RATES, limit=2)).fetchall()

    def as_text(value: Any, i: int) -> Any:
        if isinstance(value, datetime):
            return value.isoformat(sep=" ") + " UTC" if i % 2 else value.isoformat() + "Z"
        return None if value is None else str(value)

    text = [tuple(as_text(v, i) for v in row) for i, row in enumerate(rows)]
    typed = Summary.from_rows(rows, limit=2)
    assert Summary.from_rows(text, limit=2) == typed
    assert typed.rest_count > 0 and typed.rest and typed.unmapped


@pytest.mark.parametrize("value, expected", [(None, D(0)), (D("1.50"), D("1.50")), ("12.5000000000", D("12.5")),
                                             (7, D(7)), (0.1, D("0.1")), (-3.25, D("-3.25"))])
def test_decimal_of_a_sum_as_engines_return_it(value, expected):
    got = decimal_of(value)
    assert isinstance(got, Decimal) and got == expected


def test_a_group_is_committed_when_it_carries_a_commitment(con):
    groups = summary(con).groups
    assert {g.commitment_id for g in groups if g.committed} == {"ri-1", "sp-1"}
    assert all(g.commitment_id is None for g in groups if not g.committed)


@pytest.mark.parametrize("basis", ["invoice", "usage"])
def test_month_filter_selects_the_reference_rows(con, basis):
    (count,) = con.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE {month_filter(MONTH, basis)}").fetchone()
    assert count == sum(1 for r in bill_rows() if in_month(r, basis))


def test_the_default_month_is_the_invoice_month(con):
    (count,) = con.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE {month_filter(MONTH)}").fetchone()
    assert count == sum(1 for r in bill_rows() if in_month(r, "invoice")) != sum(
        1 for r in bill_rows() if in_month(r, "usage"))
    con.execute("CREATE OR REPLACE TEMP TABLE groups AS " + charge_groups_sql(TABLE, MONTH, RULES))
    assert Counter(Summary.from_rows(con.execute(summary_sql("groups")).fetchall()).groups) == expected_groups("invoice")


def test_each_compared_column_is_lowered_once_per_charge():
    """The documented saving of the scan: two rules on ServiceName and one on the instance type lower each
    column once, in the scan's subquery, not once per rule in the CASE; with no rules the bill is read as it is."""
    rules = (MappingRule(1, "a", service_name="AmazonEC2"), MappingRule(2, "b", service_name="AmazonS3"),
             MappingRule(3, "c", instance_type="p5.*"))
    sql = charge_groups_sql(TABLE, MONTH, rules)
    assert sql.count("LOWER(ServiceName)") == 1 and sql.count("LOWER(COALESCE(x_InstanceType") == 1
    assert "LOWER(" not in sql.split("AS bill")[1]  # the CASE compares the lowered columns
    plain = charge_groups_sql(TABLE, MONTH, ())
    assert "LOWER(" not in plain and f"FROM {TABLE}\n" in plain


def test_several_rates_rank_the_unmapped_keys(con):
    """Two rates (one for a currency the bill does not hold) rank as one rate does."""
    for limit in (1, 3):
        got = summary(con, rates={**RATES, "GBP": D("1.27")}, limit=limit)
        listed, rest, count = unmapped_reference(RATES, limit)
        assert (Counter(got.unmapped), Counter(got.rest), got.rest_count) == (listed, rest, count)


def test_a_row_of_the_wrong_width_is_refused():
    """A remote engine's row with a column more or less than the summary's is an error, not a shifted group."""
    row = ("gpu", *("x",) * len(DIMENSIONS), *("1",) * (len(MEASURES) - 3), None, None, 1)
    assert ChargeGroup.from_row(row).row_count == 1
    for wrong in (row[:-1], (*row, 2)):
        with pytest.raises(ValueError):
            ChargeGroup.from_row(wrong)
