"""Unit costs and levers priced from the sizing engine's throughput (:func:`finops.sizing.performance.estimate`).

The basic TCO functions take throughputs as plain numbers; this module is the convenience that asks
the sizing engine for them, so only callers who want it import sizing.

* A replica of ``tp`` GPUs costs ``GPU-hour cost x tp`` an hour; its input and output token rates are
  the estimate's served rates.
* The prefill share of GPU time is ``(TPOT - decode step) / TPOT``: in the sizing model TPOT is the
  decode step plus the chunked prefills that share it (``TPOT = step + (b / osl) x prefill``), so the
  excess over the step is the prefill part of each step.
* Levers re-run the estimate with the changed setting and price the throughput ratio: the same work
  needs ``1 / ratio`` of the GPU time.

>>> from finops.money import Money
>>> from finops.sizing.performance import estimate
>>> cost = replica_cost(estimate("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256,
...                              concurrency=32), Money.of("1.91", "USD"))
>>> str(cost.replica_month), 0 < cost.tokens.prefill_share < 0.5
('1,394.30 USD', True)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..money import Money
from ..sizing.performance import Estimate, estimate
from ._inputs import HOURS_PER_MONTH, money
from .levers import LeverEffect, quantization
from .unit_cost import TokenCosts, token_costs

__all__ = ["ReplicaCost", "prefix_cache_from_sizing", "quantization_from_sizing", "replica_cost"]

# Defaults as names: the sizing engine reads precision and engine names in any case.
_UNQUANTIZED = "bf16"
_QUANTIZED = "fp8"
_ENGINE = "vllm"


@dataclass(frozen=True)
class ReplicaCost:
    """What one serving replica costs and what its tokens cost."""

    estimate: Estimate
    replica_hour: Money
    replica_month: Money
    tokens: TokenCosts


def _served(est: Estimate) -> Estimate:
    if not est.fits or not est.output_tokens_per_s or not est.tpot_ms:
        raise InputError(f"{est.model} does not fit on {est.tp} x {est.gpu} at {est.precision} "
                         f"(short by {est.shortfall_gib:.1f} GiB)",
                         hint="raise the tensor-parallel degree (tp) or quantize the weights")
    return est


def replica_cost(est: Estimate, gpu_hour_cost: Money) -> ReplicaCost:
    """Replica-hour, replica-month and per-million-token costs of a sizing estimate at a GPU-hour price."""
    money(gpu_hour_cost, "gpu_hour_cost")
    served = _served(est)
    hourly = gpu_hour_cost * served.tp
    tpot, step = float(served.tpot_ms), float(served.decode_step_ms or 0.0)
    prefill_share = max(0.0, (tpot - step) / tpot)  # at most 1, as the step is never negative
    return ReplicaCost(served, hourly, hourly * HOURS_PER_MONTH,
                       token_costs(hourly, float(served.input_tokens_per_s or 0.0), float(served.output_tokens_per_s),
                                   prefill_share))


def quantization_from_sizing(model: str, gpu: str, *, gpus: int, cost_per_gpu_month: Money, isl: int, osl: int,
                             before: str = _UNQUANTIZED, after: str = _QUANTIZED, tp_before: int = 1,
                             tp_after: int = 1, engine: str = _ENGINE, concurrency: int | str = "max") -> LeverEffect:
    """The quantization lever with the throughput ratio from two sizing estimates (per GPU)."""
    base = _served(estimate(model, gpu, precision=before, tp=tp_before, isl=isl, osl=osl,
                            concurrency=concurrency, engine=engine))  # type: ignore[arg-type]
    quantized = _served(estimate(model, gpu, precision=after, tp=tp_after, isl=isl, osl=osl,
                                 concurrency=concurrency, engine=engine))  # type: ignore[arg-type]
    ratio = float(quantized.output_tokens_per_s_per_gpu) / float(base.output_tokens_per_s_per_gpu)  # type: ignore
    return quantization(gpus, cost_per_gpu_month, round(ratio, 4), after)


def prefix_cache_from_sizing(model: str, gpu: str, *, monthly_cost: Money, precision: str, tp: int, isl: int,
                             osl: int, hit_rate_before: float, hit_rate_after: float, engine: str = _ENGINE,
                             concurrency: int | str = "max") -> LeverEffect:
    """The prefix-cache lever: the same work at the throughput the sizing engine gives each hit rate."""
    money(monthly_cost, "monthly_cost")
    rates = [float(_served(estimate(model, gpu, precision=precision, tp=tp, isl=isl, osl=osl, engine=engine,
                                    concurrency=concurrency,  # type: ignore[arg-type]
                                    cache_hit_rate=hit)).output_tokens_per_s)  # type: ignore[arg-type]
             for hit in (hit_rate_before, hit_rate_after)]
    return LeverEffect("prefix_cache", monthly_cost, monthly_cost * round(rates[0] / rates[1], 6),
                       f"prefix-cache hit rate {hit_rate_before:.0%} -> {hit_rate_after:.0%}: "
                       f"{rates[0]:.0f} -> {rates[1]:.0f} output tokens/s per replica")
