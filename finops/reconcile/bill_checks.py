"""The values FOCUS refuses on a charge, checked before a cent is summed: one list, run by every engine.

A value listed here would make money silently wrong if it were summed: an empty ``BilledCost`` or
``EffectiveCost`` reads as 0 (FOCUS requires an amount on every row, 0 for none), ``Tags`` that are not a JSON
object match no tag rule (the charge lands unmapped), and a closed FOCUS value outside its vocabulary
(:data:`finops.focus.ALLOWED_VALUES`: ``Usgae``) leaves its charge out of the figure that branches on it.
Each :class:`BillCheck` is a FOCUS column, SQL that holds for a value FOCUS refuses there (DuckDB's dialect,
``{c}``: the column as read) and what is wrong with it.

* The local engine tests them on each row of a bill file as its scan reads it (``bills._STRICT``), and
  :func:`~finops.reconcile.bills.locate_bad_value` names the file, row and column.
* A remote engine (BigQuery, Athena) runs them all over the month's charges in one query
  (:func:`checks_sql`, transpiled by :func:`finops.reconcile.dialects.remote_checks_sql`) that returns the first
  :data:`EXAMPLES` offenders of each check, with the keys of their charge (:data:`CHARGE_KEY`);
  :func:`refused_charge` names the engine, table, column, the value and that charge.

The one test sqlglot cannot write for the remote engines, "this text is not a JSON object" (DuckDB's
``json_valid`` and ``json_type`` pass through unchanged, and neither engine has them), is written per engine in
:data:`NOT_JSON_OBJECT` and stands in the checks as ``not_json_object({c})``.

>>> [check.column for check in CHECKS][:4]
['BilledCost', 'EffectiveCost', 'Tags', 'AllocatedTags']
>>> CHECKS[2].test("duckdb").format(c="Tags")
"Tags IS NOT NULL AND Tags <> '' AND (NOT json_valid(Tags) OR json_type(Tags) <> 'OBJECT')"
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, Location
from ..focus import ALLOWED_VALUES, NOT_NULL_VALUES, allowed_value_hint
from .aggregation import OUTSIDE_VOCABULARY, MonthBasis, month_filter
from .contract_applied import APPLIED_COLUMN, BAD_ELEMENT

__all__ = ["CHARGE_KEY", "CHECKS", "EXAMPLES", "JSON_ARRAY_AT", "JSON_ARRAY_AT_CALL", "NOT_JSON_OBJECT",
           "NOT_JSON_OBJECT_CALL", "BillCheck", "checks_sql", "first_refused", "refused_charge"]

#: The name the checks give the JSON object test (``not_json_object({c})``), written per engine from
#: :data:`NOT_JSON_OBJECT`.
NOT_JSON_OBJECT_CALL = "not_json_object"

#: Engine -> SQL in its own dialect that holds when the text ``{c}`` (neither NULL nor empty) is not a JSON object:
#: not JSON at all, or JSON of another type (an array, a string, ``null``). BigQuery: ``SAFE.PARSE_JSON`` is NULL on
#: text that is not JSON, and ``JSON_TYPE`` names the type in lower case
#: (https://cloud.google.com/bigquery/docs/reference/standard-sql/json_functions, ``PARSE_JSON``, ``JSON_TYPE``;
#: the ``SAFE.`` prefix: https://cloud.google.com/bigquery/docs/reference/standard-sql/functions-reference).
#: Athena (Trino): ``json_parse`` fails on text that is not JSON and a cast of JSON that is no object to a MAP fails
#: too, which ``TRY`` turns into NULL (https://trino.io/docs/current/functions/json.html,
#: https://trino.io/docs/current/functions/conditional.html#try).
NOT_JSON_OBJECT: dict[str, str] = {
    "duckdb": "(NOT json_valid({c}) OR json_type({c}) <> 'OBJECT')",
    "bigquery": "(SAFE.PARSE_JSON({c}) IS NULL OR LOWER(JSON_TYPE(SAFE.PARSE_JSON({c}))) <> 'object')",
    "athena": "TRY(CAST(json_parse({c}) AS MAP(VARCHAR, JSON))) IS NULL",
}

#: The name the checks give the JSON array at a path of a text (``json_array_at({c}, '$.Elements')``), written per
#: engine from :data:`JSON_ARRAY_AT`.
JSON_ARRAY_AT_CALL = "json_array_at"

#: Engine -> SQL in its own dialect for the JSON array at ``{path}`` of the text ``{c}``, NULL where the text is not
#: JSON or holds no array there (to ``UNNEST`` and to test). BigQuery: ``JSON_EXTRACT_ARRAY`` of a JSON-formatted
#: STRING, ``SAFE.`` for text that is not JSON (json_functions, ``JSON_EXTRACT_ARRAY``). Athena (Trino): a cast of
#: the JSON there to ``ARRAY(JSON)``, which fails on anything else, in ``TRY`` (Trino's JSON functions and ``TRY``,
#: as above). DuckDB alike, with ``TRY``.
JSON_ARRAY_AT: dict[str, str] = {
    "duckdb": "TRY(CAST(json_extract({c}, {path}) AS JSON[]))",
    "bigquery": "SAFE.JSON_EXTRACT_ARRAY({c}, {path})",
    "athena": "TRY(CAST(json_extract(json_parse({c}), {path}) AS ARRAY(JSON)))",
}

#: Offenders a remote engine returns per check: the first names the charge, the others say there are more.
EXAMPLES = 3
#: The columns that name a charge of a remote table (no row numbers there): its invoice, sub-account, service and
#: hour. Each is a column the aggregation reads anyway, so the checks ask a table for no column it would not need
#: (ResourceId, optional in FOCUS, is not read).
CHARGE_KEY = ("InvoiceId", "SubAccountId", "ServiceName", "ChargePeriodStart")

_EMPTY_AMOUNT = "is empty; FOCUS requires an amount on every row (0 for none)"
_NOT_OBJECT = "is not a JSON object; FOCUS Tags are a JSON object of key-value pairs, e.g. {{\"team\": \"ml\"}}"


@dataclass(frozen=True)
class BillCheck:
    """A value FOCUS refuses in ``column``: ``refuses`` (DuckDB's SQL, ``{c}`` the column, ``not_json_object({c})``
    the JSON object test) holds for it, and ``wrong`` says what is wrong (after the column's name; ``{{`` for a
    brace)."""

    column: str
    refuses: str
    wrong: str

    def test(self, engine: str = "duckdb") -> str:
        """The check's SQL with the JSON tests written for DuckDB (:data:`NOT_JSON_OBJECT`, :data:`JSON_ARRAY_AT`), or
        left as calls for :func:`finops.reconcile.dialects.remote_checks_sql` to write for another ``engine``."""
        if engine != "duckdb":
            return self.refuses
        return self.refuses.replace(NOT_JSON_OBJECT_CALL + "({c})", NOT_JSON_OBJECT["duckdb"]).replace(
            _APPLIED_ELEMENTS, JSON_ARRAY_AT["duckdb"].format(c="{c}", path=_ELEMENTS_PATH))

    def hint(self, value: str, place: str = "row") -> str:
        """What to do about ``value`` on this ``place`` (a file's row, a table's charge): the FOCUS value it
        misspells, or to fix it there."""
        if self.column in ALLOWED_VALUES:
            return allowed_value_hint(self.column, value)
        return f"fix {self.column} on this {place}, or export the bill again"


def _outside(column: str) -> BillCheck:
    """The check of a closed FOCUS vocabulary (:data:`~finops.reconcile.aggregation.OUTSIDE_VOCABULARY`).

    >>> _outside("ChargeClass").wrong
    'is neither empty nor a FOCUS value (Correction)'
    """
    allowed = ", ".join(ALLOWED_VALUES[column])
    return BillCheck(column, OUTSIDE_VOCABULARY[column], f"is not a FOCUS value ({allowed})"
                     if column in NOT_NULL_VALUES else f"is neither empty nor a FOCUS value ({allowed})")


_TAGS_TEST = "{c} IS NOT NULL AND {c} <> '' AND " + NOT_JSON_OBJECT_CALL + "({c})"
_ELEMENTS_PATH = "'$.Elements'"
_APPLIED_ELEMENTS = f"{JSON_ARRAY_AT_CALL}({{c}}, {_ELEMENTS_PATH})"
#: FOCUS 1.3 ContractApplied: an ``Elements`` array (text that is not JSON has none), each element as
#: :data:`~finops.reconcile.contract_applied.BAD_ELEMENT` asks; the local scan runs DuckDB's own form of it
#: (:data:`~finops.reconcile.contract_applied.BAD_CONTRACT_APPLIED`, a list comprehension).
_APPLIED_TEST = (f"{{c}} IS NOT NULL AND {{c}} <> '' AND ({_APPLIED_ELEMENTS} IS NULL OR EXISTS (SELECT 1 FROM "
                 f"UNNEST({_APPLIED_ELEMENTS}) AS applied(element) WHERE {BAD_ELEMENT}))")

#: Every check, in the order a bill is refused by (the first that fails names the bill).
CHECKS: tuple[BillCheck, ...] = (
    BillCheck("BilledCost", "{c} IS NULL", _EMPTY_AMOUNT),
    BillCheck("EffectiveCost", "{c} IS NULL", _EMPTY_AMOUNT),
    BillCheck("Tags", _TAGS_TEST, _NOT_OBJECT),
    # FOCUS 1.3: laid over Tags (RFC 7396 merge patch), so held to the same shape
    BillCheck("AllocatedTags", _TAGS_TEST, _NOT_OBJECT),
    *(_outside(column) for column in ALLOWED_VALUES),
    BillCheck(APPLIED_COLUMN, _APPLIED_TEST, "is not a FOCUS ContractApplied object: JSON with an \"Elements\" array, "
              "each element naming its ContractCommitmentID, its applied cost or quantity a number"),
)


def _text(expression: str) -> str:
    return f"CAST({expression} AS VARCHAR)"


def checks_sql(relation: str, month: str, columns: Iterable[str], *, basis: MonthBasis = "invoice",
               limit: int = EXAMPLES) -> str:
    """One query of the :data:`CHECKS` on ``columns`` over the charges of ``month`` in ``relation`` (DuckDB's
    dialect, the JSON object test as ``not_json_object``): rows (check's column, value as text, then
    :data:`CHARGE_KEY` as text), at most ``limit`` per check. Each check reads its column and the month's; the
    key columns are read for the offenders only.

    >>> print(checks_sql("t", "2026-05", ["BilledCost"]).splitlines()[1])
    SELECT * FROM (SELECT 'BilledCost' AS focus_column, CAST(BilledCost AS VARCHAR) AS focus_value, \
CAST(InvoiceId AS VARCHAR) AS key_invoice_id, CAST(SubAccountId AS VARCHAR) AS key_sub_account_id, \
CAST(ServiceName AS VARCHAR) AS key_service_name, CAST(ChargePeriodStart AS VARCHAR) AS key_charge_period_start FROM t WHERE BillingPeriodStart >= \
TIMESTAMP '2026-04-30 10:00:00' AND BillingPeriodStart < TIMESTAMP '2026-05-31 10:00:00' AND \
(ChargePeriodStart IS NULL OR ChargePeriodStart >= TIMESTAMP '0001-01-01 00:00:00') AND (BilledCost IS NULL) \
LIMIT 3) AS check_0
    """
    wanted = set(columns)
    key = ", ".join(f"{_text(name)} AS key_{_snake(name)}" for name in CHARGE_KEY)
    branches = [f"SELECT * FROM (SELECT '{check.column}' AS focus_column, {_text(check.column)} AS focus_value, {key} "
                f"FROM {relation} WHERE {month_filter(month, basis)} AND ({check.test('remote').format(c=check.column)}) "
                f"LIMIT {int(limit)}) AS check_{i}"
                for i, check in enumerate(c for c in CHECKS if c.column in wanted)]
    if not branches:
        raise ValueError("no column to check")
    return "SELECT focus_column, focus_value, " + ", ".join(
        f"key_{_snake(name)}" for name in CHARGE_KEY) + " FROM (\n" + "\nUNION ALL\n".join(branches) + "\n) AS refused"


def _snake(name: str) -> str:
    return "".join(f"_{ch.lower()}" if ch.isupper() and i else ch.lower() for i, ch in enumerate(name))


def first_refused(rows: Iterable[Sequence[Any]]) -> tuple[BillCheck, Sequence[Any], int] | None:
    """The first row of :func:`checks_sql`'s result in :data:`CHECKS` order, with its check and the number of
    offenders returned for that check; ``None`` when every charge passes."""
    by_column: dict[str, list[Sequence[Any]]] = {}
    for row in rows:
        by_column.setdefault(str(row[0]), []).append(row)
    for check in CHECKS:
        found = by_column.get(check.column)
        if found:
            return check, found[0], len(found)
    return None


def refused_charge(rows: Iterable[Sequence[Any]], source: str) -> InputError | None:
    """The first offender of :func:`checks_sql`'s result (its rows as an engine returns them) as an error naming
    ``source`` (the engine and table), the column, the value and the charge (:data:`CHARGE_KEY`); ``None`` when
    there is none.

    >>> str(refused_charge([("Tags", "team=ml", "I1", None, None, "2026-05-03 00:00:00")], "athena:focus.bills"))[:53]
    'athena:focus.bills, column Tags: Tags is not a JSON o'
    >>> refused_charge([("Tags", "team=ml", "I1", None, None, None)], "athena:t").message.split(", got ")[1]
    "'team=ml' on the charge InvoiceId 'I1'"
    """
    found = first_refused(rows)
    if found is None:
        return None
    check, row, count = found
    value = "" if row[1] is None else str(row[1])
    named = ", ".join(f"{name} {str(part)[:60]!r}" for name, part in zip(CHARGE_KEY, row[2:], strict=True)
                      if part is not None and str(part) != "")
    more = f" (and {count - 1} more such charge{'s' if count > 2 else ''} at least)" if count > 1 else ""
    message = (f"{check.column} {check.wrong.format()}" + (f", got {value[:60]!r}" if value else "")
               + (f" on the charge {named}" if named else "") + more)
    return InputError(message, where=Location(file=source, column=check.column), hint=check.hint(value, "charge"))
