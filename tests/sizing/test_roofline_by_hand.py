"""``estimate`` against rooflines worked here by hand, term by term, from the models' config.json
(tests/sizing/fixtures/hf) and the GPU datasheets.

With ideal constants (every efficiency 1, no per-step overhead, no scheduling delay, no queue) the
performance model must be the textbook roofline of a transformer decoder:

* a decode step reads every weight byte on the GPU and each running sequence's KV cache once, or does its
  FLOPs, whichever takes longer: ``max((W / tp + b x ctx x kv_gpu) / BW, b x (2 P + 4 L A ctx) / (tp x F))``
  (Williams, Waterman and Patterson, "Roofline", CACM 2009; Kaplan et al. 2020, table 1: 2 N FLOPs per
  token in the matrix products; Hoffmann et al. 2022, appendix F: 4 x n_ctx x d_attn per token and layer
  for the attention logits and the value reduction);
* a prompt of ``n`` new tokens after ``isl - n`` cached ones costs ``2 P n + 4 L A n (isl - n / 2)`` FLOPs,
  the causal half of the attention (FlashAttention-2, Dao 2023, skips the masked blocks);
* a tensor-parallel layer all-reduces its activations twice (Megatron-LM, Shoeybi et al. 2019, section
  3: one all-reduce after attention, one after the MLP): ``2 L x tokens x hidden x 2 bytes`` per step, of
  which a ring moves ``(tp - 1) / tp`` over each GPU's link;
* KV per token: ``2 x layers x kv_heads x head_dim x bytes``; a routed-expert layer reads only the experts
  its tokens pick, ``1 - (1 - k / E)^b`` of them on average for ``b`` tokens picking ``k`` of ``E``.

Then each fitted constant is switched on alone and its documented effect checked (module docstring of
finops/sizing/performance.py). Figures are exact to float rounding: rel 1e-13, so that a unit off by one
part in 1e12 (a mutated 1e9 or 1e12) shows.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from finops.catalog import get_accelerator, resolve_model
from finops.sizing.engine_constants import ENGINES, Calibration, EngineConstants
from finops.sizing.performance import estimate

HF = Path(__file__).parent / "fixtures" / "hf"
EXACT = 1e-13

# NVIDIA H100 SXM5 datasheet: 3.35 TB/s HBM3, 989 / 1,979 TFLOPS dense BF16 / FP8 (half the sparse
# figures), NVLink 4 at 900 GB/s both directions together, 450 GB/s each way.
H100_BANDWIDTH = 3.35e12
H100_FLOPS = {"bf16": 989e12, "fp8": 1979e12}
H100_NVLINK = 450e9

# Llama-3.1-8B (config.json): 32 layers, hidden 4096, 32 query heads and 8 KV heads of 128, vocab 128,256;
# 8,030,261,248 parameters (model card; counted from the config in test_physics_pins).
LLAMA = {"path": HF / "Llama-3.1-8B-Instruct" / "config.json", "params": 8_030_261_248, "layers": 32,
         "hidden": 4096, "width": 32 * 128, "kv_per_token": 2 * 32 * 8 * 128 * 2, "vocab": 128_256}
LLAMA_EMBEDDINGS = 2 * 128_256 * 4096          # untied embedding and LM head, kept in BF16 under FP8

# Qwen3-30B-A3B (config.json): 48 layers, hidden 2048, 32 query heads of 128 (width 4096), 4 KV heads,
# 128 experts of width 768, 8 per token. Per layer: attention 2048 x (4096 + 512 + 512) + 4096 x 2048
# = 18,874,368, q/k norms 256, experts 128 x 3 x 2048 x 768 = 603,979,776, router 2048 x 128 = 262,144,
# norms 4,096; with embeddings 2 x 151,936 x 2048 and the final norm: 30,532,122,624 parameters, of which
# a token uses 8 / 128 of the experts: 3,353,032,704 (the model card's "30.5B total, 3.3B activated").
QWEN_MOE = {"path": HF / "Qwen3-30B-A3B" / "config.json", "params": 30_532_122_624,
            "active": 3_353_032_704, "layers": 48, "width": 32 * 128, "kv_per_token": 2 * 48 * 4 * 128 * 2,
            "expert_params": 48 * 128 * 3 * 2048 * 768, "share": 8 / 128}

IDEAL = EngineConstants(bandwidth_efficiency=1.0, compute_efficiency=1.0, step_overhead_us_per_layer=(0.0, 0.0, 0.0, 0.0),
                        allreduce_gbps=100.0, prefill_queue=0.0, ttft_steps=0.0, ttft_fixed_ms=0.0,
                        prefill_burst=0.0, link_efficiency=1.0)


def ideal(**changes) -> Calibration:
    constants = replace(IDEAL, **changes)
    return Calibration(engines={e: constants for e in ENGINES}, source="hand-worked roofline", as_of="2026-12-02")


def run(model: dict, *, calibration: Calibration | None = None, engine: str = "vllm", **kwargs):
    arguments = {"precision": "bf16", "tp": 1, **kwargs}
    return estimate(resolve_model(str(model["path"])), "h100-sxm", engine=engine,
                    calibration=calibration or ideal(), **arguments)


def prefill_flops(model: dict, isl: int, new: int, params: int | None = None) -> float:
    return 2 * (params or model["params"]) * new + 4 * model["layers"] * model["width"] * new * (isl - new / 2)


def decode_flops(model: dict, ctx: float, params: int | None = None) -> float:
    return 2 * (params or model["params"]) + 4 * model["layers"] * model["width"] * ctx


def test_the_worked_figures_are_the_config_files_and_the_datasheets():
    cfg = json.loads(LLAMA["path"].read_text())
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
            cfg["vocab_size"]) == (32, 4096, 32, 8, 128_256)
    moe = json.loads(QWEN_MOE["path"].read_text())
    assert (moe["num_hidden_layers"], moe["num_experts"], moe["num_experts_per_tok"], moe["moe_intermediate_size"],
            moe["hidden_size"], moe["head_dim"]) == (48, 128, 8, 768, 2048, 128)
    gpu = get_accelerator("h100-sxm")
    assert (gpu.memory_bandwidth_gbps * 1e9, gpu.tflops("bf16") * 1e12, gpu.tflops("fp8") * 1e12,
            gpu.interconnect_gbps * 1e9) == (H100_BANDWIDTH, H100_FLOPS["bf16"], H100_FLOPS["fp8"], H100_NVLINK)


def test_one_client_decodes_at_the_bandwidth_roofline_and_prefills_at_the_compute_roofline():
    """Llama-3.1-8B BF16, one H100, 1,024 in, 256 out, one client. Decode: 16,060,522,496 weight bytes plus
    1,152 x 131,072 KV bytes at the mean context 1,024 + 256 / 2, over 3.35 TB/s: 4.839 ms a token (its
    2 x 8.03e9 + 4 x 32 x 4096 x 1152 FLOPs take 17 us). Prefill: 2 x 8.03e9 x 1024 + 4 x 32 x 4096 x
    1024 x 512 = 1.672e13 FLOPs over 989 TFLOP/s: 16.91 ms."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=1)
    step_bytes = 2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]
    step = step_bytes / H100_BANDWIDTH
    assert decode_flops(LLAMA, 1152) / H100_FLOPS["bf16"] < step / 100      # memory-bound by far
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.ttft_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    cycle = prefill + 255 * step
    assert e.request_latency_ms == pytest.approx(cycle * 1e3, rel=EXACT)
    assert e.output_tokens_per_s == pytest.approx(256 / cycle, rel=EXACT)
    assert e.input_tokens_per_s == pytest.approx(1024 / cycle, rel=EXACT)
    assert e.output_tokens_per_s_per_gpu == pytest.approx(256 / cycle, rel=EXACT)
    assert e.effective_bandwidth_efficiency == pytest.approx(1.0, rel=EXACT)
    assert (round(step * 1e3, 3), round(prefill * 1e3, 2)) == (4.839, 16.91)


