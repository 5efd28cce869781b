"""The AWS connector: EC2 GPU prices -> the price book, bills (CUR 2.0, FOCUS 1.2, Cost Explorer) -> FOCUS.

- :func:`pull_prices`: on-demand and reserved terms from the Price List API (``pricing``), Savings Plans
  rates (``savings_plans``) and spot price history summaries (``spot``), every row priced per instance-hour
  with the GPU model and count from the instance catalog (:mod:`finops.catalog.instances`).
- :func:`read_offer_file`: the same rows from a downloaded bulk offer file (``offer_file``), for users
  without API access.
- :func:`pull_bills`: one or more months of a Data Exports delivery in S3 or a Cost Explorer query as
  FOCUS 1.2 Parquet with the ``x_`` GPU columns (``bills``).
- :func:`run_query`: one SQL query on Athena, rows typed back from text (``athena``), for ``finops
  reconcile --engine athena``.

All network I/O goes through ``session`` (botocore retries, errors translated into
:mod:`finops.errors`, credentials never shown); boto3 is imported only when a client is made. Every
result is collected completely before anything is returned or written, so a failure part-way leaves
no partial price book and no partial bill file.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

from finops.errors import InputError, ProviderError, UnknownNameError
from finops.price_book import PriceBook, PriceRow
from finops.token_prices import TokenPriceBook

from ..retry_deadline import one_deadline
from .athena import run_query
from .pricing import GPU_FAMILIES, in_gpu_families
from .session import AwsSession

__all__ = ["AwsSession", "catalog_gpu", "default_instance_types", "pull_bills", "pull_prices", "read_offer_file",
           "run_query"]

PRICE_LIST_SOURCE = "AWS Price List API get_products (AmazonEC2, Linux, Shared, capacitystatus Used)"
SAVINGS_PLANS_SOURCE = "AWS Savings Plans API describe_savings_plans_offering_rates"
SPOT_SOURCE = "EC2 describe_spot_price_history (Linux/UNIX)"


@lru_cache(maxsize=4096)
def catalog_gpu(instance_type: str) -> tuple[str, int] | None:
    """(GPU model, GPUs per instance) of an AWS instance type from the instance catalog; ``None`` if it is
    not a catalogued accelerator instance (a bill's ``m6i.large``)."""
    from finops.catalog.instances import instance

    try:
        item = instance("aws", instance_type)
    except UnknownNameError:
        return None
    return item.gpu_model, item.gpu_count


def _required_gpu(instance_type: str) -> tuple[str, int]:
    from finops.catalog.instances import instance

    item = instance("aws", instance_type)  # an unknown type fails with suggestions
    return item.gpu_model, item.gpu_count


def default_instance_types(families: Iterable[str] = GPU_FAMILIES) -> list[str]:
    """The catalog's AWS instance types in the priced GPU families."""
    from finops.catalog.instances import instances

    return [i.instance_type for i in instances("aws") if in_gpu_families(i.instance_type, families)]


def _wanted_types(instance_types: list[str] | None) -> list[str]:
    if not instance_types:
        return default_instance_types()
    for name in instance_types:
        _required_gpu(name)
    return list(dict.fromkeys(instance_types))


@one_deadline()
def pull_token_prices(*, regions: list[str] | None = None, session: AwsSession | None = None,
                      today: date | None = None) -> TokenPriceBook:
    """Amazon Bedrock's on-demand token prices of the catalog's open models, from the Price List API (the
    ``AmazonBedrock``, ``AmazonBedrockService`` and ``AmazonBedrockFoundationModels`` service codes)."""
    from .token_pricing import fetch_token_documents, token_price_rows

    session = session or AwsSession()
    as_of = (today or date.today()).isoformat()
    documents = fetch_token_documents(session.client("pricing", "us-east-1"), regions)
    rows = token_price_rows(documents, as_of=as_of, source=f"{PRICE_LIST_SOURCE}, pulled {as_of}")
    if not rows:
        raise ProviderError("the Price List returned no Bedrock token price for the catalog's open models",
                            hint="check --regions; Bedrock serves each model in a few regions")
    return TokenPriceBook(rows)


@one_deadline()
def pull_prices(*, regions: list[str] | None = None, instance_types: list[str] | None = None,
                session: AwsSession | None = None, spot_window: timedelta = timedelta(days=7),
                today: date | None = None) -> PriceBook:
    """Current AWS prices for GPU instance types: on-demand, reserved 1y/3y, Savings Plans 1y/3y, spot.

    ``regions=None`` prices every region the Price List has; spot history is then read in each region
    that has an on-demand price. Raises :class:`~finops.errors.ProviderError` (or the transient kind)
    when an API fails after botocore's retries, and when nothing at all is priced.
    """
    from .pricing import fetch_product_documents, price_rows
    from .savings_plans import fetch_offering_rates, savings_plan_row
    from .spot import fetch_spot_history, spot_rows

    session = session or AwsSession()
    types = _wanted_types(instance_types)
    as_of = (today or date.today()).isoformat()
    documents = fetch_product_documents(session.client("pricing", "us-east-1"), types, regions)
    rows: list[PriceRow] = [row for doc in documents for row in price_rows(
        doc, gpu_of=_required_gpu, as_of=as_of, source=f"{PRICE_LIST_SOURCE}, pulled {as_of}")]
    rates = fetch_offering_rates(session.client("savingsplans", "us-east-1"), types, regions)
    rows += [row for rate in rates if (row := savings_plan_row(
        rate, gpu_of=_required_gpu, as_of=as_of, source=f"{SAVINGS_PLANS_SOURCE}, pulled {as_of}")) is not None]
    spot_regions = regions or sorted({r.region for r in rows if r.pricing_model == "on_demand"})
    for region in spot_regions:
        summaries = fetch_spot_history(session.client("ec2", region), region, types, window=spot_window)
        rows += spot_rows(summaries, gpu_of=_required_gpu, as_of=as_of, source=f"{SPOT_SOURCE}, pulled {as_of}")
    if not rows:
        raise ProviderError("AWS returned no price for the requested instance types and regions",
                            hint="check --regions and --instance-types against `finops prices show --provider aws`")
    return PriceBook(rows)


def read_offer_file(path: str | Path, *, instance_types: list[str] | None = None,
                    regions: list[str] | None = None) -> PriceBook:
    """The price book of a downloaded AmazonEC2 bulk offer file (JSON or CSV, optionally gzip), optionally
    only for some regions."""
    from .offer_file import read_offer_file as read
    from .pricing import price_rows

    wanted = set(_wanted_types(instance_types))
    offer = read(path, keep=wanted.__contains__)
    source = f"AWS bulk price-list offer file {Path(path).name}, published {offer.publication_date}"
    as_of = offer.publication_date or date.today().isoformat()
    rows = [row for doc in offer.documents for row in price_rows(doc, gpu_of=_required_gpu, as_of=as_of,
                                                                    source=source)
            if not regions or row.region in regions]
    if not rows:
        raise InputError(f"offer file {Path(path).name} has no Linux shared-tenancy price for the instance types",
                         hint="use the AmazonEC2 offer file of a region that offers them")
    return PriceBook(rows)


@one_deadline()
def pull_bills(source: str, month: str, out: Path, *, session: AwsSession | None = None) -> Path:
    """FOCUS 1.2 rows (with the ``x_`` GPU columns) of ``month`` (``YYYY-MM``, a range ``A..B`` or a list)
    from ``s3://BUCKET/PREFIX`` (a Data Exports CUR 2.0 / FOCUS 1.2 export), a local copy of one, or
    ``ce`` (Cost Explorer), written atomically to ``out``. Nothing is written on failure."""
    from .bills import pull_bills as pull

    return pull(source, month, Path(out), gpu_of=catalog_gpu, session=session)
