"""Read the planning workbook's tables into :mod:`finops.reconcile.plan` values (read-only).

Tables are found by role (:mod:`templates.plan_tables`: by Excel table name, ``tblBudget``,
``tblAssets``, ``tblMapping``, optional ``tblUsage``, else by the headers the role must have), never by
cell address; headers are the exact names of ``docs/design.md``. Loose cell values are normalized here,
at the edge: months typed as dates become ``'YYYY-MM'``, blank mapping fields mean "any", numbers typed
as text are parsed. A cell that only looks blank (a formula never computed, a merged range) is refused
with its cell. Every error names the file, sheet, cell and column, with a hint.

Before openpyxl sees the file, :func:`check_package` refuses what could exhaust memory or is damaged:
a part that inflates past :data:`MAX_PART_BYTES`, all parts past :data:`MAX_PACKAGE_BYTES`, more than
:data:`MAX_PARTS` parts, a part that does not inflate, or any part that declares a DTD or an entity
(the "billion laughs" bomb), found by a streamed scan of every part whole. openpyxl itself parses
through defusedxml. The workbook is opened in openpyxl's read-only mode (cells streamed, nothing else
loaded) and never saved: :func:`~templates.plan_tables.workbook_tables` finds each table's sheet and
range in the package's table parts, and only those cells are read, so a plan's other sheets (the
thousands of rows of Prices) cost nothing.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from finops import reconcile
from finops.depreciation import parse_month
from finops.errors import InputError, Location
from finops.money import Money, to_decimal
from finops.reconcile import Asset, BudgetLine, MappingRule, Plan, UsageLine, usage_once

from .plan_tables import (
    ASSETS,
    BUDGET,
    MAPPING,
    PLAN_ROLES,
    USAGE,
    TableRole,
    WorkbookTable,
    check_cells,
    find_table,
    workbook_tables,
)

#: The largest magnitude a plan's number may have: 10^15 (a thousand trillion, above any budget, count or
#: price a plan holds, and the 15 significant digits a spreadsheet keeps); beyond it is a typing error.
MAX_PLAN_NUMBER = Decimal("1E15")

__all__ = ["ASSETS_HEADERS", "BUDGET_HEADERS", "MAPPING_HEADERS", "MAX_PACKAGE_BYTES", "MAX_PARTS", "MAX_PART_BYTES",
           "USAGE_HEADERS", "check_package", "range_rows", "read_plan", "table_places"]

#: Largest uncompressed size of one part of the workbook package (a plan is a few MB at most).
MAX_PART_BYTES = 200 * 1024 * 1024
#: Largest uncompressed size of all parts together.
MAX_PACKAGE_BYTES = 256 * 1024 * 1024
#: Most parts a workbook package may have (the template has a few dozen).
MAX_PARTS = 10_000
_CHUNK_BYTES = 1024 * 1024
_OVERLAP_BYTES = 16  # longer than "<!DOCTYPE", so a declaration across two chunks is seen
_DTD = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")

#: Required headers of each table (``PlannedMTokens`` and ``PlannedGpuHours`` are optional), as in docs/design.md.
BUDGET_HEADERS, ASSETS_HEADERS, MAPPING_HEADERS, USAGE_HEADERS = (role.headers for role in PLAN_ROLES)


def check_package(path: Path) -> None:
    """Refuse a workbook that is not an xlsx package, is damaged, would inflate too far (one part past
    :data:`MAX_PART_BYTES`, all of them past :data:`MAX_PACKAGE_BYTES`, more than :data:`MAX_PARTS` parts),
    or declares XML entities anywhere in any part (scanned whole, streamed, whatever the directory says)."""
    where = Location(file=str(path))
    try:
        if not zipfile.is_zipfile(path):
            raise InputError("not an Excel workbook (.xlsx)", where=where, hint="save the plan as .xlsx")
        with zipfile.ZipFile(path) as package:
            infos = package.infolist()
            if len(infos) > MAX_PARTS:
                raise InputError(f"the workbook has {len(infos):,} parts, more than {MAX_PARTS:,}", where=where,
                                 hint="this is not a plan workbook (a zip bomb?)")
            declared = next((info for info in infos if info.file_size > MAX_PART_BYTES), None)
            if declared is not None:  # what the directory says, before reading anything
                raise InputError(f"workbook part {declared.filename} inflates to {declared.file_size:,} bytes",
                                 where=where, hint="this is not a plan workbook (a zip bomb?)")
            total = 0
            for info in infos:  # what the parts really inflate to, whatever the directory says
                total += _scan_part(package, info, where, MAX_PACKAGE_BYTES - total)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise InputError(f"the workbook is damaged ({exc})", where=where,
                         hint="open it in Excel and save it again, or use a backup") from exc


def _scan_part(package: zipfile.ZipFile, info: zipfile.ZipInfo, where: Location, room: int) -> int:
    """Read one part whole, in chunks, counting the bytes it really inflates to; refuse a DTD or an
    entity declaration (``<!DOCTYPE``, ``<!ENTITY``: XML allows no space inside either), an encoding
    Excel never writes (UTF-16, UTF-32), or too many bytes. Returns the part's size."""
    size, tail = 0, b""
    with package.open(info) as part:
        while chunk := part.read(_CHUNK_BYTES):
            if size == 0 and chunk.startswith(_WIDE_BOMS):
                raise InputError(f"workbook part {info.filename} is not UTF-8", where=where,
                                 hint="Excel never writes these; the file was crafted or damaged")
            size += len(chunk)
            if size > min(MAX_PART_BYTES, room):
                raise InputError(f"workbook part {info.filename} inflates past {min(MAX_PART_BYTES, room):,} bytes",
                                 where=where, hint="this is not a plan workbook (a zip bomb?)")
            if _DTD.search(tail + chunk):
                raise InputError(f"workbook part {info.filename} declares a DTD or XML entities",
                                 where=where, hint="Excel never writes these; the file was crafted or damaged")
            tail = chunk[-_OVERLAP_BYTES:]
    return size


