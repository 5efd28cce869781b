"""Demand profiles from actual usage: GPU-hours per hour from FOCUS bills.

Each FOCUS usage row with ``x_GpuHours`` (the connectors fill it: consumed instance-hours x GPUs per
instance) is spread evenly over the hours of its charge period; the profile is the sum per hour, in
GPUs, from the first to the last hour any row covers (hours no row covers count as zero). Committed
and on-demand usage count alike: the profile is what was used, whatever paid for it. Filters keep
one instance type and/or region (a pool). The same bill given twice (in any format) is refused.

>>> from finops.reconcile.sample_bills import sample_bill_paths
>>> profile_from_bills(sample_bill_paths()).units.size    # the samples carry no GPU-hours
0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np

from ..errors import InputError
from ..reconcile.bills import VIEW, located_errors, open_bills
from ..reconcile.fingerprint import refuse_identical_files

__all__ = ["UsageProfile", "profile_from_bills"]

# FOCUS columns a pool filters on (DuckDB column names ignore case: constants, not literals in a body)
_INSTANCE_TYPE, _REGION = "x_InstanceType", "RegionId"


@dataclass(frozen=True)
class UsageProfile:
    """GPUs in use each hour from ``start`` (UTC), one value per hour."""

    start: datetime | None
    units: np.ndarray

    def hours(self) -> list[datetime]:
        """The timestamp of each hour (for a demand CSV with ISO hours)."""
        if self.start is None:
            return []
        return [self.start + timedelta(hours=h) for h in range(len(self.units))]


def profile_from_bills(paths: Sequence[str | Path], *, instance_type: str | None = None,
                       region: str | None = None, gpus_per_unit: int = 1) -> UsageProfile:
    """Hourly units in use (GPUs / ``gpus_per_unit``: 8 counts p5.48xlarge instances), from the FOCUS
    bill files ``paths`` (Parquet, CSV or gzip CSV)."""
    if gpus_per_unit < 1:
        raise InputError(f"gpus per unit must be at least 1, got {gpus_per_unit}")
    con = duckdb.connect()
    files = open_bills(con, [Path(p) for p in paths])
    filters, parameters = [], []
    for column, value in ((_INSTANCE_TYPE, instance_type), (_REGION, region)):
        if value:
            filters.append(f"AND lower({column}) = lower(?)")
            parameters.append(value)
    with located_errors(files):  # a bad value met by a scan: named with its file, row and column
        refuse_identical_files(con, files)  # the same bill as CSV and Parquet would count its usage twice
        rows = _hourly_gpus(con, filters, parameters)
    if not rows:
        return UsageProfile(None, np.zeros(0))
    start = rows[0][0]
    units = np.zeros(int((rows[-1][0] - start) / timedelta(hours=1)) + 1)
    for hour, gpus in rows:
        units[int((hour - start) / timedelta(hours=1))] = gpus / gpus_per_unit
    return UsageProfile(start, units)


def _hourly_gpus(con: duckdb.DuckDBPyConnection, filters: list[str], parameters: list[str]) -> list[tuple]:
    """(hour, GPUs in use) of the usage charges of :data:`VIEW` that pass ``filters``, hour by hour."""
    return con.execute(f"""
        WITH used AS (
            SELECT date_trunc('hour', ChargePeriodStart) AS first_hour,
                   greatest(date_diff('hour', date_trunc('hour', ChargePeriodStart), ChargePeriodEnd), 1) AS hours,
                   CAST(x_GpuHours AS DOUBLE) AS gpu_hours
            FROM {VIEW}
            WHERE ChargeCategory = 'Usage' AND x_GpuHours > 0 {' '.join(filters)})
        SELECT first_hour + to_hours(h) AS hour, sum(gpu_hours / hours) AS gpus
        FROM used, range(hours) AS r(h)
        GROUP BY ALL ORDER BY hour""", parameters).fetchall()
