"""What-if levers from the seeds, each expressed as money per month (before, after, saved).

Seed 000 lists six TCO levers; five are computed here (the sixth, monitoring, is how the inputs are
obtained). Ratios of throughput are inputs: the sizing engine (``finops.sizing``) or a load test
provides them; this module only prices their effect.

* **Quantization** (FP16 -> FP8 / INT8 / INT4): per-GPU throughput rises by ``throughput_ratio`` (and
  weights shrink, which may need fewer GPUs per replica), so ``GPUs after = ceil(GPUs before /
  throughput_ratio)``; seed 002 measures Llama-3.1-8B weights 16.06 GB -> 9.08 GB with FP8.
* **Prefix cache**: cached input tokens skip prefill, so the prefill part of GPU time scales by
  ``(1 - hit_after) / (1 - hit_before)``: ``after = cost x (1 - prefill_share + prefill_share x that)``.
* **Batching / utilization**: cost per unit of work scales by ``utilization_before / utilization_after``
  (seed 000: 40 % -> 80 % halves the cost).
* **Load shaping**: a fleet sized for its peak; moving ``shiftable_units`` of batch work from the peak
  to the off-peak trough gives ``peak after = max(peak - shift, off-peak + shift)`` (seed 000).
* **Right-sizing**: the same required capacity on a better-fitting instance,
  ``instances after = ceil(required capacity / capacity per candidate instance)``.

>>> from finops.money import Money
>>> str(utilization(Money.of(10_000, "USD"), 0.4, 0.8).saved)
'5,000.00 USD'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from ..errors import InputError
from ..money import Money, Number
from ._inputs import money, positive, share, whole

__all__ = [
    "LeverEffect",
    "LeverName",
    "load_shaping",
    "prefix_cache",
    "quantization",
    "right_sizing",
    "utilization",
]

LeverName = Literal["quantization", "prefix_cache", "utilization", "load_shaping", "right_sizing"]


@dataclass(frozen=True)
class LeverEffect:
    """A lever's effect on one month's cost."""

    lever: LeverName
    before: Money
    after: Money
    detail: str

    @property
    def saved(self) -> Money:
        return self.before - self.after

    @property
    def saved_share(self) -> float:
        return float(self.saved.amount / self.before.amount) if self.before.amount else 0.0


def quantization(gpus: int, cost_per_gpu_month: Money, throughput_ratio: Number,
                 precision: str = "fp8") -> LeverEffect:
    """Fewer GPUs for the same work after quantizing to ``precision`` (throughput per GPU x ratio).

    >>> effect = quantization(9, Money.of(13_000, "CNY"), throughput_ratio=1.6, precision="int8")
    >>> str(effect.before), str(effect.after), effect.detail
    ('117,000.00 CNY', '78,000.00 CNY', '9 -> 6 GPUs at int8 (throughput x 1.6)')
    """
    whole(gpus, "gpus")
    money(cost_per_gpu_month, "cost_per_gpu_month")
    ratio = positive(throughput_ratio, "throughput_ratio")
    after = math.ceil(Decimal(gpus) / ratio)
    return LeverEffect("quantization", cost_per_gpu_month * gpus, cost_per_gpu_month * after,
                       f"{gpus} -> {after} GPUs at {precision} (throughput x {throughput_ratio})")


def prefix_cache(monthly_cost: Money, prefill_share: Number, hit_rate_before: Number,
                 hit_rate_after: Number) -> LeverEffect:
    """Less prefill time when more input tokens hit the prefix cache.

    >>> str(prefix_cache(Money.of(10_000, "USD"), 0.4, 0.0, 0.5).after)
    '8,000.00 USD'
    """
    money(monthly_cost, "monthly_cost")
    p = share(prefill_share, "prefill_share")
    before = share(hit_rate_before, "hit_rate_before", below_one=True)
    after = share(hit_rate_after, "hit_rate_after")
    scale = 1 - p + p * (1 - after) / (1 - before)
    return LeverEffect("prefix_cache", monthly_cost, monthly_cost * scale,
                       f"prefix-cache hit rate {float(before):.0%} -> {float(after):.0%}, "
                       f"prefill {float(p):.0%} of GPU time")


def utilization(monthly_cost: Money, utilization_before: Number, utilization_after: Number) -> LeverEffect:
    """Better batching raises utilization; the cost of the same work scales by before / after.

    >>> str(utilization(Money.of(900, "EUR"), 0.3, 0.6).after)
    '450.00 EUR'
    """
    money(monthly_cost, "monthly_cost")
    before = share(utilization_before, "utilization_before", above_zero=True)
    after = share(utilization_after, "utilization_after", above_zero=True)
    return LeverEffect("utilization", monthly_cost, monthly_cost * before / after,
                       f"utilization {float(before):.0%} -> {float(after):.0%}")


def load_shaping(peak_units: Number, offpeak_units: Number, shiftable_units: Number,
                 cost_per_unit_month: Money) -> LeverEffect:
    """Move batch work off the peak: the fleet shrinks to the new, flatter peak.

    >>> effect = load_shaping(20, 8, 5, Money.of(1_000, "USD"))
    >>> str(effect.after), effect.detail
    ('15,000.00 USD', 'peak 20 -> 15 units by moving 5 units off-peak (off-peak 8 -> 13)')
    """
    money(cost_per_unit_month, "cost_per_unit_month")
    peak = positive(peak_units, "peak_units")
    trough = positive(offpeak_units, "offpeak_units", allow_zero=True)
    shift = positive(shiftable_units, "shiftable_units", allow_zero=True)
    if trough > peak:
        raise InputError(f"offpeak_units ({offpeak_units}) must not exceed peak_units ({peak_units})")
    if shift > peak:
        raise InputError(f"shiftable_units ({shiftable_units}) must not exceed peak_units ({peak_units})")
    moved = min(shift, (peak - trough) / 2)  # moving more than half the gap only makes a new peak
    new_peak = peak - moved  # = max(peak - moved, trough + moved), as moved is at most half the gap
    return LeverEffect("load_shaping", cost_per_unit_month * math.ceil(peak), cost_per_unit_month *
                       math.ceil(new_peak), f"peak {peak} -> {new_peak} units by moving "
                       f"{moved} units off-peak (off-peak {trough} -> {trough + moved})")


def right_sizing(instances: int, cost_per_instance_month: Money, required_capacity: Number,
                 candidate_capacity: Number, candidate_cost_per_instance_month: Money) -> LeverEffect:
    """Serve ``required_capacity`` on the candidate instance type instead of the current fleet.

    Capacity is in any one unit (GPUs, tokens/s, replicas) used for both the need and the candidate.

    >>> effect = right_sizing(4, Money.of(40_000, "USD"), 10_000, 3_000, Money.of(12_000, "USD"))
    >>> str(effect.after), str(effect.saved)
    ('48,000.00 USD', '112,000.00 USD')
    """
    whole(instances, "instances")
    money(cost_per_instance_month, "cost_per_instance_month")
    money(candidate_cost_per_instance_month, "candidate_cost_per_instance_month", cost_per_instance_month.currency)
    need = positive(required_capacity, "required_capacity")
    each = positive(candidate_capacity, "candidate_capacity")
    after = math.ceil(need / each)
    return LeverEffect("right_sizing", cost_per_instance_month * instances, candidate_cost_per_instance_month * after,
                       f"{instances} current instances -> {after} right-sized instances")
