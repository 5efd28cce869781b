"""Step times from measured kernels: the tables, their interpolation, the composed step,
the fallback to the roofline, and the held-out error that decides where they are the default.

Expected kernel latencies are read from aiconfigurator-core 0.12.0's own parquet files (H100 SXM,
TRT-LLM 1.3.0rc20 tables; ``pandas.read_parquet`` on ``systems/data/h100_sxm/...``, 2026-12-02),
not from our tables; the physical bounds are worked by hand from the catalog's datasheet figures.
"""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from finops.catalog import get_accelerator, get_model, resolve_model
from finops.errors import InputError
from finops.sizing.calibration import (
    BUNDLED_CLASSES,
    bundled_measurements,
    kernel_covered,
    leave_one_model_out,
)
from finops.sizing.engine_constants import KERNEL_CLASSES, Calibration, model_class
from finops.sizing.kernels import _table, kernel_gpus, step_kernels, tables_meta
from finops.sizing.performance import estimate

KERNELS = resources.files("finops").joinpath("data", "kernels")


def test_tables_are_small_and_say_where_they_come_from():
    sizes = [p.stat().st_size for p in Path(str(KERNELS)).glob("*.npz")]
    assert sum(sizes) <= 8e6 and len(sizes) == len(kernel_gpus()) >= 6
    for gpu in kernel_gpus():
        meta = tables_meta(gpu)
        assert meta["package_version"] == "0.12.0" and "Apache-2.0" in meta["source"] and meta["as_of"]
    assert tables_meta("mi300x") is None              # a GPU without tables has no metadata either
    notice = (Path(__file__).parents[2] / "NOTICE").read_text()
    assert "finops/data/kernels/" in notice and "Apache License, Version 2.0" in notice


@pytest.mark.parametrize("table, point, latency_ms", [
    ("trtllm/gemm/bf16", (64, 4096, 4096), 0.015677),
    ("trtllm/gemm/fp8", (1024, 16384, 8192), 0.210357),
    ("trtllm/generation/bf16", (64, 1023, 32, 8), 0.107589),
    ("trtllm/allreduce", (4, 1048576), 0.026134),
])
def test_a_grid_point_is_the_measured_latency(table, point, latency_ms):
    """float16 of the log keeps 0.4 % at worst."""
    assert _table("h100-sxm", table)(*point) * 1e3 == pytest.approx(latency_ms, rel=0.005)


def test_between_grid_points_the_latency_is_between_its_neighbours():
    gemm = _table("h100-sxm", "trtllm/gemm/bf16")
    low, mid, high = gemm(512, 4096, 4096), gemm(512, 4600, 4096), gemm(512, 5120, 4096)
    assert low < mid < high
    # beyond the grid: proportional to the tokens (twice the largest m costs twice as much)
    assert gemm(65536, 4096, 4096) == pytest.approx(2 * gemm(32768, 4096, 4096), rel=1e-9)


@pytest.mark.parametrize("gpu", kernel_gpus())
def test_decode_attention_never_reads_the_kv_cache_faster_than_the_memory_allows(gpu):
    """Decode attention reads every cached token's K and V: 8 KV heads x 128 x 2 x (2 bytes BF16, 1 FP8)
    per token and layer, at no more than the datasheet bandwidth. The package measured it only up to about
    a million cached tokens (batch x KV length); the cells beyond are filled by the derive script. Filled
    from the nearest measured cell alone (before 2026-12-04), a batch of 512 sequences of 4,096 tokens on
    the H200 read in 0.25 ms, 28 % of this floor, and the published maximum-throughput rows of
    Llama-3.1-8B on the H200 came out up to 1.67x too fast."""
    bandwidth = get_accelerator(gpu).memory_bandwidth_gbps * 1e9
    batch, length = np.meshgrid(2.0 ** np.arange(0, 12), 2.0 ** np.arange(4, 18) - 1)
    checked = 0
    for engine in ("trtllm", "vllm", "sglang"):
        for kv, size in (("bf16", 2), ("fp8", 1)):
            table = _table(gpu, f"{engine}/generation/{kv}")
            if table is None:
                continue
            seconds = table(batch, length, 32.0, 8.0)
            floor = batch * length * 8 * 128 * 2 * size / bandwidth
            assert np.all(seconds >= floor * 0.995), (engine, kv, float((seconds / floor).min()))
            # and it grows with the work: twice the sequences, at least 1.5x the time past 4 M cached tokens
            # (1.53x at worst, measured cells of SGLang on the A100; the nearest-cell fill gave 1.0x)
            big = batch * length >= 2 ** 22
            assert np.all(table(2 * batch[big], length[big], 32.0, 8.0) >= 1.5 * seconds[big]), (engine, kv)
            checked += 1
    assert checked >= 1


