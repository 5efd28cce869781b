"""GCP connector figures: composition accuracy against the dump snapshot, and pull speed.

Run: ``python benchmarks/gcp_prices.py``. It starts the local Cloud Billing Catalog server of the tests
(no network), pulls through the real REST client, and prints

1. every us-central1 machine price (on-demand, spot, 1- and 3-year commitment) composed from the component
   SKUs of ``tests/gcp/fixtures/catalog_us_central1.json`` next to the bundled 2026-07-30 snapshot, with
   the relative difference (on-demand component rates are published ones; spot and commitment rates are
   derived from the dump's series ratios, see ``tests/gcp/fixtures/SOURCES.md``);
2. the time to page through a synthetic catalog of N SKUs (5,000 per page, as the connector asks).
"""

from __future__ import annotations

import copy
import json
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from connectors.gcp import pull_prices
from connectors.gcp.catalog import RetrySettings, make_client
from connectors.gcp.snapshot import snapshot
from finops.errors import InputError
from tests.gcp.catalog_server import CatalogServer, CatalogState

FIXTURE = json.loads((ROOT / "tests/gcp/fixtures/catalog_us_central1.json").read_text())
FAST = RetrySettings(initial=0.01, maximum=0.05, timeout=5.0)
MODELS = ("on_demand", "spot", "cud_1y", "cud_3y")


def accuracy() -> None:
    state = CatalogState(services=FIXTURE["services"], skus=copy.deepcopy(FIXTURE["skus"]), page_size=1000)
    with CatalogServer(state) as endpoint:
        book = pull_prices(client=make_client(endpoint), regions=["us-central1"], retry=FAST)
    dump = snapshot()
    print("machine              model        composed     snapshot     diff")
    worst = Decimal(0)
    for row in sorted(book, key=lambda r: (r.instance_type, MODELS.index(r.pricing_model))):
        try:
            reference = dump.lookup("gcp", row.instance_type, row.pricing_model, "us-central1").hourly_cost
        except InputError:
            print(f"{row.instance_type:<20} {row.pricing_model:<10} {row.hourly_cost:>10.4f}   (not in the dump)")
            continue
        diff = (row.hourly_cost - reference) / reference * 100
        worst = max(worst, abs(diff))
        print(f"{row.instance_type:<20} {row.pricing_model:<10} {row.hourly_cost:>10.4f}   {reference:>10.4f}   "
              f"{diff:+6.2f} %")
    print(f"largest |diff|: {worst:.3f} % (goal < 1 %)")


def speed(total: int = 20_000) -> None:
    templates = FIXTURE["skus"]["services/6F81-5844-456A"]
    skus = []
    for i in range(total):  # the fixture's SKUs again and again, spread over 100 synthetic regions
        sku = copy.deepcopy(templates[i % len(templates)])
        sku["skuId"] = f"BENCH-{i:06d}"
        sku["serviceRegions"] = [f"bench-region-{(i // len(templates)) % 100}"]
        skus.append(sku)
    state = CatalogState(services=FIXTURE["services"], page_size=5000,
                         skus={"services/6F81-5844-456A": skus, "services/E000-3F24-B8AA": []})
    with CatalogServer(state) as endpoint:
        started = time.perf_counter()
        book = pull_prices(client=make_client(endpoint), retry=FAST)
        elapsed = time.perf_counter() - started
    pages = sum(1 for path, _ in state.requests if path.endswith("/skus"))
    print(f"{total} SKUs in {pages} pages -> {len(book)} price rows in {elapsed:.2f} s "
          f"({total / elapsed:,.0f} SKUs/s)")


if __name__ == "__main__":
    accuracy()
    speed()
