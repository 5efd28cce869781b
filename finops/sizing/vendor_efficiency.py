"""Per-vendor efficiencies: how much of its datasheet bandwidth and FLOPS an engine reaches on an
accelerator outside the measured kernel tables and the calibration rows.

The roofline times a decode step by bytes / (bandwidth x ``eta_bw``) and a prefill by FLOPs /
(FLOPS x ``eta_c``) (:mod:`finops.sizing.performance`); the engine's ``eta_bw`` and ``eta_c`` are fitted
on NVIDIA H100/H200/B200 rows. A :class:`VendorEfficiency` replaces those two for one vendor and engine
(``amd:vllm``) where the engine was never measured on the accelerator, fitted on published results
(``finops/data/calibration/published_other_accelerators.csv``, :mod:`finops.sizing.published`), and
carries the held-out ratios measured / modelled of its rows as the band of such estimates. Such an
estimate stays ``calibrated: false``: a few vendor-published rows are not a measurement of the user's
configuration.

A fit speaks for every catalog accelerator of its vendor that no kernel table covers
(:func:`vendor_gpus`, derived from the catalog when asked, so a new catalog row of that vendor is
covered without touching the calibration file). An accelerator whose vendor neither the engine's
calibration rows nor a vendor fit measured is timed with the engine's constants and labelled
:data:`NO_EFFICIENCY` (``none``): no measurement answers for it.

>>> v = VendorEfficiency.from_dict({"vendor": "amd", "engine": "vllm",
...     "bandwidth_efficiency": 0.5, "compute_efficiency": 0.4, "rows": 3, "source": "s", "bands": {}})
>>> v.key, v.gpus
('amd:vllm', ('mi300x', 'mi325x'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..catalog import accelerators
from ..errors import InputError
from .kernels import kernel_gpus

__all__ = ["BAND_LEVELS", "ENGINE_EFFICIENCY", "NO_EFFICIENCY", "VendorEfficiency", "efficiency_source", "ratio_at",
           "vendor_gpus"]

#: Quantile levels of the held-out ratio measured / modelled that a calibration keeps per engine and
#: metric (``Calibration.bands``) and a vendor fit per metric (``VendorEfficiency.bands``); an
#: estimate's band is its P10 and P90.
BAND_LEVELS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


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


def vendor_gpus(vendor: str) -> tuple[str, ...]:
    """The catalog accelerators of ``vendor`` that no measured kernel table covers: those a vendor fit
    speaks for (read from the catalog each time: a new row is covered at once).

    >>> vendor_gpus("amd")
    ('mi300x', 'mi325x')
    """
    tables = set(kernel_gpus())
    return tuple(a.id for a in accelerators().values() if a.vendor == vendor and a.id not in tables)


@dataclass(frozen=True)
class VendorEfficiency:
    """``eta_bw`` and ``eta_c`` of ``engine`` on ``vendor``'s accelerators (:attr:`gpus`), fitted on ``rows``
    published rows; ``bands[metric]``: held-out ratio measured / modelled at the calibration's band
    levels; ``held_out_error[metric]``: their median absolute relative error."""

    vendor: str
    engine: str
    bandwidth_efficiency: float
    compute_efficiency: float
    rows: int
    source: str
    bands: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    held_out_error: Mapping[str, float] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.vendor}:{self.engine}"

    @property
    def gpus(self) -> tuple[str, ...]:
        """The accelerators the fit speaks for: :func:`vendor_gpus` of its vendor."""
        return vendor_gpus(self.vendor)

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
                "held_out_error": dict(sorted(self.held_out_error.items()))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VendorEfficiency:
        try:
            out = cls(vendor=str(data["vendor"]), engine=str(data["engine"]),
                      bandwidth_efficiency=float(data["bandwidth_efficiency"]),
                      compute_efficiency=float(data["compute_efficiency"]), rows=int(data["rows"]),
                      source=str(data["source"]),
                      bands={str(m): tuple(float(x) for x in q) for m, q in (data.get("bands") or {}).items()},
                      held_out_error={str(m): float(x) for m, x in (data.get("held_out_error") or {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"a calibration 'vendors' entry is incomplete or not numbers ({exc})",
                             hint="each needs vendor, engine, bandwidth_efficiency, compute_efficiency, "
                                  "rows, source") from None
        if not (0.0 < out.bandwidth_efficiency <= 1.0 and 0.0 < out.compute_efficiency <= 1.0):
            raise InputError(f"vendor efficiencies of {out.key} must be in (0, 1], got "
                             f"{out.bandwidth_efficiency} and {out.compute_efficiency}")
        return out


def efficiency_source(vendor: VendorEfficiency | None, engine_measured_vendor: bool = True) -> str:
    """Whose ``eta_bw`` and ``eta_c`` an estimate uses: the vendor fit's key (``amd:vllm``) on its
    accelerators, else :data:`ENGINE_EFFICIENCY` where the engine's calibration measured an accelerator of
    this one's vendor (or records no measurement at all: constants given by hand), else :data:`NO_EFFICIENCY`.

    >>> amd = VendorEfficiency("amd", "vllm", 0.5, 0.7, 3, "s")
    >>> efficiency_source(None), efficiency_source(amd), efficiency_source(None, engine_measured_vendor=False)
    ('engine', 'amd:vllm', 'none')
    """
    if vendor is not None:
        return vendor.key
    return ENGINE_EFFICIENCY if engine_measured_vendor else NO_EFFICIENCY
