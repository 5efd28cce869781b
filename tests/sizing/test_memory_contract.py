"""``finops.sizing.memory`` at its edges: every bad input's message and hint, the boundaries (exactly one
sequence fits, a request exactly as long as the context), tied embeddings, MLA without a RoPE key, and
the KV precision defaults. (Written against the mutants ``scripts/mutation.sh memory`` left alive.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from finops.catalog import get_accelerator, get_model
from finops.errors import InputError
from finops.sizing.memory import (
    bytes_per_param,
    check_context,
    embedding_params,
    kv_bytes,
    kv_bytes_per_token,
    kv_slots,
    kv_tokens_per_sequence,
    memory_fit,
    model_kv_precision,
    naive_kv_bytes,
    sequence_tokens,
    tp_shards_heads,
    weight_bytes,
)

GIB = 2.0 ** 30
LLAMA_8B = get_model("llama-3.1-8b")
PRECISION_HINT = "use one of: fp32, bf16, fp16, fp8, int8, int4"


def fit(**overrides):
    arguments = {"precision": "bf16", "tp": 1, "isl": 1024, "osl": 256, **overrides}
    return memory_fit(arguments.pop("model", LLAMA_8B), arguments.pop("gpu", "h100-sxm"), **arguments)


BAD_INPUTS = [
    (lambda: bytes_per_param("fp4"), "unknown precision 'fp4'", PRECISION_HINT),
    (lambda: weight_bytes(LLAMA_8B, "fp4"), "unknown precision 'fp4'", PRECISION_HINT),
    (lambda: kv_bytes_per_token(LLAMA_8B, "int4"), "unknown KV precision 'int4'",
     "use one of: fp32, bf16, fp16, fp8, int8"),
    (lambda: kv_bytes_per_token(dataclasses.replace(get_model("deepseek-v3"), kv_lora_rank=None)),
     "model 'deepseek-v3' uses MLA but has no kv_lora_rank", None),
    (lambda: kv_tokens_per_sequence(LLAMA_8B, 0), "tokens must be a positive number, got 0", None),
    (lambda: kv_bytes(LLAMA_8B, 10, 0), "batch must be a positive number, got 0", None),
    (lambda: kv_bytes(LLAMA_8B, 10, float("inf")), "batch must be a positive number, got inf", None),
    (lambda: naive_kv_bytes(0, 4096, 2048, 16, 2), "layers must be a positive number, got 0", None),
    (lambda: naive_kv_bytes(32, 0, 2048, 16, 2), "d_model must be a positive number, got 0", None),
    (lambda: naive_kv_bytes(32, 4096, 0, 16, 2), "tokens must be a positive number, got 0", None),
    (lambda: naive_kv_bytes(32, 4096, 2048, 0, 2), "batch must be a positive number, got 0", None),
    (lambda: naive_kv_bytes(32, 4096, 2048, 16, 0), "bytes_per_value must be a positive number, got 0", None),
    (lambda: sequence_tokens(LLAMA_8B, 0, 10), "isl must be a positive number, got 0", None),
    (lambda: sequence_tokens(LLAMA_8B, 10, True), "osl must be a positive number, got True", None),
    (lambda: sequence_tokens(LLAMA_8B, 131_000, 100),
     "isl + osl = 131100 tokens exceed llama-3.1-8b's native context of 131072",
     "shorten the requests or choose a longer-context model; if the engine extends the position range (RoPE "
     "scaling), give context_length (--context-length) of at least 131100 to estimate it beyond the native "
     "context"),
    (lambda: sequence_tokens(LLAMA_8B, 131_000, 100, context_length=131_099),
     "isl + osl = 131100 tokens exceed the context length of 131099",
     "give a context_length of at least 131100, or shorten the requests"),
    (lambda: fit(gpu_memory_utilization=0), "gpu_memory_utilization must be in (0, 1], got 0",
     "vLLM's default is 0.90"),
    (lambda: fit(tp=0), "tp must be a whole number >= 1, got 0", "use 1, 2, 4 or 8"),
    (lambda: fit(tp=3), "tp 3 does not split llama-3.1-8b's 32 attention heads (8 KV heads) evenly; "
     "engines shard whole heads", "use one of: 1, 2, 4, 8, 16"),
]


@pytest.mark.parametrize("call,message,hint", BAD_INPUTS)
def test_bad_input_message_and_hint(call, message, hint):
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.message == message
    assert caught.value.hint == hint


def test_a_request_exactly_as_long_as_the_context_is_accepted():
    assert sequence_tokens(LLAMA_8B, 131_072 - 100, 100) == 131_072


def test_an_extended_context_caches_every_token_of_the_longer_sequence():
    """Past the native context on an engine that serves it (RoPE scaling), each token is cached as any other:
    5,000 + 500 tokens are 344 blocks of 16 = 5,504, and the check reports it beyond the native 4,096."""
    llama2 = get_model("llama-2-7b")
    assert sequence_tokens(llama2, 5000, 500, context_length=5500) == 5504
    assert check_context(llama2, 5000, 500, context_length=8192) is True
    assert check_context(llama2, 3000, 500, context_length=8192) is False


def test_heads_must_split_as_well_as_kv_heads():
    """Qwen2.5-7B: 28 query heads, 4 KV heads. TP 8 splits the KV heads' replication but not 28 heads."""
    qwen = dataclasses.replace(LLAMA_8B, id="qwen-like", num_attention_heads=28, num_kv_heads=4)
    assert [tp for tp in (1, 2, 4, 7, 8) if tp_shards_heads(qwen, tp)] == [1, 2, 4]


