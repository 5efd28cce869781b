"""CommitmentSummary.prepaid (finops/reconcile/result.py) on commitment lines written by hand: the month's
roll-forward opening + bought - amortized = closing over the commitments whose balance is known, the
estimated part apart, the others counted. Expected figures are added up here from the lines."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from finops.money import Money
from finops.reconcile.result import CommitmentLine, CommitmentSummary, PrepaidRollForward


def eur(amount: str) -> Money:
    return Money.of(Decimal(amount), "EUR")


def line(cid: str, source: str, *, paid: str, amortized: str, balance: str | None) -> CommitmentLine:
    return CommitmentLine(commitment_id=cid, provider_name="AWS", kind="savings_plan", payment="All Upfront",
                          purchase_date=date(2026, 3, 1), term_months=12, end_date=date(2027, 3, 1),
                          paid_to_date=eur("1200.00"), paid_this_month=eur(paid), amortized=eur(amortized),
                          unused=eur("0"), amortized_to_date=eur("100.00"), scheduled_monthly=eur("100.00"),
                          balance_left=None if balance is None else eur(balance), source=source,
                          first_month="2026-03", upfront_this_month=eur(paid))


LINES = (
    line("sp-bought", "bills", paid="1200.00", amortized="400.10", balance="799.90"),
    line("sp-kept", "history", paid="0", amortized="100.00", balance="500.00"),
    line("sp-estimated", "estimate", paid="0", amortized="50.25", balance="300.75"),
    line("ri-no-term", "bills", paid="300.00", amortized="25.00", balance=None),
    line("cud-estimate-no-term", "estimate", paid="0", amortized="10.00", balance=None),
)


def summary(lines: tuple[CommitmentLine, ...]) -> CommitmentSummary:
    return CommitmentSummary(purchases=eur("1500.00"), used=eur("500.35"), unused=eur("85.00"),
                             savings=eur("40.00"), utilization=Decimal("0.85"), coverage=Decimal("0.5"),
                             lines=lines)


def test_the_roll_forward_adds_up_over_the_commitments_whose_balance_is_known():
    closing = Decimal("799.90") + Decimal("500.00") + Decimal("300.75")
    bought = Decimal("1200.00")
    amortized = Decimal("400.10") + Decimal("100.00") + Decimal("50.25")
    assert summary(LINES).prepaid() == PrepaidRollForward(
        opening=eur(str(closing - bought + amortized)), bought=eur(str(bought)), amortized=eur(str(amortized)),
        closing=eur(str(closing)), estimated=eur("300.75"), unknown=2)


def test_no_commitment_rolls_forward_zero_in_the_plan_currency():
    prepaid = summary(()).prepaid()
    assert prepaid == PrepaidRollForward(opening=eur("0"), bought=eur("0"), amortized=eur("0"), closing=eur("0"),
                                         estimated=eur("0"), unknown=0)
    assert prepaid.closing.currency == "EUR"


def test_only_unknown_balances_leave_every_sum_zero_and_count_them():
    prepaid = summary(LINES[3:]).prepaid()
    assert (prepaid.closing, prepaid.bought, prepaid.amortized, prepaid.unknown) == (eur("0"), eur("0"), eur("0"), 2)
