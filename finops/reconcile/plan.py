"""The plan side of a reconciliation: what finance budgeted, owns and expects, as plain values.

These dataclasses are what the planning workbook's tables become (``templates/plan_reader.py`` reads
``tblBudget``, ``tblAssets``, ``tblMapping`` and ``tblUsage`` into them, see ``docs/design.md``). They
hold no Excel types: money is :class:`~finops.money.Money`, dates are :class:`datetime.date`, months
are ``'YYYY-MM'`` text. ``row`` keeps the workbook row each value came from, so errors can point at it.

>>> budget = BudgetLine("2026-05", "GPU inference", "cc-1042", "OPEX", "aws", Money.of(5000, "USD"))
>>> plan = Plan(budget=(budget,))
>>> plan.currency(), [b.plan_line for b in plan.budget_for("2026-05")]
('USD', ['GPU inference'])
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Literal, TypeVar

from ..depreciation import parse_month
from ..errors import CurrencyMismatchError, InputError, Location
from ..limits import bounded_lines
from ..money import Money, to_decimal

_Row = TypeVar("_Row", "BudgetLine", "UsageLine", "MappingRule")

__all__ = [
    "USAGE_COLUMNS",
    "Asset",
    "BudgetLine",
    "Category",
    "MappingRule",
    "Plan",
    "UsageLine",
    "usage_from_csv",
    "usage_once",
]

Category = Literal["OPEX", "CAPEX"]

#: Columns of the Usage table and of a usage CSV.
USAGE_COLUMNS = ("Month", "PlanLine", "ActualMTokens")
#: How a usage CSV is read: UTF-8, with the byte-order mark Excel's "CSV UTF-8" writes skipped.
_CSV_ENCODING = "utf-8-sig"


@dataclass(frozen=True)
class BudgetLine:
    """One row of ``tblBudget``: the amount planned for a plan line in a month."""

    month: str
    plan_line: str
    cost_centre: str
    category: Category
    provider: str
    amount: Money
    planned_mtokens: Decimal | None = None
    row: int | None = None
    #: GPU-hours the line's planned fleet runs in the month (accelerators paid x hours; None: not planned by fleet)
    planned_gpu_hours: Decimal | None = None


@dataclass(frozen=True)
class Asset:
    """One row of ``tblAssets``: owned hardware, depreciated straight-line (CAPEX)."""

    asset_id: str
    description: str
    plan_line: str
    cost_centre: str
    gpu_model: str
    gpu_count: int
    purchase_date: date
    in_service_date: date
    cost: Money
    residual_value: Money
    life_months: int
    row: int | None = None


@dataclass(frozen=True)
class MappingRule:
    """One row of ``tblMapping``: charges matching every non-blank field go to ``plan_line``.

    Fields are ``*``/``?`` globs compared case-insensitively; ``None`` matches anything. ``sub_account``
    matches the sub-account id or its name. Rules are tried in ``rule`` order; the first match wins
    (see :mod:`finops.reconcile.mapping`).
    """

    rule: int
    plan_line: str
    provider_name: str | None = None
    sub_account: str | None = None
    service_name: str | None = None
    instance_type: str | None = None
    region_id: str | None = None
    tag_key: str | None = None
    tag_value: str | None = None
    row: int | None = None


@dataclass(frozen=True)
class UsageLine:
    """One row of ``tblUsage``: million tokens actually served by a plan line in a month."""

    month: str
    plan_line: str
    actual_mtokens: Decimal
    row: int | None = None


@dataclass(frozen=True)
class Plan:
    """The whole planning workbook as values. ``source`` names the file for error messages."""

    budget: tuple[BudgetLine, ...] = ()
    assets: tuple[Asset, ...] = ()
    mapping: tuple[MappingRule, ...] = ()
    usage: tuple[UsageLine, ...] = ()
    source: str = "plan"

    def currency(self) -> str:
        """The one currency of the plan's money (budget and assets).

        Raises :class:`~finops.errors.CurrencyMismatchError` naming the first row in another currency.
        """
        first: str | None = None
        for sheet, items in (("Budget", self.budget), ("Assets", self.assets)):
            for item in items:
                code = item.amount.currency if isinstance(item, BudgetLine) else item.cost.currency
                if first is None:
                    first = code
                elif code != first:
                    raise CurrencyMismatchError(
                        f"the plan mixes {first} and {code}",
                        where=Location(file=self.source, sheet=sheet, row=item.row, column="Currency"),
                        hint="keep one currency in the plan workbook")
        if first is None:
            raise InputError("the plan has no budget rows and no assets", where=Location(file=self.source),
                             hint="fill the Budget table (tblBudget)")
        return first

    def budget_for(self, month: str) -> list[BudgetLine]:
        """Budget rows of ``month``, in workbook order."""
        return [b for b in self.budget if b.month == month]

    def budget_for_year(self, month: str) -> list[BudgetLine]:
        """Budget rows of every month of ``month``'s year (the full-year plan, for the forecast)."""
        year = month[:4]
        return [b for b in self.budget if b.month[:4] == year]

    def usage_for(self, month: str) -> list[UsageLine]:
        """Usage rows of ``month``."""
        return [u for u in self.usage if u.month == month]

    def with_usage(self, extra: tuple[UsageLine, ...], source: str) -> Plan:
        """The plan with the usage lines of a usage file (``source``) added. A month and plan line the
        workbook's Usage table already has is refused, naming both rows: the two counts would be added up; so is a
        plan line the plan does not have (its tokens would feed no line).

        >>> plan = Plan(usage=(UsageLine("2026-05", "gpu", Decimal(4), row=4),), source="plan.xlsx")
        >>> plan.with_usage((UsageLine("2026-05", "gpu", Decimal(4), row=2),), "usage.csv")
        Traceback (most recent call last):
        ...
        finops.errors.InputError: usage.csv, row 2, column PlanLine: the usage of gpu in 2026-05 is given twice: here and in plan.xlsx, sheet Usage, row 4. Hint: give a month's tokens of a plan line once, in the workbook's Usage table or in the usage file (both would be added up)
        """
        for line in (u for u in extra if u.plan_line):  # a blank plan line feeds no line
            earlier = next((u for u in self.usage if (u.month, u.plan_line) == (line.month, line.plan_line)), None)
            if earlier is not None:
                raise InputError(f"the usage of {line.plan_line} in {line.month} is given twice: here and in "
                                 f"{Location(file=self.source, sheet='Usage', row=earlier.row)}",
                                 where=Location(file=source, row=line.row, column="PlanLine"),
                                 hint="give a month's tokens of a plan line once, in the workbook's Usage table or in "
                                      "the usage file (both would be added up)")
        self.refuse_unknown_usage(extra, Location(file=source))
        return replace(self, usage=self.usage + tuple(extra))

    def refuse_unknown_usage(self, lines: tuple[UsageLine, ...], where: Location) -> None:
        """Refuse the first of ``lines`` (at ``where``, with its row) naming a plan line the plan does not have in
        Budget, Assets or Mapping: its tokens would feed no line (a misspelt plan line). Blank plan lines pass.

        >>> plan = Plan(budget=(BudgetLine("2026-05", "gpu", "cc", "OPEX", "", Money.of(1, "USD")),))
        >>> plan.refuse_unknown_usage((UsageLine("2026-05", "gpus", Decimal(4), row=5),),
        ...                           Location(file="plan.xlsx", sheet="Usage"))
        Traceback (most recent call last):
        ...
        finops.errors.InputError: plan.xlsx, sheet Usage, row 5, column PlanLine: the plan has no line 'gpus' (in Budget, Assets or Mapping). Hint: write a plan line of the plan, e.g. gpu
        """
        known = {item.plan_line for items in (self.budget, self.assets, self.mapping) for item in items}
        unknown = next((u for u in lines if u.plan_line and known and u.plan_line not in known), None)
        if unknown is not None:
            near = sorted(known, key=lambda name: (name.lower() != unknown.plan_line.lower(), name))[:3]
            raise InputError(f"the plan has no line {unknown.plan_line!r} (in Budget, Assets or Mapping)",
                             where=replace(where, row=unknown.row, column="PlanLine"),
                             hint=f"write a plan line of the plan, e.g. {', '.join(near)}")