def test_a_large_batch_of_short_sequences_is_compute_bound():
    """512 sequences of 16 + 16 tokens: 512 x (2 x 8.03e9 + 4 x 32 x 4096 x 24) FLOPs over 989 TFLOP/s take
    8.32 ms a step, the 16.06 GB of weights and 512 x 24 x 128 KiB of KV 5.27 ms. Each client's 15 decode
    steps also carry the 511 others' prompts (chunked prefill): TPOT = step + 511 / 15 x prefill."""
    e = run(LLAMA, isl=16, osl=16, concurrency=512)
    memory = (2 * LLAMA["params"] + 512 * 24 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    compute = 512 * decode_flops(LLAMA, 24) / H100_FLOPS["bf16"]
    assert compute > memory
    prefill = prefill_flops(LLAMA, 16, 16) / H100_FLOPS["bf16"]
    assert e.running_batch == 512
    assert e.decode_step_ms == pytest.approx(compute * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx((compute + 511 / 15 * prefill) * 1e3, rel=EXACT)
    assert e.ttft_ms == pytest.approx(prefill * 1e3, rel=EXACT)              # no queue constant: no wait
    assert e.effective_bandwidth_efficiency == pytest.approx(memory / compute, rel=EXACT)
    assert (round(compute * 1e3, 2), round(memory * 1e3, 2)) == (8.32, 5.27)


def test_tensor_parallel_decode_and_prefill_pay_their_all_reduces():
    """Llama-3.1-8B FP8 on two H100s, 2,048 in, 128 out, 4 clients. Each GPU holds half the weights
    ((8,030,261,248 - 1,050,673,152) x 1 + 1,050,673,152 x 2 bytes) and half the KV heads (65,536 bytes a
    token). A decode step all-reduces 2 x 32 x 4 tokens x 4096 x 2 bytes, half of it over each GPU, at the
    constants' 100 GB/s; a prefill 2 x 32 x 2048 x 4096 x 2 bytes, half over NVLink's 450 GB/s."""
    e = run(LLAMA, precision="fp8", tp=2, isl=2048, osl=128, concurrency=4)
    weights = (LLAMA["params"] - LLAMA_EMBEDDINGS) * 1 + LLAMA_EMBEDDINGS * 2
    ctx = 2048 + 64
    memory = (weights / 2 + 4 * ctx * LLAMA["kv_per_token"] / 2) / H100_BANDWIDTH
    compute = 4 * decode_flops(LLAMA, ctx) / (2 * H100_FLOPS["fp8"])
    decode_allreduce = 2 * 32 * 4 * 4096 * 2 * (1 / 2) / 100e9
    prefill_allreduce = 2 * 32 * 2048 * 4096 * 2 * (1 / 2) / H100_NVLINK
    prefill = prefill_flops(LLAMA, 2048, 2048) / (2 * H100_FLOPS["fp8"]) + prefill_allreduce
    assert memory > compute
    assert e.weights_gib_per_gpu == pytest.approx(weights / 2 / 2**30, rel=EXACT)
    assert e.kv_bytes_per_token_per_gpu == LLAMA["kv_per_token"] / 2
    assert e.decode_step_ms == pytest.approx((memory + decode_allreduce) * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx((memory + decode_allreduce + 3 / 127 * prefill) * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.output_tokens_per_s_per_gpu == pytest.approx(e.output_tokens_per_s / 2, rel=EXACT)


@pytest.mark.parametrize("link_efficiency, allreduce_gbps", [(0.5, 100.0), (1.0, 25.0)])
def test_the_link_and_all_reduce_constants_scale_their_own_terms(link_efficiency, allreduce_gbps):
    e = run(LLAMA, tp=2, isl=2048, osl=128, concurrency=4,
            calibration=ideal(link_efficiency=link_efficiency, allreduce_gbps=allreduce_gbps))
    ctx = 2048 + 64
    memory = (2 * LLAMA["params"] / 2 + 4 * ctx * LLAMA["kv_per_token"] / 2) / H100_BANDWIDTH
    decode_allreduce = 2 * 32 * 4 * 4096 * 2 * (1 / 2) / (allreduce_gbps * 1e9)
    prefill = (prefill_flops(LLAMA, 2048, 2048) / (2 * H100_FLOPS["bf16"])
               + 2 * 32 * 2048 * 4096 * 2 * (1 / 2) / (H100_NVLINK * link_efficiency))
    assert e.decode_step_ms == pytest.approx((memory + decode_allreduce) * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_a_prompts_all_reduce_moves_the_ring_share_of_its_activations(tp):
    """A ring all-reduce over ``tp`` GPUs moves ``(tp - 1) / tp`` of the message over each link: for a
    2,048-token prompt of Llama-3.1-8B, 2 x 32 x 2048 x 4096 x 2 bytes x 1/2, 3/4, 7/8 at TP 2, 4, 8 over
    NVLink's 450 GB/s, beside the prompt's FLOPs split over the ``tp`` GPUs."""
    e = run(LLAMA, tp=tp, isl=2048, osl=128, concurrency=1)
    ring = 2 * 32 * 2048 * 4096 * 2 * (tp - 1) / tp / H100_NVLINK
    prefill = prefill_flops(LLAMA, 2048, 2048) / (tp * H100_FLOPS["bf16"]) + ring
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)


@pytest.mark.parametrize("clients", [1, 32])
def test_a_mixture_of_experts_step_reads_the_experts_its_tokens_route_to(clients):
    """Qwen3-30B-A3B BF16, 512 in, 64 out: all 61.06 GB of weights are resident, but a step of b tokens
    reads the attention, embeddings and router, and of the 57.98 GB of experts the share 1 - (15/16)^b;
    its FLOPs are those of the 3.35 B active parameters."""
    e = run(QWEN_MOE, isl=512, osl=64, concurrency=clients)
    ctx = 512 + 32
    experts = 2 * QWEN_MOE["expert_params"]
    read = 2 * QWEN_MOE["params"] - experts * (1 - QWEN_MOE["share"]) ** clients + clients * ctx * QWEN_MOE["kv_per_token"]
    memory = read / H100_BANDWIDTH
    compute = clients * decode_flops(QWEN_MOE, ctx, QWEN_MOE["active"]) / H100_FLOPS["bf16"]
    step = max(memory, compute)
    prefill = prefill_flops(QWEN_MOE, 512, 512, QWEN_MOE["active"]) / H100_FLOPS["bf16"]
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx((step + (clients - 1) / 63 * prefill) * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.effective_bandwidth_efficiency == pytest.approx(memory / step, rel=EXACT)


@pytest.mark.parametrize("clients, per_layer_us", [(1, 50.0), (32, 12.5)])
def test_each_step_of_a_mixture_of_experts_pays_the_moe_overhead_of_its_48_expert_layers(clients, per_layer_us):
    """o_moe is paid once per layer of routed experts and step: Qwen3-30B-A3B has 48 (no dense first
    layers), so a step takes 48 x o_moe longer than the routed-expert roofline above, and the one-chunk
    prefill as much (at 50 us: 2.4 ms)."""
    plain = run(QWEN_MOE, isl=512, osl=64, concurrency=clients)
    e = run(QWEN_MOE, isl=512, osl=64, concurrency=clients, calibration=ideal(moe_overhead_us_per_layer=per_layer_us))
    extra = 48 * per_layer_us * 1e-6
    assert e.decode_step_ms == pytest.approx(plain.decode_step_ms + extra * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(plain.prefill_ms + extra * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx(plain.tpot_ms + extra * 1e3, rel=EXACT)


def test_a_model_without_experts_pays_no_moe_overhead():
    plain = run(LLAMA, isl=1024, osl=256, concurrency=4)
    e = run(LLAMA, isl=1024, osl=256, concurrency=4, calibration=ideal(moe_overhead_us_per_layer=50.0))
    assert (e.decode_step_ms, e.prefill_ms, e.ttft_ms) == (plain.decode_step_ms, plain.prefill_ms, plain.ttft_ms)


@pytest.mark.parametrize("hit, new", [(0.0, 1024), (0.5, 512), (0.75, 256)])
def test_a_prefix_cache_hit_prefills_only_the_new_tokens(hit, new):
    """The cached ``isl - new`` tokens are skipped, but the new ones still attend to them: attention
    ``4 L A new (isl - new / 2)``, e.g. at 75 % of 1,024: 4 x 32 x 4096 x 256 x 896."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=2, cache_hit_rate=hit)
    prefill = prefill_flops(LLAMA, 1024, new) / H100_FLOPS["bf16"]
    step = (2 * LLAMA["params"] + 2 * 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx((step + 1 / 255 * prefill) * 1e3, rel=EXACT)
    assert e.cache_hit_rate == hit


# TP -> the per-layer overhead of the constants (us) at that TP: 10, 20, 40, 80 at TP 1, 2, 4, 8
OVERHEAD = (10.0, 20.0, 40.0, 80.0)


# TP 16 is past the calibrated TPs: it keeps TP 8's overhead
@pytest.mark.parametrize("tp, per_layer_us", [(1, 10.0), (2, 20.0), (4, 40.0), (8, 80.0), (16, 80.0)])
def test_each_step_pays_the_per_layer_overhead_of_its_tp(tp, per_layer_us):
    e = run(LLAMA, tp=tp, isl=1024, osl=256, concurrency=1, calibration=ideal(step_overhead_us_per_layer=OVERHEAD))
    kv_share = math.ceil(8 / tp) / 8                       # 8 KV heads: replicated past TP 8
    memory = (2 * LLAMA["params"] / tp + 1152 * LLAMA["kv_per_token"] * kv_share) / H100_BANDWIDTH
    allreduce = 2 * 32 * 1 * 4096 * 2 * (tp - 1) / tp / 100e9
    step = memory + 32 * per_layer_us * 1e-6 + allreduce
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)


@pytest.mark.parametrize("isl, budget, chunks", [(20_000, None, 3), (20_000, 4096, 5), (8192, 8192, 1),
                                                 (8193, 8192, 2), (100, 8192, 1)])
def test_a_chunked_prompt_pays_one_step_overhead_per_chunk(isl, budget, chunks):
    """vLLM on an H100 takes 8,192 prompt tokens a step by default (``max_num_batched_tokens``): a
    20,000-token prompt is prefilled over ceil(20000 / 8192) = 3 steps, each paying 32 x 10 us."""
    e = run(LLAMA, isl=isl, osl=64, concurrency=1, prefill_token_budget=budget,
            calibration=ideal(step_overhead_us_per_layer=OVERHEAD))
    compute = prefill_flops(LLAMA, isl, isl) / H100_FLOPS["bf16"]
    assert e.prefill_token_budget == (budget or 8192)
    assert e.prefill_ms == pytest.approx((compute + chunks * 32 * 10e-6) * 1e3, rel=EXACT)
    assert e.ttft_ms == pytest.approx(e.prefill_ms, rel=EXACT)


def test_the_first_token_waits_a_few_steps_and_the_fixed_latency():
    """TTFT = prefill + a x step + f: with a = 2 steps and f = 30 ms at one client."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=1, calibration=ideal(ttft_steps=2.0, ttft_fixed_ms=30.0))
    step = (2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.ttft_ms == pytest.approx((prefill + 2 * step + 0.030) * 1e3, rel=EXACT)
    assert e.tpot_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)


def schweitzer_bard_wait(clients: int, service: float, think: float) -> float:
    """R - S of R^2 + (Z - c S) R - S Z = 0 (Schweitzer 1979; Bard 1979), clipped to [0, (c - 1) S]."""
    excess = clients * service - think
    response = (excess + math.sqrt(excess ** 2 + 4 * service * think)) / 2
    return min(max(response - service, 0.0), (clients - 1) * service)


@pytest.mark.parametrize("burst, queue, fixed_ms", [(1.0, 0.0, 0.0), (3.0, 0.0, 0.0), (0.0, 0.5, 0.0),
                                                    (0.0, 1.0, 5.0), (0.4, 0.3, 0.0)])
def test_eight_clients_wait_behind_each_others_prompts(burst, queue, fixed_ms):
    """Eight clients in a closed loop: a prompt waits ``q`` x the Schweitzer-Bard wait with the rest of a
    request's cycle as think time, plus ``s`` x 7 / 2 prompts of a wave that starts together, and never
    more than the 7 other prompts."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=8,
            calibration=ideal(prefill_burst=burst, prefill_queue=queue, ttft_fixed_ms=fixed_ms))
    step = (2 * LLAMA["params"] + 8 * 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    tpot = step + 7 / 255 * prefill
    think = fixed_ms / 1e3 + 255 * tpot
    wait = min(queue * schweitzer_bard_wait(8, prefill, think) + burst * 7 / 2 * prefill, 7 * prefill)
    assert e.tpot_ms == pytest.approx(tpot * 1e3, rel=EXACT)
    assert e.ttft_ms == pytest.approx((prefill + wait + fixed_ms / 1e3) * 1e3, rel=EXACT)


def test_with_one_output_token_every_other_prompt_lands_in_its_one_step():
    """osl = 1: no decode step of its own to spread the others' prompts over, so all 3 land in one."""
    e = run(LLAMA, isl=1024, osl=1, concurrency=4)
    step = (2 * LLAMA["params"] + 4 * 1024.5 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.tpot_ms == pytest.approx((step + 3 * prefill) * 1e3, rel=EXACT)


@pytest.mark.parametrize("bandwidth_efficiency, compute_efficiency", [(0.5, 1.0), (1.0, 0.25)])
def test_the_efficiencies_divide_their_own_peak(bandwidth_efficiency, compute_efficiency):
    e = run(LLAMA, isl=1024, osl=256, concurrency=1,
            calibration=ideal(bandwidth_efficiency=bandwidth_efficiency, compute_efficiency=compute_efficiency))
    step_bytes = 2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]
    step = step_bytes / (H100_BANDWIDTH * bandwidth_efficiency)
    prefill = prefill_flops(LLAMA, 1024, 1024) / (H100_FLOPS["bf16"] * compute_efficiency)
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)
    assert e.effective_bandwidth_efficiency == pytest.approx(bandwidth_efficiency, rel=EXACT)


@pytest.mark.parametrize("changes", [{"link_efficiency": 0.0}, {"allreduce_gbps": 0.0}])
def test_one_gpu_has_no_all_reduce_whatever_the_link_constants(changes):
    """At TP 1 nothing crosses a link: a fit that found no link bandwidth still times one GPU."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=2, calibration=ideal(**changes))
    step = (2 * LLAMA["params"] + 2 * 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=EXACT)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=EXACT)


def test_prompt_terms_default_to_no_cache_hits():
    from finops.sizing.performance import prompt_terms, replica_physics

    phys = replica_physics(resolve_model(str(LLAMA["path"])), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    default, cold = (prompt_terms(phys, IDEAL, isl=1024, osl=256, **extra) for extra in ({}, {"cache_hit_rate": 0.0}))
    assert float(default.prefill_compute) == float(cold.prefill_compute) == prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]


def test_one_client_never_waits_behind_prompts_whatever_the_queue_constants():
    """Closed loop of one: no other prompt to land behind, so q and s change nothing at concurrency 1."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=1, calibration=ideal(prefill_queue=1.0, prefill_burst=1.0))
    assert e.ttft_ms == pytest.approx(prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"] * 1e3, rel=EXACT)


@pytest.mark.parametrize("clients, steps, fixed_ms", [(1, 15.0, 0.0), (2, 15.0, 0.0), (8, 15.0, 30.0), (8, 3.0, 0.0),
                                                     (64, 36.0, 0.0)])
def test_a_prompt_that_finds_others_running_waits_its_admission_steps(clients, steps, fixed_ms):
    """TTFT = prefill + (a + d (c - 1) / c) x step + f with no prompt queue (q = s = 0): one client alone
    is admitted at once, two wait d / 2 steps, eight 7 d / 8; TPOT is untouched (the other clients'
    prompts still share its steps: step + (c - 1) / 255 x prefill)."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=clients,
            calibration=ideal(admission_steps=steps, ttft_fixed_ms=fixed_ms))
    step = (2 * LLAMA["params"] + clients * 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.tpot_ms == pytest.approx((step + (clients - 1) / 255 * prefill) * 1e3, rel=EXACT)
    admission = steps * (clients - 1) / clients * step
    assert e.ttft_ms == pytest.approx((prefill + admission + fixed_ms / 1e3) * 1e3, rel=EXACT)


@pytest.mark.parametrize("osl", [1, 2, 5])
def test_a_prompt_waits_no_more_admission_steps_than_the_others_decode(osl):
    """The others run osl - 1 decode steps, so eight clients of a prefill-only load (osl 1) wait no admission
    steps, and at osl 5 four of the 15: TTFT = prefill + min(d, osl - 1) x 7 / 8 x step."""
    e = run(LLAMA, isl=1024, osl=osl, concurrency=8, calibration=ideal(admission_steps=15.0))
    step = (2 * LLAMA["params"] + 8 * (1024 + osl / 2) * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    assert e.ttft_ms == pytest.approx((prefill + min(15.0, osl - 1) * 7 / 8 * step) * 1e3, rel=EXACT)


def test_the_admission_wait_counts_in_a_closed_loops_think_time():
    """With the prompt queue on (q = 1), the admission wait is time a client spends off the prefill
    server, so it lengthens the think time Z = delay + 255 x TPOT of the Schweitzer-Bard wait."""
    e = run(LLAMA, isl=1024, osl=256, concurrency=8, calibration=ideal(admission_steps=15.0, prefill_queue=1.0))
    step = (2 * LLAMA["params"] + 8 * 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    delay = 15.0 * 7 / 8 * step
    think = delay + 255 * (step + 7 / 255 * prefill)
    assert e.ttft_ms == pytest.approx((prefill + schweitzer_bard_wait(8, prefill, think) + delay) * 1e3, rel=EXACT)


def test_replica_latency_reports_each_part():
    """The parts a search and the queueing model read: Llama-3.1-8B BF16, 4 clients, 1,024 in, 256 out,
    prefill default budget 8,192 tokens (vLLM and TRT-LLM)."""
    from finops.sizing.performance import replica_latency, replica_physics

    phys = replica_physics(resolve_model(str(LLAMA["path"])), get_accelerator("h100-sxm"), precision="bf16", tp=1)
    assert phys.prefill_token_budget == 8192
    lat = replica_latency(phys, replace(IDEAL, prefill_burst=1.0), isl=1024, osl=256, batch=4)
    step_bytes = 2 * LLAMA["params"] + 4 * 1152 * LLAMA["kv_per_token"]
    prefill = prefill_flops(LLAMA, 1024, 1024) / H100_FLOPS["bf16"]
    step = step_bytes / H100_BANDWIDTH
    parts = (lat.step_bytes, lat.step, lat.prefill, lat.prefill_compute, lat.tpot, lat.ttft)
    assert tuple(map(float, parts)) == pytest.approx((step_bytes, step, prefill, prefill, step + 3 / 255 * prefill,
                                                      prefill + 3 / 2 * prefill), rel=EXACT)


# config folder, precision, TP -> routed-expert bytes per GPU and the share of them one token reads, by hand
ROUTED = [
    # Qwen3-30B-A3B: 48 layers x 128 experts x 3 x 2048 x 768, BF16, 8 of 128 per token
    ("Qwen3-30B-A3B", "bf16", 1, 48 * 128 * 3 * 2048 * 768 * 2, 8 / 128),
    # DeepSeek-V3: the first 3 of 61 layers are dense (first_k_dense_replace): 58 x 256 x 3 x 7168 x 2048,
    # FP8, over 8 GPUs, 8 of 256 per token
    ("DeepSeek-V3", "fp8", 8, 58 * 256 * 3 * 7168 * 2048 * 1 / 8, 8 / 256),
    # Mixtral-8x7B: experts as wide as the dense MLP (no moe_intermediate_size): 32 x 8 x 3 x 4096 x 14336
    ("Mixtral-8x7B-Instruct-v0.1", "bf16", 2, 32 * 8 * 3 * 4096 * 14336 * 2 / 2, 2 / 8),
]


@pytest.mark.parametrize("folder, precision, tp, expert_bytes, share", ROUTED)
def test_routed_expert_bytes_from_the_config(folder, precision, tp, expert_bytes, share):
    from finops.sizing.performance import replica_physics

    cfg = json.loads((HF / folder / "config.json").read_text())
    assert cfg.get("first_k_dense_replace", 0) == (3 if folder == "DeepSeek-V3" else 0)
    phys = replica_physics(resolve_model(str(HF / folder / "config.json")), get_accelerator("h200"),
                           precision=precision, tp=tp)
    assert (phys.expert_weight_bytes_per_gpu, phys.expert_share_per_token) == (expert_bytes, share)


def test_a_model_without_experts_reads_all_its_weights():
    """A config that names experts per token but has no experts is dense: no routed bytes, no share."""
    import dataclasses

    from finops.sizing.performance import replica_physics

    odd = dataclasses.replace(resolve_model(str(LLAMA["path"])), experts_per_token=2)
    phys = replica_physics(odd, get_accelerator("h100-sxm"), precision="bf16", tp=1)
    assert (phys.expert_weight_bytes_per_gpu, phys.expert_share_per_token) == (0.0, 0.0)
    e = estimate(odd, "h100-sxm", precision="bf16", tp=1, isl=1024, osl=256, concurrency=1, calibration=ideal())
    assert e.decode_step_ms == pytest.approx((2 * LLAMA["params"] + 1152 * LLAMA["kv_per_token"]) / H100_BANDWIDTH * 1e3,
                                             rel=EXACT)


@pytest.mark.parametrize("engine, kv_precision, kv_bytes", [("vllm", "fp8", 1), ("vllm", None, 2), ("trtllm", None, 1)])
def test_an_fp8_kv_cache_halves_the_kv_read(engine, kv_precision, kv_bytes):
    """FP8 weights, 16 clients at 4,096 + 512 tokens: the step reads 16 x 4,352 tokens of KV at 1 byte a
    value when the cache is FP8 (asked for, or TRT-LLM's default for an FP8 checkpoint), else at 2."""
    e = run(LLAMA, engine=engine, precision="fp8", kv_precision=kv_precision, isl=4096, osl=512, concurrency=16,
            step_time="roofline")
    weights = (LLAMA["params"] - LLAMA_EMBEDDINGS) * 1 + LLAMA_EMBEDDINGS * 2
    step_bytes = weights + 16 * 4352 * 2 * 32 * 8 * 128 * kv_bytes
    assert e.decode_step_ms == pytest.approx(step_bytes / H100_BANDWIDTH * 1e3, rel=EXACT)


def test_the_per_layer_overhead_between_calibrated_tps_is_interpolated_in_log2_tp():
    """TP 6: log2 6 = 2.585, 58.5 % of the way from TP 4's 40 us to TP 8's 80 us; TP 3 likewise between
    TP 2 and 4; TP 16 keeps TP 8's."""
    import numpy as np

    from finops.sizing.performance import _per_tp_s

    tps = np.array([1.0, 2.0, 3.0, 6.0, 8.0, 16.0])
    expected = [10, 20, 20 + 20 * (math.log2(3) - 1), 40 + 40 * (math.log2(6) - 2), 80, 80]
    assert _per_tp_s(OVERHEAD, tps) * 1e6 == pytest.approx(expected, rel=EXACT)


def test_fp32_weights_keep_an_fp32_cache_in_the_replica_physics():
    """Without a KV precision the physics takes the checkpoint's: 4 bytes a value for FP32 weights."""
    from finops.sizing.performance import replica_physics

    model = resolve_model(str(LLAMA["path"]))
    phys = replica_physics(model, get_accelerator("h100-sxm"), precision="fp32", tp=1)
    assert phys.kv_bytes_per_token_per_gpu == 2 * 32 * 8 * 128 * 4