def table_places(path: Path) -> dict[str, tuple[str, str]]:
    """Excel table name (lowercased) -> (sheet title, range) from the package's table parts.

    >>> from templates.builder import DEFAULT_TEMPLATE
    >>> table_places(DEFAULT_TEMPLATE)["tblbudget"][0]
    'Budget'
    """
    return {t.name.lower(): (t.sheet, t.ref) for t in reversed(workbook_tables(path))}


def read_plan(path: Path) -> Plan:
    """The plan in the workbook at ``path`` (``tblUsage`` is optional)."""
    import openpyxl

    path = Path(path)
    if not path.is_file():
        raise InputError("plan workbook not found", where=Location(file=str(path)),
                         hint="create one with `finops template build`")
    check_package(path)
    try:
        tables = workbook_tables(path)
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except InputError:  # already says where and what to do
        raise
    except Exception as exc:  # openpyxl raises many types for damaged files; translate at the seam
        raise InputError(f"cannot open the plan workbook: {exc}", where=Location(file=str(path)),
                         hint="open and save it in Excel, then try again") from exc
    try:
        found = {role.name: find_table(tables, role, str(path), book.sheetnames) for role in PLAN_ROLES}
        check_cells(path, [table for table in found.values() if table is not None])
        read = _Tables(book, str(path))
        plan = Plan(budget=reconcile.budget_once(tuple(read.rows(found[BUDGET.name], BUDGET, _budget)),
                                       Location(file=str(path), sheet=found[BUDGET.name].sheet)),
                    assets=tuple(read.rows(found[ASSETS.name], ASSETS, _asset)),
                    mapping=reconcile.rules_once(tuple(read.rows(found[MAPPING.name], MAPPING, _rule)),
                                       Location(file=str(path), sheet=found[MAPPING.name].sheet)),
                    usage=_usage_once(tuple(read.rows(found[USAGE.name], USAGE, _usage)), found[USAGE.name], str(path)),
                    source=str(path))
        usage_table = found[USAGE.name]
        plan.refuse_unknown_usage(plan.usage, Location(file=str(path), sheet=usage_table.sheet if usage_table else None))
        return plan
    finally:
        book.close()


