"""Mixture-of-experts step times from measured kernels: the routed experts' tables, how a layer
of experts is composed, which split of the experts answers, the KV heads replicated past their count, and
where ``o_moe`` (the roofline's stand-in for the expert kernels) applies.

Expected expert latencies are read from aiconfigurator-core 0.12.0's own parquet file (H100 SXM, TRT-LLM
1.3.0rc20, ``systems/data/h100_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet``, rows with
``distribution == "power_law_1.01"``, ``pandas.read_parquet``, 2026-12-03), not from our tables; the
composition is written out by hand from the module docstring of finops/sizing/kernels.py.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from finops.catalog import get_model
from finops.sizing import kernels
from finops.sizing.calibration import bundled_measurements, predict, queue_limited
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import estimate, with_step_time

QWEN_235B = get_model("qwen3-235b-a22b")     # H 4096, 64 heads, 4 KV heads, 128 experts of 1,536, top 8
QWEN_30B = get_model("qwen3-30b-a3b")        # H 2048, 32 heads, 4 KV heads, 128 experts of 768, top 8
SHAPE_235B = "4096x1536x8x128"


@pytest.mark.parametrize("table, tokens, gpus, latency_ms", [
    (f"trtllm/moe/fp8/{SHAPE_235B}/tp", 64, 2, 0.4173248),    # fp8_block, moe_tp 2, moe_ep 1
    (f"trtllm/moe/fp8/{SHAPE_235B}/ep", 256, 8, 0.1616192),   # fp8_block, moe_tp 1, moe_ep 8
    (f"trtllm/moe/fp8/{SHAPE_235B}/ep", 8, 8, 0.0780544),
    (f"trtllm/moe/bf16/{SHAPE_235B}/tp", 1, 4, 0.0535168),    # bfloat16, moe_tp 4
    (f"trtllm/moe/bf16/{SHAPE_235B}/ep", 1024, 4, 0.5817728),
])
def test_an_expert_grid_point_is_the_measured_latency(table, tokens, gpus, latency_ms):
    assert kernels._table("h100-sxm", table)(float(tokens), float(gpus)) * 1e3 == pytest.approx(latency_ms, rel=0.005)


def test_the_experts_are_split_as_asked_where_that_split_was_measured():
    """TRT-LLM FP8 on H100 measured Qwen3-235B's experts split by TP on 1-4 GPUs and by EP on 1-128: on 4
    GPUs each layout answers as asked; on 8 only EP was measured, and answers either way."""
    def table(tp, expert_parallel):
        return kernels.expert_table(QWEN_235B, "h100-sxm", engine="trtllm", precision="fp8", tp=tp,
                                    expert_parallel=expert_parallel)
    tp_table, ep_table = (kernels._table("h100-sxm", f"trtllm/moe/fp8/{SHAPE_235B}/{layout}") for layout in ("tp", "ep"))
    assert table(4, False) is tp_table and table(4, True) is ep_table
    assert table(8, False) is ep_table and table(8, True) is ep_table
    assert kernels.expert_table(replace(QWEN_235B, num_experts=64), "h100-sxm", engine="trtllm", precision="fp8",
                                tp=4) is None
    assert kernels.expert_table(QWEN_235B, "h100-sxm", engine="trtllm", precision="fp8", tp=4) is tp_table  # unsaid: TP
    # Mixtral-8x7B's expert shape: measured by TP up to 32 GPUs, by EP up to 8; EP asked on 16 falls back to TP
    mixtral_like = replace(QWEN_235B, hidden_size=4096, moe_intermediate_size=14336, experts_per_token=2, num_experts=8)
    mixtral_tp = kernels._table("h100-sxm", "trtllm/moe/bf16/4096x14336x2x8/tp")
    assert kernels.expert_table(mixtral_like, "h100-sxm", engine="trtllm", precision="bf16", tp=16,
                                expert_parallel=True) is mixtral_tp
    args = dict(precision="fp8", tp=4, isl=1024, osl=256, concurrency=32, engine="trtllm", step_time="kernels")
    by_tp, by_ep = (estimate(QWEN_235B, "h100-sxm", expert_parallel=ep, **args) for ep in (False, True))
    assert by_tp.step_time_source == by_ep.step_time_source == "kernels"
    assert by_tp.tpot_ms != pytest.approx(by_ep.tpot_ms, rel=1e-3)


@pytest.mark.parametrize("tp", [1, 2, 4])
@pytest.mark.parametrize("shared, first_dense", [(0, 0), (1, 3)])
def test_a_moe_decode_step_is_attention_router_experts_and_shared_experts(tp, shared, first_dense):
    """From the raw tables at 8 sequences of 1,024 tokens: ``L x (G(b, (h + 2g) d / t, H) + G(b, H, h d / t)
    + 2 AR + gen_attn) + (L - D) x (G(b, E, H) + MoE(b, t) + s x (G(b, 2 I_e / t, H) + G(b, H, I_e / t)))
    + D x (G(b, 2 I / t, H) + G(b, H, I / t)) + G(b, V / t, H)``; Qwen3-30B-A3B (L 48, H 2,048, h 32,
    g 4, E 128, I_e 768, I 6,144, V 151,936), and the same with a shared expert and three dense layers
    first (``s``, ``D``), which the tables' expert shape still covers."""
    model = replace(QWEN_30B, shared_experts=shared, first_dense_layers=first_dense)
    table = lambda name: kernels._table("h100-sxm", f"trtllm/{name}")  # noqa: E731
    gemm, generation, allreduce = table("gemm/bf16"), table("generation/bf16"), table("allreduce")
    experts = table("moe/bf16/2048x768x8x128/tp")
    b, ctx, hidden, layers = 8.0, 1024.0, 2048, 48
    h, g = 32 / tp, 4 / tp
    attention = gemm(b, (h + 2 * g) * 128, hidden) + gemm(b, hidden, h * 128)
    comm = 2 * allreduce(float(tp), b * hidden) if tp > 1 else 0.0   # message size in BF16 elements
    routed = (gemm(b, 128, hidden) + experts(b, float(tp))
              + shared * (gemm(b, 2 * 768 / tp, hidden) + gemm(b, hidden, 768 / tp)))
    dense = gemm(b, 2 * 6144 / tp, hidden) + gemm(b, hidden, 6144 / tp)
    expected = (layers * (attention + comm + generation(b, ctx, h, g)) + (layers - first_dense) * routed
                + first_dense * dense + gemm(b, 151_936 / tp, hidden))
    k = kernels.step_kernels(model, "h100-sxm", engine="trtllm", precision="bf16", kv_precision="bf16", tp=tp)
    assert float(k.decode(b, ctx)) == pytest.approx(expected, rel=1e-12)
    assert 1e-3 < expected < 0.05


