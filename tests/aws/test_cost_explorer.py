"""Cost Explorer as the light bill source, against moto's server over HTTP. moto answers
``get_cost_and_usage`` from a queue of configured results (its documented ``/moto-api/static/ce/
cost-and-usage-results`` endpoint): the first distinct request (by service) gets the first result, the
second (EC2 by instance type and purchase type) the second."""

from __future__ import annotations

import json
import urllib.request
from decimal import Decimal

import duckdb
import pytest

from finops.cli import main

PERIOD = {"Start": "2026-05-01", "End": "2026-06-01"}


def _money(amount):
    return {"Amount": amount, "Unit": "USD"}


BY_SERVICE = {"ResultsByTime": [{"TimePeriod": PERIOD, "Estimated": False, "Total": {}, "Groups": [
    {"Keys": ["Amazon Elastic Compute Cloud - Compute"],
     "Metrics": {"AmortizedCost": _money("4100.50"), "UnblendedCost": _money("4500.00"),
                 "UsageQuantity": {"Amount": "900", "Unit": "N/A"}}},
    {"Keys": ["Amazon Simple Storage Service"],
     "Metrics": {"AmortizedCost": _money("120.25"), "UnblendedCost": _money("120.25"),
                 "UsageQuantity": {"Amount": "5000", "Unit": "N/A"}}},
    {"Keys": ["Tax"], "Metrics": {"AmortizedCost": _money("310.00"), "UnblendedCost": _money("310.00"),
                                  "UsageQuantity": {"Amount": "0", "Unit": "N/A"}}}]}],
    "DimensionValueAttributes": []}
BY_INSTANCE = {"ResultsByTime": [{"TimePeriod": PERIOD, "Estimated": False, "Total": {}, "Groups": [
    {"Keys": ["p5.48xlarge", "On Demand Instances"],
     "Metrics": {"AmortizedCost": _money("2201.60"), "UnblendedCost": _money("2201.60"),
                 "UsageQuantity": {"Amount": "40", "Unit": "Hrs"}}},
    {"Keys": ["p5.48xlarge", "Savings Plans"],
     "Metrics": {"AmortizedCost": _money("1498.90"), "UnblendedCost": _money("1898.40"),
                 "UsageQuantity": {"Amount": "40", "Unit": "Hrs"}}},
    {"Keys": ["g6.xlarge", "Spot Instances"],
     "Metrics": {"AmortizedCost": _money("100.00"), "UnblendedCost": _money("100.00"),
                 "UsageQuantity": {"Amount": "300", "Unit": "Hrs"}}}]}],
    "DimensionValueAttributes": []}


@pytest.fixture
def ce_results(moto):
    request = urllib.request.Request(f"{moto}/moto-api/static/ce/cost-and-usage-results", method="POST",
                                     data=json.dumps({"results": [BY_SERVICE, BY_INSTANCE]}).encode(),
                                     headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 201


def test_cost_explorer_month_as_focus(ce_results, tmp_path, capsys, secrets):
    out = tmp_path / "ce.parquet"
    assert main(["bills", "pull", "--provider", "aws", "--source", "ce", "--month", "2026-05",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert all(secret not in captured.out + captured.err for secret in secrets)
    rows = duckdb.sql(f"SELECT ServiceName, x_InstanceType, x_PurchaseOption, BilledCost, EffectiveCost, "
                      f"x_GpuHours, ChargeCategory FROM '{out}'").fetchall()
    d = Decimal
    ec2 = "Amazon Elastic Compute Cloud - Compute"
    assert len(rows) == 6 and set(rows) == {
        ("Amazon Simple Storage Service", None, None, d("120.25"), d("120.25"), None, "Usage"),
        (ec2, "g6.xlarge", "spot", d("100.00"), d("100.00"), d("300"), "Usage"),
        (ec2, "p5.48xlarge", "on_demand", d("2201.60"), d("2201.60"), d("320"), "Usage"),
        (ec2, "p5.48xlarge", "savings_plan", d("1898.40"), d("1498.90"), d("320"), "Usage"),
        (ec2, None, None, d("300.00"), d("300.00"), None, "Usage"),  # EC2 not attributed to an instance type
        ("Tax", None, None, d("310.00"), d("310.00"), None, "Tax"),
    }
    (billed, effective), = duckdb.sql(f"SELECT sum(BilledCost), sum(EffectiveCost) FROM '{out}'").fetchall()
    assert (billed, effective) == (d("4930.25"), d("4530.75"))  # the by-service totals, exactly


def test_cost_explorer_pages_are_all_read():
    import boto3
    from botocore.stub import ANY, Stubber

    from connectors.aws.cost_explorer import fetch_cost_and_usage

    client = boto3.client("ce", region_name="us-east-1", aws_access_key_id="AKIAEXAMPLE",
                          aws_secret_access_key="example")
    stubber = Stubber(client)
    first = {"ResultsByTime": BY_SERVICE["ResultsByTime"], "NextPageToken": "page-2",
             "DimensionValueAttributes": []}
    stubber.add_response("get_cost_and_usage", first)
    stubber.add_response("get_cost_and_usage", BY_SERVICE,
                         {"TimePeriod": PERIOD, "Granularity": "MONTHLY", "Metrics": ANY, "GroupBy": ANY,
                          "NextPageToken": "page-2"})
    stubber.add_response("get_cost_and_usage", BY_INSTANCE)
    with stubber:
        by_service, by_instance = fetch_cost_and_usage(client, "2026-05")
    stubber.assert_no_pending_responses()
    assert (len(by_service), len(by_instance)) == (2, 1)
