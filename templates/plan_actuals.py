"""``--in-place``: write the Actuals and Variance sheets into the plan workbook, touching nothing else.

openpyxl would rewrite the whole file and drop charts, images and controls it does not model, so the
update works on the xlsx package itself (ECMA-376 Part 2, Open Packaging Conventions):

* the two sheets are rendered by XlsxWriter as self-contained worksheet parts (inline strings, no
  styles), each marked in cell A1 as written by llm-finops;
* every other part of the plan is copied byte for byte; ``xl/workbook.xml``, its relationships and
  ``[Content_Types].xml`` only gain one entry per new sheet (text inserted before their closing
  tags, nothing re-serialized); a second run replaces the content of the two parts and changes nothing else;
* a sheet named Actuals or Variance that llm-finops did not write is never overwritten: the update
  is refused;
* the original is first copied to ``<name>.backup-<timestamp>.xlsx`` (``-2``, ``-3``... within one
  second; the newest :data:`BACKUPS_KEPT` are kept) and the new file replaces it atomically (written
  beside it, then renamed); a plan given as a symbolic link is updated where the link points, the
  link kept.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import xlsxwriter
from defusedxml import ElementTree

from finops.errors import InputError, Location
from finops.files import replacing
from finops.money import quantize
from finops.reconcile import MonthRecord, Reconciliation

from .plan_reader import check_package
from .xlsx_package import sheet_named

__all__ = ["BACKUPS_KEPT", "MARKER", "SHEETS", "check_in_place", "write_in_place"]

#: Text in cell A1 of every sheet this module writes; only such sheets are ever replaced.
MARKER = "llm-finops: written by `finops reconcile --in-place`; edits here are overwritten"
SHEETS = ("Actuals", "Variance")
#: How many backups of a plan ``--in-place`` keeps (the oldest beyond are removed).
BACKUPS_KEPT = 10

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_WORKSHEET_TYPE = _REL + "/worksheet"
_WORKSHEET_CONTENT = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
_PARTS = {"Actuals": "xl/worksheets/finops_actuals.xml", "Variance": "xl/worksheets/finops_variance.xml"}


def _money(value: object) -> float:
    return float(quantize(value.amount))  # type: ignore[attr-defined]


def _render(rec: Reconciliation, history: Sequence[MonthRecord], run_at: datetime) -> dict[str, bytes]:
    """The two worksheet parts, rendered by XlsxWriter without styles or shared strings."""
    with tempfile.TemporaryDirectory(prefix="finops-inplace-") as folder:
        path = Path(folder) / "sheets.xlsx"
        wb = xlsxwriter.Workbook(str(path), {"constant_memory": True, "strings_to_formulas": False,
                                             "strings_to_urls": False, "strings_to_numbers": False})
        wb.add_worksheet("first")  # takes the selected tab, so neither of ours is selected in the plan
        actuals, variance = wb.add_worksheet("Actuals"), wb.add_worksheet("Variance")
        for ws, title in ((actuals, "Actuals by month and plan line (P&L view)"),
                          (variance, f"Variance by plan line, {rec.month}")):
            ws.write_string(0, 0, MARKER)
            ws.write_string(1, 0, f"{title}, {rec.currency}; run at {run_at.isoformat(timespec='seconds')} UTC")
        headers = ("Month", "PlanLine", "Actual")
        for col, name in enumerate(headers):
            actuals.write_string(3, col, name)
        row = 4
        for month in history:
            for plan_line, amount in sorted(month.lines.items()):
                actuals.write_string(row, 0, month.month)
                actuals.write_string(row, 1, plan_line)
                actuals.write_number(row, 2, float(quantize(amount)))
                row += 1
        headers = ("PlanLine", "Category", "Planned", "Actual", "Variance", "VariancePct", "Flag")
        for col, name in enumerate(headers):
            variance.write_string(3, col, name)
        for i, line in enumerate(rec.lines):
            r = 4 + i
            variance.write_string(r, 0, line.plan_line)
            variance.write_string(r, 1, line.category)
            planned, actual = _money(line.planned), _money(line.actual)
            variance.write_number(r, 2, planned)
            variance.write_number(r, 3, actual)
            # cached values are what the formulas give from the cent-rounded cells, as Excel would compute them
            variance.write_formula(r, 4, f"=D{r + 1}-C{r + 1}", None, actual - planned)
            pct = "" if planned == 0 else (actual - planned) / abs(planned)
            variance.write_formula(r, 5, f'=IF(C{r + 1}=0,"",E{r + 1}/ABS(C{r + 1}))', None, pct)
            variance.write_string(r, 6, line.flag)
        for ws in (actuals, variance):
            ws.set_column(0, 1, 24)
            ws.set_column(2, 6, 14)
        wb.close()
        with zipfile.ZipFile(path) as rendered:
            return {"Actuals": rendered.read("xl/worksheets/sheet2.xml"),
                    "Variance": rendered.read("xl/worksheets/sheet3.xml")}


def _existing_sheets(package: zipfile.ZipFile, where: Location) -> dict[str, str]:
    """Sheet name -> worksheet part, for the sheets of the workbook."""
    book = ElementTree.fromstring(package.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))
    if book.tag != f"{{{_MAIN}}}workbook":
        raise InputError("the plan is not a transitional Office Open XML workbook", where=where,
                         hint="save it from Excel as 'Excel Workbook (.xlsx)'")
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{{{_PKG_REL}}}Relationship")}
    parts = {}
    for sheet in book.iter(f"{{{_MAIN}}}sheet"):
        target = targets.get(sheet.get(f"{{{_REL}}}id"), "")
        parts[sheet.get("name", "")] = target.lstrip("/") if target.startswith("/") else "xl/" + target
    return parts


def _insert(text: str, closing: str, addition: str, part: str, where: Location) -> str:
    if text.count(closing) != 1:
        raise InputError(f"unexpected structure in {part}", where=where,
                         hint="open and save the plan in Excel, or reconcile without --in-place")
    return text.replace(closing, addition + closing)


def _declarations(book: str, rels: str, types: str, new: list[str], where: Location) -> tuple[str, str, str]:
    prefix = re.search(rf'xmlns:(\w+)="{re.escape(_REL)}"', book[:4000])
    if prefix is None:
        raise InputError("the plan's workbook part declares no relationships namespace", where=where,
                         hint="open and save the plan in Excel, or reconcile without --in-place")
    next_id = max((int(n) for n in re.findall(r'sheetId="(\d+)"', book)), default=0) + 1
    add_book = add_rels = add_types = ""
    for offset, name in enumerate(new):
        rid = f"rIdFinops{name}"
        add_book += f'<sheet name="{name}" sheetId="{next_id + offset}" {prefix.group(1)}:id="{rid}"/>'
        add_rels += f'<Relationship Id="{rid}" Type="{_WORKSHEET_TYPE}" Target="/{_PARTS[name]}"/>'
        add_types += f'<Override PartName="/{_PARTS[name]}" ContentType="{_WORKSHEET_CONTENT}"/>'
    return (_insert(book, "</sheets>", add_book, "xl/workbook.xml", where),
            _insert(rels, "</Relationships>", add_rels, "xl/_rels/workbook.xml.rels", where),
            _insert(types, "</Types>", add_types, "[Content_Types].xml", where))


def _plan_update(package: zipfile.ZipFile, where: Location) -> tuple[dict[str, str], list[str]]:
    """Our sheets already in the plan (name -> part) and those to add; refuses a foreign sheet of that name."""
    sheets = _existing_sheets(package, where)
    names = set(package.namelist())
    ours = {}
    for name in SHEETS:
        found = sheet_named(sheets, name)  # Excel takes "actuals" for "Actuals": a second one would be repaired away
        if found is None:
            continue
        part = found[1]
        if found[0] != name or part not in names or MARKER.encode() not in package.read(part)[:8192]:
            raise InputError(f"the plan already has a sheet named {found[0]} that llm-finops did not write",
                             where=Location(file=where.file, sheet=found[0]),
                             hint="rename that sheet, or reconcile without --in-place")
        ours[name] = part
    new = [name for name in SHEETS if sheet_named(sheets, name) is None]
    if new:
        _declarations(package.read("xl/workbook.xml").decode("utf-8"),
                      package.read("xl/_rels/workbook.xml.rels").decode("utf-8"),
                      package.read("[Content_Types].xml").decode("utf-8"), new, where)
    return ours, new


def check_in_place(plan_path: Path) -> None:
    """Raise :class:`InputError` now if :func:`write_in_place` would refuse this plan (before any work)."""
    plan_path = Path(plan_path)
    check_package(plan_path)
    with zipfile.ZipFile(plan_path) as package:
        _plan_update(package, Location(file=str(plan_path)))


def write_in_place(plan_path: Path, rec: Reconciliation, history: Sequence[MonthRecord], run_at: datetime) -> Path:
    """Write Actuals and Variance into the plan at ``plan_path``; return the backup's path."""
    plan_path = Path(plan_path)
    where = Location(file=str(plan_path))
    check_package(plan_path)
    rendered = _render(rec, history, run_at)
    with zipfile.ZipFile(plan_path) as package:
        ours, new = _plan_update(package, where)
        replace = {part: rendered[name] for name, part in ours.items()}
        edited = {}
        if new:
            book, rels, types = _declarations(package.read("xl/workbook.xml").decode("utf-8"),
                                              package.read("xl/_rels/workbook.xml.rels").decode("utf-8"),
                                              package.read("[Content_Types].xml").decode("utf-8"), new, where)
            edited = {"xl/workbook.xml": book.encode("utf-8"), "xl/_rels/workbook.xml.rels": rels.encode("utf-8"),
                      "[Content_Types].xml": types.encode("utf-8")}
        with replacing(plan_path, mode_of=plan_path, updates_input=True) as temporary:
            with zipfile.ZipFile(temporary, "w") as out:
                for info in package.infolist():
                    data = replace.get(info.filename, edited.get(info.filename))
                    if data is None:
                        out.writestr(info, package.read(info.filename))
                    else:
                        out.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
                for name in new:
                    info = zipfile.ZipInfo(_PARTS[name], date_time=(1980, 1, 1, 0, 0, 0))
                    out.writestr(info, rendered[name], compress_type=zipfile.ZIP_DEFLATED)
            backup = _keep_backup(Path(os.path.realpath(plan_path)), run_at)
    return backup


