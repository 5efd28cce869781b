"""Write the measured kernel tables of ``finops/data/kernels/`` from an installed aiconfigurator-core.

Development-time only (the product never imports aiconfigurator)::

    python3 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator-core==0.12.0
    /tmp/aic/bin/python scripts/derive_kernel_tables.py          # needs pandas + pyarrow (the package's own)

For each GPU of our catalog that the package measured, and each engine (TRT-LLM, vLLM, SGLang), the
newest collected version of four kernel families is reduced to dense grids of log latency (float16,
natural log of milliseconds), one ``.npz`` per GPU:

===========================  ============================================================================
``<engine>/gemm/<dtype>``    GEMM latency on axes ``m`` (tokens) x ``n`` x ``k``; dtypes bf16, fp8
``<engine>/context/<kv>``    prefill (context) attention, head dim 128, no sliding window, on axes batch x
                             sequence length x query heads x KV heads; KV dtype bf16, fp8
``<engine>/generation/<kv>`` decode (generation) attention, same axes, the sequence axis being the KV length
``<engine>/allreduce``       all-reduce of bf16 activations on axes GPUs x message size, counted in BF16
                             elements (the package's collection notes: 128..536,870,912 spans 256 B..1 GiB)
``<engine>/moe/<dtype>/<s>`` the routed experts of one mixture-of-experts layer (dispatch, grouped GEMMs,
                             combine; not the router's GEMM) for the expert shape ``s`` = hidden x expert
                             width x experts per token x experts, on axes tokens x GPUs, the experts split
                             by tensor parallelism (``.../tp``: ``moe_tp`` = GPUs, ``moe_ep`` 1) or by
                             expert parallelism (``.../ep``); dtypes bf16, fp8 (block-scaled where the
                             package has it, the FP8 checkpoints of these models being block-scaled)
===========================  ============================================================================

MoE tables are written for the expert shapes of the catalog's mixture-of-experts models
(``finops/catalog/data/models.csv``), with the tokens routed as :data:`MOE_DISTRIBUTION` (the package
measures each point with balanced and power-law routing). Their GPU axis is not filled: a layout the
package did not measure at some GPU count stays NaN there.

Each array ``A`` has its axes in ``A@<axis>``. Grid cells the package did not measure are filled along
each axis in turn, in log-log space: interpolated between measured cells, grown beyond the last one as the
kernel's work grows along that axis, held below the first (:data:`FILL_EXPONENTS`, :func:`_fill`; a cell
never measured anywhere is left NaN). The package measures a decode
step's attention only up to about a million cached tokens (batch x KV length): filled by the nearest cell
alone, a batch of 512 sequences of 4,096 tokens read as fast as one of 511-token sequences. Decode
attention and GEMMs are then held to the time their reads take at the datasheet bandwidth
(:func:`kv_read_floor`, :func:`gemm_read_floor`): the microbenchmark serves small operands from L2.
``meta`` is a JSON string: source, package version, date read, and the (op, engine) -> version used.
The numbers are NVIDIA's measurements (Apache-2.0, see NOTICE); only the layout and the precision
(float16 of the log: 0.4 % at worst) are ours.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
from packaging.version import InvalidVersion, Version

#: aiconfigurator system directory -> our catalog id.
GPUS = {"a100_sxm": "a100-80gb", "h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200",
        "l40s": "l40s", "rtx_pro_6000_server": "rtx-pro-6000"}
ENGINES = ("trtllm", "vllm", "sglang")
GEMM_DTYPES = {"bfloat16": "bf16", "fp8": "fp8"}
KV_DTYPES = {"bfloat16": "bf16", "fp8": "fp8"}
HEAD_DIM = 128
#: our MoE dtype -> the package's, in order of preference
MOE_DTYPES = {"bf16": ("bfloat16",), "fp8": ("fp8_block", "fp8")}
#: how the measured tokens were routed over the experts (the package's ``distribution``)
MOE_DISTRIBUTION = "power_law_1.01"
#: expert layouts: table suffix -> which of moe_tp / moe_ep is the GPU count (the other is 1)
MOE_LAYOUTS = {"tp": ("moe_tp_size", "moe_ep_size"), "ep": ("moe_ep_size", "moe_tp_size")}
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "finops" / "data" / "kernels"
MODELS = ROOT / "finops" / "catalog" / "data" / "models.csv"
ACCELERATORS = ROOT / "finops" / "catalog" / "data" / "accelerators.csv"
#: bytes of one element of a dtype: a cached K or V, a GEMM operand
ELEMENT_BYTES = {"bf16": 2, "fp8": 1}


def _versions(directory: Path, table: str) -> list[Path]:
    """``table`` in each version folder under ``directory`` that holds it, newest first."""
    def key(p: Path) -> Version:
        try:
            return Version(p.name)
        except InvalidVersion:
            return Version("0")
    found = sorted((p for p in directory.glob("*") if (p / table).is_file()), key=key, reverse=True)
    return [p / table for p in found]


def _newest(directory: Path, table: str) -> Path | None:
    """The newest version folder under ``directory`` holding ``table``."""
    found = _versions(directory, table)
    return found[0] if found else None


#: How each table's latency grows along an axis where the package did not measure, as the exponent of the
#: coordinate (the work the kernel does there): a decode step's attention reads the KV cache of every
#: sequence, ``batch x length x KV heads`` bytes; a prompt's attention multiplies ``batch x length^2 x
#: query heads``; a GEMM ``m x n x k``; the routed experts' tokens. Axes in the order they are filled.
FILL_EXPONENTS: dict[str, dict[str, float]] = {
    "generation": {"seq": 1.0, "batch_size": 1.0, "num_key_value_heads": 1.0, "num_heads": 0.0},
    "context": {"seq": 2.0, "batch_size": 1.0, "num_heads": 1.0, "num_key_value_heads": 0.0},
    "gemm": {"m": 1.0, "n": 1.0, "k": 1.0},
    "moe": {"num_tokens": 1.0},
    "allreduce": {"message_size": 1.0, "num_gpus": 0.0},
}


def _fill(grid: np.ndarray, coords: list[np.ndarray], axes: list[str], exponents: dict[str, float]) -> np.ndarray:
    """NaN cells of ``grid`` (log latency on ``coords``) filled along each axis of ``exponents`` in turn, in
    log-log space: between measured cells interpolated, beyond the last one grown as ``x ** exponent``
    (the work), below the first one held at its value (the latency floor of a small kernel)."""
    out = grid.copy()
    for name, exponent in exponents.items():
        axis = axes.index(name)
        x = np.log(coords[axis])
        moved = np.moveaxis(out, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        for row in flat:
            known = np.flatnonzero(~np.isnan(row))
            if len(known) and len(known) < len(row):
                last = known[-1]
                row[:] = np.interp(x, x[known], row[known]) + exponent * np.maximum(x - x[last], 0.0)
        out = np.moveaxis(flat.reshape(moved.shape), -1, axis)
    return out


def kv_read_floor(coords: list[np.ndarray], kv: str, bandwidth_gbps: float) -> np.ndarray:
    """Log milliseconds a decode step's attention needs at least on axes batch x KV length x query heads x
    KV heads: the cache it reads, ``batch x length x KV heads x head dim x 2 (K, V) x bytes``, at the
    datasheet bandwidth. Some measured cells lie below it (the microbenchmark's cache served from L2: the
    L40S and RTX PRO 6000 have 96-128 MB of it, and A100 cells read up to 1.7x its 2 TB/s), which a
    serving step, whose layers each read their own cache, never sees."""
    batch, length, _, kv_heads = np.meshgrid(*coords, indexing="ij")
    seconds = batch * length * kv_heads * HEAD_DIM * 2 * ELEMENT_BYTES[kv] / (bandwidth_gbps * 1e9)
    return np.log(seconds * 1e3)


def gemm_read_floor(coords: list[np.ndarray], dtype: str, bandwidth_gbps: float) -> np.ndarray:
    """Log milliseconds a GEMM on axes m x n x k needs at least: its operands and result, ``(n k + m k + m
    n) x bytes``, at the datasheet bandwidth. A serving step reads each layer's own weights, far more than
    any L2, where the microbenchmark repeats one GEMM on one weight: on the L40S (96 MB of L2, 864 GB/s)
    up to 17 % of the BF16 cells, on the RTX PRO 6000 up to 9 %, read 2-3.5x faster than the memory allows;
    on the A100, H100, H200 and B200 a few dozen cells, by at most 30 %."""
    m, n, k = np.meshgrid(*coords, indexing="ij")
    seconds = (n * k + m * k + m * n) * ELEMENT_BYTES[dtype] / (bandwidth_gbps * 1e9)
    return np.log(seconds * 1e3)


def _grid(frame: pd.DataFrame, axes: list[str], kind: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """Log of the median latency on the product of the axes' measured values, the rest filled (:func:`_fill`)."""
    values = frame.groupby(axes)["latency"].median()
    coords = [np.array(sorted(frame[a].unique()), dtype=float) for a in axes]
    full = values.reindex(pd.MultiIndex.from_product(coords, names=axes))
    grid = np.log(full.to_numpy(dtype=float)).reshape([len(c) for c in coords])
    return _fill(grid, coords, axes, FILL_EXPONENTS[kind]), coords


