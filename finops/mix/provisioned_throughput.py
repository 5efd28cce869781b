"""A managed API's provisioned throughput as a commitment option of the mix.

Amazon Bedrock sells Provisioned Throughput in model units, each serving a set rate of the model's tokens, for a
term of one or six months, paid per model unit-hour every hour of the term; Vertex AI sells it in generative AI
scale units (GSUs) for a week to a year. Either is a commitment: paid whether used or not, cheaper than on demand
when the load fills it. The mix counts demand in its own units (a GPU, a replica, an instance serving some tokens a
second), so a provisioned-throughput offer is priced per demand unit:

    units per demand unit = tokens/s one demand unit serves / tokens/s one model unit serves
    hourly cost per demand unit = price per model unit-hour x units per demand unit
    term hours = term months x 730

and joins the options as the committed kind ``provisioned_throughput`` (:class:`~finops.mix.options.MixOption`),
bought in whole demand units like a reservation. The rate a model unit serves is the provider's figure for that
model (Bedrock states it when the throughput is bought; Vertex AI publishes a GSU's rate per model).

>>> pt = ProvisionedThroughput("bedrock-pt-6m", Decimal("20.00"), term_months=6, tokens_per_s_per_unit=1_000.0)
>>> option = pt.as_mix_option(tokens_per_s_per_demand_unit=2_500.0)
>>> option.kind, option.hourly_cost, option.term_hours, option.committed
('provisioned_throughput', Decimal('50.000'), 4380, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from ..errors import InputError
from ..money import MONEY_CONTEXT
from .options import MixOption
from .result import HOURS_PER_MONTH

__all__ = ["ProvisionedThroughput"]


@dataclass(frozen=True)
class ProvisionedThroughput:
    """A provisioned-throughput offer: its price per model unit-hour, term and the output tokens/s a unit serves."""

    name: str
    hourly_per_unit: Decimal
    term_months: int
    tokens_per_s_per_unit: float
    currency: str = "USD"
    model: str = ""          # the catalog model it serves (for finops.sizing.managed.api_options)
    service: str = ""        # AmazonBedrock, Vertex AI
    region: str = ""
    source: str = ""         # where the price and the rate come from

    def units_for(self, output_tokens_per_s: float) -> int:
        """Whole model units that serve ``output_tokens_per_s``: ``ceil(tokens/s / tokens/s per unit)``.

        >>> ProvisionedThroughput("pt", Decimal(20), 1, 1_000.0).units_for(2_500.0)
        3
        """
        return max(1, math.ceil(output_tokens_per_s / self.tokens_per_s_per_unit - 1e-9))

    def __post_init__(self) -> None:
        if self.hourly_per_unit < 0 or self.term_months <= 0 or self.tokens_per_s_per_unit <= 0:
            raise InputError(f"provisioned throughput {self.name!r}: price >= 0, term and tokens/s per unit > 0",
                             hint="e.g. 20.00 USD per model unit-hour, 6 months, 1,000 output tokens/s")

    def as_mix_option(self, tokens_per_s_per_demand_unit: float) -> MixOption:
        """The offer as a committed mix option per demand unit serving ``tokens_per_s_per_demand_unit``."""
        units = Decimal(repr(tokens_per_s_per_demand_unit / self.tokens_per_s_per_unit))
        return MixOption(self.name, "provisioned_throughput", MONEY_CONTEXT.multiply(self.hourly_per_unit, units),
                         currency=self.currency, term_hours=self.term_months * HOURS_PER_MONTH)
