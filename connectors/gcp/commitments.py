"""GCP committed use discounts amortized the FOCUS 1.2 way over one invoice month (pure: export rows in).

The billing export bills a commitment as a fee row (SKU ``Commitment v1: Nvidia H100 80GB GPU in Americas
for 1 Year``, or ``Commitment - dollar based v1: ...`` for a spend-based one) and gives each covered usage
row a committed-use credit that cancels its covered on-demand cost. FOCUS 1.2 ("Commitment discounts")
wants instead: the fee as a ``Purchase`` with ``EffectiveCost = 0``, each covered usage row carrying its
share of the fee in ``EffectiveCost`` (``CommitmentDiscountStatus = Used``), the part of the fee no usage
used as its own ``Usage`` row (``CommitmentDiscountStatus = Unused``), and ``CommitmentDiscountId`` on
all of them. This module finds, for a month of rows, each commitment's fee rows and covered rows and
splits the fee:

* A commitment is keyed by invoice month, region and *subject*: the fee's SKU description without its
  prefix, region words and term (``nvidia h100 80gb gpu``), and the covered row's credit name without
  ``Committed use discount:`` (:data:`connectors.gcp.mapping.SUBJECT_WORDS` maps ``cpu`` to ``core``...).
* Fee ``F`` = the sum of the fee rows' ``cost``; committed quantity ``Q`` = the sum of their
  ``usage.amount_in_pricing_units`` (for example GPU-hours).
* A covered row with cost ``c`` and committed-use credit ``k`` (< 0) is covered for ``q = quantity x
  min(1, -k / c)`` of its quantity.
* Resource-based (``COMMITTED_USAGE_DISCOUNT``, ``Q > 0``): its share is ``q x F / Q`` (the fee rate per
  committed unit times the units it used); spend-based, or without a quantity: ``F x -k / sum(-k)``.
* Unused = ``F - sum(shares)``, 0 or more (shares are scaled down if covered units exceed ``Q``).

So per commitment ``sum(shares) + unused = F``: the month's EffectiveCost still equals its BilledCost,
and the fee is counted once, in the usage it paid for. The id is the credit's ``id`` (the commitment's
resource name) where a covered row gives one, else ``<billing account>/<fee SKU id>``.

Sources: "Structure of Detailed data export", credits.type and credits.id
(https://cloud.google.com/billing/docs/how-to/export-data-bigquery-tables/detailed-usage), "View your
CUD fees and credits" (https://cloud.google.com/docs/cuds-attribution), FOCUS 1.2
(https://focus.finops.org/focus-specification/v1-2/, CommitmentDiscountStatus, EffectiveCost).

>>> fee = {"cost": "54", "invoice": {"month": "202605"}, "location": {"region": "us-central1"},
...        "sku": {"description": "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year", "id": "F"},
...        "usage": {"amount_in_pricing_units": "8"}}
>>> use = {"cost": "60", "invoice": {"month": "202605"}, "location": {"region": "us-central1"},
...        "usage": {"amount_in_pricing_units": "6"}, "credits": [{"type": "COMMITTED_USAGE_DISCOUNT",
...        "amount": "-60", "name": "Committed use discount: Nvidia H100 80GB GPU", "id": "h100-1y"}]}
>>> plan = amortize([fee, use])
>>> plan.shares[1].amount, plan.unused[0].amount, plan.shares[0].commitment_id
(Decimal('40.50'), Decimal('13.50'), 'h100-1y')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from connectors.focus_table import decimal_or_none
from finops.money import MONEY_CONTEXT

from . import mapping as m

__all__ = ["Amortization", "Share", "Unused", "amortize", "commitment_subject"]

_ZERO = Decimal(0)
_REGION_AND_TERM = re.compile(r"\s+(in|running in)\s+.*$|\s+for\s+\d+\s+(year|years|month|months)$", re.IGNORECASE)


@dataclass(frozen=True)
class Share:
    """What one export row gets: the commitment's id, and (on a covered row) its share of the fee."""

    commitment_id: str
    amount: Decimal = _ZERO


@dataclass(frozen=True)
class Unused:
    """The unused part of one commitment in the month: amount, unused quantity, and its first fee row."""

    commitment_id: str
    amount: Decimal
    quantity: Decimal
    fee_row: int


@dataclass
class Amortization:
    """Per row index: its :class:`Share`; and the :class:`Unused` part of each commitment."""

    shares: dict[int, Share] = field(default_factory=dict)
    unused: list[Unused] = field(default_factory=list)


def _get(row: Mapping[str, Any], path: str) -> Any:
    value: Any = row
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _money(value: Any) -> Decimal:
    return decimal_or_none(value) or _ZERO