def _store(arrays: dict[str, np.ndarray], name: str, grid: np.ndarray, axes: list[str],
           coords: list[np.ndarray]) -> None:
    arrays[name] = grid.astype(np.float16)
    for axis, c in zip(axes, coords):
        arrays[f"{name}@{axis}"] = c.astype(np.float32)


def _attention(path: Path, kv: str) -> pd.DataFrame:
    d = pd.read_parquet(path)
    window = d["window_size"] if "window_size" in d else 0
    d = d[(d.head_dim == HEAD_DIM) & (window == 0) & (d.kv_cache_dtype == kv)]
    same = d[d.attn_dtype == kv]
    return same if len(same) else d[d.attn_dtype == "bfloat16"]


def moe_shapes(models: Path = MODELS) -> set[tuple[int, int, int, int]]:
    """(hidden, expert width, experts per token, experts) of the catalog's mixture-of-experts models."""
    m = pd.read_csv(models)
    m = m[m.num_experts.fillna(0) > 0]
    return {(int(r.hidden_size), int(r.moe_intermediate_size), int(r.experts_per_token), int(r.num_experts))
            for r in m.itertuples()}


def shape_key(shape: tuple[int, int, int, int]) -> str:
    return "x".join(str(v) for v in shape)


def _moe(arrays: dict[str, np.ndarray], versions: dict[str, str], engine: str, paths: list[Path],
         shapes: set[tuple[int, int, int, int]]) -> None:
    """The MoE tables of one engine, each shape from the newest of ``paths`` (``moe_perf.parquet`` of each
    version, newest first) that measured it (module docstring)."""
    frames = [(path, pd.read_parquet(path)) for path in paths]
    for shape in sorted(shapes):
        found = ((path, d[(d.distribution == MOE_DISTRIBUTION) & (d.hidden_size == shape[0])
                          & (d.inter_size == shape[1]) & (d.topk == shape[2]) & (d.num_experts == shape[3])])
                 for path, d in frames)
        path, part = next(((p, q) for p, q in found if len(q)), (None, None))
        if part is None:
            continue
        versions[f"{engine}/moe/{shape_key(shape)}"] = path.parent.name
        for ours, theirs in MOE_DTYPES.items():
            chosen = next((part[part.moe_dtype == t] for t in theirs if (part.moe_dtype == t).any()), None)
            if chosen is None:
                continue
            for layout, (gpus, one) in MOE_LAYOUTS.items():
                rows = chosen[chosen[one] == 1].rename(columns={gpus: "gpus"})
                if len(rows):   # filled along the tokens only (FILL_EXPONENTS["moe"])
                    _store(arrays, f"{engine}/moe/{ours}/{shape_key(shape)}/{layout}",
                           *_axes(rows, ["num_tokens", "gpus"], "moe"))


