"""llm-finops core: size, price and reconcile GPU fleets for LLM inference.

The core is pure computation over normalized tables. It imports no Excel library, no cloud SDK and
no CLI framework (``finops.cli`` is a face and is never imported from here), so it runs unchanged
inside xlwings Lite (Pyodide).

For notebooks, :mod:`finops.api` re-exported here: ``finops.size``, ``finops.estimate``, ``finops.tco``,
``finops.optimize_mix`` and ``finops.reconcile_month`` (docs/api.md). ``finops.tco`` is the function;
the TCO package is still imported as ``from finops.tco import ...``.
"""

from .errors import (
    CurrencyMismatchError,
    DependencyError,
    FinopsError,
    InputError,
    Location,
    ProviderError,
    TransientProviderError,
    UnknownNameError,
)
from .money import Money, to_decimal
from .registry import Registry

# Imported after the subpackages it loads, so ``finops.tco`` names the function, not the package.
from .api import estimate, optimize_mix, reconcile_month, size, tco, to_pandas  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CurrencyMismatchError",
    "DependencyError",
    "FinopsError",
    "InputError",
    "Location",
    "Money",
    "ProviderError",
    "Registry",
    "TransientProviderError",
    "UnknownNameError",
    "__version__",
    "estimate",
    "optimize_mix",
    "reconcile_month",
    "size",
    "tco",
    "to_decimal",
    "to_pandas",
]
