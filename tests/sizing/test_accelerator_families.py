"""Collectives by link, Neuron as it runs, each engine's KV share, and the evidence an estimate carries.

Expected values are worked by hand from the catalog's figures (links.csv, accelerators.csv, the models' configs)
and the formulas in finops/sizing/collectives.py and finops/sizing/memory.py; the published rows' checks use
rows the product never fits on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from finops.catalog import get_accelerator, get_link, get_model, instances_for_gpu
from finops.sizing.collectives import allreduce_seconds, link_extra
from finops.sizing.engine_constants import Calibration
from finops.sizing.memory import kv_bytes_per_token_per_gpu, memory_fit, weight_bytes
from finops.sizing.performance import estimate
from finops.sizing.published import fittable, published_rows

from .test_vendor_efficiency import own_and_engine_error

GIB = 2.0 ** 30


# ---- collectives by link --------------------------------------------------------------------------------
def test_an_allreduce_on_a_pcie_ring_by_hand():
    """4 GPUs on PCIe Gen4: 2 x 3 ring steps of 4 us, and 2 x 3/4 of 1 MiB at 0.75 x 32 GB/s."""
    expected = 6 * 4e-6 + 1.5 * 2 ** 20 / (32e9 * 0.75)
    assert allreduce_seconds(get_link("pcie-gen4"), 2 ** 20, 4) == pytest.approx(expected, rel=1e-12)


def test_a_switch_is_two_steps_and_a_mesh_grows_with_its_peers():
    nvswitch, mesh = get_link("nvlink-4"), get_link("infinity-fabric-mi300")
    assert (nvswitch.steps(2), nvswitch.steps(8), get_link("ici-v6e").steps(8)) == (2, 2, 14)
    assert [mesh.bandwidth_gbps(n) for n in (2, 4, 8)] == [64.0, 192.0, 448.0]


def test_the_calibrated_links_add_nothing_and_the_others_add_their_difference():
    assert link_extra(get_link("nvlink-4"), 8) == link_extra(get_link("nvlink-5"), 8) == (0.0, 0.0)
    latency, per_byte = link_extra(get_link("pcie-gen4"), 4)
    assert latency == pytest.approx(6 * 4e-6 - 2 * 3e-6)
    assert per_byte == pytest.approx(1.5 / (32e9 * 0.75) - 1.5 / (450e9 * 0.75))


def test_every_accelerator_names_a_link_of_the_table():
    from finops.catalog import accelerators

    assert all(get_link(a.link).id == a.link for a in accelerators().values())


def test_tensor_parallelism_over_pcie_pays_for_its_link():
    """vLLM on L40S at TP 4: the same configuration with NVLink 4's physics is faster, the decode step by what
    two all-reduces a layer cost beyond NVLink 4 (by hand from the link table)."""
    args = {"precision": "fp8", "tp": 4, "isl": 2048, "osl": 256, "concurrency": 32, "engine": "vllm"}
    l40s = get_accelerator("l40s")
    on_pcie = estimate("llama-3.1-70b", l40s, **args)
    on_nvlink = estimate("llama-3.1-70b", replace(l40s, link="nvlink-4"), **args)
    model = get_model("llama-3.1-70b")
    latency, per_byte = link_extra(get_link("pcie-gen4"), 4)
    extra = 2 * model.layers * (latency + 32 * model.hidden_size * 2 * per_byte)
    assert (on_pcie.decode_step_ms - on_nvlink.decode_step_ms) / 1e3 == pytest.approx(extra, rel=1e-6)
    assert on_pcie.ttft_ms > on_nvlink.ttft_ms


@pytest.mark.parametrize("gpu, tp, source", [
    ("l40s", 2, "kernels"),       # the tables' all-reduce is 1.2x the link's: they time the step
    ("l40s", 4, "roofline"),      # 4.7x: the link's collectives do
    ("l40s", 8, "roofline"),
    ("h100-sxm", 8, "kernels"),
    ("a100-80gb", 8, "kernels"),
])
def test_kernel_tables_time_a_step_only_where_their_allreduce_agrees_with_the_link(gpu, tp, source):
    e = estimate("llama-3.1-70b", gpu, precision="fp8" if gpu != "a100-80gb" else "bf16", tp=tp, isl=1024,
                 osl=128, concurrency=8, engine="trtllm")
    assert e.step_time_source == source


# ---- each engine's KV share ----------------------------------------------------------------------------
def test_tensorrt_llm_takes_its_kv_share_of_the_memory_left_after_the_weights():
    """Llama-3.1-70B FP16 on 2 x A100-80GB: 65.7 GiB of weights a GPU of 79.2 usable, 2 GiB runtime."""
    weights = weight_bytes(get_model("llama-3.1-70b"), "fp16") / 2 / GIB
    of_whole = memory_fit("llama-3.1-70b", "a100-80gb", precision="fp16", tp=2, isl=128, osl=2048)
    of_free = memory_fit("llama-3.1-70b", "a100-80gb", precision="fp16", tp=2, isl=128, osl=2048,
                         of_free_memory=True)
    assert of_whole.kv_budget_gib == pytest.approx(79.2 * 0.9 - weights - 2.0)
    assert of_free.kv_budget_gib == pytest.approx((79.2 - weights - 2.0) * 0.9)
    assert of_free.max_concurrency > 2.5 * of_whole.max_concurrency
    trt = estimate("llama-3.1-70b", "a100-80gb", precision="fp16", tp=2, isl=128, osl=2048, engine="trtllm")
    vllm = estimate("llama-3.1-70b", "a100-80gb", precision="fp16", tp=2, isl=128, osl=2048, engine="vllm")
    assert (trt.max_concurrency, vllm.max_concurrency) == (of_free.max_concurrency, of_whole.max_concurrency)


# ---- Neuron as it runs -----------------------------------------------------------------------------------
def test_neuron_counts_tp_in_neuroncores_and_pads_heads_it_does_not_divide():
    """Llama-2-13B (40 query and 40 KV heads of 128, hidden 5,120, 40 layers) on 12 Inferentia2 chips = 24
    NeuronCores: 48 query heads, 48 KV heads (2 a core), so 8 + 8 padded heads' projections."""
    model = get_model("llama-2-13b")
    padded = 2 * (8 + 8) * 128 * 5120 * 40 * 2.0          # q and o rows, k and v rows, BF16
    fit = memory_fit(model, "inferentia2", precision="bf16", tp=12, isl=1024, osl=1024)
    assert fit.weights_gib == pytest.approx((weight_bytes(model, "bf16") + padded) / 12 / GIB)
    per_core = 2 * 2 * 128 * 40 * 2.0                      # 2 KV heads a core, K and V, 40 layers, BF16
    assert kv_bytes_per_token_per_gpu(model, 12, "bf16", get_accelerator("inferentia2")) == 2 * per_core
    e = estimate(model, "inferentia2", precision="bf16", tp=12, isl=1024, osl=1024, concurrency=1)
    assert e.fits and e.tpot_ms > 0
    with pytest.raises(Exception, match="evenly"):
        estimate(model, "h100-sxm", precision="bf16", tp=3, isl=1024, osl=1024, concurrency=1)


