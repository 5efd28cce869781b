"""llm-finops core: size, price and reconcile GPU fleets for LLM inference.

The core is pure computation over normalized tables. It imports no Excel library, no cloud SDK and
no CLI framework (``finops.cli`` is a face and is never imported from here), so it runs unchanged
inside xlwings Lite (Pyodide).

For notebooks, :mod:`finops.api` re-exported here: ``finops.size``, ``finops.estimate``, ``finops.tco``,
``finops.optimize_mix`` and ``finops.reconcile_month`` (docs/api.md). ``finops.tco`` is the function;
the TCO package is still imported as ``from finops.tco import ...``.

The API names load lazily (PEP 562 ``__getattr__``): ``import finops`` stays light, so a command that
needs none of sizing, mix or TCO (``finops reconcile``) does not pay for numpy and the models.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

#: The error tree and money names, loaded on first access too: ``import finops`` runs no import of its own,
#: so ``python -m finops`` and the ``finops`` script handle Ctrl-C from their first line (finops/__main__.py).
_CORE_NAMES = {"CurrencyMismatchError": ".errors", "DependencyError": ".errors", "FinopsError": ".errors",
               "InputError": ".errors", "Location": ".errors", "ProviderError": ".errors",
               "TransientProviderError": ".errors", "UnknownNameError": ".errors", "Money": ".money",
               "to_decimal": ".money", "Registry": ".registry"}
#: Names :mod:`finops.api` provides, loaded on first access.
_API_NAMES = frozenset({"estimate", "optimize_mix", "reconcile_month", "size", "tco", "to_pandas"})

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


def _api() -> types.ModuleType:
    return importlib.import_module(".api", __name__)


def __getattr__(name: str) -> object:
    """Load :mod:`finops.api` (or the module of an error or money name) on first use of one of its names."""
    if name in _CORE_NAMES:
        return getattr(importlib.import_module(_CORE_NAMES[name], __name__), name)
    if name not in _API_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_api(), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _FinopsModule(types.ModuleType):
    """``finops.tco`` stays the function even after the ``finops.tco`` package is imported.

    Importing a submodule binds it on its parent (``setattr(finops, "tco", package)``); the data
    descriptor below wins over that binding, as the eager ``from .api import tco`` did before.
    """

    @property
    def tco(self) -> object:
        return _api().tco

    @tco.setter
    def tco(self, package: types.ModuleType) -> None:
        """The import system's binding of the package: ignored, the package stays in ``sys.modules``."""


sys.modules[__name__].__class__ = _FinopsModule
