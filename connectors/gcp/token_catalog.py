"""Vertex AI's per-token prices: Cloud Billing Catalog SKUs of service ``C7E2-9256-1C43`` -> token price rows.

The Vertex AI service of the Cloud Billing Catalog lists one SKU per model, region and what it counts; the managed
open models' SKUs name the model and the tokens in their ``description`` (``Llama 3.3 70B Instruct API Input
Tokens``, ``DeepSeek R1 0528 API Output Tokens``). Each SKU's ``pricingInfo[0].pricingExpression`` prices one
``usageUnit`` (``count``: one token; ``k{count}`` or a ``baseUnitConversionFactor`` of 1000: a thousand) at its
first non-zero tiered rate (``unitPrice`` = ``units`` + ``nanos`` / 10^9); per million tokens = that price x 10^6 /
tokens per usage unit. The SKU's first ``serviceRegions`` entry is its region.

An SKU whose description names no model of :data:`VERTEX_MODELS` (the table from the names in Vertex AI's SKUs to its
model ids and catalog models) is skipped: the catalog has Gemini and partner models too. The descriptions' wording
is not confirmed against a published SKU listing; the bundled snapshot has no Vertex AI row for that reason.

Source: Cloud Billing Catalog API, ``services.skus.list``
(https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list); Vertex AI pricing
(https://cloud.google.com/vertex-ai/generative-ai/pricing).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from finops.token_prices import TokenPrice, per_million_tokens, token_prices_of

__all__ = ["VERTEX_AI_SERVICE", "VERTEX_MODELS", "fetch_token_skus", "token_price_rows"]

#: The Cloud Billing Catalog's Vertex AI service.
VERTEX_AI_SERVICE = "services/C7E2-9256-1C43"

#: A model's name in Vertex AI's SKU descriptions (lower case), its Vertex AI model id, the catalog model it serves
#: and how close the match is, one row a model.
_VERTEX_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("llama 3.3 70b", "meta/llama-3.3-70b-instruct-maas", "llama-3.3-70b", "same model"),
    ("llama 3.1 405b", "meta/llama-3.1-405b-instruct-maas", "llama-3.1-405b", "same model"),
    ("deepseek v3.1", "deepseek-ai/deepseek-v3.1-maas", "deepseek-v3", "same architecture (V3.1)"),
    ("deepseek r1 0528", "deepseek-ai/deepseek-r1-0528-maas", "deepseek-v3", "same architecture (R1 reasoning model)"),
    ("qwen3 235b", "qwen/qwen3-235b-a22b-instruct-2507-maas", "qwen3-235b-a22b", "same model"),
)
#: The name in the SKU descriptions -> (model id, catalog model, match). Longer names are tried first.
VERTEX_MODELS: dict[str, tuple[str, str, str]] = {name: (model_id, model, match)
                                                  for name, model_id, model, match in _VERTEX_ROWS}
_KINDS = (("cache", "cached_input_per_mtok"), ("output", "output_per_mtok"), ("input", "input_per_mtok"))
#: usage unit -> tokens it counts, when the SKU gives no conversion factor.
_UNITS = {"count": Decimal(1), "k{count}": Decimal(1000), "m{count}": Decimal(10**6)}
_SPACES = re.compile(r"[\s_]+")


def _model_id(description: str) -> str | None:
    text = _SPACES.sub(" ", description.lower().replace("-", " "))
    for name in sorted(VERTEX_MODELS, key=len, reverse=True):
        if _SPACES.sub(" ", name.replace("-", " ")) in text:
            return VERTEX_MODELS[name][0]
    return None


def _per_million(sku: Mapping[str, Any]) -> tuple[Decimal, str] | None:
    info = (sku.get("pricingInfo") or [{}])[0]
    expression = info.get("pricingExpression") or {}
    rates = [r for r in expression.get("tieredRates", []) if r.get("unitPrice")]
    prices = [Decimal(int(r["unitPrice"].get("units") or 0)) + Decimal(int(r["unitPrice"].get("nanos") or 0)) / 10**9
              for r in rates]
    price = next((p for p in prices if p > 0), None)
    if price is None:
        return None
    factor = expression.get("baseUnitConversionFactor")
    if expression.get("baseUnit") == "count" and factor:
        tokens = Decimal(str(factor))
    else:
        tokens = _UNITS.get(str(expression.get("usageUnit", "")).lower(), Decimal(0))
    if tokens <= 0:
        return None
    currency = rates[0]["unitPrice"].get("currencyCode", "USD")
    return per_million_tokens(price, tokens), currency


def token_price_rows(skus: Iterable[Mapping[str, Any]], *, as_of: str, source: str) -> list[TokenPrice]:
    """Token prices of the catalog's open models from Vertex AI SKUs (REST JSON shape).

    >>> sku = lambda what, nanos: {"skuId": what, "description": f"Llama 3.3 70B Instruct API {what} Tokens",
    ...     "serviceRegions": ["us-central1"], "pricingInfo": [{"pricingExpression": {"usageUnit": "count",
    ...     "baseUnit": "count", "baseUnitConversionFactor": 1, "tieredRates": [{"startUsageAmount": 0,
    ...     "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": nanos}}]}}]}
    >>> row, = token_price_rows([sku("Input", 720), sku("Output", 720)], as_of="2026-12-07", source="x")
    >>> row.offer_model, row.input_per_mtok, row.output_per_mtok
    ('meta/llama-3.3-70b-instruct-maas', Decimal('0.72'), Decimal('0.72'))
    """
    prices: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for sku in skus:
        description = str(sku.get("description", ""))
        model_id = _model_id(description)
        lowered = description.lower()
        column = next((c for word, c in _KINDS if word in lowered), None)
        regions = sku.get("serviceRegions") or []
        priced = _per_million(sku) if model_id and column and "token" in lowered and regions else None
        if priced is None:
            continue
        one = prices[(str(model_id), regions[0])]
        one[column], one["currency"] = priced
        one.setdefault("skus", []).append(str(sku.get("skuId", "?")))
    return token_prices_of(prices, provider="gcp", service="Vertex AI", as_of=as_of, source=source,
                           models={model_id: (model, match) for model_id, model, match in VERTEX_MODELS.values()})


def fetch_token_skus(client: Any, settings: Any, currency: str = "USD") -> list[dict[str, Any]]:
    """The token SKUs of the Vertex AI service (every page read before returning)."""
    from .catalog import iter_skus

    return list(iter_skus(client, VERTEX_AI_SERVICE, settings, currency,
                          keep=lambda description, _group: "token" in description.lower()))
