"""Held-out residuals by class: every published row, predicted as the product answers it by a model that never
fitted it, with the reach of that answer (``finops.sizing.bands``).

The rows are the bundled published figures (:func:`finops.sizing.published.published_rows`:
``published_serving.csv``, derived by ``scripts/derive_published_serving.py`` from the collected
``published-wide-2026-12.csv``, and ``published_other_accelerators.csv``), those the product answers. None of
them is fitted by the engines' constants. Each row gives:

* on an accelerator a family fit answers (Inferentia2 and Trainium1 under ``neuron-v2:vllm``, the MI300X under
  ``amd-cdna3:vllm``, the H20 under ``nvidia-h20:sglang``, the A10G under ``nvidia-a10g:vllm``): its ratio under a family fit that never saw its source, or its model where the family has
  one source (:func:`finops.sizing.published.held_out`), reach ``fitted``; and its ratio under the engine's
  constants alone, the family fit left out, reach ``unmeasured``: what a family nothing of which was measured
  gets (leave-one-family-out);
* elsewhere (NVIDIA GPUs under TensorRT-LLM): its ratio as the bundled calibration answers it, with that
  answer's reach (``measured``, or ``kernels`` where kernel tables time a GPU no end-to-end row of the engine
  was fitted on);

and, from the fit itself, the AIConfigurator rows of each GPU predicted by a fit on the other GPUs' rows
(leave-one-GPU-out, reach ``kernels``). ``family`` is the catalog's silicon family, so a family held out is
held out whole (the A100 40 GB and 80 GB together).

``python benchmarks/bench_calibration.py --write`` writes these residuals to
``finops/data/calibration/held_out_families.csv.gz``, from which the product derives the ``kernels`` and
``unmeasured`` reaches' bands when it loads (``finops.sizing.bands.bands_by_class``); the ``fitted`` reach's
band is each family fit's own (``VendorEfficiency.bands``, the same held-out ratios).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from finops.catalog import get_accelerator, resolve_model
from finops.sizing.bands import HeldOutRatio
from finops.sizing.calibration import FoldReport
from finops.sizing.engine_constants import Calibration, model_class
from finops.sizing.published import PublishedRow, answerable, fittable, held_out, predict, published_rows

_METRICS = ("output_tokens_per_s", "ttft_ms", "tpot_ms")
#: A published request latency at the rows' long outputs is decode time: it speaks for TPOT's band.
_AS_METRIC = {"request_latency_ms": "tpot_ms"}


def gpu_out_ratios(report: FoldReport) -> list[HeldOutRatio]:
    """The AIConfigurator rows of each GPU predicted by a fit on the other GPUs' rows
    (``leave_one_model_out(hold_out="gpu")``): what an accelerator whose kernels were measured, but no
    end-to-end row of it fitted, gets (reach ``kernels``)."""
    return [HeldOutRatio(reach="kernels", engine=r.engine, model_class=model_class(resolve_model(r.model)), tp=r.tp,
                         family=get_accelerator(r.gpu).family, source="aiconfigurator-gpu-out", metric=metric,
                         ratio=round(float(x), 4))
            for metric in _METRICS for r, x in zip(report.rows, report.ratio(metric))]


def _ratio(row: PublishedRow, reach: str, ratio: float) -> HeldOutRatio:
    return HeldOutRatio(reach=reach, engine=row.engine, model_class=model_class(resolve_model(row.model)), tp=row.tp,
                        family=get_accelerator(row.gpu).family, source=row.source_id,
                        metric=_AS_METRIC.get(row.metric, row.metric), ratio=round(float(ratio), 4))


def held_out_ratios(calibration: Calibration | None = None,
                    gpu_out: FoldReport | None = None) -> tuple[list[HeldOutRatio], dict[str, int]]:
    """Measured / modelled of every bundled published row the product answers, each by a model that never fitted
    it, with its class (module docstring), and the rows refused (reason -> rows); with ``gpu_out``, the
    AIConfigurator rows held out by GPU as well (:func:`gpu_out_ratios`)."""
    cal = calibration or Calibration.bundled()
    engine_only = replace(cal, vendors={})
    rows = published_rows()
    answered = [r for r in rows if answerable(r)]
    skipped = {"refused (beyond the model's context, or a precision the accelerator lacks)": len(rows) - len(answered)}
    fitted = fittable(answered)
    keys = {r: cal.vendor_efficiency(r.engine, get_accelerator(r.gpu)) is not None for r in fitted}
    family_rows = [r for r in fitted if keys[r]]
    out: list[HeldOutRatio] = []
    if family_rows:
        own = held_out(family_rows, engine_only, "source_id")      # published / modelled, its group left out
        alone = np.array([r.value for r in family_rows]) / predict(family_rows, engine_only)
        for row, ratio, other in zip(family_rows, own, alone):
            if np.isfinite(ratio):
                out.append(_ratio(row, "fitted", ratio))
            out.append(_ratio(row, engine_only.reach(row.engine, get_accelerator(row.gpu)), other))
    fit_answered = set(family_rows)
    rest = [r for r in answered if r not in fit_answered]
    for row, value in zip(rest, predict(rest, cal)):
        out.append(_ratio(row, cal.reach(row.engine, get_accelerator(row.gpu)), row.value / value))
    out = [r for r in out if np.isfinite(r.ratio) and r.ratio > 0]
    return out + (gpu_out_ratios(gpu_out) if gpu_out is not None else []), skipped


HEADER = """Held-out residuals by class: measured / modelled of every bundled published row, predicted as the product
answers it by a model that never fitted it (reach: how far that answer extrapolates, finops.sizing.bands; family:
the catalog's silicon family). Written by `python benchmarks/bench_calibration.py --write`
(benchmarks/held_out_families.py) from finops/data/calibration/published_serving.csv and
published_other_accelerators.csv (a family fit's rows twice: held out by source or model under the fit, reach
fitted, and under the engine's constants alone, the family left out) and the AIConfigurator rows held out by
GPU; the product derives the kernels and unmeasured reaches' bands from it when it loads. Add a row by adding the
published figure to those files and rerunning."""


def write(path, ratios) -> None:
    from finops.sizing.bands import write_held_out

    write_held_out(path, sorted(ratios, key=lambda r: (r.reach, r.family, r.engine, r.source, r.metric, r.ratio)),
                   HEADER)
