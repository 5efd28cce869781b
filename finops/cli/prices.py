"""``finops prices show|pull|pull-tokens``: read and refresh the price book and the token prices."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ..errors import InputError
from ..outputs import check_replaceable, check_suffix
from ..price_book import PRICING_MODELS, PriceBook
from ..registry import Registry
from ..token_prices import TOKEN_PRICES_ENV
from ._console import console, print_json


def register(app: typer.Typer) -> None:
    prices = typer.Typer(help="Show and pull GPU prices (the price book) and managed APIs' token prices.",
                         no_args_is_help=True)
    app.add_typer(prices, name="prices")
    register_tokens(prices)

    prices.command("show")(show)
    prices.command("pull")(pull)


def show(provider: str | None = typer.Option(None, help="aws or gcp"),
         instance_type: str | None = typer.Option(None, "--instance-type"),
         region: str | None = typer.Option(None),
         pricing_model: str | None = typer.Option(None, "--pricing-model"),
         as_json: bool = typer.Option(False, "--json", help="print a JSON list of price rows")) -> None:
    """Print the matching rows of the current price book (bundled snapshot unless FINOPS_PRICE_BOOK is set)."""
    book = PriceBook.current()
    for kind, field, value in (("provider", "provider", provider), ("instance type", "instance_type",
                               instance_type), ("region", "region", region)):
        if value:  # a typo is refused with the closest names, not shown as an empty table
            Registry(f"{kind} in the price book", {getattr(r, field): r for r in book}).canonical(value)
    if pricing_model:
        Registry("pricing model", dict.fromkeys(PRICING_MODELS)).canonical(pricing_model)
    book = book.filter(provider=provider, instance_type=instance_type, region=region, pricing_model=pricing_model)
    if as_json:
        print_json([row.to_record() for row in book])
        return
    table = _price_table(book)
    if console.is_terminal:
        console.print(table)
    else:  # a pipe or a file gets every row on one line, whatever COLUMNS says
        whole = Measurement.get(console, console.options.update_width(1000), table).maximum
        Console(width=whole, highlight=False).print(table)


def pull(provider: str = typer.Option(..., help="aws or gcp"),
         regions: list[str] | None = typer.Option(None, "--regions", help="repeat or comma-separate"),
         instance_types: list[str] | None = typer.Option(None, "--instance-types"),
         out: Path = typer.Option(Path("price-book.parquet"),
                                  help="a .parquet or .csv file (the other format is written beside it, the "
                                       "CSV being the workbook's Prices sheet); a .csv.gz alone is a snapshot"),
         offer_file: Path | None = typer.Option(None, "--offer-file",
                                                   help="price a downloaded bulk offer file instead of calling "
                                                        "the API (aws)")) -> None:
    """Pull current prices from a provider's API into a price-book file (nothing written on failure)."""
    from connectors import provider as connector

    module = connector(provider)
    for path in _outputs(out):  # before the pull: a file there that this tool did not write is never replaced
        check_replaceable(path, "price book")
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


def register_tokens(prices: typer.Typer) -> None:
    @prices.command("pull-tokens")
    def pull_tokens(provider: str = typer.Option(..., help="aws (Amazon Bedrock) or gcp (Vertex AI)"),
                    regions: list[str] | None = typer.Option(None, "--regions", help="repeat or comma-separate"),
                    out: Path = typer.Option(Path("token-prices.csv"), help="a .csv file")) -> None:
        """Pull managed APIs' per-token prices of the catalog's open models into a CSV (nothing written on failure)."""
        from connectors import provider as connector

        check_suffix(out, (".csv",), "token prices are written as CSV")
        check_replaceable(out, "token price list")
        book = connector(provider).pull_token_prices(regions=_split(regions))
        written = book.write_csv(out)
        console.print(f"wrote {len(book)} token prices to {written}; use it with {TOKEN_PRICES_ENV}={written}")


def _price_table(book: PriceBook) -> Table:
    """The rows as a table; provider and currency go in the title when every row shares them. In a narrow
    terminal text folds onto more lines but the figures are never cut."""
    providers, currencies = {r.provider for r in book}, {r.currency for r in book}
    shared = [value.pop() for value in (set(providers), set(currencies)) if len(value) == 1]
    table = Table(title=" ".join([f"{len(book)} prices", *shared]), box=box.SIMPLE_HEAD)
    headers = (["provider"] if len(providers) > 1 else []) + ["region", "instance_type", "gpu", "pricing", "hourly",
                                                               "per GPU-h", "upfront", "date"]
    headers += ["currency"] if len(currencies) > 1 else []
    for header in headers:
        number = header in ("hourly", "per GPU-h", "upfront")
        table.add_column(header, justify="right" if number else "left", no_wrap=number, overflow="fold")
    for r in book:
        cells = {"provider": r.provider, "region": r.region, "instance_type": r.instance_type,
                 "gpu": f"{r.gpu_count}x {r.gpu_model}", "pricing": f"{r.pricing_model} {r.payment_option}".strip(),
                 "hourly": f"{r.hourly_cost:.4f}", "per GPU-h": f"{r.per_gpu_hour:.4f}",
                 "upfront": f"{r.upfront_cost:.2f}", "date": r.effective_date, "currency": r.currency}
        table.add_row(*(cells[h] for h in headers))
    return table


def _outputs(out: Path) -> list[Path]:
    """``x.parquet`` -> x.parquet + x.csv; ``x.csv`` -> x.csv + x.parquet; ``x.csv.gz`` -> itself (a snapshot)."""
    if not out.name.endswith((".parquet", ".csv", ".csv.gz")):
        raise InputError(f"--out {out} is neither .parquet, .csv nor .csv.gz",
                         hint="e.g. --out prices.parquet (writes prices.csv beside it)")
    if out.name.endswith(".csv.gz"):
        return [out]
    if out.suffix == ".csv":
        return [out, out.with_suffix(".parquet")]
    return [out, out.with_suffix(".csv")]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]
