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


def product(sku: str, model: str, kind: str, price: str, *, unit: str = "1K tokens", region: str = "us-east-1",
            feature: str = "On-demand Inference") -> str:
    usage = f"USE1-{model.replace(' ', '')}-{kind.split()[0].lower()}-tokens"
    return json.dumps({
        "product": {"productFamily": "Amazon Bedrock", "sku": sku, "attributes": {
            "servicecode": "AmazonBedrock", "location": "US East (N. Virginia)", "regionCode": region,
            "usagetype": usage, "model": model, "provider": model.split()[0], "inferenceType": kind,
            "feature": feature}},
        "serviceCode": "AmazonBedrock", "publicationDate": "2026-11-20T00:00:00Z",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {"offerTermCode": "JRTCKXETXF", "sku": sku,
                                                      "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                                          "unit": unit, "description": f"{model} {kind}",
                                                          "pricePerUnit": {"USD": price}}}}}}})


PAGE_1 = [product("A1", "Llama 3.3 70B Instruct", "Input tokens", "0.00072"),
          product("A2", "Llama 3.3 70B Instruct", "Output tokens", "0.00072"),
          product("A3", "Llama 3.3 70B Instruct", "Input tokens", "0.00036", feature="Batch Inference")]
PAGE_2 = [product("B1", "Qwen3 Coder 30B A3B", "Input tokens", "0.00015", region="us-west-2"),
          product("B2", "Qwen3 Coder 30B A3B", "Output tokens", "0.0006", region="us-west-2"),
          product("B3", "Titan Text Express", "Input tokens", "0.0002"),  # not an open model of the catalog
          product("B4", "Qwen3 Coder 30B A3B", "Cache read input tokens", "0.015", unit="1M tokens",
                  region="us-west-2")]


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
    assert set(rows) == {("meta.llama3-3-70b-instruct-v1:0", "us-east-1"), ("qwen.qwen3-coder-30b-a3b-v1:0", "us-west-2")}
    llama, qwen = rows[("meta.llama3-3-70b-instruct-v1:0", "us-east-1")], rows[("qwen.qwen3-coder-30b-a3b-v1:0", "us-west-2")]
    assert (llama.model, llama.input_per_mtok, llama.output_per_mtok) == ("llama-3.3-70b", D("0.72"), D("0.72"))
    assert (qwen.model, qwen.input_per_mtok, qwen.output_per_mtok, qwen.cached_input_per_mtok) == \
        ("qwen3-30b-a3b", D("0.15"), D("0.6"), D("0.015"))
    assert "SKUs A1, A2" in llama.source  # the batch price is another offer


def test_a_price_in_an_unknown_unit_is_refused():
    documents = [json.loads(product("C1", "Llama 3.3 70B Instruct", "Input tokens", "0.72", unit="Images"))]
    with pytest.raises(InputError, match="SKU C1: price per 'images'"):
        token_price_rows(documents, as_of="2026-12-07", source="x")