def usage_once(lines: tuple[UsageLine, ...], where: Location) -> tuple[UsageLine, ...]:
    """``lines``, each month and plan line given once; the second row of a pair is refused (at ``where``
    with its row), naming the first: the review would add the two up. Rows with a blank plan line feed
    no line and are left as they are.

    >>> usage_once((UsageLine("2026-05", "gpu", Decimal(4), row=2), UsageLine("2026-05", "gpu", Decimal(4), row=3)),
    ...            Location(file="usage.csv"))
    Traceback (most recent call last):
    ...
    finops.errors.InputError: usage.csv, row 3, column PlanLine: the usage of gpu in 2026-05 is given twice, on rows 2 and 3. Hint: keep one row per month and plan line (the two would be added up)
    """
    return _given_once(lines, lambda u: (u.month, u.plan_line) if u.plan_line else None,
                       lambda u: f"the usage of {u.plan_line} in {u.month}", where,
                       "keep one row per month and plan line (the two would be added up)")


def budget_once(lines: tuple[BudgetLine, ...], where: Location) -> tuple[BudgetLine, ...]:
    """``lines``, each month, plan line, cost centre, category and provider budgeted on one row; a second row of
    the same is refused (a row copied twice would double the plan without a word). Lines split by cost centre,
    category or provider are rows of their own.

    >>> row = BudgetLine("2026-05", "gpu", "cc", "OPEX", "AWS", Money.of(100, "USD"), row=3)
    >>> budget_once((row, replace(row, row=4)), Location(file="plan.xlsx", sheet="Budget"))
    Traceback (most recent call last):
    ...
    finops.errors.InputError: plan.xlsx, sheet Budget, row 4, column PlanLine: the budget of gpu (cc, OPEX, AWS) in 2026-05 is given twice, on rows 3 and 4. Hint: keep one row per month and plan line, or tell the rows apart by CostCentre, Category or Provider (the two would be added up)
    """
    return _given_once(lines, lambda b: (b.month, b.plan_line, b.cost_centre, b.category, b.provider),
                       lambda b: f"the budget of {b.plan_line} ({', '.join(filter(None, (b.cost_centre, b.category, b.provider)))}) "
                                 f"in {b.month}", where,
                       "keep one row per month and plan line, or tell the rows apart by CostCentre, Category or "
                       "Provider (the two would be added up)")


