"""Hugging Face config.json -> ModelSpec: real-shaped fixtures reproduce the catalog rows."""

import dataclasses
import json
from pathlib import Path

import pytest

from finops.catalog import count_params, get_model, load_hf_config, resolve_model, spec_from_config
from finops.errors import InputError, UnknownNameError
from finops.sizing import PRECISIONS, kv_bytes, kv_bytes_per_token, weight_bytes

FIXTURES = Path(__file__).parent / "fixtures" / "hf"
STRUCTURE = ("attention", "layers", "hidden_size", "num_attention_heads", "num_kv_heads", "head_dim",
             "intermediate_size", "moe_intermediate_size", "num_experts", "experts_per_token", "shared_experts",
             "first_dense_layers", "vocab_size", "tied_embeddings", "kv_lora_rank", "qk_rope_head_dim",
             "sliding_window", "max_context")


@pytest.mark.parametrize("folder, catalog_id", [
    ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("Qwen3-30B-A3B", "qwen3-30b-a3b"),
    ("Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("Mistral-7B-v0.1", "mistral-7b-v0.1"),
    ("DeepSeek-V3", "deepseek-v3"),
])
def test_fixture_matches_catalog_row(folder, catalog_id):
    spec, row = load_hf_config(FIXTURES / folder), get_model(catalog_id)
    assert {f: getattr(spec, f) for f in STRUCTURE} == {f: getattr(row, f) for f in STRUCTURE}
    assert spec.total_params_b == pytest.approx(row.total_params_b, abs=5e-4)
    assert spec.active_params_b == pytest.approx(row.active_params_b, abs=5e-4)
    assert kv_bytes_per_token(spec) == kv_bytes_per_token(row)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_llama_8b_config_reproduces_catalog_weights_and_kv(precision):
    spec = load_hf_config(FIXTURES / "Llama-3.1-8B-Instruct" / "config.json")
    assert spec.id == "llama-3.1-8b-instruct"
    assert weight_bytes(spec, precision) == pytest.approx(weight_bytes(get_model("llama-3.1-8b"), precision), rel=1e-4)
    assert kv_bytes_per_token(spec) == 131072
    assert round(weight_bytes(spec, "fp8") / 1e9, 2) == 9.08


@pytest.mark.parametrize("config, total_b, active_b", [
    # Qwen1.5-MoE-A2.7B: 60 experts + one wide shared expert with its gate, QKV biases
    (dict(model_type="qwen2_moe", hidden_size=2048, num_hidden_layers=24, num_attention_heads=16,
          num_key_value_heads=16, intermediate_size=5632, moe_intermediate_size=1408,
          shared_expert_intermediate_size=5632, num_experts=60, num_experts_per_tok=4, vocab_size=151936), 14.32, 2.69),
    # Qwen2.5-7B: QKV biases
    (json.loads((FIXTURES / "Qwen2.5-7B-Instruct" / "config.json").read_text()), 7.62, 7.62),
    # Llama-3.2-1B: tied embeddings, counted once
    (dict(model_type="llama", hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
          intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True), 1.24, 1.24),
])
def test_parameter_counts(config, total_b, active_b):
    total, active = count_params(config)
    assert (round(total / 1e9, 2), round(active / 1e9, 2)) == (total_b, active_b)


def test_moe_total_versus_active():
    for name in ("mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"):
        m = get_model(name)
        assert m.is_moe and m.active_params_b < m.total_params_b / 3
    assert not get_model("llama-3.1-70b").is_moe


BASE = dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, intermediate_size=11008, vocab_size=32000)


