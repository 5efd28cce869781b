"""The FOCUS Contract Commitment dataset: each commitment's term, payment and amounts as the provider states them.

FOCUS 1.3 added this supporting dataset beside the cost and usage rows: one row per contract commitment
(``ContractCommitmentId``) with its period (``ContractCommitmentPeriodStart`` to ``ContractCommitmentPeriodEnd``,
the end exclusive), its cost (``ContractCommitmentCost`` in ``BillingCurrency``) or quantity
(``ContractCommitmentQuantity`` of ``ContractCommitmentUnit``), its type and category, and the contract it belongs
to. When given (``finops reconcile --contract-commitments FILE``), a commitment of the review whose
``CommitmentDiscountId`` is such an id takes its term, dates, payment and amount from here instead of from the
heuristics of :mod:`finops.reconcile.commitment_schedule` (a term read from ``SkuPriceDetails`` or the commitment's
name; a purchase older than the history estimated from its first month's amortization).

The payment is read from ``ContractCommitmentPaymentModel`` where the file has it (a column of later drafts:
``All Upfront``, ``Partial Upfront``, ``No Upfront``), else from the bills. Source: FOCUS specification,
``specification/datasets/contract_commitment`` (dataset introduced in 1.3),
https://github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec.

>>> import io
>>> terms = read_contract_commitments("cc.csv", io.StringIO(
...     "ContractCommitmentId,ContractCommitmentPeriodStart,ContractCommitmentPeriodEnd,ContractCommitmentCost,"
...     "BillingCurrency,ContractCommitmentType,ContractCommitmentCategory,ContractId\\n"
...     "ri-1,2026-01-01T00:00:00Z,2029-01-01T00:00:00Z,94608.00,USD,Reserved Instance,Usage,c-1\\n"))
>>> terms["ri-1"].term_months, str(terms["ri-1"].cost), terms["ri-1"].start
(36, '94608.00', datetime.date(2026, 1, 1))
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TextIO

from ..errors import InputError, Location
from ..limits import bounded_lines
from ..money import to_decimal

__all__ = ["ContractTerm", "read_contract_commitments"]

#: Columns the dataset must have for this reading (the dataset's mandatory ones this tool uses).
_REQUIRED = ("ContractCommitmentId", "ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd")
#: ContractCommitmentPaymentModel (lower case) -> how the review names the payment.
_PAYMENTS = {"all upfront": "upfront", "upfront": "upfront", "partial upfront": "partial upfront",
             "no upfront": "monthly fee", "monthly": "monthly fee"}


@dataclass(frozen=True)
class ContractTerm:
    """One contract commitment: its period (end exclusive), cost in ``currency`` (None when it commits a quantity)
    and payment ("" when the dataset does not say)."""

    commitment_id: str
    start: date
    end: date
    cost: Decimal | None
    currency: str
    payment: str = ""
    kind: str = ""
    contract_id: str = ""

    @property
    def term_months(self) -> int:
        """Whole months from start to end: ``12 x years + months`` (one more when the end's day is later)."""
        months = (self.end.year - self.start.year) * 12 + self.end.month - self.start.month
        return months + (1 if self.end.day > self.start.day else 0)


def _date(text: str, where: Location) -> date:
    try:
        return datetime.fromisoformat(text.strip()).date()  # Python reads the Z of UTC itself
    except ValueError as exc:
        raise InputError(f"{text[:40]!r} is not a date", where=where,
                         hint="FOCUS dates are ISO 8601, e.g. 2026-01-01T00:00:00Z") from exc


def read_contract_commitments(path: str | Path, text: TextIO | None = None) -> dict[str, ContractTerm]:
    """Contract commitment id -> :class:`ContractTerm` from a Contract Commitment dataset in CSV (``text``: its
    content, already open). Errors name the file, row and column."""
    name = str(path)
    if text is None:
        try:
            content = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError("cannot read the contract commitment file", where=Location(file=name),
                             hint="give the FOCUS Contract Commitment dataset as UTF-8 CSV") from exc
        text = io.StringIO(content, newline="")
    with text:
        reader = csv.DictReader(bounded_lines(text, name))  # each line bounded: finops.limits
        try:
            return _terms(reader, name)
        except csv.Error as exc:  # a field past the csv module's limit, a NUL byte: not a dataset of FOCUS
            raise InputError(f"not a CSV file this tool can read ({exc})",
                             where=Location(file=name, row=max(reader.line_num, 1)),
                             hint="give the FOCUS Contract Commitment dataset as CSV") from None


def _terms(reader: csv.DictReader[str], name: str) -> dict[str, ContractTerm]:
    columns = reader.fieldnames or []
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise InputError(f"not a FOCUS Contract Commitment dataset: no column {', '.join(missing)}",
                         where=Location(file=name, row=1, column=missing[0]),
                         hint="export the Contract Commitment dataset (FOCUS 1.3 or later)")
    terms: dict[str, ContractTerm] = {}
    for row_number, row in enumerate(reader, start=2):
        terms_row = _term(row, name, row_number)
        if terms_row.commitment_id in terms:
            raise InputError(f"commitment {terms_row.commitment_id} is listed twice",
                             where=Location(file=name, row=row_number, column="ContractCommitmentId"))
        terms[terms_row.commitment_id] = terms_row
    return terms


def _term(row: Mapping[str, str | None], file: str, number: int) -> ContractTerm:
    def where(column: str) -> Location:
        return Location(file=file, row=number, column=column)

    cid = (row.get("ContractCommitmentId") or "").strip()
    if not cid:
        raise InputError("ContractCommitmentId is empty", where=where("ContractCommitmentId"))
    start = _date(row.get("ContractCommitmentPeriodStart") or "", where("ContractCommitmentPeriodStart"))
    end = _date(row.get("ContractCommitmentPeriodEnd") or "", where("ContractCommitmentPeriodEnd"))
    if end <= start:
        raise InputError("the commitment ends before it starts", where=where("ContractCommitmentPeriodEnd"))
    cost_text = (row.get("ContractCommitmentCost") or "").strip()
    cost = to_decimal(cost_text, where=where("ContractCommitmentCost")) if cost_text else None
    if cost is not None and cost < 0:
        raise InputError("ContractCommitmentCost is negative", where=where("ContractCommitmentCost"))
    payment_text = (row.get("ContractCommitmentPaymentModel") or "").strip().lower()
    payment = _PAYMENTS.get(payment_text, "")
    if payment_text and not payment:
        raise InputError(f"unknown payment model {payment_text!r}", where=where("ContractCommitmentPaymentModel"),
                         hint="All Upfront, Partial Upfront or No Upfront")
    return ContractTerm(cid, start, end, cost, (row.get("BillingCurrency") or "").strip().upper(), payment,
                        (row.get("ContractCommitmentType") or "").strip(), (row.get("ContractId") or "").strip())
