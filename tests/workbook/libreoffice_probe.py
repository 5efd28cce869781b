"""Open a workbook in LibreOffice (headless, through UNO) and report what a reader without the add-in sees.

Run by ``test_libreoffice.py`` with the Python that has LibreOffice's ``uno`` module (Debian:
``python3-uno``), never imported by the suite: ``python3 libreoffice_probe.py BOOK.xlsx OUT.pdf``.
It prints one JSON object:

* ``stored``: every formula cell as LibreOffice loads it (no recalculation: the cached values);
* ``recalculated``: the same cells after ``calculateAll()``, where no add-in function exists;
* ``sheets``: per sheet, the page style's pages wide/tall and the rows repeated on every page;
* the PDF of the stored workbook, written to ``OUT.pdf``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uno  # type: ignore[import-not-found]  (LibreOffice's own Python bridge)
from com.sun.star.beans import PropertyValue  # type: ignore[import-not-found]

FORMULA = 16          # com.sun.star.sheet.CellFlags.FORMULA


def _props(**values: object) -> tuple:
    found = []
    for name, value in values.items():
        p = PropertyValue()
        p.Name, p.Value = name, value
        found.append(p)
    return tuple(found)


def _connect(pipe: str, profile: str) -> tuple[subprocess.Popen, object]:
    office = subprocess.Popen(["soffice", "--headless", "--invisible", "--norestore", "--nologo",
                               f"-env:UserInstallation={Path(profile).as_uri()}", f"--accept=pipe,name={pipe};urp;"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + 120
    while True:
        try:
            context = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
            return office, context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
        except Exception:  # noqa: BLE001  (NoConnectException until soffice listens)
            if time.monotonic() > deadline or office.poll() is not None:
                raise
            time.sleep(0.5)


def _cells(doc: object) -> list[dict]:
    found = []
    for sheet in doc.Sheets:
        ranges = sheet.queryContentCells(FORMULA)
        cells = ranges.Cells.createEnumeration()
        while cells.hasMoreElements():
            cell = cells.nextElement()
            address = cell.CellAddress
            error = cell.getError()
            found.append({"sheet": sheet.Name, "row": address.Row, "col": address.Column,
                          "formula": cell.getFormula(), "error": error,
                          "value": None if error else (cell.getString() if cell.getType().value == "TEXT"
                                                       or _is_text(cell) else cell.getValue()),
                          "cell": cell})
    return found


def _is_text(cell: object) -> bool:
    """A formula cell whose result is text (``FormulaResultType2`` 2 = TEXT)."""
    return getattr(cell, "FormulaResultType2", None) == 2


def _sheets(doc: object) -> list[dict]:
    styles = doc.StyleFamilies.getByName("PageStyles")
    found = []
    for sheet in doc.Sheets:
        style = styles.getByName(sheet.PageStyle)
        title = sheet.getTitleRows() if sheet.getPrintTitleRows() else None
        used = sheet.createCursor()
        used.gotoEndOfUsedArea(False)
        texts = [] if title is None else [str(v) for row in sheet.getCellRangeByPosition(
            0, title.StartRow, used.RangeAddress.EndColumn, title.EndRow).getDataArray() for v in row if v != ""]
        found.append({"sheet": sheet.Name, "pages_wide": style.ScaleToPagesX, "pages_tall": style.ScaleToPagesY,
                      "scale": style.PageScale, "title_rows": None if title is None else [title.StartRow, title.EndRow],
                      "title_texts": texts})
    return found


def main(book: str, pdf: str) -> None:
    with tempfile.TemporaryDirectory() as profile:
        office, desktop = _connect(f"finops{os.getpid()}", profile)
        try:
            doc = desktop.loadComponentFromURL(Path(book).resolve().as_uri(), "_blank", 0, _props(Hidden=True))
            stored = _cells(doc)
            sheets = _sheets(doc)
            doc.storeToURL(Path(pdf).resolve().as_uri(), _props(FilterName="calc_pdf_Export"))
            doc.calculateAll()
            recalculated = _cells(doc)
            for entry in stored + recalculated:
                del entry["cell"]
            doc.close(True)
        finally:
            try:
                desktop.terminate()
            except Exception:  # noqa: BLE001  (the bridge drops as soffice exits)
                pass
            try:
                office.wait(timeout=30)
            except subprocess.TimeoutExpired:
                office.kill()
    json.dump({"stored": stored, "recalculated": recalculated, "sheets": sheets}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
