"""FOCUS ``ContractApplied``: what the provider says each charge applied to its contract commitments.

FOCUS 1.3 added ``ContractApplied`` to the cost and usage rows: a JSON object whose ``Elements`` array names, for
each contract commitment a charge counts towards, the contract (``ContractID``), the commitment
(``ContractCommitmentID``, the ``ContractCommitmentId`` of the Contract Commitment dataset) and the part of the
charge applied to it, as cost (``ContractCommitmentAppliedCost``, in BillingCurrency) or as quantity
(``ContractCommitmentAppliedQuantity`` of ``ContractCommitmentAppliedUnit``)::

    {"Elements": [{"ContractID": "c-1", "ContractCommitmentID": "pool-1", "ContractCommitmentAppliedCost": 15.00},
                  {"ContractID": "c-1", "ContractCommitmentID": "gpu-hours", "ContractCommitmentAppliedQuantity": 0.5,
                   "ContractCommitmentAppliedUnit": "compute_hours"}]}

Source: FOCUS specification, column ContractApplied (introduced in 1.3),
https://github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec ``specification/columns/contractapplied.md``. The
specification's text spells the keys ``...ID``; its errata and several data generators write ``...Id``: both are
read.

:func:`contract_applied_sql` sums the elements of the month's charges per commitment, contract, provider, billing
currency and whether the charge is a purchase (a contract's purchase row applies the whole contract to it, not a
drawdown). The review's commitments (:func:`~finops.reconcile.commitment_schedule.commitment_summary`) count a
commitment named there at its applied cost in the tie-out, instead of the EffectiveCost of the rows its
``CommitmentDiscountStatus`` marks; a commitment only ``ContractApplied`` names (a prepaid pool, a spend commitment)
gets its own row, its term, payment and amount from the Contract Commitment dataset when given.

>>> "CROSS JOIN UNNEST(CAST(json_extract(ContractApplied, '$.Elements') AS JSON[]))" in contract_applied_sql(
...     "focus_bills", "2026-05")
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..errors import InputError, Location
from .aggregation import MonthBasis, decimal_of, month_filter

__all__ = ["APPLIED_COLUMN", "BAD_CONTRACT_APPLIED", "BAD_ELEMENT", "AppliedSums", "contract_applied_sql", "element_predicate",
           "read_applied", "unknown_commitment", "unknown_error"]

#: The FOCUS column read here.
APPLIED_COLUMN = "ContractApplied"

#: An element's property -> SQL over one element (``element``, JSON) reading it, either spelling of the keys.
_PROPERTY = "COALESCE(json_extract_string(element, '$.{key}ID'), json_extract_string(element, '$.{key}Id'))"
_AMOUNT = "CAST(json_extract_string(element, '$.ContractCommitmentApplied{key}') AS DECIMAL(38, 10))"

#: Result columns of :func:`contract_applied_sql`, in order: name -> SQL (the first five are the group's key).
_COLUMNS: dict[str, str] = {
    "commitment_id": _PROPERTY.format(key="ContractCommitment"),
    "contract_id": _PROPERTY.format(key="Contract"),
    "provider_name": "ProviderName",
    "billing_currency": "BillingCurrency",
    "purchase": "ChargeCategory = 'Purchase'",
    "applied_cost": f"SUM({_AMOUNT.format(key='Cost')})",
    "applied_quantity": f"SUM({_AMOUNT.format(key='Quantity')})",
    "applied_unit": "MIN(json_extract_string(element, '$.ContractCommitmentAppliedUnit'))",
    "charges": "COUNT(*)",
}
_KEYS = 5

#: SQL over one ``element`` of ContractApplied's ``Elements`` (JSON) that holds when FOCUS refuses it: no commitment
#: id, or an applied cost or quantity that is not a number.
BAD_ELEMENT = (
    _PROPERTY.format(key="ContractCommitment") + " IS NULL OR ("
    "json_extract_string(element, '$.ContractCommitmentAppliedCost') IS NOT NULL AND TRY_CAST(json_extract_string("
    "element, '$.ContractCommitmentAppliedCost') AS DECIMAL(38, 10)) IS NULL) OR (json_extract_string(element, "
    "'$.ContractCommitmentAppliedQuantity') IS NOT NULL AND TRY_CAST(json_extract_string(element, "
    "'$.ContractCommitmentAppliedQuantity') AS DECIMAL(38, 10)) IS NULL)")
#: SQL over a bill file's ``{c}`` (ContractApplied as text) that holds for a value FOCUS refuses: not JSON, no
#: ``Elements`` array, or an element :data:`BAD_ELEMENT` refuses. DuckDB's own form of the check every engine runs
#: (:data:`finops.reconcile.bill_checks.CHECKS`): a list comprehension over the elements, so the local scan tests
#: each row without a subquery. Used by :func:`finops.reconcile.bills.locate_bad_value` to name the row.
BAD_CONTRACT_APPLIED = (
    "{c} IS NOT NULL AND {c} <> '' AND CASE WHEN NOT json_valid({c}) THEN true "
    "WHEN json_type({c}, '$.Elements') IS DISTINCT FROM 'ARRAY' THEN true "
    "ELSE list_bool_or([" + BAD_ELEMENT + " "
    "FOR element IN CAST(json_extract({c}, '$.Elements') AS JSON[])]) END")


@dataclass(frozen=True)
class AppliedSums:
    """One contract commitment's applied amounts over the month's charges of one provider and billing currency,
    purchases (``purchase``) apart from the rest. ``quantity`` and ``unit`` are ``None`` when no element said."""

    commitment_id: str
    contract_id: str
    provider_name: str
    billing_currency: str | None
    purchase: bool
    cost: Decimal
    quantity: Decimal | None
    unit: str | None
    charges: int


def contract_applied_sql(relation: str, month: str, basis: MonthBasis = "invoice") -> str:
    """The month's ``ContractApplied`` elements over ``relation``, summed per commitment (DuckDB's dialect; the
    remote engines run it transpiled, :func:`finops.reconcile.dialects.remote_contract_applied_sql`)."""
    columns = ",\n  ".join(f"{sql} AS {name}" for name, sql in _COLUMNS.items())
    keys = ", ".join(str(i) for i in range(1, _KEYS + 1))
    return (f"SELECT\n  {columns}\nFROM {relation}\n"
            f"CROSS JOIN UNNEST(CAST(json_extract({APPLIED_COLUMN}, '$.Elements') AS JSON[])) AS applied(element)\n"
            f"WHERE {month_filter(month, basis)} AND {APPLIED_COLUMN} IS NOT NULL AND {APPLIED_COLUMN} <> ''\n"
            f"GROUP BY {keys}")


def read_applied(rows: Iterable[Sequence[Any]], where: Location | None = None) -> tuple[AppliedSums, ...]:
    """The rows of :func:`contract_applied_sql` (values typed, or all text as Athena returns them) as
    :class:`AppliedSums`. An element without a commitment id raises, naming ``where`` (a remote engine's table
    and column; a local file's row is found by its own check first)."""
    sums = []
    for row in rows:
        cid, contract, provider, currency, purchase, cost, quantity, unit, charges = row
        if cid is None or str(cid).strip() == "":
            raise InputError("a ContractApplied element has no ContractCommitmentID", where=where,
                             hint="each element of ContractApplied names the commitment it applies to")
        sums.append(AppliedSums(str(cid), "" if contract is None else str(contract),
                                "" if provider is None else str(provider), currency,
                                str(purchase).lower() in ("true", "1"), decimal_of(cost) or Decimal(0),
                                decimal_of(quantity), unit, int(charges)))
    return tuple(sorted(sums, key=lambda s: (s.commitment_id, s.contract_id, s.provider_name,
                                             s.billing_currency or "", s.purchase)))


def unknown_commitment(applied: Iterable[AppliedSums], known: Mapping[str, str]) -> AppliedSums | None:
    """The first applied commitment that the Contract Commitment dataset (``known``: commitment id -> its contract
    id, "" when the dataset does not say) does not list, or lists under another contract."""
    for s in applied:
        if s.commitment_id not in known:
            return s
        contract = known[s.commitment_id]
        if contract and s.contract_id and s.contract_id != contract:
            return s
    return None


def element_predicate(commitment_id: str) -> str:
    """SQL over a bill file's ContractApplied (as text) that holds on a row naming ``commitment_id`` (error path).

    >>> element_predicate("o'k")
    'contains("ContractApplied", \\'"o\\'\\'k"\\')'
    """
    quoted = ('"' + commitment_id + '"').replace("'", "''")
    return f"contains(\"{APPLIED_COLUMN}\", '{quoted}')"


def unknown_error(found: AppliedSums, where: Location, dataset: str, known: Mapping[str, str]) -> InputError:
    """The error for a commitment :func:`unknown_commitment` found, at ``where`` (file, row, column)."""
    if found.commitment_id in known:
        return InputError(f"ContractApplied applies this charge to commitment {found.commitment_id} of contract "
                          f"{found.contract_id}, which {dataset} lists under contract {known[found.commitment_id]}",
                          where=where, hint="give the Contract Commitment dataset exported with these bills")
    return InputError(f"ContractApplied applies this charge to contract commitment {found.commitment_id}, which "
                      f"{dataset} does not list", where=where,
                      hint="give the Contract Commitment dataset exported with these bills (same provider and "
                           "period), or leave out --contract-commitments")
