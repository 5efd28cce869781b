"""The named figures and the ranking table of a sizing answer, as the add-in and the workbook show them.

``SIZING_FIELDS[field]`` is one figure of a workload's answer (:class:`finops.sizing.choice.WorkloadSizing`):
the add-in's ``LLM_SIZING(headers, row, field)`` returns it for a Workloads row, and the planning workbook
stores it as that formula's value. The planner's
choice is priced only when it meets the targets; otherwise its cost cells show why not, in a few
words, and its deployment cells ``-`` (:data:`finops.cells.NOT_APPLICABLE`: never an empty string or a
boolean, which LibreOffice recomputes on opening), so no failing configuration reaches a total or a chart.
The ``Best*`` fields are the first row of ``finops size`` for the same workload and price book.

Two cost bases per million output tokens, labelled by name: ``CostPerMTokPeak`` at the peak load
running 24/7, ``CostPerMTokAverage`` at the row's average load (``PeakToAverage``) with the fleet
still sized and paid for the peak (:func:`finops.sizing.ranking.per_million_at_average`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..cells import NOT_APPLICABLE, shown
from ..errors import InputError
from ..registry import Registry
from .choice import WorkloadSizing
from .memory import check_context
from .search import SizingOption

__all__ = ["RANKING_HEADER", "SIZING_FIELDS", "ranking_table"]

Field = Callable[[WorkloadSizing], Any]


def _chosen(read: Callable[[SizingOption], Any], *, priced: bool = False) -> Field:
    """A figure of the planner's deployment: ``-`` when it misses the targets (``priced``: why not)."""
    def value(sized: WorkloadSizing) -> Any:
        option = sized.choice.option
        if option is None:
            return sized.choice.why_not if priced else NOT_APPLICABLE
        return read(option)
    return value


def _best(read: Callable[[SizingOption], Any]) -> Field:
    def value(sized: WorkloadSizing) -> Any:
        if sized.best is None:
            raise InputError(sized.search.infeasible_reason or "no priced configuration meets the targets")
        return read(sized.best)
    return value


def _p99(sized: WorkloadSizing) -> bool:
    return sized.workload.slo_percentile == "p99"


def _latency(p99: str, p50: str, *, at_p90: str | None = None) -> Field:
    """The figure at the workload's SLO percentile; ``at_p90`` (``ttft`` or ``tpot``): as a load test
    would show it at the model's 90th-percentile held-out error (:meth:`SizingOption.at_p90`)."""
    def value(sized: WorkloadSizing) -> Any:
        def read(o: SizingOption) -> Any:
            figure = getattr(o, p99 if _p99(sized) else p50)
            if at_p90 is None:
                return figure
            return shown(o.at_p90(at_p90, figure))
        return _chosen(read)(sized)
    return value


