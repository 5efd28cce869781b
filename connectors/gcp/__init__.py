"""The GCP connector: Cloud Billing Catalog prices -> the price book, billing exports -> FOCUS 1.2 rows.

- :func:`pull_prices` lists the public SKUs of Compute Engine and Cloud TPU (``catalog``), keeps the GPU,
  vCPU, RAM, Local SSD and TPU ones (``skus``), and composes machine prices from them (``compose``).
- :func:`pull_bills` reads a standard / detailed billing export or the FOCUS export, from BigQuery
  (``bq://PROJECT.DATASET.TABLE``) or from exported CSV / JSONL / Parquet files (``bills``), maps it to
  FOCUS with the declarative tables of ``mapping`` and writes Parquet atomically.
- ``snapshot`` loads the bundled offline price snapshot.
- :func:`run_query` runs one query on BigQuery (``bigquery``), for ``finops reconcile --engine bigquery``.

Heavy clients (``google-cloud-billing``, ``google-cloud-bigquery``) are imported only when used.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from finops.catalog.instances import InstanceType
from finops.errors import ProviderError
from finops.price_book import PriceBook
from finops.token_prices import TokenPriceBook

from ..retry_deadline import one_deadline
from .bigquery import run_query
from .catalog import RetrySettings
from .compose import machine_prices, tpu_prices

__all__ = ["CATALOG_SERVICES", "pull_bills", "pull_prices", "run_query"]

#: Display names of the public services whose SKUs price GPU machines and TPUs.
CATALOG_SERVICES: tuple[str, ...] = ("Compute Engine", "Cloud TPU")
_SOURCE = "Cloud Billing Catalog API (cloudbilling v1 services.skus), composed GPU + vCPU + RAM + local SSD"


@one_deadline()
def pull_token_prices(*, regions: list[str] | None = None, client: Any = None,
                      retry: RetrySettings | None = None) -> TokenPriceBook:
    """Vertex AI's on-demand token prices of the catalog's open models, from the Cloud Billing Catalog's Vertex AI
    service (``C7E2-9256-1C43``); ``regions`` keeps those regions only."""
    from datetime import date

    from . import catalog
    from .token_catalog import fetch_token_skus, token_price_rows

    settings = retry or RetrySettings.from_env()
    client = client if client is not None else catalog.make_client()
    as_of = date.today().isoformat()
    rows = [r for r in token_price_rows(fetch_token_skus(client, settings), as_of=as_of,
                                        source=f"Cloud Billing Catalog API, pulled {as_of}")
            if not regions or r.region in regions]
    if not rows:
        raise ProviderError("the Cloud Billing Catalog returned no Vertex AI token price for the catalog's open models",
                            hint="check --regions against the regions Vertex AI serves these models in")
    return TokenPriceBook(rows)


@one_deadline()
def pull_prices(*, regions: list[str] | None = None, instance_types: list[str] | None = None,
                client: Any = None, machines: Iterable[InstanceType] | None = None,
                retry: RetrySettings | None = None) -> PriceBook:
    """Current GCP prices: machine types composed from their SKUs, plus TPU chip-hours.

    ``client`` defaults to a REST ``CloudCatalogClient`` (``FINOPS_GCP_CATALOG_ENDPOINT`` honoured),
    ``machines`` to the GCP instance catalog. Raises :class:`~finops.errors.ProviderError` (or
    ``TransientProviderError``) when the API fails after retries or yields no price at all.
    """
    from . import catalog, skus

    settings = retry or RetrySettings.from_env()
    client = client if client is not None else catalog.make_client()
    services = catalog.find_services(client, CATALOG_SERVICES, settings)
    if "Compute Engine" not in services:
        raise ProviderError("the Cloud Billing Catalog lists no Compute Engine service",
                            hint="check FINOPS_GCP_CATALOG_ENDPOINT and the credentials' access")
    components = [component for name in CATALOG_SERVICES if name in services
                  for sku in catalog.iter_skus(client, services[name], settings, keep=skus.is_component)
                  for component in skus.priced_components(sku, regions)]
    shapes = list(machines) if machines is not None else _catalog_machines()
    if instance_types:
        wanted = {t.strip().lower() for t in instance_types}
        shapes = [m for m in shapes if m.instance_type.lower() in wanted]
    rows = machine_prices(shapes, components, source=_SOURCE) + tpu_prices(components, source=_SOURCE)
    book = PriceBook(rows)
    if instance_types:
        book = PriceBook(r for r in book if r.instance_type.lower() in wanted)
    if not len(book):
        raise ProviderError("the Cloud Billing Catalog gave no price for the requested machines and regions",
                            hint="check --regions and --instance-types against `finops prices show --provider gcp`")
    return book


def _catalog_machines() -> list[InstanceType]:
    from finops.catalog.instances import instances  # the shared instance catalog (instances_gcp.csv)

    return list(instances("gcp"))


@one_deadline()
def pull_bills(source: str, month: str, out: Path) -> Path:
    """FOCUS 1.2 rows (with the ``x_`` GPU columns) of one invoice month, written atomically to ``out``.

    ``source`` is ``bq://PROJECT.DATASET.TABLE`` (standard, detailed or FOCUS export table) or the path
    of an exported CSV / JSONL / Parquet file of one of those exports. Nothing is written on failure.
    """
    from .bills import pull_bills as _pull

    return _pull(source, month, Path(out))
