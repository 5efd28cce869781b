"""Memory model: seed figures, GQA/MLA/sliding-window KV, and what fits on which GPU."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finops.catalog import accelerators, get_accelerator, get_model, models
from finops.errors import InputError, UnknownNameError
from finops.sizing import (
    bytes_per_param,
    kv_bytes,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    memory_fit,
    naive_kv_bytes,
    weight_bytes,
)

GIB = 2**30


def test_seed_003_naive_kv_is_16_gib_and_7b_fp16_weights_13_gib():
    assert naive_kv_bytes(32, 4096, 2048, 16, 2) / GIB == 16.0
    assert round(7e9 * bytes_per_param("fp16") / GIB, 1) == 13.0


def test_gqa_correct_llama_8b_kv_is_a_quarter_of_the_naive_figure():
    m = get_model("llama-3.1-8b")
    assert kv_bytes_per_token(m, "bf16") == 128 * 1024
    assert kv_bytes(m, 2048, 16) == naive_kv_bytes(32, 4096, 2048, 16, 2) / 4


def test_naive_formula_is_exact_for_an_mha_model():
    m = get_model("llama-2-7b")
    assert kv_bytes(m, 2048, 16, "fp16") == naive_kv_bytes(32, 4096, 2048, 16, 2)


@pytest.mark.parametrize("precision, expected_gb", [("bf16", 16.06), ("fp16", 16.06), ("fp8", 9.08),
                                                    ("fp32", 32.12)])
def test_seed_002_llama_8b_weights(precision, expected_gb):
    assert round(weight_bytes(get_model("llama-3.1-8b"), precision) / 1e9, 2) == expected_gb


def test_int4_carries_group_scales_and_keeps_embeddings_16_bit():
    m = get_model("llama-3.1-8b")
    embed = 128256 * 4096 * 2
    body = 8.03e9 - embed
    assert weight_bytes(m, "int4") == pytest.approx(body * (0.5 + 2 / 128) + embed * 2)
    assert weight_bytes(m, "int8") == weight_bytes(m, "fp8")


@pytest.mark.parametrize("model, kv_precision, expected", [
    ("deepseek-v3", "bf16", (512 + 64) * 61 * 2),           # MLA latent + decoupled RoPE key
    ("deepseek-v3", "fp8", (512 + 64) * 61),
    ("llama-3.1-70b", "bf16", 2 * 80 * 8 * 128 * 2),          # 320 KiB
    ("llama-3.1-70b", "fp8", 2 * 80 * 8 * 128),
    ("qwen3-30b-a3b", "bf16", 2 * 48 * 4 * 128 * 2),
    ("mixtral-8x7b", "bf16", 2 * 32 * 8 * 128 * 2),
    ("llama-2-7b", "fp16", 2 * 32 * 32 * 128 * 2),            # MHA: 512 KiB
])
def test_kv_bytes_per_token(model, kv_precision, expected):
    assert kv_bytes_per_token(get_model(model), kv_precision) == expected


def test_mla_is_far_smaller_than_the_mha_it_replaces():
    m = get_model("deepseek-v3")
    mha = 2 * m.layers * m.num_attention_heads * m.head_dim * 2
    assert mha / kv_bytes_per_token(m) > 50


@pytest.mark.parametrize("tokens, expected_tokens", [(1000, 1000), (4096, 4096), (8192, 4096), (32000, 4096)])
def test_mistral_v01_sliding_window_caps_kv(tokens, expected_tokens):
    v01, v03 = get_model("mistral-7b-v0.1"), get_model("mistral-7b")
    per_token = kv_bytes_per_token(v01)
    assert kv_bytes(v01, tokens, 1) == per_token * expected_tokens
    assert kv_bytes(v03, tokens, 1) == per_token * tokens  # v0.3 has no window


@pytest.mark.parametrize("model, tp, expected_share", [
    ("llama-3.1-8b", 1, 1.0), ("llama-3.1-8b", 4, 0.25), ("llama-3.1-8b", 8, 0.125),
    ("llama-3.1-8b", 16, 0.125),                      # 8 KV heads: replicated beyond TP8
    ("qwen3-30b-a3b", 8, 0.25),                       # 4 KV heads
    ("deepseek-v3", 8, 1.0),                          # MLA latent lives on every rank
])
def test_kv_sharding_by_tp(model, tp, expected_share):
    m = get_model(model)
    assert kv_bytes_per_token_per_gpu(m, tp) == kv_bytes_per_token(m) * expected_share


@pytest.mark.parametrize("gpu, tp, utilization, fits", [
    ("h100-sxm", 1, 0.90, False), ("h100-sxm", 1, 1.0, False), ("h100-sxm", 2, 0.90, True),
    ("a100-80gb", 2, 0.90, True), ("l40s", 2, 0.90, False), ("l40s", 4, 0.90, True),
    ("mi300x", 1, 0.90, True), ("mi325x", 1, 0.90, True),
    # 131.4 GiB of BF16 weights on 140.4 GiB: only with the engine allowed most of the GPU
    ("h200", 1, 0.90, False), ("h200", 1, 0.98, True),
])
def test_llama_70b_bf16_fit(gpu, tp, utilization, fits):
    f = memory_fit("llama-3.1-70b", gpu, precision="bf16", tp=tp, isl=2048, osl=512,
                   gpu_memory_utilization=utilization)
    assert f.fits is fits
    assert (f.shortfall_gib > 0) is (not fits)
    assert (f.max_concurrency >= 1) is fits


def test_shortfall_is_what_one_gpu_lacks():
    f = memory_fit("llama-3.1-70b", "h100-sxm", precision="bf16", tp=1, isl=2048, osl=512)
    weights = get_model("llama-3.1-70b").total_params_b * 1e9 * 2 / GIB
    needed = weights + 2.0 + f.kv_bytes_per_sequence_per_gpu / GIB
    assert f.shortfall_gib == pytest.approx(needed - get_accelerator("h100-sxm").memory_gib_usable * 0.9)
    assert f.weights_gib == pytest.approx(weights)


def test_max_concurrency_counts_whole_kv_blocks():
    f = memory_fit("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1000, osl=1000,
                   runtime_overhead_gib=0)
    assert f.tokens_per_sequence == 2000  # already a multiple of 16
    g = memory_fit("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1001, osl=1000,
                   runtime_overhead_gib=0)
    assert g.tokens_per_sequence == 2016
    budget = get_accelerator("h100-sxm").memory_gib_usable * 0.9 * GIB - 8.03e9 * 2
    assert f.max_concurrency == int(budget // (2000 * 131072))


@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "deepseek-v3"])
def test_max_concurrency_is_monotone_in_memory_and_tp(model):
    by_memory = [memory_fit(model, g, precision="fp8", tp=8, isl=4096, osl=1024).max_concurrency
                 for g in ("l40s", "a100-80gb", "h20", "h200", "b200", "mi300x", "mi325x")]
    assert by_memory == sorted(by_memory)
    for gpu in ("h100-sxm", "h200"):
        by_tp = [memory_fit(model, gpu, precision="bf16", tp=tp, isl=4096, osl=1024).max_concurrency
                 for tp in (1, 2, 4, 8, 16)]
        assert by_tp == sorted(by_tp)
    assert by_memory[-1] > 0


def test_fp8_kv_doubles_the_sequences_that_fit():
    kwargs = dict(precision="fp8", tp=1, isl=2048, osl=2048)
    bf16 = memory_fit("llama-3.1-8b", "h100-sxm", **kwargs)
    fp8 = memory_fit("llama-3.1-8b", "h100-sxm", kv_precision="fp8", **kwargs)
    assert fp8.kv_bytes_per_token == bf16.kv_bytes_per_token / 2
    assert fp8.max_concurrency in (2 * bf16.max_concurrency, 2 * bf16.max_concurrency + 1)


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(precision="fp4"), InputError, "unknown precision 'fp4'"),
    (dict(kv_precision="int4"), InputError, "unknown KV precision 'int4'"),
    (dict(tp=0), InputError, "tp must be a whole number >= 1"),
    (dict(tp=1.5), InputError, "tp must be"),
    (dict(tp=3), InputError, "tp 3 does not split llama-3.1-8b's 32 attention heads"),
    (dict(isl=0), InputError, "isl must be a positive number"),
    (dict(osl=-5), InputError, "osl must be a positive number"),
    (dict(gpu_memory_utilization=1.2), InputError, "gpu_memory_utilization"),
    (dict(runtime_overhead_gib=-1), InputError, "runtime_overhead_gib"),
    (dict(model="llama-9b"), UnknownNameError, "unknown model 'llama-9b'; did you mean"),
    (dict(gpu="h10"), UnknownNameError, "unknown GPU 'h10'; did you mean"),
    (dict(model="llama-2-7b", isl=4000, osl=200), InputError, "isl \\+ osl = 4200 tokens exceed llama-2-7b's native context"),
    (dict(model="llama-2-7b", isl=5000, osl=500, context_length=5000), InputError,
     "isl \\+ osl = 5500 tokens exceed the context length of 5000"),
    (dict(context_length=0), InputError, "context_length must be a whole number of tokens >= 1"),
])
def test_bad_input_is_an_input_error(kwargs, error, text):
    args = dict(model="llama-3.1-8b", gpu="h100", precision="bf16", tp=1, isl=100, osl=100) | kwargs
    with pytest.raises(error, match=text.replace("(", r"\(")):
        memory_fit(args.pop("model"), args.pop("gpu"), **args)


@pytest.mark.parametrize("call", [lambda: bytes_per_param("bf17"), lambda: naive_kv_bytes(32, 4096, 0, 1, 2),
                                  lambda: kv_bytes(get_model("llama-3.1-8b"), 100, -1)])
def test_helpers_reject_bad_input(call):
    with pytest.raises(InputError):
        call()


@settings(max_examples=200, deadline=None)
@given(model=st.sampled_from(sorted(models())), gpu=st.sampled_from(sorted(accelerators())),
       precision=st.sampled_from(["bf16", "fp8", "int4"]), tp=st.sampled_from([1, 2, 4, 8]),
       isl=st.integers(1, 3000), osl=st.integers(1, 500), extra=st.integers(1, 500))   # within Llama-2's 4,096
def test_max_concurrency_fills_the_budget_and_falls_with_length(model, gpu, precision, tp, isl, osl, extra):
    f = memory_fit(model, gpu, precision=precision, tp=tp, isl=isl, osl=osl)
    budget = f.kv_budget_gib * GIB
    assert f.max_concurrency * f.kv_bytes_per_sequence_per_gpu <= max(budget, 0) + 1e-3
    assert (f.max_concurrency + 1) * f.kv_bytes_per_sequence_per_gpu > budget
    assert f.fits == (f.shortfall_gib == 0) == (f.max_concurrency >= 1)
    longer = memory_fit(model, gpu, precision=precision, tp=tp, isl=isl + extra, osl=osl)
    assert longer.max_concurrency <= f.max_concurrency
