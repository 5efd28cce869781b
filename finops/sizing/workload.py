"""A workload: who calls the model, how often, with how many tokens, under which latency targets.

Demand is given in one of five ways (``Workload.basis`` says which; :mod:`finops.sizing.demand` turns
it into peak QPS and concurrency):

============================  ===========================================================================
``users_per_hour``            ``dau``, ``online_share`` (at the peak; 1 if left out),
                              ``requests_per_user_per_hour``
``users_per_day``             ``dau``, ``requests_per_user_per_day``, ``peak_to_average``
``requests_per_hour``         ``peak_requests_per_hour`` (the whole service at its peak)
``sessions``                  ``dau`` and ``online_share`` only: every online user holds one open
                              session (seed 003: ``C = N_users x U_active``)
``concurrency``               ``concurrency``: concurrent requests at the peak, stated directly (seed 002)
============================  ===========================================================================

``concurrency``, when set, overrides what the other inputs imply. ``growth`` multiplies the demand
(seed 000: DAU x3 -> concurrency x3). ``seconds_per_request`` left empty means "derive it from ISL/OSL
with the performance model". ``spare`` (buffer share) and ``redundancy`` (N+k devices) feed
:func:`finops.sizing.demand.devices_needed`. ``precisions`` and ``gpus`` narrow the search (empty:
all). ``context_length``: the sequence length the engine serves when it runs the model past its native
context (RoPE scaling); without it, ``isl + osl`` beyond the native context is refused.

Workload files are TOML or JSON with these field names as keys; ``extends = "<preset>"`` starts from
a preset and overrides some of its keys.

>>> w = presets()["seed000-doc-qa"]
>>> w.basis, w.dau, w.online_share, w.requests_per_user_per_hour, w.seconds_per_request
('users_per_hour', 10000.0, 0.05, 60.0, 5.0)
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

from ..catalog import ModelSpec, accelerators, resolve_model
from ..errors import InputError, Location
from ..limits import json_document
from ..registry import Registry
from .memory import KV_PRECISIONS, PRECISIONS, check_context

__all__ = ["SLO_PERCENTILES", "DemandBasis", "SloPercentile", "Workload", "load_workload", "presets", "workload_from"]

SloPercentile = Literal["p50", "p99"]
SLO_PERCENTILES: tuple[str, ...] = get_args(SloPercentile)
DemandBasis = Literal["users_per_hour", "users_per_day", "requests_per_hour", "sessions", "concurrency"]


@dataclass(frozen=True)
class Workload:
    """One LLM workload. Validated on construction; bad values raise :class:`InputError` naming the key."""

    name: str
    model: str
    isl: int
    osl: int
    description: str = ""
    dau: float | None = None
    online_share: float | None = None
    requests_per_user_per_hour: float | None = None
    requests_per_user_per_day: float | None = None
    peak_to_average: float = 1.0
    peak_requests_per_hour: float | None = None
    concurrency: float | None = None
    seconds_per_request: float | None = None
    growth: float = 1.0
    cache_hit_rate: float = 0.0
    ttft_ms: float | None = None
    itl_ms: float | None = None
    slo_percentile: SloPercentile = "p99"
    precisions: tuple[str, ...] = ()
    kv_precision: str | None = None
    context_length: int | None = None
    gpus: tuple[str, ...] = ()
    spare: float = 0.0
    redundancy: int = 0
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _text(self, "name")
        _text(self, "model")
        for key in ("isl", "osl"):
            _whole(self, key, minimum=1)
        _whole(self, "redundancy", minimum=0)
        if self.context_length is not None:
            _whole(self, "context_length", minimum=1)
        for key in ("dau", "requests_per_user_per_hour", "requests_per_user_per_day", "peak_requests_per_hour",
                    "concurrency", "seconds_per_request", "ttft_ms", "itl_ms"):
            _number(self, key, positive=True, optional=True)
        for key in ("peak_to_average", "growth"):
            _number(self, key, positive=True)
        _number(self, "spare", positive=False)
        _number(self, "online_share", positive=True, optional=True)
        if self.online_share is not None and self.online_share > 1:
            _fail("online_share", f"is a share of DAU in (0, 1], got {self.online_share}")
        _number(self, "cache_hit_rate", positive=False)
        if not self.cache_hit_rate < 1:
            _fail("cache_hit_rate", f"is a share of input tokens in [0, 1), got {self.cache_hit_rate}")
        if self.peak_to_average < 1:
            _fail("peak_to_average", f"is peak over average, at least 1, got {self.peak_to_average}")
        if self.slo_percentile not in SLO_PERCENTILES:
            _fail("slo_percentile", f"must be one of {', '.join(SLO_PERCENTILES)}, got {self.slo_percentile!r}")
        object.__setattr__(self, "precisions", _vocabulary(self.precisions, PRECISIONS, "precisions"))
        if self.kv_precision is not None:
            object.__setattr__(self, "kv_precision", _vocabulary((self.kv_precision,), KV_PRECISIONS,
                                                                 "kv_precision")[0])
        object.__setattr__(self, "gpus", _gpu_ids(self.gpus))
        self._check_demand_inputs()

    def _check_demand_inputs(self) -> None:
        if self.requests_per_user_per_hour is not None and self.requests_per_user_per_day is not None:
            _fail("requests_per_user_per_day", "give requests per user per hour or per day, not both")
        per_user = self.requests_per_user_per_hour is not None or self.requests_per_user_per_day is not None
        if per_user and self.dau is None:
            _fail("dau", "is needed with requests per user")
        if self.peak_requests_per_hour is not None and self.dau is not None:
            _fail("peak_requests_per_hour", "give the service's peak request rate or DAU-based inputs, not both")
        if self.dau is not None and not per_user and self.online_share is None and self.concurrency is None:
            _fail("online_share", "is needed with dau (or give requests_per_user_per_hour/day)")
        if self.dau is None and self.peak_requests_per_hour is None and self.concurrency is None:
            raise InputError(f"workload {self.name!r} states no demand",
                             hint="give dau with online_share and requests_per_user_per_hour, "
                                  "or peak_requests_per_hour, or concurrency")

    @property
    def basis(self) -> DemandBasis:
        """Which inputs set the demand (see the module docstring)."""
        if self.concurrency is not None:
            return "concurrency"
        if self.peak_requests_per_hour is not None:
            return "requests_per_hour"
        if self.requests_per_user_per_hour is not None:
            return "users_per_hour"
        if self.requests_per_user_per_day is not None:
            return "users_per_day"
        return "sessions"

    def model_spec(self) -> ModelSpec:
        """The model, resolved from the catalog or a ``config.json`` path."""
        return resolve_model(self.model)

    def with_changes(self, **changes: Any) -> Workload:
        """A copy with some fields changed (validated again).

        >>> presets()["seed000-doc-qa-as-printed"].with_changes(growth=3).growth
        3.0
        """
        return dataclasses.replace(self, **{k: _coerce(k, v) for k, v in changes.items()})


#: The largest number a workload key holds: ten billion users, requests or milliseconds is past any fleet sized here.
MAX_WORKLOAD_NUMBER = 1e10


def _fail(key: str, message: str) -> None:
    raise InputError(f"key {key!r} {message}")


def _text(w: Workload, key: str) -> None:
    value = getattr(w, key)
    if not isinstance(value, str) or not value.strip():
        _fail(key, f"must be a non-empty text, got {value!r}")


def _whole(w: Workload, key: str, *, minimum: int) -> None:
    value = getattr(w, key)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
        object.__setattr__(w, key, value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        _fail(key, f"must be a whole number >= {minimum}, got {value!r}")


def _number(w: Workload, key: str, *, positive: bool, optional: bool = False) -> None:
    value = getattr(w, key)
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(key, f"must be a number, got {value!r}")
    if (positive and value <= 0) or value < 0:
        _fail(key, f"must be {'> 0' if positive else '>= 0'}, got {value!r}")
    if value > MAX_WORKLOAD_NUMBER:  # past any fleet: the rates it gives overflow the replica search
        _fail(key, f"must be at most {MAX_WORKLOAD_NUMBER:.0e}, got {value!r}")
    object.__setattr__(w, key, float(value))


def _vocabulary(values: Any, accepted: tuple[str, ...], key: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    out = []
    for value in values:
        v = str(value).strip().lower()
        if v not in accepted:
            raise InputError(f"key {key!r}: unknown value {value!r}", hint=f"use one of: {', '.join(accepted)}")
        out.append(v)
    return tuple(out)


def _gpu_ids(values: Any) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    return tuple(accelerators().canonical(str(v)) for v in values)


def _coerce(key: str, value: Any) -> Any:
    if key in ("precisions", "gpus") and isinstance(value, list):
        return tuple(value)
    return value


_ONE_PER_MINUTE = 60.0
_SEED_002 = "seed 002 (NVIDIA, GPU sizing for enterprise inference), scenario {}"


@cache
def presets() -> Registry[Workload]:
    """Named workloads from the seed documents (``finops size --preset NAME``).

    ``seed000-doc-qa`` takes seed 000's stated inputs (about 42 concurrent); ``seed000-doc-qa-as-printed``
    takes the 5,000 requests per hour its arithmetic actually used (about 7). Seed 002's four scenarios
    state concurrency directly (the upper end of each range); seed 003's customer-service API counts
    every active user as one streaming session at 30 tokens/s (ITL 33.3 ms).
    """
    seed000 = {"model": "llama-2-7b", "isl": 2048, "osl": 1024, "seconds_per_request": 5.0, "precisions": ("int8",),
               "spare": 0.30}
    items = [
        Workload(name="seed000-doc-qa", dau=10_000, online_share=0.05, requests_per_user_per_hour=_ONE_PER_MINUTE,
                 description="Document Q&A assistant, 7B model: 10,000 DAU, 5 % online at peak, 1 request per "
                             "user per minute, 5 s each (stated inputs: ~42 concurrent)",
                 source="seed 000, worked case (stated inputs)", **seed000),
        Workload(name="seed000-doc-qa-as-printed", peak_requests_per_hour=5_000,
                 description="Seed 000's case as its arithmetic ran: 5,000 requests per hour x 5 s (~7 "
                             "concurrent; x3 growth ~21)",
                 source="seed 000, worked case (the article's 5,000 requests per hour)", **seed000),
        Workload(name="seed002-financial-copilot", model="llama-3.1-8b", isl=5000, osl=500, concurrency=50,
                 ttft_ms=1000, precisions=("bf16", "fp16"),
                 description="Relationship-manager copilot over long client e-mails: 5,000 in / 500 out, TTFT "
                             "< 1 s, 10-50 concurrent, FP16/BF16, 7-13B model (24 GB GPU for 7-8B)",
                 source=_SEED_002.format(1)),
        Workload(name="seed002-drug-discovery-agent", model="qwen3-32b", isl=20_000, osl=2000, concurrency=30,
                 ttft_ms=2000, precisions=("bf16", "fp16"),
                 description="Research agent over full papers: 20,000 in / 2,000 out, TTFT < 2 s, 20-30 "
                             "concurrent, FP16+, long-context (16-32K) model; > 80 GB per compute unit",
                 source=_SEED_002.format(2)),
        Workload(name="seed002-marketing-content", model="mistral-7b", isl=500, osl=2000, concurrency=100,
                 ttft_ms=1000, precisions=("bf16", "fp16"),
                 description="Campaign content generator: 500 in / 2,000 out, TTFT < 1 s, 50-100+ concurrent "
                             "at peaks, FP16, 3-7B model (16-24 GB GPUs)",
                 source=_SEED_002.format(3)),
        Workload(name="seed002-translation", model="qwen3-30b-a3b", isl=1000, osl=1000, concurrency=300,
                 ttft_ms=500, precisions=("bf16", "fp16", "int8"),
                 description="Code and document translation platform: 1,000 in / 1,000 out, TTFT well under "
                             "1 s, hundreds concurrent, FP16 or INT8, multilingual MoE model",
                 source=_SEED_002.format(4)),
        Workload(name="seed003-customer-service", model="llama-2-7b", isl=512, osl=256, dau=200_000,
                 online_share=0.05, itl_ms=1000 / 30, gpus=("a10g", "a100-80gb", "h20"), spare=0.25,
                 redundancy=1,
                 description="Customer-service Q&A API, 7B model: 200,000 DAU, 5 % active, 30 tokens/s per "
                             "session; compare A10(G)/A100/H20. ISL/OSL are not in the seed: 512/256 assumed",
                 source="seed 003, scenario 1 (customer-service API)"),
    ]
    return Registry("preset", {w.name: w for w in items})


_FIELDS = {f.name for f in dataclasses.fields(Workload)}


def load_workload(path: str | Path) -> Workload:
    """Read a workload from a TOML or JSON file; errors name the file and the key.

    A relative ``model`` path (a ``config.json``) is taken relative to the workload file.
    """
    p = Path(path).expanduser()
    where = Location(file=str(p))
    try:
        text = p.read_text(encoding="utf-8-sig")  # a byte-order mark, as Windows editors save UTF-8, skipped
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise InputError(f"cannot read workload file: {reason or exc}", where=where,
                         hint="a workload file is TOML or JSON text, saved as UTF-8") from exc
    try:
        data = json_document(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except RecursionError:  # tomllib reads nested arrays and tables by recursion too
        raise InputError("not valid TOML: nested deeper than about 1,000 levels", where=where) from None
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: {exc}",
                         where=where) from exc
    if not isinstance(data, dict):
        raise InputError("a workload file holds one object of keys", where=where)
    unknown = sorted(set(data) - _FIELDS - {"extends"})
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(_FIELDS), n=1)
        raise InputError(f"unknown key {unknown[0]!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                         where=where, hint=f"known keys: extends, {', '.join(sorted(_FIELDS))}")
    model = data.get("model")
    if isinstance(model, str) and model.endswith(".json") and not Path(model).expanduser().is_absolute():
        data["model"] = str((p.parent / model).resolve())
    data.setdefault("source", str(p))
    try:
        base = data.pop("extends", None)
        if base is not None:
            workload = presets()[str(base)].with_changes(**data)
        else:
            workload = Workload(**{k: _coerce(k, v) for k, v in data.items()})
        spec = workload.model_spec()
        try:
            check_context(spec, workload.isl, workload.osl, workload.context_length)
        except InputError as exc:
            raise InputError(f"key 'isl': {exc}", hint=exc.hint) from None
    except InputError as exc:
        if not exc.where or not str(exc.where):
            exc.where = where
            exc.args = (str(exc),)
        raise
    except TypeError as exc:  # a required key is missing
        missing = [k for k in ("name", "model", "isl", "osl") if k not in data]
        raise InputError(f"missing key {missing[0]!r}" if missing else str(exc), where=where) from exc
    return workload



def workload_from(*, preset: str | None = None, workload: Workload | str | Path | None = None) -> Workload:
    """The workload named by exactly one of ``preset`` (a preset name) or ``workload`` (a Workload or a
    TOML/JSON file), as ``finops size`` and ``finops.size`` take it.

    >>> workload_from(preset="seed000-doc-qa").name
    'seed000-doc-qa'
    """
    if (preset is None) == (workload is None):
        raise InputError("give exactly one of a preset name or a workload", hint=f"presets: {', '.join(presets())}")
    if preset is not None:
        return presets()[preset]
    return workload if isinstance(workload, Workload) else load_workload(workload)  # type: ignore[arg-type]
