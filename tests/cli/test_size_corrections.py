"""`finops size --corrections` and `finops estimate --step-time`: the model's loop knobs at the command line.

A throughput correction of 0.5 (production delivered half the modelled tokens per GPU-hour) must size
the fleet exactly as the same workload with twice the requests, written by hand, sized uncorrected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finops.cli import main

WORKLOAD = """name = "support-bot"
model = "llama-3.1-8b"
isl = 1500
osl = 300
peak_requests_per_hour = {rate}
ttft_ms = 2000
itl_ms = 60
"""


def _size(capsys, *args: str) -> tuple[int, dict]:
    code = main(["size", "--gpus", "h100-sxm", "--top", "1", "--json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if code == 0 else {}


def _corrections(tmp_path: Path, ratio: float, gpu: str = "h100-sxm") -> Path:
    path = tmp_path / "throughput-corrections.json"
    path.write_text(json.dumps({"corrections": [{"engine": "vllm", "gpu": gpu, "model": "llama-3.1-8b",
                                                 "months": {"2026-05": ratio}}]}))
    return path


def _workload(tmp_path: Path, rate: int) -> Path:
    path = tmp_path / f"workload-{rate}.toml"
    path.write_text(WORKLOAD.format(rate=rate))
    return path


def test_half_the_throughput_sizes_as_twice_the_requests(capsys, tmp_path):
    _, plain = _size(capsys, "--workload", str(_workload(tmp_path, 40_000)))
    code, corrected = _size(capsys, "--workload", str(_workload(tmp_path, 40_000)),
                            "--corrections", str(_corrections(tmp_path, 0.5)))
    _, doubled = _size(capsys, "--workload", str(_workload(tmp_path, 80_000)))
    assert code == 0
    assert corrected["correction"] == {"factor": 0.5, "band": 0.3, "sources": ["2026-05"]}
    pick = ("gpu", "precision", "tp", "replicas", "gpus", "instances")
    assert [corrected["options"][0][k] for k in pick] == [doubled["options"][0][k] for k in pick]
    assert corrected["options"][0]["replicas"] > plain["options"][0]["replicas"]


def test_a_correction_for_another_gpu_changes_nothing(capsys, tmp_path):
    workload = str(_workload(tmp_path, 40_000))
    _, plain = _size(capsys, "--workload", workload)
    _, other = _size(capsys, "--workload", workload, "--corrections", str(_corrections(tmp_path, 0.5, gpu="l40s")))
    assert other["correction"]["sources"] == [] and other["options"] == plain["options"]


def test_corrections_need_one_gpu_and_a_readable_file(capsys, tmp_path):
    workload = str(_workload(tmp_path, 40_000))
    assert main(["size", "--workload", workload, "--gpus", "h100-sxm,l40s", "--corrections",
                 str(_corrections(tmp_path, 0.5))]) == 2
    assert "exactly one GPU" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["size", "--workload", workload, "--gpus", "h100-sxm", "--corrections",
                 str(tmp_path / "bad.json")]) == 2
    assert "bad.json" in capsys.readouterr().err


@pytest.mark.parametrize("step_time", ["kernels", "roofline"])
def test_estimate_step_time_reaches_the_model_and_is_reported(capsys, step_time):
    args = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--precision", "fp8", "--isl", "1000",
            "--osl", "200", "--concurrency", "16", "--json"]
    assert main([*args, "--step-time", step_time]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["step_time_source"] == step_time     # H100 fp8 vLLM is covered by the kernel tables
    assert main([*args, "--step-time", "guess"]) == 2
    assert "unknown step time 'guess'" in capsys.readouterr().err


def test_size_step_time_times_the_search_as_asked(capsys, tmp_path):
    """``auto`` is the bundled calibration's own choice for vLLM; ``kernels`` and ``roofline`` differ on H100
    (the kernel tables cover it), so the switch reaches the search."""
    from finops.sizing.engine_constants import Calibration

    workload = str(_workload(tmp_path, 40_000))
    runs = {}
    for step_time in ("auto", "kernels", "roofline"):
        code, runs[step_time] = _size(capsys, "--workload", workload, "--step-time", step_time)
        assert code == 0 and runs[step_time]["step_time"] == step_time
    latency = {k: (r["options"][0]["ttft_p99_ms"], r["options"][0]["itl_p99_ms"]) for k, r in runs.items()}
    assert latency["kernels"] != latency["roofline"]
    fitted = "kernels" if Calibration.bundled().constants("vllm").kernel_steps >= 0.5 else "roofline"
    assert latency["auto"] == latency[fitted]
