"""The demo's budget review as LibreOffice prints it: every sheet one page wide, landscape where wide,
header rows repeated on every page, a footer naming month, run time, sheet and page.

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
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

pypdf = pytest.importorskip("pypdf")
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice is not installed")

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)
FOOTER = re.compile(r"Budget review 2026-05\s+Run 2026-06-02 07:30 UTC\s+(.+?), page (\d+) of (\d+)")
#: Sheet -> (landscape, pages on the demo, text of its first and last column headers).
EXPECTED = {
    "Summary": (False, 1, ("Figure", "Value")),
    "Variance": (True, 1, ("Plan line", "Comment")),
    # the views, the bridge and the prepaid roll-forward on page 1; assets, invoices and history on page 2
    "P&L and cash": (True, 2, ("P&L view", "Cash")),
    "Commitments": (True, None, ("Commitment", "Balance left")),
    "GPU usage": (False, 1, ("GPU model", "Source")),
    "Unmapped": (True, None, ("Provider", "Billed")),
    "Glossary": (False, 1, ("Term", "In plain words")),
}


def to_pdf(path, tmp_path):
    profile = (tmp_path / "lo-profile").as_uri()  # its own profile: parallel tests do not share one
    subprocess.run([SOFFICE, f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
                    "--outdir", str(tmp_path / "pdf"), str(path)], check=True, capture_output=True, timeout=180)
    return tmp_path / "pdf" / path.with_suffix(".pdf").name


def test_demo_review_prints_one_page_wide_with_repeated_headers(tmp_path, template_plan):
    _, review = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, tmp_path / "out",
                                      run_at=RUN_AT)
    pages = pypdf.PdfReader(to_pdf(review, tmp_path)).pages
    by_sheet = defaultdict(list)
    for number, page in enumerate(pages, start=1):
        text = page.extract_text()
        footer = FOOTER.search(text)
        assert footer, f"page {number} has no footer"
        assert (int(footer.group(2)), int(footer.group(3))) == (number, len(pages))
        by_sheet[footer.group(1)].append((page, text))
    assert list(by_sheet) == list(EXPECTED)  # sheet order, and no page of anything else
    for sheet, (landscape, count, (first, last)) in EXPECTED.items():
        if count is not None:
            assert len(by_sheet[sheet]) == count, sheet
        for page, text in by_sheet[sheet]:
            box = page.mediabox
            assert (box.width > box.height) == landscape, sheet
            # one page wide: the first and last column headers are on every page of the sheet
            flat = " ".join(text.split())
            assert first in flat and last in flat, (sheet, first, last)
