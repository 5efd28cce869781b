"""Per-family efficiencies: how much of its datasheet bandwidth and FLOPS an engine reaches on an
accelerator outside the measured kernel tables and the calibration rows.

The roofline times a decode step by bytes / (bandwidth x ``eta_bw``) and a prefill by FLOPs /
(FLOPS x ``eta_c``) (:mod:`finops.sizing.performance`); the engine's ``eta_bw`` and ``eta_c`` are fitted
on NVIDIA H100/H200/B200 rows. A :class:`VendorEfficiency` replaces those two for one vendor and engine
(``amd-cdna3:vllm``, ``neuron-v2:vllm``: the catalog's silicon ``family``) where the engine was never measured on
the accelerator, fitted on published results (``finops/data/calibration/published_*.csv``,
:mod:`finops.sizing.published`), and
carries the held-out ratios measured / modelled of its rows as the band of such estimates. Such an
estimate stays ``calibrated: false``: a few vendor-published rows are not a measurement of the user's
configuration.

A fit speaks for every catalog accelerator of its silicon family (of its vendor where the fit names no
family) that no kernel table covers (:attr:`VendorEfficiency.gpus`, derived from the catalog when asked, so a
new catalog row of that family is covered without touching the calibration file). An accelerator that neither
the engine's calibration rows nor a family fit measured is timed with the engine's constants and labelled
:data:`NO_EFFICIENCY` (``none``): no measurement answers for it.

Under an engine its rows did not measure, a family's fit is carried (:meth:`VendorEfficiency.carried_to`):
the share of the datasheet a chip's memory system and kernels reach is taken as the chip's, so the family's
shortfall against the engine it was measured under scales the other engine's constants
(``nvidia-h20:sglang>vllm``), with a band that envelops the unmeasured one.

>>> v = VendorEfficiency.from_dict({"vendor": "amd", "family": "amd-cdna3", "engine": "vllm",
...     "bandwidth_efficiency": 0.5, "compute_efficiency": 0.4, "rows": 3, "source": "s", "bands": {}})
>>> v.key, v.gpus
('amd-cdna3:vllm', ('mi300x', 'mi325x'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..catalog import accelerators
from ..errors import InputError
from .kernels import kernel_gpus

__all__ = ["BAND_LEVELS", "EFFICIENCY_RANGE", "ENGINE_EFFICIENCY", "MIN_BAND_SOURCES", "NO_EFFICIENCY", "VendorEfficiency", "efficiency_source", "family_gpus",
           "ratio_at", "vendor_gpus"]

#: Quantile levels of the held-out ratio measured / modelled that a calibration keeps per engine and
#: metric (``Calibration.bands``) and a vendor fit per metric (``VendorEfficiency.bands``); an
#: estimate's band is its P10 and P90.
BAND_LEVELS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


#: The physical range of a fitted or carried efficiency, a share of the datasheet rate: above 1 a chip would
#: beat its datasheet; below 0.05 no serving engine runs (the family fits' bounds, :mod:`finops.sizing.published`).
EFFICIENCY_RANGE: tuple[float, float] = (0.05, 1.0)


#: Publications a family fit's band on a metric must pool before it stands alone. Held-out rows of one source
#: share its setup (engine build, client, how latencies were read), so they say how a fit errs on that source,
#: not on the next: AMD's TPOT band from two agreeing sources (2-3 % error) held none of a third's rows, 9 % off.
#: With fewer, the band envelops the unmeasured reach's (:meth:`Calibration.band`): fitted, but not yet shown
#: to carry across publications.
MIN_BAND_SOURCES = 3


def ratio_at(quantiles: Sequence[float], level: float) -> float:
    """The held-out ratio measured / modelled at quantile ``level`` of a band kept at :data:`BAND_LEVELS`:
    linear between two levels, clamped to the outer ones.

    >>> band = (0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4)
    >>> round(ratio_at(band, 0.1), 6), round(ratio_at(band, 0.3), 6), ratio_at(band, 0.99)
    (0.8, 0.92, 1.4)
    """
    return float(np.interp(level, BAND_LEVELS, quantiles))


#: The efficiency source of an estimate whose ``eta_bw`` and ``eta_c`` are the engine's own (fitted on the calibration rows).
ENGINE_EFFICIENCY = "engine"
#: The efficiency source of an estimate no measurement answers for: an accelerator of a vendor neither the
#: engine's calibration rows nor a vendor fit measured (the engine's constants time it, unchecked).
NO_EFFICIENCY = "none"


def vendor_gpus(vendor: str, family: str = "") -> tuple[str, ...]:
    """The catalog accelerators of ``vendor`` (and of silicon ``family`` where one is named) that no measured
    kernel table covers: those a family fit speaks for (read from the catalog each time: a new row is covered
    at once). A family belongs to one vendor: a row of another vendor that copies the family name is not
    covered by its measurements.

    >>> vendor_gpus("amd"), vendor_gpus("aws", "neuron-v2")
    (('mi300x', 'mi325x'), ('inferentia2', 'trainium1'))
    """
    tables = set(kernel_gpus())
    return tuple(a.id for a in accelerators().values()
                 if a.vendor == vendor and (not family or a.family == family) and a.id not in tables)


def family_gpus(family: str) -> tuple[str, ...]:
    """The catalog accelerators of silicon ``family`` that no measured kernel table covers: those a family
    fit speaks for (:func:`vendor_gpus` of the family's vendor).

    >>> family_gpus("neuron-v2"), family_gpus("amd-cdna3")
    (('inferentia2', 'trainium1'), ('mi300x', 'mi325x'))
    """
    vendors = sorted({a.vendor for a in accelerators().values() if a.family == family})
    return tuple(g for vendor in vendors for g in vendor_gpus(vendor, family))


@dataclass(frozen=True)
class VendorEfficiency:
    """``eta_bw`` and ``eta_c`` of ``engine`` on the accelerators ``gpus`` of one silicon ``family`` (catalog
    ``family``; ``vendor`` where none is named), fitted on ``rows`` published rows measured on the accelerators
    ``measured_on`` by the publications ``sources``; ``reach``: the span of the rows (``tp``, ``params_b``
    active parameters in billions, ``batch``), inside which an estimate interpolates; ``bands[metric]``:
    held-out ratio measured / modelled at the calibration's band levels; ``held_out_error[metric]``: their
    median absolute relative error; ``band_sources[metric]``: how many publications those held-out rows come
    from (:data:`MIN_BAND_SOURCES`). ``prefill_pass_ms``: the fixed cost of one prefill pass on the family's
    runtime, beyond its FLOPs and collectives (:mod:`finops.sizing.performance`), fitted where the rows report
    TTFT (0 elsewhere). ``measured_engine``: the engine the rows were measured under where it is not
    ``engine`` (a fit carried to ``engine``, :meth:`carried_to`; empty for a fit of its own)."""

    vendor: str
    engine: str
    bandwidth_efficiency: float
    compute_efficiency: float
    rows: int
    source: str
    bands: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    held_out_error: Mapping[str, float] = field(default_factory=dict)
    family: str = ""
    measured_on: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    reach: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    prefill_pass_ms: float = 0.0
    band_sources: Mapping[str, int] = field(default_factory=dict)
    measured_engine: str = ""

    @property
    def key(self) -> str:
        """``family:engine``, or ``family:measured>engine`` for a carried fit."""
        measured = f"{self.measured_engine}>" if self.measured_engine else ""
        return f"{self.family or self.vendor}:{measured}{self.engine}"

    def carried_to(self, engine: str, engine_efficiency: tuple[float, float],
                   measured_efficiency: tuple[float, float]) -> VendorEfficiency:
        """This fit under ``engine``, whose rows never measured the family: each efficiency is ``engine``'s
        (``engine_efficiency``: its ``eta_bw``, ``eta_c``) times the family's shortfall against the engine its
        rows were measured under (``measured_efficiency``), clipped to :data:`EFFICIENCY_RANGE`::

            eta_x(family, E) = eta_x(E) * eta_x(family, M) / eta_x(M)

        The shortfall is taken as the chip's (how much of its datasheet bandwidth and FLOPS its memory system
        and kernels reach), the engine's own reach as the engine's; the fixed prefill pass is the family
        runtime's and carries as is. Its bands are the family's held-out ones, which never stand alone
        (:meth:`stands_alone`): the estimate envelops the unmeasured band of ``engine``
        (:meth:`Calibration.band`), since the family's residuals were all measured under the other engine and
        say nothing of how far the split into chip and engine holds, and the engine's unmeasured spread is
        what the same estimate would carry without the family's rows. Little held out checks the carry
        (``benchmarks/bench_engine_carry.py``): on H100, H200 and B200 the per-GPU shortfalls of TRT-LLM, vLLM
        and SGLang do not track each other; on the A10G, NIM's TensorRT-LLM rows (never fitted) read the
        carried vLLM shortfall as well as TensorRT-LLM's constants on TPOT and better on TTFT.

        >>> h20 = VendorEfficiency("nvidia", "sglang", 0.42, 0.59, 60, "s", family="nvidia-h20",
        ...                        bands={"tpot_ms": (0.8,) * 7}, band_sources={"tpot_ms": 3})
        >>> vllm = h20.carried_to("vllm", (0.92, 0.69), (0.98, 0.83))
        >>> vllm.key, round(vllm.bandwidth_efficiency, 4), round(vllm.compute_efficiency, 4), vllm.stands_alone("tpot_ms")
        ('nvidia-h20:sglang>vllm', 0.3943, 0.4905, False)
        >>> h20.carried_to("trtllm", (0.97, 0.70), (0.30, 0.40)).bandwidth_efficiency   # clipped to the datasheet
        1.0
        """
        low, high = EFFICIENCY_RANGE
        bw, eta_c = (min(max(target * own / measured, low), high) for own, target, measured in
                     zip((self.bandwidth_efficiency, self.compute_efficiency), engine_efficiency, measured_efficiency))
        return replace(self, engine=engine, measured_engine=self.measured_engine or self.engine,
                       bandwidth_efficiency=bw, compute_efficiency=eta_c, held_out_error={})

    def inside(self, tp: int, params_b: float, batch: float) -> bool:
        """True when a configuration lies within the span of the rows this fit was made on (TP, active
        parameters, running batch); an entry without a recorded span vouches for nothing."""
        if not self.reach:
            return False
        values = {"tp": tp, "params_b": params_b, "batch": batch}
        return all(low <= values[name] <= high for name, (low, high) in self.reach.items() if name in values)

    @property
    def gpus(self) -> tuple[str, ...]:
        """The accelerators the fit speaks for: :func:`vendor_gpus` of its vendor and family."""
        return vendor_gpus(self.vendor, self.family)

    def stands_alone(self, metric: str) -> bool:
        """True when the band of ``metric`` pools held-out rows of at least :data:`MIN_BAND_SOURCES`
        publications (an entry that does not record them counts its fit's sources); never for a carried fit.

        >>> VendorEfficiency("amd", "vllm", 0.5, 0.4, 3, "s", sources=("a", "b", "c"),
        ...                  band_sources={"tpot_ms": 2}).stands_alone("tpot_ms")
        False
        """
        return not self.measured_engine and self.band_sources.get(metric, len(self.sources)) >= MIN_BAND_SOURCES

    def band(self, metric: str, level: float) -> float | None:
        """The held-out ratio measured / modelled of ``metric`` on the vendor's published rows at quantile
        ``level`` (:func:`ratio_at`); ``None`` where its rows do not report the metric.

        >>> v = VendorEfficiency("amd", "vllm", 0.5, 0.4, 3, "s",
        ...                      bands={"tpot_ms": (0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4)})
        >>> v.band("tpot_ms", 0.9), v.band("ttft_ms", 0.9)
        (1.25, None)
        """
        quantiles = self.bands.get(metric)
        return None if quantiles is None else ratio_at(quantiles, level)

    def to_dict(self) -> dict[str, Any]:
        return {"vendor": self.vendor, "engine": self.engine,
                "bandwidth_efficiency": self.bandwidth_efficiency, "compute_efficiency": self.compute_efficiency,
                "rows": self.rows, "source": self.source,
                "bands": {m: list(q) for m, q in sorted(self.bands.items())},
                "held_out_error": dict(sorted(self.held_out_error.items())),
                "family": self.family, "measured_on": list(self.measured_on), "sources": list(self.sources),
                "reach": {name: list(span) for name, span in sorted(self.reach.items())},
                "prefill_pass_ms": self.prefill_pass_ms, "band_sources": dict(sorted(self.band_sources.items()))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VendorEfficiency:
        try:
            out = cls(vendor=str(data["vendor"]), engine=str(data["engine"]),
                      bandwidth_efficiency=float(data["bandwidth_efficiency"]),
                      compute_efficiency=float(data["compute_efficiency"]), rows=int(data["rows"]),
                      source=str(data["source"]),
                      bands={str(m): tuple(float(x) for x in q) for m, q in (data.get("bands") or {}).items()},
                      held_out_error={str(m): float(x) for m, x in (data.get("held_out_error") or {}).items()},
                      family=str(data.get("family") or ""),
                      measured_on=tuple(str(g) for g in data.get("measured_on") or ()),
                      sources=tuple(str(s) for s in data.get("sources") or ()),
                      reach={str(n): (float(v[0]), float(v[1])) for n, v in (data.get("reach") or {}).items()},
                      prefill_pass_ms=float(data.get("prefill_pass_ms") or 0.0),
                      band_sources={str(m): int(n) for m, n in (data.get("band_sources") or {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"a calibration 'vendors' entry is incomplete or not numbers ({exc})",
                             hint="each needs vendor, engine, bandwidth_efficiency, compute_efficiency, "
                                  "rows, source") from None
        if not 0.0 <= out.prefill_pass_ms < 1000.0:
            raise InputError(f"prefill_pass_ms of {out.key} must be in [0, 1000), got {out.prefill_pass_ms}")
        if not (0.0 < out.bandwidth_efficiency <= 1.0 and 0.0 < out.compute_efficiency <= 1.0):
            raise InputError(f"vendor efficiencies of {out.key} must be in (0, 1], got "
                             f"{out.bandwidth_efficiency} and {out.compute_efficiency}")
        return out


def efficiency_source(vendor: VendorEfficiency | None, engine_measured_vendor: bool = True) -> str:
    """Whose ``eta_bw`` and ``eta_c`` an estimate uses: the family fit's key (``amd-cdna3:vllm``, or
    ``nvidia-h20:sglang>vllm`` carried to another engine) on its accelerators, else :data:`ENGINE_EFFICIENCY`
    where the engine's calibration measured an accelerator of this one's vendor (or records no measurement at
    all: constants given by hand), else :data:`NO_EFFICIENCY`.

    >>> amd = VendorEfficiency("amd", "vllm", 0.5, 0.7, 3, "s", family="amd-cdna3")
    >>> efficiency_source(None), efficiency_source(amd), efficiency_source(None, engine_measured_vendor=False)
    ('engine', 'amd-cdna3:vllm', 'none')
    """
    if vendor is not None:
        return vendor.key
    return ENGINE_EFFICIENCY if engine_measured_vendor else NO_EFFICIENCY
