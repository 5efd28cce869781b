"""Per-vendor efficiencies: how much of its datasheet bandwidth and FLOPS an engine reaches on an
accelerator outside the measured kernel tables and the calibration rows (issue 11, point 5).

The roofline times a decode step by bytes / (bandwidth x ``eta_bw``) and a prefill by FLOPs /
(FLOPS x ``eta_c``) (:mod:`finops.sizing.performance`); the engine's ``eta_bw`` and ``eta_c`` are fitted
on NVIDIA H100/H200/B200 rows. A :class:`VendorEfficiency` replaces those two for one vendor and engine
(``amd:vllm``) where the engine was never measured on the accelerator, fitted on published results
(``finops/data/calibration/published_other_accelerators.csv``, :mod:`finops.sizing.published`), and
carries the held-out ratios measured / modelled of its rows as the band of such estimates. Such an
estimate stays ``calibrated: false``: a few vendor-published rows are not a measurement of the user's
configuration.

>>> v = VendorEfficiency.from_dict({"vendor": "amd", "engine": "vllm", "gpus": ["mi300x"],
...     "bandwidth_efficiency": 0.5, "compute_efficiency": 0.4, "rows": 3, "source": "s", "bands": {}})
>>> v.key, v.to_dict()["gpus"]
('amd:vllm', ['mi300x'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

__all__ = ["VendorEfficiency"]


@dataclass(frozen=True)
class VendorEfficiency:
    """``eta_bw`` and ``eta_c`` of ``engine`` on ``vendor``'s accelerators ``gpus``, fitted on ``rows``
    published rows; ``bands[metric]``: held-out ratio measured / modelled at the calibration's band
    levels; ``held_out_error[metric]``: their median absolute relative error."""

    vendor: str
    engine: str
    gpus: tuple[str, ...]
    bandwidth_efficiency: float
    compute_efficiency: float
    rows: int
    source: str
    bands: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    held_out_error: Mapping[str, float] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.vendor}:{self.engine}"

    def to_dict(self) -> dict[str, Any]:
        return {"vendor": self.vendor, "engine": self.engine, "gpus": list(self.gpus),
                "bandwidth_efficiency": self.bandwidth_efficiency, "compute_efficiency": self.compute_efficiency,
                "rows": self.rows, "source": self.source,
                "bands": {m: list(q) for m, q in sorted(self.bands.items())},
                "held_out_error": dict(sorted(self.held_out_error.items()))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VendorEfficiency:
        try:
            out = cls(vendor=str(data["vendor"]), engine=str(data["engine"]), gpus=tuple(str(g) for g in data["gpus"]),
                      bandwidth_efficiency=float(data["bandwidth_efficiency"]),
                      compute_efficiency=float(data["compute_efficiency"]), rows=int(data["rows"]),
                      source=str(data["source"]),
                      bands={str(m): tuple(float(x) for x in q) for m, q in (data.get("bands") or {}).items()},
                      held_out_error={str(m): float(x) for m, x in (data.get("held_out_error") or {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"a calibration 'vendors' entry is incomplete or not numbers ({exc})",
                             hint="each needs vendor, engine, gpus, bandwidth_efficiency, compute_efficiency, "
                                  "rows, source") from None
        if not (0.0 < out.bandwidth_efficiency <= 1.0 and 0.0 < out.compute_efficiency <= 1.0):
            raise InputError(f"vendor efficiencies of {out.key} must be in (0, 1], got "
                             f"{out.bandwidth_efficiency} and {out.compute_efficiency}")
        return out
