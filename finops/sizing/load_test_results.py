"""Measurements from a user's own load tests, for ``finops calibrate`` and the serving loop.

One JSON result file gives one or more :class:`~finops.sizing.calibration.Measurement` points (mean TTFT and
TPOT at a concurrency); the hardware it ran on is the caller's, since the files do not say it. Formats,
recognized by their keys (:func:`load_test_format`):

* ``vllm bench serve --save-result``: ``mean_ttft_ms``, ``mean_tpot_ms``, ``total_input_tokens / completed``,
  ``max_concurrency``, or for a rate run Little's law ``request_throughput x mean_e2el_ms``;
* GenAI-Perf and AIPerf ``profile_export_*.json``: ``time_to_first_token.avg``, ``inter_token_latency.avg``,
  ``input/output_sequence_length.avg``, the concurrency from ``input_config``;
* GuideLLM report JSON: every benchmark of a sweep, ``metrics.*.successful.mean``, the concurrency from
  ``request_concurrency``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ..catalog import get_accelerator, resolve_model
from ..errors import InputError, Location
from ..limits import json_document
from .calibration import Measurement

__all__ = ["LoadTestFormat", "load_test_format", "read_load_test"]

LoadTestFormat = Literal["vllm-bench-serve", "aiperf", "guidellm"]


def _number(value: Any, what: str, where: Location) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{what} must be a positive number, got {value!r}", where=where)
    return float(value)


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _stat(metric: Any) -> Any:
    """The mean of an AIPerf/GenAI-Perf metric object (``avg``) or a GuideLLM distribution (``mean``)."""
    if isinstance(metric, Mapping):
        for key in ("avg", "mean"):
            if key in metric:
                return metric[key]
    return None


def _points_vllm(data: Mapping[str, Any], where: Location) -> list[dict[str, Any]]:
    done = _number(data.get("completed"), "completed", where)
    concurrency = data.get("max_concurrency")
    if concurrency is None and data.get("request_throughput") and data.get("mean_e2el_ms"):
        concurrency = data["request_throughput"] * data["mean_e2el_ms"] / 1e3   # Little's law
    return [{"isl": data.get("total_input_tokens", 0) / done, "osl": data.get("total_output_tokens", 0) / done,
             "concurrency": concurrency, "ttft_ms": data.get("mean_ttft_ms"), "tpot_ms": data.get("mean_tpot_ms")}]


def _points_aiperf(data: Mapping[str, Any], where: Location) -> list[dict[str, Any]]:
    config = data.get("input_config") or {}
    concurrency = (_dig(config, "loadgen", "concurrency") or _dig(config, "perf_analyzer", "stimulus", "concurrency")
                   or _dig(config, "concurrency"))
    if concurrency is None and _stat(data.get("request_throughput")) and _stat(data.get("request_latency")):
        concurrency = _stat(data["request_throughput"]) * _stat(data["request_latency"]) / 1e3
    return [{"isl": _stat(data.get("input_sequence_length")), "osl": _stat(data.get("output_sequence_length")),
             "concurrency": concurrency, "ttft_ms": _stat(data.get("time_to_first_token")),
             "tpot_ms": _stat(data.get("inter_token_latency"))}]


def _points_guidellm(data: Mapping[str, Any], where: Location) -> list[dict[str, Any]]:
    points = []
    for bench in data["benchmarks"]:
        metrics = _dig(bench, "metrics") or {}

        def mean(name: str, _m: Mapping[str, Any] = metrics) -> Any:
            return _stat(_dig(_m, name, "successful"))
        points.append({"isl": mean("prompt_token_count"), "osl": mean("output_token_count"),
                       "concurrency": mean("request_concurrency"), "ttft_ms": mean("time_to_first_token_ms"),
                       "tpot_ms": mean("time_per_output_token_ms") or mean("inter_token_latency_ms")})
    return points


def load_test_format(data: Any, *, where: Location | None = None) -> LoadTestFormat:
    """Recognize a load-test result by its keys (``where``: the file, named in the error).

    >>> load_test_format({"mean_ttft_ms": 1, "mean_tpot_ms": 1}), load_test_format({"benchmarks": []})
    ('vllm-bench-serve', 'guidellm')
    """
    if isinstance(data, Mapping):
        if "mean_ttft_ms" in data and "mean_tpot_ms" in data:
            return "vllm-bench-serve"
        if isinstance(data.get("benchmarks"), list):
            return "guidellm"
        if isinstance(data.get("time_to_first_token"), Mapping):
            return "aiperf"
    raise InputError("not a recognized load-test result", where=where,
                     hint="give the JSON of `vllm bench serve --save-result`, GenAI-Perf/AIPerf "
                          "profile_export_*.json, or a GuideLLM report JSON")


def read_load_test(path: str | Path, *, engine: str, model: str, gpu: str, precision: str, tp: int,
                   concurrency: int | None = None) -> list[Measurement]:
    """Measurements from one load-test JSON file; the hardware it ran on is given by the caller.

    ``concurrency`` overrides what the file states (or what Little's law infers from it).
    """
    p = Path(path)
    where = Location(file=str(p))
    try:
        data = json_document(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read load-test file: {exc.strerror or exc}", where=where) from None
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: JSONDecodeError, or an integer of 4,300+ digits
        raise InputError(f"load-test file is not JSON ({exc})", where=where) from None
    kind = load_test_format(data, where=where)
    reader = {"vllm-bench-serve": _points_vllm, "aiperf": _points_aiperf, "guidellm": _points_guidellm}[kind]
    spec, device = resolve_model(model), get_accelerator(gpu)
    out = []
    try:
        points = reader(data, where)
    except (TypeError, KeyError, AttributeError) as exc:
        raise InputError(f"unexpected {kind} result layout ({exc})", where=where) from None
    for point in points:
        if concurrency is not None:
            point["concurrency"] = concurrency
        if point["concurrency"] is None:
            raise InputError("the file does not say the concurrency it ran at", where=where,
                             hint="pass --concurrency N")
        values = {k: _number(v, k, where) for k, v in point.items()}
        out.append(Measurement(engine=engine, model=spec.id, gpu=device.id, precision=precision, tp=tp,
                               isl=round(values["isl"]), osl=max(2, round(values["osl"])),
                               concurrency=max(1, round(values["concurrency"])), ttft_ms=values["ttft_ms"],
                               tpot_ms=values["tpot_ms"], source=f"{kind} {p.name}"))
    if not out:
        raise InputError("the load-test file holds no benchmark", where=where)
    return out
