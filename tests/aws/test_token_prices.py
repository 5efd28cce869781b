"""Amazon Bedrock's token prices from the Price List API: the real pricing client's get_products, every page of the
three Bedrock service codes, through botocore's Stubber with product documents in the offer file's shape (JSON
strings in PriceList). Expected prices are the documents' per-1K prices x 1,000, worked out by hand."""

from __future__ import annotations

import json
from decimal import Decimal as D

import boto3
import pytest
from botocore.stub import Stubber

from connectors.aws.token_pricing import BEDROCK_SERVICE_CODES, fetch_token_documents, token_price_rows
from finops.errors import InputError


# The products' shape follows Bedrock's Price List as public readers of it show it: the `model` attribute is a
# display name ("Llama 3.3 70B", "Qwen3 Coder 30B A3B", "Llama 3.1 70B Latency Optimized" a separate, dearer
# product), `inferenceType` "Input tokens" / "Output tokens" / "Input tokens flex", `feature` "On-demand Inference" /
# "Batch Inference", `usagetype` "USE1-Llama3-3-70B-input-tokens", newer models priced a second time with
# `service_tier` and a "-mantle-...-standard" usage type, price dimensions per "1K tokens" (a few per "1M tokens")
# described "$0.00008 per 1K input tokens for gpt-oss-20b in Asia Pacific (Mumbai)" (Go, Python and Rust test fixtures
# of AWS Price List readers found with the code index, e.g. github.com/aws-samples/sample-bedrock-model-evaluation's
# README for the API; the Llama prices are those of https://aws.amazon.com/bedrock/pricing/ as captured 2025-07-20 in
# github.com/convo-lang/convo-lang packages/convo-lang-bedrock/bedrock-pricing.md).
def product(sku: str, model: str, kind: str, price: str, *, unit: str = "1K tokens", region: str = "us-east-1",
            feature: str | None = "On-demand Inference", usage: str | None = None, tier: str | None = None) -> str:
    if usage is None:
        prefix = {"us-east-1": "USE1", "us-west-2": "USW2"}[region]
        usage = f"{prefix}-{model.replace(' ', '').replace('.', '-')}-{kind.lower().replace(' ', '-')}"
    attributes = {"servicecode": "AmazonBedrock", "location": "US East (N. Virginia)", "regionCode": region,
                  "usagetype": usage, "model": model, "provider": model.split()[0], "inferenceType": kind,
                  "operation": "Usage"}
    if feature is not None:
        attributes["feature"] = feature
    if tier is not None:
        attributes["service_tier"] = tier
    return json.dumps({
        "product": {"productFamily": "Amazon Bedrock", "sku": sku, "attributes": attributes},
        "serviceCode": "AmazonBedrock", "version": "20261120000000", "publicationDate": "2026-11-20T00:00:00Z",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {
            "offerTermCode": "JRTCKXETXF", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "termAttributes": {},
            "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7", "unit": unit, "beginRange": "0", "endRange": "Inf",
                "appliesTo": [], "description": f"${price} per {unit} {kind.lower()} for {model} in US East",
                "pricePerUnit": {"USD": price}}}}}}})


PAGE_1 = [product("A1", "Llama 3.3 70B", "Input tokens", "0.00072"),
          product("A2", "Llama 3.3 70B", "Output tokens", "0.00072"),
          product("A3", "Llama 3.3 70B", "Input tokens", "0.00036", feature="Batch Inference",
                  usage="USE1-Llama3-3-70B-input-tokens-batch"),
          product("A4", "Llama 3.1 70B", "Input tokens", "0.00072"),
          product("A5", "Llama 3.1 70B", "Output tokens", "0.00072"),
          # a separate, dearer product: not the base model's price
          product("A6", "Llama 3.1 70B Latency Optimized", "Input tokens", "0.0009",
                  usage="USE1-Llama3-1-70B-LatencyOptimized-input-tokens"),
          product("A7", "Llama 3.1 70B Latency Optimized", "Output tokens", "0.0009",
                  usage="USE1-Llama3-1-70B-LatencyOptimized-output-tokens")]
