"""Excel functions (xlwings UDFs) over the llm-finops core: thin wrappers, no business logic.

One module serves both free xlwings routes:

* **classic Windows add-in**: list ``addin.udfs`` under "UDF Modules" (or ``UDF_MODULES`` in
  ``xlwings.conf``) and click "Import Functions"; xlwings writes one VBA wrapper per function.
* **xlwings Lite** (Excel on the web, Mac, Windows): paste ``from addin.udfs import *`` in
  ``main.py`` with ``llm-finops`` in ``requirements.txt``; prices come from the workbook's Prices
  sheet, passed as a range (``PriceTable``), never from the network.

Outside Excel (Linux, tests, Pyodide without xlwings) the decorators leave plain callables.
Every function accepts a cell or a one-cell range for each scalar argument, and answers bad input
with a one-line ``#FINOPS: ...`` text, never a traceback.

>>> FINOPS_PRICE("gcp", "a3-highgpu-8g", "on_demand", "us-central1", [list(COLUMNS),
...     ["gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, "on_demand", "", 88.25, 0, "USD", "2026-07-30", "x"]])
88.25
>>> FINOPS_PRICE("gcp", "a3-highgpu-8g", "sometimes", "us-central1", [list(COLUMNS)])
"#FINOPS: unknown pricing model 'sometimes'"
"""

from __future__ import annotations

from typing import Any

from finops.price_book import COLUMNS, PriceBook

from ._cells import cell_errors, optional_text, text
from ._price_range import price_book_from_range

try:  # classic add-in and xlwings Lite both expose func/arg/ret on the top-level module
    from xlwings import arg, func, ret  # noqa: F401  (arg/ret kept for users extending the module)
except ImportError:  # no xlwings (CI, plain Pyodide): identity decorators keep plain callables
    def func(f: Any = None, **_options: Any) -> Any:
        return f if f is not None else (lambda g: g)

    def arg(*_args: Any, **_options: Any) -> Any:
        return lambda g: g

    def ret(*_args: Any, **_options: Any) -> Any:
        return lambda g: g

__all__ = ["FINOPS_PRICE", "UDFS"]

#: A cell value, a range (list or list of lists) or an omitted optional argument.
Cell = Any


def _book(prices: Cell) -> PriceBook:
    return PriceBook.current() if prices is None else price_book_from_range(prices)


@func
@cell_errors
def FINOPS_PRICE(provider: Cell, instance_type: Cell, pricing_model: Cell, region: Cell,
                 prices: Cell = None) -> Any:
    """Effective hourly cost of one instance from the price book (upfront amortized, cheapest payment option).

    ``prices`` is the Prices table range with its header (xlwings Lite: pass ``PriceTable``); omitted,
    the add-in's current price book is used (``FINOPS_PRICE_BOOK`` or the bundled snapshot).
    Source: ``finops.price_book.PriceBook.lookup``.
    """
    row = _book(prices).lookup(text(provider, "provider"), text(instance_type, "instance_type"),
                               text(pricing_model, "pricing_model"), text(region, "region"))
    return float(row.hourly_cost)


#: Every Excel function of the add-in, by the name a cell uses.
UDFS: dict[str, Any] = {name: obj for name, obj in list(globals().items())
                        if name.isupper() and callable(obj) and name.startswith(("LLM_", "FINOPS_"))}
