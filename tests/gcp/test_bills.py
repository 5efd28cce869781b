"""GCP billing exports -> FOCUS: the month-scoped BigQuery query, the three file formats, credits."""

from __future__ import annotations

import json
from datetime import UTC
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot
from sqlglot import exp

import connectors
from connectors.gcp.bills import build_query, pull_bills
from connectors.gcp.normalize import export_row
from finops.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures"
JSONL = FIXTURES / "billing_export_detailed.jsonl"
MAY = [json.loads(line) for line in JSONL.read_text().splitlines() if json.loads(line)["invoice"]["month"] == "202605"]


# ---- the BigQuery query -------------------------------------------------------------------------------
@pytest.mark.parametrize("table, column, parameter", [
    ("gcp_billing_export_v1_01A2B3_C4D5E6_F70819", "invoice.month", ("invoice_month", "STRING", "202605")),
    ("gcp_billing_export_resource_v1_01A2B3_C4D5E6_F70819", "invoice.month", ("invoice_month", "STRING", "202605")),
    ("gcp_billing_export_focus_01A2B3_C4D5E6_F70819", "BillingPeriodStart", ("period_start", "TIMESTAMP", None)),
])
def test_query_is_scoped_to_the_invoice_month_and_parses_as_bigquery(table, column, parameter):
    query = build_query(f"bq://acme-billing.billing_ds.{table}", "2026-05")
    tree = sqlglot.parse_one(query.sql, read="bigquery")
    assert tree.find(exp.Table).sql(dialect="bigquery") == f"`acme-billing.billing_ds.{table}`"
    where = tree.find(exp.Where).this
    assert isinstance(where, exp.EQ) and where.this.sql(dialect="bigquery") == column
    assert where.expression.sql(dialect="bigquery") == f"@{parameter[0]}"
    name, kind, value = query.parameters[0]
    assert (name, kind) == parameter[:2] and (value == parameter[2] or str(value) == "2026-05-01 00:00:00")


@pytest.mark.parametrize("source, month, message", [
    ("bq://acme.billing", "2026-05", "not a BigQuery table"),
    ("bq://acme.billing.t`; DROP TABLE x; --", "2026-05", "not a BigQuery table"),
    ("bq://acme.billing.gcp_billing_export_v1_X", "2026-13", "YYYY-MM"),
    ("bq://acme.billing.gcp_billing_export_v1_X", "May 2026", "YYYY-MM"),
])
def test_bad_sources_and_months_are_input_errors(source, month, message):
    with pytest.raises(InputError, match=message):
        build_query(source, month)


# ---- files ----------------------------------------------------------------------------------------------
_PAIRS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
BIGQUERY_SCHEMA = pa.schema([
    ("billing_account_id", pa.string()),
    ("service", pa.struct([("id", pa.string()), ("description", pa.string())])),
    ("sku", pa.struct([("id", pa.string()), ("description", pa.string())])),
    ("usage_start_time", pa.timestamp("us", tz="UTC")), ("usage_end_time", pa.timestamp("us", tz="UTC")),
    ("project", pa.struct([("id", pa.string()), ("number", pa.string()), ("name", pa.string()), ("labels", _PAIRS),
                           ("ancestry_numbers", pa.string())])),
    ("labels", _PAIRS), ("system_labels", _PAIRS),
    ("location", pa.struct([("location", pa.string()), ("country", pa.string()), ("region", pa.string()),
                            ("zone", pa.string())])),
    ("tags", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string()), ("inherited", pa.bool_()),
                                 ("namespace", pa.string())]))),
    ("resource", pa.struct([("name", pa.string()), ("global_name", pa.string())])),
    ("cost", pa.float64()), ("currency", pa.string()), ("currency_conversion_rate", pa.float64()),
    ("cost_at_list", pa.float64()),
    ("usage", pa.struct([("amount", pa.float64()), ("unit", pa.string()), ("amount_in_pricing_units", pa.float64()),
                         ("pricing_unit", pa.string())])),
    ("credits", pa.list_(pa.struct([("name", pa.string()), ("amount", pa.float64()), ("full_name", pa.string()),
                                    ("id", pa.string()), ("type", pa.string())]))),
    ("invoice", pa.struct([("month", pa.string()), ("publisher_type", pa.string())])),
    ("cost_type", pa.string()),
])


