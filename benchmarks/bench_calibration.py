"""Accuracy of the performance model on the bundled AIConfigurator measurements, leave-one-model-out.

Prints the median absolute relative error of TPOT, TTFT and throughput (``c x osl / (TTFT + (osl - 1)
TPOT)``) where every row is predicted by a fit that never saw its model, overall and per engine, GPU,
model, model class and TP; and, for contrast, the error of a plain roofline (weights + KV at peak
bandwidth, prefill FLOPs at peak compute, no per-step overhead, no interference) on the same rows.
Goal: <= 5 % maximum throughput, <= 10 % TPOT and TTFT at fixed concurrency. The constants
are fitted on the dense models only (``BUNDLED_CLASSES``); the DeepSeek-V3/R1 rows are predicted, never
fitted, so their slice is the error of extrapolating to an MLA/MoE model.

The same report leave-one-GPU-out follows (per engine, as the product answers). Then the measured-kernel step times (``finops.sizing.kernels``) beside the roofline on the rows the
kernel tables cover, leave-one-model-out and leave-one-GPU-out, per engine and per engine and model class;
where the kernels' three held-out median errors (TPOT, TTFT, throughput) sum lower than the roofline's,
they become the default of that engine and class (``kernels_against_roofline``).

Last, the accelerators outside the kernel tables: the per-vendor efficiencies
(``finops.sizing.published``) fitted on published rows, held out by source and by model, per vendor and
engine, beside the engine's constants on the same rows.

``--floor`` adds the in-sample floor of the model's form: every dense campaign (engine, model, GPU) fitted
alone, every constant free, and predicted in sample. No held-out figure can be expected below it.

Then the error bands (``finops.sizing.bands``): every bundled published row the constants never fitted
and the AIConfigurator rows held out by GPU (``benchmarks/held_out_families.py``), each with the band the
product would give it had its own family, or its own source, been left out: held-out error, P10-P90
coverage and median width (high / low) per family, source, reach and metric. Goals: 70-90 % covered,
median width at most 2.

Run: ``python benchmarks/bench_calibration.py``; ``--bands`` prints the band report alone (no fit, a few
seconds); ``--write`` also refits on every row and rewrites the shipped constants
``finops/catalog/data/calibration.json`` (with these held-out errors, the per-engine bands and the vendor
efficiencies in it) and the held-out residuals ``finops/data/calibration/held_out_families.csv.gz``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from finops.catalog import get_accelerator, get_model, resolve_model
from finops.sizing.bands import HELD_OUT_FILE, HeldOutRatio, band_keys, bands_by_class, bundled_held_out
from finops.sizing.calibration import (
    BUNDLED_CLASSES,
    FoldReport,
    Measurement,
    bundled_measurements,
    fit,
    kernel_covered,
    leave_one_model_out,
    queue_limited,
    with_held_out,
)
from finops.sizing.calibration import predict as predict_measured
from finops.sizing.engine_constants import KERNEL_CLASSES, Calibration, model_class
from finops.sizing.performance import estimate, replica_physics
from finops.sizing.published import fittable, held_out, predict, published_rows, with_vendors
from finops.sizing.vendor_efficiency import BAND_LEVELS, MIN_BAND_SOURCES, ratio_at

sys.path.insert(0, str(Path(__file__).parent))
from held_out_families import held_out_ratios
from held_out_families import write as write_held_out_ratios


def roofline(m: Measurement) -> tuple[float, float]:
    """(TTFT, TPOT) in ms from peak bandwidth and peak FLOPS only."""
    p = replica_physics(get_model(m.model), get_accelerator(m.gpu), precision=m.precision, tp=m.tp)
    ctx = m.isl + m.osl / 2
    tpot = (p.weight_bytes_per_gpu + m.concurrency * ctx * p.kv_bytes_per_token_per_gpu) / p.bandwidth
    flops = 2 * p.active_params * m.isl + 2 * p.layers * p.attention_width * m.isl ** 2
    return flops / (p.tp * p.flops) * 1e3, tpot * 1e3


def table(report: FoldReport, title: str, key: Callable[[Measurement], object]) -> None:
    print(f"\n{title:24} {'rows':>5} {'TPOT err':>9} {'TTFT err':>9} {'tok/s err':>9}")
    for value in sorted({key(r) for r in report.rows}, key=str):
        mask = [key(r) == value for r in report.rows]
        tpot, ttft, rate = report.median_errors(mask)
        print(f"{value!s:24} {sum(mask):>5} {tpot:>9.1%} {ttft:>9.1%} {rate:>9.1%}")


def main(kernel_engines: tuple[str, ...] | None = None) -> tuple[FoldReport, FoldReport]:
    """The held-out report as the product answers: measured kernels for ``kernel_engines`` (by default
    the bundled calibration's), the roofline elsewhere."""
    rows = bundled_measurements()
    start = time.perf_counter()
    report = leave_one_model_out(rows, classes=BUNDLED_CLASSES, kernel_engines=kernel_engines)
    seconds = time.perf_counter() - start
    tpot, ttft, rate = report.median_errors()
    print(f"leave-one-model-out on {len(rows)} AIConfigurator rows ({report.excluded} left out: "
          f"concurrency beyond the KV cache or the batch limit), {seconds:.1f} s")
    print(f"median absolute error, held out: TPOT {tpot:.1%} (goal 10 %), TTFT {ttft:.1%} (goal 10 %), "
          f"throughput {rate:.1%} (goal 5 %)")
    p90 = (np.quantile(report.error(m), 0.9) for m in ("tpot_ms", "ttft_ms", "output_tokens_per_s"))
    print("90th percentile of the error:    TPOT {:.1%}, TTFT {:.1%}, throughput {:.1%}".format(*p90))
    table(report, "engine", lambda r: r.engine)
    table(report, "gpu", lambda r: r.gpu)
    table(report, "model", lambda r: r.model)
    table(report, "model class", lambda r: model_class(resolve_model(r.model)))
    table(report, "engine / class", lambda r: f"{r.engine} {model_class(resolve_model(r.model))}")
    table(report, "tp", lambda r: r.tp)
    table(report, "engine / tp", lambda r: f"{r.engine} TP{r.tp}")
    by_gpu = leave_one_model_out(rows, classes=BUNDLED_CLASSES, kernel_engines=kernel_engines, hold_out="gpu")
    table(by_gpu, "leave one GPU out", lambda r: r.engine)
    print("leave one GPU out, all {} rows: TPOT {:.1%}, TTFT {:.1%}, throughput {:.1%}".format(
        len(by_gpu.rows), *by_gpu.median_errors()))

    naive = np.array([roofline(r) for r in report.rows])
    measured = np.array([(r.ttft_ms, r.tpot_ms) for r in report.rows])
    under = 1 - naive / measured
    print("\nplain roofline on the same rows (peak bandwidth and FLOPS, no overhead, no interference):")
    print(f"median underestimate: TPOT {np.median(under[:, 1]):.1%}, TTFT {np.median(under[:, 0]):.1%}")
    for tp in (1, 2, 4, 8):
        mask = np.array([r.tp == tp for r in report.rows])
        print(f"  TP{tp}: TPOT underestimated by {np.median(under[mask, 1]):.1%}")
    return report, by_gpu


def estimate_speed(calls: int = 2000) -> None:
    """Warm time of one ``estimate`` in this process (goal: at most 1 ms), with the load."""
    print()
    for step_time in ("kernels", "roofline"):
        args = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "bf16", "tp": 1, "isl": 1024, "osl": 256,
                "concurrency": 16, "engine": "trtllm", "step_time": step_time}
        estimate(**args)
        start = time.perf_counter()
        for _ in range(calls):
            estimate(**args)
        per_call_ms = (time.perf_counter() - start) / calls * 1e3
        print(f"warm estimate, {step_time} step times: {per_call_ms:.3f} ms per query (goal 1 ms; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


def kernels_against_roofline() -> tuple[str, ...]:
    """Leave-one-model-out and leave-one-GPU-out error of the measured-kernel step times on the rows the
    tables cover, beside the roofline's on the same rows, per engine and model class; returns the
    ``engine:class`` slices where the kernels are better leave-one-model-out, which become their default
    (``kernel_steps``, ``kernel_steps_moe``). Better means a lower sum of the three held-out median errors
    (TPOT, TTFT and throughput weigh the same): vLLM's MoE rows, for one, trade 2 points of TPOT for 27 of
    TTFT, and a fleet sized on a TTFT target wants that trade."""
    rows = [r for r in bundled_measurements() if kernel_covered(r)]
    slices = sorted({(r.engine, model_class(resolve_model(r.model))) for r in rows})
    every = [f"{engine}:{kind}" for engine, kind in slices if kind in KERNEL_CLASSES]
    reports = {(step, hold): leave_one_model_out(rows, classes=BUNDLED_CLASSES, hold_out=hold,
                                                 kernel_engines=every if step == "kernels" else ())
               for step in ("kernels", "roofline") for hold in ("model", "gpu")}
    print(f"\nmeasured kernels against the roofline on the {len(reports['kernels', 'model'].rows)} rows the kernel "
          "tables cover (median absolute error, held out; TPOT / TTFT / throughput):")
    print(f"{'slice':30} {'rows':>5} {'kernels':>22} {'roofline':>22}")
    better = []
    for hold in ("model", "gpu"):
        for key in [*slices, None]:
            def chosen(r: Measurement) -> bool:
                return key is None or (r.engine, model_class(resolve_model(r.model))) == key
            k, f = (reports[step, hold].median_errors([chosen(r) for r in reports[step, hold].rows])
                    for step in ("kernels", "roofline"))
            name = "all" if key is None else ":".join(key)
            count = sum(chosen(r) for r in reports["kernels", hold].rows)
            print(f"{hold + ' out, ' + name:30} {count:>5} "
                  + "  ".join(f"{x:5.1%}" for x in k) + "  " + "  ".join(f"{x:5.1%}" for x in f))
            if hold == "model" and key is not None and name in every and sum(k) < sum(f):
                better.append(name)
    print(f"kernels become the default for: {', '.join(better) or 'nothing'}")
    return tuple(better)


def vendor_report(calibration: Calibration) -> None:
    """Error of the per-family efficiencies on the published rows they are fitted on (those the product answers,
    on accelerators outside the kernel tables: ``fittable``), per family, engine and metric: held out (each row
    predicted by a fit that never saw its source, or its model), fitted on every row, and with the engine's
    constants alone (fitted on NVIDIA rows only; no family efficiencies)."""
    rows = fittable(published_rows())
    measured = np.array([r.value for r in rows])
    engine_only = replace(calibration, vendors={})
    ratios = {"source out": 1.0 / held_out(rows, engine_only, "source_id"),     # modelled / measured
              "model out": 1.0 / held_out(rows, engine_only, "model"),
              "all rows fitted": predict(rows, with_vendors(engine_only, rows)) / measured,
              "engine constants": predict(rows, engine_only) / measured}
    print(f"\naccelerators outside the kernel tables: {len(rows)} published rows, median absolute error "
          "(worst row as a ratio) per family, engine and metric")
    print(f"{'family:engine metric':40} {'rows':>5} " + " ".join(f"{name:>17}" for name in ratios))
    for key in sorted({(get_accelerator(r.gpu).family, r.engine, r.metric) for r in rows}):
        mask = np.array([(get_accelerator(r.gpu).family, r.engine, r.metric) == key for r in rows])
        cells = [f"{np.median(np.abs(r[mask] - 1.0)):6.1%} ({np.max(np.maximum(r[mask], 1.0 / r[mask])):.2f}x)"
                 for r in ratios.values()]
        print(f"{key[0] + ':' + key[1] + ' ' + key[2]:40} {int(mask.sum()):>5} " + " ".join(f"{c:>17}" for c in cells))
    for v in with_vendors(engine_only, rows).vendors.values():
        print(f"{v.key}: eta_bw {v.bandwidth_efficiency:.3f}, eta_c {v.compute_efficiency:.3f} for "
              f"{', '.join(v.gpus)}, fitted on {v.rows} rows (the engine's: eta_bw "
              f"{calibration.constants(v.engine).bandwidth_efficiency:.3f}, eta_c "
              f"{calibration.constants(v.engine).compute_efficiency:.3f})")


def campaign_floor(kernel_engines: tuple[str, ...]) -> None:
    """Each dense campaign (engine, model, GPU) fitted alone on its own rows, every constant free, and
    predicted in sample: what the model's form reaches when it may fit each campaign's quirks, a floor
    under any held-out error (2026-12-06: TPOT 4.7 %, TTFT 11.7 %, throughput 4.2 % over the dense rows)."""
    campaigns: dict[tuple[str, str, str], list[Measurement]] = {}
    for r in bundled_measurements():
        if not queue_limited(r) and model_class(resolve_model(r.model)) == "dense":
            campaigns.setdefault((r.engine, r.model, r.gpu), []).append(r)
    print(f"\nin-sample floor: each dense campaign fitted alone ({len(campaigns)} campaigns), median absolute error")
    print(f"{'campaign':40} {'rows':>5} {'TPOT':>7} {'TTFT':>7} {'tok/s':>7}")
    metrics = ("tpot_ms", "ttft_ms", "output_tokens_per_s")
    errors: list[np.ndarray] = []
    for key, rows in sorted(campaigns.items()):
        ttft, tpot = predict_measured(rows, fit(rows, kernel_engines=kernel_engines))
        report = FoldReport(rows=tuple(rows), ttft_ms=ttft, tpot_ms=tpot, excluded=0)
        errors.append(np.column_stack([report.error(m) for m in metrics]))
        print(f"{' '.join(key):40} {len(rows):>5} " + " ".join(f"{v:>7.1%}" for v in report.median_errors()))
    print("all dense rows, in sample: TPOT {:.1%}, TTFT {:.1%}, throughput {:.1%}".format(
        *np.median(np.vstack(errors), axis=0)))


def _band_of(r: HeldOutRatio, others: list[HeldOutRatio], cal: Calibration) -> tuple[float, float] | None:
    """The P10-P90 ratios the product would give ``r``'s class had ``others`` been all its held-out rows:
    the measured reach from the calibration (its bands never saw a published row), the fitted reach from the
    other held-out rows of its family fit (None: the family left out entirely, where its rows count as
    unmeasured), the wider reaches rebuilt from ``others`` alone."""
    if r.reach == "measured":
        return cal.band_ratios(r.engine, r.metric, r.model_class, tp=r.tp)
    if r.reach == "fitted":       # the family fit's band: its own rows' held-out ratios, ``others`` of them only
        own = [o for o in others if o.reach == "fitted" and o.family == r.family and o.engine == r.engine
               and o.metric == r.metric]
        if not own:
            return None
        quantiles = tuple(np.quantile([o.ratio for o in own], BAND_LEVELS))
        low, high = ratio_at(quantiles, 0.1), ratio_at(quantiles, 0.9)
        if len({o.source for o in own}) >= MIN_BAND_SOURCES:
            return low, high
        wide = _band_of(replace(r, reach="unmeasured"), others, cal)   # as Calibration.band: too few sources
        return (low, high) if wide is None else (min(low, wide[0]), max(high, wide[1]))
    bands = bands_by_class(others, [r.metric])
    key = next((k for k in band_keys(r.engine, r.model_class, r.tp, r.reach) if r.metric in bands.get(k, {})), None)
    if key is None:
        return cal.band_ratios(r.engine, r.metric, r.model_class, tp=r.tp)
    quantiles = bands[key][r.metric]
    low, high = ratio_at(quantiles, 0.1), ratio_at(quantiles, 0.9)
    inner = _band_of(replace(r, reach={"kernels": "measured", "unmeasured": "kernels"}[r.reach]), others, cal)
    return (low, high) if inner is None else (min(low, inner[0]), max(high, inner[1]))   # as Calibration.band


def band_report(ratios: list[HeldOutRatio], cal: Calibration) -> None:
    """Held-out error and P10-P90 band coverage of every bundled published row the constants never fitted,
    and the AIConfigurator rows held out by GPU: each row's band built without its own family (leave one
    family out) or its own source (leave one source out). Goals: the band holds 70-90 % of the held-out
    values with a median width (high / low) at most 2."""
    for group in ("family", "source"):
        cache: dict[str, list[HeldOutRatio]] = {}
        print(f"\nleave one {group} out: median absolute error, P10-P90 coverage and median width (high / low)")
        print(f"{group + ' / reach / metric':58} {'rows':>5} {'error':>7} {'cover':>6} {'width':>6}")
        stats: dict[tuple[str, str, str], list[tuple[float, bool, float]]] = {}
        for r in ratios:
            value = getattr(r, group)
            others = cache.setdefault(value, [o for o in ratios if getattr(o, group) != value])
            band = _band_of(r, others, cal)
            if band is None:
                continue
            stats.setdefault((value, r.reach, r.metric), []).append(
                (abs(1.0 / r.ratio - 1.0), band[0] <= r.ratio <= band[1], band[1] / band[0]))
        everything = []
        for key, rows in sorted(stats.items()):
            error, inside, width = (np.array(column, dtype=float) for column in zip(*rows))
            everything += rows
            print(f"{' / '.join(key):58} {len(rows):>5} {np.median(error):>7.1%} {inside.mean():>6.0%} "
                  f"{np.median(width):>6.2f}")
        error, inside, width = (np.array(column, dtype=float) for column in zip(*everything))
        print(f"{'all rows':58} {len(everything):>5} {np.median(error):>7.1%} {inside.mean():>6.0%} "
              f"{np.median(width):>6.2f}   (goal: 70-90 % covered, width <= 2)")


def write_constants(report: FoldReport, kernel_engines: tuple[str, ...], by_gpu: FoldReport) -> None:
    rows = bundled_measurements()
    as_of = rows[0].source.rsplit(" ", 1)[-1]
    target = Path(__file__).parents[1] / "finops" / "catalog" / "data" / "calibration.json"
    fitted = with_held_out(fit(rows, as_of=as_of, classes=BUNDLED_CLASSES, kernel_engines=kernel_engines), report)
    with_vendors(fitted).write(target)
    print(f"\nwrote {target}")
    ratios, _ = held_out_ratios(Calibration.read(target), gpu_out=by_gpu)   # the constants just written
    residuals = Path(__file__).parents[1] / "finops" / "data" / "calibration" / HELD_OUT_FILE
    write_held_out_ratios(residuals, ratios)
    print(f"wrote {residuals}")


def bands_only() -> None:
    """``--bands``: the band report alone, on the bundled held-out residuals (no fit)."""
    ratios = bundled_held_out()
    _, skipped = held_out_ratios()
    print(f"{len(ratios)} held-out rows (published rows the constants never fitted, and the AIConfigurator "
          f"rows held out by GPU); published rows skipped: {dict(sorted(skipped.items()))}")
    band_report(ratios, Calibration.bundled())


if __name__ == "__main__":
    if "--bands" in sys.argv[1:]:
        bands_only()
        estimate_speed()
        sys.exit(0)
    chosen = kernels_against_roofline()
    fold_report, by_gpu_report = main(chosen)
    vendor_report(Calibration.bundled())
    bands_only()
    estimate_speed()
    if "--floor" in sys.argv[1:]:
        campaign_floor(tuple(chosen))
    if "--write" in sys.argv[1:]:
        write_constants(fold_report, chosen, by_gpu_report)
