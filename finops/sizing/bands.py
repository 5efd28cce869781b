"""Error bands by class: how far an estimate extrapolates, and the held-out spread of that class.

An estimate's P10-P90 band is the modelled value times the 10th and 90th percentiles of the ratio
measured / modelled on held-out rows *of its own class*. The class is how far the estimate reaches
beyond what was measured (its :data:`Reach`), then the engine, the model class and the TP degree where
the calibration holds enough held-out rows to say more::

    measured     the engine was measured end to end on this accelerator: the leave-one-model-out
                 residuals of the engine's campaigns (keys ``vllm:dense:tp4``, ``vllm:dense``, ``vllm``)
    fitted       the accelerator's family has efficiencies fitted on its own published rows (a family
                 fit, ``amd-cdna3:vllm``, ``neuron-v2:vllm``): that fit's residuals held out by source, or
                 by model where the family has one source (VendorEfficiency.bands)
    carried      the family's rows were measured under another engine, its shortfall carried to this one
                 (``nvidia-h20:sglang>vllm``): that fit's band enveloping the ``unmeasured`` one
    kernels      measured kernel tables time the steps, but no end-to-end row of the engine on this
                 accelerator was fitted: the rows of accelerators held out of the fit
                 (``kernels:vllm``, ``kernels``)
    unmeasured   nothing of this accelerator family was measured; another family's constants answer:
                 the spread of the leave-one-family-out residuals (``unmeasured:vllm``, ``unmeasured``)

Keys are looked up from the most specific to the least, then through the wider reaches
(:func:`band_keys`), so a calibration file decides how finely its bands are keyed: a new measured
family slots in as a ``fitted`` entry, more rows of a class as a more specific key. A calibration
without the wider reaches' bands (a file written before them) falls back to the engine's own.

The wider reaches' quantiles weigh every held-out family alike (:func:`weighted_quantiles`): a family
with 100 published rows does not drown one with 20, since the next unmeasured accelerator is one
family, not one row.

>>> band_keys("vllm", "dense", 4, "measured")[:3]
('vllm:dense:tp4', 'vllm:dense', 'vllm')
>>> band_keys("vllm", "dense", 1, "unmeasured")
('unmeasured:vllm:dense', 'unmeasured:vllm', 'unmeasured', 'vllm:dense:tp1', 'vllm:dense', 'vllm')
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from ..files import write_atomically
from .vendor_efficiency import BAND_LEVELS

__all__ = ["HELD_OUT_FILE", "MIN_BAND_FAMILIES", "MIN_BAND_ROWS", "REACHES", "HeldOutRatio", "Reach", "band_keys", "bands_by_class",
           "bundled_held_out", "reach_bands", "reach_of", "weighted_quantiles", "write_held_out"]

Reach = Literal["measured", "fitted", "carried", "kernels", "unmeasured"]
#: How far an estimate extrapolates, nearest first (module table).
REACHES: tuple[str, ...] = get_args(Reach)
#: The held-out rows each reach's bands pool: a family whose kernel tables were measured, held out of the
#: end-to-end fit, is one more family the fit never saw; ``unmeasured`` pools them all (leave-one-family-out).
_POOLS: dict[str, tuple[str, ...]] = {"kernels": ("kernels",), "unmeasured": ("kernels", "unmeasured")}
#: Held-out rows a class needs before its own band is kept; fewer, and the next wider key answers.
MIN_BAND_ROWS = 20
#: Held-out families of the reach itself an engine's (or engine and model class's) key of a wider reach needs:
#: with fewer, it would say how wrong the model is on those families (or on the nearer reach's it pools), not
#: on the next one; the reach's own key pools all.
MIN_BAND_FAMILIES = 3


def reach_of(engine_gpus: Iterable[str], gpu: str, family_fit: str | None, kernel_gpus: Iterable[str]) -> str:
    """The :data:`Reach` of an estimate on ``gpu``: ``measured`` where the engine was measured on it
    (``engine_gpus``), ``family_fit`` (``fitted`` or ``carried``) where a family fit answers, ``kernels`` where
    kernel tables cover it, else ``unmeasured``.

    >>> reach_of({"h100-sxm"}, "h100-sxm", None, ()), reach_of((), "mi300x", "fitted", ()), reach_of((), "h20", "carried", ())
    ('measured', 'fitted', 'carried')
    >>> reach_of({"h100-sxm"}, "a100-80gb", None, ("a100-80gb",)), reach_of({"h100-sxm"}, "inferentia2", None, ())
    ('kernels', 'unmeasured')
    """
    if gpu in set(engine_gpus):
        return "measured"
    if family_fit:
        return family_fit
    return "kernels" if gpu in set(kernel_gpus) else "unmeasured"


def _keys_of(reach: str, engine: str, model_class: str | None, tp: int | None) -> list[str]:
    prefix = [] if reach == "measured" else [reach]
    parts = [*prefix, engine, *([model_class] if model_class else [])]
    keys = [":".join([*parts, f"tp{tp}"])] if reach == "measured" and tp and model_class else []
    keys += [":".join(parts[:n]) for n in range(len(parts), len(prefix), -1)]
    return keys + ([reach] if prefix else [])


@cache
def band_keys(engine: str, model_class: str | None, tp: int | None, reach: str = "measured") -> tuple[str, ...]:
    """Band keys an estimate of this class reads, most specific first: its reach's keys, then (beyond the
    measured reach) those of ``unmeasured``, then the engine's measured keys (module docstring). A ``fitted`` or ``carried``
    estimate reads its family fit's band first (:meth:`VendorEfficiency.band`); a metric the fit's rows do
    not report reads these.

    >>> band_keys("trtllm", "moe", 2, "kernels")
    ('kernels:trtllm:moe', 'kernels:trtllm', 'kernels', 'unmeasured:trtllm:moe', 'unmeasured:trtllm', 'unmeasured', 'trtllm:moe:tp2', 'trtllm:moe', 'trtllm')
    """
    if reach not in REACHES:
        raise ValueError(f"unknown reach {reach!r}")
    wider = dict.fromkeys(r for r in (reach, "unmeasured") if r not in ("measured", "fitted", "carried")) if reach != "measured" \
        else {}
    keys = [k for r in wider for k in _keys_of(r, engine, model_class, tp)]
    return tuple(dict.fromkeys([*keys, *_keys_of("measured", engine, model_class, tp)]))


def weighted_quantiles(values: Sequence[float], weights: Sequence[float],
                       levels: Sequence[float] = BAND_LEVELS) -> tuple[float, ...]:
    """Quantiles of ``values`` where each carries ``weights`` (the midpoint rule: a value's cumulative
    weight is counted to the middle of its own; equal weights give numpy's ``hazen`` quantiles).

    >>> weighted_quantiles([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1], (0.5,))
    (2.5,)
    >>> weighted_quantiles([1.0, 2.0, 10.0], [1, 1, 1], (0.5,)), round(weighted_quantiles([1.0, 2.0, 10.0], [1, 1, 4], (0.5,))[0], 6)
    ((2.0,), 6.8)
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    order = np.argsort(v)
    v, w = v[order], w[order]
    position = (np.cumsum(w) - w / 2.0) / w.sum()
    return tuple(float(q) for q in np.interp(levels, position, v))


@dataclass(frozen=True)
class HeldOutRatio:
    """One held-out comparison: measured / modelled ``ratio`` of ``metric`` on a row of ``family``
    (an accelerator, or a vendor fit's key) that the model answering it never fitted, and the class it
    belongs to."""

    reach: str
    engine: str
    model_class: str
    tp: int
    family: str
    source: str
    metric: str
    ratio: float


def bands_by_class(ratios: Iterable[HeldOutRatio], metrics: Sequence[str],
                   reaches: Sequence[str] = ("kernels", "unmeasured")) -> dict[str, dict[str, tuple[float, ...]]]:
    """Band quantiles at :data:`BAND_LEVELS` for every key of ``reaches`` (``unmeasured``,
    ``unmeasured:vllm``, ``unmeasured:vllm:dense``) with at least :data:`MIN_BAND_ROWS` held-out rows of a
    metric (and, below the reach's own key, :data:`MIN_BAND_FAMILIES` families of that reach), each family
    weighing the same (module docstring). A wider reach's key pools the rows of every
    nearer reach it covers (a family held out entirely is what ``unmeasured`` means; a family whose
    kernels were measured is one more such family, held out).

    >>> rows = [HeldOutRatio("unmeasured", "vllm", "dense", 1, f, "s", "tpot_ms", r)
    ...         for f, values in (("a", [1.0] * 30), ("b", [3.0] * 10)) for r in values]
    >>> band = bands_by_class(rows, ["tpot_ms"])["unmeasured"]["tpot_ms"]   # 30 rows of a, 10 of b: weighed alike
    >>> band[1], band[5]    # P10 and P90
    (1.0, 3.0)
    """
    rows = list(ratios)
    out: dict[str, dict[str, tuple[float, ...]]] = {}
    for reach in reaches:
        mine = [r for r in rows if r.reach in _POOLS[reach]]
        keys: dict[str, list[HeldOutRatio]] = {}
        for r in mine:
            for key in (reach, f"{reach}:{r.engine}", f"{reach}:{r.engine}:{r.model_class}"):
                keys.setdefault(key, []).append(r)
        for key, members in sorted(keys.items()):
            for metric in metrics:
                picked = [r for r in members if r.metric == metric and np.isfinite(r.ratio) and r.ratio > 0]
                per_family = _counts(r.family for r in picked)
                own = {r.family for r in picked if r.reach == reach}   # families of this reach itself
                if len(picked) < MIN_BAND_ROWS or (key != reach and len(own) < MIN_BAND_FAMILIES):
                    continue
                weights = [1.0 / per_family[r.family] for r in picked]
                out.setdefault(key, {})[metric] = tuple(round(q, 4) for q in
                                                        weighted_quantiles([r.ratio for r in picked], weights))
    return out


def _counts(items: Iterable[str]) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


#: Held-out residuals of published rows by class, written by ``benchmarks/bench_calibration.py --write``.
HELD_OUT_FILE = "held_out_families.csv.gz"


def bundled_held_out() -> list[HeldOutRatio]:
    """The bundled held-out residuals (``finops/data/calibration/held_out_families.csv.gz``: one row per
    published figure the engines' constants never fitted, predicted as the product answers it)."""
    source = resources.files("finops").joinpath("data", "calibration", HELD_OUT_FILE)
    if not source.is_file():      # not written yet: only the measured reach has bands
        return []
    text = gzip.decompress(source.read_bytes()).decode("utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    return [HeldOutRatio(reach=r["reach"], engine=r["engine"], model_class=r["model_class"], tp=int(r["tp"]),
                         family=r["family"], source=r["source"], metric=r["metric"], ratio=float(r["ratio"]))
            for r in csv.DictReader(lines)]


def write_held_out(path: Path, ratios: Iterable[HeldOutRatio], header: str) -> None:
    """Write ``ratios`` as :func:`bundled_held_out` reads them, after ``header`` (comment lines)."""
    out = io.StringIO()
    out.write("".join(f"# {line}\n" for line in header.splitlines()))
    writer = csv.writer(out, lineterminator="\n")
    names = [f.name for f in fields(HeldOutRatio)]
    writer.writerow(names)
    writer.writerows([getattr(r, n) for n in names] for r in ratios)
    write_atomically(path, gzip.compress(out.getvalue().encode("utf-8"), mtime=0))


@cache
def reach_bands(metrics: tuple[str, ...] = ("ttft_ms", "tpot_ms", "output_tokens_per_s")
                ) -> dict[str, dict[str, tuple[float, ...]]]:
    """The ``kernels`` and ``unmeasured`` bands derived from :func:`bundled_held_out` (:func:`bands_by_class`)."""
    return bands_by_class(bundled_held_out(), metrics)