def _parquet(tmp_path: Path) -> Path:
    from datetime import datetime

    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    for row in rows:
        for key in ("usage_start_time", "usage_end_time"):
            row[key] = datetime.fromisoformat(row[key].replace(" UTC", "+00:00"))
    path = tmp_path / "export.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=BIGQUERY_SCHEMA), path)
    return path


def _source(kind: str, tmp_path: Path) -> Path:
    return {"csv": FIXTURES / "billing_export_standard.csv", "jsonl": JSONL}.get(kind) or _parquet(tmp_path)


def _read(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet"])
def test_each_file_format_gives_the_same_focus_rows(kind, tmp_path):
    out = connectors.provider("gcp").pull_bills(str(_source(kind, tmp_path)), "2026-05", tmp_path / "focus.parquet")
    rows = _read(out)
    invoice_total = sum(Decimal(str(r["cost"])) + sum(Decimal(str(c["amount"])) for c in r["credits"]) for r in MAY)
    assert len(rows) == len(MAY) + sum(len(r["credits"]) for r in MAY)
    assert sum(r["BilledCost"] for r in rows) == invoice_total
    assert sum(r["EffectiveCost"] for r in rows) == invoice_total
    gpu_hours = {(r["x_GpuModel"], r["x_PurchaseOption"]): r["x_GpuHours"] for r in rows if r["x_GpuHours"]}
    assert gpu_hours == {("h100-sxm", "cud"): Decimal(8), ("l4", "spot"): Decimal(1), ("tpu-v5e", "on_demand"): Decimal(4)}
    assert {r["ChargeCategory"] for r in rows} == {"Usage", "Purchase", "Credit", "Tax"}
    h100 = next(r for r in rows if r["ChargeDescription"].startswith("Nvidia H100") and r["ChargeCategory"] == "Usage")
    assert json.loads(h100["Tags"]) == {"cost-center": "cc-42", "env": "prod", "team": "llm"}
    assert (h100["x_InstanceType"], h100["x_GpuCount"], h100["SubAccountId"], h100["RegionId"]) == \
        ("a3-highgpu-8g", 8, "acme-llm-prod", "us-central1")
    assert str(h100["ChargePeriodStart"]) == "2026-05-03 10:00:00" and str(h100["BillingPeriodEnd"]) == "2026-06-01 00:00:00"


def test_formats_agree_row_by_row(tmp_path):
    results = []
    for kind in ("csv", "jsonl", "parquet"):
        out = pull_bills(str(_source(kind, tmp_path)), "2026-05", tmp_path / f"{kind}.parquet")
        results.append([{k: v for k, v in r.items() if not k.startswith("Resource")
                         and k not in ("ContractedUnitPrice", "PricingCurrencyContractedUnitPrice")}
                        for r in _read(out)])
    assert results[0] == results[1] == results[2]


def test_the_focus_export_gets_gpu_columns(tmp_path):
    out = pull_bills(str(FIXTURES / "focus_export_sample.csv"), "2026-05", tmp_path / "focus.parquet")
    rows = _read(out)
    vm = next(r for r in rows if r["x_InstanceType"] == "a3-highgpu-8g")
    assert (vm["x_GpuModel"], vm["x_GpuCount"], vm["x_GpuHours"], vm["x_PurchaseOption"]) == ("h100-sxm", 8, 8, "on_demand")
    spot = next(r for r in rows if r["x_GpuModel"] == "l4")
    assert (spot["x_GpuHours"], spot["x_PurchaseOption"]) == (2, "spot")
    assert {r["x_PurchaseOption"] for r in rows if r["CommitmentDiscountId"]} == {"cud_1y"}
    assert sum(r["BilledCost"] for r in rows) == sum(Decimal(line.split(",")[18]) for line in
                                                     (FIXTURES / "focus_export_sample.csv").read_text().splitlines()[1:])


def test_a_month_without_rows_or_a_broken_file_writes_nothing(tmp_path):
    out = tmp_path / "focus.parquet"
    out.write_bytes(b"previous")
    with pytest.raises(InputError, match="no billing rows for 2026-03"):
        pull_bills(str(JSONL), "2026-03", out)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"cost": 1.0, "invoice": {"month": "202605"}}\n{not json\n')
    with pytest.raises(InputError, match="broken.jsonl"):
        pull_bills(str(broken), "2026-05", out)
    with pytest.raises(InputError, match="cannot read bills"):
        pull_bills(str(tmp_path / "export.xlsx"), "2026-05", out)
    assert out.read_bytes() == b"previous" and sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "focus.parquet"]



