"""Error bands by class (finops/sizing/bands.py, confidence.py) and the load a sized replica runs.

* A band built from held-out residuals covers its nominal share (P10-P90: 80 %) of residuals not used to
  build it: the bundled residuals are split in two at random within each family and metric (so both halves
  hold the same families), the band built on one half and its coverage measured on the other,
  family-weighted as the band is. The tolerance is binomial: three standard errors of a share of
  0.8, the variance that of the band's own estimate (the quantiles of the half it was built on, over that half's
  Kish effective number of weighted rows) plus that of the coverage counted on the other half (over its own), from
  the data, not from a run.
* Every seed preset's first recommendation meets its targets at the pessimistic end of its band: its
  replicas re-served at the load and latencies of the band's P90 end (finops.sizing.queueing by hand, the
  ratios read from Calibration.band), stable, and within the TTFT and ITL targets.
* A closed population never runs a batch larger than its clients (property test over concurrency
  workloads, and the closed-population point itself).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finops.catalog import get_accelerator, get_model
from finops.price_book import PriceBook
from finops.sizing.bands import (
    MIN_BAND_ROWS,
    band_keys,
    bands_by_class,
    bundled_held_out,
    weighted_quantiles,
)
from finops.sizing.demand import demand
from finops.sizing.engine_constants import Calibration, model_class
from finops.sizing.performance import estimate, replica_physics, with_client
from finops.sizing.queueing import closed_population, operating_point
from finops.sizing.search import SIZING_CLIENT, search
from finops.sizing.vendor_efficiency import BAND_LEVELS
from finops.sizing.workload import Workload, presets

METRICS = ("ttft_ms", "tpot_ms", "output_tokens_per_s")


def _halves():
    """The bundled residuals split in two at random (seeded) within each family and metric, the families
    with at least MIN_BAND_ROWS rows of the metric (a family of four rows would decide the tolerance)."""
    groups = defaultdict(list)
    for r in bundled_held_out():
        groups[(r.family, r.metric)].append(r)
    rng = np.random.default_rng(37)
    train, test = [], []
    for key in sorted(groups):
        rows = groups[key]
        if len(rows) < MIN_BAND_ROWS:
            continue
        order = rng.permutation(len(rows))
        train += [rows[i] for i in order[0::2]]
        test += [rows[i] for i in order[1::2]]
    return train, test


@pytest.mark.parametrize("reach, metric", [(reach, metric) for reach in ("kernels", "unmeasured") for metric in METRICS])
def test_a_band_covers_its_nominal_share_of_residuals_it_was_not_built_on(reach, metric):
    train, test = _halves()
    band = bands_by_class(train, [metric], reaches=(reach,)).get(reach, {}).get(metric)
    pool = {"kernels": {"kernels"}, "unmeasured": {"kernels", "unmeasured"}}[reach]
    mine = [r for r in test if r.metric == metric and r.reach in pool]
    if band is None:
        assert len(mine) < MIN_BAND_ROWS + 2   # too few rows on either half to keep a band
        return
    low, high = band[BAND_LEVELS.index(0.1)], band[BAND_LEVELS.index(0.9)]
    families = defaultdict(int)
    for r in mine:
        families[r.family] += 1
    weights = np.array([1.0 / families[r.family] for r in mine])
    inside = np.array([low <= r.ratio <= high for r in mine])
    coverage = float(np.sum(weights * inside) / np.sum(weights))
    effective = _kish(r.family for r in mine)
    built_on = _kish(r.family for r in train if r.metric == metric and r.reach in pool)
    spread = math.sqrt(0.8 * 0.2 / built_on + 0.8 * 0.2 / effective)
    assert abs(coverage - 0.8) <= 3 * spread + 1.0 / effective


def _kish(families) -> float:
    """Kish's effective sample size of rows weighed 1 / (their family's rows): (sum w)^2 / sum w^2."""
    counts = defaultdict(int)
    for family in families:
        counts[family] += 1
    weights = np.array([1.0 / n for n in counts.values() for _ in range(n)])
    return float(np.sum(weights) ** 2 / np.sum(weights ** 2))


def test_weighted_quantiles_weigh_each_family_alike():
    """30 rows at 1.0 from one family and 10 at 3.0 from another: unweighted, P60 is 1.0; weighted by family,
    the two families each hold half and P60 lies on the second family's side."""
    values = [1.0] * 30 + [3.0] * 10
    assert np.quantile(values, 0.6) == 1.0
    assert weighted_quantiles(values, [1 / 30] * 30 + [1 / 10] * 10, (0.6,))[0] == 3.0


