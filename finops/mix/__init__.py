"""The commitment mix optimizer: how much to own, reserve or commit, and what to leave to on-demand and spot.

Public API (the CLI, the workbook UDF ``FINOPS_MIX`` and the demo use it)::

    optimize_mix(demand, options) -> MixResult
    read_demand_csv(path) -> np.ndarray ; read_options_csv(path) -> list[MixOption]

Around it: ``plan_ladder`` (multi-year terms on growth), ``plan_scenarios`` and ``stress_test``
(uncertainty), ``compare_recommenders`` (the AWS / GCP rules), ``load_shaping`` (the lever through
the mix). Coupled pools (a shared savings plan, a capex budget) live in ``finops.mix.lp`` and
profiles from FOCUS bills in ``finops.mix.usage`` (they load HiGHS and the bill reader). See
``docs/mix.md`` for the method.
"""

from .demand_units import in_instances, peak_to_average, resolve_unit
from .dispatch import cost_mix
from .ladder import LadderPlan, plan_ladder
from .levers import ShapingEffect, load_shaping
from .optimize import optimize_mix
from .options import MixOption, OptionKind, check_options, read_options_csv
from .price_options import options_from_prices
from .profile import Campaign, WorkloadShape, generate_profile, read_demand, read_demand_csv, write_demand_csv
from .recommenders import Recommendation, compare_recommenders, recommenders_for
from .result import MixResult, OptionOutcome
from .scenarios import Scenario, ScenarioPlan, plan_scenarios, probabilities, stress_test

__all__ = [
    "Campaign",
    "LadderPlan",
    "MixOption",
    "MixResult",
    "OptionKind",
    "OptionOutcome",
    "Recommendation",
    "Scenario",
    "ScenarioPlan",
    "ShapingEffect",
    "WorkloadShape",
    "check_options",
    "compare_recommenders",
    "cost_mix",
    "generate_profile",
    "in_instances",
    "load_shaping",
    "optimize_mix",
    "options_from_prices",
    "peak_to_average",
    "plan_ladder",
    "plan_scenarios",
    "probabilities",
    "read_demand",
    "read_demand_csv",
    "read_options_csv",
    "recommenders_for",
    "resolve_unit",
    "stress_test",
    "write_demand_csv",
]
