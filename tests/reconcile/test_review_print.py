"""The demo's budget review as LibreOffice prints it: every page's text at 8 pt or more, landscape where
wide (a table wider than a page at 75 % prints across pages with its first column repeated), header rows
repeated on every page, a footer naming month, run time, sheet and page.

The review is converted to PDF by LibreOffice headless (skipped where it is not installed) and each
page is read back with pypdf: its size says the orientation, its footer the sheet it belongs to.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from datetime import datetime

import pytest

from finops.cli.reconcile import reconcile_to_workbook
from tests.workbook.test_libreoffice import smallest_text
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

pypdf = pytest.importorskip("pypdf")
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice is not installed")

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
FOOTER = re.compile(r"Budget review 2026-05\s+Run 2026-06-02 07:30 UTC\s+(.+?), page (\d+) of (\d+)")
#: Sheet -> (landscape, pages on the demo, text of its first and last column headers; None: no one table).
EXPECTED = {
    "Summary": (True, None, None),          # the figures, the tie-out, the forecast, the waterfall and its chart
    "Variance": (True, None, ("Plan line", "Comment")),
    "P&L and cash": (True, None, ("P&L view", "Cash")),
    "Commitments": (True, None, ("Commitment", "Balance left")),
    "GPU usage": (False, None, None),       # a table per GPU source, over two pages
    "Unmapped": (True, None, ("Provider", "Billed")),
    "Glossary": (False, 1, ("Term", "In plain words")),
}


def to_pdf(path, tmp_path):
    profile = (tmp_path / "lo-profile").as_uri()  # its own profile: parallel tests do not share one
    subprocess.run([SOFFICE, f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
                    "--outdir", str(tmp_path / "pdf"), str(path)], check=True, capture_output=True, timeout=180)
    return tmp_path / "pdf" / path.with_suffix(".pdf").name


def test_demo_review_prints_at_8_pt_or_more_with_repeated_headers(tmp_path, template_plan):
    _, review = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, tmp_path / "out",
                                      run_at=RUN_AT)
    pdf = to_pdf(review, tmp_path)
    assert smallest_text(pdf) == []
    pages = pypdf.PdfReader(pdf).pages
    by_sheet = defaultdict(list)
    for number, page in enumerate(pages, start=1):
        text = page.extract_text()
        footer = FOOTER.search(text)
        assert footer, f"page {number} has no footer"
        assert (int(footer.group(2)), int(footer.group(3))) == (number, len(pages))
        by_sheet[footer.group(1)].append((page, text))
    assert list(by_sheet) == list(EXPECTED)  # sheet order, and no page of anything else
    for sheet, (landscape, count, headers) in EXPECTED.items():
        if count is not None:
            assert len(by_sheet[sheet]) == count, sheet
        for page, text in by_sheet[sheet]:
            box = page.mediabox
            assert (box.width > box.height) == landscape, sheet
        if headers is None:
            continue
        # the first column is on every page of the sheet (repeated where it prints across pages); the last
        # column's header on one of them: nothing cut off the side
        first, last = headers
        flats = [" ".join(text.split()) for _, text in by_sheet[sheet]]
        assert all(first in flat for flat in flats), (sheet, first)
        assert any(last in flat for flat in flats), (sheet, last)
