"""Bad input through the CLI: what the tables do not cover is exit 2 with a message that
says what is covered; a configuration outside the measured tables is answered by the roofline, marked
``calibrated: false``, never an error.

The covered lists come from outside the code under test: precisions from ``finops estimate --help``,
engines per accelerator from the support table's sources (docs/performance.md), engine versions from
the bundled calibration rows (``engine_version`` column) and the MI300X figures from AMD's published rows
(``finops/data/calibration/published_other_accelerators.csv``).
"""

from __future__ import annotations

import json

import pytest

from finops.cli import main
from finops.sizing.engine_constants import Calibration

BASE = ["--isl", "1024", "--osl", "256"]


def _unmeasured_experts_config(folder):
    """Qwen3-30B-A3B's Hugging Face config with 64 experts instead of 128: an expert shape (2048x768x8x64)
    that none of the bundled MoE kernel tables measured."""
    config = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": 48,
              "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
              "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 64,
              "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": False,
              "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


def _estimate(capsys, *args: str):
    code = main(["estimate", *args])
    out, err = capsys.readouterr()
    return code, out, " ".join(err.split())


@pytest.mark.parametrize("args, says", [
    (["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp4"],
     "unknown precision 'fp4'. Hint: use one of: fp32, bf16, fp16, fp8, int8, int4"),
    (["--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--precision", "fp8"],
     "has no FP8 tensor path. Hint: choose bf16, or a GPU with FP8"),
    (["--model", "llama-3.1-8b", "--gpu", "tpu-v6e", "--precision", "fp8"], "has no FP8 tensor path"),
    (["--model", "llama-3.1-8b", "--gpu", "mi300x", "--precision", "bf16", "--engine", "trtllm"],
     "trtllm does not serve bf16 weights on mi300x. Hint: engines for bf16 on mi300x: vllm, sglang"),
    (["--model", "llama-3.1-8b", "--gpu", "inferentia2", "--precision", "bf16", "--engine", "sglang"],
     "engines for bf16 on inferentia2: vllm"),
    (["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16", "--engine-version", "0.5"],
     "vllm 0.5 is not covered"),
    (["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16", "--engine", "trtllm",
      "--engine-version", "0.8.0"], "covered trtllm versions: 0.9.0, 0.13.0, 1.0, 1.0.0,"),
    (["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16", "--tp", "3"],
     "engines shard whole heads. Hint: use one of: 1, 2, 4, 8"),
])
def test_what_is_not_covered_exits_2_saying_what_is(capsys, args, says):
    code, out, err = _estimate(capsys, *args, *BASE)
    assert code == 2 and out == ""
    assert says in err and "Traceback" not in err


