"""``finops template build``: write the planning workbook (Excel template) built from the core."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._console import console


def register(app: typer.Typer) -> None:
    template = typer.Typer(help="Build the Excel planning workbook.", no_args_is_help=True)
    app.add_typer(template, name="template")

    @template.command("build")
    def build(
        out: Annotated[Path, typer.Option("--out", help="the .xlsx file to write")] = Path(
            "llm-finops-plan.xlsx"
        ),
    ) -> None:
        """Write the planning workbook (sheets, tables, add-in formulas with their computed values)."""
        from templates import build_template

        path = build_template(out)
        console.print(f"wrote {path}; open it in Excel, or install the add-in to recalculate (docs/excel.md)")
