"""The planning workbook's tables found by role: by name, else by the headers the role must have.

Excel renames a table when a sheet is copied (``tblAssets`` becomes ``tblAssets2``) or a range is
made a table anew (``Table3``), so a plan table is found by its role (:class:`TableRole`: the name the
template gives it, the sheet it sits on, the headers it must have), in this order:

1. the table of that name (Excel compares table names ignoring case);
2. else the one table, under any name, whose header row holds every header of the role;
3. else, for a role the plan can do without (``tblAssets``, ``tblMapping``, ``tblUsage``), nothing,
   but only when nothing in the workbook looks like it: no sheet of the role's name (with a table or,
   after Excel's "Convert to Range", without one) and no table named like it (``tblAssets2``).

Anything else is refused (:class:`~finops.errors.InputError`, exit 2) with the tables the workbook has
and the sheet each sits on: a required table not found, two tables that could both be it, or a
look-alike that lacks a header. A table left out silently would make a review with CAPEX 0 (no
assets) or every cost unmapped (no rules).

Cells of a plan table that cannot be read as what they show are refused with their cell
(:func:`check_cells`): a formula whose value was never computed (a workbook written by a program and
never opened in a spreadsheet, with no ``<v>`` or an empty one that is not a text result: it reads as
blank, and a blank Mapping field means "any"), a cell in a
merged range (Excel allows no merge inside a table; only the range's first cell holds the value, the
others read as blank), and an Excel error value (``#REF!``, ``#N/A``). The sheet's XML is streamed
once for this, through defusedxml, after :func:`~templates.plan_reader.check_package` has bounded it.

>>> from templates.builder import DEFAULT_TEMPLATE
>>> budget = find_table(workbook_tables(DEFAULT_TEMPLATE), BUDGET, str(DEFAULT_TEMPLATE))
>>> budget.name, budget.sheet
('tblBudget', 'Budget')
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from finops.errors import InputError, Location
from finops.serving.serving_lines import SERVING_COLUMNS

__all__ = ["ASSETS", "BUDGET", "MAPPING", "PLAN_ROLES", "SERVING", "USAGE", "TableRole", "WorkbookTable", "check_cells",
           "find_table", "workbook_tables"]

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_PACKAGE_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_RENAME_HINT = "click in the table, then Table Design > Table Name"
_CELL = re.compile(r"\$?([A-Z]{1,3})\$?([0-9]{1,7})")
#: What a damaged package raises while its parts are read (defusedxml's ParseError is a SyntaxError; a bad
#: cell reference a ValueError).
_DAMAGE = (zipfile.BadZipFile, KeyError, SyntaxError, ValueError, OSError)


@dataclass(frozen=True)
class WorkbookTable:
    """One Excel table of a workbook: its name, its sheet (title and package part), range and column names."""

    name: str
    sheet: str
    ref: str
    part: str
    columns: tuple[str, ...]

    def has(self, headers: Sequence[str]) -> bool:
        return all(h in self.columns for h in headers)

    def __str__(self) -> str:
        return f"{self.name} (sheet {self.sheet})"


@dataclass(frozen=True)
class TableRole:
    """What the plan needs a table for: its template name, its sheet, the headers it must have, and
    whether a plan may leave it out."""

    name: str
    sheet: str
    headers: tuple[str, ...]
    required: bool = False


#: The plan's tables, as docs/design.md names them (``PlannedMTokens`` of the Budget is optional).
BUDGET = TableRole("tblBudget", "Budget", ("Month", "PlanLine", "CostCentre", "Category", "Provider", "Amount",
                                           "Currency"), required=True)
ASSETS = TableRole("tblAssets", "Assets", ("AssetId", "Description", "PlanLine", "CostCentre", "GpuModel", "GpuCount",
                                           "PurchaseDate", "InServiceDate", "Cost", "ResidualValue", "LifeMonths",
                                           "Currency"))
MAPPING = TableRole("tblMapping", "Mapping", ("Rule", "PlanLine", "ProviderName", "SubAccount", "ServiceName",
                                              "InstanceType", "RegionId", "TagKey", "TagValue"))
USAGE = TableRole("tblUsage", "Usage", ("Month", "PlanLine", "ActualMTokens"))
PLAN_ROLES = (BUDGET, ASSETS, MAPPING, USAGE)
#: The serving lines ``plan next`` writes into the next plan (the Serving table's required columns).
SERVING = TableRole("tblServing", "Serving", SERVING_COLUMNS[:8])


def _rels(package: zipfile.ZipFile, part: str) -> dict[str, str]:
    """Relationship id -> target part (absolute in the package) of ``part``; none when it has no rels part."""
    from defusedxml import ElementTree

    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if rels not in package.namelist():
        return {}
    tree = ElementTree.fromstring(package.read(rels))
    return {rel.get("Id", ""): posixpath.normpath(posixpath.join(folder, rel.get("Target", "")))
            if not rel.get("Target", "").startswith("/") else rel.get("Target", "").lstrip("/")
            for rel in tree.iter(f"{_PACKAGE_RELS}Relationship")}


def workbook_tables(path: Path) -> tuple[WorkbookTable, ...]:
    """Every table of the workbook at ``path``, in sheet order, from the package's table parts (the
    column names are the table's own, which Excel keeps equal to its header cells). A package whose
    parts do not parse is an :class:`~finops.errors.InputError` naming the file."""
    try:
        return _tables(path)
    except _DAMAGE as exc:
        raise InputError(f"the workbook is damaged ({type(exc).__name__}: {str(exc)[:80]})", where=Location(file=str(path)),
                         hint="open it in Excel and save it again, or use a backup") from exc


def _tables(path: Path) -> tuple[WorkbookTable, ...]:
    from defusedxml import ElementTree

    tables = []
    with zipfile.ZipFile(path) as package:
        names = set(package.namelist())
        book_rels = _rels(package, "xl/workbook.xml")
        book = ElementTree.fromstring(package.read("xl/workbook.xml"))
        for sheet in book.iter(f"{_MAIN}sheet"):
            part = book_rels.get(sheet.get(_REL_ID, ""))
            if part is None or part not in names:
                continue
            for target in _rels(package, part).values():
                if target.startswith("xl/tables/") and target in names:
                    table = ElementTree.fromstring(package.read(target))
                    columns = tuple((c.get("name") or "").strip() for c in table.iter(f"{_MAIN}tableColumn"))
                    tables.append(WorkbookTable(table.get("displayName") or table.get("name") or "",
                                                sheet.get("name", ""), table.get("ref", ""), part, columns))
    return tuple(tables)


def _listed(tables: Sequence[WorkbookTable]) -> str:
    return ", ".join(map(str, tables)) if tables else "none"


def find_table(tables: Sequence[WorkbookTable], role: TableRole, file: str,
               sheets: Sequence[str] = ()) -> WorkbookTable | None:
    """The table playing ``role`` (see the module docstring); ``None`` only for an optional role with no
    look-alike (``sheets``, the workbook's sheet titles: a sheet of the role's name holding no table is one,
    as after Excel's "Convert to Range"). Refusals name the workbook's tables and their sheets."""
    named = [t for t in tables if t.name.lower() == role.name.lower()]
    if named:
        return named[0]
    fitting = [t for t in tables if t.has(role.headers)]
    if len(fitting) == 1:
        return fitting[0]
    if len(fitting) > 1:
        raise InputError(f"no table is named {role.name}, and {len(fitting)} tables have its columns: "
                         f"{_listed(fitting)}", where=Location(file=file),
                         hint=f"name the one the plan should read {role.name} ({_RENAME_HINT})")
    alike = [t for t in tables if t.sheet.lower() == role.sheet.lower() or t.name.lower().startswith(role.name.lower())]
    if alike:
        table = alike[0]
        missing = [h for h in role.headers if h not in table.columns]
        raise InputError(f"table {table.name} on sheet {table.sheet} looks like {role.name} but has no column "
                         f"{missing[0]}", where=Location(file=file, sheet=table.sheet, column=missing[0]),
                         hint=f"{role.name} needs the columns {', '.join(role.headers)} (exact names); "
                              f"fix the headers, or rename the table if it is something else")
    bare = next((sheet for sheet in sheets if sheet.lower() == role.sheet.lower()), None)
    if bare is not None:
        raise InputError(f"sheet {bare} holds no table, so {role.name} cannot be read: the workbook's tables are "
                         f"{_listed(tables)}", where=Location(file=file, sheet=bare),
                         hint=f"select its rows with the header (Insert > Table) and name the table {role.name}, "
                              f"or delete the sheet if the plan has none")
    if role.required:
        raise InputError(f"table {role.name} not found: the workbook's tables are {_listed(tables)}",
                         where=Location(file=file),
                         hint=f"use the planning template (`finops template build`), or make a table with the "
                              f"columns {', '.join(role.headers)} and name it {role.name} ({_RENAME_HINT})")
    return None


def _bounds(ref: str) -> tuple[int, int, int, int]:
    from openpyxl.utils.cell import range_boundaries

    min_col, min_row, max_col, max_row = range_boundaries(ref)
    return min_col, min_row, max_col, max_row


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def check_cells(path: Path, tables: Sequence[WorkbookTable]) -> None:
    """Refuse, with its cell, a cell of ``tables`` whose value cannot be read as it shows: a formula with no
    computed value, a merged range, an Excel error value (see the module docstring). Each sheet holding one
    of them is streamed once."""
    try:
        with zipfile.ZipFile(path) as package:
            for part in dict.fromkeys(t.part for t in tables):
                _check_sheet(package, part, [(t, _bounds(t.ref)) for t in tables if t.part == part], str(path))
    except InputError:
        raise
    except _DAMAGE as exc:
        raise InputError(f"the workbook is damaged ({type(exc).__name__}: {str(exc)[:80]})", where=Location(file=str(path)),
                         hint="open it in Excel and save it again, or use a backup") from exc


def _check_sheet(package: zipfile.ZipFile, part: str, boxes: list[tuple[WorkbookTable, tuple[int, int, int, int]]],
                 file: str) -> None:
    from defusedxml import ElementTree

    def holder(ref: str) -> WorkbookTable | None:
        found = _CELL.fullmatch(ref)
        if found is None:
            raise ValueError(f"cell reference {ref[:20]!r}")
        index = 0
        for letter in found.group(1):
            index = index * 26 + ord(letter) - ord("A") + 1
        row = int(found.group(2))
        return next((t for t, b in boxes if b[1] <= row <= b[3] and b[0] <= index <= b[2]), None)

    with package.open(part) as sheet:
        for _, element in ElementTree.iterparse(sheet, events=("end",)):
            tag = element.tag
            if tag == f"{_MAIN}c":
                ref = element.get("r") or ""
                table = holder(ref) if ref else None
                if table is None:
                    continue
                where = Location(file=file, sheet=table.sheet, cell=ref)
                formula, value = element.find(f"{_MAIN}f"), element.find(f"{_MAIN}v")
                computed = value is not None and (bool(value.text) or element.get("t") == "str")
                if formula is not None and not computed:  # an empty text result is t="str" with an empty <v>
                    raise InputError(f"cell {ref} of {table.name} holds a formula whose value was never computed",
                                     where=where,
                                     hint="open the workbook in Excel or LibreOffice and save it, so the value is "
                                          "stored, or type the value instead of the formula")
                if element.get("t") == "e":
                    raise InputError(f"cell {ref} of {table.name} holds the error {value.text if value is not None else ''}",
                                     where=where, hint="fix the formula, or type the value")
            elif tag == f"{_MAIN}row":
                element.clear()
            elif tag == f"{_MAIN}mergeCell":
                merged = element.get("ref") or ""
                table = next((t for t, b in boxes if ":" in merged and _overlaps(_bounds(merged), b)), None)
                if table is not None:
                    raise InputError(f"cells {merged} of {table.name} are merged: only {merged.split(':')[0]} holds "
                                     "a value, the others would read as blank",
                                     where=Location(file=file, sheet=table.sheet, cell=merged),
                                     hint="unmerge them (Home > Merge & Center) and type the value in each cell")
