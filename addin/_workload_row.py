"""A Workloads row (its header row and one data row) as the core's workload and the planner's choice.

The workbook's ``tblWorkloads`` columns map one to one onto :class:`finops.sizing.Workload` fields
(declared in :data:`WORKLOAD_FIELDS`) plus the planner's configuration (``Gpu``, ``Precision``, ``TP``,
``Engine``). ``ContextLength`` (optional, blank: the model's native context) is the sequence length the engine
serves when it runs the model past its native context; without it a row whose ``ISL + OSL`` exceeds the native
context is refused, as ``finops estimate`` refuses it. ``LLM_SIZING`` and ``LLM_RANKING`` read a row through :func:`workload_row`, so the Sizing
sheet sizes exactly the workload ``finops size`` sizes from the same inputs.

>>> headers = ["Workload", "Model", "Precision", "Gpu", "TP", "Engine", "Concurrency", "ISL", "OSL",
...            "TtftTargetMs"]
>>> w, choice = workload_row(headers, ["copilot", "llama-3.1-8b", "bf16", "h100-sxm", 1, "", 50, 5000, 500,
...                                    1000])
>>> w.concurrency, w.ttft_ms, w.growth, choice
(50.0, 1000.0, 1.0, ('h100-sxm', 'bf16', 1, 'vllm'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from finops.errors import InputError
from finops.sizing import Workload

from ._cells import grid, names, number, records, text, whole

__all__ = ["CHOICE_COLUMNS", "WORKLOAD_FIELDS", "workload_row"]


def _optional(value: Any, name: str) -> float | None:
    return number(value, name, default=None)


def _lowered(value: Any, name: str) -> tuple[str, ...]:
    return tuple(v.lower() for v in names(value))


def _field(default: Any, read: Callable[..., Any] = number) -> Callable[[Any, str], Any]:
    return lambda value, name: read(value, name, default=default)


#: Workloads sheet header -> (Workload field, cell reader). Blank cells take the Workload's defaults.
WORKLOAD_FIELDS: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "Workload": ("name", text),
    "Model": ("model", text),
    "DAU": ("dau", _optional),
    "OnlineShare": ("online_share", _optional),
    "RequestsPerUserPerHour": ("requests_per_user_per_hour", _optional),
    "SecondsPerRequest": ("seconds_per_request", _optional),
    "PeakRequestsPerHour": ("peak_requests_per_hour", _optional),
    "Concurrency": ("concurrency", _optional),
    "Growth": ("growth", _field(1.0)),
    "PeakToAverage": ("peak_to_average", _field(1.0)),
    "ISL": ("isl", whole),
    "OSL": ("osl", whole),
    "ContextLength": ("context_length", _field(None, whole)),
    "CacheHitRate": ("cache_hit_rate", _field(0.0)),
    "TtftTargetMs": ("ttft_ms", _optional),
    "TpotTargetMs": ("itl_ms", _optional),
    "SloPercentile": ("slo_percentile", lambda v, n: text(v, n, default="p99").lower()),
    "SearchGpus": ("gpus", lambda v, n: names(v)),
    "SearchPrecisions": ("precisions", _lowered),
    "Spare": ("spare", _field(0.0)),
    "Redundancy": ("redundancy", _field(0, whole)),
    "Description": ("description", _field("", text)),
}
#: The planner's configuration: Gpu, Precision, TP and Engine.
CHOICE_COLUMNS = ("Gpu", "Precision", "TP", "Engine")


def workload_row(headers: Any, row: Any) -> tuple[Workload, tuple[str, str, int, str]]:
    """The workload of one Workloads row and its (gpu, precision, tp, engine); headers not listed are
    ignored, missing ones take the Workload's defaults (``Workload``, ``Model``, ``ISL``, ``OSL`` and
    ``Gpu``, ``Precision``, ``TP`` are required)."""
    found = records([_flat(headers), _flat(row)], "workload", ("Workload", "Model", "ISL", "OSL", *CHOICE_COLUMNS[:3]))
    if not found:
        raise InputError("workload: the row is empty")
    cells = found[0]
    fields = {key: read(cells.get(header), header) for header, (key, read) in WORKLOAD_FIELDS.items()
              if header in cells}
    choice = (text(cells.get("Gpu"), "Gpu"), text(cells.get("Precision"), "Precision").lower(),
              whole(cells.get("TP"), "TP"), text(cells.get("Engine"), "Engine", default="vllm"))
    return Workload(**fields), choice


def _flat(value: Any) -> list[Any]:
    """A one-row range as one list (a single cell is a row of one)."""
    return [v for r in grid(value) for v in r]
