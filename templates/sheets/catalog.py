"""The Catalog sheet (models and accelerators, each row with its source and date) and the Prices sheet.

Both are snapshots of the core's data at build time: the model and GPU catalogs of ``finops.catalog``
and the price book it is built with (``finops template build --prices FILE`` takes a pulled one).
The Prices table has exactly ``finops.price_book.COLUMNS``; ``PriceTable`` names it with its header,
which is what ``FINOPS_PRICE`` takes in xlwings Lite.
"""

from __future__ import annotations

from functools import lru_cache

from xlsxwriter.workbook import Workbook

from finops.catalog import accelerators, models
from finops.price_book import COLUMNS, PriceBook

from ..styles import Styles
from ._table import Column, TablePlace, fit_for_print, titled_sheet, write_table

__all__ = ["prices_range", "write_catalog", "write_prices"]

_MODEL_COLUMNS = (
    ("id", "text", 16),
    ("hf_id", "text", 30),
    ("attention", "text", 9),
    ("layers", "int", 7),
    ("hidden_size", "int", 10),
    ("num_kv_heads", "int", 10),
    ("head_dim", "int", 9),
    ("total_params_b", "number", 12),
    ("active_params_b", "number", 12),
    ("max_context", "int", 11),
    ("source", "text", 40),
    ("as_of", "text", 11),
)
_GPU_COLUMNS = (
    ("id", "text", 12),
    ("name", "text", 22),
    ("memory_gb", "number", 10),
    ("memory_bandwidth_gbps", "number", 12),
    ("bf16_tflops", "number", 10),
    ("fp8_tflops", "number", 10),
    ("tdp_w", "number", 8),
    ("interconnect", "text", 14),
    ("source", "text", 40),
    ("as_of", "text", 11),
)
_PRICE_KINDS = {"gpu_count": "int", "hourly_cost": "rate", "upfront_cost": "money"}
#: Column widths of the Prices table (characters; 12 otherwise): what the bundled book's values need, so the
#: table prints one landscape page wide with the source cut at its column's edge.
_PRICE_WIDTHS = {"provider": 8, "region": 16, "instance_type": 16, "gpu_model": 11, "gpu_count": 9, "currency": 8,
                 "effective_date": 12, "source": 24}


def write_catalog(wb: Workbook, styles: Styles) -> dict[str, TablePlace]:
    """Models (``tblModels``, names ``ModelIds``) and accelerators (``tblAccelerators``, ``GpuIds``)."""
    ws = titled_sheet(
        wb,
        styles,
        "Catalog",
        "Models and accelerators known to the add-in (read-only snapshot; sizes from each "
        "model's config.json, dense tensor rates from the vendors' datasheets).",
        widths=[w for _, _, w in _MODEL_COLUMNS],
    )
    ws.freeze_panes(3, 1)
    fit_for_print(ws, 2, [w for _, _, w in _MODEL_COLUMNS])
    model_rows = [[getattr(m, c) for c, _, _ in _MODEL_COLUMNS] for m in models().values()]
    model_place = write_table(
        ws,
        styles,
        "tblModels",
        [Column(c, k, "computed", w) for c, k, w in _MODEL_COLUMNS],
        model_rows,
        first_row=2,
    )
    gpu_top = model_place.row(model_place.rows) + 2
    gpu_rows = [[getattr(g, c) for c, _, _ in _GPU_COLUMNS] for g in accelerators().values()]
    gpu_place = write_table(
        ws,
        styles,
        "tblAccelerators",
        [Column(c, k, "computed", w) for c, k, w in _GPU_COLUMNS],
        gpu_rows,
        first_row=gpu_top,
    )
    wb.define_name("ModelIds", "=" + model_place.column_range("id"))
    wb.define_name("GpuIds", "=" + gpu_place.column_range("id"))
    return {"tblModels": model_place, "tblAccelerators": gpu_place}


def write_prices(wb: Workbook, styles: Styles, book: PriceBook) -> TablePlace:
    """The price book as ``tblPrices`` (exact ``COLUMNS``); ``PriceTable`` names header + rows."""
    dates = sorted({r.effective_date for r in book})
    span = f"{dates[0]} to {dates[-1]}" if dates else "none"
    ws = titled_sheet(
        wb,
        styles,
        "Prices",
        f"Price book snapshot ({len(book)} rows, effective {span}; source per row). "
        "Refresh: `finops prices pull --provider aws|gcp --out book.csv`, then "
        "`finops template build --prices book.csv` (every price in the workbook follows).",
        widths=[_PRICE_WIDTHS.get(c, 12) for c in COLUMNS],
    )
    rows = prices_range(book)[1:]
    columns = [Column(c, _PRICE_KINDS.get(c, "text"), "input", _PRICE_WIDTHS.get(c, 12)) for c in COLUMNS]
    ws.freeze_panes(3, 0)
    fit_for_print(ws, 2, [c.width for c in columns])
    place = write_table(ws, styles, "tblPrices", columns, rows or [[""] * len(COLUMNS)], first_row=2)
    wb.define_name("PriceTable", "=" + place.whole_range())
    return place


@lru_cache(maxsize=2)
def prices_range(book: PriceBook) -> list[list[object]]:
    """The price book as the Prices table holds it and ``FINOPS_PRICE`` receives it: header, then rows.

    Worked out once per book (every add-in call of a build passes it); callers read it, never change it.
    """
    return [list(COLUMNS)] + [
        [float(v) if c in ("hourly_cost", "upfront_cost") else v for c, v in r.to_record().items()]
        for r in book
    ]
