"""``finops bills pull --source ce --month A..B``: every month of the range, each with its own figures,
against moto's Cost Explorer over HTTP (results queued per distinct request: each month asks by service,
then by instance type and purchase type)."""

from __future__ import annotations

import json
import urllib.request
from decimal import Decimal

import duckdb
import pytest

from finops.cli import main

EC2 = "Amazon Elastic Compute Cloud - Compute"
#: month -> (EC2 amortized, EC2 unblended, S3, p5 on-demand hours, p5 on-demand cost)
MONTHS = {"2026-03": ("3000.10", "3100.20", "80.05", "30", "1651.20"),
          "2026-04": ("4200.00", "4400.00", "95.50", "45", "2476.80"),
          "2026-05": ("5150.75", "5550.75", "120.25", "60", "3302.40")}
FOLLOWING = {"2026-03": "2026-04", "2026-04": "2026-05", "2026-05": "2026-06"}


def usd(amount: str) -> dict:
    return {"Amount": amount, "Unit": "USD"}


def results(month: str) -> list[dict]:
    ec2_amortized, ec2_unblended, s3, hours, p5 = MONTHS[month]
    period = {"Start": f"{month}-01", "End": f"{FOLLOWING[month]}-01"}
    by_service = {"ResultsByTime": [{"TimePeriod": period, "Estimated": False, "Total": {}, "Groups": [
        {"Keys": [EC2],
         "Metrics": {"AmortizedCost": usd(ec2_amortized), "UnblendedCost": usd(ec2_unblended)}},
        {"Keys": ["Amazon Simple Storage Service"],
         "Metrics": {"AmortizedCost": usd(s3), "UnblendedCost": usd(s3)}},
    ]}], "DimensionValueAttributes": []}
    by_instance = {"ResultsByTime": [{"TimePeriod": period, "Estimated": False, "Total": {}, "Groups": [
        {"Keys": ["p5.48xlarge", "On Demand Instances"],
         "Metrics": {"AmortizedCost": usd(p5), "UnblendedCost": usd(p5),
                     "UsageQuantity": {"Amount": hours, "Unit": "Hrs"}}}]}], "DimensionValueAttributes": []}
    return [by_service, by_instance]


# the range as typed in ASCII, and in full-width digits (NFKC gives the same months)
@pytest.mark.parametrize("months", ["2026-03..2026-05", "\uff12\uff10\uff12\uff16-\uff10\uff13..\uff12\uff10\uff12\uff16-\uff10\uff15"])
def test_a_month_range_pulls_every_month_with_its_own_totals(moto, tmp_path, capsys, months):
    queue = [r for month in MONTHS for r in results(month)]
    request = urllib.request.Request(f"{moto}/moto-api/static/ce/cost-and-usage-results", method="POST",
                                     data=json.dumps({"results": queue}).encode(),
                                     headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 201
    out = tmp_path / "ce.parquet"
    assert main(["bills", "pull", "--provider", "aws", "--source", "ce", "--month", months,
                 "--out", str(out)]) == 0
    capsys.readouterr()
    got = {m: (billed, effective, gpu_hours) for m, billed, effective, gpu_hours in duckdb.connect().execute(
        f"SELECT strftime(ChargePeriodStart, '%Y-%m'), SUM(BilledCost), SUM(EffectiveCost), SUM(x_GpuHours) "
        f"FROM '{out}' GROUP BY 1").fetchall()}
    expected = {}
    for month, (ec2_amortized, ec2_unblended, s3, hours, _) in MONTHS.items():
        # the by-service totals are the month's totals; the p5 rows split EC2, they do not add to it
        expected[month] = (Decimal(ec2_unblended) + Decimal(s3), Decimal(ec2_amortized) + Decimal(s3),
                           Decimal(hours) * 8)
    assert got == expected
    ends = duckdb.connect().execute(
        f"SELECT DISTINCT strftime(ChargePeriodEnd, '%Y-%m-%d') FROM '{out}'").fetchall()
    assert sorted(e for (e,) in ends) == ["2026-04-01", "2026-05-01", "2026-06-01"]
