"""Mix options from the price book: one :class:`MixOption` per price of an instance type in a region.

The unit is one instance. ``on_demand`` and ``spot`` prices become flexible options (spot capped at
``spot_share`` of each hour's demand); reserved instances become ``reserved``, savings plans
``savings_plan`` and GCP committed-use discounts ``cud``, each with its amortized hourly cost, upfront and term.
Terms longer than ``horizon_hours`` are left out (a 3-year price cannot be judged on a 1-year
profile; use the ladder on a 3-year profile).

>>> from finops.money import to_decimal
>>> from finops.price_book import PriceBook, PriceRow
>>> def row(model, hourly, payment=""):
...     return PriceRow("gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, model, payment, to_decimal(hourly),
...                     to_decimal(0), "USD", "2026-07-30", "example")
>>> book = PriceBook([row("on_demand", "88.25"), row("spot", "30"), row("cud_1y", "60", "no_upfront"),
...                   row("cud_3y", "40", "no_upfront")])
>>> [(o.name, o.kind, o.hourly_cost, o.term_hours) for o in options_from_prices(book, "gcp", "a3-highgpu-8g",
...                                                                              "us-central1", horizon_hours=8760)]
[('on_demand', 'on_demand', Decimal('88.25'), None), ('spot', 'spot', Decimal('30'), None), ('cud_1y-no_upfront', 'cud', Decimal('60'), 8760)]
"""

from __future__ import annotations

from ..commitments import KIND_OF_PRICING_MODEL
from ..errors import InputError
from ..price_book import PriceBook
from .options import MixOption

__all__ = ["options_from_prices"]



def options_from_prices(book: PriceBook, provider: str, instance_type: str, region: str, *,
                        horizon_hours: int, spot_share: float = 0.3, spot_availability: float = 1.0
                        ) -> list[MixOption]:
    """The options for one instance type in one region, per instance-hour."""
    if not 0 <= spot_share <= 1:  # NaN too
        raise InputError(f"spot_share must be a share in [0, 1], got {spot_share}", hint="write 30 % as 0.3")
    rows = list(book.filter(provider=provider, instance_type=instance_type, region=region))
    if not any(r.pricing_model == "on_demand" for r in rows):
        raise InputError(f"no on-demand price for {provider} {instance_type} in {region}",
                         hint="run `finops prices show` to see what the price book holds")
    options = []
    for row in rows:
        term = row.term_hours or None
        if term is not None and term > horizon_hours:
            continue
        kind = KIND_OF_PRICING_MODEL[row.pricing_model]
        name = row.pricing_model + (f"-{row.payment_option}" if row.payment_option else "")
        options.append(MixOption(name, kind, row.hourly_cost, currency=row.currency, upfront=row.upfront_cost,
                                 term_hours=term, max_share=spot_share if kind == "spot" else None,
                                 availability=spot_availability if kind == "spot" else 1.0))
    return options
