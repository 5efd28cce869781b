"""Commitments already bought, read from the FOCUS bills: sunk capacity for the next plan.

A commitment is a distinct ``CommitmentDiscountId`` with a ``Purchase`` row. One counted in instance
hours (``CommitmentDiscountUnit = 'Hours'``: a reserved instance, a resource-based CUD) is one
instance of capacity from the purchase's ``ChargePeriodStart`` for ``CommitmentDiscountQuantity``
hours, so it ends at ``start + quantity hours``. Its plan line is the Mapping sheet's (the purchase
row's provider, sub-account, service, region, tags); it covers the line's instances in its region
(and of its instance type, when the bill names one in ``x_InstanceType``). Its unused balance is the ``EffectiveCost`` of
its rows with ``CommitmentDiscountStatus = 'Unused'`` in the bills. A spend-based commitment (unit a
currency: savings plans, spend CUDs) buys no fixed number of instances and is listed, not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from ..money import Money
from ..reconcile.mapping import Charge, Mapper
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

    def covers(self, plan_line: str, region: str, instance_type: str) -> bool:
        """Whether this commitment is capacity of a plan line's instances (region and type when the bill names them)."""
        return (self.units > 0 and self.plan_line == plan_line and self.region.lower() in ("", region.lower())
                and self.instance_type.lower() in ("", instance_type.lower()))

    def hours_left(self, at: datetime) -> float:
        """Hours of capacity left from ``at``."""
        return 0.0 if self.ends is None else max(0.0, (self.ends - at).total_seconds() / 3600)


_QUERY = """
SELECT CommitmentDiscountId, any_value(CommitmentDiscountType), any_value(ProviderName),
       any_value(SubAccountId), any_value(SubAccountName), any_value(ServiceName), any_value(x_InstanceType),
       any_value(RegionId), any_value(CAST(Tags AS VARCHAR)),
       min(ChargePeriodStart) FILTER (WHERE ChargeCategory = 'Purchase'),
       any_value(CommitmentDiscountQuantity) FILTER (WHERE ChargeCategory = 'Purchase'),
       any_value(CommitmentDiscountUnit) FILTER (WHERE ChargeCategory = 'Purchase'),
       coalesce(sum(EffectiveCost) FILTER (WHERE CommitmentDiscountStatus = 'Unused'), 0),
       any_value(BillingCurrency)
FROM {view}
WHERE CommitmentDiscountId IS NOT NULL
GROUP BY CommitmentDiscountId
HAVING count(*) FILTER (WHERE ChargeCategory = 'Purchase') > 0
ORDER BY CommitmentDiscountId
"""


def sunk_commitments(bills: Sequence[Path], mapping: Sequence[MappingRule]) -> list[SunkCommitment]:
    """The commitments bought in ``bills``, each on the plan line the ``mapping`` rules give it."""
    import duckdb

    from ..reconcile.bills import VIEW, open_bills

    con = duckdb.connect()
    try:
        open_bills(con, [Path(b) for b in bills])
        rows = con.execute(_QUERY.format(view=VIEW)).fetchall()
    finally:
        con.close()
    mapper = Mapper(list(mapping))
    out = []
    for (cid, kind, provider, sub_id, sub_name, service, instance_type, region, tags, start, quantity, unit,
         unused, currency) in rows:
        line = mapper.plan_line(Charge(provider, sub_id, sub_name, service, instance_type, region, tags))
        by_hours = (unit or "").lower() == "hours" and quantity
        start = start.replace(tzinfo=None)
        out.append(SunkCommitment(cid, line, kind or "", 1 if by_hours else 0, region or "", instance_type or "", start,
                                  start + timedelta(hours=float(quantity)) if by_hours else None,
                                  Money(Decimal(str(unused)), currency or "USD")))
    return out
