"""``/api/v1/query_range`` answers (live or saved to a file) -> :class:`finops.serving.Series`.

The answer is Prometheus' JSON envelope ``{"status": "success", "data": {"resultType": "matrix",
"result": [{"metric": {"__name__": ..., labels...}, "values": [[unix_seconds, "value"], ...]}]}}``.
A saved file is that answer as ``curl`` wrote it (optionally gzipped, ``.json.gz``) for a query of raw
series (a selector such as ``{__name__=~"vllm:.*|DCGM_FI_DEV_GPU_UTIL"}``), so each series keeps its
``__name__``. Errors name the file (or the server) and what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from finops.errors import InputError, Location
from finops.limits import inflate, json_document
from finops.serving import Series

__all__ = ["parse_query_range", "read_saved"]


def parse_query_range(answer: bytes | Mapping[str, Any], source: str, *, name: str | None = None) -> list[Series]:
    """The series of one ``query_range`` answer; ``name`` is used when a series has no ``__name__``."""
    where = Location(file=source)
    try:
        payload = json_document(answer) if isinstance(answer, bytes | bytearray) else answer
    except ValueError as exc:
        raise InputError(f"not a Prometheus JSON answer: {exc}", where=where,
                         hint="save the body of /api/v1/query_range as Prometheus returns it") from None
    if not isinstance(payload, Mapping) or payload.get("status") != "success":
        error = payload.get("error") if isinstance(payload, Mapping) else None
        raise InputError("the answer is not a successful query" + (f": {error}" if error else ""), where=where,
                         hint="save the body of a /api/v1/query_range answer whose status is success")
    data = payload.get("data") or {}
    if data.get("resultType") != "matrix":
        raise InputError(f"expected a range query (resultType matrix), got {data.get('resultType')!r}",
                         where=where, hint="use /api/v1/query_range, not /api/v1/query")
    series = []
    for number, item in enumerate(data.get("result") or [], start=1):
        labels = dict(item.get("metric") or {})
        metric = labels.pop("__name__", None) or name
        if not metric:
            raise InputError(f"series {number} has no __name__ label", where=where,
                             hint="query raw series (a selector), not an expression such as rate(...)")
        try:
            times = [float(t) for t, _ in item.get("values") or []]
            values = [float(v) for _, v in item.get("values") or []]
        except (TypeError, ValueError) as exc:
            raise InputError(f"series {number} ({metric}) has a sample that is not [time, \"value\"]: {exc}",
                             where=where) from None
        series.append(Series(metric, labels, times, values, source=source))
    return series


def read_saved(paths: Iterable[Path]) -> list[Series]:
    """Every series of the saved answers in ``paths`` (``.json`` or ``.json.gz``). A month may come in several
    files (each its own hours); one series given twice for the same hours (a file named twice, or a copy) is
    refused naming both files: it would count the fleet's requests and GPUs twice."""
    series: list[Series] = []
    for path in map(Path, paths):
        found = _read_one(path)
        _refuse_overlaps(series, found)
        series += found
    return series


def _refuse_overlaps(kept: list[Series], new: list[Series]) -> None:
    """An :class:`InputError` when a series of ``new`` shares its name, labels and some hours with one of ``kept``
    or of ``new`` before it."""
    spans: dict[tuple[str, tuple[tuple[str, str], ...]], list[Series]] = {}
    for one in [*kept, *new]:
        if not len(one.times):
            continue
        key = (one.name, tuple(sorted(one.labels.items())))
        other = next((o for o in spans.get(key, []) if one.times[0] <= o.times[-1] and o.times[0] <= one.times[-1]),
                     None)
        if other is not None:
            labels = ",".join(f'{k}="{v}"' for k, v in key[1])
            raise InputError(f"series {one.name}{{{labels}}} is also in {Path(other.source).name} for the same hours: "
                             "given twice, the fleet's requests and GPUs would count twice",
                             where=Location(file=one.source),
                             hint="give each saved answer once; a month in several files has each its own hours")
        spans.setdefault(key, []).append(one)


def _read_one(path: Path) -> list[Series]:
    """The series of one saved answer."""
    if not path.is_file():
        raise InputError("metrics file not found", where=Location(file=str(path)),
                         hint="give saved /api/v1/query_range answers (.json or .json.gz)")
    try:
        raw = inflate(path.read_bytes(), path) if path.name.endswith(".gz") else path.read_bytes()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the metrics file: {exc}", where=Location(file=str(path))) from None
    return parse_query_range(raw, str(path))
