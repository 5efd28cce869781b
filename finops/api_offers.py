"""Managed API offers a user was quoted: per-token prices and provisioned throughput, read from a CSV file.

Neither Amazon Bedrock nor Vertex AI publishes the price of provisioned throughput for the open models of the
catalog on a public page: Bedrock shows a model unit's hourly price for a base model in its console only
(https://docs.aws.amazon.com/bedrock/latest/userguide/prov-throughput.html: "see the Model providers page in the
Amazon Bedrock console"), and Vertex AI sells generative AI scale units through an order form and its account
teams, publishing the throughput of a unit per model but not its price in a dated, public list. So the bundled token
prices (``finops/data/token_prices/``) hold on-demand prices only, and a quote is given here
(``finops size --api-offers FILE``), beside them.

One row per price, columns (``offer``, ``service``, ``region``, ``currency`` and ``source`` optional)::

    provider,model,kind,price,unit,term_months,tokens_per_unit_s,offer,service,region,currency,source
    aws,llama-3.3-70b,provisioned,21.18,unit-hour,6,1200,llama-3.3-70b 6-month,AmazonBedrock,us-east-1,USD,quote Q-17
    gcp,llama-3.3-70b,on_demand,0.60,M input tokens,,,llama-3.3-70b-maas,Vertex AI,us-central1,USD,negotiated
    gcp,llama-3.3-70b,on_demand,0.70,M output tokens,,,llama-3.3-70b-maas,Vertex AI,us-central1,USD,negotiated

* ``kind`` ``provisioned``: ``price`` per ``unit-hour`` (Bedrock's model unit) or ``unit-month`` (a monthly price,
  / 730 hours), for ``term_months`` whole months, each unit serving ``tokens_per_unit_s`` output tokens a second
  (the provider's figure for the model, or the rate measured on it). Without a price, the published one of the
  provider, model and term (:func:`published_provisioned`: Bedrock's Llama 2, the only ones published) is taken;
* ``kind`` ``on_demand``: ``price`` per ``M`` (million) or ``K`` (thousand) ``input``, ``output`` or
  ``cached input`` tokens; an offer (provider, offer, region) needs an input and an output row.

``model`` is a catalog model (an id, alias or Hugging Face id). A bad value exits 2 naming the file, row and column.

>>> import tempfile
>>> quotes = Path(tempfile.mkdtemp()) / "quotes.csv"
>>> _ = quotes.write_text("provider,model,kind,price,unit,term_months,tokens_per_unit_s\\n"
...                       "aws,qwen3-30b-a3b,provisioned,20,unit-hour,6,1000\\n"
...                       "aws,qwen3-30b-a3b,on_demand,0.1,M input tokens,,\\n"
...                       "aws,qwen3-30b-a3b,on_demand,0.5,M output tokens,,\\n")
>>> offers = read_api_offers(quotes)
>>> [(p.term_months, str(p.hourly_per_unit)) for p in offers.provisioned], [str(p.output_per_mtok) for p in offers.book]
([(6, '20')], ['0.5'])
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError, Location
from .mix._csv import read_table
from .mix.provisioned_throughput import ProvisionedThroughput
from .money import MAX_AMOUNT, MONEY_CONTEXT, to_decimal, to_price
from .sizing.managed import api_options_beside
from .token_prices import TokenPrice, TokenPriceBook

#: The bundled published provisioned-throughput prices (who writes it and how: its header).
_PUBLISHED = "provisioned-throughput-2024-04-22.csv"

if TYPE_CHECKING:
    from .sizing.search import SearchResult
    from .sizing.workload import Workload

__all__ = ["ApiOffers", "PublishedProvisioned", "published_for", "published_provisioned", "read_api_offers",
           "with_api_offers"]

_REQUIRED = ("provider", "model", "kind", "price", "unit")
#: Columns that may be empty on a row (a provisioned row's price: then the published one).
_MAY_BE_EMPTY = ("price",)
_KINDS = ("on_demand", "provisioned")
#: Provisioned unit -> hours its price covers (a month of 730 hours).
_PROVISIONED_UNITS: dict[str, int] = {"unit-hour": 1, "unit-month": 730}
#: On-demand unit (lower case, single spaces) -> (which price, tokens its price covers).
_TOKEN_UNITS: dict[str, tuple[str, int]] = {
    f"{scale} {kind} tokens": (field, tokens)
    for scale, tokens in (("m", 10**6), ("k", 10**3))
    for kind, field in (("input", "input_per_mtok"), ("output", "output_per_mtok"),
                        ("cached input", "cached_input_per_mtok"))}


@dataclass(frozen=True)
class ApiOffers:
    """The quoted offers: per-token prices (``book``) and provisioned throughput."""

    book: TokenPriceBook
    provisioned: tuple[ProvisionedThroughput, ...]


def read_api_offers(path: str | Path) -> ApiOffers:
    """The offers of a CSV file (read strictly: :func:`finops.mix._csv.read_table`); errors name the file, row and
    column."""
    provisioned: list[ProvisionedThroughput] = []
    per_token: dict[tuple[str, str, str, str], dict[str, object]] = {}
    for number, row in read_table(Path(path), "API offers", _REQUIRED):
        _Row(row, str(path), number).read(provisioned, per_token)
    return ApiOffers(TokenPriceBook(_token_price(key, one, str(path)) for key, one in per_token.items()),
                     tuple(provisioned))


@dataclass(frozen=True)
class PublishedProvisioned:
    """A provisioned-throughput price as a provider published it: per model unit-hour for a term; the tokens a second
    a unit serves when published (``None``: not published)."""

    provider: str
    service: str
    offer_model: str
    model: str
    match: str
    region: str
    term_months: int
    price_per_unit_hour: Decimal
    tokens_per_unit_s: float | None
    currency: str
    effective_date: str
    source: str


@cache
def published_provisioned() -> tuple[PublishedProvisioned, ...]:
    """The bundled published prices (``finops/data/token_prices/provisioned-throughput-<date>.csv``).

    >>> sorted({(p.model, p.term_months, str(p.price_per_unit_hour)) for p in published_provisioned()})[:2]
    [('llama-2-13b', 1, '21.18'), ('llama-2-13b', 6, '13.08')]
    """
    name = f"finops/data/token_prices/{_PUBLISHED}"
    text = (resources.files("finops") / "data" / "token_prices" / _PUBLISHED).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    rows = []
    for number, record in enumerate(csv.DictReader(io.StringIO("".join(lines))), start=2):
        def where(column: str, number: int = number) -> Location:
            return Location(file=name, row=number, column=column)

        rate = (record.get("tokens_per_unit_s") or "").strip()
        rows.append(PublishedProvisioned(
            record["provider"], record["service"], record["offer_model"], record["model"], record["match"],
            record["region"], int(record["term_months"]),
            to_decimal(record["price_per_unit_hour"], where=where("price_per_unit_hour")),
            float(rate) if rate else None, record["currency"], record["effective_date"], record["source"]))
    return tuple(rows)


def published_for(model: str, provider: str | None = None, term_months: int | None = None) -> list[PublishedProvisioned]:
    """The published prices of provisioned throughput of catalog ``model`` (a name the catalog resolves), of
    ``provider`` and ``term_months`` when given.

    >>> [(p.term_months, str(p.price_per_unit_hour)) for p in published_for("meta-llama/Llama-2-70b-hf", "aws")]
    [(1, '21.18'), (6, '13.08')]
    """
    from .catalog.models import get_model

    key = get_model(model).id
    return [p for p in published_provisioned() if p.model == key and provider in (None, p.provider)
            and term_months in (None, p.term_months)]


def with_api_offers(result: SearchResult, workload: Workload, offers: ApiOffers) -> SearchResult:
    """``result`` (:func:`finops.sizing.search.search`'s) with its managed APIs priced again with ``offers`` beside
    the current token prices, against the same cheapest fleet (:func:`finops.sizing.managed.api_options_beside`)."""
    import dataclasses

    return dataclasses.replace(result, managed=api_options_beside(
        result.options, workload, book=TokenPriceBook.current() + offers.book, provisioned=offers.provisioned))


@dataclass
class _Row:
    values: Mapping[str, str]
    file: str
    number: int

    def where(self, column: str) -> Location:
        return Location(file=self.file, row=self.number, column=column)

    def text(self, column: str) -> str:
        value = self.values.get(column, "")
        if column in _REQUIRED and column not in _MAY_BE_EMPTY and not value:
            raise InputError(f"{column} is empty", where=self.where(column))
        return value

    def number_of(self, column: str, hint: str) -> Decimal:
        text = self.values.get(column, "")
        if not text:
            raise InputError(f"{column} is empty", where=self.where(column), hint=hint)
        if column == "price":  # the one price check (0 allowed: a free tier)
            return to_price(text, where=self.where(column), zero=True)
        value = to_decimal(text, where=self.where(column))
        if value <= 0:
            raise InputError(f"{column} must be positive, got {text}", where=self.where(column), hint=hint)
        if value >= MAX_AMOUNT:
            raise InputError(f"{column} {text!r} is out of range", where=self.where(column), hint=hint)
        return value

    def model(self) -> str:
        from .catalog.models import get_model

        try:
            return get_model(self.text("model")).id
        except InputError as exc:
            raise InputError(exc.message, where=self.where("model"), hint=exc.hint or "a catalog model, e.g. "
                             "llama-3.3-70b (finops models)") from exc

    def read(self, provisioned: list[ProvisionedThroughput],
             per_token: dict[tuple[str, str, str, str], dict[str, object]]) -> None:
        kind = self.text("kind").lower().replace("-", "_").replace(" ", "_")
        if kind not in _KINDS:
            raise InputError(f"unknown kind {self.values['kind']!r}", where=self.where("kind"),
                             hint="on_demand (a price per token) or provisioned (a price per unit of throughput)")
        provider, model = self.text("provider").lower(), self.model()
        unit = " ".join(self.text("unit").lower().split())
        offer = self.values.get("offer") or f"{provider} {model}"
        currency = (self.values.get("currency") or "USD").upper()
        source = self.values.get("source") or f"{self.file}, row {self.number}"
        region, service = self.values.get("region", ""), self.values.get("service") or provider
        if kind == "provisioned":
            if unit not in _PROVISIONED_UNITS:
                raise InputError(f"unknown unit {self.values['unit']!r} for provisioned throughput",
                                 where=self.where("unit"), hint=f"one of {', '.join(_PROVISIONED_UNITS)}")
            term = self.number_of("term_months", "the commitment in whole months, e.g. 1 or 6")
            if term != term.to_integral_value():
                raise InputError(f"term_months must be whole months, got {term}", where=self.where("term_months"))
            rate = self.number_of("tokens_per_unit_s", "the output tokens a second one unit serves for this model "
                                                       "(the provider states it when the throughput is bought)")
            if self.values.get("price"):
                price = self.number_of("price", "the price per unit-hour or unit-month, e.g. 21.18")
                hourly = MONEY_CONTEXT.divide(price, Decimal(_PROVISIONED_UNITS[unit]))
            else:
                published = published_for(model, provider, int(term))
                if not published or unit != "unit-hour":
                    raise InputError(f"price is empty and no {provider} provisioned throughput of {model} for "
                                     f"{int(term)} months is published", where=self.where("price"),
                                     hint="give the price you were quoted (per unit-hour or unit-month)")
                hourly, currency = published[0].price_per_unit_hour, published[0].currency
                source = f"{published[0].source}; tokens/s per unit: {source}"
                offer = self.values.get("offer") or f"{published[0].offer_model}, {int(term)}-month"
            provisioned.append(ProvisionedThroughput(offer, hourly, int(term), float(rate), currency, model, service,
                                                     region, source))
            return
        price = self.number_of("price", "the price in the row's currency, e.g. 0.72")
        if unit not in _TOKEN_UNITS:
            raise InputError(f"unknown unit {self.values['unit']!r} for an on-demand price", where=self.where("unit"),
                             hint="M or K, then input, output or cached input, then tokens: e.g. M output tokens")
        field, tokens = _TOKEN_UNITS[unit]
        one = per_token.setdefault((provider, offer, region, currency), {"model": model, "service": service,
                                                                         "source": source, "row": self.number})
        if one["model"] != model:
            raise InputError(f"offer {offer!r} serves {one['model']} on row {one['row']}, not {model}",
                             where=self.where("model"), hint="give each model's offer its own name (offer column)")
        if field in one:
            raise InputError(f"offer {offer!r} has its {field.split('_per_')[0]} price twice",
                             where=self.where("unit"))
        one[field] = MONEY_CONTEXT.multiply(price, Decimal(10**6 // tokens))


def _token_price(key: tuple[str, str, str, str], one: Mapping[str, object], file: str) -> TokenPrice:
    provider, offer, region, currency = key
    for field in ("input_per_mtok", "output_per_mtok"):
        if field not in one:
            raise InputError(f"offer {offer!r} has no {field.split('_per_')[0]} price",
                             where=Location(file=file, row=int(str(one["row"])), column="unit"),
                             hint="an on-demand offer needs a row per M input tokens and per M output tokens")
    return TokenPrice(provider, str(one["service"]), offer, str(one["model"]), "same model", region, "on_demand",
                      one["input_per_mtok"], one["output_per_mtok"],  # type: ignore[arg-type]
                      one.get("cached_input_per_mtok"), currency, "", str(one["source"]))  # type: ignore[arg-type]
