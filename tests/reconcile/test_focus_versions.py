"""FOCUS 1.0, 1.1 and 1.2 bills are read by their version (1.3 and 1.4: test_focus_1_3_1_4.py); a file that is none of them is refused with exit 2,
naming the file and every missing mandatory column."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from finops.focus import COLUMNS
from finops.reconcile.bills import FOCUS_VERSIONS, focus_version, open_bills

from .conftest import write_bill

ALL = [c.name for c in COLUMNS]
ADDED_IN_1_2 = set(FOCUS_VERSIONS["1.2"])
ADDED_IN_1_1 = set(FOCUS_VERSIONS["1.1"])


@pytest.mark.parametrize("version, columns", [
    ("1.2", ALL),
    ("1.1", [c for c in ALL if c not in ADDED_IN_1_2]),
    ("1.0", [c for c in ALL if c not in ADDED_IN_1_2 | ADDED_IN_1_1]),
])
def test_each_version_is_recognized_and_summed_alike(tmp_path, version, columns):
    bill = write_bill(tmp_path / f"focus-{version}.csv", [{}, {"BilledCost": "2.50", "EffectiveCost": "2.50"}],
                      columns=columns)
    with duckdb.connect() as con:
        (file,) = open_bills(con, [bill])
        assert focus_version(file.path, file.columns) == version
        assert con.execute("SELECT SUM(BilledCost), count(InvoiceId) FROM focus_bills").fetchone() == \
            (12.5, 0 if version != "1.2" else 2)


def test_a_file_of_no_known_version_exits_2_listing_what_is_missing(tmp_path, capsys, simple_plan):
    from finops.cli import main

    preview = [c for c in ALL if c not in ("EffectiveCost", "ChargeCategory")] + ["AmortizedCost", "ChargeType"]
    bill = write_bill(tmp_path / "focus-preview.csv", [{}], columns=preview)
    code = main(["reconcile", "--plan", str(simple_plan), "--month", "2026-05", "--out", str(tmp_path / "o"),
                 "--quiet", "--bills", str(bill)])
    message = capsys.readouterr().err.replace("\n", "")
    assert code == 2
    assert not list(Path(tmp_path / "o").glob("*"))  # nothing written
    for fragment in ("focus-preview.csv", "not a FOCUS 1.0, 1.1, 1.2, 1.3 or 1.4 bill", "ChargeCategory, EffectiveCost"):
        assert fragment in message
