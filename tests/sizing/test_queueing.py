"""The queueing approximation against exact formulas and a simulated queue; the operating point."""

from __future__ import annotations

import numpy as np
import pytest

from finops.catalog import get_accelerator, get_model
from finops.errors import InputError
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import replica_latency, replica_physics, scheduling_delay
from finops.sizing.queueing import (
    kingman_wait,
    operating_point,
    serve,
    sla_attainment,
    sla_attainment_measured,
    ttft_percentile,
)


def _simulate_wait(rho: float, service: float, n: int = 200_000, seed: int = 1) -> np.ndarray:
    """M/D/1 waiting times by Lindley's recursion W' = max(0, W + S - A)."""
    gaps = np.random.default_rng(seed).exponential(service / rho, n)
    waits = np.empty(n)
    w = 0.0
    for i in range(n):
        waits[i] = w
        w = max(0.0, w + service - gaps[i])
    return waits


@pytest.mark.parametrize("rho, ca2, cs2, expected", [
    (0.5, 1.0, 0.0, 0.5 * 0.1 / (2 * 0.5)),     # M/D/1 Pollaczek-Khinchine
    (0.8, 1.0, 1.0, 0.8 * 0.1 / 0.2),           # M/M/1
    (0.0, 1.0, 0.0, 0.0),
])
def test_kingman_matches_exact_cases(rho, ca2, cs2, expected):
    assert kingman_wait(rho, 0.1, ca2, cs2) == pytest.approx(expected)


def test_an_overloaded_queue_never_settles():
    assert kingman_wait(1.0, 0.1) == np.inf
    assert float(ttft_percentile(0.5, base_s=0.1, utilization=1.2, wait_mean_s=np.inf)) == np.inf
    assert float(sla_attainment(10.0, base_s=0.1, utilization=1.2, wait_mean_s=np.inf)) == 0.0


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_mean_and_p99_against_a_simulated_md1_queue(rho):
    service = 0.1
    waits = _simulate_wait(rho, service)
    mean = kingman_wait(rho, service)
    assert np.mean(waits) == pytest.approx(mean, rel=0.06)
    p99 = float(ttft_percentile(0.99, base_s=0.0, utilization=rho, wait_mean_s=mean))
    assert p99 == pytest.approx(np.quantile(waits, 0.99), rel=0.2)
    target = np.quantile(waits, 0.95)
    assert float(sla_attainment(target, base_s=0.0, utilization=rho, wait_mean_s=mean)) == pytest.approx(0.95, abs=0.02)


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.7, 0.95])
@pytest.mark.parametrize("p", [0.9, 0.99])
def test_percentile_and_attainment_are_inverse(rho, p):
    wait = kingman_wait(rho, 0.2)
    t = ttft_percentile(p, base_s=0.05, utilization=rho, wait_mean_s=wait)
    if rho > 1 - p:
        assert float(sla_attainment(t, base_s=0.05, utilization=rho, wait_mean_s=wait)) == pytest.approx(p)
    else:
        assert float(t) == pytest.approx(0.05)   # fewer than 1 - p requests wait at all


def test_targets_below_the_base_latency_are_never_met():
    assert float(sla_attainment(0.04, base_s=0.05, utilization=0.3, wait_mean_s=0.01)) == 0.0


@pytest.mark.parametrize("latencies, target, expected", [
    ([100, 200, 300, 400], 250, 0.5),
    ([100, 200], 200, 1.0),
    ([900], 100, 0.0),
])
def test_measured_attainment_is_the_share_within_target(latencies, target, expected):
    assert sla_attainment_measured(latencies, target) == expected


def test_measured_attainment_needs_data():
    with pytest.raises(InputError):
        sla_attainment_measured([], 100)


@pytest.fixture(scope="module")
def replica():
    phys = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    return phys, Calibration.bundled().constants("vllm")


def test_operating_point_obeys_littles_law(replica):
    phys, c = replica
    rates = np.array([0.5, 2.0, 8.0])
    op = operating_point(phys, c, arrival_rate=rates, isl=1024, osl=256)
    assert op.stable.all()
    lat = replica_latency(phys, c, isl=1024, osl=256, batch=np.maximum(op.running_batch, 1.0))
    base = lat.prefill + scheduling_delay(c, lat.step, np.maximum(op.running_batch, 1.0))
    in_system = rates * (base + op.wait_mean_s + 255 * lat.tpot)
    np.testing.assert_allclose(op.running_batch, in_system, rtol=1e-3)
    assert np.all(np.diff(op.running_batch) > 0) and np.all(np.diff(op.tpot_s) > 0)
    assert np.all(op.ttft_p99_s >= op.ttft_p50_s) and np.all(op.itl_p99_s >= op.tpot_s)


def test_operating_point_is_unstable_beyond_capacity(replica):
    phys, c = replica
    op = operating_point(phys, c, arrival_rate=np.array([1.0, 1e4]), isl=1024, osl=256)
    assert op.stable.tolist() == [True, False]
    tight = operating_point(phys, c, arrival_rate=np.array([8.0]), isl=1024, osl=256, max_batch=4)
    assert not tight.stable[0]   # more sequences in flight than the KV cache holds


def test_negative_arrival_rate_is_rejected(replica):
    phys, c = replica
    with pytest.raises(InputError):
        operating_point(phys, c, arrival_rate=-1.0, isl=1024, osl=256)


@pytest.mark.parametrize("rate, stable", [(2.0, True), (8.0, True), (1e4, False)])
def test_serve_reports_the_replica_under_load(rate, stable):
    point = serve("llama-3.1-8b", "h100-sxm", precision="fp8", tp=1, isl=1024, osl=256, arrival_rate=rate,
                  ttft_target_ms=300)
    assert point.stable is stable
    if stable:
        assert point.ttft_p99_ms >= point.ttft_p50_ms > 0 and point.output_tokens_per_s == rate * 256
        assert 0.0 < point.sla_attainment <= 1.0
    else:
        assert point.sla_attainment == 0.0 and point.output_tokens_per_s == 0.0


def test_attainment_falls_as_the_target_tightens():
    def p_ok(target):
        return serve("llama-3.1-70b", "h100-sxm", precision="fp8", tp=2, isl=4096, osl=256, arrival_rate=1.5,
                     ttft_target_ms=target).sla_attainment
    loose, tight, impossible = p_ok(5000), p_ok(600), p_ok(1)
    assert loose >= tight >= impossible == 0.0 and loose > 0.99


@pytest.mark.parametrize("kwargs", [{"arrival_rate": 0}, {"arrival_rate": 2, "ttft_target_ms": -5},
                                    {"arrival_rate": 2, "model": "llama-3.1-405b"}])
def test_serve_rejects_what_it_cannot_answer(kwargs):
    args = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "bf16", "tp": 1, "isl": 1024, "osl": 256,
            **kwargs}
    with pytest.raises(InputError):
        serve(**args)
