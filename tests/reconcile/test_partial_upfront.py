"""A Partial Upfront reservation, as AWS bills it in FOCUS: ``One-Time`` purchase rows (the upfront part) and,
every month, ``Recurring`` purchase rows (the monthly fee), all under one CommitmentDiscountId; the hours it
covers amortize both parts. Three months recorded in a history, each worked by hand below.

The reservation: two p5 instances for 1 year (8,760 hours), the first bought 10 March 2026 00:00, the second
20 March 00:00, each on an invoice of its own; each hour of an instance amortizes 1.25 USD: 0.625 upfront
(0.625 x 8,760 = 5,475.00 paid at once per instance) and 0.625 recurring, billed at each month's start for the
month's hours, one fee row per instance (on its instance's invoice). Hours covered: March 528 + 288 = 816
(fees 330.00 + 180.00 = 510.00), April 2 x 720 (900.00), May 2 x 744 (930.00).

* scheduled per month = upfront / term + the month's fee = 10,950 / 12 + fee = 912.50 + fee;
* balance left = paid to date - amortized to date (the fee is paid and amortized within its month, so this
  is the upfront part not yet amortized: 10,950 - 0.625 x hours so far).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from finops.money import Money
from finops.reconcile.commitment_schedule import EarlierCommitment, commitment_summary
from finops.reconcile.engine import reconcile_month
from finops.reconcile.history import History
from templates.plan_reader import read_plan

from .conftest import write_bill

CID = "arn:aws:ec2:us-east-1:111:reservation/ri-part-9"
#: each instance's purchase: the hour it was bought (its hours are covered from then on)
BOUGHT = (datetime(2026, 3, 10, tzinfo=timezone.utc), datetime(2026, 3, 20, tzinfo=timezone.utc))
#: month -> (first hour, hours in the month)
MONTHS = {"2026-03": (datetime(2026, 3, 1, tzinfo=timezone.utc), 744),
          "2026-04": (datetime(2026, 4, 1, tzinfo=timezone.utc), 720),
          "2026-05": (datetime(2026, 5, 1, tzinfo=timezone.utc), 744)}
#: month -> hours covered, both instances (worked by hand in the module's docstring)
COVERED = {"2026-03": 528 + 288, "2026-04": 2 * 720, "2026-05": 2 * 744}
HOURLY_UPFRONT = HOURLY_FEE = Decimal("0.625")
UPFRONT = Decimal("5475.00")  # per instance
_RI = {"CommitmentDiscountId": CID, "CommitmentDiscountType": "Reserved Instance",
       "CommitmentDiscountName": "p5-partial", "CommitmentDiscountCategory": "Usage", "x_InstanceType": "p5.48xlarge",
       "SkuPriceDetails": '{"x_PurchaseTerm":"1yr","x_PaymentOption":"Partial Upfront"}'}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _rows(month: str, fee_first: bool) -> list[dict[str, object]]:
    """The month's bill: each instance's purchase rows (fee before or after the upfront row) and an hourly Used
    row for each covered hour, every eighth one Unused, beside on-demand hours."""
    first, hours = MONTHS[month]
    end = first + timedelta(hours=hours)
    period = {"BillingPeriodStart": _stamp(first), "BillingPeriodEnd": _stamp(end)}
    rows: list[dict[str, object]] = []
    for bought in BOUGHT:
        start = max(first, bought)
        fee = HOURLY_FEE * ((end - start) // timedelta(hours=1))
        purchase = {**period, **_RI, "ChargeCategory": "Purchase", "EffectiveCost": "0", "ConsumedQuantity": "",
                    "ConsumedUnit": "", "InvoiceId": f"INV-{bought:%m%d}"}
        purchases = [{**purchase, "ChargeFrequency": "Recurring", "BilledCost": fee, "ListCost": fee,
                      "ContractedCost": fee, "ChargePeriodStart": _stamp(start), "ChargePeriodEnd": _stamp(end)}]
        if month == "2026-03":
            purchases.append({**purchase, "ChargeFrequency": "One-Time", "BilledCost": UPFRONT, "ListCost": UPFRONT,
                              "ContractedCost": UPFRONT, "ChargePeriodStart": _stamp(bought),
                              "ChargePeriodEnd": _stamp(bought + timedelta(hours=1))})
        rows += purchases if fee_first else purchases[::-1]
    for h in range(hours):
        at = first + timedelta(hours=h)
        hour = {**period, "ChargePeriodStart": _stamp(at), "ChargePeriodEnd": _stamp(at + timedelta(hours=1))}
        rows.append({**hour, "x_InstanceType": "p5.48xlarge", "ResourceId": "i-od", "BilledCost": "98.32",
                     "EffectiveCost": "98.32", "ListCost": "98.32", "ContractedCost": "98.32"})
        for n, bought in enumerate(BOUGHT):
            if at >= bought:
                unused = (at - bought) // timedelta(hours=1) % 8 == 7
                rows.append({**hour, **_RI, "ResourceId": "" if unused else f"i-ri-{n}",
                             "CommitmentDiscountStatus": "Unused" if unused else "Used",
                             "PricingCategory": "Committed", "BilledCost": "0", "EffectiveCost": "1.25",
                             "ListCost": "2.00", "ContractedCost": "1.25", "SkuPriceDetails": ""})
    return rows


@pytest.mark.parametrize("fee_first", [True, False], ids=["fee rows first", "upfront rows first"])
def test_a_partial_upfront_reservation_month_by_month(tmp_path, simple_plan, fee_first):
    plan, history = read_plan(simple_plan), History(tmp_path / "history.duckdb")
    paid = amortized = Decimal(0)
    for month, covered in COVERED.items():
        bill = write_bill(tmp_path / f"{month}.csv", _rows(month, fee_first))
        rec = reconcile_month(plan, [bill], month, **history.earlier_inputs(month, "USD"))
        history.record(rec, datetime(2026, 6, 2, tzinfo=timezone.utc))
        fee = HOURLY_FEE * covered
        upfront = 2 * UPFRONT if month == "2026-03" else 0
        paid += fee + upfront
        amortized += Decimal("1.25") * covered
        (line,) = rec.commitment_lines
        assert (line.payment, line.purchase_date, line.term_months, line.end_date) == (
            "partial upfront", date(2026, 3, 10), 12, date(2027, 3, 10))
        assert line.source == ("bills" if month == "2026-03" else "history")
        assert (line.paid_this_month.amount, line.upfront_this_month.amount) == (fee + upfront, upfront)
        assert line.scheduled_monthly.amount == 2 * UPFRONT / 12 + fee == Decimal("912.50") + fee
        assert (line.paid_to_date.amount, line.amortized_to_date.amount) == (paid, amortized)
        assert line.balance_left.amount == paid - amortized == 2 * UPFRONT - HOURLY_UPFRONT * (amortized / Decimal("1.25"))
    assert line.balance_left.amount == Decimal("8610.00")  # 10,950 - 0.625 x (816 + 1,440 + 1,488) = 10,950 - 2,340


def test_an_upfront_commitment_kept_before_the_upfront_column_is_scheduled_from_what_was_paid():
    """A history of 2026-12-01 kept no upfront part (it reads 0): an all-upfront reservation it carries, with
    no row this month, is still scheduled at paid / term = 8,760 / 12 = 730.00."""
    earlier = {"ri-1": EarlierCommitment("ri-1", "AWS", "Reserved Instance", "upfront", date(2026, 1, 5), 12,
                                         Decimal(8760), Decimal(2000), "2026-01", Decimal(600), Decimal(0))}
    (line,) = commitment_summary([], lambda amount, currency: Money(amount, "USD"), "USD", "2026-04", earlier).lines
    assert (line.payment, line.source, line.scheduled_monthly, line.balance_left) == (
        "upfront", "history", Money(Decimal(730), "USD"), Money(Decimal(6760), "USD"))
