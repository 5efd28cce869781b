"""Bills from AWS Data Exports in S3 (moto's server over HTTP, the real boto3 client via AWS_ENDPOINT_URL):
manifests, Parquet and gzip CSV, several months, re-delivered months counted once, nothing written on failure.
The written FOCUS Parquet is read back through the reconcile engine's own checked DuckDB view."""

from __future__ import annotations

import csv
import gzip
import io
import json
import time
from decimal import Decimal

import boto3
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors import aws
from finops.errors import InputError, ProviderError
from finops.reconcile.bills import open_bills

BUCKET = "billing-exports"
PREFIX = "cur"
MAY_BILLED, MAY_EFFECTIVE = Decimal("92631.11"), Decimal("12471.11")  # worked in test_cur_to_focus.py
_NUMERIC = ("line_item_usage_amount", "line_item_unblended_rate", "line_item_unblended_cost",
            "line_item_net_unblended_cost", "pricing_public_on_demand_rate", "pricing_public_on_demand_cost",
            "reservation_effective_cost", "reservation_unused_amortized_upfront_fee_for_billing_period",
            "reservation_unused_recurring_fee", "reservation_unused_quantity",
            "savings_plan_savings_plan_effective_cost", "savings_plan_total_commitment_to_date",
            "savings_plan_used_commitment", "reservation_net_effective_cost",
            "reservation_amortized_upfront_fee_for_billing_period",
            "reservation_net_amortized_upfront_fee_for_billing_period",
            "reservation_net_unused_amortized_upfront_fee_for_billing_period", "reservation_net_unused_recurring_fee",
            "savings_plan_net_savings_plan_effective_cost", "savings_plan_recurring_commitment_for_billing_period",
            "savings_plan_net_recurring_commitment_for_billing_period")
_TIMES = ("bill_billing_period_start_date", "bill_billing_period_end_date", "line_item_usage_start_date",
          "line_item_usage_end_date")


@pytest.fixture
def cur_rows(data):
    with (data / "cur2-2026-05.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def as_month(rows, month):
    """The fixture month moved to another billing period (same charges)."""
    year, number = month.split("-")
    moved = []
    for row in rows:
        moved.append({k: (v.replace("2026-05-", f"{year}-{number}-").replace("2026-06-01", _next(month) + "-01")
                          if k in _TIMES else v) for k, v in row.items()})
    return moved


def _next(month):
    year, number = (int(p) for p in month.split("-"))
    return f"{year + number // 12:04d}-{number % 12 + 1:02d}"


def parquet_bytes(rows, numeric=_NUMERIC, times=_TIMES, maps=("product", "resource_tags")):
    """Export Parquet as AWS writes it: doubles, timestamps, map columns (CUR 2.0 names by default)."""
    columns = {}
    for name in rows[0]:
        values = [r[name] for r in rows]
        if name in numeric:
            columns[name] = pa.array([float(v) if v else None for v in values], pa.float64())
        elif name in times:
            columns[name] = pa.array([_ts(v) for v in values], pa.timestamp("ms"))
        elif name in maps:
            columns[name] = pa.array([[(k, str(x)) for k, x in json.loads(v).items()] if v else [] for v in values],
                                     pa.map_(pa.string(), pa.string()))
        else:
            columns[name] = pa.array([v or None for v in values], pa.string())
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def _ts(text):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "")) if text else None


def csv_gz_bytes(rows):
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return gzip.compress(buffer.getvalue().encode())


CUR_COLUMNS = ("line_item_line_item_type", "line_item_unblended_cost")


