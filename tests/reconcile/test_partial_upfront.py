"""A Partial Upfront reservation, as AWS bills it in FOCUS: one ``One-Time`` purchase row (the upfront part)
and, every month, one ``Recurring`` purchase row (the monthly fee), both under one CommitmentDiscountId; the
hours it covers amortize both parts. Three months recorded in a history, each worked by hand below.

The reservation: 1 year (8,760 hours), bought 10 March 2026 00:00, 1.25 USD an hour amortized: 0.625 upfront
(0.625 x 8,760 = 5,475.00 paid at once) and 0.625 recurring (billed at each month's start for the month's
hours: March from the 10th, 528 hours = 330.00; April 720 hours = 450.00; May 744 hours = 465.00).

* scheduled per month = upfront / term + the month's fee = 5,475 / 12 + fee = 456.25 + fee;
* balance left = paid to date - amortized to date (the fee is paid and amortized within its month, so this
  is the upfront part not yet amortized: 5,475 - 0.625 x hours so far).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from finops.reconcile.engine import reconcile_month
from finops.reconcile.history import History
from templates.plan_reader import read_plan

from .conftest import write_bill

CID = "arn:aws:ec2:us-east-1:111:reservation/ri-part-9"
BOUGHT = datetime(2026, 3, 10, tzinfo=timezone.utc)
#: month -> (first hour, hours in the month, hours covered by the reservation)
MONTHS = {"2026-03": (datetime(2026, 3, 1, tzinfo=timezone.utc), 744, 528),
          "2026-04": (datetime(2026, 4, 1, tzinfo=timezone.utc), 720, 720),
          "2026-05": (datetime(2026, 5, 1, tzinfo=timezone.utc), 744, 744)}
HOURLY_UPFRONT = HOURLY_FEE = Decimal("0.625")
UPFRONT = Decimal("5475.00")
_RI = {"CommitmentDiscountId": CID, "CommitmentDiscountType": "Reserved Instance",
       "CommitmentDiscountName": "p5-partial", "CommitmentDiscountCategory": "Usage", "x_InstanceType": "p5.48xlarge",
       "SkuPriceDetails": '{"x_PurchaseTerm":"1yr","x_PaymentOption":"Partial Upfront"}'}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _rows(month: str, fee_first: bool) -> list[dict[str, object]]:
    """The month's bill: its purchase rows (fee before or after the upfront row) and an hourly Used row for each
    covered hour, every eighth one Unused, beside on-demand hours."""
    first, hours, covered = MONTHS[month]
    period = {"BillingPeriodStart": _stamp(first), "BillingPeriodEnd": _stamp(first + timedelta(hours=hours))}
    start = first + timedelta(hours=hours - covered)
    fee = HOURLY_FEE * covered
    purchase = {**period, **_RI, "ChargeCategory": "Purchase", "EffectiveCost": "0", "ConsumedQuantity": "",
                "ConsumedUnit": ""}
    purchases = [{**purchase, "ChargeFrequency": "Recurring", "BilledCost": fee, "ListCost": fee,
                  "ContractedCost": fee, "ChargePeriodStart": _stamp(start),
                  "ChargePeriodEnd": _stamp(first + timedelta(hours=hours))}]
    if month == "2026-03":
        purchases.append({**purchase, "ChargeFrequency": "One-Time", "BilledCost": UPFRONT, "ListCost": UPFRONT,
                          "ContractedCost": UPFRONT, "ChargePeriodStart": _stamp(BOUGHT),
                          "ChargePeriodEnd": _stamp(BOUGHT + timedelta(hours=1))})
    rows = purchases if fee_first else purchases[::-1]
    for h in range(hours):
        at = first + timedelta(hours=h)
        hour = {**period, "ChargePeriodStart": _stamp(at), "ChargePeriodEnd": _stamp(at + timedelta(hours=1))}
        rows.append({**hour, "x_InstanceType": "p5.48xlarge", "ResourceId": "i-od", "BilledCost": "98.32",
                     "EffectiveCost": "98.32", "ListCost": "98.32", "ContractedCost": "98.32"})
        if at >= start:
            unused = (at - start) // timedelta(hours=1) % 8 == 7
            rows.append({**hour, **_RI, "ResourceId": "" if unused else "i-ri",
                         "CommitmentDiscountStatus": "Unused" if unused else "Used", "PricingCategory": "Committed",
                         "BilledCost": "0", "EffectiveCost": "1.25", "ListCost": "2.00", "ContractedCost": "1.25",
                         "SkuPriceDetails": ""})
    return rows


@pytest.mark.parametrize("fee_first", [True, False], ids=["fee row first", "upfront row first"])
def test_a_partial_upfront_reservation_month_by_month(tmp_path, simple_plan, fee_first):
    plan, history = read_plan(simple_plan), History(tmp_path / "history.duckdb")
    paid = amortized = Decimal(0)
    for month, (_, _, covered) in MONTHS.items():
        bill = write_bill(tmp_path / f"{month}.csv", _rows(month, fee_first))
        rec = reconcile_month(plan, [bill], month, **history.earlier_inputs(month, "USD"))
        history.record(rec, datetime(2026, 6, 2, tzinfo=timezone.utc))
        fee = HOURLY_FEE * covered
        paid += fee + (UPFRONT if month == "2026-03" else 0)
        amortized += Decimal("1.25") * covered
        (line,) = rec.commitment_lines
        assert (line.payment, line.purchase_date, line.term_months, line.end_date) == (
            "partial upfront", date(2026, 3, 10), 12, date(2027, 3, 10))
        assert line.source == ("bills" if month == "2026-03" else "history")
        assert line.paid_this_month.amount == fee + (UPFRONT if month == "2026-03" else 0)
        assert line.scheduled_monthly.amount == UPFRONT / 12 + fee == Decimal("456.25") + fee
        assert (line.paid_to_date.amount, line.amortized_to_date.amount) == (paid, amortized)
        assert line.balance_left.amount == paid - amortized == UPFRONT - HOURLY_UPFRONT * (amortized / Decimal("1.25"))
    assert line.balance_left.amount == Decimal("4230.00")  # 5,475 - 0.625 x (528 + 720 + 744)
