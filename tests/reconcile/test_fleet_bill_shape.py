"""The generated fleet bill (:func:`~finops.reconcile.fleet_bill.fleet_bill_sql`) has the shape its docstring
promises: ``rows`` charges from ``resources`` resources, one sub-account per 50 resources and at least 20, every
FOCUS column a bill needs, and it is written where it is asked to be, whatever the path holds."""

from __future__ import annotations

import duckdb
import pytest

from finops.reconcile.bills import open_bills
from finops.reconcile.fleet_bill import fleet_bill_sql


@pytest.mark.parametrize(("rows", "resources", "accounts"), [
    (270, 90, 20),      # 90 // 50 = 1: at least 20
    (2_200, 1_100, 22),  # 1,100 // 50 = 22
])
def test_rows_resources_and_sub_accounts(tmp_path, rows, resources, accounts):
    path = tmp_path / "fleet's May bill.parquet"  # a quote in the path is written as one
    duckdb.connect().execute(fleet_bill_sql(path, rows=rows, resources=resources))
    con = duckdb.connect()
    open_bills(con, [path])  # refuses a file without every mandatory FOCUS column
    got = con.execute("SELECT count(*), count(DISTINCT ResourceId), list(DISTINCT SubAccountId ORDER BY SubAccountId)"
                      " FROM focus_bills").fetchone()
    assert got == (rows, resources, [f"2000000{a:05d}" for a in range(accounts)])
    # each resource keeps its own sub-account, provider and service across its hours
    assert con.execute("SELECT max(n) FROM (SELECT count(DISTINCT (SubAccountId, ProviderName, ServiceName)) AS n "
                       "FROM focus_bills GROUP BY ResourceId)").fetchone() == (1,)


def test_hours_late_rows_and_commitments(tmp_path):
    """33,000 rows of 30 resources: hour (i // 30) % 744 of May; one row in 33 on April's invoice; resources
    0, 7, 14, 21, 28 (one in 7) on a commitment, one of each one's rows in 10 unused."""
    path = tmp_path / "fleet.parquet"
    duckdb.connect().execute(fleet_bill_sql(path, rows=33_000, resources=30))
    con = duckdb.connect()
    late, hours, committed = con.execute(
        f"SELECT count(*) FILTER (WHERE BillingPeriodStart = TIMESTAMP '2026-04-01'), "
        f"count(DISTINCT ChargePeriodStart) FILTER (WHERE BillingPeriodStart = TIMESTAMP '2026-05-01'), "
        f"list(DISTINCT ResourceId ORDER BY ResourceId) FILTER (WHERE CommitmentDiscountId IS NOT NULL) "
        f"FROM '{path}'").fetchone()
    assert (late, hours) == (1_000, 744)
    assert committed == sorted(f"res-{r}" for r in (0, 7, 14, 21, 28))
