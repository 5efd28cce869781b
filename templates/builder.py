"""Build the planning workbook from the core: ``build_template(out) -> Path``.

Sheets, in order: Start, Workloads, Sizing, TCO, Mix, Budget, Assets, Mapping, Usage, Catalog, Prices.
The build is deterministic (fixed document dates, sheets and rows in a fixed order), so the committed
``templates/llm-finops-plan.xlsx`` equals a fresh build byte for byte. Every formula carries the
value the add-in computes for it (the builder calls ``addin.udfs`` itself), so the file reads right
before any add-in is installed. The file is written whole or not at all (built in memory, then renamed
into place).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import xlsxwriter

from finops.errors import InputError, Location
from finops.files import write_atomically
from finops.price_book import PriceBook

from .demo_plan import SAMPLES_PLAN, PlanTables
from .sheets._table import bound_print_area
from .sheets.catalog import write_catalog, write_prices
from .sheets.mix import write_mix
from .sheets.plan import write_plan_sheets
from .sheets.sizing import write_sizing
from .sheets.start import write_start
from .sheets.tco import write_tco
from .sheets.workloads import workload_rows, write_workloads
from .styles import Styles
from .workbooks import SAMPLE_PLAN

__all__ = ["BUILT_AT", "DEFAULT_TEMPLATE", "TEMPLATE_NAME", "build_template"]

DEFAULT_TEMPLATE = SAMPLE_PLAN
TEMPLATE_NAME = DEFAULT_TEMPLATE.name
#: The document properties' creation date: fixed, so two builds give the same bytes.
BUILT_AT = datetime(2026, 11, 30, 0, 0, 0)
_CALC_ENGINE_ID = 191029


def build_template(out: Path = DEFAULT_TEMPLATE, *, prices: PriceBook | None = None,
                   plan_lines: Mapping[str, str] | None = None, pricing_models: Mapping[str, str] | None = None,
                   plan: PlanTables = SAMPLES_PLAN) -> Path:
    """Write the planning workbook to ``out`` (an ``.xlsx``) and return its path.

    ``prices`` defaults to the bundled price snapshot (not ``FINOPS_PRICE_BOOK``), so the committed
    template does not depend on the machine that built it. ``plan_lines`` (workload name -> Budget plan
    line) fills Workloads' PlanLine: those lines' Budget amounts become sums over the TCO sheet.
    ``pricing_models`` (workload name -> pricing model, e.g. ``spot``) prices a workload's fleet on the TCO
    sheet under another model than on-demand. ``plan`` holds the rows of Budget, Assets, Mapping and Usage
    (default: the plan of the bundled FOCUS samples; ``finops demo`` builds its own fleet's plan).
    """
    out = Path(out)
    if out.suffix.lower() != ".xlsx":
        raise InputError(
            f"the template is written as .xlsx, got {out.name!r}",
            where=Location(file=str(out)),
            hint="use --out plan.xlsx; for the classic add-in save it as .xlsm in Excel (docs/excel.md)",
        )
    book = PriceBook.bundled() if prices is None else prices
    buffer = io.BytesIO()
    wb = xlsxwriter.Workbook(
        buffer, {"strings_to_formulas": False, "strings_to_urls": False, "in_memory": True}
    )
    wb.set_properties(
        {
            "title": "llm-finops planning workbook",
            "author": "llm-finops",
            "created": BUILT_AT,
            "comments": "Built by `finops template build`",
        }
    )
    # Open with the stored values: no full recalculation on load (which would turn every add-in cell into
    # #NAME? where the add-in is missing), and the calc engine id of current Excel (191029), since Excel
    # recalculates a file saved by an older engine. Ctrl+Alt+F9 recalculates once the add-in is there.
    wb.set_calc_mode("auto", calc_id=_CALC_ENGINE_ID)
    wb.calc_on_load = False
    styles = Styles(wb)
    rows = workload_rows(book, plan_lines, pricing_models)
    write_start(wb, styles)
    workloads = write_workloads(wb, styles, rows)
    sizing, sized = write_sizing(wb, styles, rows, workloads, book)
    tco, fleets = write_tco(wb, styles, rows, workloads, sizing, sized, book)
    write_mix(wb, styles, rows, sized, book)
    write_plan_sheets(wb, styles, tco, fleets, plan)
    write_catalog(wb, styles)
    write_prices(wb, styles, book)
    for ws in wb.worksheets():
        bound_print_area(ws)
    wb.close()
    return write_atomically(out, buffer.getvalue())