def rules_once(rules: tuple[MappingRule, ...], where: Location) -> tuple[MappingRule, ...]:
    """``rules``, each ``Rule`` number on one row: rules are tried in that order, and two of one number have
    none between them (a charge both match would go to whichever row comes first, without a word).

    >>> rule = MappingRule(1, "gpu", provider_name="AWS", row=3)
    >>> rules_once((rule, replace(rule, plan_line="cpu", row=4)), Location(file="plan.xlsx", sheet="Mapping"))
    Traceback (most recent call last):
    ...
    finops.errors.InputError: plan.xlsx, sheet Mapping, row 4, column Rule: Rule 1 is given twice, on rows 3 and 4. Hint: number the rules in the order they are tried: 1, 2, 3...
    """
    return _given_once(rules, lambda r: (str(r.rule),), lambda r: f"Rule {r.rule}", where,
                       "number the rules in the order they are tried: 1, 2, 3...", column="Rule")


def _given_once(lines: tuple[_Row, ...], key: Callable[[_Row], tuple[str, ...] | None],
                what: Callable[[_Row], str], where: Location, hint: str, *,
                column: str = "PlanLine") -> tuple[_Row, ...]:
    """``lines`` when no two share a ``key`` (``None``: the row takes part in no sum); else the second of the
    first pair is refused at ``where`` with its row, naming the first."""
    seen: dict[tuple[str, ...], _Row] = {}
    for line in lines:
        identity = key(line)
        if identity is None:
            continue
        first = seen.setdefault(identity, line)
        if first is not line:
            raise InputError(f"{what(line)} is given twice, on rows {first.row} and {line.row}",
                             where=replace(where, row=line.row, column=column), hint=hint)
    return lines


#: Millions of tokens a plan line can serve in a month stay below this (10^15: a billion tokens a second is
#: 2.6 * 10^9 million a month); larger is a typing error.
MAX_MTOKENS = Decimal("1E15")


def usage_from_csv(path: Path) -> tuple[UsageLine, ...]:
    """Token counts from a CSV with the Usage table's columns ``Month, PlanLine, ActualMTokens``.

    For token counts that come from serving logs rather than the workbook. Errors name file, row
    (header = row 1) and column.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "usage.csv"
    >>> _ = path.write_text("Month,PlanLine,ActualMTokens\\n2026-05,gpu,1250.5\\n")
    >>> usage_from_csv(path)[0].actual_mtokens
    Decimal('1250.5')
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding=_CSV_ENCODING) as handle:
            reader = csv.DictReader(bounded_lines(handle, path))  # each line bounded: finops.limits
            rows = list(reader)
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not a UTF-8 CSV file"
        raise InputError(f"cannot read the usage file: {reason}", where=Location(file=str(path)),
                         hint=f"give a CSV file with the columns {', '.join(USAGE_COLUMNS)}") from exc
    for column in USAGE_COLUMNS:
        if column not in header:
            raise InputError(f"the usage file has no column {column}", where=Location(file=str(path), column=column),
                             hint=f"columns: {', '.join(USAGE_COLUMNS)}")
    for column in USAGE_COLUMNS:
        if header.count(column) > 1:
            raise InputError(f"the usage file names the column {column} twice",
                             where=Location(file=str(path), row=1, column=column), hint="keep one column of each name")
    lines = []
    for number, row in enumerate(rows, start=2):
        month = parse_month(row["Month"] or "", where=Location(file=str(path), row=number, column="Month"))
        tokens = to_decimal(row["ActualMTokens"] or "", where=Location(file=str(path), row=number,
                                                                       column="ActualMTokens"))
        if not 0 <= tokens < MAX_MTOKENS:
            raise InputError(f"expected a count of 0 or more, below {MAX_MTOKENS:.0E}, got {row['ActualMTokens']!r}",
                             where=Location(file=str(path), row=number, column="ActualMTokens"),
                             hint="millions of tokens served by the plan line in the month")
        lines.append(UsageLine(month, (row["PlanLine"] or "").strip(), tokens, row=number))
    return usage_once(tuple(lines), Location(file=str(path)))
