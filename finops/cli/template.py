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
    replace: Annotated[
        bool,
        typer.Option("--replace", help="write over a file already at --out (what was typed into it is lost)"),
    ] = False,
) -> None:
    """Write the planning workbook (sheets, tables, add-in formulas with their computed values)."""
    from finops.errors import InputError, Location
    from finops.price_book import PriceBook
    from finops.workbooks import workbooks

    if out.exists() and not replace:   # a plan filled in by hand has the template's name: never written over
        raise InputError("a file is already there; the planning workbook is never written over one",
                         where=Location(file=str(out)),
                         hint="choose another --out, or pass --replace to rebuild it (what was typed into it is lost)")

    path = workbooks().build_template(out, prices=None if prices is None else PriceBook.read(prices))
    console.print(f"wrote {path}; open it in Excel, or install the add-in to recalculate (docs/excel.md)")