def deliver(s3, month, parts, *, export="gpu-cur", execution=None, extension="snappy.parquet", prefix=PREFIX,
            columns=CUR_COLUMNS):
    """Upload data parts and the manifest naming them, in the Data Exports layout."""
    folder = f"{execution}/" if execution else ""
    uris = []
    for number, body in enumerate(parts, start=1):
        key = f"{prefix}/{export}/data/BILLING_PERIOD={month}/{folder}{export}-{number:05d}.{extension}"
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
        uris.append(f"s3://{BUCKET}/{key}")
    manifest = {"executionId": execution or f"exec-{month}", "exportArn": f"arn:aws:bcm-data-exports:us-east-1:"
                f"111111111111:export/{export}", "columns": [{"name": c, "type": "string"} for c in columns],
                "dataFiles": uris, "additionalOutputFiles": []}
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{export}/metadata/BILLING_PERIOD={month}/{folder}{export}-Manifest.json",
                  Body=json.dumps(manifest).encode())


@pytest.fixture
def s3(moto):
    client = boto3.client("s3", region_name="us-east-1")  # AWS_ENDPOINT_URL points at moto
    client.create_bucket(Bucket=BUCKET)
    return client


def totals(path):
    con = duckdb.connect()
    open_bills(con, [path])
    billed, effective, gpu_hours, count = con.execute(
        "SELECT sum(BilledCost), sum(EffectiveCost), sum(x_GpuHours), count(*) FROM focus_bills").fetchone()
    return billed, effective, gpu_hours, count


def test_one_month_from_parquet_ties_out_through_the_reconcile_view(s3, cur_rows, tmp_path):
    deliver(s3, "2026-05", [parquet_bytes(cur_rows)])
    deliver(s3, "2026-04", [csv_gz_bytes(as_month(cur_rows, "2026-04"))], extension="csv.gz")
    out = aws.pull_bills(f"s3://{BUCKET}/{PREFIX}", "2026-05", tmp_path / "may.parquet")
    billed, effective, gpu_hours, count = totals(out)
    # GPU-hours: p5 10 h x 8 + spot g6 5 h x 1 + RI p4d 200 h x 8 + SP g6e (322.58 + 204.30) h x 1
    assert (billed, effective, gpu_hours, count) == (MAY_BILLED, MAY_EFFECTIVE, Decimal("6211.88"), 14)


def test_several_months_gzip_csv_and_parquet(s3, cur_rows, tmp_path):
    deliver(s3, "2026-05", [parquet_bytes(cur_rows)])
    deliver(s3, "2026-04", [csv_gz_bytes(as_month(cur_rows, "2026-04"))], extension="csv.gz")
    out = aws.pull_bills(f"s3://{BUCKET}/{PREFIX}/", "2026-04..2026-05", tmp_path / "q.parquet")
    billed, effective, _, count = totals(out)
    assert (billed, effective, count) == (2 * MAY_BILLED, 2 * MAY_EFFECTIVE, 28)
    periods = duckdb.sql(f"SELECT DISTINCT BillingPeriodStart::DATE::VARCHAR FROM '{out}' ORDER BY 1").fetchall()
    assert periods == [("2026-04-01",), ("2026-05-01",)]


def test_overwritten_month_counts_only_the_current_delivery(s3, cur_rows, tmp_path):
    deliver(s3, "2026-05", [parquet_bytes(cur_rows[:7]), parquet_bytes(cur_rows[7:])])
    # The re-delivery overwrites part 1 and the manifest; the old part 2 lingers in the bucket.
    deliver(s3, "2026-05", [parquet_bytes(cur_rows)])
    out = aws.pull_bills(f"s3://{BUCKET}/{PREFIX}", "2026-05", tmp_path / "may.parquet")
    assert totals(out)[:2] == (MAY_BILLED, MAY_EFFECTIVE)


def test_create_new_deliveries_read_only_the_newest_execution(s3, cur_rows, tmp_path):
    deliver(s3, "2026-05", [parquet_bytes(cur_rows[:5])], execution="20260602T0100Z-aaaa")
    time.sleep(1.1)  # S3 LastModified has one-second resolution
    deliver(s3, "2026-05", [parquet_bytes(cur_rows)], execution="20260603T0100Z-0000")
    out = aws.pull_bills(f"s3://{BUCKET}/{PREFIX}", "2026-05", tmp_path / "may.parquet")
    assert totals(out)[:2] == (MAY_BILLED, MAY_EFFECTIVE)


