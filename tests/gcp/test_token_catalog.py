"""Vertex AI's token prices from the Cloud Billing Catalog: the real CloudCatalogClient (REST) against a local
server speaking the catalog's responses, service C7E2-9256-1C43 paged two SKUs at a time. Expected prices are the
SKUs' unit prices x 10^6 / tokens per unit, worked out by hand."""

from __future__ import annotations

from decimal import Decimal as D

from connectors.gcp.catalog import RetrySettings, make_client
from connectors.gcp.token_catalog import VERTEX_AI_SERVICE, fetch_token_skus, token_price_rows

from .catalog_server import CatalogServer, CatalogState

FAST = RetrySettings(initial=0.01, maximum=0.05, timeout=5.0)


# The SKU's fields (name, skuId, description, category.serviceDisplayName / resourceFamily / resourceGroup /
# usageType, serviceRegions, pricingInfo[].pricingExpression with usageUnit, baseUnit, baseUnitConversionFactor,
# displayQuantity and tieredRates[].unitPrice {currencyCode, units, nanos}) are those of the Cloud Billing Catalog
# API's Sku resource (https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list). The managed open
# models' description wording ("... API Input Tokens") and category values are not confirmed against a published
# listing of Vertex AI's SKUs; the parser reads only the model name and "input"/"output"/"cache" and "token" in it.
def sku(sku_id: str, description: str, units: str, nanos: int, *, factor: int = 1, unit: str = "count",
        region: str = "us-central1") -> dict:
    return {"name": f"{VERTEX_AI_SERVICE}/skus/{sku_id}", "skuId": sku_id, "description": description,
            "category": {"serviceDisplayName": "Vertex AI", "resourceFamily": "ApplicationServices",
                         "resourceGroup": "Maas", "usageType": "OnDemand"},
            "serviceRegions": [region], "serviceProviderName": "Google",
            "pricingInfo": [{"effectiveTime": "2026-11-20T00:00:00Z", "pricingExpression": {
                "usageUnit": unit, "usageUnitDescription": "count", "baseUnit": "count",
                "baseUnitDescription": "count", "baseUnitConversionFactor": factor, "displayQuantity": 1,
                "tieredRates": [{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": "0",
                                                                      "nanos": 0}},
                                {"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": units,
                                                                      "nanos": nanos}}]},
                "currencyConversionRate": 1}]}


SKUS = [sku("0A1", "Llama 3.3 70B Instruct API Input Tokens", "0", 720),
        sku("0A2", "Llama 3.3 70B Instruct API Output Tokens", "0", 720),
        sku("0B1", "DeepSeek R1 0528 API Input Tokens", "0", 1_350_000, factor=1000, unit="k{count}"),
        sku("0B2", "DeepSeek R1 0528 API Output Tokens", "0", 5_400_000, factor=1000, unit="k{count}"),
        sku("0C1", "Gemini 2.5 Flash Input Tokens", "0", 300),  # not an open model of the catalog
        {**sku("0D1", "Vertex AI Online Prediction n1-standard-4", "0", 200_000_000), "serviceRegions": ["us-east1"]}]


def test_the_vertex_ai_service_skus_give_per_million_token_prices_through_the_rest_client():
    catalog = CatalogState(services=[{"name": VERTEX_AI_SERVICE, "serviceId": "C7E2-9256-1C43",
                                      "displayName": "Vertex AI", "businessEntityName": "businessEntities/GCP"}],
                           skus={VERTEX_AI_SERVICE: SKUS}, page_size=2)
    with CatalogServer(catalog) as endpoint:
        skus = fetch_token_skus(make_client(endpoint), FAST)
    tokens = [q.get("pageToken", [""])[0] for path, q in catalog.requests if path.endswith("/skus")]
    assert tokens == ["", "page-2", "page-4"]
    assert len(skus) == 5  # the prediction node hour is not a token SKU
    rows = {r.offer_model: r for r in token_price_rows(skus, as_of="2026-12-07", source="Cloud Billing Catalog")}
    assert set(rows) == {"meta/llama-3.3-70b-instruct-maas", "deepseek-ai/deepseek-r1-0528-maas"}
    llama, r1 = rows["meta/llama-3.3-70b-instruct-maas"], rows["deepseek-ai/deepseek-r1-0528-maas"]
    assert (llama.model, llama.region, llama.input_per_mtok, llama.output_per_mtok) == \
        ("llama-3.3-70b", "us-central1", D("0.72"), D("0.72"))
    # 0.00135 USD per thousand tokens: 1.35 per million; 0.0054: 5.40
    assert (r1.model, r1.input_per_mtok, r1.output_per_mtok) == ("deepseek-v3", D("1.35"), D("5.4"))


def test_pull_tokens_writes_a_token_price_file_that_size_then_reads(tmp_path, monkeypatch, capsys):
    import json

    from connectors.gcp.catalog import CATALOG_ENDPOINT_ENV
    from finops.cli import main
    from finops.token_prices import TOKEN_PRICES_ENV

    catalog = CatalogState(services=[{"name": VERTEX_AI_SERVICE, "serviceId": "C7E2-9256-1C43",
                                      "displayName": "Vertex AI"}], skus={VERTEX_AI_SERVICE: SKUS}, page_size=2)
    out = tmp_path / "tokens.csv"
    with CatalogServer(catalog) as endpoint:
        monkeypatch.setenv(CATALOG_ENDPOINT_ENV, endpoint)
        assert main(["prices", "pull-tokens", "--provider", "gcp", "--out", str(out)]) == 0
    capsys.readouterr()
    monkeypatch.setenv(TOKEN_PRICES_ENV, str(out))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"name": "chat", "model": "llama-3.3-70b", "isl": 1000, "osl": 250,
                                    "concurrency": 20, "ttft_ms": 2000}))
    assert main(["size", "--workload", str(workload), "--top", "1", "--json"]) == 0
    managed = json.loads(capsys.readouterr().out)["managed_apis"]
    # only the pulled file's rows: Vertex AI's Llama 3.3 70B, 0.72 x 1000 / 250 + 0.72 per million output tokens
    assert [(m["service"], D(str(m["cost_per_million_output_tokens"]))) for m in managed] == [("Vertex AI", D("3.6"))]