def test_the_composed_step_respects_the_hardware_bounds():
    """Llama-3.1-8B BF16 on one H100 SXM: a decode step reads the 16.06 GB of weights at no more than
    3.35 TB/s (>= 4.79 ms); a 2,048-token prefill needs 2 x 8.03e9 x 2048 = 3.29e13 FLOPs at no more
    than 989 TFLOPS (>= 33.3 ms)."""
    k = step_kernels(get_model("llama-3.1-8b"), "h100-sxm", engine="trtllm", precision="bf16",
                     kv_precision="bf16", tp=1)
    decode, prefill = k.decode(1, 1024), k.prefill(2048, 2048, 8192)
    assert 4.79e-3 <= decode <= 2 * 4.79e-3
    assert 33.3e-3 <= prefill <= 3 * 33.3e-3
    assert k.decode(256, 1024) > decode                      # KV reads grow with the batch
    assert k.prefill(2048, 2048, 8192, batch=64) < prefill   # a chunk riding in a decode batch shares its weight reads


@pytest.mark.parametrize("model, gpu, engine, precision", [
    ("llama-3.1-8b", "mi300x", "vllm", "bf16"),      # no tables for the GPU
    (replace(get_model("qwen3-30b-a3b"), num_experts=64), "h100-sxm", "trtllm", "bf16"),  # an unmeasured expert shape
    ("deepseek-v3", "h200", "trtllm", "fp8"),        # MLA
    ("llama-3.1-8b", "h100-sxm", "vllm", "int4"),     # no int4 GEMM tables
])
def test_outside_the_tables_the_roofline_answers(model, gpu, engine, precision):
    spec = get_model(model) if isinstance(model, str) else model
    assert step_kernels(spec, gpu, engine=engine, precision=precision, kv_precision="bf16", tp=8) is None
    e = estimate(model, gpu, precision=precision, tp=8, isl=1024, osl=256, concurrency=8, engine=engine,
                 step_time="kernels")
    assert e.step_time_source == "roofline"


def test_step_time_is_chosen_and_reported():
    args = {"precision": "bf16", "tp": 1, "isl": 1024, "osl": 256, "concurrency": 16}
    sources = {st: estimate("llama-3.1-8b", "h100-sxm", engine="vllm", step_time=st, **args).step_time_source
               for st in ("kernels", "roofline")}
    assert sources == {"kernels": "kernels", "roofline": "roofline"}
    auto = estimate("llama-3.1-8b", "h100-sxm", engine="trtllm", **args)
    assert auto.step_time_source == ("kernels" if Calibration.bundled().constants("trtllm").kernel_steps
                                     else "roofline")
    with pytest.raises(InputError, match="step time"):
        estimate("llama-3.1-8b", "h100-sxm", engine="vllm", step_time="exact", **args)


def test_the_bundled_calibration_records_the_kernel_fit():
    cal = Calibration.bundled()
    for engine in ("trtllm", "vllm", "sglang"):
        c = cal.constants(engine)
        assert 0.01 <= c.kernel_decode_credit_us <= 30.0 and 0.8 <= c.kernel_prefill_scale <= 1.25
        assert all(1.0 <= o <= 20000.0 for o in c.kernel_step_overhead_us)
    assert Calibration.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal


