"""Commitments already bought, read from the FOCUS bills: sunk capacity for the next plan.

A commitment is a distinct ``CommitmentDiscountId`` with a ``Purchase`` row. One counted in instance
hours (``CommitmentDiscountUnit = 'Hours'``: a reserved instance, a resource-based CUD) is one
instance of capacity from the purchase's ``ChargePeriodStart`` for ``CommitmentDiscountQuantity``
hours, so it ends at ``start + quantity hours``. Its plan line is the Mapping sheet's for the purchase
row (provider, sub-account, service, instance type, region, tags), given by the same SQL ``CASE`` the
reconciliation maps charges with (:func:`~finops.reconcile.mapping.plan_line_sql`); it covers the
line's instances in its region (and of its instance type, when the bill names one: ``x_InstanceType``,
else ``SkuPriceDetails.InstanceType``). Its unused balance is the ``EffectiveCost`` of
its rows with ``CommitmentDiscountStatus = 'Unused'`` in the bills. A spend-based commitment (FOCUS type
``Spend``, unit a currency: savings plans, spend CUDs; :func:`finops.commitments.basis_of`) buys no fixed
number of instances and is listed, not counted.

What an instance-hour commitment costs a later month (:meth:`SunkCommitment.amortization`) is its
straight-line amortization over the hours ``h`` of that month it still runs, of a month of ``H`` hours:

    amortization = upfront x h / term_hours + recurring x h / H

``upfront`` the BilledCost of its one-time purchase rows, ``term_hours`` its
``CommitmentDiscountQuantity``, ``recurring`` the BilledCost of its recurring purchase rows in the bills
(one month's fee: the bills are the month's). A spend-based commitment states no term: not amortized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from ..commitments import basis_of
from ..money import Money
from ..reconcile.aggregation import INSTANCE_TYPE
from ..reconcile.mapping import UNMAPPED, plan_line_sql
from ..reconcile.plan import MappingRule

__all__ = ["SunkCommitment", "sunk_commitments"]


@dataclass(frozen=True)
class SunkCommitment:
    """One commitment already bought: ``units`` instances until ``ends`` (None: spend-based, not counted)."""

    commitment_id: str
    plan_line: str
    kind: str
    units: int
    region: str
    instance_type: str
    starts: datetime
    ends: datetime | None
    unused: Money
    upfront: Money
    recurring: Money

    def covers(self, plan_line: str, region: str, instance_type: str) -> bool:
        """Whether this commitment is capacity of a plan line's instances (region and type when the bill names them)."""
        return (self.units > 0 and self.plan_line == plan_line and self.region.lower() in ("", region.lower())
                and self.instance_type.lower() in ("", instance_type.lower()))

    def hours_left(self, at: datetime) -> float:
        """Hours of capacity left from ``at``."""
        return 0.0 if self.ends is None else max(0.0, (self.ends - at).total_seconds() / 3600)

    def amortization(self, start: datetime, hours: int) -> Money:
        """Its cost in the ``hours`` from ``start`` (module docstring); zero once ended, or spend-based."""
        if self.ends is None:
            return self.upfront * Decimal(0)
        covered = Decimal(repr(min(self.hours_left(start), float(hours))))
        term = Decimal(repr((self.ends - self.starts).total_seconds() / 3600))
        return self.upfront * (covered / term) + self.recurring * (covered / Decimal(hours))


#: One row per commitment; ``{plan_line}`` is the mapping's CASE over a row's FOCUS columns, and the
#: commitment's fields are those of its (earliest) purchase row.
_QUERY = """
SELECT CommitmentDiscountId,
       arg_min(CommitmentDiscountType, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       arg_min(plan_line, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       arg_min(instance_type, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       arg_min(RegionId, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       min(ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       arg_min(CommitmentDiscountQuantity, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       arg_min(CommitmentDiscountUnit, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       coalesce(sum(EffectiveCost) FILTER (WHERE CommitmentDiscountStatus = 'Unused'), 0),
       coalesce(sum(BilledCost) FILTER (WHERE ChargeCategory = 'Purchase'
                                        AND coalesce(ChargeFrequency, '') <> 'Recurring'), 0),
       coalesce(sum(BilledCost) FILTER (WHERE ChargeCategory = 'Purchase' AND ChargeFrequency = 'Recurring'), 0),
       arg_min(BillingCurrency, ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase')
FROM (
  SELECT *, {plan_line} AS plan_line, {instance_type} AS instance_type
  FROM {view}
  WHERE CommitmentDiscountId IS NOT NULL
) AS charges
GROUP BY CommitmentDiscountId
HAVING count(*) FILTER (WHERE ChargeCategory = 'Purchase') > 0
ORDER BY CommitmentDiscountId
"""


def sunk_commitments(bills: Sequence[Path], mapping: Sequence[MappingRule]) -> list[SunkCommitment]:
    """The commitments bought in ``bills``, each on the plan line the ``mapping`` rules give it."""
    import duckdb

    from ..reconcile.bills import VIEW, located_errors, open_bills

    con = duckdb.connect()
    try:
        files = open_bills(con, [Path(b) for b in bills])
        query = _QUERY.format(view=VIEW, plan_line=plan_line_sql(mapping, instance_type=INSTANCE_TYPE),
                              instance_type=INSTANCE_TYPE)
        with located_errors(files):  # a bad value met by the scan: named with its file, row and column
            rows = con.execute(query).fetchall()
    finally:
        con.close()
    out = []
    for cid, kind, line, instance_type, region, start, quantity, unit, unused, upfront, recurring, currency in rows:
        # a resource commitment counted in instance-hours is capacity; a spend one covers no fixed instances
        by_hours = basis_of(kind, unit) == "resource" and (unit or "").lower() == "hours" and quantity
        start = start.replace(tzinfo=None)
        out.append(SunkCommitment(cid, line or UNMAPPED, kind or "", 1 if by_hours else 0, region or "",
                                  instance_type or "", start,
                                  start + timedelta(hours=float(quantity)) if by_hours else None,
                                  *(Money(Decimal(str(v)), currency or "USD") for v in (unused, upfront, recurring))))
    return out