def test_kv_heads_fewer_than_the_gpus_are_replicated():
    """Qwen3-235B's 4 KV heads on 8 GPUs: one head per GPU (``ceil(4 / 8)``), as the engines replicate them;
    the attention of a decode step reads that one head beside 64 / 8 query heads. Three KV heads on two
    GPUs neither divide nor are divided: not covered."""
    generation = kernels._table("h100-sxm", "trtllm/generation/fp8")
    k8 = kernels.step_kernels(QWEN_235B, "h100-sxm", engine="trtllm", precision="fp8", kv_precision="fp8", tp=8)
    k4 = kernels.step_kernels(QWEN_235B, "h100-sxm", engine="trtllm", precision="fp8", kv_precision="fp8", tp=4)
    assert k8 is not None and k4 is not None
    b, ctx = 64.0, 4096.0
    # the attention's share: the difference between two context lengths (the GEMMs do not depend on it)
    for k, tp in ((k8, 8), (k4, 4)):
        step = float(k.decode(b, 2 * ctx)) - float(k.decode(b, ctx))
        attention = 94 * (generation(b, 2 * ctx, 64 / tp, 1.0) - generation(b, ctx, 64 / tp, 1.0))
        assert step == pytest.approx(attention, rel=1e-9), tp
    assert kernels.step_kernels(replace(QWEN_235B, num_kv_heads=3), "h100-sxm", engine="trtllm", precision="fp8",
                                kv_precision="fp8", tp=2) is None


def _with_moe_overhead(calibration: Calibration, value: float) -> Calibration:
    return replace(calibration, engines={e: replace(c, moe_overhead_us_per_layer=value)
                                         for e, c in calibration.engines.items()})