def test_an_unmeasured_accelerator_gets_the_widest_band_and_names_its_class():
    cal = Calibration.bundled()
    args = {"model": "llama-3.1-8b", "precision": "bf16", "tp": 1, "isl": 1024, "osl": 256, "concurrency": 16}
    widths = {}
    # the L4: an NVIDIA part with neither kernel tables nor a family fit (Inferentia2 now has its family's)
    for gpu, reach in (("h100-sxm", "measured"), ("a100-80gb", "kernels"), ("l4", "unmeasured")):
        e = estimate(gpu=gpu, **args)
        assert e.extrapolation == reach
        assert e.band_classes["tpot_ms"] in band_keys("vllm", "dense", 1, reach)
        widths[reach] = {m: getattr(e, f"{m}_band")[1] / getattr(e, f"{m}_band")[0] for m in METRICS}
    # a wider reach envelops the nearer one's: never narrower on any metric, wider than measured hardware's
    # TPOT, and wider than the kernel tables' somewhere (vLLM's unmeasured TPOT spread, A10G and Neuron and
    # CDNA3 under its constants, lies inside the kernels reach's; its TTFT spread does not)
    assert all(widths["unmeasured"][m] >= widths["kernels"][m] - 1e-9 for m in METRICS)
    assert widths["unmeasured"]["tpot_ms"] > widths["measured"]["tpot_ms"]
    assert any(widths["unmeasured"][m] > widths["kernels"][m] * 1.05 for m in METRICS)
    band = cal.bands["unmeasured"]["tpot_ms"]
    assert band[BAND_LEVELS.index(0.9)] / band[BAND_LEVELS.index(0.1)] > 1.5   # the leave-one-family-out spread


def test_a_family_fit_answers_with_its_own_band():
    e = estimate("llama-3.1-70b", "mi300x", precision="fp8", kv_precision="fp8", tp=8, isl=128, osl=2048,
                 concurrency=1)
    assert e.extrapolation == "fitted" and e.band_classes["tpot_ms"] == "amd-cdna3:vllm"
    assert e.band_classes["ttft_ms"] in band_keys("vllm", "dense", 8, "fitted")   # its rows report no TTFT


def _pessimistic_end(workload: Workload, option, cal: Calibration):
    """The option's replicas re-served at the P90 end of its band: (stable, TTFT, ITL) at the percentile."""
    model = workload.model_spec()
    gpu = get_accelerator(option.gpu)
    reach = cal.reach("vllm", gpu)
    vendor = cal.vendor_efficiency("vllm", gpu)

    def ratio(metric, level):
        found = cal.band("vllm", metric, level, model_class(model), vendor, tp=option.tp, reach=reach)
        return 1.0 if found is None else found

    e = estimate(model, gpu, precision=option.precision, tp=option.tp, isl=workload.isl, osl=workload.osl,
                 concurrency=1)
    phys = replica_physics(model, gpu, precision=option.precision, tp=option.tp, kv_precision=e.kv_precision,
                           prefill_token_budget=e.prefill_token_budget, engine="vllm", efficiency=vendor)
    constants = with_client(cal.constants("vllm"), SIZING_CLIENT)
    limit = min(e.max_concurrency, e.max_batch)
    need = demand(workload)
    if need.peak_qps is not None:
        op = operating_point(phys, constants, arrival_rate=need.peak_qps / option.replicas_at_slo
                             / ratio("output_tokens_per_s", 0.1), isl=workload.isl, osl=workload.osl,
                             max_batch=limit)
    else:
        op, _ = closed_population(phys, constants, clients=need.concurrency / option.replicas_at_slo,
                                  isl=workload.isl, osl=workload.osl, max_batch=limit)
    p99 = workload.slo_percentile == "p99"
    ttft = float(op.ttft_p99_s if p99 else op.ttft_p50_s) * 1e3 * ratio("ttft_ms", 0.9)
    itl = float(op.itl_p99_s if p99 else op.tpot_s) * 1e3 * ratio("tpot_ms", 0.9)
    return bool(op.stable), ttft, itl


