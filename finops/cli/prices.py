"""``finops prices show|pull``: read and refresh the price book."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..errors import InputError
from ..price_book import PriceBook
from ._console import console, print_json


def register(app: typer.Typer) -> None:
    prices = typer.Typer(help="Show and pull GPU prices (the price book).", no_args_is_help=True)
    app.add_typer(prices, name="prices")

    @prices.command("show")
    def show(provider: Optional[str] = typer.Option(None, help="aws or gcp"),
             instance_type: Optional[str] = typer.Option(None, "--instance-type"),
             region: Optional[str] = typer.Option(None),
             pricing_model: Optional[str] = typer.Option(None, "--pricing-model"),
             as_json: bool = typer.Option(False, "--json", help="print a JSON list of price rows")) -> None:
        """Print the matching rows of the current price book (bundled snapshot unless FINOPS_PRICE_BOOK is set)."""
        book = PriceBook.current().filter(provider=provider, instance_type=instance_type, region=region,
                                          pricing_model=pricing_model)
        if as_json:
            print_json([row.to_record() for row in book])
            return
        table = Table("provider", "region", "instance_type", "gpu", "pricing_model", "payment",
                      "hourly", "per GPU-h", "upfront", "cur", "date", title=f"{len(book)} prices")
        for r in book:
            table.add_row(r.provider, r.region, r.instance_type, f"{r.gpu_count}x {r.gpu_model}", r.pricing_model,
                          r.payment_option, f"{r.hourly_cost:.4f}", f"{r.per_gpu_hour:.4f}", f"{r.upfront_cost:.2f}",
                          r.currency, r.effective_date)
        console.print(table)

    @prices.command("pull")
    def pull(provider: str = typer.Option(..., help="aws or gcp"),
             regions: Optional[list[str]] = typer.Option(None, "--regions", help="repeat or comma-separate"),
             instance_types: Optional[list[str]] = typer.Option(None, "--instance-types"),
             out: Path = typer.Option(Path("price-book.parquet"),
                                      help="a .parquet or .csv file (the other format is written beside it, the "
                                           "CSV being the workbook's Prices sheet); a .csv.gz alone is a snapshot"),
             offer_file: Optional[Path] = typer.Option(None, "--offer-file",
                                                       help="price a downloaded bulk offer file instead of calling "
                                                            "the API (aws)")) -> None:
        """Pull current prices from a provider's API into a price-book file (nothing written on failure)."""
        from connectors import provider as connector

        module = connector(provider)
        if offer_file is not None:
            reader = getattr(module, "read_offer_file", None)
            if reader is None:
                raise InputError(f"--offer-file is not supported for provider {provider!r}", hint="use --provider aws")
            book = reader(offer_file, instance_types=_split(instance_types), regions=_split(regions))
        else:
            book = module.pull_prices(regions=_split(regions), instance_types=_split(instance_types))
        written = [book.write_csv(path) if path.name.endswith((".csv", ".csv.gz")) else book.write_parquet(path)
                   for path in _outputs(out)]
        console.print(f"wrote {len(book)} prices to {', '.join(map(str, written))}; "
                      f"use it with FINOPS_PRICE_BOOK={written[0]}")


def _outputs(out: Path) -> list[Path]:
    """``x.parquet`` -> x.parquet + x.csv; ``x.csv`` -> x.csv + x.parquet; ``x.csv.gz`` -> itself (a snapshot)."""
    if out.name.endswith(".csv.gz"):
        return [out]
    if out.suffix == ".csv":
        return [out, out.with_suffix(".parquet")]
    return [out, out.with_suffix(".csv")]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]
