"""The two bundled FOCUS 1.2 sample bills (AWS and GCP, 1,000 rows each, May 2026, USD).

Synthetic data from the FinOps Foundation's FOCUS-Sample-Data (provenance in
``finops/data/bills/SOURCE.md``), used by ``finops demo`` and the tests.

>>> [p.name for p in sample_bill_paths()]
['focus-1.2-aws-1000.csv.gz', 'focus-1.2-gcp-1000.csv.gz']
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["SAMPLE_MONTH", "sample_bill_paths"]

#: The month both samples cover.
SAMPLE_MONTH = "2026-05"


def sample_bill_paths() -> list[Path]:
    """Paths of the bundled sample bills, AWS first."""
    folder = Path(str(files("finops") / "data" / "bills"))
    return [folder / "focus-1.2-aws-1000.csv.gz", folder / "focus-1.2-gcp-1000.csv.gz"]