def _keep_backup(plan_path: Path, run_at: datetime) -> Path:
    """Copy the plan (whole or not at all) to a backup name no other backup has, then remove all but the
    newest :data:`BACKUPS_KEPT` backups of this plan. Returns the new backup's path."""
    stamp = f"{run_at:%Y%m%dT%H%M%S}"
    pattern = re.compile(re.escape(f"{plan_path.stem}.backup-") + r"(\d{8}T\d{6})(?:-(\d+))?"
                         + re.escape(plan_path.suffix))

    def backups() -> list[tuple[str, int, Path]]:
        return sorted((match.group(1), int(match.group(2) or 1), path) for path in plan_path.parent.iterdir()
                      if (match := pattern.fullmatch(path.name)))

    count = max((n for found, n, _ in backups() if found == stamp), default=0) + 1  # after any of that second
    backup = plan_path.with_name(_backup_name(plan_path, stamp, count))
    with replacing(backup) as temporary:
        shutil.copy2(plan_path, temporary)
    for *_, old in backups()[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
    return backup


def _backup_name(plan_path: Path, stamp: str, count: int) -> str:
    """``plan.backup-20260601T020000.xlsx``, then ``-2``, ``-3``... for backups made in the same second."""
    return f"{plan_path.stem}.backup-{stamp}{'' if count == 1 else f'-{count}'}{plan_path.suffix}"