def _standard_csv_with(tmp_path: Path, line: int, column: str, value: str) -> Path:
    import csv

    rows = list(csv.reader((FIXTURES / "billing_export_standard.csv").open(encoding="utf-8")))
    rows[line - 1][rows[0].index(column)] = value
    path = tmp_path / "export.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


@pytest.mark.parametrize("line, column, value, message", [
    (3, "cost", "abc", "export.csv, row 3, column cost: expected a number, got 'abc'"),
    (5, "usage_start_time", "yesterday", "export.csv, row 5, column usage_start_time: not a valid value"),
    (2, "credits", '[{"name": "x", "amount": "lots", "type": "PROMOTION"}]', "export.csv, row 2, column credits"),
])
def test_a_bad_value_names_file_row_and_column_and_writes_nothing(tmp_path, line, column, value, message):
    out = tmp_path / "focus.parquet"
    with pytest.raises(InputError) as info:
        pull_bills(str(_standard_csv_with(tmp_path, line, column, value)), "2026-05", out)
    assert message in str(info.value) and info.value.hint and not out.exists()


@pytest.mark.parametrize("content, missing", [
    ('{"invoice": {"month": "202605"}, "cost": 1.5}\n', "currency, usage_start_time, sku.description"),
    ('{"BilledCost": 1.5, "BillingPeriodStart": "2026-05-01"}\n', "EffectiveCost, ChargePeriodStart"),
])
def test_a_file_that_is_not_a_billing_export_is_refused(tmp_path, content, missing):
    path = tmp_path / "other.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=f"not a GCP billing export: it has no {missing}"):
        pull_bills(str(path), "2026-05", tmp_path / "focus.parquet")
    assert [p.name for p in tmp_path.iterdir()] == ["other.jsonl"]

# ---- credits -> FOCUS ----------------------------------------------------------------------------------
def _usage(cost: str, *credits: tuple[str, str], description: str = "Nvidia L4 GPU running in Americas") -> dict:
    return {"cost": cost, "cost_type": "regular", "currency": "USD", "invoice": {"month": "202605"},
            "sku": {"description": description}, "usage": {"amount_in_pricing_units": "1", "pricing_unit": "hour"},
            "credits": [{"type": t, "amount": a, "name": t.title(), "id": f"id-{t}", "full_name": None}
                        for t, a in credits]}


@pytest.mark.parametrize("credit_type, usage_effective, credit_effective, commitment_category", [
    ("COMMITTED_USAGE_DISCOUNT", "4", "0", "Usage"),
    ("COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE", "4", "0", "Spend"),
    ("SUSTAINED_USAGE_DISCOUNT", "4", "0", None),
    ("DISCOUNT", "4", "0", None),
    ("FREE_TIER", "4", "0", None),
    ("PROMOTION", "10", "-6", None),
    ("SOME_FUTURE_CREDIT", "10", "-6", None),
])
def test_credit_types_map_to_focus(credit_type, usage_effective, credit_effective, commitment_category):
    usage, credit = export_row(_usage("10", (credit_type, "-6")))
    assert (usage["ChargeCategory"], usage["BilledCost"], usage["EffectiveCost"]) == ("Usage", 10, Decimal(usage_effective))
    assert (credit["ChargeCategory"], credit["BilledCost"], credit["EffectiveCost"]) == \
        ("Credit", Decimal(-6), Decimal(credit_effective))
    assert usage["EffectiveCost"] + credit["EffectiveCost"] == usage["BilledCost"] + credit["BilledCost"]
    assert credit["CommitmentDiscountCategory"] == commitment_category
    assert (usage["x_GpuHours"], credit["x_GpuHours"]) == (1, None)
    assert usage["x_PurchaseOption"] == ("cud" if commitment_category else "on_demand")


