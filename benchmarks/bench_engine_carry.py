"""Does a GPU's shortfall under one engine carry to another? Held out on the AIConfigurator rows.

A family fit measured under engine M answers engine E with ``eta_x(E) x eta_x(family, M) / eta_x(M)``
(:meth:`finops.sizing.vendor_efficiency.VendorEfficiency.carried_to`). The bundled rows measure H100 SXM, H200
and B200 under TensorRT-LLM, vLLM and SGLang, so the rule can be tried there: for each GPU G and engine E,
E's rows of G are never fitted; they are predicted with

* ``engine``: E's ``eta_bw`` and ``eta_c`` fitted on E's rows of the other GPUs (what an unmeasured GPU gets);
* ``carried from M``: those times G's shortfall under M, ``eta(M, G) / eta(M, other GPUs)``, clipped to
  0.05-1;
* ``own``: E's efficiencies fitted on those very rows (in-sample: the best the two terms can do).

Steps are timed by the roofline (kernel tables off, as on an accelerator a family fit answers), every other
constant the bundled engine's; queue-limited rows are left out. Prints each fit's efficiencies and shortfall,
then the median absolute TPOT and TTFT error of each prediction, and the totals over every (G, E, M).

Then the one family measured under two of the product's engines: the llmperf comparison whose vLLM rows the
``nvidia-a10g:vllm`` fit learns from also ran NVIDIA NIM 1.0.0 (TensorRT-LLM) on the same g5.2xlarge, left out
of every fit (:data:`NIM_A10G`). Each NIM point is predicted as the product answers TensorRT-LLM on the A10G,
carried (``nvidia-a10g:vllm>trtllm``) and with TensorRT-LLM's constants alone.

Run: ``python benchmarks/bench_engine_carry.py`` (a few seconds).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from statistics import median

import numpy as np
from scipy.optimize import least_squares

from finops.sizing.calibration import (
    _TPOT_WEIGHT,
    _columns,
    _latency_ms,
    _physics,
    bundled_measurements,
    queue_limited,
)
from finops.sizing.engine_constants import Calibration
from finops.sizing.performance import estimate
from finops.sizing.vendor_efficiency import EFFICIENCY_RANGE

GPUS = ("h100-sxm", "h200", "b200")
#: NVIDIA NIM 1.0.0 serving Llama-3-8B-Instruct (FP16) on one A10G, llmperf, 550-token prompts, 150 generated
#: tokens, 1-32 closed-loop clients: clients -> (mean TTFT ms, inter-token latency ms per Llama-2-tokenizer
#: token, mean output length in those tokens), from
#: https://github.com/philschmid/llmperf/blob/eb77e6376a0937a7454fd17803abe7dcfd7a65a7/benchmarks/results/a10g/nim-meta_llama3-8b-instruct.csv
#: (2024-06-05). The 150 model tokens read as the stated output length, so TPOT = ITL x length / 150.
NIM_A10G = {1: (135.41, 30.3319, 166.94), 2: (147.76, 30.7760, 167.80), 4: (173.61, 31.5606, 169.31),
            8: (231.10, 33.8949, 168.94), 16: (336.22, 38.6851, 168.54), 32: (325.38, 44.4818, 167.09)}
ENGINES = ("trtllm", "vllm", "sglang")


class Rows:
    """Each engine's usable rows on a set of GPUs, with their physics computed once."""

    def __init__(self) -> None:
        self.rows = [r for r in bundled_measurements() if not queue_limited(r)]
        cal = Calibration.bundled()
        self.base = {e: replace(cal.constants(e), kernel_steps=0.0, kernel_steps_moe=0.0) for e in ENGINES}
        self._cache: dict = {}

    def data(self, engine: str, gpus: tuple[str, ...]):
        key = (engine, gpus)
        if key not in self._cache:
            mine = [r for r in self.rows if r.engine == engine and r.gpu in gpus]
            self._cache[key] = (_physics(mine), _columns(mine)) if mine else None
        return self._cache[key]

    def latency(self, engine: str, data, bw: float, eta_c: float) -> tuple[np.ndarray, np.ndarray]:
        phys, cols = data
        return _latency_ms(phys, replace(self.base[engine], bandwidth_efficiency=bw, compute_efficiency=eta_c), cols)

    def fit(self, engine: str, gpus: tuple[str, ...]) -> tuple[float, float] | None:
        """``eta_bw``, ``eta_c`` of ``engine`` on its rows of ``gpus`` (the calibration's loss and weights)."""
        data = self.data(engine, gpus)
        if data is None:
            return None
        cols = data[1]

        def residuals(x: np.ndarray) -> np.ndarray:
            ttft, tpot = self.latency(engine, data, *np.exp(x))
            return np.concatenate([_TPOT_WEIGHT * np.log(tpot / cols["tpot_ms"]), np.log(ttft / cols["ttft_ms"])])

        start = np.log([self.base[engine].bandwidth_efficiency, self.base[engine].compute_efficiency])
        bounds = np.log([EFFICIENCY_RANGE[0]] * 2), np.log([EFFICIENCY_RANGE[1]] * 2)
        found = least_squares(residuals, start.clip(*bounds), bounds=bounds, loss="soft_l1", f_scale=0.05)
        return tuple(float(v) for v in np.exp(found.x))

    def errors(self, engine: str, gpu: str, bw: float, eta_c: float) -> tuple[float, float]:
        """Median absolute relative error, in %, of TPOT and TTFT on ``engine``'s rows of ``gpu``."""
        data = self.data(engine, (gpu,))
        ttft, tpot = self.latency(engine, data, bw, eta_c)
        cols = data[1]
        return (float(np.median(np.abs(tpot / cols["tpot_ms"] - 1))) * 100,
                float(np.median(np.abs(ttft / cols["ttft_ms"] - 1))) * 100)


