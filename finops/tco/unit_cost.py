"""Unit costs: per GPU-hour, per replica-month, per million tokens (input and output apart).

Throughputs are floats (tokens per second, physics); costs are :class:`~finops.money.Money`.

Formulas (seed 003: "cost per token = hourly device cost / tokens per hour; compare per million"):

* cost per GPU-hour = hourly cost / GPUs.
* cost per replica-month = cost per GPU-hour x GPUs per replica x 730 h.
* cost per million tokens = hourly cost / (tokens/s x 3,600) x 1,000,000.
* at the average load, the fleet fixed at its peak size: the peak figure x peak-to-average (the month
  costs the same and serves peak-to-average times fewer tokens).
* input and output apart: a replica's GPU time is split between prefill (input tokens) and decode
  (output tokens) by their shares of time, so
  ``input cost per M = hourly x prefill share / (input tokens/s x 3,600) x 10^6`` and
  ``output cost per M = hourly x (1 - prefill share) / (output tokens/s x 3,600) x 10^6``, where the
  token rates are the replica's served averages over wall-clock time. The prefill share of one request
  is ``(input / prefill rate) / (input / prefill rate + output / decode rate)``.

>>> from finops.money import Money
>>> cost_per_million_tokens(Money.of("6.88", "USD"), 1000).rounded()
Money(amount=Decimal('1.91'), currency='USD')
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..errors import InputError
from ..money import Money, Number
from ._inputs import HOURS_PER_MONTH, money, positive, share, whole

__all__ = ["TokenCosts", "cost_per_gpu_hour", "cost_per_million_tokens", "cost_per_million_tokens_at_average",
           "cost_per_replica_month", "prefill_time_share", "token_costs"]

_SECONDS_PER_HOUR = 3600
_MILLION = 1_000_000


def cost_per_gpu_hour(hourly_cost: Money, gpus: int) -> Money:
    """Hourly cost of a machine divided by its GPUs.

    >>> cost_per_gpu_hour(Money.of("55.04", "USD"), 8)
    Money(amount=Decimal('6.88'), currency='USD')
    """
    money(hourly_cost, "hourly_cost")
    return hourly_cost / whole(gpus, "gpus")


def cost_per_replica_month(gpu_hour_cost: Money, gpus_per_replica: int) -> Money:
    """A serving replica's monthly cost: GPU-hour cost x GPUs per replica x 730 h.

    >>> str(cost_per_replica_month(Money.of("1.60", "USD"), 2))
    '2,336.00 USD'
    """
    money(gpu_hour_cost, "gpu_hour_cost")
    return gpu_hour_cost * (whole(gpus_per_replica, "gpus_per_replica") * HOURS_PER_MONTH)


def cost_per_million_tokens(hourly_cost: Money, tokens_per_s: float) -> Money:
    """Cost of a million tokens at ``tokens_per_s`` served by what ``hourly_cost`` pays for.

    >>> cost_per_million_tokens(Money.of(36, "USD"), 10_000)
    Money(amount=Decimal('1'), currency='USD')
    """
    money(hourly_cost, "hourly_cost")
    rate = positive(tokens_per_s, "tokens_per_s")
    return hourly_cost * _MILLION / (rate * _SECONDS_PER_HOUR)


def cost_per_million_tokens_at_average(hourly_cost: Money, peak_tokens_per_s: float,
                                       peak_to_average: Number) -> Money:
    """Cost of a million tokens at the average load, the fleet fixed at its peak size.

    The hours are paid for at the peak's size and serve ``peak_tokens_per_s / peak_to_average`` on
    average, so the cost is the peak figure x ``peak_to_average`` (seed 003's cost per token with the
    tokens actually served).

    >>> cost_per_million_tokens_at_average(Money.of(36, "USD"), 10_000, 2.5)
    Money(amount=Decimal('2.5'), currency='USD')
    """
    return cost_per_million_tokens(hourly_cost, peak_tokens_per_s) * _ratio(peak_to_average)


def _ratio(peak_to_average: Number) -> Decimal:
    ratio = positive(peak_to_average, "peak_to_average")
    if ratio < 1:
        raise InputError(f"peak_to_average is peak over average, at least 1, got {peak_to_average!r}",
                         hint="e.g. 2.5 for a peak 2.5 times the average")
    return ratio


def prefill_time_share(input_tokens: float, output_tokens: float, prefill_tokens_per_s: float,
                       decode_tokens_per_s: float) -> float:
    """Share of GPU time spent on prefill for requests of ``input_tokens`` in and ``output_tokens`` out.

    >>> round(prefill_time_share(2000, 500, prefill_tokens_per_s=10_000, decode_tokens_per_s=1_000), 4)
    0.2857
    """
    prefill = float(positive(input_tokens, "input_tokens", allow_zero=True)) / float(
        positive(prefill_tokens_per_s, "prefill_tokens_per_s"))
    decode = float(positive(output_tokens, "output_tokens", allow_zero=True)) / float(
        positive(decode_tokens_per_s, "decode_tokens_per_s"))
    if prefill + decode == 0:
        raise InputError("input_tokens and output_tokens are both 0", hint="a request has at least one token")
    return prefill / (prefill + decode)


@dataclass(frozen=True)
class TokenCosts:
    """Cost per million input tokens, per million output tokens and per million tokens of either kind."""

    per_million_input: Money
    per_million_output: Money
    per_million_tokens: Money
    prefill_share: float

    def at_average(self, peak_to_average: Number) -> TokenCosts:
        """The same costs at the average load, the fleet fixed at its peak size: each x ``peak_to_average``.

        >>> c = token_costs(Money.of(36, "USD"), 8000, 2000, 0.2).at_average(2)
        >>> str(c.per_million_input), str(c.per_million_output), str(c.per_million_tokens)
        ('0.50 USD', '8.00 USD', '2.00 USD')
        """
        ratio = _ratio(peak_to_average)
        return TokenCosts(self.per_million_input * ratio, self.per_million_output * ratio,
                          self.per_million_tokens * ratio, self.prefill_share)


def token_costs(hourly_cost: Money, input_tokens_per_s: float, output_tokens_per_s: float,
                prefill_share: Number) -> TokenCosts:
    """Split ``hourly_cost`` between input and output tokens by the prefill share of GPU time.

    >>> c = token_costs(Money.of(36, "USD"), input_tokens_per_s=8000, output_tokens_per_s=2000, prefill_share=0.2)
    >>> str(c.per_million_input), str(c.per_million_output), str(c.per_million_tokens)
    ('0.25 USD', '4.00 USD', '1.00 USD')
    """
    money(hourly_cost, "hourly_cost")
    p = share(prefill_share, "prefill_share")
    inputs = positive(input_tokens_per_s, "input_tokens_per_s", allow_zero=p == 0)
    outputs = positive(output_tokens_per_s, "output_tokens_per_s", allow_zero=p == 1)
    per_hour = hourly_cost * _MILLION / _SECONDS_PER_HOUR
    zero = Money.zero(hourly_cost.currency)
    return TokenCosts(
        per_million_input=per_hour * p / inputs if inputs else zero,
        per_million_output=per_hour * (1 - p) / outputs if outputs else zero,
        per_million_tokens=per_hour / (inputs + outputs),
        prefill_share=float(p))
