"""Spot prices: ``ec2.describe_spot_price_history`` per availability zone, summarized over a window.

For each region, instance type and availability zone the price records of the window are summarized as
the latest price, the median and the 90th percentile (linear interpolation between closest ranks, as
``numpy.percentile`` does by default). The price-book ``spot`` row of a region is the zone with the lowest
median (where a fleet would be placed); its ``source`` keeps the latest and p90 so the spread stays visible.

Source: EC2 API reference, DescribeSpotPriceHistory
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSpotPriceHistory.html).

>>> percentile([Decimal("1"), Decimal("2"), Decimal("3"), Decimal("10")], 50)
Decimal('2.5')
>>> percentile([Decimal("1"), Decimal("2"), Decimal("3"), Decimal("10")], 90)
Decimal('7.9')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from finops.errors import InputError
from finops.money import MONEY_CONTEXT, to_decimal, to_price
from finops.price_book import PriceRow

from .pricing import GpuLookup

__all__ = ["SpotSummary", "fetch_spot_history", "percentile", "spot_rows", "summarize"]

DEFAULT_WINDOW = timedelta(days=7)


def percentile(values: Sequence[Decimal], q: float) -> Decimal:
    """The ``q``-th percentile of ``values`` by linear interpolation (``numpy.percentile``'s default)."""
    if not values:
        raise InputError("no values to summarize")
    ordered = sorted(values)
    rank = MONEY_CONTEXT.multiply(to_decimal(q) / 100, Decimal(len(ordered) - 1))
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    fraction = rank - low
    return MONEY_CONTEXT.add(ordered[low], MONEY_CONTEXT.multiply(ordered[high] - ordered[low], fraction))


@dataclass(frozen=True)
class SpotSummary:
    """Spot prices of one instance type in one availability zone over a window."""

    region: str
    availability_zone: str
    instance_type: str
    latest: Decimal
    median: Decimal
    p90: Decimal
    samples: int
    start: str
    end: str


def summarize(records: Iterable[Mapping[str, Any]], region: str, start: datetime, end: datetime) -> list[SpotSummary]:
    """Summaries per (availability zone, instance type) of ``SpotPriceHistory`` records, sorted."""
    groups: dict[tuple[str, str], list[tuple[datetime, Decimal]]] = defaultdict(list)
    for record in records:
        groups[(record["AvailabilityZone"], record["InstanceType"])].append(
            (record["Timestamp"], to_price(record["SpotPrice"], what=f"SpotPrice of {record['InstanceType']}")))
    summaries = []
    for (zone, instance_type), points in sorted(groups.items()):
        prices = [price for _, price in points]
        summaries.append(SpotSummary(region, zone, instance_type, max(points, key=lambda p: p[0])[1],
                                     percentile(prices, 50), percentile(prices, 90), len(prices),
                                     start.date().isoformat(), end.date().isoformat()))
    return summaries


def spot_rows(summaries: Iterable[SpotSummary], *, gpu_of: GpuLookup, as_of: str, source: str) -> list[PriceRow]:
    """One ``spot`` price-book row per (region, instance type): the zone with the lowest median."""
    best: dict[tuple[str, str], SpotSummary] = {}
    for s in summaries:
        key = (s.region, s.instance_type)
        if key not in best or (s.median, s.availability_zone) < (best[key].median, best[key].availability_zone):
            best[key] = s
    rows = []
    for (region, instance_type), s in sorted(best.items()):
        gpu_model, gpu_count = gpu_of(instance_type)
        rows.append(PriceRow("aws", region, instance_type, gpu_model, gpu_count, "spot", "", s.median, Decimal(0),
                             "USD", as_of, f"{source}; median {s.start}..{s.end} in {s.availability_zone} "
                                           f"(latest {s.latest}, p90 {s.p90}, {s.samples} prices)"))
    return rows


def fetch_spot_history(client: Any, region: str, instance_types: Iterable[str], *,
                       end: datetime | None = None, window: timedelta = DEFAULT_WINDOW) -> list[SpotSummary]:
    """Read the whole window's Linux/UNIX spot history for a region (every page), then summarize it."""
    from .session import pages

    end = end or datetime.now(UTC)
    start = end - window
    records: list[Mapping[str, Any]] = []
    for page in pages(client, "ec2", "describe_spot_price_history", InstanceTypes=sorted(set(instance_types)),
                      ProductDescriptions=["Linux/UNIX"], StartTime=start, EndTime=end):
        records.extend(page.get("SpotPriceHistory", []))
    return summarize(records, region, start, end)
