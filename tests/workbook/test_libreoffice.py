"""The plan and a budget review opened in a real spreadsheet engine, LibreOffice headless, without the add-in.

``libreoffice_probe.py`` (run with the Python that has LibreOffice's ``uno``: Debian ``python3-uno``;
``.ci/run`` installs ``libreoffice-calc-nogui``, ``python3-uno`` and ``poppler-utils``) reports every
formula cell as stored and after a full recalculation, the page setup of every sheet, and renders the
stored workbook to PDF.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import openpyxl
import pytest

PROBE = Path(__file__).with_name("libreoffice_probe.py")
UNO_PYTHON = "/usr/bin/python3"
#: The smallest type a reader should be given on paper (points), less the PDF's rounding.
MIN_POINTS = 7.95
ADDIN = re.compile(r"\b(?:LLM|FINOPS)_[A-Z_]+\(", re.IGNORECASE)
INSTALL = "apt-get install -y libreoffice-calc-nogui python3-uno poppler-utils"


def smallest_text(pdf: Path) -> list[tuple[int, str, float]]:
    """(page, text, size in points) of every run of text in ``pdf`` printed under 8 pt: the font size times
    the text matrix's vertical scale (rotated text included), as LibreOffice writes them."""
    from pypdf import PdfReader

    small: list[tuple[int, str, float]] = []
    for number, page in enumerate(PdfReader(pdf).pages, start=1):
        def visit(text, cm, tm, font, size, number=number):
            points = size * math.hypot(tm[2], tm[3]) * math.hypot(cm[2], cm[3])
            if text.strip() and points < MIN_POINTS:
                small.append((number, text[:30], round(points, 2)))
        page.extract_text(visitor_text=visit)
    return small