class _Row:
    """One data row of a table: typed getters that raise located errors."""

    def __init__(self, file: str, sheet: str, row: int, cells: dict[str, Any], refs: dict[str, str]) -> None:
        self.file, self.sheet, self.row, self.cells, self.refs = file, sheet, row, cells, refs

    def where(self, column: str) -> Location:
        return Location(file=self.file, sheet=self.sheet, cell=self.refs.get(column), column=column)

    def value(self, column: str, what: str, required: bool) -> Any:
        """The cell's value, ``None`` when blank (an error when ``required``)."""
        value = self.cells.get(column)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise InputError(f"{what} is required here", where=self.where(column),
                                 hint=f"fill in {column} on this row, or clear the whole row")
            return None
        return value

    def text(self, column: str, *, required: bool = True) -> str | None:
        value = self.value(column, "a value", required)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value).strip()

    def number(self, column: str, *, required: bool = True) -> Decimal | None:
        value = self.value(column, "a number", required)
        if value is None:
            return None
        try:
            number = to_decimal(value, where=self.where(column))
        except InputError as exc:
            raise InputError(exc.message, where=exc.where,
                             hint="type a plain number, without a currency or words (e.g. 12000.50)") from None
        if abs(number) >= MAX_PLAN_NUMBER:
            raise InputError(f"{value!r} is too large for a plan (at most {MAX_PLAN_NUMBER:.0E})",
                             where=self.where(column), hint="check the number typed in this cell")
        return number

    def whole(self, column: str) -> int:
        value = self.number(column)
        if value is None or value != value.to_integral_value():
            raise InputError(f"expected a whole number, got {self.cells.get(column)!r}", where=self.where(column),
                             hint="type a whole number, e.g. 36")
        return int(value)

    def money(self, column: str, currency: str) -> Money:
        amount = self.number(column)
        assert amount is not None
        return Money(amount, currency)

    def currency(self) -> str:
        code = (self.text("Currency") or "").upper()
        if len(code) != 3 or not code.isalpha():
            raise InputError(f"expected a 3-letter currency code, got {code!r}", where=self.where("Currency"),
                             hint="for example USD")
        return code

    def month(self, column: str = "Month") -> str:
        value = self.cells.get(column)
        if isinstance(value, (datetime, date)):
            return f"{value.year:04d}-{value.month:02d}"
        return parse_month(self.text(column) or "", where=self.where(column))

    def day(self, column: str, *, required: bool = True) -> date | None:
        value = self.value(column, "a date", required)
        if value is None or isinstance(value, datetime):
            return None if value is None else value.date()
        if isinstance(value, date):
            return value
        try:
            return date.fromisoformat(str(value).strip())
        except ValueError:
            raise InputError(f"expected a date, got {value!r}", where=self.where(column),
                             hint="type a date, e.g. 2026-05-04") from None


def range_rows(ws: Any, ref: str) -> tuple[int, int, Iterator[tuple[Any, ...]]]:
    """The first column and row of the range ``ref`` of a worksheet opened read-only, and its rows as tuples
    of values, each padded to the range's width (a read-only sheet ends a row at its last stored cell)."""
    from openpyxl.utils.cell import range_boundaries

    min_col, min_row, max_col, max_row = range_boundaries(ref)
    width = max_col - min_col + 1
    cells = ws.iter_rows(min_row=min_row, max_row=max_row, min_col=min_col, max_col=max_col, values_only=True)
    return min_col, min_row, ((tuple(row) + (None,) * width)[:width] for row in cells)


class _Tables:
    """The plan's tables, read from the workbook opened read-only: only the cells of each table's range."""

    def __init__(self, book: Any, file: str) -> None:
        self.book, self.file = book, file

    def rows(self, table: WorkbookTable | None, role: TableRole, build: Callable[[_Row], Any]) -> Iterator[Any]:
        """``build`` of each non-blank data row of ``table`` (none when the plan has no such table)."""
        from openpyxl.utils.cell import get_column_letter, range_boundaries

        if table is None:
            return
        if table.sheet not in self.book.sheetnames:
            raise InputError(f"table {table.name} is on sheet {table.sheet}, which the workbook does not list",
                             where=Location(file=self.file), hint="open and save the workbook in Excel, then try again")
        min_col, min_row, cells = range_rows(self.book[table.sheet], table.ref)
        found_headers = [str(h).strip() if h is not None else "" for h in next(cells, ())]
        missing = [h for h in role.headers if h not in found_headers]
        if missing:
            raise InputError(f"table {table.name} has no column {missing[0]}",
                             where=Location(file=self.file, sheet=table.sheet, column=missing[0]),
                             hint=f"{role.name} needs the columns {', '.join(role.headers)} (exact names)")
        for r, values in enumerate(cells, start=min_row + 1):
            if all(_blank(v) for v in values):
                continue
            refs = {h: f"{get_column_letter(min_col + i)}{r}" for i, h in enumerate(found_headers)}
            yield build(_Row(self.file, table.sheet, r, dict(zip(found_headers, values)), refs))
        self._nothing_left_below(table, found_headers, min_col, range_boundaries(table.ref)[3] + 1, build)

    def _nothing_left_below(self, table: WorkbookTable, headers: list[str], min_col: int, below: int,
                            build: Callable[[_Row], Any]) -> None:
        """Refuse a row right below ``table`` that reads as one of its rows (``build`` takes it): a line typed or
        pasted under a table that did not grow over it would not be read, and the plan would be short by it. A
        totals row or a note under the table (a label, a sum) does not read as a row and stays a note."""
        from openpyxl.utils.cell import get_column_letter

        _, _, cells = range_rows(self.book[table.sheet], f"{get_column_letter(min_col)}{below}:"
                                 f"{get_column_letter(min_col + len(headers) - 1)}{below}")
        values = next(cells, ())
        if all(_blank(v) for v in values):
            return
        refs = {h: f"{get_column_letter(min_col + i)}{below}" for i, h in enumerate(headers)}
        try:
            build(_Row(self.file, table.sheet, below, dict(zip(headers, values)), refs))
        except InputError:
            return  # not a row of this table: a note
        raise InputError(f"row {below}, right below table {table.name} ({table.ref}), reads as a row of it but lies "
                         "outside the table, so it would not be read",
                         where=Location(file=self.file, sheet=table.sheet, cell=f"{get_column_letter(min_col)}{below}"),
                         hint=f"extend {table.name} over row {below} (Table Design > Resize Table), or clear it")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _budget(row: _Row) -> BudgetLine:
    category = (row.text("Category") or "").upper()
    if category not in ("OPEX", "CAPEX"):
        raise InputError(f"Category must be OPEX or CAPEX, got {category!r}", where=row.where("Category"),
                         hint="pick OPEX (cloud, running costs) or CAPEX (owned hardware)")
    return BudgetLine(month=row.month(), plan_line=row.text("PlanLine") or "",
                      cost_centre=row.text("CostCentre", required=False) or "", category=category,  # type: ignore[arg-type]
                      provider=row.text("Provider", required=False) or "",
                      amount=row.money("Amount", row.currency()),
                      planned_mtokens=_quantity(row, "PlannedMTokens", "millions of tokens the line is planned to serve"),
                      row=row.row,
                      planned_gpu_hours=_quantity(row, "PlannedGpuHours", "GPU-hours the line's fleet is planned to run"))