def test_a_neuron_prompt_is_padded_to_its_bucket():
    """129 and 256 prompt tokens both run as the 256 bucket on Inferentia2; on an H100 they differ."""
    def prefill(gpu: str, isl: int) -> float:
        return estimate("llama-3.1-8b", gpu, precision="bf16", tp=1, isl=isl, osl=64, concurrency=1).prefill_ms

    assert prefill("inferentia2", 129) == pytest.approx(prefill("inferentia2", 256), rel=1e-9)
    assert prefill("h100-sxm", 129) < prefill("h100-sxm", 256)


def test_trainium2_is_in_the_catalog_with_its_instance():
    trn2 = get_accelerator("trn2")
    assert (trn2.bf16_tflops, trn2.fp8_tflops, trn2.memory_gb, trn2.memory_bandwidth_gbps) == (667, 1299, 96, 2900)
    assert (trn2.tp_units_per_chip, trn2.family, trn2.link) == (4, "neuron-v3", "neuronlink-v3")
    assert [(i.instance_type, i.gpu_count) for i in instances_for_gpu("trainium2")] == [("trn2.48xlarge", 16)]


def test_trainium2_is_priced_and_sized_at_the_pessimistic_end_of_the_unmeasured_band():
    """With its on-demand price (85.964 USD an instance-hour, us-east-2) Trainium2 is searched, not listed as
    unpriced; no measurement covers NeuronCore-v3, so its option carries the ``unmeasured`` class and is sized
    at that band's pessimistic end, which is more than twice its optimistic end here."""
    from finops.price_book import PriceBook
    from finops.sizing.search import search
    from finops.sizing.workload import presets

    result = search(presets()["seed000-doc-qa"], gpus=["trainium2"], top=1, price_book=PriceBook.bundled())
    assert "trainium2" not in result.unpriced
    option = result.options[0]
    assert (option.instance_type, option.region, option.extrapolation) == ("trn2.48xlarge", "us-east-2", "unmeasured")
    assert option.evidence["family_measured"] is False
    assert option.gpus == option.gpus_band[1] > 2 * option.gpus_band[0]
    assert option.gpus_paid == 16 * option.instances
    assert option.monthly_cost.amount == option.hourly_cost.amount * 730