@pytest.mark.parametrize("name", list(presets()))
def test_every_seed_presets_first_recommendation_meets_its_targets_at_the_pessimistic_end(name):
    workload = presets()[name]
    cal = Calibration.bundled()
    result = search(workload, top=1, price_book=PriceBook.bundled())
    first = result.options[0]
    stable, ttft, itl = _pessimistic_end(workload, first, cal)
    assert stable
    assert workload.ttft_ms is None or ttft <= workload.ttft_ms * (1 + 1e-9)
    assert workload.itl_ms is None or itl <= workload.itl_ms * (1 + 1e-9)
    assert first.gpus_band[1] == first.gpus      # sized at the band's pessimistic end
    assert first.gpus_band[0] <= first.gpus


def test_an_extrapolated_option_is_sized_at_its_pessimistic_end():
    """Seed 000's doc Q&A on the L4 (vLLM's NVIDIA constants, no kernel tables or family fit: unmeasured): the
    fleet at the default confidence is the band's pessimistic end, more than twice its optimistic end, and
    larger than at the median."""
    workload = presets()["seed000-doc-qa"]
    book = PriceBook.bundled()
    at_90 = search(workload, gpus=["l4"], top=1, price_book=book).options[0]
    at_50 = search(workload, gpus=["l4"], top=1, price_book=book, confidence=0.5).options[0]
    assert at_90.extrapolation == "unmeasured"
    assert at_90.gpus == at_90.gpus_band[1] > 2 * at_90.gpus_band[0]
    assert at_90.gpus > at_50.gpus


def test_an_inferentia2_option_reads_its_family_fit_and_its_band():
    """Seed 000's doc Q&A on Inferentia2: the neuron-v2 family fit answers it (reach ``fitted``, not
    ``unmeasured``), its evidence says so, and the fleet is sized at the pessimistic end of the family fit's
    held-out band, which (its rows from one publication) envelops the unmeasured spread of its class."""
    workload = presets()["seed000-doc-qa"]
    book = PriceBook.bundled()
    neuron = search(workload, gpus=["inferentia2"], top=1, price_book=book).options[0]
    l4 = search(workload, gpus=["l4"], top=1, price_book=book).options[0]
    assert (neuron.extrapolation, neuron.efficiency_source) == ("fitted", "neuron-v2:vllm")
    assert (neuron.evidence["extrapolation"], neuron.evidence["family"]) == ("fitted", "neuron-v2")
    assert neuron.gpus == neuron.gpus_band[1] >= neuron.gpus_band[0]
    cal = Calibration.bundled()
    assert cal.vendors["neuron-v2:vllm"].band_sources["tpot_ms"] == 1
    unmeasured = cal.band_ratios("vllm", "tpot_ms", "dense", tp=neuron.tp, reach="unmeasured")
    assert neuron.tpot_band_ratio[0] <= unmeasured[0] * (1 + 1e-9)
    assert neuron.tpot_band_ratio[1] >= unmeasured[1] * (1 - 1e-9)
    assert l4.extrapolation == "unmeasured"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clients=st.floats(min_value=1.0, max_value=5000.0), itl=st.sampled_from([None, 25.0, 60.0]),
       model=st.sampled_from(["llama-3.1-8b", "llama-2-7b"]), seconds=st.sampled_from([None, 0.5, 3.0]))
def test_a_closed_population_never_runs_a_batch_larger_than_its_clients(clients, itl, model, seconds):
    """Whatever request rate a stated time per request implies, a stated concurrency stays a closed population."""
    workload = Workload(name="closed", model=model, isl=512, osl=256, concurrency=clients, itl_ms=itl,
                        seconds_per_request=seconds)
    result = search(workload, gpus=["h100-sxm", "a100-80gb", "l40s"], top=5, price_book=PriceBook.bundled())
    for o in result.options:
        assert o.running_batch <= max(clients / o.replicas_at_slo, 1.0) * (1 + 1e-12)


@given(clients=st.floats(min_value=0.01, max_value=1e4))
@settings(max_examples=50, deadline=None)
def test_the_closed_population_point_runs_its_clients(clients):
    phys = replica_physics(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    op, rate = closed_population(phys, Calibration.bundled().constants("vllm"), clients=clients, isl=1024,
                                 osl=256, max_batch=512)
    assert float(op.running_batch) == max(clients, 1.0)
    assert bool(op.stable) == (max(clients, 1.0) <= 512)
    assert float(op.ttft_p99_s) >= float(op.ttft_p50_s) > 0 and float(rate) > 0
