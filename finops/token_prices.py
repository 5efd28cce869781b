"""Managed token APIs' prices: what Amazon Bedrock and Vertex AI charge per million tokens for an open model.

A :class:`TokenPrice` is one provider's on-demand price of one model it serves (``offer_model``, the provider's own
model id) per million input and output tokens (and cached input tokens where the provider prices them apart), with
the catalog model it is (``model``, :mod:`finops.catalog.models`) and how close the match is (``same model``, or
``same architecture (...)`` for a fine-tune of the catalog model's architecture, which serves at the same cost per
token). The table of providers' model names to catalog models is that pair of columns.

The connectors pull these prices (``connectors.aws.token_pricing``: the AWS Price List services ``AmazonBedrock``,
``AmazonBedrockService`` and ``AmazonBedrockFoundationModels``; ``connectors.gcp.token_catalog``: the Cloud Billing
Catalog's Vertex AI service ``C7E2-9256-1C43``); offline, :meth:`TokenPriceBook.bundled` reads the dated snapshot
``finops/data/token_prices/token-apis-<date>.csv``, written by hand from the providers' pricing pages, one row per
provider, model and region, its page, the date it was read and the value it shows in ``source`` (``#`` lines at the
top of the file say what is left out and why). To add a row, copy the provider's list price per million tokens (per
1,000 tokens x 1,000) with its page; the loader checks every column. The connectors' tables from the providers'
model names to catalog models (``connectors.aws.token_pricing.BEDROCK_MODELS``,
``connectors.gcp.token_catalog.VERTEX_MODELS``) reach models the snapshot has no price for.

>>> book = TokenPriceBook.bundled()
>>> [(p.provider, p.offer_model) for p in book.serving("llama-3.3-70b")]
[('aws', 'meta.llama3-3-70b-instruct-v1:0'), ('gcp', 'meta/llama-3.3-70b-instruct-maas')]
>>> str(book.serving("llama-3.3-70b")[0].per_million_output(isl=1000, osl=1000))
'1.44 USD'
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import InputError, Location
from .files import write_atomically
from .money import MONEY_CONTEXT, Money, to_decimal
from .registry import normalize_key

__all__ = ["TOKEN_PRICES_ENV", "TokenPrice", "TokenPriceBook", "per_million_tokens", "token_prices_of"]

#: A pulled token price file (``finops prices pull-tokens``) used instead of the bundled snapshot.
TOKEN_PRICES_ENV = "FINOPS_TOKEN_PRICES"

_BUNDLED = "token-apis-2026-12-07.csv"
_MONEY = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok")
_PRICING_MODELS = ("on_demand",)


@dataclass(frozen=True)
class TokenPrice:
    """One managed API's price of one model, per million tokens, in ``currency``."""

    provider: str            # aws | gcp (as in the price book)
    service: str             # the provider's service name as its bills write it (FOCUS ServiceName)
    offer_model: str         # the provider's model id
    model: str               # the catalog model it serves
    match: str               # "same model", or "same architecture (...)"
    region: str
    pricing_model: str       # on_demand
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cached_input_per_mtok: Decimal | None
    currency: str
    effective_date: str
    source: str

    def per_million_output(self, isl: float, osl: float) -> Money:
        """Cost per million output tokens of requests of ``isl`` input and ``osl`` output tokens: each output token
        brings ``isl / osl`` input tokens, ``input x isl / osl + output`` (comparable with a fleet's cost per million
        output tokens, :func:`finops.sizing.ranking.per_million`)."""
        ratio = Decimal(repr(float(isl))) / Decimal(repr(float(osl)))
        return Money(self.input_per_mtok * ratio + self.output_per_mtok, self.currency)

    def per_request(self, isl: float, osl: float) -> Money:
        """Cost of one request: ``(input x isl + output x osl) / 10^6``."""
        tokens = self.input_per_mtok * Decimal(repr(float(isl))) + self.output_per_mtok * Decimal(repr(float(osl)))
        return Money(tokens / Decimal(10**6), self.currency)


def per_million_tokens(price: Decimal, tokens_per_unit: Decimal) -> Decimal:
    """A price per unit of ``tokens_per_unit`` tokens as a price per million tokens, without trailing zeros.

    >>> per_million_tokens(Decimal("0.00072"), Decimal(1000)), per_million_tokens(Decimal("0.000000075"), Decimal(1))
    (Decimal('0.72'), Decimal('0.075'))
    """
    amount = MONEY_CONTEXT.divide(MONEY_CONTEXT.multiply(price, Decimal(10**6)), tokens_per_unit).normalize()
    return amount.quantize(Decimal(1)) if amount.as_tuple().exponent > 0 else amount  # type: ignore[operator]