SIZING_FIELDS: Registry[Field] = Registry("Sizing field", {
    "MeetsTargets": lambda s: "yes" if s.choice.meets_targets else "no",
    "WhyNot": lambda s: shown(s.choice.why_not),
    "TtftMs": _latency("ttft_p99_ms", "ttft_p50_ms"),
    "TpotMs": _latency("itl_p99_ms", "tpot_ms"),
    "Replicas": _chosen(lambda o: o.replicas),
    "Gpus": _chosen(lambda o: o.gpus),
    "Instances": _chosen(lambda o: o.instances),
    "GpusPaid": _chosen(lambda o: o.gpus_paid),
    "Provider": _chosen(lambda o: o.provider),
    "Region": _chosen(lambda o: o.region),
    "InstanceType": _chosen(lambda o: o.instance_type),
    "AcceleratorsPerInstance": _chosen(lambda o: o.accelerators_per_instance),
    "OutputTokensPerS": _chosen(lambda o: o.output_tokens_per_s),
    # the deployment's hourly cost (instances x the instance's hourly price): the workbook's monthly cost is this
    # times its HoursPerMonth input; MonthlyCost is the core's month of 730 hours
    "HourlyCost": _chosen(lambda o: float(o.hourly_cost.amount), priced=True),
    "MonthlyCost": _chosen(lambda o: float(o.monthly_cost.amount), priced=True),
    "CostPerMTokPeak": _chosen(lambda o: float(o.cost_per_million_output_tokens.amount), priced=True),
    "CostPerMTokAverage": _chosen(lambda o: float(o.cost_per_million_output_tokens_average.amount), priced=True),
    "BestGpu": _best(lambda o: o.gpu),
    "BestPrecision": _best(lambda o: o.precision),
    "BestTp": _best(lambda o: o.tp),
    "BestGpus": _best(lambda o: o.gpus),
    "BestGpusPaid": _best(lambda o: o.gpus_paid),
    "BestInstanceType": _best(lambda o: o.instance_type),
    "BestInstances": _best(lambda o: o.instances),
    "BestHourlyCost": _best(lambda o: float(o.hourly_cost.amount)),
    "BestMonthlyCost": _best(lambda o: float(o.monthly_cost.amount)),
    # how far the planner's figures can be trusted: measured configuration (else extrapolated), and whose
    # bandwidth and compute efficiencies the model used (the engine's, or a vendor fit's such as amd-cdna3:vllm)
    "Calibrated": _chosen(lambda o: "yes" if o.calibrated else "no"),
    "EfficiencySource": _chosen(lambda o: o.efficiency_source),
    "TtftMsP90": _latency("ttft_p99_ms", "ttft_p50_ms", at_p90="ttft"),
    "TpotMsP90": _latency("itl_p99_ms", "tpot_ms", at_p90="tpot"),
    # how far the estimate extrapolates (measured, fitted, kernels, unmeasured: finops.sizing.bands), and the
    # accelerators the planner's configuration deploys were the model at the optimistic (P10) or the
    # pessimistic (P90) end of its band; the fleet is sized at the P90 end (finops.sizing.confidence)
    "Extrapolation": _chosen(lambda o: o.extrapolation),
    "GpusAtP10": _chosen(lambda o: shown(o.gpus_band[0] if o.gpus_band else None)),
    "GpusAtP90": _chosen(lambda o: shown(o.gpus_band[1] if o.gpus_band else None)),
    "BestExtrapolation": _best(lambda o: o.extrapolation),
    # the request (isl + osl) runs past the model's native context, on the row's ContextLength (RoPE scaling):
    # yes/no whatever the configuration, as it is the workload's (finops.sizing.memory.check_context)
    "BeyondNativeContext": lambda s: shown(check_context(s.workload.model_spec(), s.workload.isl, s.workload.osl,
                                                         s.workload.context_length)),
})


#: The columns of a ranking table (``LLM_SIZE``, ``LLM_RANKING`` and the Sizing sheet's spilled ranking).
RANKING_HEADER = (
    "gpu",
    "precision",
    "tp",
    "replicas",
    "gpus",
    "gpus_paid",
    "provider",
    "instance_type",
    "instances",
    "monthly_cost",
    "cost_per_mtok_peak",
    "cost_per_mtok_avg",
    "ttft_p99_ms",
    "itl_p99_ms",
    "calibrated",
    "efficiency_source",
    "ttft_p99_ms_p90",
    "itl_p99_ms_p90",
    "beyond_native_context",
)


def ranking_table(options: list[SizingOption]) -> list[list[Any]]:
    """The header row, then one row per option, cheapest first (money as float, for a cell)."""
    return [list(RANKING_HEADER)] + [
        [
            o.gpu,
            o.precision,
            o.tp,
            o.replicas,
            o.gpus,
            o.gpus_paid,
            o.provider,
            o.instance_type,
            o.instances,
            float(o.monthly_cost.amount),
            float(o.cost_per_million_output_tokens.amount),
            float(o.cost_per_million_output_tokens_average.amount),
            o.ttft_p99_ms,
            o.itl_p99_ms,
            shown(o.calibrated),
            o.efficiency_source,
            shown(o.at_p90("ttft", o.ttft_p99_ms)),
            shown(o.at_p90("tpot", o.itl_p99_ms)),
            shown(o.beyond_native_context),
        ]
        for o in options
    ]