def test_focus_export_gzip_csv(s3, data, tmp_path):
    sample = (data / "focus-1.2-aws-sample-40.csv").read_bytes()
    deliver(s3, "2026-05", [gzip.compress(sample)], export="gpu-focus", extension="csv.gz", prefix="focus",
            columns=("BilledCost", "EffectiveCost"))
    out = aws.pull_bills(f"s3://{BUCKET}/focus", "2026-05", tmp_path / "focus.parquet")
    expected = sum(Decimal(r["BilledCost"]) for r in csv.DictReader(io.StringIO(sample.decode())))
    billed, _, _, count = totals(out)
    assert (billed, count) == (expected, 40)
    options = dict(duckdb.sql(f"SELECT CommitmentDiscountType, any_value(x_PurchaseOption) FROM '{out}' "
                              "WHERE ChargeCategory = 'Usage' GROUP BY 1").fetchall())
    assert options == {"Reserved Instance": "reserved_1y", "Savings Plan": "savings_plan_1y", None: "on_demand"}


def test_a_focus_1_4_export_carries_its_provider(s3, data, tmp_path):
    """FOCUS 1.4 names the provider in ServiceProviderName (ProviderName and PublisherName are gone): the pulled
    bill's ProviderName is it, so Mapping rules on ProviderName map its charges."""
    rows = list(csv.DictReader(io.StringIO((data / "focus-1.2-aws-sample-40.csv").read_text())))
    renamed = [{("ServiceProviderName" if k == "ProviderName" else k): v for k, v in r.items() if k != "PublisherName"}
               | {"HostProviderName": "AWS"} for r in rows]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(renamed[0]))
    writer.writeheader()
    writer.writerows(renamed)
    deliver(s3, "2026-05", [gzip.compress(text.getvalue().encode())], export="gpu-focus", extension="csv.gz",
            prefix="focus", columns=("BilledCost", "EffectiveCost"))
    out = aws.pull_bills(f"s3://{BUCKET}/focus", "2026-05", tmp_path / "focus.parquet")
    providers = duckdb.sql(f"SELECT ProviderName, PublisherName, count(*) FROM '{out}' GROUP BY 1, 2").fetchall()
    assert providers == [(rows[0]["ProviderName"], rows[0]["ProviderName"], 40)]
    assert totals(out)[0] == sum(Decimal(r["BilledCost"]) for r in rows)


@pytest.mark.parametrize("setup, month, error, text", [
    ("none", "2026-05", InputError, "no Data Exports manifest for 2026-05"),
    ("two-exports", "2026-05", InputError, "several exports under"),
    ("missing-part", "2026-05", ProviderError, "which is not in s3://billing-exports/cur"),
    ("none", "2026-13", InputError, "month must be 'YYYY-MM'"),
])
def test_failures_write_nothing(s3, cur_rows, tmp_path, setup, month, error, text):
    if setup == "two-exports":
        deliver(s3, "2026-05", [parquet_bytes(cur_rows)], export="a")
        deliver(s3, "2026-05", [parquet_bytes(cur_rows)], export="b")
    elif setup == "missing-part":
        deliver(s3, "2026-05", [parquet_bytes(cur_rows)])
        s3.delete_object(Bucket=BUCKET, Key=f"{PREFIX}/gpu-cur/data/BILLING_PERIOD=2026-05/gpu-cur-00001.snappy.parquet")
    out = tmp_path / "out.parquet"
    with pytest.raises(error, match=text):
        aws.pull_bills(f"s3://{BUCKET}/{PREFIX}", month, out)
    assert list(tmp_path.iterdir()) == []


