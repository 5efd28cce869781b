"""Connectors: one cloud each, turned into the price book and FOCUS 1.2 rows.

A connector knows one provider and nothing about Excel. Each exposes the same two functions in its
package (``connectors.aws``, ``connectors.gcp``), imported lazily so the cloud SDKs load only when a
connector is used:

- ``pull_prices(*, regions: list[str] | None, instance_types: list[str] | None) -> PriceBook``
- ``pull_bills(source: str, month: str, out: Path) -> Path``: FOCUS 1.2 rows (with the ``x_`` GPU
  columns of :mod:`finops.focus`) written atomically to a Parquet file.

Failures surface as :class:`finops.errors.ProviderError` (or ``TransientProviderError``); a
missing SDK as :class:`finops.errors.DependencyError` with the ``pip install`` line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from finops.registry import Registry

__all__ = ["provider"]

_PROVIDERS = Registry("provider", {"aws": "connectors.aws", "gcp": "connectors.gcp"},
                      aliases={"amazon": "aws", "google": "gcp", "google-cloud": "gcp"})


def provider(name: str) -> ModuleType:
    """The connector package for a provider name (``aws``, ``gcp``); typos get suggestions."""
    return importlib.import_module(_PROVIDERS[name])
