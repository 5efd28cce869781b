"""The real CloudCatalogClient (REST transport) against a local Cloud Billing Catalog server.

Cross-check: machine prices composed from us-central1 component SKUs (prices cited in the fixture)
agree with the bundled snapshot derived from the dated pricing dump.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest

from connectors import gcp
from connectors.gcp.catalog import CATALOG_ENDPOINT_ENV, RETRY_TIMEOUT_ENV, RetrySettings, make_client
from connectors.gcp.skus import money
from connectors.gcp.snapshot import snapshot
from finops.cli import main
from finops.errors import ProviderError, TransientProviderError

from .catalog_server import CatalogServer, CatalogState

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "catalog_us_central1.json").read_text())
FAST = RetrySettings(initial=0.01, maximum=0.05, timeout=5.0)


def state(**overrides: object) -> CatalogState:
    base = CatalogState(services=copy.deepcopy(FIXTURE["services"]), skus=copy.deepcopy(FIXTURE["skus"]))
    for key, value in overrides.items():
        setattr(base, key, value)
    return base


def pull(catalog: CatalogState, retry: RetrySettings = FAST, **kwargs: object):
    with CatalogServer(catalog) as endpoint:
        return gcp.pull_prices(client=make_client(endpoint), retry=retry, **kwargs)  # machines: the instance catalog


@pytest.fixture(scope="module")
def pulled():
    return pull(state(), regions=["us-central1"])


#: The four machine types the issue names and the whole-GPU G4 shapes, under every pricing model. On-demand
#: component rates are GCP's published ones (G4's commitment rates too); the other spot and commitment rates
#: are on-demand x the dump's series ratio (SOURCES.md), so for those the check is that the spot/commitment
#: SKUs are read and composed, not the prices' source. a2-ultragpu has no commitment price in the dump:
#: checked below instead.
G4_MACHINES = ("g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384")
CROSS_CHECKED = [(machine, model)
                 for machine in ("a2-highgpu-1g", "a2-ultragpu-1g", "g2-standard-4", "g2-standard-8", "a3-highgpu-8g",
                                 *G4_MACHINES)
                 for model in ("on_demand", "spot", "cud_1y", "cud_3y") if (machine, model[:3]) != ("a2-ultragpu-1g", "cud")]


@pytest.mark.parametrize("machine, model", CROSS_CHECKED)
def test_composed_prices_agree_with_the_dump_snapshot(pulled, machine, model):
    composed = pulled.lookup("gcp", machine, model, "us-central1").hourly_cost
    dumped = snapshot().lookup("gcp", machine, model, "us-central1").hourly_cost
    assert abs(composed - dumped) / dumped < Decimal("0.01"), (composed, dumped)


@pytest.mark.parametrize("model, payment", [("on_demand", ""), ("spot", ""), ("cud_1y", "no_upfront"),
                                            ("cud_3y", "no_upfront")])
def test_the_named_machines_get_every_pricing_model(pulled, model, payment):
    for machine in ("a3-highgpu-8g", "a2-highgpu-1g", "a2-ultragpu-1g", "g2-standard-4"):
        row = pulled.lookup("gcp", machine, model, "us-central1")
        assert (row.payment_option, row.upfront_cost, row.currency) == (payment, 0, "USD")


def test_a2_ultra_commitment_is_the_sum_of_its_commitment_skus(pulled):
    # 1 A100 80GB + 12 A2 vCPUs + 170 GiB A2 RAM + 375 GiB Local SSD, each at its Commit1Yr SKU (fixture)
    expected = (Decimal("2.474663121") + 12 * Decimal("0.019914710") + 170 * Decimal("0.002669281")
                + 375 * Decimal("0.055494336") / 730).quantize(Decimal("1E-9"))
    assert pulled.lookup("gcp", "a2-ultragpu-1g", "cud_1y", "us-central1").hourly_cost == expected


def rate(description: str, usage_type: str = "OnDemand") -> Decimal:
    sku, = (sku for sku in FIXTURE["skus"]["services/6F81-5844-456A"]
            if sku["description"] == description and sku["category"]["usageType"] == usage_type)
    return money(sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"])


#: a3-highgpu-8g host (208 A3 vCPU + 1,872 GiB A3 RAM, no GPU, no local SSD) in us-central1, USD/h, as
#: SkyPilot's catalog composes it from the Cloud Billing Catalog's A3 Instance Core/Ram SKUs (SOURCES.md)
SKYPILOT_A3_HIGHGPU_8G_HOST = Decimal("9.46006")


def test_the_fixtures_a3_rates_give_the_published_host_price_and_the_dumps_a3_price():
    # two independent public sources: the per-vCPU / per-GiB SKU rates in the fixture compose the host
    # price SkyPilot publishes (to its 5 decimals), and with 8 H100 SKU-hours and the bundled 16 x 375 GiB
    # Local SSD at 0.08 per GiB-month they give the dump's a3-highgpu-8g on-demand price to the nano
    host = (208 * rate("A3 Instance Core running in Americas")
            + 1872 * rate("A3 Instance Ram running in Americas"))
    assert abs(host - SKYPILOT_A3_HIGHGPU_8G_HOST) < Decimal("0.000005"), host
    machine = (host + 8 * rate("Nvidia H100 80GB GPU running in Americas")
               + 6000 * rate("SSD backed Local Storage") / 730)
    dumped = snapshot().lookup("gcp", "a3-highgpu-8g", "on_demand", "us-central1").hourly_cost
    assert abs(machine - dumped) < Decimal("1E-9"), (machine, dumped)


@pytest.mark.parametrize("model, core, ram, gpu", [
    ("on_demand", ("G4 Instance Core running in Iowa", "OnDemand"), ("G4 Instance Ram running in Iowa", "OnDemand"),
     ("RTX 6000 96GB running in Iowa", "OnDemand")),
    ("cud_1y", ("Commitment v1: G4 Cpu in Iowa for 1 Year", "Commit1Yr"),
     ("Commitment v1: G4 Ram in Iowa for 1 Year", "Commit1Yr"),
     ("Commitment v1: RTX 6000 96GB running in Iowa for 1 Year", "Commit1Yr")),
    ("cud_3y", ("Commitment v1: G4 Cpu in Iowa for 3 Years", "Commit3Yr"),
     ("Commitment v1: G4 Ram in Iowa for 3 Years", "Commit3Yr"),
     ("Commitment v1: RTX 6000 96GB running in Iowa for 3 Years", "Commit3Yr")),
])
@pytest.mark.parametrize("machine, gpus", [("g4-standard-48", 1), ("g4-standard-384", 8)])
def test_the_published_g4_rates_give_the_dumps_g4_prices_to_the_nano(pulled, model, core, ram, gpu, machine, gpus):
    # the G4 SKU rates cited in SOURCES.md (per vCPU, per GiB, per RTX PRO 6000 GPU-hour) and the 2026-07-30 dump
    # are independent sources; 48 vCPUs + 180 GiB per GPU, no bundled local SSD; the pull composes the same sum
    # (the "1/8 vGPU" slice SKU in the fixture is not taken for a GPU-hour)
    expected = gpus * (48 * rate(*core) + 180 * rate(*ram) + rate(*gpu))
    assert snapshot().lookup("gcp", machine, model, "us-central1").hourly_cost == expected
    assert pulled.lookup("gcp", machine, model, "us-central1").hourly_cost == expected


def test_composition_is_exact_sum_of_components(pulled):
    row = pulled.lookup("gcp", "a2-ultragpu-1g", "on_demand", "us-central1")
    local_ssd = Decimal("0.08") / 730 * 375
    assert row.hourly_cost == (Decimal("3.92808") + 12 * Decimal("0.031611") + 170 * Decimal("0.004237")
                               + local_ssd).quantize(Decimal("1E-9"))
    assert (row.gpu_model, row.gpu_count, row.currency, row.effective_date) == ("a100-80gb", 1, "USD", "2026-07-01")


def test_a_machine_needs_every_component_under_the_pricing_model():
    # without the A3 vCPU 1-year commitment SKU, a3-highgpu-8g has no cud_1y price; the other models stay
    catalog = state()
    compute = catalog.skus["services/6F81-5844-456A"]
    compute[:] = [sku for sku in compute if sku["description"] != "Commitment v1: A3 Cpu in Americas for 1 Year"]
    book = pull(catalog, regions=["us-central1"])
    assert {r.pricing_model for r in book if r.instance_type == "a3-highgpu-8g"} == {"on_demand", "spot", "cud_3y"}
    assert book.lookup("gcp", "a2-highgpu-1g", "cud_1y", "us-central1")


@pytest.mark.parametrize("chip, model, price", [
    ("tpu-v5e", "on_demand", "1.2"), ("tpu-v5p", "on_demand", "4.2"), ("tpu-v6e", "on_demand", "2.7"),
    ("tpu-v5e", "cud_1y", "0.84"), ("tpu-v5e", "cud_3y", "0.54"),
])
def test_tpus_are_priced_per_chip_hour(pulled, chip, model, price):
    row = pulled.lookup("gcp", chip, model, "us-central1")
    assert (row.hourly_cost, row.gpu_count, row.gpu_model) == (Decimal(price), 1, chip)
    assert row.payment_option == ("no_upfront" if model.startswith("cud") else "")


def test_regions_filter_and_ignored_skus(pulled):
    assert {r.region for r in pulled} == {"us-central1"}
    everywhere = pull(state())
    assert {r.region for r in everywhere} == {"us-central1", "us-east1", "us-west1", "us-west4", "us-east5"}
    assert not any("n2" in r.instance_type for r in everywhere)


def test_pages_are_followed_with_page_tokens():
    catalog = state(page_size=3)
    book = pull(catalog, regions=["us-central1"])
    sku_calls = [q.get("pageToken", [""])[0] for path, q in catalog.requests if path.endswith("/skus")]
    assert sku_calls.count("") == 2 and "page-3" in sku_calls and "page-15" in sku_calls
    assert len(book) == len(pull(state(page_size=100), regions=["us-central1"]))


@pytest.mark.parametrize("failures", [
    [("/skus", "page-2", 503)],                      # interrupted pagination, resumed at the same page
    [("/v1/services", None, 429), ("/skus", "page-4", 429), ("/skus", "page-4", 503)],
])
def test_throttling_and_unavailability_are_retried_by_the_client(pulled, failures):
    catalog = state(failures=list(failures))
    book = pull(catalog, regions=["us-central1"])
    assert catalog.failures == []
    assert [r.to_record() for r in book] == [r.to_record() for r in pulled]


def test_persistent_unavailability_is_a_transient_provider_error():
    with pytest.raises(TransientProviderError, match="kept failing"):
        pull(state(always_fail=503), retry=RetrySettings(initial=0.01, maximum=0.05, timeout=0.5))


def test_a_pull_whose_every_page_needs_a_retry_stops_within_one_budget():
    """The budget is the command's, not each page's: every SKU page fails once (slowly) before it answers, so a
    budget per page (a Retry per page call) let the pull go on for as many pages as there are; one deadline from
    the first failure stops it. The slack is the schedule's: a failing attempt under way at the deadline and the
    longest sleep before it."""
    import time

    budget = RetrySettings(initial=0.01, maximum=0.05, timeout=1.0)
    started = time.monotonic()
    pull(state(page_size=3), retry=budget, regions=["us-central1"])
    besides = time.monotonic() - started  # the same pull with no failure: its own work, which no budget bounds
    slow = state(page_size=3, fail_delay_s=0.2)
    slow.failures = [("/skus", f"page-{start}" if start else "", 503) for start in range(0, 60, 3)] * 2
    started = time.monotonic()
    with pytest.raises(TransientProviderError, match="kept failing"):
        pull(slow, retry=budget, regions=["us-central1"])
    elapsed = time.monotonic() - started
    skus = [path for path, _ in slow.requests if path.endswith("/skus")]
    assert len(skus) >= 4  # pages went through, each after its retry, before the deadline
    # the first failure (before the deadline starts), one under way when it falls, and the longest sleep
    slack = 2 * slow.fail_delay_s + budget.maximum
    assert elapsed - besides <= budget.timeout + slack, (elapsed, besides)


def test_permission_denied_is_a_terminal_provider_error():
    with pytest.raises(ProviderError) as info:
        pull(state(always_fail=403))
    assert not info.value.retryable and "credentials" in str(info.value)


def test_cli_pull_honours_the_endpoint_and_writes_nothing_on_failure(tmp_path, monkeypatch, capsys):
    out = tmp_path / "prices.csv"
    monkeypatch.setenv(RETRY_TIMEOUT_ENV, "0.3")
    with CatalogServer(state(always_fail=503)) as endpoint:
        monkeypatch.setenv(CATALOG_ENDPOINT_ENV, endpoint)
        code = main(["prices", "pull", "--provider", "gcp", "--regions", "us-central1", "--out", str(out)])
    assert code == 2 and not out.exists() and not list(tmp_path.iterdir())
    assert "Cloud Billing Catalog" in capsys.readouterr().err


def test_instance_types_filter_keeps_machines_and_chips_asked_for():
    book = pull(state(), regions=["us-central1"], instance_types=["G2-standard-4", "tpu-v6e"])
    assert {r.instance_type for r in book} == {"g2-standard-4", "tpu-v6e"}
    with pytest.raises(ProviderError, match="no price"):
        pull(state(), regions=["us-central1"], instance_types=["a4-highgpu-8g"])


def test_cli_pull_writes_a_price_book_the_cli_can_show(tmp_path, monkeypatch, capsys):
    out = tmp_path / "gcp-prices.parquet"
    with CatalogServer(state()) as endpoint:
        monkeypatch.setenv(CATALOG_ENDPOINT_ENV, endpoint)
        code = main(["prices", "pull", "--provider", "gcp", "--regions", "us-central1", "--out", str(out)])
    # 21 A2/A3/G2 and 4 G4 machine types x 4 pricing models + 5 TPU chip prices
    assert code == 0 and capsys.readouterr().out.startswith("wrote 105 prices")
    monkeypatch.setenv("FINOPS_PRICE_BOOK", str(out))
    assert main(["prices", "show", "--provider", "gcp", "--instance-type", "g2-standard-4", "--pricing-model",
                 "on_demand", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    # the Parquet price book keeps money to a micro-unit (decimal128(18, 6))
    assert (row["pricing_model"], row["hourly_cost"], row["region"]) == ("on_demand", 0.706824, "us-central1")