def _quantity(row: _Row, column: str, what: str) -> Decimal | None:
    """``PlannedMTokens`` or ``PlannedGpuHours``: blank, or 0 or more (a negative quantity would give a negative
    unit cost)."""
    value = row.number(column, required=False)
    if value is not None and value < 0:
        raise InputError(f"{column} must be 0 or more, got {row.cells.get(column)!r}", where=row.where(column),
                         hint=what)
    return value


def _asset(row: _Row) -> Asset:
    currency = row.currency()
    purchased = row.day("PurchaseDate")
    assert purchased is not None
    asset = Asset(asset_id=row.text("AssetId") or "", description=row.text("Description", required=False) or "",
                  plan_line=row.text("PlanLine") or "", cost_centre=row.text("CostCentre", required=False) or "",
                  gpu_model=row.text("GpuModel", required=False) or "", gpu_count=row.whole("GpuCount"),
                  purchase_date=purchased, in_service_date=row.day("InServiceDate", required=False) or purchased,
                  cost=row.money("Cost", currency), residual_value=row.money("ResidualValue", currency),
                  life_months=row.whole("LifeMonths"), row=row.row)
    for column, wrong, message, hint in _ASSET_CHECKS:  # found here, the cell is named (depreciation knows none)
        if wrong(asset):
            raise InputError(message.format(a=asset), where=row.where(column), hint=hint)
    return asset


#: What an Assets row must hold for its depreciation to mean anything: (column, test of a wrong row, message, hint).
_ASSET_CHECKS: tuple[tuple[str, Callable[[Asset], bool], str, str], ...] = (
    ("Cost", lambda a: a.cost.amount < 0, "Cost must not be negative, got {a.cost}",
     "the price paid for the asset; a credit or refund is a charge of its own"),
    ("ResidualValue", lambda a: not 0 <= a.residual_value.amount <= a.cost.amount,
     "ResidualValue must be between 0 and the Cost ({a.cost}), got {a.residual_value}",
     "what the asset is expected to fetch at the end of its life"),
    ("LifeMonths", lambda a: a.life_months < 1, "LifeMonths must be 1 or more, got {a.life_months}",
     "a GPU server is commonly depreciated over 60 months"),
    ("InServiceDate", lambda a: a.in_service_date < a.purchase_date,
     "InServiceDate {a.in_service_date} is before the PurchaseDate {a.purchase_date}",
     "an asset is put in service on or after the day it is bought; leave InServiceDate blank for the same day"),
)


def _rule(row: _Row) -> MappingRule:
    return MappingRule(rule=row.whole("Rule"), plan_line=row.text("PlanLine") or "",
                       provider_name=row.text("ProviderName", required=False),
                       sub_account=row.text("SubAccount", required=False),
                       service_name=row.text("ServiceName", required=False),
                       instance_type=row.text("InstanceType", required=False),
                       region_id=row.text("RegionId", required=False),
                       tag_key=row.text("TagKey", required=False), tag_value=row.text("TagValue", required=False),
                       row=row.row)


def _usage_once(lines: tuple[UsageLine, ...], table: WorkbookTable | None, file: str) -> tuple[UsageLine, ...]:
    return usage_once(lines, Location(file=file, sheet=table.sheet if table else None))


def _usage(row: _Row) -> UsageLine:
    tokens = row.number("ActualMTokens")
    assert tokens is not None
    return UsageLine(month=row.month(), plan_line=row.text("PlanLine") or "", actual_mtokens=tokens, row=row.row)
