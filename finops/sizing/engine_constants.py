"""The performance model's fitted constants: one :class:`EngineConstants` per serving engine, and the
:class:`Calibration` that carries them with their source and date, the configurations each engine was
measured on (which decide ``calibrated``), the held-out error bands and the per-vendor efficiencies.

The formulas that use them are in :mod:`finops.sizing.performance`; the fit that makes them in
:mod:`finops.sizing.calibration`. The bundled calibration is ``finops/catalog/data/calibration.json``
(``python benchmarks/bench_calibration.py --write`` regenerates it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from ..catalog import Accelerator, ModelSpec, accelerators
from ..errors import InputError, Location
from ..files import write_atomically
from ..limits import json_document
from ..registry import Registry
from .bands import band_keys, reach_bands, reach_of
from .vendor_efficiency import BAND_LEVELS, VendorEfficiency, efficiency_source, ratio_at

__all__ = ["BAND_METRICS", "CALIBRATED_TPS", "DEFAULT_ENGINE", "ENGINES", "KERNEL_CLASSES", "SIZE_REACH", "Calibration",
           "Coverage", "Engine", "EngineConstants", "model_class"]

#: The reach whose band a wider reach's envelops (Calibration.band): an extrapolation is never surer than the
#: nearer reach it extends; a family fit's own band (``fitted``) is its rows' and stands alone where they come
#: from enough publications (VendorEfficiency.stands_alone), else it envelops the unmeasured reach's.
_NEARER_REACH: dict[str, str] = {"kernels": "measured", "unmeasured": "kernels"}

Engine = Literal["trtllm", "vllm", "sglang"]
ENGINES: tuple[str, ...] = get_args(Engine)
#: The engine an estimate is for unless told (a module constant: engine names ignore case).
DEFAULT_ENGINE = "vllm"
#: The TP degrees the per-step overhead is calibrated at; other degrees interpolate (and clamp) in log2.
CALIBRATED_TPS: tuple[int, ...] = (1, 2, 4, 8)
#: Metrics a band is kept for: the names of the Estimate fields they scale.
BAND_METRICS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "output_tokens_per_s")


def model_class(model: ModelSpec) -> str:
    """``mla`` (multi-head latent attention, DeepSeek-V2/V3), ``moe`` (routed experts) or ``dense``: the
    classes whose kernels differ enough that a fit on one does not vouch for another.

    >>> from finops.catalog import get_model
    >>> [model_class(get_model(m)) for m in ("llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3")]
    ['dense', 'moe', 'mla']
    """
    if model.attention == "mla":
        return "mla"
    return "moe" if model.is_moe else "dense"


@dataclass(frozen=True)
class EngineConstants:
    """The fitted constants of one serving engine (fields may also hold numpy arrays when fitting)."""

    bandwidth_efficiency: float          # eta_bw: share of peak HBM bandwidth a decode step reaches
    compute_efficiency: float            # eta_c: share of dense peak FLOPS prefill reaches
    step_overhead_us_per_layer: tuple[float, float, float, float]  # o(tp) at TP 1, 2, 4, 8 (kernels: per step)
    allreduce_gbps: float                # effective all-reduce bandwidth per GPU
    prefill_queue: float                 # q: scales the closed-loop wait behind the other clients' prompts
    ttft_steps: float                    # a: decode steps a new request waits to be scheduled
    ttft_fixed_ms: float                 # f: per-request latency outside the GPU (HTTP, tokenizer, scheduler)
    prefill_burst: float                 # s: share of the other b - 1 prompts a synchronized client lands behind
    link_efficiency: float               # eta_link: share of the GPU link bandwidth a prefill all-reduce reaches
    admission_steps: float = 0.0         # d: decode steps a prompt that finds others running waits for admission
    # Step times from measured kernels (finops.sizing.kernels), where the tables cover a configuration:
    kernel_steps: float = 0.0            # 1: they time this engine's steps there (0: the roofline everywhere)
    kernel_steps_moe: float = 0.0        # ... the same for mixture-of-experts models (chosen apart: KERNEL_CLASSES)
    kernel_decode_credit_us: float = 0.0  # per layer: the time an engine's decode step saves against the tables,
                                          # which time each kernel alone (launch, ramp and tail included)
    kernel_prefill_scale: float = 1.0    # the engine's prefill speed relative to the kernel tables
    kernel_step_overhead_us: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # per step at TP 1-8
    moe_overhead_us_per_layer: float = 0.0  # o_moe: what a layer of routed experts adds to a step (routing, dispatch)
    # Share of the other clients' prompts a decoding client's steps carry: 1 under continuous batching, 0 in a
    # static batch (every prompt prefilled before any decodes; performance.CLIENTS["static"]). Not fitted.
    decode_interference: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineConstants:
        """Constants from JSON; the kernel fields are optional (a file written before them has none)."""
        per_tp = _PER_TP_FIELDS
        try:
            values = {f.name: (tuple(float(v) for v in data[f.name]) if f.name in per_tp else float(data[f.name]))
                      for f in fields(cls) if f.name in data or f.default is MISSING}
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"calibration constants are incomplete or not numbers ({exc})",
                             hint=f"each engine needs {', '.join(f.name for f in fields(cls))}") from None
        if any(len(values[name]) != len(CALIBRATED_TPS) for name in per_tp if name in values):
            raise InputError("each per-TP overhead needs one value per TP 1, 2, 4, 8")
        return cls(**values)  # type: ignore[arg-type]


#: Model class -> the EngineConstants switch saying whether measured kernels time its steps. The choice is
#: per class because the held-out errors differ by class (vLLM: the roofline is better for dense models, the
#: measured expert kernels for mixture-of-experts ones; docs/performance.md, "Mixture-of-experts kernels").
#: MLA models have no composition in the kernel tables: the roofline times them.
KERNEL_CLASSES: dict[str, str] = {"dense": "kernel_steps", "moe": "kernel_steps_moe"}
#: The EngineConstants fields that hold one value per TP 1, 2, 4, 8.
_PER_TP_FIELDS = frozenset({"step_overhead_us_per_layer", "kernel_step_overhead_us"})
#: Calibration files are UTF-8 JSON (a module constant: codec names ignore case).
_FILE_ENCODING = "utf-8"
#: One measured configuration: (GPU id, weight precision, model class, TP) -> the smallest and largest
#: model measured there, in billions of active parameters.
Coverage = tuple[str, str, str, int]
#: How far outside the measured model sizes a fit still vouches: half the smallest to twice the largest.
SIZE_REACH = 2.0


@cache
def _family_members(family: str) -> frozenset[str]:
    """The catalog accelerators of one silicon family."""
    from ..catalog import accelerators

    return frozenset(a.id for a in accelerators().values() if a.family == family)


@dataclass(frozen=True)
class Calibration:
    """Constants per engine, where they came from, and how well they predict held-out measurements.

    ``held_out_*_error``: median absolute relative error of fits that never saw the row's model
    (leave-one-model-out). ``bands[key][metric]``: that held-out ratio measured / modelled at each of
    :data:`BAND_LEVELS`, ``key`` an engine (all its rows) or ``engine:class`` (the rows of one model
    class). ``measured[engine]``: the configurations the constants were fitted on.
    """

    engines: Mapping[str, EngineConstants]
    source: str
    as_of: str
    rows: int = 0
    held_out_tpot_error: float | None = None
    held_out_ttft_error: float | None = None
    held_out_throughput_error: float | None = None
    measured: Mapping[str, Mapping[Coverage, tuple[float, float]]] = field(default_factory=dict)
    bands: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)
    vendors: Mapping[str, VendorEfficiency] = field(default_factory=dict)

    def constants(self, engine: str) -> EngineConstants:
        """The constants of ``engine``; an unknown name lists the calibrated ones."""
        return Registry("engine", dict(self.engines))[engine]

    def covers(self, engine: str, gpu: str, precision: str, model_class: str, tp: int, active_params_b: float) -> bool:
        """True when ``engine`` was measured on this GPU, precision, model class and TP together, on
        models of a size within :data:`SIZE_REACH` of this one's (active parameters); anything else
        extrapolates constants fitted elsewhere (``calibrated: false``).

        >>> cal = Calibration.bundled()
        >>> cal.covers("vllm", "h200", "fp8", "dense", 4, 70.6), cal.covers("vllm", "h200", "fp8", "moe", 4, 3.3)
        (True, False)
        >>> cal.covers("trtllm", "h200", "fp8", "dense", 8, 405.9), cal.covers("vllm", "mi300x", "fp8", "dense", 1, 8)
        (False, False)
        """
        sizes = self.measured.get(engine, {}).get((gpu, precision, model_class, int(tp)))
        return sizes is not None and sizes[0] / SIZE_REACH <= active_params_b <= sizes[1] * SIZE_REACH

    def vendor_efficiency(self, engine: str, gpu: Accelerator) -> VendorEfficiency | None:
        """The efficiencies fitted on published rows of ``gpu``'s vendor under ``engine``
        (``vendors["amd-cdna3:vllm"]``), where they speak for this accelerator and the engine was measured on
        no row of it (a refit on the user's own rows of it answers there instead); else ``None``.

        >>> from finops.catalog import get_accelerator
        >>> cal = Calibration.bundled()
        >>> cal.vendor_efficiency("vllm", get_accelerator("mi300x")).key, cal.vendor_efficiency("vllm", get_accelerator("h100-sxm"))
        ('amd-cdna3:vllm', None)
        """
        entry = self.family_efficiency(engine, gpu)
        if entry is None:
            return None
        return None if any(key[0] == gpu.id for key in self.measured.get(engine, {})) else entry

    def measured_vendors(self, engine: str) -> frozenset[str]:
        """The vendors of the catalog accelerators ``engine`` was measured on (derived from ``measured``).

        >>> sorted(Calibration.bundled().measured_vendors("vllm"))
        ['nvidia']
        """
        known = accelerators()
        return frozenset(known[key[0]].vendor for key in self.measured.get(engine, {}) if key[0] in known)

    def efficiency_source(self, engine: str, gpu: Accelerator) -> str:
        """Whose measurements give ``engine``'s ``eta_bw`` and ``eta_c`` on ``gpu``: a family fit's key
        (``amd-cdna3:vllm``; ``amd-cdna3:vllm>sglang`` carried to another engine), ``engine`` (the calibration
        rows measured an accelerator of ``gpu``'s vendor, or the calibration records none: constants given by
        hand), or ``none`` (no measurement answers: an accelerator of a vendor nothing measured under this engine).

        >>> from finops.catalog import get_accelerator
        >>> cal = Calibration.bundled()
        >>> [cal.efficiency_source(e, get_accelerator(g)) for e, g in
        ...  (("vllm", "h100-sxm"), ("vllm", "mi300x"), ("sglang", "mi300x"), ("vllm", "tpu-v5e"))]
        ['engine', 'amd-cdna3:vllm', 'amd-cdna3:vllm>sglang', 'none']
        """
        vendors = self.measured_vendors(engine)
        return efficiency_source(self.vendor_efficiency(engine, gpu), not vendors or gpu.vendor in vendors)

    def family_efficiency(self, engine: str, gpu: Accelerator) -> VendorEfficiency | None:
        """The published-row fit of ``gpu``'s silicon family under ``engine`` (``vendors["neuron-v2:vllm"]``),
        or of its vendor (``vendors["<vendor>:vllm"]``, as older files key it), where it speaks for ``gpu``;
        without one, the family's fit under another engine the calibration holds, carried to ``engine``
        (:meth:`VendorEfficiency.carried_to`; of several, the one fitted on the most rows).

        >>> from finops.catalog import get_accelerator
        >>> cal = Calibration.bundled()
        >>> [cal.family_efficiency(e, get_accelerator("h20")).key for e in ("sglang", "vllm", "trtllm")]
        ['nvidia-h20:sglang', 'nvidia-h20:sglang>vllm', 'nvidia-h20:sglang>trtllm']
        """
        for key in (f"{gpu.family}:{engine}", f"{gpu.vendor}:{engine}"):
            entry = self.vendors.get(key)
            if entry is not None and gpu.id in entry.gpus:
                return entry
        if engine not in self.engines:
            return None
        others = [v for v in self.vendors.values()    # the family (or vendor) first: ``gpus`` reads the catalog
                  if v.engine != engine and v.engine in self.engines and (v.family or v.vendor) in (gpu.family, gpu.vendor)
                  and gpu.id in v.gpus]
        if not others:
            return None
        measured = max(others, key=lambda v: (v.rows, v.key))
        target, source = self.engines[engine], self.engines[measured.engine]
        return measured.carried_to(engine, (target.bandwidth_efficiency, target.compute_efficiency),
                                   (source.bandwidth_efficiency, source.compute_efficiency))

    def evidence(self, engine: str, gpu: Accelerator, *, precision: str, model_class: str, tp: int,
                 active_params_b: float, batch: float, vendor: VendorEfficiency | None,
                 kernels: bool) -> dict[str, Any]:
        """Which measurements answer an estimate, machine-readable: ``efficiency_source`` (:meth:`efficiency_source`),
        ``extrapolation`` (:meth:`reach`: how far it reaches, which picks its band's class), ``family`` (the accelerator's silicon family), ``sources`` (the publications or
        campaigns the efficiencies were fitted on), ``measured_accelerator`` (some fitted row or kernel table
        was measured on this very accelerator), ``family_measured`` (some was measured on its family;
        ``False``: the efficiencies are another family's, an extrapolation with nothing of its own behind it),
        ``measured_engine`` (the engine the family's measurements were taken under: ``engine`` itself, another
        for a carried fit, ``None`` where no row or kernel table of the family under ``engine`` answers),
        ``inside_measured_range`` (the configuration lies within what was measured: the calibration's
        coverage, or the span of the family fit's rows).

        >>> from finops.catalog import get_accelerator
        >>> cal = Calibration.bundled()
        >>> e = cal.evidence("vllm", get_accelerator("tpu-v5e"), precision="bf16", model_class="dense", tp=4,
        ...                  active_params_b=8.0, batch=16, vendor=None, kernels=False)
        >>> e["efficiency_source"], e["extrapolation"], e["family"], e["family_measured"], e["inside_measured_range"]
        ('none', 'unmeasured', 'tpu-v5e', False, False)
        """
        measured_gpus = {key[0] for entries in self.measured.values() for key in entries}
        if vendor is not None:
            return {"efficiency_source": vendor.key, "extrapolation": self.reach(engine, gpu), "family": gpu.family,
                    "sources": list(vendor.sources),
                    "measured_accelerator": gpu.id in vendor.measured_on, "family_measured": True,
                    "measured_engine": vendor.measured_engine or vendor.engine,
                    "inside_measured_range": vendor.inside(tp, active_params_b, batch)}
        family_gpus = {a.id for a in accelerators().values() if a.family == gpu.family}
        here = gpu.id in measured_gpus or kernels
        family_measured = here or bool(family_gpus & measured_gpus)
        return {"efficiency_source": self.efficiency_source(engine, gpu), "extrapolation": self.reach(engine, gpu),
                "family": gpu.family,
                "sources": [self.source.split(" (")[0]] if family_measured else [],
                "measured_accelerator": here, "family_measured": family_measured,
                "measured_engine": engine if kernels or family_gpus & {key[0] for key in self.measured.get(engine, {})}
                else None,
                "inside_measured_range": self.covers(engine, gpu.id, precision, model_class, tp, active_params_b)}

    def reach(self, engine: str, gpu: Accelerator) -> str:
        """How far an estimate of ``engine`` on ``gpu`` extrapolates (:func:`~finops.sizing.bands.reach_of`):
        ``measured``, ``fitted``, ``kernels`` or ``unmeasured``.

        >>> from finops.catalog import get_accelerator
        >>> cal = Calibration.bundled()
        >>> [cal.reach("vllm", get_accelerator(g)) for g in ("h100-sxm", "mi300x", "inferentia2", "a100-80gb", "tpu-v5e")]
        ['measured', 'fitted', 'fitted', 'kernels', 'unmeasured']
        """
        from .kernels import kernel_gpus

        vendor = self.vendor_efficiency(engine, gpu)
        return reach_of({key[0] for key in self.measured.get(engine, {})}, gpu.id,
                        None if vendor is None else "carried" if vendor.measured_engine else "fitted", kernel_gpus())

    def band_key(self, engine: str, metric: str, model_class: str | None = None,
                 vendor: VendorEfficiency | None = None, *, tp: int | None = None,
                 reach: str = "measured") -> str | None:
        """The band whose held-out residuals answer ``metric`` for this class: the ``vendor`` fit's key where
        its rows report the metric, else the first of :func:`~finops.sizing.bands.band_keys` the calibration
        holds; ``None`` without a band.

        >>> cal = Calibration.bundled()
        >>> cal.band_key("vllm", "tpot_ms", "dense", tp=1), cal.band_key("vllm", "tpot_ms", "mla", tp=1)
        ('vllm:dense:tp1', 'vllm')
        """
        if vendor is not None and metric in vendor.bands:
            return vendor.key
        return next((key for key in band_keys(engine, model_class, tp, reach)
                     if metric in self.bands.get(key, {})), None)

    def band(self, engine: str, metric: str, level: float, model_class: str | None = None,
             vendor: VendorEfficiency | None = None, *, tp: int | None = None, reach: str = "measured") -> float | None:
        """The held-out ratio measured / modelled of ``metric`` at quantile ``level`` (interpolated
        between :data:`BAND_LEVELS`, clamped to them: :func:`~finops.sizing.vendor_efficiency.ratio_at`) of
        the estimate's class (:meth:`band_key`): the ``vendor``'s, where its efficiencies answer and its
        published rows report the metric (:meth:`VendorEfficiency.band`); else of the most specific key of
        its ``reach``, engine, ``model_class`` and ``tp`` the calibration holds (:mod:`finops.sizing.bands`),
        widened to envelop the nearer reach's band (``kernels`` envelops ``measured``, ``unmeasured``
        ``kernels``: :data:`_NEARER_REACH`; a family fit's band whose rows come from fewer than
        :data:`~finops.sizing.vendor_efficiency.MIN_BAND_SOURCES` publications envelops ``unmeasured``'s);
        ``None`` without a band.

        >>> cal = Calibration.bundled()
        >>> cal.band("vllm", "tpot_ms", 0.1) < 1 < cal.band("vllm", "tpot_ms", 0.9)
        True
        >>> cal.band("trtllm", "tpot_ms", 0.9, "mla") != cal.band("trtllm", "tpot_ms", 0.9, "moe")
        True
        """
        key = self.band_key(engine, metric, model_class, vendor, tp=tp, reach=reach)
        if key is None:
            return None
        quantiles = vendor.bands[metric] if vendor is not None and key == vendor.key else self.bands[key][metric]
        own = ratio_at(quantiles, level)
        if vendor is not None and key == vendor.key:
            nearer = None if vendor.stands_alone(metric) else "unmeasured"
        else:
            nearer = _NEARER_REACH.get(key.split(":")[0])
        if nearer is None or level == 0.5:
            return own
        # an estimate that reaches further is never surer than one that reaches less far at the same engine,
        # model class and TP: its band envelops the nearer reach's (the model's own error on measured
        # hardware is in every extrapolation too)
        inner = self.band(engine, metric, level, model_class, tp=tp, reach=nearer)
        if inner is None:
            return own
        return min(own, inner) if level < 0.5 else max(own, inner)

    def band_ratios(self, engine: str, metric: str, model_class: str | None = None,
                    vendor: VendorEfficiency | None = None, *, tp: int | None = None,
                    reach: str = "measured") -> tuple[float, float] | None:
        """(P10, P90) of :meth:`band`, or ``None`` without a band (``None`` at one level is ``None`` at
        every level)."""
        low = self.band(engine, metric, 0.1, model_class, vendor, tp=tp, reach=reach)
        return None if low is None else (low, self.band(engine, metric, 0.9, model_class, vendor, tp=tp, reach=reach))

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "as_of": self.as_of, "rows": self.rows,
                "held_out_tpot_error": self.held_out_tpot_error, "held_out_ttft_error": self.held_out_ttft_error,
                "held_out_throughput_error": self.held_out_throughput_error,
                "band_levels": list(BAND_LEVELS),
                "bands": {engine: {metric: list(q) for metric, q in sorted(per.items())}
                          for engine, per in sorted(self.bands.items())},
                "engines": {name: c.to_dict() for name, c in self.engines.items()},
                "vendors": {key: v.to_dict() for key, v in sorted(self.vendors.items())},
                "measured": {name: sorted([*key, *sizes] for key, sizes in entries.items())
                             for name, entries in sorted(self.measured.items())}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        if not isinstance(data, Mapping) or not isinstance(data.get("engines"), Mapping) or not data["engines"]:
            raise InputError("a calibration file is a JSON object with an 'engines' object",
                             hint="write one with `finops calibrate`")
        try:
            rows = int(data.get("rows") or 0)
            errors = [None if data.get(k) is None else float(data[k])
                      for k in ("held_out_tpot_error", "held_out_ttft_error", "held_out_throughput_error")]
            measured = {str(k): {(str(g), str(p), str(c), int(t)): (float(low), float(high))
                                 for g, p, c, t, low, high in v}
                        for k, v in (data.get("measured") or {}).items()}
            bands = {str(e): {str(m): tuple(float(x) for x in q) for m, q in per.items()}
                     for e, per in (data.get("bands") or {}).items()}
        except (TypeError, ValueError, AttributeError):
            raise InputError("calibration 'rows' and errors must be numbers, 'measured' lists of [gpu, precision, "
                             "model class, tp, smallest, largest model in B active parameters] per engine, "
                             "'bands' lists of numbers",
                             hint="rewrite the file with `finops calibrate`") from None
        if any(len(q) != len(BAND_LEVELS) for per in bands.values() for q in per.values()):
            raise InputError(f"each calibration band needs one value per level {list(BAND_LEVELS)}")
        return cls(engines={str(k): EngineConstants.from_dict(v) for k, v in data["engines"].items()},
                   source=str(data.get("source", "")), as_of=str(data.get("as_of", "")), rows=rows,
                   held_out_tpot_error=errors[0], held_out_ttft_error=errors[1],
                   held_out_throughput_error=errors[2], measured=measured, bands=bands,
                   vendors={v.key: v for v in map(VendorEfficiency.from_dict, (data.get("vendors") or {}).values())})

    @classmethod
    def read(cls, path: str | Path) -> Calibration:
        """Read a calibration JSON file (as written by ``finops calibrate``)."""
        path = Path(path)
        if not path.is_file():
            raise InputError(f"calibration file {path} does not exist", hint="write one with `finops calibrate`")
        try:
            data = json_document(str(path.read_bytes(), _FILE_ENCODING))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"calibration file {path} is not JSON ({exc})") from None
        try:
            return cls.from_dict(data)
        except InputError as exc:  # the dictionary's checks know no file: this one is it
            if exc.where is None:
                raise InputError(exc.message, hint=exc.hint, where=Location(file=str(path))) from exc
            raise

    def write(self, path: str | Path) -> Path:
        return write_atomically(Path(path), (json.dumps(self.to_dict(), indent=2) + "\n").encode(_FILE_ENCODING))

    @staticmethod
    @cache
    def bundled() -> Calibration:
        """The constants shipped in ``finops/catalog/data/calibration.json``, with the bands of the reaches
        beyond the measured one derived from the bundled held-out residuals (:func:`~finops.sizing.bands.reach_bands`)."""
        text = resources.files("finops.catalog").joinpath("data", "calibration.json").read_text(encoding="utf-8")
        shipped = Calibration.from_dict(json.loads(text))
        # the wider reaches' bands follow from the bundled held-out residuals (finops.sizing.bands)
        return replace(shipped, bands={**reach_bands(), **shipped.bands})
