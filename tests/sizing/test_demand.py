"""Demand: Little's law on seed 000's case (both readings), seed 003's device count and sessions."""

import pytest

from finops.errors import InputError
from finops.sizing import concurrency, concurrency_from_rate, demand, devices_needed, presets


@pytest.mark.parametrize("requests_per_hour, growth, expected", [(5000, 1, 7), (5000, 3, 21), (3600, 1, 5)])
def test_seed_000_as_printed(requests_per_hour, growth, expected):
    assert round(concurrency_from_rate(requests_per_hour * growth, 5)) == expected


def test_seed_000_stated_inputs_give_42_not_7():
    assert concurrency(10_000, 0.05, 60, 5) == pytest.approx(41.667, abs=1e-3)
    assert round(concurrency(30_000, 0.05, 60, 5)) == 125


@pytest.mark.parametrize("preset, growth, expected", [
    ("seed000-doc-qa", 1, 41.667), ("seed000-doc-qa", 3, 125.0),
    ("seed000-doc-qa-as-printed", 1, 6.944), ("seed000-doc-qa-as-printed", 3, 20.833),
])
def test_seed_000_presets(preset, growth, expected):
    d = demand(presets()[preset].with_changes(growth=growth))
    assert d.concurrency == pytest.approx(expected, abs=1e-3)
    assert d.peak_qps * 5 == pytest.approx(d.concurrency)


@pytest.mark.parametrize("required, per_device, spare, redundancy, expected", [
    (5000, 800, 0.25, 0, 9),       # seed 003: ceil(ceil(6.25) x 1.25) = ceil(8.75)
    (5000, 800, 0.25, 1, 10),
    (4000, 800, 0.25, 0, 7),       # 5 x 1.25 = 6.25 -> 7
    (1000, 100, 0.10, 0, 11),      # 10 x 1.1 is 11, not 12 (float round-off)
    (7, 6, 0.30, 0, 3),            # seed 000: 2 x 1.3 = 2.6 -> 3
    (0, 800, 0.25, 2, 2),
])
def test_devices_needed(required, per_device, spare, redundancy, expected):
    assert devices_needed(required, per_device, spare, redundancy) == expected


@pytest.mark.parametrize("call", [
    lambda: concurrency(-1, 0.05, 60, 5), lambda: concurrency(10_000, 0, 60, 5),
    lambda: concurrency(10_000, 1.5, 60, 5), lambda: concurrency_from_rate(5000, 0),
    lambda: devices_needed(100, 0), lambda: devices_needed(100, 10, -0.1),
    lambda: devices_needed(100, 10, 0.1, redundancy=-1), lambda: devices_needed(float("nan"), 10),
])
def test_bad_input(call):
    with pytest.raises(InputError):
        call()


def test_per_day_with_peak_factor():
    w = presets()["seed000-doc-qa"].with_changes(requests_per_user_per_hour=None, requests_per_user_per_day=20,
                                                 peak_to_average=3, online_share=None)
    d = demand(w)
    assert d.basis == "users_per_day"
    assert d.peak_qps == pytest.approx(10_000 * 20 / 86_400 * 3)
    assert d.concurrency == pytest.approx(d.peak_qps * 5)


def test_seed_003_sessions_give_r_equals_c_times_v():
    d = demand(presets()["seed003-customer-service"])
    assert d.basis == "sessions"
    assert d.concurrency == 10_000
    assert d.output_tokens_per_s == pytest.approx(300_000)
    assert d.peak_qps is None
    timed = demand(presets()["seed003-customer-service"], seconds_per_request=8.0)
    assert timed.peak_qps == pytest.approx(1250)
    assert timed.output_tokens_per_s == pytest.approx(1250 * 256)


def test_stated_concurrency_needs_request_time_for_qps():
    w = presets()["seed002-financial-copilot"]
    assert demand(w).peak_qps is None and demand(w).concurrency == 50
    d = demand(w, seconds_per_request=10)
    assert d.peak_qps == 5
    assert (d.input_tokens_per_s, d.output_tokens_per_s) == (25_000, 2_500)


def test_cache_hits_remove_prefill_work():
    w = presets()["seed000-doc-qa"].with_changes(cache_hit_rate=0.75)
    d = demand(w)
    assert d.prefill_tokens_per_s == pytest.approx(d.input_tokens_per_s * 0.25)