def test_tied_embeddings_count_once():
    tied = dataclasses.replace(LLAMA_8B, tied_embeddings=True)
    assert embedding_params(tied) == 128_256 * 4096
    assert embedding_params(LLAMA_8B) == 2 * 128_256 * 4096


def test_weights_are_exactly_the_published_size():
    """Seed 002: Llama-3.1-8B at 16.06 GB in BF16 (8.03 B parameters x 2 bytes), to float precision."""
    assert weight_bytes(LLAMA_8B, "bf16") == pytest.approx(16.06e9, rel=1e-12)


def test_mla_without_a_rope_key_caches_only_the_latent():
    mla = dataclasses.replace(get_model("deepseek-v3"), qk_rope_head_dim=None)
    assert kv_bytes_per_token(mla, "bf16") == 512 * 61 * 2


def test_kv_bytes_honour_the_kv_precision():
    assert kv_bytes(LLAMA_8B, 2048, 16, "fp8") == kv_bytes(LLAMA_8B, 2048, 16, "bf16") / 2 == 2 * GIB


@pytest.mark.parametrize("precision,kv_per_token", [("fp32", 2 * 32 * 8 * 128 * 4),
                                                    ("bf16", 2 * 32 * 8 * 128 * 2),
                                                    ("fp8", 2 * 32 * 8 * 128 * 2)])
def test_kv_cache_precision_defaults(precision, kv_per_token):
    """Engines keep a 16-bit cache unless told; FP32 weights keep an FP32 cache."""
    assert fit(precision=precision).kv_bytes_per_token == kv_per_token


def test_exactly_one_sequence_fits():
    gpu = get_accelerator("h100-sxm")
    per_sequence = 131_072 * 1280 / GIB                      # 1024 + 256 tokens, 80 blocks of 16
    weights = weight_bytes(LLAMA_8B, "bf16") / GIB
    overhead = gpu.memory_gib_usable * 0.9 - weights - 1.5 * per_sequence
    one = fit(runtime_overhead_gib=overhead)
    assert (one.fits, one.max_concurrency, one.shortfall_gib) == (True, 1, 0.0)
    none = fit(runtime_overhead_gib=overhead + per_sequence)  # half a sequence of room
    assert (none.fits, none.max_concurrency) == (False, 0)
    assert none.shortfall_gib == pytest.approx(0.5 * per_sequence)


def test_the_fit_reports_its_inputs():
    result = fit(tp=2, runtime_overhead_gib=3.5)
    assert result.tp == 2 and result.runtime_overhead_gib == 3.5
    assert result.gpu_memory_gib == get_accelerator("h100-sxm").memory_gib_usable


def test_a_custom_model_spec_is_used_as_given():
    """A spec not in the catalog (a user's config) is sized as it is, not looked up by name."""
    custom = dataclasses.replace(LLAMA_8B, id="my-llama", total_params_b=4.0, aliases=())
    assert fit(model=custom).weights_gib == pytest.approx(weight_bytes(custom, "bf16") / GIB)


def test_kv_slots_shortfall_is_what_one_gpu_lacks():
    assert kv_slots(1.0, 1.5 * GIB) == (0.0, 0.5)
    assert kv_slots(-0.25, 0.5 * GIB) == (0.0, 0.75)


def test_kv_slots_of_many_budgets_at_once():
    """A search sizes many candidates in one call: arrays in, arrays out, each element as its scalar.
    1 GiB / 256 MiB = 4 sequences; 3 GiB / 1 GiB = 3; a budget of -1 GiB holds none and lacks 0.5 + 1."""
    slots, shortfall = kv_slots(np.array([1.0, 3.0, -1.0]), np.array([2.0 ** 28, GIB, 0.5 * GIB]))
    assert isinstance(slots, np.ndarray) and isinstance(shortfall, np.ndarray)
    assert slots.tolist() == [4.0, 3.0, 0.0]
    assert shortfall.tolist() == [0.0, 0.0, 1.5]


def test_kv_slots_of_one_budget_are_plain_floats():
    assert kv_slots(np.array(3.0), GIB) == (3.0, 0.0)
    assert all(type(x) is float for x in kv_slots(np.array(3.0), GIB))


@pytest.mark.parametrize("precision,kv_precision", [("fp32", "fp32"), ("bf16", "bf16"), ("fp16", "bf16"),
                                                    ("fp8", "bf16"), ("int4", "bf16")])
def test_a_checkpoint_served_as_it_is_keeps_a_16_bit_cache(precision, kv_precision):
    """vLLM's ``kv_cache_dtype="auto"``: the cache in the model's dtype, 16 bit for quantized weights."""
    assert model_kv_precision(precision) == kv_precision
