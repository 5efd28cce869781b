"""Workloads: presets from the seeds, validation, and workload files (TOML/JSON) with located errors."""

import json
from pathlib import Path

import pytest

from finops.errors import InputError, UnknownNameError
from finops.sizing import Workload, demand, load_workload, presets
from finops.sizing.search import search


@pytest.mark.parametrize("name, model, isl, osl, ttft_ms, basis", [
    ("seed000-doc-qa", "llama-2-7b", 2048, 1024, None, "users_per_hour"),
    ("seed000-doc-qa-as-printed", "llama-2-7b", 2048, 1024, None, "requests_per_hour"),
    ("seed002-financial-copilot", "llama-3.1-8b", 5000, 500, 1000, "concurrency"),
    ("seed002-drug-discovery-agent", "qwen3-32b", 20_000, 2000, 2000, "concurrency"),
    ("seed002-marketing-content", "mistral-7b", 500, 2000, 1000, "concurrency"),
    ("seed002-translation", "qwen3-30b-a3b", 1000, 1000, 500, "concurrency"),
    ("seed003-customer-service", "llama-2-7b", 512, 256, None, "sessions"),
])
def test_presets(name, model, isl, osl, ttft_ms, basis):
    w = presets()[name]
    assert (w.model, w.isl, w.osl, w.ttft_ms, w.basis) == (model, isl, osl, ttft_ms, basis)
    assert w.model_spec().id == model
    assert w.source.startswith("seed 00")
    assert demand(w).concurrency or demand(w, seconds_per_request=5).concurrency


def test_preset_names_forgive_case_and_suggest():
    assert presets()["SEED002_Translation"].name == "seed002-translation"
    with pytest.raises(UnknownNameError, match="did you mean: seed002-translation"):
        presets()["seed002-translaton"]


@pytest.mark.parametrize("name", sorted(presets()))
def test_preset_requests_fit_their_model_context(name):
    w = presets()[name]
    assert w.isl + w.osl <= w.model_spec().max_context


@pytest.mark.parametrize("changes, text", [
    (dict(isl=0), "key 'isl' must be a whole number >= 1"),
    (dict(osl=-1), "key 'osl'"),
    (dict(isl=1.5), "key 'isl'"),
    (dict(online_share=1.5), "key 'online_share'"),
    (dict(cache_hit_rate=1.0), "key 'cache_hit_rate'"),
    (dict(growth=0), "key 'growth' must be > 0"),
    (dict(spare=-0.1), "key 'spare' must be >= 0"),
    (dict(redundancy=-1), "key 'redundancy'"),
    (dict(ttft_ms="fast"), "key 'ttft_ms' must be a number"),
    (dict(slo_percentile="p95"), "key 'slo_percentile'"),
    (dict(precisions=("bf16", "fp4")), "key 'precisions': unknown value 'fp4'"),
    (dict(kv_precision="int4"), "key 'kv_precision'"),
    (dict(requests_per_user_per_day=3), "per hour or per day, not both"),
    (dict(peak_requests_per_hour=100), "not both"),
    (dict(model=""), "key 'model'"),
])
def test_bad_values_name_the_key(changes, text):
    with pytest.raises(InputError, match=text):
        presets()["seed000-doc-qa"].with_changes(**changes)


def test_a_workload_needs_some_demand():
    with pytest.raises(InputError, match="states no demand"):
        Workload(name="x", model="llama-3.1-8b", isl=10, osl=10)


def test_unknown_gpu_in_a_workload_suggests():
    with pytest.raises(UnknownNameError, match="h100-sxm"):
        Workload(name="x", model="llama-3.1-8b", isl=10, osl=10, concurrency=4, gpus=("h100-sxn",))


def test_names_are_normalized():
    w = Workload(name="x", model="llama-3.1-8b", isl=10, osl=10, concurrency=4, gpus=("H100", "tpu v6e"),
                 precisions=("BF16",), kv_precision="FP8")
    assert (w.gpus, w.precisions, w.kv_precision) == (("h100-sxm", "tpu-v6e"), ("bf16",), "fp8")


TOML = """
name = "support-bot"
model = "llama-3.1-8b"
isl = 1500
osl = 300
dau = 20000
online_share = 0.1
requests_per_user_per_hour = 12
seconds_per_request = 4
ttft_ms = 800
itl_ms = 50
slo_percentile = "p50"
precisions = ["fp8", "bf16"]
gpus = ["l40s", "h100"]
spare = 0.2
redundancy = 1
"""


def test_load_toml(tmp_path):
    path = tmp_path / "bot.toml"
    path.write_text(TOML)
    w = load_workload(path)
    assert (w.name, w.isl, w.precisions, w.gpus, w.slo_percentile) == (
        "support-bot", 1500, ("fp8", "bf16"), ("l40s", "h100-sxm"), "p50")
    assert demand(w).concurrency == pytest.approx(20_000 * 0.1 * 12 / 3600 * 4)
    assert w.source == str(path)