def token_prices_of(prices: Mapping[tuple[str, str], Mapping[str, Any]], *, provider: str, service: str, as_of: str,
                    source: str, models: Mapping[str, tuple[str, str]]) -> list[TokenPrice]:
    """Token price rows from a provider's prices gathered per (model id, region): ``input_per_mtok``,
    ``output_per_mtok``, optional ``cached_input_per_mtok``, ``currency`` and ``skus`` (the priced items). ``models``:
    the provider's model id -> (catalog model, match). A model with no input or output price, or not in ``models``, is
    left out."""
    rows = []
    for (model_id, region), one in sorted(prices.items()):
        if "input_per_mtok" not in one or "output_per_mtok" not in one or model_id not in models:
            continue
        catalog_model, match = models[model_id]
        rows.append(TokenPrice(provider, service, model_id, catalog_model, match, region, "on_demand",
                               one["input_per_mtok"], one["output_per_mtok"], one.get("cached_input_per_mtok"),
                               one["currency"], as_of, f"{source}; SKUs {', '.join(sorted(one['skus']))}"))
    return rows


def _price_from(record: dict[str, str], where: Location) -> TokenPrice:
    values: dict[str, object] = {}
    for f in fields(TokenPrice):
        text = (record.get(f.name) or "").strip()
        if f.name in _MONEY:
            if not text and f.name == "cached_input_per_mtok":
                values[f.name] = None
                continue
            amount = to_decimal(text, where=Location(file=where.file, row=where.row, column=f.name))
            if amount < 0:
                raise InputError(f"{f.name} is negative", where=Location(file=where.file, row=where.row,
                                                                       column=f.name))
            values[f.name] = amount
        elif not text:
            raise InputError(f"{f.name} is empty", where=Location(file=where.file, row=where.row, column=f.name),
                             hint="every column of a token price row is needed but cached_input_per_mtok")
        else:
            values[f.name] = text
    if values["pricing_model"] not in _PRICING_MODELS:
        raise InputError(f"unknown pricing model {values['pricing_model']!r}",
                         where=Location(file=where.file, row=where.row, column="pricing_model"),
                         hint=f"one of {', '.join(_PRICING_MODELS)}")
    return TokenPrice(**values)  # type: ignore[arg-type]


class TokenPriceBook:
    """Token prices of managed APIs, searchable by catalog model."""

    def __init__(self, rows: Iterable[TokenPrice]) -> None:
        self._rows = tuple(rows)

    def __iter__(self) -> Iterator[TokenPrice]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __add__(self, other: TokenPriceBook) -> TokenPriceBook:
        return TokenPriceBook((*self._rows, *other._rows))

    def serving(self, model: str) -> list[TokenPrice]:
        """The prices of the APIs that serve catalog ``model``, cheapest per output token at equal input and output
        first (then by provider and model id)."""
        key = normalize_key(model)
        rows = [p for p in self._rows if normalize_key(p.model) == key]
        return sorted(rows, key=lambda p: (p.input_per_mtok + p.output_per_mtok, p.provider, p.offer_model))

    @classmethod
    def read_csv(cls, path: str | Path, text: str | None = None) -> TokenPriceBook:
        """Rows from a CSV file with the columns of :class:`TokenPrice` (``text``: its content, already read)."""
        content = Path(path).read_text(encoding="utf-8") if text is None else text
        lines = content.splitlines(keepends=True)
        comments = next((n for n, line in enumerate(lines) if not line.startswith("#")), len(lines))
        reader = csv.DictReader(io.StringIO("".join(lines[comments:])))
        missing = [f.name for f in fields(TokenPrice) if f.name not in (reader.fieldnames or ())]
        if missing:
            raise InputError(f"not a token price file: no column {', '.join(missing)}",
                             where=Location(file=str(path), row=comments + 1, column=missing[0]))
        return cls(_price_from(row, Location(file=str(path), row=n))
                   for n, row in enumerate(reader, start=comments + 2))

    def write_csv(self, path: str | Path) -> Path:
        """Write every row as CSV (whole or not at all)."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(TokenPrice)], lineterminator="\n")
        writer.writeheader()
        for row in self._rows:
            writer.writerow({f.name: "" if getattr(row, f.name) is None else str(getattr(row, f.name))
                             for f in fields(TokenPrice)})
        return write_atomically(Path(path), out.getvalue().encode("utf-8"))

    @classmethod
    def bundled(cls) -> TokenPriceBook:
        """The dated snapshot shipped with the package."""
        resource = resources.files("finops") / "data" / "token_prices" / _BUNDLED
        return cls.read_csv(f"finops/data/token_prices/{_BUNDLED}", resource.read_text(encoding="utf-8"))

    @classmethod
    def current(cls) -> TokenPriceBook:
        """The pulled token prices named by ``FINOPS_TOKEN_PRICES`` if set, else the bundled snapshot."""
        configured = os.environ.get(TOKEN_PRICES_ENV)
        return cls.read_csv(configured) if configured else cls.bundled()