PAGE_2 = [product("B1", "Qwen3 Coder 30B A3B", "Input tokens", "0.00015", region="us-west-2"),
          product("B2", "Qwen3 Coder 30B A3B", "Output tokens", "0.0006", region="us-west-2"),
          product("B3", "Nova Pro", "Input tokens", "0.0008"),  # not an open model of the catalog
          product("B4", "Qwen3 Coder 30B A3B", "Cache read input tokens", "0.015", unit="1M tokens",
                  region="us-west-2", usage="USW2-Qwen3-Coder-30B-A3B-cache-read-input-token-count"),
          # the flex and priority tiers and the mantle convention's batch tier are other offers
          product("B5", "Qwen3 Coder 30B A3B", "Input tokens flex", "0.000075", region="us-west-2"),
          product("B6", "Qwen3 Coder 30B A3B", "Output tokens priority", "0.00105", region="us-west-2"),
          product("B7", "Qwen3 Coder 30B A3B", "input tokens batch", "0.000075", region="us-west-2", feature=None,
                  tier="batch", usage="USW2-qwen.qwen3-coder-30b-a3b-v1:0-mantle-input-tokens-batch"),
          # the mantle convention's standard tier repeats the standard price
          product("B8", "Qwen3 Coder 30B A3B", "Output tokens", "0.0006", region="us-west-2", feature=None,
                  tier="standard", usage="USW2-qwen.qwen3-coder-30b-a3b-v1:0-mantle-output-tokens-standard"),
          # cross-region (global) routing is priced apart
          product("B9", "Qwen3 Coder 30B A3B", "Output tokens", "0.00055", region="us-west-2",
                  usage="USW2-Qwen3-Coder-30B-A3B-output-tokens-cross-region-global")]


def stubbed(pages_by_code: dict[str, list[list[str]]]) -> tuple[object, Stubber]:
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="AKIAEXAMPLE",
                          aws_secret_access_key="example")
    stubber = Stubber(client)
    for code in BEDROCK_SERVICE_CODES:
        pages = pages_by_code.get(code, [[]])
        for i, page in enumerate(pages):
            response = {"FormatVersion": "aws_v1", "PriceList": page}
            params = {"ServiceCode": code, "Filters": [], "FormatVersion": "aws_v1"}
            if i + 1 < len(pages):
                response["NextToken"] = f"{code}-{i + 1}"
            if i:
                params["NextToken"] = f"{code}-{i}"
            stubber.add_response("get_products", response, params)
    stubber.activate()
    return client, stubber


def test_every_page_of_every_bedrock_service_code_is_read_and_priced_per_million():
    client, stubber = stubbed({"AmazonBedrock": [PAGE_1, PAGE_2]})
    documents = fetch_token_documents(client)
    stubber.assert_no_pending_responses()
    rows = {(r.offer_model, r.region): r for r in token_price_rows(documents, as_of="2026-12-07", source="Price List")}
    assert set(rows) == {("meta.llama3-3-70b-instruct-v1:0", "us-east-1"), ("meta.llama3-1-70b-instruct-v1:0", "us-east-1"),
                         ("qwen.qwen3-coder-30b-a3b-v1:0", "us-west-2")}
    llama, qwen = rows[("meta.llama3-3-70b-instruct-v1:0", "us-east-1")], rows[("qwen.qwen3-coder-30b-a3b-v1:0", "us-west-2")]
    assert (llama.model, llama.input_per_mtok, llama.output_per_mtok) == ("llama-3.3-70b", D("0.72"), D("0.72"))
    assert (qwen.model, qwen.input_per_mtok, qwen.output_per_mtok, qwen.cached_input_per_mtok) == \
        ("qwen3-30b-a3b", D("0.15"), D("0.6"), D("0.015"))
    assert "SKUs A1, A2" in llama.source  # the batch price is another offer
    base = rows[("meta.llama3-1-70b-instruct-v1:0", "us-east-1")]
    assert (base.input_per_mtok, base.output_per_mtok) == (D("0.72"), D("0.72"))  # not latency-optimized 0.90
    assert qwen.source.endswith("SKUs B1, B2, B4, B8")


def test_a_price_in_an_unknown_unit_is_refused():
    documents = [json.loads(product("C1", "Llama 3.3 70B", "Input tokens", "0.72", unit="Images"))]
    with pytest.raises(InputError, match="SKU C1: price per 'images'"):
        token_price_rows(documents, as_of="2026-12-07", source="x")
