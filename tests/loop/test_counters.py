"""Counter and histogram arithmetic against values worked out by hand from Prometheus' rules.

Resets: a sample below the previous one is a restart from zero, so its step is the sample itself
(as ``rate()``/``increase()``). Histogram quantiles interpolate linearly inside the bucket holding the
rank, as ``histogram_quantile``; P_ok interpolates the count at the target the same way.
"""

from __future__ import annotations

import math

import pytest

from finops.errors import InputError
from finops.serving import Histogram, Series, counter_steps, gaps, histogram_from_buckets, hourly_increase, increase

INF = math.inf


@pytest.mark.parametrize(("values", "expected"), [
    ([0, 10, 25, 25, 40], 40),             # no reset
    ([100, 150, 20, 70], 50 + 20 + 50),    # restart after 150: the 20 counted whole
    ([5, 3, 2, 9], 3 + 2 + 7),             # two restarts in a row
    ([7, 7, 7], 0),                        # flat
])
def test_increase_counts_resets_as_restarts(values: list[float], expected: float) -> None:
    s = Series("vllm:generation_tokens_total", {"pod": "a"}, [60.0 * i for i in range(len(values))], values)
    assert increase(s) == expected


def test_counter_with_one_sample_is_refused_with_its_name() -> None:
    s = Series("vllm:request_success_total", {"pod": "a"}, [0.0], [3.0], source="may.json")
    with pytest.raises(InputError, match=r'may.json.*vllm:request_success_total\{pod="a"\}.*two samples'):
        counter_steps(s)


@pytest.mark.parametrize(("times", "values", "message"), [
    ([0, 60, 60], [1, 2, 3], "do not increase"),
    ([0, 60, 120], [1, float("nan"), 3], "NaN"),
])
def test_bad_samples_are_refused(times: list[float], values: list[float], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Series("c", {}, times, values)


def test_hourly_increase_puts_each_step_in_the_hour_it_closes() -> None:
    # samples every 20 minutes over 2 hours; one restart in hour 2
    s = Series("c", {}, [0, 1200, 2400, 3600, 4800, 6000, 7200], [0, 4, 8, 12, 3, 6, 9])
    assert hourly_increase(s, 0, 2).tolist() == [12.0, 9.0]


def test_gap_is_a_step_over_three_median_steps() -> None:
    s = Series("c", {"pod": "x"}, [0, 300, 600, 900, 4500, 4800], [0, 1, 2, 3, 4, 5])
    [gap] = gaps(s)
    assert (gap.start, gap.end, gap.hours) == (900, 4500, 1.0)


H = Histogram((0.1, 0.5, 1.0, INF), (10.0, 30.0, 40.0, 40.0))


@pytest.mark.parametrize(("q", "seconds"), [
    (0.25, 0.1),             # rank 10: the top of the first bucket
    (0.5, 0.1 + 0.4 * 0.5),  # rank 20: half way through (0.1, 0.5], which holds 20
    (0.875, 0.75),           # rank 35: half way through (0.5, 1.0]
])
def test_quantile_interpolates_inside_the_bucket(q: float, seconds: float) -> None:
    assert H.quantile(q) == pytest.approx(seconds)


@pytest.mark.parametrize(("target", "share"), [(0.05, 5 / 40), (0.2, 15 / 40), (1.0, 1.0), (3.0, 1.0)])
def test_p_ok_is_the_share_within_the_target(target: float, share: float) -> None:
    assert H.share_within(target) == pytest.approx(share)


def test_histogram_sums_buckets_of_several_processes_and_needs_inf() -> None:
    def bucket(le: str, pod: str, values: list[float]) -> Series:
        return Series("vllm:time_to_first_token_seconds_bucket", {"le": le, "pod": pod}, [0, 60], values)

    h = histogram_from_buckets([bucket("0.5", "a", [0, 3]), bucket("+Inf", "a", [0, 4]),
                                bucket("0.5", "b", [10, 11]), bucket("+Inf", "b", [10, 14])])
    assert (h.bounds, h.counts) == ((0.5, INF), (4.0, 8.0))
    with pytest.raises(InputError, match=r"\+Inf"):
        histogram_from_buckets([bucket("0.5", "a", [0, 3])])