def test_a_calibration_file_from_before_the_kernels_still_reads():
    data = Calibration.bundled().to_dict()
    for per in data["engines"].values():
        for name in ("kernel_steps", "kernel_decode_credit_us", "kernel_prefill_scale", "kernel_step_overhead_us"):
            del per[name]
        per["kernel_decode_scale"] = 1.25   # retired (the decode credit replaced it): ignored
    old = Calibration.from_dict(data)
    assert old.constants("trtllm").kernel_steps == 0.0
    e = estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=1024, osl=256, engine="trtllm", calibration=old)
    assert e.step_time_source == "roofline"


def test_the_search_times_steps_as_the_estimate_does():
    """One answer: the sizing search's TPOT of a TRT-LLM configuration at its running batch lies between
    the estimate's at the two whole batches around it (TPOT grows with the batch), and is not the
    roofline's."""
    from finops.sizing.search import search
    from finops.sizing.workload import presets
    workload = replace(presets()["seed002-financial-copilot"], gpus=("h100-sxm",), precisions=("fp8",))
    best = search(workload, engine="trtllm").options[0]
    tpot = [estimate(workload.model, "h100-sxm", precision="fp8", tp=best.tp, isl=workload.isl, osl=workload.osl,
                     concurrency=max(1, int(np.floor(best.running_batch)) + up), engine="trtllm").tpot_ms
            for up in (0, 1)]
    assert tpot[0] * 0.999 <= best.tpot_ms <= tpot[1] * 1.001
    cal = Calibration.bundled()
    roofline = replace(cal, engines={**cal.engines, "trtllm": replace(cal.constants("trtllm"), kernel_steps=0.0)})
    assert search(workload, engine="trtllm", calibration=roofline).options[0].tpot_ms != best.tpot_ms


SLICES = [(engine, kind) for engine in ("trtllm", "vllm", "sglang") for kind in KERNEL_CLASSES]


def _class(row) -> str:
    return model_class(resolve_model(row.model))


@pytest.fixture(scope="module")
def held_out():
    rows = [r for r in bundled_measurements() if kernel_covered(r)]
    kernels = leave_one_model_out(rows, classes=BUNDLED_CLASSES, kernel_engines=[f"{e}:{k}" for e, k in SLICES])
    roofline = leave_one_model_out(rows, classes=BUNDLED_CLASSES, kernel_engines=())
    return kernels, roofline


def test_kernels_are_the_default_only_where_they_are_better_held_out(held_out):
    """Per engine and model class, the kernels are the default where the sum of their three held-out
    median errors (TPOT, TTFT, throughput) is below the roofline's. Measured 2026-12-06 (the
    constants partially pooled across engines, the decode credit), leave one model out on the 1,307 covered
    rows: TRT-LLM dense 10.2 / 30.8 / 11.7 % (roofline 16.5 / 28.6 / 15.2 %), TRT-LLM MoE 6.6 / 55.9 / 7.3 %
    (17.9 / 64.1 / 16.5 %), vLLM MoE 9.4 / 14.7 / 10.0 % (11.7 / 41.1 / 13.9 %), vLLM dense 11.2 / 33.4 /
    12.8 % (6.5 / 21.5 / 6.8 %), SGLang dense 18.3 / 64.3 / 4.5 % (38.8 / 54.6 / 17.5 %), SGLang MoE 14.3 /
    33.6 / 15.0 % (8.6 / 47.0 / 11.3 %). With each engine fitted alone and the decode speed a factor
    (measured 2026-12-06) TRT-LLM read 10.5 / 31.0 / 10.9 % (dense) and 5.1 / 42.6 /
    5.5 % (MoE): pooling costs TRT-LLM's campaigns about a point of throughput (docs/performance.md,
    "Partial pooling across engines")."""
    kernels, roofline = held_out
    bundled = Calibration.bundled()
    for engine, kind in SLICES:
        k, f = (report.median_errors([(r.engine, _class(r)) == (engine, kind) for r in report.rows])
                for report in (kernels, roofline))
        assert bool(getattr(bundled.constants(engine), KERNEL_CLASSES[kind])) == (sum(k) < sum(f)), (engine, kind, k, f)
    for kind, tpot, rate in (("dense", 0.105, 0.12), ("moe", 0.07, 0.075)):
        k = kernels.median_errors([(r.engine, _class(r)) == ("trtllm", kind) for r in kernels.rows])
        assert k[0] <= tpot and k[2] <= rate, kind


