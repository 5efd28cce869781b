"""``finops bills pull``: a provider's bills for a month as FOCUS 1.2 Parquet (with the ``x_`` GPU columns)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..depreciation import parse_month
from ..outputs import check_suffix
from ._console import console


def register(app: typer.Typer) -> None:
    bills = typer.Typer(help="Pull cloud bills as FOCUS 1.2 rows.", no_args_is_help=True)
    app.add_typer(bills, name="bills")

    bills.command("pull")(pull)


def pull(provider: str = typer.Option(..., help="aws or gcp"),
         source: str = typer.Option(..., help="aws: s3://BUCKET/PREFIX of a CUR 2.0 / FOCUS 1.2 Data Export, "
                                              "a local copy of one, or 'ce' (Cost Explorer); "
                                              "gcp: bq://PROJECT.DATASET.TABLE or an exported file"),
         month: str = typer.Option(..., help="YYYY-MM (aws also takes a range YYYY-MM..YYYY-MM)"),
         out: Path | None = typer.Option(None, help="the Parquet file to write "
                                                       "(default focus-<provider>-<month>.parquet)")) -> None:
    """Read a month of bills from the provider and write FOCUS 1.2 Parquet (nothing written on failure)."""
    from connectors import provider as connector

    month = normalized_months(month)
    target = out or Path(f"focus-{provider.strip().lower()}-{month.strip()}.parquet")
    check_suffix(target, (".parquet",), "the bills are written as FOCUS Parquet")  # else read as a damaged CSV later
    path = connector(provider).pull_bills(source, month, target)
    import pyarrow.parquet as pq

    rows = pq.read_metadata(path).num_rows
    console.print(f"wrote {rows} FOCUS rows to {path}; reconcile with `finops reconcile --bills {path}`")


def normalized_months(text: str) -> str:
    """``--month`` as ASCII: one month or a range ``FROM..TO``, each end through :func:`parse_month`
    (NFKC, then ``YYYY-MM``), so a full-width month is the same month as its ASCII spelling.

    >>> normalized_months("２０２６-０３..2026-05")
    '2026-03..2026-05'
    """
    return "..".join(parse_month(part) for part in text.strip().split(".."))