@pytest.mark.parametrize("args, says", [
    (["--gpus", "gpu9000"], "unknown GPU 'gpu9000'. Hint: known: a100-40gb, a100-80gb, a10g, b200,"),
    (["--engine", "tgi"], "unknown engine 'tgi'. Hint: known: sglang, trtllm, vllm"),
    (["--precisions", "fp4"], "unknown precision 'fp4'. Hint: use one of: fp32, bf16, fp16, fp8, int8, int4"),
    (["--confidence", "1.5"], "confidence must be a number between 0 and 1"),
])
def test_size_exits_2_on_what_is_not_covered_naming_what_is(capsys, args, says):
    code = main(["size", "--preset", "seed000-doc-qa", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert says in " ".join(err.split()) and "Traceback" not in err


def test_a_model_no_engine_runs_as_a_transformer_exits_2_naming_what_is_covered(capsys, tmp_path):
    """A state-space model's config.json (state-spaces/mamba-2.8b-hf: MambaForCausalLM, 64 layers)."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["MambaForCausalLM"], "model_type": "mamba",
                                  "hidden_size": 2560, "num_hidden_layers": 64, "vocab_size": 50280}))
    code, _, err = _estimate(capsys, "--model", str(config), "--gpu", "h100-sxm", "--precision", "bf16", *BASE)
    assert code == 2
    assert "mamba (MambaForCausalLM) is a state-space model" in err
    assert "covered: decoder-only transformers with multi-head, grouped-query or multi-head latent attention" in err


def test_an_unknown_engine_version_for_size_exits_2(capsys):
    code = main(["size", "--preset", "seed002-financial-copilot", "--engine", "sglang", "--engine-version", "0.3"])
    assert code == 2
    assert "covered sglang versions: 0.4.6.post1, 0.5.1.post1" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("version", ["0.12.0", "0.12", "0.6.7"])
def test_a_covered_engine_version_answers(capsys, version):
    """0.12.0 is in the calibration rows; 0.12 names that series; 0.6.7 is the ROCm blog's vLLM."""
    code, out, _ = _estimate(capsys, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16",
                             "--engine-version", version, "--json", *BASE)
    assert code == 0 and json.loads(out)["fits"] is True


@pytest.mark.parametrize("gpu, precision, model, engine, efficiency_source", [
    ("mi300x", "fp8", "llama-3.1-8b", "vllm", "amd-cdna3:vllm"),
    # a family measured under another engine only: its shortfall carried to this one
    ("mi325x", "bf16", "llama-3.1-8b", "sglang", "amd-cdna3:vllm>sglang"),
    ("a10g", "bf16", "llama-3.1-8b", "trtllm", "nvidia-a10g:vllm>trtllm"),
    ("h20", "fp8", "llama-3.1-8b", "trtllm", "nvidia-h20:sglang>trtllm"),
    ("tpu-v6e", "bf16", "llama-3.1-8b", "vllm", "tpu-v6e:sglang>vllm"),   # SGLang-JAX's rows carried to vLLM
    ("tpu-v6e", "bf16", "llama-3.1-8b", "sglang", "tpu-v6e:sglang"),     # SGLang on TPU is SGLang-JAX
    ("l4", "bf16", "llama-3.1-8b", "vllm", "engine"),
    # no calibration row of the vendor under the engine and no family fit: nothing measured answers ("none");
    # the engine's constants still time it
    ("tpu-v5e", "int8", "llama-3.1-8b", "vllm", "none"),
    ("inferentia2", "bf16", "llama-3.1-8b", "vllm", "neuron-v2:vllm"),   # Neuron's published tables
    ("trainium1", "bf16", "llama-3.1-8b", "vllm", "neuron-v2:vllm"),     # the same NeuronCore-v2 chip
    ("trainium2", "bf16", "llama-3.1-8b", "vllm", "none"),               # no Trainium2 rows: nothing of its own
    ("h100-sxm", "bf16", "unmeasured-experts", "trtllm", "engine"),   # MoE shape no kernel table measured
])
def test_a_configuration_outside_the_tables_falls_back_to_the_roofline(capsys, tmp_path, gpu, precision, model,
                                                                       engine, efficiency_source):
    if model == "unmeasured-experts":
        model = str(_unmeasured_experts_config(tmp_path))
    code, out, _ = _estimate(capsys, "--model", model, "--gpu", gpu, "--precision", precision, "--engine", engine,
                             "--concurrency", "4", "--json", *BASE)
    data = json.loads(out)
    assert code == 0 and data["fits"] is True
    assert (data["calibrated"], data["step_time_source"], data["efficiency_source"]) == (False, "roofline",
                                                                                        efficiency_source)
    bands = Calibration.bundled().bands
    # an accelerator the engine never ran end to end reads the band of its reach (the widest where no table
    # of it was measured either); one it ran keeps the engine's (a new precision or MoE shape)
    reach = {"h100-sxm": "measured", "l40s": "kernels", "mi300x": "fitted", "inferentia2": "fitted",
             "trainium1": "fitted", "mi325x": "carried", "a10g": "carried", "h20": "carried",
             "tpu-v6e": "fitted" if engine == "sglang" else "carried"}.get(gpu, "unmeasured")
    assert data["extrapolation"] == reach
    for metric in ("ttft_ms", "tpot_ms", "output_tokens_per_s"):
        low, high = data[f"{metric}_band"]
        key = data["band_classes"][metric]
        if key == efficiency_source:       # the family fit's own band (its rows report the metric)
            continue
        assert key.split(":")[0] == {"measured": engine, "fitted": "unmeasured", "carried": "unmeasured"}.get(reach, reach)
        # the band is the held-out P10/P90 of measured / modelled (that of TRT-LLM's MoE rows lies below 1
        # for TTFT: the estimate itself may fall outside it)
        assert 0 < low < high
        ratios = bands[key][metric]
        if reach == "measured":
            assert (low, high) == pytest.approx((data[metric] * ratios[1], data[metric] * ratios[5]), rel=1e-3)
        else:   # a wider reach's band envelops its own class's P10-P90 and the engine's measured one
            measured = next(bands[k][metric] for k in (f"{engine}:{data['model_class']}", engine)
                            if metric in bands.get(k, {}))
            for q in (ratios, measured):
                assert low <= data[metric] * q[1] * (1 + 1e-3) and high >= data[metric] * q[5] * (1 - 1e-3)
    if reach == "unmeasured":       # no measurement of the family at all: the leave-one-family-out spread
        low, high = data["tpot_ms_band"]
        assert high / low > 1.5


@pytest.mark.parametrize("published_ms, source", [
    (19089, "ROCm blog 2025-01-29, vLLM 0.6.7 (rocm/vllm-dev:20250112)"),
    (15882, "AMD performance results 2025-10-06, vLLM 0.10.2"),
])
def test_mi300x_request_latency_is_near_amds_published_rows(capsys, published_ms, source):
    """Llama-3.1-70B FP8 (FP8 KV) on 8 MI300X, 128 in, 2,048 out, one request: AMD published 19.1 s and
    15.9 s for two vLLM versions; the vendor-efficiency roofline lands within 25 % of both."""
    code, out, _ = _estimate(capsys, "--model", "llama-3.1-70b", "--gpu", "mi300x", "--precision", "fp8",
                             "--kv-precision", "fp8", "--tp", "8", "--isl", "128", "--osl", "2048",
                             "--concurrency", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["efficiency_source"] == "amd-cdna3:vllm" and data["calibrated"] is False
    assert data["request_latency_ms"] == pytest.approx(published_ms, rel=0.25), source


def test_size_never_counts_mi300x_as_calibrated(capsys):
    """``--calibrated-only`` keeps nothing on MI300X: its published rows set the vendor's efficiencies but
    are not a measurement of the configuration sized."""
    code = main(["size", "--preset", "seed002-financial-copilot", "--gpus", "mi300x", "--calibrated-only", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["options"] == []
    assert "vllm has calibration data for none of the GPU x precision combinations searched (mi300x" in \
        data["infeasible_reason"]


@pytest.mark.parametrize("gpu, precision, says", [("mi300x", "fp8", True), ("l4", "bf16", False)])
def test_the_table_says_whose_efficiencies_answered(capsys, gpu, precision, says):
    code, out, _ = _estimate(capsys, "--model", "llama-3.1-8b", "--gpu", gpu, "--precision", precision,
                             "--concurrency", "4", *BASE)
    text = " ".join(out.split())
    assert code == 0 and "calibrated: no." in text
    assert ("bandwidth and compute efficiencies: amd-cdna3:vllm's, fitted on published results" in text) is says