def commitment_subject(text: str) -> str:
    """What a commitment covers, from a fee SKU description or a committed-use credit name.

    >>> commitment_subject("Commitment v1: A2 Cpu in Americas for 1 Year"), commitment_subject("Committed use discount: A2 Core")
    ('a2 core', 'a2 core')
    """
    subject = text.strip()
    for prefix in (*m.COMMITMENT_FEE_PREFIXES, *m.COMMITMENT_CREDIT_PREFIXES):
        if subject.lower().startswith(prefix.lower()):
            subject = subject[len(prefix):]
            break
    while True:
        shorter = _REGION_AND_TERM.sub("", subject.strip())
        if shorter == subject:
            break
        subject = shorter
    return " ".join(m.SUBJECT_WORDS.get(word, word) for word in subject.lower().split())


def _key(row: Mapping[str, Any], subject: str) -> tuple[str, str, str]:
    region = _get(row, "location.region") or _get(row, "location.location") or ""
    return str(_get(row, "invoice.month") or ""), str(region), subject


@dataclass
class _Commitment:
    fees: list[int] = field(default_factory=list)
    fee: Decimal = _ZERO
    quantity: Decimal = _ZERO
    spend_based: bool = False
    #: (row index, covered quantity, -credit)
    covered: list[tuple[int, Decimal, Decimal]] = field(default_factory=list)
    credit_id: str = ""


def _commitments(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], _Commitment]:
    found: dict[tuple[str, str, str], _Commitment] = {}
    for index, row in enumerate(rows):
        description = str(_get(row, "sku.description") or "")
        if str(row.get("cost_type") or "regular") == "regular" and description.startswith(m.COMMITMENT_FEE_PREFIXES):
            commitment = found.setdefault(_key(row, commitment_subject(description)), _Commitment())
            commitment.fees.append(index)
            commitment.fee += _money(row.get("cost"))
            commitment.quantity += _money(_get(row, "usage.amount_in_pricing_units"))
            commitment.spend_based |= "dollar" in description.lower()
            continue
        for credit in row.get("credits") or []:
            rule = m.CREDIT_TYPES.get(str(credit.get("type") or "")) if isinstance(credit, Mapping) else None
            if rule is None or not rule.commitment_category:
                continue
            name = str(credit.get("name") or credit.get("full_name") or "")
            commitment = found.setdefault(_key(row, commitment_subject(name)), _Commitment())
            commitment.credit_id = commitment.credit_id or str(credit.get("id") or "")
            commitment.spend_based |= rule.commitment_category == "Spend"
            cost, credited = _money(row.get("cost")), -_money(credit.get("amount"))
            fraction = min(Decimal(1), MONEY_CONTEXT.divide(credited, cost)) if cost > 0 else _ZERO
            quantity = MONEY_CONTEXT.multiply(_money(_get(row, "usage.amount_in_pricing_units")), fraction)
            commitment.covered.append((index, quantity, credited))
    return found


def amortize(rows: Sequence[Mapping[str, Any]]) -> Amortization:
    """Each commitment's fee split over the rows it covered, and its unused part (module docstring)."""
    plan = Amortization()
    for commitment in _commitments(rows).values():
        if not commitment.fees:
            continue  # covered usage whose fee is in another month's export: no share to give
        first_fee = rows[commitment.fees[0]]
        commitment_id = commitment.credit_id or (
            f"{first_fee.get('billing_account_id') or ''}/{_get(first_fee, 'sku.id') or _get(first_fee, 'sku.description')}")
        by_quantity = not commitment.spend_based and commitment.quantity > 0
        used_quantity = sum((q for _, q, _ in commitment.covered), _ZERO)
        credited = sum((k for _, _, k in commitment.covered), _ZERO)
        scale = MONEY_CONTEXT.divide(commitment.quantity, used_quantity) if used_quantity > commitment.quantity else 1
        used = _ZERO
        for index, quantity, credit in commitment.covered:
            if by_quantity:
                share = MONEY_CONTEXT.multiply(MONEY_CONTEXT.multiply(quantity, scale),
                                               MONEY_CONTEXT.divide(commitment.fee, commitment.quantity))
            else:
                share = MONEY_CONTEXT.divide(MONEY_CONTEXT.multiply(commitment.fee, credit), credited) if credited else _ZERO
            earlier = plan.shares.get(index)  # a row covered by two commitments keeps the first id, both shares
            plan.shares[index] = Share(earlier.commitment_id if earlier else commitment_id,
                                       share + (earlier.amount if earlier else _ZERO))
            used += share
        for index in commitment.fees:
            plan.shares[index] = Share(commitment_id)
        unused = MONEY_CONTEXT.subtract(commitment.fee, used)
        if unused > 0:
            left = max(_ZERO, commitment.quantity - used_quantity) if by_quantity else _ZERO
            plan.unused.append(Unused(commitment_id, unused, left, commitment.fees[0]))
    return plan