# ---- the evidence an estimate carries --------------------------------------------------------------------
@pytest.mark.parametrize("gpu, source, measured_here, family_measured", [
    ("inferentia2", "neuron-v2:vllm", True, True),     # Neuron's own tables
    ("trainium1", "neuron-v2:vllm", False, True),      # the same chip, no rows of its own
    ("trainium2", "none", False, False),               # NeuronCore-v3: nothing of its own, no AWS part measured
    ("tpu-v6e", "tpu-v6e:sglang>vllm", True, True),    # its rows ran SGLang-JAX: carried to vLLM
    ("tpu-v5e", "none", False, False),                 # no row of its own family: nothing answers
    ("l4", "engine", False, False),
    ("mi300x", "amd-cdna3:vllm", True, True),
    ("h20", "nvidia-h20:sglang>vllm", True, True),    # its rows ran SGLang: carried to vLLM
    ("h100-sxm", "engine", True, True),
])
def test_every_estimate_says_which_measurements_answered_it(gpu, source, measured_here, family_measured):
    e = estimate("llama-3.1-8b", gpu, precision="bf16", tp=1, isl=1024, osl=256, concurrency=4)
    ev = e.evidence
    assert (e.efficiency_source, ev["efficiency_source"]) == (source, source)
    assert (ev["measured_accelerator"], ev["family_measured"]) == (measured_here, family_measured)
    assert ev["family"] == get_accelerator(gpu).family
    assert bool(ev["sources"]) == family_measured
    assert ev["measured_engine"] == {"nvidia-h20:sglang>vllm": "sglang", "tpu-v6e:sglang>vllm": "sglang"}.get(
        source, "vllm" if family_measured else None)
    if source == "neuron-v2:vllm":
        assert ev["sources"] == ["neuron-sdk-2.18-inf2"]
        assert ev["inside_measured_range"] is False      # 1 chip: the tables ran 12


def test_the_neuron_fit_beats_the_engines_constants_on_neurons_rows():
    """On the Inferentia2 rows, the family's efficiencies predict throughput and TPOT better than the
    NVIDIA-fitted engine's (the held-out figures are benchmarks/bench_published.py's)."""
    own, engine = own_and_engine_error([r for r in fittable(published_rows())
                                        if r.gpu == "inferentia2" and r.metric != "ttft_ms"])
    assert own < engine and own < 0.15


# ---- the derived data ------------------------------------------------------------------------------------
COLLECTED = Path(__file__).parents[2] / "finops" / "data" / "calibration" / "published-wide-2026-12.csv"


def test_the_bundled_published_rows_are_what_the_script_derives(tmp_path):
    import runpy

    script = Path(__file__).parents[2] / "scripts" / "derive_published_serving.py"
    out = tmp_path / "derived.csv"
    module = runpy.run_path(str(script))
    module["main"](["derive", str(COLLECTED), str(out)])
    bundled = Path(__file__).parents[2] / "finops" / "data" / "calibration" / "published_serving.csv"
    assert out.read_text(encoding="utf-8") == bundled.read_text(encoding="utf-8")