@pytest.mark.parametrize("cost_type, description, category, charge_class, frequency", [
    ("regular", "Nvidia L4 GPU running in Americas", "Usage", None, "Usage-Based"),
    ("regular", "Commitment v1: Nvidia L4 GPU in Americas for 3 Years", "Purchase", None, "Recurring"),
    ("tax", "Tax", "Tax", None, "Usage-Based"),
    ("adjustment", "Billing adjustment", "Adjustment", "Correction", "Usage-Based"),
    ("rounding_error", "Rounding", "Adjustment", None, "Usage-Based"),
])
def test_cost_types_map_to_charge_categories(cost_type, description, category, charge_class, frequency):
    row = {**_usage("3", description=description), "cost_type": cost_type}
    (record,) = export_row(row)
    assert (record["ChargeCategory"], record["ChargeClass"], record["ChargeFrequency"]) == (category, charge_class, frequency)
    assert record["x_GpuHours"] == (1 if category == "Usage" else None)
    if category == "Purchase":
        assert (record["x_PurchaseOption"], record["CommitmentDiscountCategory"]) == ("cud_3y", "Usage")


# ---- BigQuery ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("table", ["gcp_billing_export_resource_v1_01A2B3_C4D5E6_F70819",
                                   "gcp_billing_export_v1_01A2B3_C4D5E6_F70819"])
def test_bigquery_export_is_read_with_the_month_parameter(tmp_path, monkeypatch, table):
    from .bigquery_server import BigQueryServer

    every_row = [json.loads(line) for line in JSONL.read_text().splitlines()]
    server = BigQueryServer(every_row)
    with server as endpoint:
        monkeypatch.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", endpoint)
        out = pull_bills(f"bq://acme-billing.billing_ds.{table}", "2026-05", tmp_path / "focus.parquet")
    (request,) = server.requests
    assert request["path"].startswith("/bigquery/v2/projects/acme-billing/queries")
    assert request["body"]["useLegacySql"] is False and "@invoice_month" in request["body"]["query"]
    assert request["body"]["queryParameters"] == [
        {"name": "invoice_month", "parameterType": {"type": "STRING"}, "parameterValue": {"value": "202605"}}]
    from_bigquery = _read(out)
    from_file = _read(pull_bills(str(JSONL), "2026-05", tmp_path / "file.parquet"))
    assert from_bigquery == from_file


def test_the_bigquery_focus_view_is_read_by_billing_period_like_its_csv(tmp_path, monkeypatch):
    import csv

    from .bigquery_server import BigQueryServer, focus_schema

    sample = FIXTURES / "focus_export_sample.csv"
    with sample.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [{k: (v if v != "" else None) for k, v in row.items()} for row in reader]
        columns = list(reader.fieldnames or [])
    april = {**rows[0], "BillingPeriodStart": "2026-04-01T00:00:00Z", "BilledCost": "1000"}
    server = BigQueryServer([*rows, april], schema=focus_schema(columns))
    with server as endpoint:
        monkeypatch.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", endpoint)
        out = pull_bills("bq://acme-billing.billing_ds.gcp_billing_export_focus_01A2B3_C4D5E6_F70819", "2026-05",
                         tmp_path / "focus.parquet")
    (request,) = server.requests
    assert "WHERE BillingPeriodStart = @period_start" in request["body"]["query"]
    assert request["body"]["queryParameters"][0]["parameterType"] == {"type": "TIMESTAMP"}
    from_file = _read(pull_bills(str(sample), "2026-05", tmp_path / "file.parquet"))
    # BigQuery's JSON columns come back as objects, the CSV has JSON text: both give the same Tags text
    assert _read(out) == from_file and len(from_file) == len(rows)


def test_an_unreachable_bigquery_is_retried_within_the_budget_then_transient(tmp_path, monkeypatch):
    import socket
    import time

    from finops.errors import TransientProviderError

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("FINOPS_GCP_RETRY_TIMEOUT", "1")
    started = time.monotonic()
    with pytest.raises(TransientProviderError, match="cannot reach the BigQuery") as info:
        pull_bills("bq://acme-billing.billing_ds.gcp_billing_export_v1_X", "2026-05", tmp_path / "f.parquet")
    assert time.monotonic() - started < 10 and "FINOPS_GCP_BIGQUERY_ENDPOINT" in info.value.hint
    assert not list(tmp_path.iterdir())


