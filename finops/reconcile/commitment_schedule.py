"""The month's commitments in one summary: totals, and one row per ``CommitmentDiscountId`` with its
purchase, term, amortization and the prepaid balance left, carried from month to month by the history.

Everything comes from the aggregation's one scan (:mod:`finops.reconcile.aggregation`: its charge
groups carry ``commitment_id``, type, name, the purchase's ``ChargeFrequency`` and term and the first
``ChargePeriodStart``), so local files and remote engines give the same rows. FOCUS 1.2 amortizes a
commitment in the standard way, whichever provider wrote the bill: the purchase (``ChargeCategory =
Purchase``) carries the cash in BilledCost and EffectiveCost 0; every usage row it covers carries its
amortized share in EffectiveCost (``CommitmentDiscountStatus = Used``), and the part left unused is
its own row (``Unused``); all of them carry the ``CommitmentDiscountId``. So, per id, in a month:

* paid this month = sum of BilledCost of its Purchase groups; purchase date = their first ChargePeriodStart;
* amortized this month = sum of EffectiveCost of its Used and Unused groups (unused: of the Unused ones);
* term (months) from the purchase's ``SkuPriceDetails`` (:data:`TERM_MONTHS`), else from the
  ``CommitmentDiscountName`` (``...-1yr-...``); end = purchase date + term.

With the months before it (:class:`EarlierCommitment`, kept by :class:`~finops.reconcile.history.History`):

* paid to date = paid in the earlier months + this month; amortized to date likewise;
* balance left = paid to date - amortized to date (prepaid cost not yet in the P&L); source ``bills``
  (bought in this month's bills) or ``history`` (bought in an earlier month's);
* bought before the history began (no purchase row in any month kept): an upfront purchase whose
  amount is estimated as the amortization of the first month seen x term, balance left = estimate -
  amortized to date, an upper bound (it assumes the purchase was in that first month); source
  ``estimate``. Without a term, the balance is not known (``None``);
* scheduled per month = paid / term for an upfront purchase (``ChargeFrequency One-Time``), the fee
  itself for a recurring one (``Recurring``), upfront paid / term + this month's fee for a partial-upfront
  one (both kinds of purchase row under one id, as AWS bills a Partial Upfront reservation), the first
  month's amortization for an estimate;
* a commitment of an earlier month without rows this month is listed while a balance is left.

Totals: purchases = BilledCost of commitment purchases; used / unused = amortized EffectiveCost of
covered usage / of the unused part; utilization = used / (used + unused); coverage = used /
EffectiveCost of all usage in the services that had committed usage; savings = ListCost -
EffectiveCost of covered usage.

>>> term_months("3yr"), term_months("TWELVE_MONTH"), term_months(None, "ComputeSavingsPlan-3yr-NoUpfront")
(36, 12, 36)
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from ..depreciation import month_index, month_label
from ..money import MONEY_CONTEXT, Money
from .result import CommitmentLine, CommitmentSummary

if TYPE_CHECKING:
    from .aggregation import ChargeGroup
    from .contract_applied import AppliedSums
    from .contract_commitments import ContractTerm

__all__ = ["PAYMENT", "TERM_MONTHS", "EarlierCommitment", "commitment_summary", "term_months"]

#: A purchase's term as the providers' FOCUS exports write it in SkuPriceDetails (lower case) -> months:
#: AWS ``x_PurchaseTerm``, Google Cloud ``x_Plan`` (the keys :data:`~finops.reconcile.aggregation.COMMITMENT_TERM` reads).
TERM_MONTHS: dict[str, int] = {"1yr": 12, "3yr": 36, "1 year": 12, "3 years": 36,
                               "twelve_month": 12, "thirty_six_month": 36}
#: A term in a CommitmentDiscountName (``EC2ReservedInstance-1yr-AllUpfront``, ``SpendBasedCUD-3yr``): years.
_NAME_TERM = re.compile(r"(?<![0-9])([13])\s*-?\s*(?:yr|y|year)", re.IGNORECASE)
#: ChargeFrequency of the purchase -> how the review names the payment.
PAYMENT = {"one-time": "upfront", "recurring": "monthly fee"}
#: The kinds of purchase rows a commitment has -> its payment (both: partial upfront).
_PAYMENT_OF_KINDS = {frozenset(): "", frozenset({"upfront"}): "upfront", frozenset({"monthly fee"}): "monthly fee",
                     frozenset({"upfront", "monthly fee"}): "partial upfront"}
_ESTIMATE_PAYMENT = "upfront"


@dataclass(frozen=True)
class EarlierCommitment:
    """A commitment as the history kept it over the months before the reviewed one (plan currency).

    ``paid`` and ``amortized`` are sums over those months, ``upfront`` the part of ``paid`` from one-time
    purchase rows; ``first_month`` is the first month it was seen and ``first_amortized`` its amortization
    then (the monthly amount of an estimated purchase).
    """

    commitment_id: str
    provider_name: str
    kind: str
    payment: str
    purchase_date: date | None
    term_months: int | None
    paid: Decimal
    amortized: Decimal
    first_month: str
    first_amortized: Decimal
    upfront: Decimal = Decimal(0)


def term_months(term: str | None, name: str | None = None) -> int | None:
    """The term in months from a purchase's term text (:data:`TERM_MONTHS`), else from the commitment's
    name; ``None`` when neither says."""
    months = TERM_MONTHS.get(term.strip().lower()) if term else None
    if months is not None:
        return months
    found = _NAME_TERM.search(name) if name else None
    return 12 * int(found.group(1)) if found else None


@dataclass
class _Month:
    """One commitment's charge groups of the month, summed (plan currency); its attributes from the first
    group that has them (``None``: none has)."""

    provider_name: str | None = None
    kind: str | None = None
    name: str | None = None
    payments: set[str] = field(default_factory=set)
    term: str | None = None
    bought_at: datetime | None = None
    paid: Decimal = Decimal(0)
    upfront: Decimal = Decimal(0)
    fee: Decimal = Decimal(0)
    amortized: Decimal = Decimal(0)
    unused: Decimal = Decimal(0)
    services: set[str | None] = field(default_factory=set)


def commitment_summary(groups: Iterable[ChargeGroup], money: Callable[[Decimal, str | None], Money], currency: str,
                       month: str, earlier: Mapping[str, EarlierCommitment] | None = None,
                       contracts: Mapping[str, ContractTerm] | None = None,
                       applied: Iterable[AppliedSums] = ()) -> CommitmentSummary:
    """The month's :class:`CommitmentSummary` (totals and one :class:`CommitmentLine` per commitment) from
    the aggregation's charge groups; ``money`` converts into the plan ``currency``; ``earlier`` are the
    commitments the history kept for the months before ``month``; ``contracts`` the FOCUS Contract Commitment
    dataset's terms by commitment id (:mod:`finops.reconcile.contract_commitments`), which replace the term, dates,
    payment and estimated amount read from the bills.

    ``applied`` are the bills' ``ContractApplied`` sums (:mod:`finops.reconcile.contract_applied`). A commitment
    they name gets ``applied``: the cost the provider applied to it from the month's charges other than purchases.
    One they alone name (no ``CommitmentDiscountId`` rows: a prepaid pool, a spend commitment) gets its own row,
    drawn down by that applied cost (``amortized``) when it was prepaid; a no-upfront one (the dataset's ``No
    Upfront``) prepaid nothing, so nothing is amortized, and its schedule is the contract's cost / term. The tie-out's bills side (``applied_amortization``) is then
    used + unused with each named commitment counted at its applied cost instead of its rows' EffectiveCost (a
    commitment only ContractApplied names counts where its schedule is known)."""
    zero = Money.zero(currency)
    groups = list(groups)
    purchases = used = unused = savings = zero
    months: dict[str, _Month] = {}
    for g in groups:
        if g.commitment_id is None:
            continue
        one = months.setdefault(g.commitment_id, _Month())
        one.provider_name = one.provider_name or g.provider_name
        one.kind = one.kind or g.commitment_type
        one.name = one.name or g.commitment_name
        status = _status(g)
        if g.charge_category == "Purchase":
            billed = money(g.billed_cost, g.billing_currency)
            purchases += billed
            one.paid += billed.amount
            payment = PAYMENT.get(str(g.charge_frequency).lower())
            if payment is not None:
                one.payments.add(payment)
            if payment == "upfront":
                one.upfront += billed.amount
            elif payment == "monthly fee":
                one.fee += billed.amount
            one.term = one.term or g.commitment_term
            if g.first_charge_start is not None:
                one.bought_at = min(filter(None, (one.bought_at, g.first_charge_start)))
        if status in ("used", "unused"):
            cost = money(g.effective_cost, g.billing_currency)
            one.amortized += cost.amount
        if status == "used":
            used += cost
            savings += money(g.list_cost - g.effective_cost, g.billing_currency)
            one.services.add(g.service_name)
        elif status == "unused":
            unused += cost
            one.unused += cost.amount
    committed_services = {s for one in months.values() for s in one.services}
    eligible = Money.total([money(g.effective_cost, g.billing_currency) for g in groups
                            if g.charge_category == "Usage" and g.service_name in committed_services
                            and _status(g) != "unused"], currency)
    contracts = contracts or {}
    drawn = _drawn(applied, money, currency)
    billed_rows = {cid: one.amortized for cid, one in months.items()}
    for cid, (provider, amount) in drawn.items():
        if cid not in months:
            contract = contracts.get(cid)
            prepaid = contract is None or contract.payment != "monthly fee"  # a drawdown of a prepaid amount
            months[cid] = _Month(provider_name=provider, kind=contract.kind if contract else None,
                                 amortized=amount.amount if prepaid else Decimal(0))
    lines = [_line(cid, months.get(cid, _Month()), (earlier or {}).get(cid), month, currency, contracts.get(cid),
                   drawn[cid][1] if cid in drawn else None)
             for cid in sorted(set(months) | set(earlier or {}))]
    stated: Money | None = None
    if drawn:
        stated = used + unused
        for line in lines:
            if line.applied is None:
                continue
            if line.commitment_id in billed_rows:
                stated += line.applied - Money(billed_rows[line.commitment_id], currency)
            elif line.scheduled_monthly is not None:
                stated += line.applied
    return CommitmentSummary(
        purchases=purchases, used=used, unused=unused, savings=savings,
        utilization=_ratio(used.amount, (used + unused).amount), coverage=_ratio(used.amount, eligible.amount),
        lines=tuple(sorted((line for line in lines if line.commitment_id in months or _running(line)),
                           key=lambda line: (line.provider_name, line.commitment_id))),
        applied_amortization=stated)


def _drawn(applied: Iterable[AppliedSums], money: Callable[[Decimal, str | None], Money],
           currency: str) -> dict[str, tuple[str, Money]]:
    """Commitment id -> (its provider, the cost applied to it by the month's charges other than purchases, in the
    plan currency); a purchase row applies the whole contract to it, which is not a drawdown."""
    drawn: dict[str, tuple[str, Money]] = {}
    for s in applied:
        if s.purchase:
            continue
        provider, amount = drawn.get(s.commitment_id, (s.provider_name, Money.zero(currency)))
        drawn[s.commitment_id] = (provider or s.provider_name, amount + money(s.cost, s.billing_currency))
    return drawn


def _line(cid: str, this: _Month, before: EarlierCommitment | None, month: str, currency: str,
          contract: ContractTerm | None = None, applied: Money | None = None) -> CommitmentLine:
    """One commitment's row: this month's sums on top of what the history kept before it; with its ``contract``
    (Contract Commitment dataset), the term, dates and payment are the contract's, and a commitment bought before
    the bills and the history is paid the contract's cost (source ``contract``) instead of an estimate."""
    def of(amount: Decimal) -> Money:
        return Money(amount, currency)

    paid = (before.paid if before else Decimal(0)) + this.paid
    amortized = (before.amortized if before else Decimal(0)) + this.amortized
    bought = before.purchase_date if before and before.purchase_date else _day(this.bought_at)
    term = (before.term_months if before else None) or term_months(this.term, this.name)
    upfront = (before.upfront if before else Decimal(0)) + this.upfront
    payment = (before.payment if before else None) or _PAYMENT_OF_KINDS[frozenset(this.payments)]
    from_contract = False
    if contract is not None:
        term, payment = contract.term_months, contract.payment or payment
        stated = contract.cost is not None and contract.currency in ("", currency)
        # bought before the bills (in this month's or, carried by the history, an earlier month's bills): the
        # contract says what was paid; a no-upfront commitment is paid as it is used, nothing prepaid
        if stated and paid == 0 and payment != "monthly fee" and (bought is None or before is not None):
            paid, from_contract = contract.cost or Decimal(0), True
            upfront = paid if payment in ("upfront", "") else upfront
        if stated and bought is None:
            bought, from_contract = contract.start, True
        payment = payment or "upfront"
    scheduled: Money | None = None
    if bought is not None:
        source = "contract" if from_contract else "history" if before and before.purchase_date else "bills"
        balance: Money | None = of(paid - amortized)
        ends = contract.end if contract is not None else _add_months(bought, term) if term else None
        if payment == "monthly fee" and contract is not None and contract.cost and not this.fee and term:
            # no fee billed: a no-upfront contract commitment drawn down by its charges, its contract's monthly share
            scheduled = of(MONEY_CONTEXT.divide(contract.cost or Decimal(0), Decimal(term)))
        elif payment == "monthly fee":
            scheduled = of(this.fee)
        elif payment == "partial upfront" and term:
            scheduled = of(MONEY_CONTEXT.divide(upfront, Decimal(term)) + this.fee)
        elif term:
            scheduled = of(MONEY_CONTEXT.divide(paid, Decimal(term)))
    else:
        first_month = before.first_month if before else month
        monthly = before.first_amortized if before else this.amortized
        source, payment = "estimate", _ESTIMATE_PAYMENT
        ends = _add_months(date.fromisoformat(f"{first_month}-01"), term) if term else None
        if term:
            paid = monthly * term
            scheduled, balance = of(monthly), of(paid - amortized)
        else:
            source, balance = "", None
    return CommitmentLine(
        commitment_id=cid, provider_name=this.provider_name or (before.provider_name if before else ""),
        kind=this.kind or (before.kind if before else ""), payment=payment, purchase_date=bought,
        term_months=term, end_date=ends, paid_to_date=of(paid), paid_this_month=of(this.paid),
        upfront_this_month=of(this.upfront),
        amortized=of(this.amortized), unused=of(this.unused), amortized_to_date=of(amortized),
        scheduled_monthly=scheduled, balance_left=balance, source=source,
        first_month=before.first_month if before else month, applied=applied)


def _status(group: ChargeGroup) -> str:
    """The group's CommitmentDiscountStatus in lower case; ``"none"`` for a group without one (no status is
    named so: FOCUS has Used and Unused)."""
    return str(group.commitment_status).lower()


def _running(line: CommitmentLine) -> bool:
    """Whether a commitment without rows this month is still listed: a balance is left."""
    return line.balance_left is not None and line.balance_left.amount > 0


def _ratio(part: Decimal, whole: Decimal) -> Decimal | None:
    return None if whole == 0 else MONEY_CONTEXT.divide(part, whole)


def _day(value: datetime | None) -> date | None:
    return None if value is None else value.date()


def _add_months(day: date, months: int) -> date:
    """``day`` plus whole months (the last day of a shorter month when the day does not exist there).

    >>> _add_months(date(2026, 1, 31), 1)
    datetime.date(2026, 2, 28)
    """
    label = month_label(month_index(f"{day.year:04d}-{day.month:02d}") + months)
    year, month = int(label[:4]), int(label[5:])
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))