# A hand-made table, built fresh in each test (the bundled ones are cached): latency in ms on a 2 x 3 grid
# over (tokens, bytes), with a one-point third axis. Expected values worked by hand: multilinear in log
# latency over log coordinates, clamped below the grid, in proportion above it.
HAND_AXES = (np.array([1.0, 16.0]), np.array([100.0, 1000.0, 10000.0]), np.array([8.0]))
HAND_MS = np.array([[1.0, 2.0, 8.0], [4.0, 10.0, 50.0]])


def _hand_table():
    from finops.sizing.kernels import KernelTable
    return KernelTable(np.log(HAND_MS)[:, :, None], HAND_AXES)


@pytest.mark.parametrize("point, ms", [
    ((1.0, 100.0, 8.0), 1.0),                                  # a grid point
    ((16.0, 10000.0, 8.0), 50.0),                              # the far corner
    ((4.0, 100.0, 8.0), 2.0),                                  # log-midway along tokens: sqrt(1 x 4)
    ((1.0, 316.22776601683796, 8.0), 2 ** 0.5),                # log-midway along bytes: sqrt(1 x 2)
    ((4.0, 3162.2776601683795, 8.0), (2 * 8 * 10 * 50) ** 0.25),  # the centre of the second cell
    ((0.5, 50.0, 8.0), 1.0),                                   # below the grid: clamped
    ((32.0, 100.0, 8.0), 8.0),                                 # twice the tokens axis: twice the last row
    ((16.0, 40000.0, 16.0), 50.0 * 4 * 2),                     # beyond two axes, the one-point one included
])
def test_a_table_interpolates_in_log_space_clamps_below_and_scales_above(point, ms):
    table = _hand_table()
    assert table(*point) == pytest.approx(ms * 1e-3, rel=1e-12)
    stacked = table(*(np.array([v, v]) for v in point))            # the vectorized path, two points at once
    assert stacked.shape == (2,) and stacked == pytest.approx([ms * 1e-3] * 2, rel=1e-12)


def test_a_one_axis_table_takes_the_one_call_path_with_the_same_rules():
    from finops.sizing.kernels import KernelTable
    table = KernelTable(np.log(np.array([1.0, 4.0, 4.0])), (np.array([10.0, 40.0, 160.0]),))
    assert table(20.0) == pytest.approx(2e-3, rel=1e-12)            # log-midway: sqrt(1 x 4)
    assert table(5.0) == pytest.approx(1e-3, rel=1e-12)              # clamped below
    assert table(640.0) == pytest.approx(16e-3, rel=1e-12)           # 4x the last point: 4x its latency
    assert table(np.array([20.0, 640.0])) == pytest.approx([2e-3, 16e-3], rel=1e-12)


def test_a_table_with_a_one_point_first_axis_still_interpolates_the_others():
    """An axis of one point (a GPU count measured once) is skipped, not the end of the lookup."""
    from finops.sizing.kernels import KernelTable
    table = KernelTable(np.log(np.array([[1.0, 4.0, 16.0]])), (np.array([8.0]), np.array([10.0, 20.0, 40.0])))
    assert table(8.0, 14.142135623730951) == pytest.approx(2e-3, rel=1e-9)     # log-midway of 1 and 4 ms
    assert table(8.0, 80.0) == pytest.approx(32e-3, rel=1e-9)                  # twice the last point