def nim_a10g() -> None:
    """NIM's A10G points beside TensorRT-LLM on the A10G carried and uncarried (module docstring)."""
    cal = Calibration.bundled()
    uncarried = replace(cal, vendors={k: v for k, v in cal.vendors.items() if not k.startswith("nvidia-a10g:")})
    print("\nNIM (TensorRT-LLM) on the A10G, never fitted: clients, measured TPOT and TTFT ms; carried; engine's alone")
    errors: dict[str, list[tuple[float, float]]] = {"carried": [], "engine": []}
    for clients, (ttft, itl, length) in NIM_A10G.items():
        tpot = itl * length / 150
        line = f"  {clients:3} {tpot:6.1f} {ttft:6.0f}"
        for name, calibration in (("carried", cal), ("engine", uncarried)):
            e = estimate("llama-3-8b", "a10g", precision="fp16", tp=1, isl=550, osl=150, engine="trtllm",
                         concurrency=clients, client="staggered", calibration=calibration)
            errors[name].append((abs(e.tpot_ms / tpot - 1), abs(e.ttft_ms / ttft - 1)))
            low, high = e.tpot_ms_band
            line += f"   {e.tpot_ms:6.1f} [{low:.1f}-{high:.1f}] {e.ttft_ms:5.0f}"
        print(line)
    for name, pairs in errors.items():
        print(f"  {name:8} median |error| TPOT {median(p[0] for p in pairs) * 100:.1f} %, "
              f"TTFT {median(p[1] for p in pairs) * 100:.1f} %")


def main() -> None:
    start = time.perf_counter()
    rows = Rows()
    own = {(e, g): rows.fit(e, (g,)) for e in ENGINES for g in GPUS}
    off = {(e, g): rows.fit(e, tuple(x for x in GPUS if x != g)) for e in ENGINES for g in GPUS}
    print("efficiencies eta_bw / eta_c on the GPU, on the others, and the GPU's shortfall (their ratio)")
    for g in GPUS:
        for e in ENGINES:
            if own[e, g] and off[e, g]:
                s = [a / b for a, b in zip(own[e, g], off[e, g])]
                print(f"  {g:9} {e:7} {own[e, g][0]:.3f} / {own[e, g][1]:.3f}   {off[e, g][0]:.3f} / {off[e, g][1]:.3f}"
                      f"   {s[0]:.2f} / {s[1]:.2f}")
    low, high = EFFICIENCY_RANGE
    print("\nE's rows of G, never fitted: median |error| TPOT %, TTFT %")
    totals: dict[str, list[tuple[float, float]]] = {"engine": [], "carried": []}
    for g in GPUS:
        for e in ENGINES:
            if rows.data(e, (g,)) is None or off[e, g] is None:
                continue
            engine = rows.errors(e, g, *off[e, g])
            print(f"  {g:9} {e:7} engine               {engine[0]:5.1f} {engine[1]:6.1f}")
            for m in ENGINES:
                if m == e or own[m, g] is None or off[m, g] is None:
                    continue
                bw, eta_c = (min(max(t * o / s, low), high) for t, o, s in zip(off[e, g], own[m, g], off[m, g]))
                carried = rows.errors(e, g, bw, eta_c)
                totals["engine"].append(engine)
                totals["carried"].append(carried)
                print(f"  {g:9} {e:7} carried from {m:7} {carried[0]:5.1f} {carried[1]:6.1f}")
            fitted = rows.errors(e, g, *own[e, g])
            print(f"  {g:9} {e:7} own (in-sample)      {fitted[0]:5.1f} {fitted[1]:6.1f}")
    pairs = len(totals["carried"])
    better = sum(c[0] < b[0] for c, b in zip(totals["carried"], totals["engine"]))
    print(f"\nover {pairs} (GPU, engine, carried-from) triples, median of the medians: TPOT "
          f"{median(t[0] for t in totals['engine']):.1f} % engine, {median(t[0] for t in totals['carried']):.1f} % "
          f"carried ({better} better); TTFT {median(t[1] for t in totals['engine']):.1f} % engine, "
          f"{median(t[1] for t in totals['carried']):.1f} % carried")
    nim_a10g()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n{time.perf_counter() - start:.0f} s, load average {load:.1f}")


if __name__ == "__main__":
    main()