def _probe(book: Path) -> tuple[dict, list[str]]:
    """The probe's report and the text of each PDF page (the PDF is left beside ``book``)."""
    missing = [tool for tool in ("soffice", "pdftotext") if shutil.which(tool) is None]
    assert not missing and Path(UNO_PYTHON).exists(), f"LibreOffice test needs {missing or UNO_PYTHON}: {INSTALL}"
    pdf = book.with_suffix(".pdf")
    done = subprocess.run([UNO_PYTHON, str(PROBE), str(book), str(pdf)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return json.loads(done.stdout), text.split("\f")[:-1]


@pytest.fixture(scope="module")
def plan(built: Path, tmp_path_factory) -> tuple[dict, list[str]]:
    copy = tmp_path_factory.mktemp("lo-plan") / "plan.xlsx"
    shutil.copy(built, copy)
    return _probe(copy)


@pytest.fixture(scope="module")
def reviewed(built: Path, tmp_path_factory) -> tuple[object, Path]:
    from finops.cli.reconcile import reconcile_to_workbook
    from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

    out = tmp_path_factory.mktemp("lo-review")
    rec, path = reconcile_to_workbook(built, sample_bill_paths(), SAMPLE_MONTH, out,
                                      run_at=datetime(2026, 6, 2, tzinfo=UTC))
    return rec, Path(path)


@pytest.fixture(scope="module")
def review(reviewed) -> tuple[dict, list[str]]:
    return _probe(reviewed[1])


def _key(cell: dict) -> tuple:
    return cell["sheet"], cell["row"], cell["col"]


def _where(cell: dict) -> str:
    return f"{cell['sheet']}!R{cell['row'] + 1}C{cell['col'] + 1} {cell['formula'][:70]}"


def test_as_stored_only_the_add_ins_own_cells_can_show_an_error(plan):
    report, _ = plan
    errors = [_where(c) for c in report["stored"] if c["error"] and not ADDIN.search(c["formula"])]
    assert errors == []
    assert sum(1 for c in report["stored"] if not c["error"]) > 700    # the cached values are what a reader sees


def test_on_opening_without_the_add_in_every_cell_shows_its_stored_value(plan, built):
    """LibreOffice recomputes, as it opens a file, array formulas and the formula cells whose stored result is
    an empty string or TRUE/FALSE; it shows every other stored result. The add-in never answers a blank or a
    boolean (``-``, ``yes``/``no``: finops.cells) and its tables (LLM_RANKING below Sizing, FINOPS_MIX on Mix)
    are one plain INDEX formula per cell, so no cell opens as an error, and each shows what the file stores."""
    report, _ = plan
    cached = openpyxl.load_workbook(built, data_only=True)
    assert [_where(c) for c in report["stored"] if c["error"]] == []

    def stored(c: dict) -> object:
        value = cached[c["sheet"]].cell(c["row"] + 1, c["col"] + 1).value
        return "" if value is None else value

    differ = [f"{_where(c)}: stored {stored(c)!r}, shown {c['value']!r}" for c in report["stored"]
              if stored(c) != c["value"] and not (isinstance(c["value"], float) and isinstance(stored(c), int | float)
                                                  and math.isclose(c["value"], stored(c), rel_tol=1e-9))]
    assert differ == []
    tables = [c for c in report["stored"] if re.search(r"INDEX\((?:LLM_RANKING|FINOPS_MIX)\(", c["formula"], re.I)]
    assert len(tables) > 150    # the ranking (6 rows x 18) and the recommendation (9 x 5), cell by cell
    assert not [c for c in report["stored"] if c["formula"].startswith("{")]    # no array formula at all


def test_recalculated_without_the_add_in_no_cell_shows_a_plausible_wrong_number(plan):
    """After a full recalculation with no add-in, a cell shows an error or the value the add-in computed:
    never a different number (an ``IF(ISNUMBER())`` guard swallowing the missing function would)."""
    report, _ = plan
    stored = {_key(c): c for c in report["stored"]}
    changed = [f"{_where(c)}: {stored[_key(c)]['value']!r} -> {c['value']!r}" for c in report["recalculated"]
               if not c["error"] and c["value"] != stored[_key(c)]["value"]]
    assert changed == []
    failed = [c for c in report["recalculated"] if c["error"]]
    assert {c["sheet"] for c in failed} >= {"Sizing", "TCO", "Mix"}
    # every add-in cell of TCO errors, but those of the rows kept for workloads not there yet: blank, as stored
    assert all(c["error"] or stored[_key(c)]["value"] == c["value"] == "" for c in report["recalculated"]
               if ADDIN.search(c["formula"]) and c["sheet"] == "TCO")
    assert any(c["error"] for c in report["recalculated"] if ADDIN.search(c["formula"]) and c["sheet"] == "TCO")


def test_every_page_of_the_plan_prints_at_8_pt_or_more(plan, built, tmp_path_factory):
    """Wide tables print at 75 % across pages (11 pt text at 8.25 pt), never shrunk to one page wide at 4 pt."""
    report, pages = plan
    pdf = next(tmp_path_factory.getbasetemp().glob("lo-plan*/plan.pdf"))
    assert smallest_text(pdf) == []
    assert all(sheet["scale"] >= 75 for sheet in report["sheets"]), [(s["sheet"], s["scale"]) for s in report["sheets"]]


def test_the_plan_prints_its_headers_on_every_page(plan):
    report, pages = plan
    assert 10 <= len(pages) < 200, f"{len(pages)} pages"   # the price book's 3,712 rows are about 80 of them
    for sheet in report["sheets"]:
        if sheet["sheet"] == "Start":
            continue
        assert sheet["title_rows"] is not None, sheet["sheet"]
        on_its_pages = [p for p in pages if re.search(rf"^\s*{sheet['sheet']}\s+Page \d+ of", p, re.MULTILINE)]
        assert on_its_pages, sheet["sheet"]
        # a header longer than its column prints cut at the column's edge: its first characters; a table wider
        # than a page prints across pages with its first column repeated, so every page has the first header
        first, last = (text[:6] for text in (sheet["title_texts"][0], sheet["title_texts"][-1]))
        for number, page in enumerate(on_its_pages, start=1):
            assert first in page, (sheet["sheet"], number, first)
        assert any(last in page for page in on_its_pages), (sheet["sheet"], last)


def test_the_review_has_no_error_cell_and_prints_at_8_pt_or_more_with_repeated_headers(review, tmp_path_factory):
    report, pages = review
    assert [_where(c) for c in report["stored"] + report["recalculated"] if c["error"]] == []
    assert pages
    pdf = next(tmp_path_factory.getbasetemp().glob("lo-review*/*.pdf"))
    assert smallest_text(pdf) == []
    titled = {s["sheet"]: s["title_rows"] for s in report["sheets"]}
    assert all(t is not None for t in titled.values()), titled


def test_the_reviews_flag_formulas_recalculated_give_the_flags_finops_reconcile_prints(review, reviewed):
    """One materiality rule: LibreOffice recomputing the Variance sheet's Flag formulas (percent and amount inputs
    above the table) flags the same lines as the reconciliation the CLI prints (``LineVariance.flag``)."""
    from templates.review.comments import VARIANCE_TABLE

    rec, path = reviewed
    report, _ = review
    book = openpyxl.load_workbook(path)
    ws = next(w for w in book.worksheets if VARIANCE_TABLE in w.tables)
    top = ws[ws.tables[VARIANCE_TABLE].ref.split(":")[0]]
    header = [c.value for c in ws[top.row]]
    line_col, flag_col = header.index("Plan line"), header.index("Flag")
    cells = {(c["row"], c["col"]): c["value"] for c in report["recalculated"] if c["sheet"] == ws.title}
    shown = {ws.cell(top.row + 1 + i, line_col + 1).value: cells[(top.row + i, flag_col)] for i in range(len(rec.lines))}
    assert shown == {line.plan_line: line.flag for line in rec.lines}
    assert {"over", ""} <= set(shown.values())      # the samples' month has flagged and unflagged lines
