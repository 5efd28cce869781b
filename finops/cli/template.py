"""``finops template build``: write the planning workbook (Excel template) built from the core."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._console import console


def register(app: typer.Typer) -> None:
    template = typer.Typer(help="Build the Excel planning workbook.", no_args_is_help=True)
    app.add_typer(template, name="template")

    template.command("build")(build)


def build(
    out: Annotated[Path, typer.Option("--out", help="the .xlsx file to write")] = Path(
        "llm-finops-plan.xlsx"
    ),
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="a price book from `finops prices pull` (.parquet or .csv) for the Prices sheet and every "
            "price the workbook computes; default: the bundled snapshot",
        ),
    ] = None,
) -> None:
    """Write the planning workbook (sheets, tables, add-in formulas with their computed values)."""
    from finops.price_book import PriceBook
    from templates import build_template

    path = build_template(out, prices=None if prices is None else PriceBook.read(prices))
    console.print(f"wrote {path}; open it in Excel, or install the add-in to recalculate (docs/excel.md)")