def test_every_sizing_option_carries_its_evidence():
    """The search's options say which measurements answer them, as estimate does, the family fit's range judged
    at the option's own running batch."""
    from finops.sizing.search import search
    from finops.sizing.workload import presets

    result = search(presets()["seed002-marketing-content"], gpus=("inferentia2", "l4", "h100-sxm"), top=30)
    by_gpu = {o.gpu: o for o in reversed(result.options)}
    assert set(by_gpu) == {"inferentia2", "l4", "h100-sxm"}
    neuron, l4 = by_gpu["inferentia2"].evidence, by_gpu["l4"].evidence
    assert (neuron["efficiency_source"], neuron["family_measured"], neuron["sources"]) == (
        "neuron-v2:vllm", True, ["neuron-sdk-2.18-inf2"])
    fit = Calibration.bundled().vendors["neuron-v2:vllm"]
    option = by_gpu["inferentia2"]
    assert neuron["inside_measured_range"] == fit.inside(option.tp, get_model("mistral-7b").active_params_b,
                                                         option.running_batch)
    assert (l4["efficiency_source"], l4["family_measured"], l4["sources"]) == ("engine", False, [])
    assert by_gpu["h100-sxm"].evidence["family_measured"] is True


@pytest.mark.parametrize("model, gpu, precision, tp, clients, metric, value", [
    # results/sagemaker.csv of the TGI 1.0.3 Llama 2 benchmark (philschmid/text-generation-inference-tests@f020075),
    # one line each: 'meta-llama/Llama-2-7b-hf,ml.g5.2xlarge,1,none,...,1,32.38377487262304,...,30.962235'
    ("llama-2-7b", "a10g", "fp16", 1, 1, "output_tokens_per_s", 32.38),
    ("llama-2-7b", "a10g", "fp16", 1, 1, "tpot_ms", 30.96),
    # 'meta-llama/Llama-2-70b-hf,ml.g5.48xlarge,8,none,...,20,51.601566662176026,...,413.15819450000004'
    ("llama-2-70b", "a10g", "fp16", 8, 20, "output_tokens_per_s", 51.6),
    ("llama-2-70b", "a10g", "fp16", 8, 20, "tpot_ms", 413.16),
    # 'TheBloke/Llama-2-13B-GPTQ,ml.g5.2xlarge,1,gptq,...,5,71.70560103977112,...,56.237484' (GPTQ 4-bit weights)
    ("llama-2-13b", "a10g", "int4", 1, 5, "output_tokens_per_s", 71.71),
])
def test_the_tgi_rows_are_kept_as_published_and_left_out_of_the_fit(model, gpu, precision, tp, clients, metric,
                                                                      value):
    """Hugging Face's TGI 1.0.3 rows keep their figures in the collected table (the k6 closed loop of
    ``clients``, 13 prompt and 50 output tokens) and are not derived: they time that engine's per-step overhead,
    not the chip (scripts/derive_published_serving.py, ENGINE_CHECKS), so no family fit learns from them."""
    import csv
    from pathlib import Path

    collected = Path(__file__).parents[2] / "finops" / "data" / "calibration" / "published-wide-2026-12.csv"
    with open(collected, newline="", encoding="utf-8") as handle:
        wide = [r for r in csv.DictReader(line for line in handle if not line.startswith("#"))]
    wide_precision = {"fp16": "fp16", "int4": "int4-weights(gptq)"}[precision]
    key = (model, gpu, wide_precision, str(tp), f"clients:{clients}", metric)
    found = [r for r in wide if r["engine"] == "tgi"
             and (r["model"], r["gpu"], r["precision"], r["tp"], r["concurrency"], r["metric"]) == key]
    assert [(float(r["value"]), r["precision"], r["isl"], r["osl"], r["engine_version"][:5]) for r in found] == [
        (value, wide_precision, "13", "50", "1.0.3")]
    assert not [r for r in published_rows() if r.source_id == "hf-tgi-sagemaker-2023-09"]
