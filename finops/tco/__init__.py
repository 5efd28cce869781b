"""Total cost of ownership: owned hardware, cloud pricing models, unit costs and what-if levers.

One concept per module:

* :mod:`.owned`: CAPEX and OPEX of owned servers month by month, levelized cost, NPV, seed 003's ``tco``;
* :mod:`.cloud`: on-demand, reserved with upfront, spot (commitments over usage: :mod:`finops.commitments`);
* :mod:`.unit_cost`: per GPU-hour, per replica-month, per million input and output tokens;
* :mod:`.levers`: the seeds' cost levers, each as money per month;
* :mod:`.compare`: owned hardware against the price book for a steady fleet;
* :mod:`.reference`: the cited reference case in ``finops/catalog/data/owned_reference.csv``.

Straight-line depreciation lives in :mod:`finops.depreciation`.

>>> from finops.money import Money
>>> tco(Money.of(160_000, "CNY") * 9, Money.of(9_000, "CNY") * 9, 36)
Money(amount=Decimal('4356000'), currency='CNY')
"""

from ..commitments import CommitmentOutcome, resource_commitment_cost, spend_commitment_cost
from .cloud import (
    CloudMonth,
    amortized_hourly,
    blended_hourly,
    recurring_hourly,
    reserved_schedule,
    spot_effective_hourly,
)
from .compare import TOTAL_BASIS, Comparison, OptionCost, OptionKind, SpotPolicy, cloud_rows, compare_options
from .from_sizing import prefix_cache_from_sizing, quantization_from_sizing, replica_cost
from .levers import (
    LeverEffect,
    LeverName,
    load_shaping,
    prefix_cache,
    quantization,
    right_sizing,
    utilization,
)
from .owned import (
    OWNED_BASES,
    OwnedBasis,
    OwnedMonth,
    OwnedNode,
    OwnedTco,
    capital_recovery_factor,
    npv,
    owned_tco,
    tco,
)
from .reference import ReferenceCase, reference_case, reference_cases
from .unit_cost import (
    TokenCosts,
    cost_per_gpu_hour,
    cost_per_million_tokens,
    cost_per_million_tokens_at_average,
    cost_per_replica_month,
    prefill_time_share,
    token_costs,
)

__all__ = [
    "OWNED_BASES",
    "TOTAL_BASIS",
    "CloudMonth",
    "CommitmentOutcome",
    "Comparison",
    "LeverEffect",
    "LeverName",
    "OptionCost",
    "OptionKind",
    "OwnedBasis",
    "OwnedMonth",
    "OwnedNode",
    "OwnedTco",
    "ReferenceCase",
    "SpotPolicy",
    "TokenCosts",
    "amortized_hourly",
    "blended_hourly",
    "capital_recovery_factor",
    "cloud_rows",
    "compare_options",
    "cost_per_gpu_hour",
    "cost_per_million_tokens",
    "cost_per_million_tokens_at_average",
    "cost_per_replica_month",
    "load_shaping",
    "npv",
    "owned_tco",
    "prefill_time_share",
    "prefix_cache",
    "prefix_cache_from_sizing",
    "quantization",
    "quantization_from_sizing",
    "recurring_hourly",
    "reference_case",
    "reference_cases",
    "replica_cost",
    "reserved_schedule",
    "resource_commitment_cost",
    "right_sizing",
    "spend_commitment_cost",
    "spot_effective_hourly",
    "tco",
    "token_costs",
    "utilization",
]
