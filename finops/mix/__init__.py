"""The commitment mix optimizer: how much to own, reserve or commit, and what to leave to on-demand and spot.

Public API (the CLI, the workbook UDF ``FINOPS_MIX`` and the demo use it)::

    optimize_mix(demand, options) -> MixResult
    read_demand_csv(path) -> np.ndarray ; read_options_csv(path) -> list[MixOption]

See ``docs/mix.md`` for the method.
"""

from .dispatch import cost_mix
from .optimize import optimize_mix
from .options import MixOption, OptionKind, check_options, read_options_csv
from .profile import Campaign, WorkloadShape, generate_profile, read_demand_csv, write_demand_csv
from .result import MixResult, OptionOutcome

__all__ = [
    "Campaign",
    "MixOption",
    "MixResult",
    "OptionKind",
    "OptionOutcome",
    "WorkloadShape",
    "check_options",
    "cost_mix",
    "generate_profile",
    "optimize_mix",
    "read_demand_csv",
    "read_options_csv",
    "write_demand_csv",
]