def test_missing_bucket_is_a_provider_error_with_a_hint(moto, tmp_path):
    with pytest.raises(ProviderError) as info:
        aws.pull_bills("s3://no-such-bucket/cur", "2026-05", tmp_path / "out.parquet")
    assert "NoSuchBucket" in str(info.value) and info.value.hint
    assert not (tmp_path / "out.parquet").exists()


def test_local_copy_of_an_export(cur_rows, tmp_path):
    root = tmp_path / "download"
    (root / "gpu-cur/data/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "gpu-cur/metadata/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "gpu-cur/data/BILLING_PERIOD=2026-05/gpu-cur-00001.csv.gz").write_bytes(csv_gz_bytes(cur_rows))
    (root / "gpu-cur/metadata/BILLING_PERIOD=2026-05/gpu-cur-Manifest.json").write_text(json.dumps({
        "executionId": "x", "columns": [], "dataFiles": [
            f"s3://{BUCKET}/exports/gpu-cur/data/BILLING_PERIOD=2026-05/gpu-cur-00001.csv.gz"]}))
    out = aws.pull_bills(str(root), "2026-05", tmp_path / "may.parquet")
    assert totals(out)[:2] == (MAY_BILLED, MAY_EFFECTIVE)


def test_focus_export_parquet_with_map_columns(data, tmp_path):
    """AWS writes Tags and SkuPriceDetails as map columns, money as doubles, periods as timestamps."""
    with (data / "focus-1.2-aws-sample-40.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    money = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ConsumedQuantity", "PricingQuantity")
    periods = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")
    data_file = parquet_bytes(rows, numeric=money, times=periods, maps=("Tags", "SkuPriceDetails"))
    root = tmp_path / "exports"
    folder = root / "gpu-focus/data/BILLING_PERIOD=2026-05"
    folder.mkdir(parents=True)
    (folder / "gpu-focus-00001.snappy.parquet").write_bytes(data_file)
    (root / "gpu-focus/metadata/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "gpu-focus/metadata/BILLING_PERIOD=2026-05/gpu-focus-Manifest.json").write_text(json.dumps(
        {"columns": [{"name": "BilledCost", "type": "decimal"}],
         "dataFiles": ["s3://b/p/gpu-focus/data/BILLING_PERIOD=2026-05/gpu-focus-00001.snappy.parquet"]}))
    out = aws.pull_bills(str(root), "2026-05", tmp_path / "focus.parquet")
    expected = sum(Decimal(r["BilledCost"]) for r in rows)
    assert totals(out)[0] == expected
    tags, = duckdb.sql(f"SELECT Tags FROM '{out}' WHERE Tags IS NOT NULL LIMIT 1").fetchall()[0]
    assert json.loads(tags)["CostCenter"].startswith("cc-")
    instance_types = {t for (t,) in duckdb.sql(f"SELECT DISTINCT x_InstanceType FROM '{out}'").fetchall()}
    assert "m6i.large" in instance_types


def _local_export(root, body, name="x-00001.csv.gz"):
    """A downloaded copy of a one-month export whose only data file is ``body``."""
    (root / "x/data/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "x/metadata/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / f"x/data/BILLING_PERIOD=2026-05/{name}").write_bytes(body)
    (root / "x/metadata/BILLING_PERIOD=2026-05/x-Manifest.json").write_text(json.dumps(
        {"dataFiles": [f"s3://b/x/data/BILLING_PERIOD=2026-05/{name}"]}))
    return f"x/data/BILLING_PERIOD=2026-05/{name}"


def _cur_with(rows, row, column, value):
    rows[row - 1][column] = value
    return csv_gz_bytes(rows)


def _without(rows, column):
    return csv_gz_bytes([{k: v for k, v in r.items() if k != column} for r in rows])


