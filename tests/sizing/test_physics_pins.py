"""Sizing pinned to outside sources: the models' own config.json figures, published parameter counts and
checkpoint sizes, rooflines worked here by hand, and the bundled NVIDIA AIConfigurator measurements.

None of these pins the current latency model's output: they are bounds and figures any correct model must
meet, so they stay valid when the step-time model is rewritten.

* Weights: parameter count from the config (embeddings, attention, MLP, norms), 2 bytes each in BF16.
* KV per token: GQA ``2 x layers x kv_heads x head_dim x bytes``; MLA ``(kv_lora_rank + qk_rope_head_dim)
  x layers x bytes`` (DeepSeek-V3 report, arXiv:2412.19437, 2.1.1).
* Decode at batch 1 reads every weight once per token: TPOT >= weight bytes per GPU / memory bandwidth.
* Prefill of n new tokens costs at least 2 P n FLOPs for the matrix products (Kaplan et al. 2020, "Scaling
  Laws", table 1: 2N per token) plus attention 4 x n_ctx x d_attn per token and layer (Hoffmann et al.
  2022, appendix F: QK logits and the value reduction), halved under the causal mask (FlashAttention-2,
  Dao 2023, skips the masked blocks): 2 L A n^2 in all. TTFT >= that / (tp x peak dense FLOP/s).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from finops.catalog import get_accelerator, get_model, resolve_model
from finops.sizing import estimate, kv_bytes_per_token, kv_bytes_per_token_per_gpu, weight_bytes
from finops.sizing.calibration import bundled_measurements, predict, queue_limited
from finops.sizing.engine_constants import Calibration

HF = Path(__file__).parent / "fixtures" / "hf"


def config(name: str) -> dict:
    return json.loads((HF / name / "config.json").read_text())


def dense_params(cfg: dict) -> int:
    """Parameters of a Llama/Qwen2/Mistral-style decoder, from its config.json, counted by hand."""
    h, layers, vocab = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or h // heads
    q, kv = heads * head_dim, kv_heads * head_dim
    attention = h * q + 2 * h * kv + q * h
    if cfg["model_type"] == "qwen2":  # Qwen2 has biases on q, k and v
        attention += q + 2 * kv
    mlp = 3 * h * cfg["intermediate_size"]           # gate, up, down
    per_layer = attention + mlp + 2 * h               # two RMSNorms
    embeddings = vocab * h * (1 if cfg.get("tie_word_embeddings") else 2)
    return layers * per_layer + embeddings + h        # final norm


# config folder, catalog id, published parameter count (model cards / safetensors index)
DENSE = [("Llama-3.1-8B-Instruct", "llama-3.1-8b", 8_030_261_248),
         ("Qwen2.5-7B-Instruct", None, 7_615_616_512),
         ("Mistral-7B-v0.1", "mistral-7b-v0.1", 7_241_732_096)]


@pytest.mark.parametrize("folder,catalog_id,published", DENSE)
def test_bf16_weights_are_two_bytes_per_counted_parameter(folder, catalog_id, published):
    counted = dense_params(config(folder))
    assert counted == published
    for model in filter(None, (resolve_model(str(HF / folder / "config.json")),
                               get_model(catalog_id) if catalog_id else None)):
        assert weight_bytes(model, "bf16") == pytest.approx(2 * counted, rel=2e-4)  # catalog: 4-5 digits
        assert weight_bytes(model, "fp32") == pytest.approx(4 * counted, rel=2e-4)


def test_fp8_weights_match_nvidias_published_checkpoint():
    """nvidia/Llama-3.1-8B-Instruct-FP8 (ModelOpt): 9.08 GB, embeddings and LM head kept in BF16:
    (8,030,261,248 - 2 x 525,336,576) x 1 + 2 x 525,336,576 x 2 = 9,080,934,400 bytes."""
    embeddings = 2 * 128_256 * 4096
    expected = (8_030_261_248 - embeddings) * 1 + embeddings * 2
    assert weight_bytes(get_model("llama-3.1-8b"), "fp8") == pytest.approx(expected, rel=2e-4)
    assert round(expected / 1e9, 2) == 9.08


# folder or catalog id -> KV bytes per token in BF16, worked from the config figures
KV_CASES = [
    ("Llama-3.1-8B-Instruct", 2 * 32 * 8 * 128 * 2),      # 131,072
    ("Qwen2.5-7B-Instruct", 2 * 28 * 4 * 128 * 2),        # 57,344
    ("Mistral-7B-v0.1", 2 * 32 * 8 * 128 * 2),
    ("Qwen3-30B-A3B", 2 * 48 * 4 * 128 * 2),              # 98,304
    ("DeepSeek-V3", (512 + 64) * 61 * 2),                 # MLA: 70,272
    ("llama-3.1-70b", 2 * 80 * 8 * 128 * 2),              # 327,680
    ("qwen3-32b", 2 * 64 * 8 * 128 * 2),                  # 262,144
    ("qwen3-235b-a22b", 2 * 94 * 4 * 128 * 2),            # 192,512 (94 layers, 4 KV heads of 128)
    ("minimax-m2.5", 2 * 62 * 8 * 128 * 2),               # 253,952 (62 layers, 8 KV heads of 128)
]


def model_of(name: str):
    return resolve_model(str(HF / name / "config.json")) if (HF / name).is_dir() else get_model(name)


@pytest.mark.parametrize("name,expected", KV_CASES)
def test_kv_bytes_per_token_from_the_config(name, expected):
    model = model_of(name)
    assert kv_bytes_per_token(model, "bf16") == expected
    assert kv_bytes_per_token(model, "fp8") == expected / 2


def test_kv_config_figures_are_the_files_own():
    """The hand-worked figures above read the same numbers the config files hold."""
    cfg = config("DeepSeek-V3")
    assert (cfg["kv_lora_rank"], cfg["qk_rope_head_dim"], cfg["num_hidden_layers"]) == (512, 64, 61)
    cfg = config("Qwen3-30B-A3B")
    assert (cfg["num_hidden_layers"], cfg["num_key_value_heads"], cfg["head_dim"]) == (48, 4, 128)


@pytest.mark.parametrize("name,tp,share", [("llama-3.1-70b", 2, 1 / 2), ("llama-3.1-70b", 8, 1 / 8),
                                           ("llama-3.1-8b", 16, 1 / 8),  # 8 KV heads, replicated past 8
                                           ("DeepSeek-V3", 8, 1.0)])        # MLA latent on every rank
def test_kv_per_gpu_under_tensor_parallelism(name, tp, share):
    model = model_of(name)
    assert kv_bytes_per_token_per_gpu(model, tp, "bf16") == kv_bytes_per_token(model, "bf16") * share


# (model, gpu, precision, tp, engine) for the rooflines
ROOFLINE = [("llama-3.1-8b", "h100-sxm", "bf16", 1, "vllm"), ("llama-3.1-8b", "h200", "fp8", 1, "trtllm"),
            ("llama-3.1-70b", "h100-sxm", "fp8", 2, "sglang"), ("llama-3.1-70b", "h200", "bf16", 4, "vllm"),
            ("qwen3-32b", "h100-sxm", "bf16", 2, "trtllm"), ("qwen3-32b", "h200", "fp8", 8, "sglang")]
BYTES = {"bf16": 2, "fp8": 1}


@pytest.mark.parametrize("model_id,gpu_id,precision,tp,engine", ROOFLINE)
def test_decode_at_batch_1_is_no_faster_than_reading_the_weights(model_id, gpu_id, precision, tp, engine):
    """E.g. Llama-3.1-8B BF16 on one H100 SXM: 16.06 GB / 3.35 TB/s = 4.79 ms per token at least."""
    model, gpu = get_model(model_id), get_accelerator(gpu_id)
    e = estimate(model, gpu, precision=precision, tp=tp, isl=512, osl=256, concurrency=1, engine=engine)
    weights_per_gpu = weight_bytes(model, precision) / tp
    bound_ms = weights_per_gpu / (gpu.memory_bandwidth_gbps * 1e9) * 1e3
    assert e.tpot_ms >= bound_ms
    assert e.tpot_ms < 4 * bound_ms + 5     # and not absurdly slow: engines reach well over a quarter of it


@pytest.mark.parametrize("model_id,gpu_id,precision,tp,engine", ROOFLINE)
@pytest.mark.parametrize("isl", [8192, 32768])
def test_prefill_is_no_faster_than_peak_flops(model_id, gpu_id, precision, tp, engine, isl):
    model, gpu = get_model(model_id), get_accelerator(gpu_id)
    e = estimate(model, gpu, precision=precision, tp=tp, isl=isl, osl=16, concurrency=1, engine=engine)
    attention_width = model.num_attention_heads * model.head_dim
    flops = 2 * model.active_params_b * 1e9 * isl + 2 * model.layers * attention_width * isl ** 2
    bound_ms = flops / (tp * gpu.tflops(precision) * 1e12) * 1e3
    assert e.prefill_ms >= bound_ms and e.ttft_ms >= bound_ms   # the prompt alone, and with its waits


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_long_prompt_attention_counts(engine):
    """At 100k tokens attention is most of the prefill: Llama-3.1-8B BF16 on one H100 SXM needs
    2 x 8.03e9 x 100,000 = 1.606e15 FLOPs in the matrix products and 2 x 32 x 4096 x 1e10 = 2.621e15 in
    attention: 4.227e15 / 989e12 = 4.27 s at least."""
    e = estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=100_000, osl=16, concurrency=1,
                 engine=engine)
    bound_ms = (1.606e15 + 2.621e15) / 989e12 * 1e3
    assert e.prefill_ms >= bound_ms and e.ttft_ms >= bound_ms


@pytest.fixture(scope="module")
def usable_rows():
    return [r for r in bundled_measurements() if not queue_limited(r)]


def test_bundled_constants_reproduce_their_calibration_data(usable_rows):
    """In sample, the shipped constants do at least as well as the held-out (leave-one-model-out) error
    recorded with them in calibration.json, and the 90th percentiles stay within docs/performance.md's
    held-out ones (47 % TPOT, 94 % TTFT; measured in sample while updating this test for the #11 model:
    39.3 % and 73.7 %, and 85.7 % TTFT with the admission wait, whose held-out 90th percentile is 93.6 %)."""
    calibration = Calibration.bundled()
    ttft, tpot = predict(usable_rows, calibration)
    tpot_error = np.abs(tpot / np.array([r.tpot_ms for r in usable_rows]) - 1)
    ttft_error = np.abs(ttft / np.array([r.ttft_ms for r in usable_rows]) - 1)
    recorded = json.loads((Path(__file__).parents[2] / "finops/catalog/data/calibration.json").read_text())
    assert np.median(tpot_error) <= recorded["held_out_tpot_error"]
    assert np.median(ttft_error) <= recorded["held_out_ttft_error"]
    assert np.quantile(tpot_error, 0.9) <= 0.47
    assert np.quantile(ttft_error, 0.9) <= 0.94


def test_estimate_reproduces_the_measurements(usable_rows):
    """The public ``estimate`` at every measured configuration and concurrency meets the same documented
    errors (median within the recorded held-out error, 90th percentile within the documented held-out
    47 % for TPOT).

    Measured while updating this test for the #11 model: median 9.8 %, 90th percentile 39.3 % TPOT over
    all 1,093 usable rows."""
    recorded = json.loads((Path(__file__).parents[2] / "finops/catalog/data/calibration.json").read_text())
    errors = []
    for r in usable_rows:
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl,
                     concurrency=r.concurrency, engine=r.engine)
        errors.append(abs(e.tpot_ms / r.tpot_ms - 1))
    assert np.median(errors) <= recorded["held_out_tpot_error"]
    assert np.quantile(errors, 0.9) <= 0.47


def test_every_measured_batch_runs_in_full(usable_rows):
    """Where the KV cache holds them, the engines ran every measured concurrency (up to 512) as one running
    batch; the model must answer for each of them, not cap below."""
    biggest = sorted(usable_rows, key=lambda r: -r.concurrency)[:12]
    assert max(r.concurrency for r in biggest) == 512
    for r in biggest:
        e = estimate(r.model, r.gpu, precision=r.precision, tp=r.tp, isl=r.isl, osl=r.osl,
                     concurrency=r.concurrency, engine=r.engine)
        assert e.running_batch == r.concurrency, r