def derive_gpu(system: Path, shapes: set[tuple[int, int, int, int]] = frozenset(),
               bandwidth_gbps: float | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """One GPU's tables; with ``bandwidth_gbps``, decode attention and GEMMs held to the time their reads take
    (:func:`kv_read_floor`, :func:`gemm_read_floor`)."""
    arrays: dict[str, np.ndarray] = {}
    versions: dict[str, str] = {}
    for engine in ENGINES:
        gemm = _newest(system / "gemm" / engine, "gemm_perf.parquet")
        if gemm is not None:
            d = pd.read_parquet(gemm)
            for theirs, ours in GEMM_DTYPES.items():
                part = d[d.gemm_dtype == theirs]
                if len(part):
                    grid, axes, coords = _axes(part, ["m", "n", "k"], "gemm")
                    if bandwidth_gbps:
                        grid = np.fmax(grid, gemm_read_floor(coords, ours, bandwidth_gbps))
                    _store(arrays, f"{engine}/gemm/{ours}", grid, axes, coords)
            versions[f"{engine}/gemm"] = gemm.parent.name
        for kind, table in (("context", "context_attention_perf.parquet"),
                            ("generation", "generation_attention_perf.parquet")):
            path = _newest(system / "attention" / engine, table)
            if path is None:
                continue
            column = "isl" if kind == "context" else "step"
            for theirs, ours in KV_DTYPES.items():
                part = _attention(path, theirs).rename(columns={column: "seq"})
                if len(part):
                    grid, axes, coords = _axes(part, ["batch_size", "seq", "num_heads", "num_key_value_heads"], kind)
                    if kind == "generation" and bandwidth_gbps:
                        grid = np.fmax(grid, kv_read_floor(coords, ours, bandwidth_gbps))
                    _store(arrays, f"{engine}/{kind}/{ours}", grid, axes, coords)
            versions[f"{engine}/{kind}"] = path.parent.name
        comm = _newest(system / "comm" / engine, "custom_allreduce_perf.parquet")
        if comm is not None:
            d = pd.read_parquet(comm)
            d = d[d.allreduce_dtype == "bfloat16"]
            _store(arrays, f"{engine}/allreduce", *_axes(d, ["num_gpus", "message_size"], "allreduce"))
            versions[f"{engine}/allreduce"] = comm.parent.name
        if shapes:
            _moe(arrays, versions, engine, _versions(system / "moe" / engine, "moe_perf.parquet"), shapes)
    return arrays, versions


def _axes(frame: pd.DataFrame, axes: list[str], kind: str) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    grid, coords = _grid(frame, axes, kind)
    return grid, axes, coords


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import aiconfigurator_core
    root = Path(aiconfigurator_core.__file__).parent / "systems" / "data"
    version = metadata.version("aiconfigurator-core")
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    shapes = moe_shapes()
    bandwidth = pd.read_csv(ACCELERATORS).set_index("id")["memory_bandwidth_gbps"]
    for system, gpu in GPUS.items():
        arrays, versions = derive_gpu(root / system, shapes, float(bandwidth[gpu]))
        if not arrays:
            print(f"{system}: no tables", file=sys.stderr)
            continue
        meta = {"source": f"aiconfigurator-core {version} systems/data/{system} "
                          "(NVIDIA AIConfigurator, https://github.com/ai-dynamo/aiconfigurator, Apache-2.0)",
                "package_version": version, "as_of": dt.date.today().isoformat(), "gpu": gpu,
                "versions": versions, "moe_routing": MOE_DISTRIBUTION, "units": "natural log of milliseconds; message_size in BF16 elements"}
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        path = args.out / f"{gpu}.npz"
        path.write_bytes(buffer.getvalue())
        total += path.stat().st_size
        print(f"{path.name}: {path.stat().st_size / 1e6:.2f} MB, {len(arrays)} arrays")
    print(f"total {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
