"""``finops estimate``, ``finops size`` and ``finops calibrate`` run in-process: exit codes and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finops.cli import main
from finops.price_book import PRICE_BOOK_ENV

FIXTURES = Path(__file__).parents[1] / "sizing" / "fixtures"
ESTIMATE = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "bf16", "--tp", "1",
            "--isl", "1024", "--osl", "256"]
REQUIRED_KEYS = {"fits", "weights_gib_per_gpu", "kv_bytes_per_token", "kv_bytes_per_token_per_gpu", "max_concurrency",
                 "max_batch", "prefill_token_budget", "ttft_ms", "tpot_ms", "output_tokens_per_s",
                 "output_tokens_per_s_per_gpu", "kv_precision", "calibrated", "ttft_ms_band", "tpot_ms_band",
                 "output_tokens_per_s_band"}


def _run(capsys, args):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_json_has_the_contract_fields(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "16", "--engine", "trtllm", "--json"])
    data = json.loads(out)
    assert code == 0 and REQUIRED_KEYS <= set(data)
    assert data["fits"] is True and data["concurrency"] == 16 and data["engine"] == "trtllm"
    assert data["kv_bytes_per_token"] == data["kv_bytes_per_token_per_gpu"] == 131072.0   # 2 x 32 x 8 x 128 x 2
    assert data["output_tokens_per_s_per_gpu"] == data["output_tokens_per_s"]
    low, high = data["output_tokens_per_s_band"]
    assert low < data["output_tokens_per_s"] < high


def test_estimate_says_which_load_test_client_it_models(capsys):
    """--client reaches the model and the JSON; an unknown one is bad input (exit 2) naming the known ones."""
    runs = {}
    for client in ("synchronized", "staggered"):
        code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "32", "--engine", "trtllm", "--client", client,
                                                "--json"])
        runs[client] = json.loads(out)
        assert code == 0 and runs[client]["client"] == client
    assert runs["staggered"]["tpot_ms"] == runs["synchronized"]["tpot_ms"]
    assert runs["staggered"]["ttft_ms"] < runs["synchronized"]["ttft_ms"]
    code, _, err = _run(capsys, ESTIMATE + ["--concurrency", "32", "--client", "wave"])
    assert code == 2 and "unknown client 'wave'" in err and "synchronized, staggered" in err


def test_estimate_max_is_the_memory_limit(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "max", "--cache-hit-rate", "0.5", "--json"])
    data = json.loads(out)
    assert code == 0 and data["concurrency"] == data["max_concurrency"] > 100


def test_a_model_that_does_not_fit_is_reported_not_raised(capsys):
    args = ["estimate", "--model", "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "h100", "--precision", "bf16",
            "--tp", "1", "--isl", "2048", "--osl", "512", "--concurrency", "max", "--json"]
    code, out, _ = _run(capsys, args)
    data = json.loads(out)
    assert code == 0 and data["fits"] is False and data["shortfall_gib"] > 60 and data["tpot_ms"] is None


def test_estimate_under_an_arrival_rate(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "8", "--arrival-rate", "5", "--ttft-target-ms", "400",
                                            "--json"])
    loaded = json.loads(out)["under_load"]
    assert code == 0 and loaded["stable"] is True and loaded["ttft_p99_ms"] >= loaded["ttft_p50_ms"]
    assert 0.99 <= loaded["sla_attainment"] <= 1.0 and loaded["output_tokens_per_s"] == 5 * 256


def test_an_overloaded_replica_prints_valid_json(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--arrival-rate", "1000", "--ttft-target-ms", "500", "--json"])

    def strict(constant):
        raise AssertionError(f"{constant} is not JSON")
    loaded = json.loads(out, parse_constant=strict)["under_load"]
    assert code == 0 and loaded["stable"] is False and loaded["ttft_p99_ms"] is None
    assert loaded["sla_attainment"] == 0.0


def test_estimate_prints_a_table_without_json(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "8"])
    assert code == 0 and "tpot_ms" in out and "llama-3.1-8b" in out


def test_estimate_reads_a_config_json(capsys, tmp_path):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, _ = _run(capsys, ["estimate", "--model", str(path), "--gpu", "l40s", "--precision", "fp8",
                                 "--isl", "512", "--osl", "128", "--concurrency", "4", "--json"])
    assert code == 0 and json.loads(out)["fits"] is True


@pytest.mark.parametrize("change, message", [
    (["--model", "llama-9b"], "unknown model"),
    (["--gpu", "h10"], "did you mean"),
    (["--precision", "fp4"], "unknown precision 'fp4'"),
    (["--tp", "0"], "--tp must be a whole number >= 1"),
    (["--isl", "-5"], "--isl must be a whole number >= 1"),
    (["--osl", "0"], "--osl must be a whole number >= 1"),
    (["--concurrency", "lots"], "--concurrency must be a whole number or 'max'"),
    (["--engine", "tgi"], "unknown engine"),
    (["--cache-hit-rate", "2"], "--cache-hit-rate must be between 0 and 1"),
    (["--ttft-target-ms", "300"], "--ttft-target-ms needs --arrival-rate"),
    (["--arrival-rate", "-1"], "--arrival-rate must be > 0"),
])
def test_bad_estimate_input_exits_2_with_one_message(capsys, change, message):
    args = list(ESTIMATE)
    for i in range(0, len(change), 2):
        if change[i] in args:
            args[args.index(change[i]) + 1] = change[i + 1]
        else:
            args += change[i:i + 2]
    code, out, err = _run(capsys, args)
    assert code == 2 and message in err and "Traceback" not in err + out


def test_a_request_past_the_native_context_is_refused_unless_the_engine_serves_it(capsys):
    """Llama-2-7B's native context is 4,096 tokens; TensorRT-LLM's published 5,000 + 500 runs built the engine
    with max_seq_len 5,500. Without --context-length: exit 2 naming the limit and the option; with it: an
    estimate flagged beyond the native context, with a KV cache of 5,504 tokens a sequence (344 blocks of 16),
    so fewer sequences fit than at 2,048 + 2,048 (4,096)."""
    base = ["estimate", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--precision", "fp16", "--engine", "trtllm",
            "--json"]
    args = base + ["--isl", "5000", "--osl", "500"]
    code, out, err = _run(capsys, args)
    assert code == 2 and "native context of 4096" in err and "--context-length" in err and not out
    code, out, _ = _run(capsys, args + ["--context-length", "5500"])
    extended = json.loads(out)
    assert code == 0 and extended["beyond_native_context"] is True and extended["output_tokens_per_s"] > 0
    code, out, _ = _run(capsys, base + ["--isl", "2048", "--osl", "2048"])
    native = json.loads(out)
    assert native["beyond_native_context"] is False
    assert abs(extended["max_concurrency"] - native["max_concurrency"] * 4096 / 5504) <= 1


def test_size_flags_every_option_of_a_workload_past_the_native_context(capsys, tmp_path):
    """The same 5,000 + 500 request as a workload with context_length 5,500: every option of `size --json` says
    it runs beyond the native context, and the table says so under it with both lengths; within 4,096 tokens
    neither does."""
    def workload(isl, osl):
        path = tmp_path / f"w{isl}.toml"
        path.write_text(f'name = "long"\nmodel = "llama-2-7b"\nisl = {isl}\nosl = {osl}\nconcurrency = 20\n'
                        "context_length = 5500\n", encoding="utf-8")
        return ["size", "--workload", str(path), "--gpus", "h100-sxm", "--top", "2"]

    code, out, _ = _run(capsys, workload(5000, 500) + ["--json"])
    assert code == 0 and [o["beyond_native_context"] for o in json.loads(out)["options"]] == [True, True]
    code, out, _ = _run(capsys, workload(5000, 500))
    text = " ".join(out.split())     # the console folds long lines
    assert code == 0 and "past llama-2-7b's native context of 4,096, served on a context length of 5,500" in text
    code, out, _ = _run(capsys, workload(2048, 512) + ["--json"])
    assert code == 0 and [o["beyond_native_context"] for o in json.loads(out)["options"]] == [False, False]
    code, out, _ = _run(capsys, workload(2048, 512))
    assert code == 0 and "beyond native context" not in " ".join(out.split())


@pytest.fixture
def small_price_book(tmp_path, monkeypatch):
    path = tmp_path / "prices.csv"
    path.write_text("provider,region,instance_type,gpu_model,gpu_count,pricing_model,payment_option,hourly_cost,"
                    "upfront_cost,currency,effective_date,source\n"
                    "gcp,us-central1,g2-standard-48,l4,4,on_demand,,4.00,0,USD,2026-07-30,test\n"
                    "gcp,us-central1,a3-highgpu-8g,h100-sxm,8,on_demand,,88.25,0,USD,2026-07-30,test\n")
    monkeypatch.setenv(PRICE_BOOK_ENV, str(path))
    return path


def test_size_preset_json_ranks_priced_options(capsys, small_price_book):
    code, out, _ = _run(capsys, ["size", "--preset", "seed002-financial-copilot", "--json"])
    data = json.loads(out)
    assert code == 0 and data["options"] and data["infeasible_reason"] is None
    costs = [o["monthly_cost"] for o in data["options"]]
    assert costs == sorted(costs) and data["options"][0]["currency"] == "USD"
    assert all(o["ttft_p99_ms"] <= 1000 for o in data["options"])


def test_size_workload_file_and_table(capsys, small_price_book, tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('extends = "seed002-marketing-content"\nconcurrency = 20\n')
    code, out, _ = _run(capsys, ["size", "--workload", str(path)])
    assert code == 0 and "configurations searched" in out
    # the 80-column table keeps every value whole: names and prices are never cut to "…"
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert "g2-standard-48" in out and "us-central1" in out and "l4" in out and "USD/" in out


def test_size_without_a_feasible_option_says_what_is_needed(capsys, small_price_book, tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"name": "big", "model": "llama-3.1-405b", "isl": 2048, "osl": 512,
                                "concurrency": 4, "precisions": ["bf16"], "gpus": ["l4"]}))
    code, out, _ = _run(capsys, ["size", "--workload", str(path), "--json"])
    data = json.loads(out)
    assert code == 0 and data["options"] == [] and "more TP" in data["infeasible_reason"]


@pytest.mark.parametrize("args, message", [
    (["size"], "exactly one of --preset NAME or --workload FILE"),
    (["size", "--preset", "seed002-financial-copilt"], "did you mean"),
    (["size", "--preset", "seed002-translation", "--pricing-model", "free"], "unknown pricing model"),
])
def test_bad_size_input_exits_2(capsys, small_price_book, args, message):
    code, out, err = _run(capsys, args)
    assert code == 2 and message in err and "Traceback" not in err + out


def test_calibrate_writes_a_file_that_estimate_accepts(capsys, tmp_path):
    out_file = tmp_path / "cal.json"
    files = [str(f) for f in sorted(FIXTURES.glob("*.json"))]
    code, out, _ = _run(capsys, ["calibrate", *files, "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu",
                                 "h100-sxm", "--precision", "bf16", "--out", str(out_file), "--json"])
    report = json.loads(out)
    assert code == 0 and out_file.exists() and len(report["points"]) == 5
    measured = next(p for p in report["points"] if p["concurrency"] == 16)
    assert abs(measured["tpot_ms_after"] - measured["tpot_ms"]) < abs(measured["tpot_ms_before"] - measured["tpot_ms"])
    code, out, _ = _run(capsys, ESTIMATE + ["--concurrency", "16", "--calibration", str(out_file), "--json"])
    assert code == 0 and json.loads(out)["tpot_ms"] == pytest.approx(measured["tpot_ms_after"], rel=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--engine", "tgi"], "unknown engine"),
    (["--gpu", "h10"], "did you mean"),
    (["--prior-weight", "-1"], "--prior-weight must be a number >= 0, got -1.0"),
])
def test_bad_calibrate_input_exits_2(capsys, tmp_path, args, message):
    base = ["calibrate", str(FIXTURES / "vllm-bench-serve.json"), "--engine", "vllm", "--model", "llama-3.1-8b",
            "--gpu", "h100-sxm", "--precision", "bf16", "--out", str(tmp_path / "c.json")]
    for i in range(0, len(args), 2):
        if args[i] in base:
            base[base.index(args[i]) + 1] = args[i + 1]
        else:
            base += args[i:i + 2]
    code, _, err = _run(capsys, base)
    assert code == 2 and message in err


def test_size_flags_extrapolated_options_and_can_keep_only_calibrated_ones(capsys, small_price_book):
    trtllm = ["size", "--preset", "seed002-financial-copilot", "--engine", "trtllm", "--confidence", "0.5",
              "--top", "20"]
    code, out, _ = _run(capsys, trtllm + ["--json"])
    flags = {(o["gpu"], o["calibrated"], o["extrapolation"]) for o in json.loads(out)["options"]}
    assert code == 0 and ("l4", False, "unmeasured") in flags and ("h100-sxm", True, "measured") in flags
    code, out, _ = _run(capsys, trtllm + ["--calibrated-only", "--json"])
    options = json.loads(out)["options"]
    assert code == 0 and options and {o["gpu"] for o in options} == {"h100-sxm"}
    code, out, _ = _run(capsys, trtllm)
    assert "unmeasured" in out and "reach" in out


def test_estimate_json_says_whether_it_is_calibrated(capsys):
    code, out, _ = _run(capsys, ESTIMATE + ["--engine", "trtllm", "--json"])   # measured: TRT-LLM, H100, BF16, 8B, TP1
    assert code == 0 and json.loads(out)["calibrated"] is True
    code, out, _ = _run(capsys, ESTIMATE + ["--json"])    # vLLM on H100 BF16 was measured on Qwen3-32B at TP >= 2
    assert code == 0 and json.loads(out)["calibrated"] is False
    code, out, err = _run(capsys, ["estimate", "--model", "llama-3.1-8b", "--gpu", "tpu-v5e", "--precision", "bf16",
                                   "--isl", "1024", "--osl", "256", "--engine", "sglang"])
    assert code == 2 and "sglang does not serve bf16 weights on tpu-v5e" in out + err
    code, out, _ = _run(capsys, ["estimate", "--model", "llama-3.1-8b", "--gpu", "l40s", "--precision", "fp8",
                                 "--isl", "512", "--osl", "128", "--concurrency", "16", "--engine", "sglang"])
    assert code == 0 and "extrapolated" in out