@pytest.mark.parametrize("extra, field, expected", [
    ({}, "num_kv_heads", 32),                                    # no num_key_value_heads: MHA
    ({}, "attention", "mha"),
    ({}, "head_dim", 128),                                       # hidden / heads
    ({"head_dim": 256}, "head_dim", 256),
    ({"num_key_value_heads": 4}, "attention", "gqa"),
    ({"sliding_window": 4096}, "sliding_window", 4096),
    ({"sliding_window": 4096, "use_sliding_window": False}, "sliding_window", None),
    ({"sliding_window": 4096, "use_sliding_window": True, "max_window_layers": 32}, "sliding_window", 4096),
    ({"sliding_window": 4096, "use_sliding_window": True, "max_window_layers": 28}, "sliding_window", None),
    # gpt-oss: the window on every other layer (layer_types), full attention on the rest: no cap
    ({"sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 16}, "sliding_window", None),
    ({"sliding_window": 128, "layer_types": ["sliding_attention"] * 32}, "sliding_window", 128),
    ({}, "tied_embeddings", False),
    ({}, "max_context", 0),
])
def test_defaults_and_windows(extra, field, expected):
    assert getattr(spec_from_config(BASE | extra, name="x"), field) == expected


def test_qwen25_declared_but_disabled_window_does_not_cap_kv():
    spec = load_hf_config(FIXTURES / "Qwen2.5-7B-Instruct")
    assert spec.sliding_window is None
    assert kv_bytes(spec, 200_000, 1) == kv_bytes_per_token(spec) * 200_000


def test_multimodal_text_config_is_read():
    wrapped = {"model_type": "llava", "text_config": BASE | {"num_key_value_heads": 8}}
    assert spec_from_config(wrapped, name="vlm").num_kv_heads == 8


@pytest.mark.parametrize("target", [
    "llama-3.1-8b", "Llama3.1-8B", "meta-llama/Llama-3.1-8B-Instruct",
    str(FIXTURES / "Llama-3.1-8B-Instruct" / "config.json"), str(FIXTURES / "Llama-3.1-8B-Instruct"),
    FIXTURES / "Llama-3.1-8B-Instruct" / "config.json",
])
def test_resolve_model_accepts_alias_hf_id_and_paths(target):
    spec = resolve_model(target)
    assert (spec.layers, spec.num_kv_heads, round(spec.total_params_b, 2)) == (32, 8, 8.03)


def test_resolve_model_passes_a_spec_through():
    m = get_model("qwen3-8b")
    assert resolve_model(m) is m


def test_unknown_hf_id_suggests_catalog_names_and_the_config_route():
    with pytest.raises(UnknownNameError, match="did you mean") as info:
        resolve_model("meta-llama/Llama-3.1-8B-Instruct-v2")
    assert "download its config.json and pass its path" in str(info.value)
    with pytest.raises(UnknownNameError, match="unknown model 'llama-9b'"):
        resolve_model("llama-9b")


@pytest.mark.parametrize("content, message", [
    ("{", "cannot read JSON"),
    ("[1, 2]", "must hold a JSON object"),
    (json.dumps({k: v for k, v in BASE.items() if k != "hidden_size"}), "config has no 'hidden_size'"),
    (json.dumps(BASE | {"num_key_value_heads": 5}), "not a multiple of num_key_value_heads 5"),
    (json.dumps(BASE | {"num_hidden_layers": -2}), "'num_hidden_layers' must be a whole number"),
    (json.dumps(BASE | {"vocab_size": "big"}), "'vocab_size' must be a whole number"),
    (json.dumps(BASE | {"num_local_experts": "8"}), "'num_local_experts' must be a whole number"),
    (json.dumps(BASE | {"num_experts": 8, "mlp_only_layers": "0,1"}), "'mlp_only_layers' must be a list"),
    (json.dumps(BASE | {"sliding_window": [4096, None]}), "'sliding_window' must be a whole number"),
    # ai21labs/Jamba-v0.1 (JambaForCausalLM): attention every 8th layer, Mamba layers between them.
    (json.dumps(BASE | {"model_type": "jamba", "architectures": ["JambaForCausalLM"]}),
     r"jamba \(JambaForCausalLM\) is a hybrid of attention and state-space or recurrent layers"),
    (json.dumps({"model_type": "rwkv", "hidden_size": 2560, "num_hidden_layers": 32, "vocab_size": 50277}),
     r"rwkv \(this model\) is a recurrent model"),
])
def test_bad_configs_name_the_file(tmp_path, content, message):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        load_hf_config(path)
    assert str(path) in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(InputError, match="no such config file"):
        resolve_model(str(tmp_path / "nope" / "config.json"))


def test_spec_is_a_plain_model_spec():
    spec = load_hf_config(FIXTURES / "DeepSeek-V3")
    assert dataclasses.replace(spec, id="x").kv_lora_rank == 512
    assert spec.source.endswith("config.json") and spec.as_of[:2] == "20"


def test_seed_002_pruned_qwen3_8b_is_about_6b():
    """Seed 002: pruning Qwen3-8B from 36 to 24 layers leaves about 6 B parameters."""
    qwen3_8b = dict(model_type="qwen3", hidden_size=4096, num_hidden_layers=36, num_attention_heads=32,
                    num_key_value_heads=8, head_dim=128, intermediate_size=12288, vocab_size=151936)
    full = spec_from_config(qwen3_8b, name="qwen3-8b")
    pruned = spec_from_config(qwen3_8b | {"num_hidden_layers": 24}, name="qwen3-8b-pruned")
    assert full.total_params_b == pytest.approx(get_model("qwen3-8b").total_params_b, abs=5e-4)
    assert round(pruned.total_params_b, 1) == 5.9
    assert kv_bytes_per_token(pruned) == kv_bytes_per_token(full) * 24 / 36
