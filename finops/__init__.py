"""llm-finops core: size, price and reconcile GPU fleets for LLM inference.

The core is pure computation over normalized tables. It imports no Excel library, no cloud SDK and
no CLI framework (``finops.cli`` is a face and is never imported from here), so it runs unchanged
inside xlwings Lite (Pyodide).
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
    "to_decimal",
]