def test_load_json_extending_a_preset(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"extends": "seed000-doc-qa", "name": "doc-qa-x3", "growth": 3}))
    w = load_workload(path)
    assert w.name == "doc-qa-x3" and w.dau == 10_000
    assert round(demand(w).concurrency) == 125


def test_model_may_be_a_config_json_beside_the_workload(tmp_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
        "tie_word_embeddings": True, "max_position_embeddings": 131072}))
    path = tmp_path / "w.toml"
    path.write_text('name = "small"\nmodel = "cfg/config.json"\nisl = 100\nosl = 100\nconcurrency = 8\n')
    spec = load_workload(path).model_spec()
    assert spec.id == "cfg" and spec.num_kv_heads == 8
    assert round(spec.total_params_b, 2) == 1.24  # Llama-3.2-1B shape


@pytest.mark.parametrize("filename, text, error, message", [
    ("w.toml", TOML.replace("isl = 1500", "isl = -3"), InputError, "w.toml: key 'isl'"),
    ("w.toml", TOML.replace("osl = 300", "osls = 300"), InputError,
     "w.toml: unknown key 'osls'; did you mean 'osl'"),
    ("w.toml", TOML.replace('"llama-3.1-8b"', '"llama-3.1-8c"'), UnknownNameError, "w.toml: unknown model"),
    ("w.toml", TOML.replace("osl = 300\n", ""), InputError, "w.toml: missing key 'osl'"),
    ("w.toml", TOML.replace("isl = 1500", "isl = 131000"), InputError,
     "w.toml: key 'isl': isl + osl = 131300 tokens exceed llama-3.1-8b's native context of 131072"),
    ("w.toml", TOML.replace("isl = 1500", "isl = 131000\ncontext_length = 131200"), InputError,
     "w.toml: key 'isl': isl + osl = 131300 tokens exceed the context length of 131200"),
    ("w.toml", TOML.replace("isl = 1500", "isl = 1500\ncontext_length = -1"), InputError,
     "w.toml: key 'context_length' must be a whole number >= 1"),
    ("w.toml", "name = [", InputError, "w.toml: not valid TOML"),
    ("w.json", "{", InputError, "w.json: not valid JSON"),
    ("w.json", "[1]", InputError, "w.json: a workload file holds one object"),
    ("w.json", json.dumps({"extends": "seed00-doc-qa", "name": "x"}), UnknownNameError,
     "w.json: unknown preset"),
])
def test_file_errors_name_the_file_and_key(tmp_path, filename, text, error, message):
    path = tmp_path / filename
    path.write_text(text)
    with pytest.raises(error) as info:
        load_workload(path)
    assert str(info.value).replace(str(tmp_path) + "/", "").startswith(message)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read workload file"):
        load_workload(tmp_path / "nope.toml")


EXAMPLES = Path(__file__).parents[2] / "examples" / "sizing"


@pytest.mark.parametrize("name, concurrency", [
    ("support-bot.toml", None),                      # rate-based: concurrency follows from the request time
    ("doc-qa-x3.toml", 10_000 * 0.05 / 60 * 5 * 3),  # seed 000's stated inputs, tripled: 125
])
def test_the_shipped_example_workloads_size(name, concurrency):
    w = load_workload(EXAMPLES / name)
    if concurrency is not None:
        assert demand(w).concurrency == pytest.approx(concurrency)
    result = search(w, top=3)
    assert result.options and result.infeasible_reason is None


def test_a_workload_past_its_models_native_context_sizes_when_it_says_the_engine_extends_it(tmp_path):
    """Llama-2-7B natively holds 4,096 tokens: a 5,000 + 500 workload is refused unless ``context_length``
    says the engine serves 5,500 (RoPE scaling); then it sizes, and its replicas hold fewer sequences of
    5,504 cached tokens than of 2,048 + 2,048 (4,096) on the same accelerator."""
    path = tmp_path / "long.toml"
    body = 'name = "long"\nmodel = "llama-2-7b"\nisl = 5000\nosl = 500\nconcurrency = 20\ngpus = ["h100-sxm"]\n'
    path.write_text(body)
    with pytest.raises(InputError, match="native context of 4096"):
        load_workload(path)
    path.write_text(body + "context_length = 5500\n")
    long = load_workload(path)
    assert long.context_length == 5500
    options = search(long, top=3).options
    short = search(long.with_changes(isl=2048, osl=2048, context_length=None), top=3).options
    assert options and short
    fits = {(o.gpu, o.precision, o.tp): o.max_concurrency for o in short}
    pairs = [(o.max_concurrency, fits[(o.gpu, o.precision, o.tp)]) for o in options if (o.gpu, o.precision, o.tp) in fits]
    assert pairs and all(extended < native for extended, native in pairs)
