"""The bundled offline GCP price snapshot (``finops/data/prices/gcp-<date>.csv.gz``).

Derived by ``scripts/derive_gcp_snapshot.py`` from the dated Cyclenerd pricing dump: machine-level
on-demand, spot, 1-year and 3-year committed hourly prices of the A2, A3 and G2 machine types in every
region, each row with its ``effective_date`` and ``source``. It is part of ``PriceBook.bundled()``; this
module reads only the GCP file, newest first.

>>> book = snapshot()
>>> book.lookup("gcp", "a2-highgpu-1g", "on_demand", "us-central1").hourly_cost
Decimal('3.673385000')
"""

from __future__ import annotations

from importlib import resources

from finops.errors import InputError
from finops.price_book import PriceBook

__all__ = ["snapshot", "snapshot_name"]


def snapshot_name() -> str:
    """File name of the newest bundled GCP snapshot."""
    folder = resources.files("finops").joinpath("data", "prices")
    names = sorted(e.name for e in folder.iterdir() if e.name.startswith("gcp-") and e.name.endswith(".csv.gz"))
    if not names:
        raise InputError("no bundled GCP price snapshot", hint="reinstall llm-finops or run `finops prices pull`")
    return names[-1]


def snapshot() -> PriceBook:
    """The newest bundled GCP snapshot as a price book."""
    from finops.limits import inflate

    name = snapshot_name()
    raw = resources.files("finops").joinpath("data", "prices", name).read_bytes()
    return PriceBook.read_csv(name, text=inflate(raw, name).decode("utf-8"))
