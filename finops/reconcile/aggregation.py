"""The FOCUS aggregation: SQL that maps and folds a month of bills into the few totals the review shows.

Every figure of a reconciliation (totals, invoices, commitments, spot share, GPU-hours, plan lines)
is a sum over charges that share a few dimensions, so the bill is read once, by the engine that holds
it (DuckDB locally, BigQuery or Athena remotely, see :mod:`finops.reconcile.dialects`), and only those
sums come back. The SQL is written in DuckDB's dialect over a relation with the FOCUS 1.2 columns of
:mod:`finops.focus`, in two steps:

1. :func:`charge_groups_sql`, the scan: each charge of the month gets its plan line from the Mapping
   rules (:func:`~finops.reconcile.mapping.plan_line_sql`, NULL when unmapped) and is summed by plan
   line and :data:`DIMENSIONS`; an unmapped charge is also kept apart by what a rule could match on
   (sub-account, region, tags: :data:`UNMAPPED_DIMENSIONS`), so the review can list it.
2. :func:`summary_sql`, over those groups: one row per plan line and dimensions (``part = 'group'``,
   a :class:`ChargeGroup`), the largest ``limit`` unmapped charge groups by EffectiveCost in the plan
   currency (``'unmapped'``) and, per billing currency, one row for the rest (``'rest'``; its
   ``unmapped_rank`` is the rank of the last one, so the count of the rest is ``rank - limit``).

Locally step 1 is a temporary table (the ``--unmapped-csv`` file is written from it too); remotely
the two steps are one statement. A charge belongs to the month :func:`month_filter` selects; the
instance type is ``x_InstanceType`` when the connector filled it, else ``SkuPriceDetails.InstanceType``.
Every typed FOCUS column the figures use is read by the scan, and the other typed mandatory ones when
a file stores them as text (:data:`CHECKED_COLUMNS`), so a value that does not cast is found in the
same single pass. Sums are exact decimals: DECIMAL(38, 10) inputs give exact sums to
1e-10 in every engine.

>>> "BillingPeriodStart < TIMESTAMP '2026-05-31 10:00:00'" in charge_groups_sql("focus_bills", "2026-05", ())
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, get_args

from ..depreciation import month_index, month_label
from ..focus import ALLOWED_VALUES, NOT_NULL_VALUES
from .mapping import compared_columns, plan_line_sql
from .plan import MappingRule
from .tokens import TOKEN_KIND_SQL

__all__ = [
    "BAD_VALUES",
    "BILLING_ZONE_LEAD_HOURS",
    "CHECKED_COLUMNS",
    "DIMENSIONS",
    "FIGURE_COLUMNS",
    "MEASURES",
    "MONTH_BASES",
    "MONTH_COLUMNS",
    "UNGROUPED_VOCABULARY",
    "UNMAPPED_DIMENSIONS",
    "UNMAPPED_LIMIT",
    "ChargeGroup",
    "MonthBasis",
    "Summary",
    "UnmappedSums",
    "bad_values_sql",
    "billing_month",
    "charge_groups_sql",
    "decimal_of",
    "month_bounds",
    "month_filter",
    "summary_sql",
    "unmapped_csv_sql",
]

#: Which month a charge belongs to: its invoice's (billing period) or its usage's (charge period).
MonthBasis = Literal["invoice", "usage"]
MONTH_BASES: tuple[str, ...] = get_args(MonthBasis)
#: month basis -> the FOCUS column whose month is the charge's month
MONTH_COLUMNS: dict[str, str] = {"invoice": "BillingPeriodStart", "usage": "ChargePeriodStart"}

#: The instance type of a charge.
INSTANCE_TYPE = "COALESCE(x_InstanceType, JSON_EXTRACT_STRING(SkuPriceDetails, '$.InstanceType'))"

#: The term of a commitment purchase as its SkuPriceDetails write it (AWS ``x_PurchaseTerm``, Google Cloud
#: ``x_Plan``; read as months by :func:`~finops.reconcile.commitment_schedule.term_months`), NULL on other rows.
COMMITMENT_TERM = ("CASE WHEN ChargeCategory = 'Purchase' THEN COALESCE(JSON_EXTRACT_STRING(SkuPriceDetails, "
                   "'$.x_PurchaseTerm'), JSON_EXTRACT_STRING(SkuPriceDetails, '$.x_Plan')) END")

#: Dimensions the review's figures group by: result name -> expression over FOCUS columns.
DIMENSIONS: dict[str, str] = {
    "provider_name": "ProviderName",
    "billing_currency": "BillingCurrency",
    "invoice_id": "InvoiceId",
    "service_name": "ServiceName",
    "instance_type": INSTANCE_TYPE,
    "charge_category": "ChargeCategory",
    "charge_frequency": "ChargeFrequency",
    "pricing_category": "PricingCategory",
    "commitment_status": "CommitmentDiscountStatus",
    # the commitment's own row of the review (finops/reconcile/commitment_schedule.py), from the same scan
    "commitment_id": "CommitmentDiscountId",
    "commitment_type": "CommitmentDiscountType",
    "commitment_name": "CommitmentDiscountName",
    "commitment_term": COMMITMENT_TERM,
    "gpu_model": "x_GpuModel",
    "purchase_option": "x_PurchaseOption",
    "consumed_unit": "ConsumedUnit",
    # input, output or cached tokens of a token API's charge (finops/reconcile/tokens.py), NULL on other charges
    "token_kind": TOKEN_KIND_SQL,
}

#: What else a rule could match on, kept for unmapped charges only (NULL for mapped ones).
UNMAPPED_DIMENSIONS: dict[str, str] = {
    "sub_account": "COALESCE(SubAccountName, SubAccountId, '')",
    "region_id": "COALESCE(RegionId, '')",
    "tags": "COALESCE(Tags, '')",
}

#: Measures: result name -> (aggregate over the bill, aggregate over groups of it).
MEASURES: dict[str, tuple[str, str]] = {
    "billed_cost": ("SUM(BilledCost)", "SUM(billed_cost)"),
    "effective_cost": ("SUM(EffectiveCost)", "SUM(effective_cost)"),
    "list_cost": ("SUM(ListCost)", "SUM(list_cost)"),
    "consumed_quantity": ("SUM(ConsumedQuantity)", "SUM(consumed_quantity)"),
    "gpu_hours": ("SUM(x_GpuHours)", "SUM(gpu_hours)"),
    "first_charge_start": ("MIN(ChargePeriodStart)", "MIN(first_charge_start)"),
    "last_charge_end": ("MAX(ChargePeriodEnd)", "MAX(last_charge_end)"),
    "row_count": ("COUNT(*)", "SUM(row_count)"),
}

#: Typed mandatory FOCUS columns no figure sums. The scan reads them only when a file stores them as text
#: (CSV), so a value there that does not cast is still found in the one pass; a typed Parquet column
#: always casts, and leaving it unread spares the scan its decoding.
CHECKED_COLUMNS = ("BillingPeriodStart", "BillingPeriodEnd", "ContractedCost", "PricingQuantity")


def _outside_vocabulary(column: str) -> str:
    """SQL that holds (``{c}``: the column as read) for a value outside the closed FOCUS vocabulary of ``column``
    (:data:`finops.focus.ALLOWED_VALUES`), or for no value where FOCUS requires one
    (:data:`finops.focus.NOT_NULL_VALUES`). Empty text counts as no value (a Parquet writer may keep it), so the
    test holds alike on a file's own cells and on the view's.

    >>> _outside_vocabulary("ChargeClass")
    "COALESCE({c}, '') NOT IN ('', 'Correction')"
    """
    allowed = ((() if column in NOT_NULL_VALUES else ("",)) + ALLOWED_VALUES[column])
    return f"COALESCE({{c}}, '') NOT IN ({', '.join(_sql_quote(v) for v in allowed)})"


def _sql_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: FOCUS column of a closed vocabulary -> the SQL (``{c}``: the column) that holds for a value outside it.
OUTSIDE_VOCABULARY: dict[str, str] = {column: _outside_vocabulary(column) for column in ALLOWED_VALUES}
#: The :data:`DIMENSIONS` of a closed FOCUS vocabulary: checked once per charge group by :func:`bad_values_sql`.
VOCABULARY_DIMENSIONS: dict[str, str] = {name: column for name, column in DIMENSIONS.items()
                                         if column in OUTSIDE_VOCABULARY}
#: The closed FOCUS vocabularies that are no key of the charge groups (ChargeClass): count name -> column. The local
#: scan counts their values outside FOCUS per group (:data:`BAD_VALUES`). (A remote engine runs the checks of
#: :mod:`finops.reconcile.bill_checks` over the charges themselves, in one query before this aggregation.)
UNGROUPED_VOCABULARY: dict[str, str] = {
    "bad_" + re.sub(r"(?<!^)(?=[A-Z])", "_", column).lower(): column  # ChargeClass -> bad_charge_class
    for column in OUTSIDE_VOCABULARY if column not in VOCABULARY_DIMENSIONS.values()}

#: Values FOCUS refuses, counted per charge group by the local scan (``charge_groups_sql(..., strict=True)``) instead
#: of tested on every row of the view (``bills.open_bills(strict=False)``): result name -> its count over the
#: charges of the scan's inner query. An empty BilledCost or EffectiveCost (FOCUS requires an amount on every row),
#: and Tags that are not a JSON object on a mapped charge (``json_type`` stops the scan by itself on text that is not
#: JSON). An unmapped charge's Tags is a key of its group, so :func:`bad_values_sql` checks it once per group: about
#: half the Tags parsed on the fleet bill (docs/reconcile.md, Speed); so are the closed FOCUS vocabularies that are
#: keys of the groups (:data:`VOCABULARY_DIMENSIONS`), while ChargeClass, no key, is counted here.
BAD_VALUES: dict[str, str] = {
    "empty_billed_cost": "COUNT(*) - COUNT(BilledCost)",
    "empty_effective_cost": "COUNT(*) - COUNT(EffectiveCost)",
    # CASE, not AND: DuckDB evaluates every operand of an AND, and json_type stops on the empty text
    "mapped_bad_tags": "COUNT(CASE WHEN plan_line IS NOT NULL AND tags_any <> '' THEN NULLIF(json_type(tags_any), 'OBJECT') END)",
    # the closed FOCUS vocabularies that are no dimension (the others are checked per group, bad_values_sql)
    **{name: f"COUNT(CASE WHEN {OUTSIDE_VOCABULARY[column].format(c=column)} THEN 1 END)"
       for name, column in UNGROUPED_VOCABULARY.items()},
}

#: Unmapped charge groups the review lists one by one; the rest is one row (all are in ``--unmapped-csv``).
UNMAPPED_LIMIT = 200

#: The key of an unmapped charge group, as the review lists it: (SQL over the groups, name, title in the CSV).
_UNMAPPED_KEY = (("COALESCE(provider_name, '')", "provider_name", "ProviderName"),
                 ("sub_account", "sub_account", "SubAccount"),
                 ("COALESCE(service_name, '')", "service_name", "ServiceName"),
                 ("COALESCE(instance_type, '')", "instance_type", "InstanceType"),
                 ("region_id", "region_id", "RegionId"), ("tags", "tags", "Tags"))
_UNMAPPED_NAMES = tuple(name for _, name, _ in _UNMAPPED_KEY)
#: The sums of an unmapped charge group in the unmapped-charges CSV, after its key and currency: SQL, column title.
_UNMAPPED_SUMS = (("SUM(effective_cost)", "EffectiveCost"), ("SUM(billed_cost)", "BilledCost"),
                  ("SUM(row_count)", "Charges"))
#: The header of the unmapped-charges CSV (:func:`unmapped_csv_sql`).
UNMAPPED_CSV_COLUMNS: tuple[str, ...] = (*(title for _, _, title in _UNMAPPED_KEY), "BillingCurrency",
                                         *(title for _, title in _UNMAPPED_SUMS))

# SQL pieces, kept here (SQL words and names ignore case, so a change of their case would change nothing):
#: the plan line's column, the bill columns the measures read, typed NULLs and an untyped one
_PLAN_LINE = "plan_line"
_MEASURED = ("BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity", "x_GpuHours", "ChargePeriodStart",
             "ChargePeriodEnd")
_NULL_TEXT, _NULL_COUNT, _NULL = "CAST(NULL AS VARCHAR)", "CAST(NULL AS BIGINT)", "NULL"
#: the words joining the equalities of two unmapped keys, and the tests for a bad value
_AND, _OR = " AND ", " OR "
#: The bill columns every figure is read from: the month columns and the measures' columns. Damage anywhere
#: else cannot change an amount; the Parquet check reads these (:mod:`finops.reconcile.parquet_check`).
FIGURE_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys((*MONTH_COLUMNS.values(), *_MEASURED)))
#: the summary's part column of a group row, the unmapped rank, the number of unmapped keys, how the rest sums
_GROUP_PART = "'group' AS part"
_RANK, _KEYS = "unmapped_rank", "unmapped_keys"
_SUM_OF = "SUM({})"
#: the exact weight of an unmapped group (no rates)
_EXACT_WEIGHT = "effective_cost"
#: a summary row's positions: name (plan line, dimensions, measures, unmapped dimensions, rank) -> index
_SUMMARY_COLUMNS = {name: i for i, name in enumerate(
    ["part", _PLAN_LINE, *DIMENSIONS, *MEASURES, *UNMAPPED_DIMENSIONS, _RANK])}


def month_bounds(month: str) -> tuple[str, str]:
    """First instant of ``month`` and of the month after, as SQL timestamp text.

    >>> month_bounds("2026-12")
    ('2026-12-01 00:00:00', '2027-01-01 00:00:00')
    """
    index = month_index(month)
    return f"{month_label(index)}-01 00:00:00", f"{month_label(index + 1)}-01 00:00:00"


#: Hours the first instant of a month, in the earliest time zone a billing period is written in (UTC+14:00), comes
#: before the first instant of that month in UTC; the latest zone (UTC-12:00) comes 12 hours after.
BILLING_ZONE_LEAD_HOURS = 14


def billing_month(start: datetime) -> str:
    """The invoice month of a billing period starting at ``start`` (naive UTC), whatever zone it was written
    in: the month of ``start`` + :data:`BILLING_ZONE_LEAD_HOURS` (see :func:`month_filter`).

    >>> billing_month(datetime(2026, 4, 30, 22)), billing_month(datetime(2026, 5, 1, 7)), billing_month(datetime(2026, 5, 1))
    ('2026-05', '2026-05', '2026-05')
    """
    shifted = start + timedelta(hours=BILLING_ZONE_LEAD_HOURS)
    return f"{shifted.year:04d}-{shifted.month:02d}"


def _billing_bound(month: str) -> str:
    """The first instant of ``month`` in UTC less :data:`BILLING_ZONE_LEAD_HOURS`, as SQL timestamp text.

    >>> _billing_bound("2026-05")
    '2026-04-30 10:00:00'
    """
    first = datetime.fromisoformat(month_bounds(month)[0]) - timedelta(hours=BILLING_ZONE_LEAD_HOURS)
    return first.strftime("%Y-%m-%d %H:%M:%S")


def month_filter(month: str, basis: MonthBasis = "invoice") -> str:
    """The SQL condition selecting the charges of ``month``, the one place the month is chosen: by
    ``BillingPeriodStart`` (the invoice month, the default, so a month ties to its invoices and a charge
    whose usage straddles a month edge is in exactly one month) or by ``ChargePeriodStart``
    (``basis="usage"``, usage-month accrual). On the invoice basis ``ChargePeriodStart`` is still read (a
    condition true for every timestamp), so a value that does not cast fails the scan and is located, as
    on the usage basis.

    A billing period is a calendar month in the provider's billing time zone: it starts at midnight on the
    1st there, written in UTC (AWS, ``2026-05-01T00:00:00Z``), with the zone's offset
    (``2026-05-01T00:00:00+02:00``, read as the instant ``2026-04-30 22:00`` UTC) or as that instant in UTC
    (a Pacific-time invoice month, ``2026-05-01T07:00:00Z``). Whatever the zone (UTC-12:00 to UTC+14:00),
    that instant lies within 14 hours before to 12 hours after the month's first instant in UTC and far
    from any other month's, so the invoice month is ``BillingPeriodStart`` in [first instant of the month
    - 14 h, first instant of the next month - 14 h).

    >>> month_filter("2026-05").split(" AND (")[0]
    "BillingPeriodStart >= TIMESTAMP '2026-04-30 10:00:00' AND BillingPeriodStart < TIMESTAMP '2026-05-31 10:00:00'"
    >>> month_filter("2026-05", "usage")
    "ChargePeriodStart >= TIMESTAMP '2026-05-01 00:00:00' AND ChargePeriodStart < TIMESTAMP '2026-06-01 00:00:00'"
    """
    column = MONTH_COLUMNS[basis]
    if basis == "usage":
        start, end = month_bounds(month)
        return f"{column} >= TIMESTAMP '{start}' AND {column} < TIMESTAMP '{end}'"
    start, end = _billing_bound(month), _billing_bound(month_label(month_index(month) + 1))
    chosen = f"{column} >= TIMESTAMP '{start}' AND {column} < TIMESTAMP '{end}'"
    return f"{chosen} AND (ChargePeriodStart IS NULL OR ChargePeriodStart >= TIMESTAMP '0001-01-01 00:00:00')"


def charge_groups_sql(relation: str, month: str, rules: Sequence[MappingRule], *, per: str | None = None,
                      checked: Sequence[str] = (), basis: MonthBasis = "invoice", strict: bool = False) -> str:
    """The scan of ``month`` over ``relation``: sums by ``plan_line`` (NULL: unmapped), :data:`DIMENSIONS`,
    then :data:`UNMAPPED_DIMENSIONS` (NULL for mapped charges) and ``per`` (locally the bill file, so the
    same scan gives each file's groups for :mod:`finops.reconcile.fingerprint`), then :data:`MEASURES`,
    then a count of each ``checked`` column (read only so that its values are cast, see
    :data:`CHECKED_COLUMNS`), then, with ``strict``, the counts of :data:`BAD_VALUES`.

    >>> charge_groups_sql("t", "2026-05", (), per="f").splitlines()[-1]
    'GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22'
    """
    # each column a rule compares is lowercased once per charge, not once per rule the CASE tries
    lowered = {column: f"lowered_{i}" for i, column in enumerate(compared_columns(rules, instance_type=INSTANCE_TYPE))}
    plan_line = plan_line_sql(rules, instance_type=INSTANCE_TYPE, lowered=lowered)
    source = relation if not lowered else (
        f"(SELECT *, {', '.join(f'LOWER({column}) AS {name}' for column, name in lowered.items())} FROM {relation}) AS bill")
    inner = [f"{plan_line} AS plan_line"] + [f"{expr} AS {name}" for name, expr in DIMENSIONS.items()]
    inner += [f"{expr} AS {name}_any" for name, expr in UNMAPPED_DIMENSIONS.items()] + ([per] if per else [])
    inner += [*_MEASURED, *checked] + ([*UNGROUPED_VOCABULARY.values()] if strict else [])
    outer = [_PLAN_LINE, *DIMENSIONS]
    outer += [f"CASE WHEN plan_line IS NULL THEN {name}_any END AS {name}" for name in UNMAPPED_DIMENSIONS]
    outer += ([per] if per else [])
    keys = len(outer)
    outer += [f"{over_bill} AS {name}" for name, (over_bill, _) in MEASURES.items()]
    outer += [f"COUNT({column}) AS checked_{column}" for column in checked]
    outer += [f"{count} AS {name}" for name, count in BAD_VALUES.items()] if strict else []
    selected, read = ",\n  ".join(outer), ",\n    ".join(inner)
    return (f"SELECT\n  {selected}\nFROM (\n  SELECT {read}\n  FROM {source}\n  WHERE {month_filter(month, basis)}\n"
            f") AS charges\nGROUP BY {', '.join(str(i + 1) for i in range(keys))}")


def bad_values_sql(groups: str) -> str:
    """The number of groups in ``groups`` (a ``charge_groups_sql(..., strict=True)`` table) that hold a value FOCUS
    refuses: a count of :data:`BAD_VALUES` above 0, or an unmapped group whose Tags (its key) are not a JSON object
    (text that is not JSON stops the query).

    >>> bad_values_sql("g").startswith("SELECT COUNT(*) FROM g WHERE empty_billed_cost > 0 OR ")
    True
    """
    counted = _OR.join([f"{name} > 0" for name in BAD_VALUES]
                       + [OUTSIDE_VOCABULARY[column].format(c=name) for name, column in VOCABULARY_DIMENSIONS.items()])
    return (f"SELECT COUNT(*) FROM {groups} WHERE {counted}{_OR}"
            f"CASE WHEN plan_line IS NULL AND tags <> '' THEN json_type(tags) <> 'OBJECT' END")


def _weight(rates: Mapping[str, Decimal] | None) -> str:
    """EffectiveCost in the plan currency, to rank unmapped groups: exact without rates, else DOUBLE."""
    if not rates:
        return _EXACT_WEIGHT
    cases = " ".join(f"WHEN '{code}' THEN {Decimal(rate)}" for code, rate in sorted(rates.items()))
    return f"CAST(effective_cost AS DOUBLE) * CASE UPPER(billing_currency) {cases} ELSE 1 END"


def summary_sql(groups: str, *, rates: Mapping[str, Decimal] | None = None, limit: int = UNMAPPED_LIMIT) -> str:
    """The review's rows from ``groups`` (the result of :func:`charge_groups_sql`): columns ``part``,
    ``plan_line``, :data:`DIMENSIONS`, :data:`MEASURES`, ``sub_account``, ``region_id``, ``tags``,
    ``unmapped_rank``. Unmapped keys are ranked by EffectiveCost converted with ``rates`` (largest first,
    then by key), per key over its billing currencies; only the first ``limit`` are ranked (ORDER BY ...
    LIMIT, so a bill with a hundred thousand unmapped keys sorts none of the others), and the rest's rank is
    the number of keys.

    >>> summary_sql("g").splitlines()[0]
    'WITH unmapped AS ('
    """
    key = ", ".join(f"{expr} AS {name}" for expr, name, _ in _UNMAPPED_KEY)
    names = ", ".join(_UNMAPPED_NAMES)
    same_key = _AND.join(f"u.{name} = t.{name}" for name in _UNMAPPED_NAMES)
    dims = list(DIMENSIONS)
    # The first branch types every column; NULL in the others takes that type in every engine.
    group_cols = [_GROUP_PART, _PLAN_LINE, *dims, *(f"{over} AS {name}" for name, (_, over) in MEASURES.items()),
                  *[_NULL_TEXT] * len(UNMAPPED_DIMENSIONS), _NULL_COUNT]

    def listed(part: str, shown: set[str], money: str, rank: str) -> list[str]:
        """A row of unmapped sums: ``shown`` dimensions, the two costs (``money`` around each), NULL elsewhere."""
        cols = [part, _NULL, *(f"u.{name}" if name in shown else _NULL for name in dims)]
        cols += [money.format(f"u.{name}") if name in ("billed_cost", "effective_cost") else _NULL for name in MEASURES]
        return cols + ([f"u.{name}" for name in UNMAPPED_DIMENSIONS] if part == "'unmapped'"
                       else [_NULL] * len(UNMAPPED_DIMENSIONS)) + [rank]

    unmapped = listed("'unmapped'", {"provider_name", "billing_currency", "service_name", "instance_type"}, "{}",
                      f"t.{_RANK}")
    rest = listed("'rest'", {"billing_currency"}, _SUM_OF, f"MAX(k.{_KEYS})")
    return (f"WITH unmapped AS (\n  SELECT {key}, billing_currency, SUM(effective_cost) AS effective_cost, "
            f"SUM(billed_cost) AS billed_cost, SUM({_weight(rates)}) AS weight\n"
            f"  FROM {groups} WHERE plan_line IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7\n"
            f"), keyed AS (\n  SELECT {names}, SUM(weight) AS key_weight FROM unmapped GROUP BY 1, 2, 3, 4, 5, 6\n"
            f"), listed_keys AS (\n  SELECT *, ROW_NUMBER() OVER (ORDER BY key_weight DESC, {names}) AS {_RANK}\n"
            f"  FROM (SELECT * FROM keyed ORDER BY key_weight DESC, {names} LIMIT {int(limit)}) AS largest\n"
            f"), counted AS (\n  SELECT COUNT(*) AS {_KEYS} FROM keyed\n)\n"
            f"SELECT {', '.join(group_cols)}\nFROM {groups}\n"
            f"GROUP BY {', '.join(str(i + 2) for i in range(1 + len(dims)))}\n"
            f"UNION ALL\nSELECT {', '.join(unmapped)}\nFROM unmapped AS u JOIN listed_keys AS t ON {same_key}\n"
            f"UNION ALL\nSELECT {', '.join(rest)}\nFROM unmapped AS u CROSS JOIN counted AS k\n"
            f"WHERE NOT EXISTS (SELECT 1 FROM listed_keys AS t WHERE {same_key})\nGROUP BY u.billing_currency")


#: What makes a spreadsheet read a CSV cell as a formula when it starts one: ``=``, ``+``, ``-``, ``@``, a tab, a
#: carriage return (OWASP, "CSV Injection"). A bill carries text anyone who tags a resource or names an account
#: writes; in the unmapped-charges CSV, which finance opens in Excel, such a text starts with ``'`` and stays text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_spreadsheet_text(expr: str) -> str:
    """SQL of the text ``expr`` as a spreadsheet shows it as text: ``'`` before one that starts as a formula.

    >>> as_spreadsheet_text("x")
    "CASE WHEN LEFT(x, 1) IN ('=', '+', '-', '@', CHR(9), CHR(13)) THEN '''' || x ELSE x END"
    """
    starts = ", ".join(f"CHR({ord(c)})" if c in "\t\r" else f"'{c}'" for c in FORMULA_STARTS)
    return f"CASE WHEN LEFT({expr}, 1) IN ({starts}) THEN '''' || {expr} ELSE {expr} END"


def unmapped_csv_sql(groups: str) -> str:
    """Every unmapped charge group of ``groups`` with its sums in its billing currency, largest first; a text that
    a spreadsheet would read as a formula is shown as text (:func:`as_spreadsheet_text`).

    >>> unmapped_csv_sql("g").splitlines()[-1]
    'ORDER BY EffectiveCost DESC, 1, 2, 3, 4, 5, 6, 7'
    """
    key = ", ".join(f"{as_spreadsheet_text(expr)} AS {title}" for expr, _, title in _UNMAPPED_KEY)
    sums = ", ".join(f"{expr} AS {title}" for expr, title in _UNMAPPED_SUMS)
    return (f"SELECT {key}, {as_spreadsheet_text('billing_currency')} AS BillingCurrency, {sums}\n"
            f"FROM {groups} WHERE plan_line IS NULL\n"
            f"GROUP BY 1, 2, 3, 4, 5, 6, 7\nORDER BY EffectiveCost DESC, 1, 2, 3, 4, 5, 6, 7")


@dataclass(frozen=True)
class ChargeGroup:
    """Charges of one plan line (``None``: unmapped) sharing every one of :data:`DIMENSIONS`, with their sums.

    Money is exact :class:`~decimal.Decimal` in ``billing_currency``; quantities are Decimal too
    (hours and GPU-hours are summed exactly, then reported).
    """

    plan_line: str | None
    provider_name: str | None
    billing_currency: str | None
    invoice_id: str | None
    service_name: str | None
    instance_type: str | None
    charge_category: str | None
    charge_frequency: str | None
    pricing_category: str | None
    commitment_status: str | None
    commitment_id: str | None
    commitment_type: str | None
    commitment_name: str | None
    commitment_term: str | None
    gpu_model: str | None
    purchase_option: str | None
    consumed_unit: str | None
    billed_cost: Decimal
    effective_cost: Decimal
    list_cost: Decimal
    consumed_quantity: Decimal
    gpu_hours: Decimal | None
    first_charge_start: datetime | None
    last_charge_end: datetime | None
    row_count: int
    token_kind: str | None = None

    @property
    def committed(self) -> bool:
        """Whether the charges carry a commitment (a ``CommitmentDiscountId``)."""
        return self.commitment_id is not None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ChargeGroup:
        """Build from values in ``plan_line`` + :data:`DIMENSIONS` + :data:`MEASURES` order (NULL sums -> 0).

        >>> g = ChargeGroup.from_row(("GPU", "AWS", "USD") + (None,) * 15
        ...                          + (Decimal("1.5"), None, None, None, None, None, None, 2))
        >>> g.plan_line, g.billed_cost, g.effective_cost, g.gpu_hours, g.row_count
        ('GPU', Decimal('1.5'), Decimal('0'), None, 2)
        """
        values = dict(zip(["plan_line", *DIMENSIONS, *MEASURES], row, strict=True))
        for name in ("billed_cost", "effective_cost", "list_cost", "consumed_quantity"):
            values[name] = decimal_of(values[name])
        if values["gpu_hours"] is not None:
            values["gpu_hours"] = decimal_of(values["gpu_hours"])
        values["row_count"] = int(values["row_count"])
        values["first_charge_start"] = _timestamp(values["first_charge_start"])
        values["last_charge_end"] = _timestamp(values["last_charge_end"])
        return cls(**values)


def _timestamp(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace(" UTC", "").replace("Z", ""))


def decimal_of(value: Any) -> Decimal:
    """A sum as an engine returns it (Decimal, number or text; NULL is 0) as an exact Decimal.

    >>> decimal_of("12.5000000000"), decimal_of(None)
    (Decimal('12.5000000000'), Decimal('0'))
    """
    if value is None:
        return Decimal(0)
    if isinstance(value, Decimal):
        return value
    return Decimal(str(value))


@dataclass(frozen=True)
class UnmappedSums:
    """Unmapped charges under one key (``provider, sub-account, service, instance type, region, tags``;
    all ``''`` for the rest) in one billing currency."""

    key: tuple[str, ...]
    billing_currency: str | None
    effective_cost: Decimal
    billed_cost: Decimal


@dataclass(frozen=True)
class Summary:
    """The rows of :func:`summary_sql`: the charge groups, the largest unmapped groups, and the rest
    (per billing currency) with the number of unmapped groups in it."""

    groups: tuple[ChargeGroup, ...]
    unmapped: tuple[UnmappedSums, ...] = ()
    rest: tuple[UnmappedSums, ...] = ()
    rest_count: int = 0

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]], limit: int = UNMAPPED_LIMIT) -> Summary:
        """Read the result rows of ``summary_sql(..., limit=limit)`` (values as any engine returns them)."""
        at = _SUMMARY_COLUMNS
        groups, unmapped, rest, last = [], [], [], limit
        for row in rows:
            part = row[at["part"]]
            if part == "group":
                groups.append(ChargeGroup.from_row(row[at[_PLAN_LINE]:at["sub_account"]]))  # plan line .. measures
                continue
            # the rest's key dimensions are NULL: its key is all ''
            key = tuple(row[at[name]] or "" for name in _UNMAPPED_NAMES)
            sums = UnmappedSums(key, row[at["billing_currency"]], decimal_of(row[at["effective_cost"]]),
                                decimal_of(row[at["billed_cost"]]))
            (unmapped if part == "unmapped" else rest).append(sums)
            if part == "rest":
                last = max(last, int(row[at[_RANK]]))
        return cls(tuple(groups), tuple(unmapped), tuple(rest), last - limit)