@pytest.mark.parametrize("make, where, text", [
    (lambda cur, focus: _cur_with(cur, 4, "line_item_usage_start_date", "yesterday"),
     "row 4, column line_item_usage_start_date", "'yesterday' is not an ISO 8601 date-time"),
    (lambda cur, focus: _cur_with(cur, 7, "line_item_unblended_cost", "n/a"),
     "row 7, column line_item_unblended_cost", "'n/a' is not a plain decimal number"),
    (lambda cur, focus: _cur_with(cur, 2, "line_item_unblended_cost", "12,5"),
     "row 2, column line_item_unblended_cost", "'12,5' is not a plain decimal number"),
    (lambda cur, focus: _cur_with(cur, 4, "reservation_net_unused_recurring_fee", "1.2.3"),
     "row 4, column reservation_net_unused_recurring_fee", "not a plain decimal number"),
    (lambda cur, focus: _without(cur, "line_item_unblended_cost"), "", "the export lacks line_item_unblended_cost"),
    (lambda cur, focus: _without(focus, "EffectiveCost"), "", "the export lacks EffectiveCost"),
    (lambda cur, focus: _cur_with(focus, 5, "ChargePeriodStart", "05/01/2026"),
     "row 5, column ChargePeriodStart", "'05/01/2026' is not an ISO 8601 date-time"),
    (lambda cur, focus: csv_gz_bytes(cur)[:60], "", "data file is damaged"),
    (lambda cur, focus: b"PAR1" + b"\0" * 40 + b"PAR1", "", "data file is damaged"),
])
def test_a_bad_export_file_names_file_row_and_column_and_writes_nothing(cur_rows, data, tmp_path, capsys, make,
                                                                        where, text):
    with (data / "focus-1.2-aws-sample-40.csv").open(newline="") as handle:
        focus_rows = list(csv.DictReader(handle))
    key = _local_export(tmp_path / "exports", make(cur_rows, focus_rows))
    out = tmp_path / "may.parquet"
    with pytest.raises(InputError, match=text) as info:
        aws.pull_bills(str(tmp_path / "exports"), "2026-05", out)
    assert str(info.value.where) == ", ".join(part for part in (key, where) if part)
    assert info.value.hint
    from finops.cli import main

    assert main(["bills", "pull", "--provider", "aws", "--source", str(tmp_path / "exports"), "--month", "2026-05",
                 "--out", str(out)]) == 2
    assert text in capsys.readouterr().err and not out.exists()


def test_a_failed_pull_leaves_the_previous_file_untouched(cur_rows, tmp_path):
    root = tmp_path / "exports"
    (root / "x/data/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "x/metadata/BILLING_PERIOD=2026-05").mkdir(parents=True)
    cur_rows[11]["line_item_line_item_type"] = "MysteryFee"  # the 12th line item of the file
    (root / "x/data/BILLING_PERIOD=2026-05/x-00001.csv.gz").write_bytes(csv_gz_bytes(cur_rows))
    (root / "x/metadata/BILLING_PERIOD=2026-05/x-Manifest.json").write_text(json.dumps(
        {"dataFiles": ["s3://b/x/data/BILLING_PERIOD=2026-05/x-00001.csv.gz"]}))
    from connectors.focus_table import write_focus_parquet

    out = tmp_path / "may.parquet"
    previous = write_focus_parquet([], out).read_bytes()  # an earlier pull, the only file a pull replaces
    with pytest.raises(InputError, match="row 12, column line_item_line_item_type"):
        aws.pull_bills(str(root), "2026-05", out)
    assert out.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exports", "may.parquet"]


def test_export_files_are_read_in_batches(cur_rows, tmp_path):
    from connectors.aws.exports import LocalExportStore, iter_record_batches

    (tmp_path / "part.csv.gz").write_bytes(csv_gz_bytes(cur_rows))
    (tmp_path / "part.parquet").write_bytes(parquet_bytes(cur_rows))
    store = LocalExportStore(tmp_path)
    for key in ("part.csv.gz", "part.parquet"):
        batches = list(iter_record_batches(store, key, batch_size=5))
        assert [len(b) for b in batches] == [5, 5, 4]
        assert [b[0]["identity_line_item_id"] for b in batches] == ["li-001", "li-006", "li-011"]
