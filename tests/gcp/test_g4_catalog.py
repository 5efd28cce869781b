"""GCP G4: the RTX PRO 6000 Blackwell Server Edition in the catalogs, and what the sizing search makes of it."""

from __future__ import annotations

import pytest

from connectors.gcp.snapshot import snapshot
from finops.catalog import get_accelerator, instance
from finops.sizing.performance import estimate
from finops.sizing.search import search
from finops.sizing.support import engines_for
from finops.sizing.workload import presets


def test_the_accelerator_row_carries_the_datasheet_figures_dense():
    # NVIDIA's product page: 96 GB GDDR7, 1,597 GB/s, FP8 2 PFLOPS and FP16/BF16 1 PFLOP with sparsity,
    # up to 600 W, PCIe Gen5 x16 (64 GB/s per direction)
    gpu = get_accelerator("nvidia-rtx-pro-6000")
    assert gpu.id == "rtx-pro-6000"
    assert (gpu.memory_gb, gpu.memory_bandwidth_gbps, gpu.tdp_w, gpu.interconnect_gbps) == (96, 1597, 600, 64)
    assert (gpu.tflops("bf16"), gpu.tflops("fp8")) == (500, 1000)
    assert gpu.memory_gib_usable == 94.97   # what PyTorch reports of the card's 96 GiB of GDDR7
    assert "rtx-pro-6000-blackwell-server-edition" in gpu.source and gpu.as_of


# (machine, GPUs, vCPUs, memory GB) from the G4 table of
# https://cloud.google.com/compute/docs/accelerator-optimized-machines
@pytest.mark.parametrize("machine, gpus, vcpu, memory", [
    ("g4-standard-48", 1, 48, 180), ("g4-standard-96", 2, 96, 360),
    ("g4-standard-192", 4, 192, 720), ("g4-standard-384", 8, 384, 1440),
])
def test_g4_instance_rows_match_the_docs_and_the_price_book(machine, gpus, vcpu, memory):
    row = instance("gcp", machine)
    assert (row.gpu_model, row.gpu_count, row.vcpu, row.memory_gib, row.local_ssd_gb) == (
        "rtx-pro-6000", gpus, vcpu, memory, 0)
    priced = {(r.gpu_model, r.gpu_count) for r in snapshot().filter(instance_type=machine).rows}
    assert priced == {(row.gpu_model, row.gpu_count)}


@pytest.mark.parametrize("precision, engines", [
    ("bf16", ("trtllm", "vllm", "sglang")),
    ("fp8", ("trtllm", "vllm", "sglang")),
    ("int8", ()),
])
def test_engines_serving_the_rtx_pro_6000(precision, engines):
    assert engines_for("rtx-pro-6000", precision) == engines


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_rtx_pro_6000_estimates_are_extrapolated(engine):
    e = estimate("llama-3.1-8b", "rtx-pro-6000", precision="fp8", tp=1, isl=1024, osl=256, concurrency=8,
                 engine=engine)
    assert e.fits and e.calibrated is False


def test_the_search_prices_g4_machines_and_marks_them_extrapolated():
    result = search(presets()["seed002-marketing-content"], gpus=["rtx-pro-6000"], top=5)
    assert result.options
    assert {o.instance_type.split("-standard-")[0] for o in result.options} == {"g4"}
    assert not any(o.calibrated for o in result.options)
    assert not search(presets()["seed002-marketing-content"], gpus=["rtx-pro-6000"], calibrated_only=True).options
