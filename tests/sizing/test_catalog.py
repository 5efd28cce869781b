"""Catalog sanity: dense (not sparse) throughput, plausible usable memory, consistent model rows."""

import pytest

from finops.catalog import accelerators, count_params, get_model, models
from finops.sizing import kv_bytes_per_token

# Hopper, Ada, Blackwell and CDNA3 run FP8 at twice their dense BF16 rate; a sparse figure would show as 4x.
FP8_DOUBLES = ["l4", "l40s", "h100-sxm", "h100-pcie", "h200", "h20", "b200", "mi300x", "mi325x"]


@pytest.mark.parametrize("gpu", FP8_DOUBLES)
def test_fp8_is_twice_dense_bf16(gpu):
    acc = accelerators()[gpu]
    assert acc.tflops("fp8") / acc.tflops("bf16") == pytest.approx(2.0, rel=0.02)


@pytest.mark.parametrize("gpu", sorted(accelerators()))
def test_accelerator_rows_are_plausible(gpu):
    acc = accelerators()[gpu]
    assert 0.9 * acc.memory_gb * 1e9 / 2**30 <= acc.memory_gib_usable <= acc.memory_gb
    assert acc.memory_bandwidth_gbps > 0 and acc.bf16_tflops > 0 and acc.interconnect_gbps > 0
    assert acc.int8_tops is None or acc.int8_tops >= acc.bf16_tflops
    assert acc.source and acc.as_of


@pytest.mark.parametrize("gpu", ["a10g", "a100-40gb", "a100-80gb", "tpu-v5e", "tpu-v5p", "tpu-v6e"])
def test_no_fp8_where_the_hardware_has_none(gpu):
    assert not accelerators()[gpu].supports("fp8")


@pytest.mark.parametrize("name", sorted(models()))
def test_model_rows_are_consistent(name):
    m = models()[name]
    assert m.num_attention_heads % m.num_kv_heads == 0
    assert 0 < m.active_params_b <= m.total_params_b
    assert m.is_moe == (m.active_params_b < m.total_params_b)
    assert (m.attention == "mla") == bool(m.kv_lora_rank)
    assert m.max_context > 0 and kv_bytes_per_token(m) > 0
    assert m.source.startswith("https://huggingface.co/") and m.as_of


@pytest.mark.parametrize("name", sorted(models()))
def test_parameter_counts_follow_from_the_architecture(name):
    m = models()[name]
    config = {"model_type": m.family, "hidden_size": m.hidden_size, "num_hidden_layers": m.layers,
              "num_attention_heads": m.num_attention_heads, "num_key_value_heads": m.num_kv_heads,
              "head_dim": m.head_dim, "intermediate_size": m.intermediate_size, "vocab_size": m.vocab_size,
              "tie_word_embeddings": m.tied_embeddings}
    if m.is_moe:
        config |= {"num_experts": m.num_experts, "num_experts_per_tok": m.experts_per_token,
                   "moe_intermediate_size": m.moe_intermediate_size}
    if m.attention == "mla":
        pytest.skip("MLA projections need q_lora_rank and v_head_dim: covered by the DeepSeek-V3 fixture")
    if m.first_dense_layers:
        pytest.skip("covered by its fixture")
    total, active = count_params(config)
    assert total / 1e9 == pytest.approx(m.total_params_b, abs=5e-4)
    assert active / 1e9 == pytest.approx(m.active_params_b, abs=5e-4)


def test_llama_70b_and_33_share_an_architecture():
    a, b = get_model("llama-3.1-70b"), get_model("llama-3.3-70b")
    assert (a.layers, a.hidden_size, a.num_kv_heads, a.total_params_b) == (b.layers, b.hidden_size, b.num_kv_heads,
                                                                            b.total_params_b)
