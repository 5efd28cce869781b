"""Amazon Bedrock's per-token prices: Price List product documents -> token price rows.

The Pricing API's ``get_products`` (the same call and document shape as :mod:`connectors.aws.pricing`) lists
Bedrock's prices under three service codes: ``AmazonBedrock`` (models AWS serves itself: Llama, Mistral, Qwen,
DeepSeek, gpt-oss), ``AmazonBedrockService`` and ``AmazonBedrockFoundationModels`` (models sold through the
marketplace). A product's ``attributes`` name the model (``model``: a display name such as ``Llama 3.3 70B``,
``Qwen3 Coder 30B A3B``, ``R1`` or ``gpt-oss-120b``; ``Llama 3.1 70B Latency Optimized`` is another, dearer
product), the region (``regionCode``), what is counted (``inferenceType`` such as ``Input tokens``, ``Output tokens``,
``Input tokens flex``, else the ``usagetype``, e.g. ``USE1-Llama3-3-70B-input-tokens``) and the offer (``feature``:
``On-demand Inference``, ``Batch Inference``, ``Model Customization``, ...; newer models publish each rate a second
time with ``service_tier`` ``standard``/``flex``/``priority``/``batch`` and a usage type
``USE1-qwen.qwen3-32b-mantle-input-tokens-standard``). Only the standard on-demand tier of the regional endpoint
counts: batch, flex and priority tiers, provisioned throughput, customization, cross-region (``-cross-region-global``)
meters and cache writes are other offers. The ``terms.OnDemand`` price dimension holds the price per ``unit``
(``1K tokens`` for most, ``1M tokens`` for some, ``Tokens``).

Per million tokens = price per unit x 10^6 / tokens per unit. The input, output and cached-input prices of one model
in one region make one :class:`~finops.token_prices.TokenPrice`; a model that is not in :data:`BEDROCK_MODELS` (the
table from the names Bedrock's price list uses to its model ids and catalog models) is not an open model of the catalog
and is skipped.

Source: AWS Price List API, "Price List file schema"
(https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html); Amazon Bedrock pricing
(https://aws.amazon.com/bedrock/pricing/).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from finops.errors import InputError
from finops.money import to_decimal
from finops.registry import normalize_key
from finops.token_prices import TokenPrice, per_million_tokens, token_prices_of

from .pricing import product_documents

__all__ = ["BEDROCK_MODELS", "BEDROCK_SERVICE_CODES", "fetch_token_documents", "token_price_rows"]

#: The Price List service codes that hold Bedrock's prices.
BEDROCK_SERVICE_CODES: tuple[str, ...] = ("AmazonBedrock", "AmazonBedrockService", "AmazonBedrockFoundationModels")

#: The ``model`` attribute of Bedrock's price list (normalized: lower case, spaces) -> (its Bedrock model id, the
#: catalog model it serves, how close the match is). The names are those of the Price List's us-east-1 products
#: (``Llama 3.3 70B``, ``Qwen3 Coder 30B A3B``, ``R1``, ``Mixtral 8x7B``). Add a row with all three names.
BEDROCK_MODELS: dict[str, tuple[str, str, str]] = {
    "llama 3.3 70b": ("meta.llama3-3-70b-instruct-v1:0", "llama-3.3-70b", "same model"),
    "llama 3.1 70b": ("meta.llama3-1-70b-instruct-v1:0", "llama-3.1-70b", "same model"),
    "llama 3.1 8b": ("meta.llama3-1-8b-instruct-v1:0", "llama-3.1-8b", "same model"),
    "llama 3.1 405b": ("meta.llama3-1-405b-instruct-v1:0", "llama-3.1-405b", "same model"),
    "mistral 7b": ("mistral.mistral-7b-instruct-v0:2", "mistral-7b", "same architecture (Instruct v0.2)"),
    "mixtral 8x7b": ("mistral.mixtral-8x7b-instruct-v0:1", "mixtral-8x7b", "same model"),
    "qwen3 32b": ("qwen.qwen3-32b-v1:0", "qwen3-32b", "same model"),
    "qwen3 coder 30b a3b": ("qwen.qwen3-coder-30b-a3b-v1:0", "qwen3-30b-a3b", "same architecture (Coder fine-tune)"),
    "qwen3 235b a22b 2507": ("qwen.qwen3-235b-a22b-2507-v1:0", "qwen3-235b-a22b", "same model"),
    "r1": ("deepseek.r1-v1:0", "deepseek-v3", "same architecture (R1 reasoning model)"),
    "deepseek v3.1": ("deepseek.v3-v1:0", "deepseek-v3", "same architecture (V3.1)"),
}
#: The attributes that name the offer and tier (``service_tier`` and ``serviceTier`` are both seen).
_OFFER_ATTRIBUTES = ("feature", "usagetype", "inferenceType", "service_tier", "serviceTier")
#: ``unit`` of a price dimension (lower case) -> tokens it counts.
_TOKENS_PER_UNIT: dict[str, Decimal] = {"tokens": Decimal(1), "1k tokens": Decimal(1000), "1m tokens": Decimal(10**6),
                                        "1000 tokens": Decimal(1000), "1,000 tokens": Decimal(1000)}
#: Words of the inference type or usage type (lower case) -> the price's column, tried in this order.
_KINDS = (("cache", "cached_input_per_mtok"), ("output", "output_per_mtok"), ("input", "input_per_mtok"))
#: Offers other than on-demand inference, by a word of ``feature`` or ``usagetype`` (lower case).
_OTHER_OFFERS = ("batch", "provisioned", "custom", "training", "storage", "latency", "flex", "priority",
                 "cross-region", "cache-write", "cache write", "reserved")


def _name(text: str) -> str:
    return " ".join(normalize_key(text).replace("-", " ").replace("_", " ").split())


def _per_million(dimension: Mapping[str, Any], where: str) -> tuple[Decimal, str]:
    (currency, amount), = dimension["pricePerUnit"].items()
    unit = str(dimension.get("unit", "")).strip().lower()
    tokens = _TOKENS_PER_UNIT.get(unit)
    if tokens is None:
        raise InputError(f"{where}: price per {unit!r}, not per tokens", hint="expected Tokens, 1K tokens or 1M tokens")
    return per_million_tokens(to_decimal(amount), tokens), currency


def token_price_rows(documents: Iterable[Mapping[str, Any]], *, as_of: str, source: str) -> list[TokenPrice]:
    """Token prices of the catalog's open models (:data:`BEDROCK_MODELS`) from Bedrock product documents.

    >>> doc = lambda kind, price: {"product": {"sku": kind, "attributes": {"model": "Llama 3.3 70B",
    ...     "regionCode": "us-east-1", "inferenceType": f"{kind} tokens", "feature": "On-demand Inference"}},
    ...     "terms": {"OnDemand": {"t": {"priceDimensions": {"d": {"unit": "1K tokens", "pricePerUnit": {"USD": price}}}}}}}
    >>> row, = token_price_rows([doc("Input", "0.00072"), doc("Output", "0.00072")], as_of="2026-12-07", source="x")
    >>> row.model, row.input_per_mtok, row.output_per_mtok
    ('llama-3.3-70b', Decimal('0.72'), Decimal('0.72'))
    """
    prices: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for doc in documents:
        attributes = doc.get("product", {}).get("attributes", {})
        offer = " ".join(str(attributes.get(key, "")) for key in _OFFER_ATTRIBUTES).lower()
        known = BEDROCK_MODELS.get(_name(str(attributes.get("model", ""))))
        if known is None or any(word in offer for word in _OTHER_OFFERS):
            continue
        model_id = known[0]
        counted = f"{attributes.get('inferenceType', '')} {attributes.get('usagetype', '')}".lower()
        column = next((c for word, c in _KINDS if word in counted), None)
        region = attributes.get("regionCode", "")
        if column is None or not region:
            continue
        sku = doc.get("product", {}).get("sku", "?")
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                amount, currency = _per_million(dimension, f"SKU {sku}")
                one = prices[(model_id, region)]
                one[column], one["currency"] = amount, currency
                if sku not in one.setdefault("skus", []):
                    one["skus"].append(sku)
    return token_prices_of(prices, provider="aws", service="AmazonBedrock", as_of=as_of, source=source,
                           models={model_id: (model, match) for model_id, model, match in BEDROCK_MODELS.values()})


def fetch_token_documents(client: Any, regions: Iterable[str] | None = None) -> list[Mapping[str, Any]]:
    """Every product document of the Bedrock service codes (in ``regions`` when given), all pages read before
    returning, so a failure returns nothing."""
    from .session import pages

    documents: list[Mapping[str, Any]] = []
    for code in BEDROCK_SERVICE_CODES:
        for region in list(regions or [None]):
            filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}] if region else []
            for page in pages(client, "pricing", "get_products", ServiceCode=code, Filters=filters,
                              FormatVersion="aws_v1"):
                documents.extend(product_documents(page.get("PriceList", [])))
    return documents
