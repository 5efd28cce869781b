"""Where measured kernels time the steps (``step_time_source == "kernels"``), ``estimate`` is composed of
the kernel tables' parts (finops/sizing/kernels.py, NVIDIA AIConfigurator's per-kernel measurements)
exactly as the performance model's docstring says:

* decode step = max(kernels' decode(b, ctx) - layers x kernel_decode_credit_us, its bytes at peak bandwidth)
  + the per-step overhead at that TP;
* prefill = kernels' prefill of the prompt alone / kernel_prefill_scale + one overhead per chunk;
* TPOT = step + (b - 1) / (osl - 1) x the prompt's GEMM time beside b decoding sequences;
* TTFT = prefill + the closed-loop wait behind the b - 1 others + a x step + f;

and a decode step is itself the sum, over the layers, of its GEMMs, attention and all-reduces, plus the
LM head (AIConfigurator's per-op composition).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from finops.catalog import get_accelerator, get_model
from finops.sizing import kernels
from finops.sizing.engine_constants import CALIBRATED_TPS, Calibration, model_class
from finops.sizing.performance import estimate

LLAMA = get_model("llama-3.1-8b")
#: Qwen3-30B-A3B with 64 experts of its width: an expert shape the tables do not hold.
UNMEASURED_EXPERTS = replace(get_model("qwen3-30b-a3b"), num_experts=64)


def schweitzer_bard_wait(clients: int, service: float, think: float) -> float:
    """R - S of R^2 + (Z - c S) R - S Z = 0 (Schweitzer 1979; Bard 1979), clipped to [0, (c - 1) S]."""
    excess = clients * service - think
    response = (excess + math.sqrt(excess ** 2 + 4 * service * think)) / 2
    return min(max(response - service, 0.0), (clients - 1) * service)


# (engine, precision, tp, isl, osl, clients, cache hit, prefill budget): TRT-LLM's fit times steps by kernels
CASES = [("trtllm", "bf16", 1, 960, 128, 8, 0.0, None), ("trtllm", "fp8", 2, 2048, 256, 32, 0.0, None),
         ("trtllm", "bf16", 4, 20_000, 64, 4, 0.5, 4096), ("trtllm", "fp8", 8, 512, 2, 64, 0.0, None),
         ("vllm", "bf16", 1, 4096, 512, 16, 0.25, None), ("sglang", "fp8", 2, 1024, 1, 3, 0.0, None)]


@pytest.mark.parametrize("engine, precision, tp, isl, osl, clients, hit, budget", CASES)
def test_an_estimate_is_the_sum_of_its_measured_kernels(engine, precision, tp, isl, osl, clients, hit, budget):
    e = estimate(LLAMA, "h100-sxm", precision=precision, tp=tp, isl=isl, osl=osl, concurrency=clients,
                 engine=engine, cache_hit_rate=hit, prefill_token_budget=budget, step_time="kernels")
    c = Calibration.bundled().constants(engine)
    kv = {("trtllm", "fp8"): "fp8"}.get((engine, precision), "bf16")
    k = kernels.step_kernels(LLAMA, "h100-sxm", engine=engine, precision=precision, kv_precision=kv, tp=tp)
    assert e.step_time_source == "kernels" and e.kv_precision == kv
    overhead = c.kernel_step_overhead_us[CALIBRATED_TPS.index(tp)] * 1e-6
    budget = e.prefill_token_budget
    new = isl * (1 - hit)
    step = float(k.decode(clients, isl + osl / 2)) - LLAMA.layers * c.kernel_decode_credit_us * 1e-6 + overhead
    assert e.effective_bandwidth_efficiency < 1.0    # the floor at peak bandwidth does not bind here
    alone = float(k.prefill(new, isl, budget)) / c.kernel_prefill_scale
    prefill = alone + max(math.ceil(new / budget), 1) * overhead
    beside_all = float(k.prefill(new, isl, budget, clients)) / c.kernel_prefill_scale
    beside_others = float(k.prefill(new, isl, budget, clients - 1)) / c.kernel_prefill_scale
    tpot = step + (clients - 1) / max(osl - 1, 1) * beside_all
    # a prompt waits for at most the osl - 1 decode steps the others have left (none at osl 1)
    delay = (c.ttft_steps + min(c.admission_steps, osl - 1) * (clients - 1) / clients) * step + c.ttft_fixed_ms / 1e3
    think = prefill - alone + delay + (osl - 1) * tpot
    wait = min(c.prefill_queue * schweitzer_bard_wait(clients, beside_others, think)
               + c.prefill_burst * (clients - 1) / 2 * beside_others, (clients - 1) * beside_others)
    assert e.decode_step_ms == pytest.approx(step * 1e3, rel=1e-12)
    assert e.prefill_ms == pytest.approx(prefill * 1e3, rel=1e-12)
    assert e.tpot_ms == pytest.approx(tpot * 1e3, rel=1e-12)
    assert e.ttft_ms == pytest.approx((prefill + wait + delay) * 1e3, rel=1e-12)


def test_trtllm_times_its_steps_by_kernels_where_the_tables_cover_it():
    """The bundled fit chose kernels for TRT-LLM (held out better there), the roofline for vLLM and SGLang."""
    trt, vllm = (estimate(LLAMA, "h100-sxm", precision="bf16", tp=1, isl=1024, osl=128, concurrency=8, engine=e)
                 for e in ("trtllm", "vllm"))
    assert (trt.step_time_source, vllm.step_time_source) == ("kernels", "roofline")
    forced = estimate(LLAMA, "h100-sxm", precision="bf16", tp=1, isl=1024, osl=128, concurrency=8, engine="trtllm",
                      step_time="kernels")
    assert (forced.tpot_ms, forced.ttft_ms) == (trt.tpot_ms, trt.ttft_ms)


@pytest.mark.parametrize("model", [UNMEASURED_EXPERTS, "deepseek-v3", "mistral-7b-v0.1"],
                         ids=["unmeasured-experts", "mla", "sliding-window"])
def test_where_no_table_covers_the_model_the_roofline_answers(model):
    """An expert shape the tables did not measure, MLA and sliding-window attention have no kernel
    tables: asking for kernels gives the roofline's figures."""
    arguments = dict(precision="fp8", tp=8, isl=1024, osl=128, concurrency=8, engine="trtllm")
    gpu = "h200"
    asked, roofline = (estimate(model, gpu, step_time=s, **arguments) for s in ("kernels", "roofline"))
    assert asked.step_time_source == "roofline"
    assert (asked.tpot_ms, asked.ttft_ms, asked.prefill_ms) == (roofline.tpot_ms, roofline.ttft_ms, roofline.prefill_ms)


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_a_decode_step_is_its_layers_gemms_attention_and_all_reduces_plus_the_lm_head(tp):
    """At a point of every grid (8 sequences at 1,024 tokens of context), from the raw tables:
    ``L x (G(b, (h + 2g) d / t, H) + G(b, H, h d / t) + G(b, 2 I / t, H) + G(b, H, I / t) + 2 AR(t, b H)
    + gen_attn(b, ctx, h / t, g / t)) + G(b, V / t, H)``, Llama-3.1-8B: H 4096, h 32, g 8, d 128, I 14,336."""
    gemm = kernels._table("h100-sxm", "trtllm/gemm/bf16")
    generation = kernels._table("h100-sxm", "trtllm/generation/bf16")
    allreduce = kernels._table("h100-sxm", "trtllm/allreduce")
    b, ctx, hidden = 8.0, 1024.0, 4096
    h, g = 32 / tp, 8 / tp
    gemms = (gemm(b, (h + 2 * g) * 128, hidden) + gemm(b, hidden, h * 128) + gemm(b, 2 * 14_336 / tp, hidden)
             + gemm(b, hidden, 14_336 / tp))
    comm = 2 * allreduce(float(tp), b * hidden) if tp > 1 else 0.0   # message size in BF16 elements
    expected = 32 * (gemms + comm + generation(b, ctx, h, g)) + gemm(b, 128_256 / tp, hidden)
    k = kernels.step_kernels(LLAMA, "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=tp)
    assert float(k.decode(b, ctx)) == pytest.approx(expected, rel=1e-12)
    assert np.isfinite(expected) and 1e-3 < expected < 0.05


@pytest.mark.parametrize("tp", [1, 2])
def test_a_prompts_first_token_is_one_row_through_the_lm_head(tp):
    """``last_logits = G(1, V / t, H)`` from the raw GEMM table (Llama-3.1-8B: V 128,256, H 4,096)."""
    gemm = kernels._table("h100-sxm", "trtllm/gemm/bf16")
    k = kernels.step_kernels(LLAMA, "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=tp)
    assert k.last_logits == pytest.approx(gemm(1.0, 128_256 / tp, 4096), rel=1e-12)
    assert gemm(1.0, 128_256 / tp, 4096) != pytest.approx(gemm(2.0, 128_256 / tp, 4096), rel=1e-3)


@pytest.mark.parametrize("tp", [1, 2])
def test_prompt_attention_is_read_at_the_groups_kv_heads(tp):
    """``context = L x ctx_attn(1, seq, h / t, g / t)`` on the prompt grid, from the raw table
    (Llama-3.1-8B: 32 layers, 32 heads, 8 KV heads)."""
    raw = kernels._table("h100-sxm", "trtllm/context/bf16")
    k = kernels.step_kernels(LLAMA, "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=tp)
    expected = np.log(32 * raw(1.0, kernels.PROMPT_GRID, 32 / tp, 8 / tp) * 1e3)
    assert k.context == pytest.approx(expected, rel=1e-12)
    assert not np.allclose(expected, np.log(32 * raw(1.0, kernels.PROMPT_GRID, 32 / tp, 1.0) * 1e3))


@pytest.fixture(scope="module")
def mixed_rows():
    """Measured rows of each engine, dense (kernel tables cover them for TRT-LLM) and MLA (the roofline),
    at TP 1 to 8 and several prompt lengths: stacked in one array the way a fit or a search stacks them."""
    from finops.sizing.calibration import bundled_measurements, queue_limited

    rows = [r for r in bundled_measurements() if not queue_limited(r)]
    picked = []
    for engine in ("trtllm", "vllm", "sglang"):
        for model in ("llama-3.1-8b", "deepseek-v3", "qwen3-32b", "llama-3.1-70b"):
            mine = [r for r in rows if r.engine == engine and r.model == model]
            picked += mine[:: max(len(mine) // 4, 1)][:4]
    return picked


def test_a_row_stacked_with_others_is_timed_as_alone(mixed_rows):
    """Rows timed by kernels and rows timed by the roofline, stacked, each give what ``estimate`` gives
    for that row alone (the fit and the search rely on it)."""
    from finops.sizing.calibration import predict

    assert {model_class(get_model(r.model)) for r in mixed_rows} == {"dense", "mla"}
    ttft, tpot = predict(mixed_rows, Calibration.bundled())
    for r, stacked_ttft, stacked_tpot in zip(mixed_rows, ttft, tpot):
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl, concurrency=r.concurrency,
                     engine=r.engine)
        assert (stacked_tpot, stacked_ttft) == pytest.approx((e.tpot_ms, e.ttft_ms), rel=1e-12), r


@pytest.mark.parametrize("gpu", kernels.kernel_gpus())
def test_no_decode_step_reads_its_bytes_faster_than_the_memory_allows(gpu):
    """A decode step reads the weights and the batch's KV cache: ``effective_bandwidth_efficiency`` (bytes
    read / step time / datasheet bandwidth) is at most 1 on the measured kernels too, whatever the engine's
    saving against the tables (``kernel_decode_credit_us``, up to 30 us a layer). Before 2026-12-04 Llama-3.1-8B BF16 on one
    L40S decoded at 16.2 ms a token, 1.15x the 864 GB/s its 16 GB allow: the microbenchmark had served the
    GEMMs' weights from the L40S's 96 MB of L2, and the speed-up was applied on top."""
    precisions = [p for p in ("bf16", "fp8") if get_accelerator(gpu).supports(p)]   # the A100 has no FP8 path
    for engine in ("trtllm", "vllm", "sglang"):
        for precision in precisions:
            for clients in (1, 8, 64):
                e = estimate("llama-3.1-8b", gpu, precision=precision, tp=1, isl=1024, osl=256,
                             concurrency=clients, engine=engine, step_time="kernels")
                assert e.step_time_source == "kernels" or not e.fits, (engine, precision)
                if e.fits:
                    assert e.effective_bandwidth_efficiency <= 1.0 + 1e-9, (engine, precision, clients)