def test_o_moe_stands_for_the_expert_kernels_only_on_the_roofline():
    """Measured experts already carry the router, dispatch and grouped GEMMs: ``o_moe`` changes nothing
    where the kernels time the step, and adds ``L x o_moe`` to each roofline step."""
    args = dict(precision="fp8", tp=4, isl=1024, osl=256, concurrency=16, engine="trtllm")
    base, more = Calibration.bundled(), _with_moe_overhead(Calibration.bundled(), 200.0)
    kernel = [estimate(QWEN_235B, "h100-sxm", step_time="kernels", calibration=c, **args) for c in (base, more)]
    assert kernel[0].step_time_source == "kernels" and kernel[0].tpot_ms == kernel[1].tpot_ms
    none = _with_moe_overhead(base, 0.0)
    roofline = [estimate(QWEN_235B, "h100-sxm", step_time="roofline", calibration=c, **args) for c in (none, more)]
    assert roofline[1].tpot_ms - roofline[0].tpot_ms == pytest.approx(94 * 200e-3, rel=0.02)


def test_each_model_class_has_its_own_switch():
    """``auto`` follows the calibration per engine and class: kernels for dense models and the roofline for
    MoE models, or the other way, on the same engine."""
    cal = Calibration.bundled()
    args = dict(gpu="h100-sxm", precision="bf16", tp=4, isl=1024, osl=256, concurrency=16, engine="vllm")
    for dense_on, moe_on in ((1.0, 0.0), (0.0, 1.0)):
        switched = replace(cal, engines={**cal.engines, "vllm": replace(
            cal.constants("vllm"), kernel_steps=dense_on, kernel_steps_moe=moe_on)})
        sources = [estimate(model, calibration=switched, **args).step_time_source
                   for model in ("llama-3.1-8b", "qwen3-30b-a3b")]
        assert sources == [("kernels" if on else "roofline") for on in (dense_on, moe_on)]
    assert with_step_time(cal.constants("vllm"), "kernels").kernel_steps_moe == 1.0


def test_expert_parallel_rows_are_read_and_timed_as_measured():
    """The bundled rows say which MoE campaigns split their experts by EP (aiconfigurator-core's
    ``moe_ep`` > 1); stacked in one array, each is timed as ``estimate`` times it alone with that split."""
    rows = [r for r in bundled_measurements() if not queue_limited(r)]
    ep = [r for r in rows if r.expert_parallel]
    assert len(ep) >= 100 and {get_model(r.model).is_moe for r in ep} == {True}
    picked = ep[::max(len(ep) // 12, 1)] + [r for r in rows if not r.expert_parallel and r.model == "minimax-m2.5"][:6]
    ttft, tpot = predict(picked, Calibration.bundled())
    for r, stacked_ttft, stacked_tpot in zip(picked, ttft, tpot):
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl, concurrency=r.concurrency,
                     engine=r.engine, expert_parallel=r.expert_parallel)
        assert (stacked_tpot, stacked_ttft) == pytest.approx((e.tpot_ms, e.ttft_ms), rel=1e-12), r
    assert np.isfinite(tpot).all()


def test_the_experts_are_split_by_tensor_parallelism_unless_asked():
    """No ``expert_parallel`` given: the tensor-parallel split, in ``estimate`` and ``replica_physics`` alike."""
    from finops.catalog import get_accelerator
    from finops.sizing.performance import replica_physics

    args = dict(precision="fp8", tp=4, isl=1024, osl=256, concurrency=32, engine="trtllm", step_time="kernels")
    default, by_tp, by_ep = (estimate(QWEN_235B, "h100-sxm", **args),
                             *(estimate(QWEN_235B, "h100-sxm", expert_parallel=ep, **args) for ep in (False, True)))
    assert default.tpot_ms == by_tp.tpot_ms != pytest.approx(by_ep.tpot_ms, rel=1e-3)
    physics = dict(precision="fp8", tp=4, kv_precision="fp8", engine="trtllm")
    unsaid, tp_split, ep_split = (replica_physics(QWEN_235B, get_accelerator("h100-sxm"), **physics, **split)
                                  for split in ({}, {"expert_parallel": False}, {"expert_parallel": True}))
    assert np.array_equal(unsaid.kernel_tokens, tp_split.kernel_tokens)
    assert not np.allclose(unsaid.kernel_tokens, ep_split.kernel_tokens)


def test_one_layer_of_routed_experts_makes_a_moe_model_for_the_kernel_choice():
    """vLLM times MoE models by kernels and dense ones by the roofline (the bundled choice): a model whose
    layers are all dense but one is still timed as a MoE model."""
    model = replace(QWEN_30B, first_dense_layers=QWEN_30B.layers - 1)
    args = dict(precision="fp8", tp=1, isl=1024, osl=256, concurrency=8, engine="vllm")
    assert estimate(model, "h100-sxm", **args).step_time_source == "kernels"
    assert estimate(get_model("qwen3-32b"), "h100-sxm", **args).step_time_source == "roofline"