def test_bigquery_refusal_is_a_provider_error_and_writes_nothing(tmp_path, monkeypatch):
    from finops.errors import ProviderError

    from .bigquery_server import BigQueryServer

    with BigQueryServer([], fail_with=403) as endpoint:
        monkeypatch.setenv("FINOPS_GCP_BIGQUERY_ENDPOINT", endpoint)
        with pytest.raises(ProviderError, match="BigQuery refused"):
            pull_bills("bq://acme-billing.billing_ds.gcp_billing_export_v1_X", "2026-05", tmp_path / "f.parquet")
    assert not list(tmp_path.iterdir())


def test_cli_pull_writes_focus_that_reconcile_aggregates(tmp_path, capsys):
    import duckdb

    from finops.cli import main
    from finops.reconcile.bills import open_bills
    from finops.reconcile.engine import run_aggregation

    out = tmp_path / "gcp-2026-05.parquet"
    code = main(["bills", "pull", "--provider", "gcp", "--source", str(JSONL), "--month", "2026-05", "--out", str(out)])
    assert code == 0 and "wrote 11 FOCUS rows" in capsys.readouterr().out
    with duckdb.connect() as con:
        groups = run_aggregation(con, open_bills(con, [out]), "2026-05").groups
    invoice_total = sum(Decimal(str(r["cost"])) + sum(Decimal(str(c["amount"])) for c in r["credits"]) for r in MAY)
    assert sum(g.billed_cost for g in groups) == sum(g.effective_cost for g in groups) == invoice_total
    assert sum(g.gpu_hours or 0 for g in groups) == 13
    assert {g.purchase_option for g in groups if g.gpu_hours} == {"cud", "spot", "on_demand"}


def test_cli_pull_of_a_missing_month_fails_cleanly(tmp_path, capsys):
    from finops.cli import main

    out = tmp_path / "x.parquet"
    code = main(["bills", "pull", "--provider", "gcp", "--source", str(JSONL), "--month", "2025-01", "--out", str(out)])
    assert code == 2 and not out.exists() and "no billing rows for 2025-01" in capsys.readouterr().err


def test_focus_rows_from_bigquery_types_are_normalized():
    from datetime import datetime

    from connectors.gcp.normalize import focus_export_row

    row = {"ProviderName": "Google Cloud", "ChargeCategory": "Usage", "BilledCost": 1.25, "EffectiveCost": 1.25,
           "BillingCurrency": "USD", "PricingCategory": "Dynamic",
           "ChargePeriodStart": datetime(2026, 5, 2, 3, tzinfo=UTC),
           "Tags": [{"key": "team", "value": "llm"}], "SkuPriceDetails": {"InstanceType": "g2-standard-4"},
           "ConsumedQuantity": 2.0, "ConsumedUnit": "Hours", "ChargeDescription": "G2 Instance Core running in Americas"}
    record = focus_export_row(row)
    assert (record["BilledCost"], record["Tags"], record["ChargePeriodStart"]) == \
        (Decimal("1.25"), '{"team": "llm"}', datetime(2026, 5, 2, 3))
    # a vCPU SKU row of a GPU VM carries the VM's GPU but not its GPU-hours (those are on the GPU SKU row)
    assert (record["x_InstanceType"], record["x_GpuModel"], record["x_GpuHours"], record["x_PurchaseOption"]) == \
        ("g2-standard-4", "l4", None, "spot")
    vm_row = focus_export_row({**row, "ChargeDescription": "g2-standard-4 VM running in Americas"})
    assert vm_row["x_GpuHours"] == Decimal("2.0")


def test_a_focus_1_3_or_1_4_row_keeps_its_provider_and_allocated_tags():
    from connectors.gcp.normalize import focus_export_row

    row = {"ServiceProviderName": "Google Cloud", "HostProviderName": "Google Cloud", "ChargeCategory": "Usage",
           "BilledCost": "3.5", "EffectiveCost": "3.5", "BillingCurrency": "USD",
           "Tags": [{"key": "cluster", "value": "shared"}],
           "AllocatedTags": [{"key": "team", "value": "search"}], "AllocatedResourceId": "pod/search-1"}
    record = focus_export_row(row)
    assert (record["ProviderName"], record["PublisherName"]) == ("Google Cloud", "Google Cloud")
    assert record["Tags"] == '{"cluster": "shared", "team": "search"}'
