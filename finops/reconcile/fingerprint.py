"""The same bill given twice, in two formats or exports, found by its charges rather than its bytes.

``may.csv`` beside ``may.parquet``, or a CSV exported again with another column order, quoting, number
or time format, would count a month twice; :func:`~finops.reconcile.bills.open_bills` only refuses
files with the same bytes. Here a file is fingerprinted by the charges of the month it holds, read
through :data:`~finops.reconcile.bills.VIEW` as FOCUS types, so the format does not show:

1. *Shape*, free: with several files the aggregation's one scan groups per file too
   (``charge_groups_sql(VIEW, month, rules, per=FILE_COLUMN)``). A file's shape is its number of charges
   and the sum, over its groups, of ``hash(plan line, dimensions but Tags, row_count)``. A copy has the
   same groups (Tags are left out because a re-export may write their JSON differently; the groups
   still split alike).
2. *Charges*, only for files of the same shape: one more scan of just those files sums
   ``hash(`` :data:`CHARGE_KEY` ``)`` over each charge of the month. The sum is exact (HUGEINT), so row
   order does not matter. Equal number of charges and equal sum: the same bill, refused.

Money and quantities are hashed as DOUBLE. A Parquet export storing costs as DOUBLE reads as a
DECIMAL(38, 10) a few 1e-10 away from the CSV text's, but both round to the same double whenever the
text has at most 10 decimals. Empty text is NULL in both formats (see ``bills._select``).
"""

from __future__ import annotations

import duckdb

from ..errors import InputError, Location
from .aggregation import DIMENSIONS, MonthBasis, month_filter
from .bills import FILE_COLUMN, VIEW, BillFile

__all__ = ["CHARGE_KEY", "refuse_identical_files", "refuse_same_charges"]

#: Columns of :data:`~finops.reconcile.bills.VIEW` that tell one charge from another.
CHARGE_KEY = ("BillingAccountId", "SubAccountId", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory",
              "ResourceId", "SkuPriceId", "CAST(BilledCost AS DOUBLE)", "CAST(EffectiveCost AS DOUBLE)",
              "CAST(ConsumedQuantity AS DOUBLE)")

#: Group columns that a faithful copy keeps exactly (all but the Tags JSON text).
_SHAPE_KEY = ("plan_line", *DIMENSIONS, "sub_account", "region_id")


def refuse_same_charges(con: duckdb.DuckDBPyConnection, files: list[BillFile], groups: str, month: str,
                        basis: MonthBasis) -> None:
    """Raise :class:`InputError` when two of ``files`` hold the same charges of ``month``.

    ``groups`` is a table with the result of ``charge_groups_sql(VIEW, month, rules, per=FILE_COLUMN)`` over
    ``files``. The later file is named with the earlier one. A file without charges in the month adds
    nothing, so it is never a duplicate (it has no groups).

    >>> from finops.reconcile.aggregation import charge_groups_sql
    >>> from finops.reconcile.bills import open_bills
    >>> from finops.reconcile.sample_bills import sample_bill_paths
    >>> con = duckdb.connect()
    >>> files = open_bills(con, sample_bill_paths())
    >>> _ = con.execute("CREATE TABLE g AS " + charge_groups_sql(VIEW, "2026-05", (), per=FILE_COLUMN))
    >>> refuse_same_charges(con, files, "g", "2026-05", "invoice")  # AWS and GCP: other charges, accepted
    """
    shapes = con.execute(f"SELECT {FILE_COLUMN}, SUM(row_count), SUM(hash({', '.join(_SHAPE_KEY)}, row_count)) "
                         f"FROM {groups} GROUP BY 1").fetchall()
    by_shape: dict[tuple[int, int], list[int]] = {}
    for index, rows, shape in shapes:
        by_shape.setdefault((rows, shape), []).append(index)
    alike = sorted(index for same in by_shape.values() if len(same) > 1 for index in same)
    if not alike:
        return
    refuse_identical_files(con, files, alike, where=month_filter(month, basis), what=f"of {month}")


def refuse_identical_files(con: duckdb.DuckDBPyConnection, files: list[BillFile], indices: list[int] | None = None,
                           *, where: str = "1 = 1", what: str = "") -> None:
    """Raise :class:`InputError` when two of ``files`` (those at ``indices``, default all) hold the same
    charges among the rows ``where`` selects: equal count and equal sum of ``hash(CHARGE_KEY)``.

    >>> from finops.reconcile.bills import open_bills
    >>> from finops.reconcile.sample_bills import sample_bill_paths
    >>> con = duckdb.connect()
    >>> refuse_identical_files(con, open_bills(con, sample_bill_paths()))  # AWS and GCP: accepted
    """
    chosen = range(len(files)) if indices is None else indices
    charges = con.execute(
        f"SELECT {FILE_COLUMN}, count(*), SUM(hash({', '.join(CHARGE_KEY)})), SUM(BilledCost), SUM(EffectiveCost) "
        f"FROM {VIEW} WHERE ({where}) AND {FILE_COLUMN} IN ({', '.join(map(str, chosen))}) "
        f"GROUP BY 1 ORDER BY 1").fetchall()
    seen: dict[tuple[int, int], BillFile] = {}
    for index, rows, fingerprint, billed, effective in charges:
        bill = files[index]
        first = seen.setdefault((rows, fingerprint), bill)
        if first is not bill:
            raise InputError(f"same charges as {first.path}: the same {rows:,} charges{' ' + what if what else ''}, "
                             f"BilledCost {billed:,.2f}, EffectiveCost {effective:,.2f}",
                             where=Location(file=str(bill.path)),
                             hint="the same bill in two formats or exports; give it once")
