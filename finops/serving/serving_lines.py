"""Which metric series belong to which plan line, and what each serving plan line runs.

A serving line is one row of the Serving table (a CSV, or the ``Serving`` sheet that ``plan next``
writes): the plan line it feeds, the configuration it runs (engine, model, GPU, precision, TP), the
targets it is held to, how it buys capacity (provider, instance type, region; ``on-prem`` buys
nothing), and one label rule on the Mapping sheet's pattern: series whose label ``LabelKey`` matches
the glob ``LabelValue`` (``*``/``?``, case-insensitive) belong to the line. Rules are tried in row
order; the first match wins. A plan line may have several serving lines (one per workload or configuration:
several models on one line), each with its own rule; the realized month and the next plan keep them apart and
sum them into the plan line. The rule applies to the engine's series and the GPU exporter's alike
(label both with the same key, e.g. the Kubernetes ``namespace``).

>>> line = ServingLine("prod", "vllm", "llama-3.1-8b", "h100-sxm", "fp8", 1, "namespace", "prod-*")
>>> line.matches({"namespace": "PROD-eu"}), line.matches({"namespace": "staging"})
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from ..errors import InputError, Location, UnknownNameError

__all__ = ["SERVING_COLUMNS", "ServingLine", "assign", "check_line", "read_serving_lines", "serving_lines_from_rows"]

#: Columns of the Serving table, in order.
SERVING_COLUMNS = ("PlanLine", "Engine", "Model", "Gpu", "Precision", "TP", "LabelKey", "LabelValue",
                   "TtftTargetMs", "ItlTargetMs", "Spare", "Provider", "InstanceType", "Region")
_REQUIRED = SERVING_COLUMNS[:8]


@dataclass(frozen=True)
class ServingLine:
    """One row of the Serving table; targets in milliseconds, ``spare`` a share (0.2 = 20 % headroom)."""

    plan_line: str
    engine: str
    model: str
    gpu: str
    precision: str
    tp: int
    label_key: str
    label_value: str
    ttft_target_ms: float | None = None
    itl_target_ms: float | None = None
    spare: float = 0.0
    provider: str = "on-prem"
    instance_type: str = ""
    region: str = ""
    #: The row it was read from (file, sheet, row), for messages about the line; not part of its value.
    where: Location | None = field(default=None, compare=False, repr=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a series with ``labels`` belongs to this line."""
        value = labels.get(self.label_key)
        return value is not None and fnmatchcase(value.lower(), self.label_value.lower())

    @property
    def rule(self) -> str:
        """The label rule as text, ``namespace=prod-*``: what tells a plan line's serving lines apart."""
        return f"{self.label_key}={self.label_value}"

    @property
    def buys_capacity(self) -> bool:
        """A cloud line whose capacity the commitment mix buys (on-prem lines own theirs)."""
        return self.provider.lower() not in ("on-prem", "onprem", "") and bool(self.instance_type)

    def values(self) -> list[object]:
        """The row as the Serving table's cells, in :data:`SERVING_COLUMNS` order."""
        return [self.plan_line, self.engine, self.model, self.gpu, self.precision, self.tp, self.label_key,
                self.label_value, self.ttft_target_ms, self.itl_target_ms, self.spare, self.provider,
                self.instance_type, self.region]


def assign(lines: Sequence[ServingLine], labels: Mapping[str, str]) -> ServingLine | None:
    """The first line whose rule matches ``labels``, else ``None``."""
    return next((line for line in lines if line.matches(labels)), None)


def _number(text: str, path: Path, row: int, column: str, *, whole: bool = False) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
        if whole:  # 8.0, as a spreadsheet may save 8, is 8; 8.5 is no count of GPUs
            if not value.is_integer():
                raise ValueError(text)
            value = int(value)
    except (ValueError, OverflowError):
        raise InputError(f"expected {'a whole number' if whole else 'a number'}, got {text!r}",
                         where=Location(file=str(path), row=row, column=column),
                         hint="a whole number such as 8" if whole else "a plain number such as 500 or 0.2") from None
    if value < 0:
        raise InputError(f"expected 0 or more, got {text!r}", where=Location(file=str(path), row=row, column=column))
    return value


def _target(text: str, path: Path, row: int, column: str) -> float | None:
    """A latency target in milliseconds: blank (none), or more than 0."""
    value = _number(text, path, row, column)
    if value == 0:
        raise InputError("a latency target of 0 ms cannot be met", where=Location(file=str(path), row=row,
                         column=column), hint="leave it blank for no target, or give the milliseconds, e.g. 500")
    return value


def _share(text: str, path: Path, row: int, column: str) -> float:
    """A share from 0 to 1 (blank: 0): ``Spare`` 0.2 is 20 % headroom; 20 there would be 2,000 %."""
    value = _number(text, path, row, column) or 0.0
    if value > 1:
        raise InputError(f"expected a share from 0 to 1, got {text!r}", where=Location(file=str(path), row=row,
                         column=column), hint="write 20 % as 0.2")
    return value


def _located(error: InputError, where: Location) -> InputError:
    return InputError(error.message, where=where, hint=error.hint)


def check_line(line: ServingLine, where: Location) -> ServingLine:
    """``line`` when what it runs on can run it, else an :class:`~finops.errors.InputError` at ``where`` (the
    row) naming the column: a GPU the catalog knows; a TP that shards the model's heads as the engines require
    (:func:`finops.sizing.memory.tp_shards_heads`: whole query heads per rank, KV heads split or replicated
    evenly); and, on a cloud line, the instance type the mix
    prices: one the provider's catalog knows, carrying the line's GPU, with at least TP of them (a TP group
    stays inside one instance). A line priced on another accelerator's instance would budget the wrong
    hardware.

    >>> line = ServingLine("prod", "vllm", "llama-3.1-8b", "l40s", "fp8", 1, "ns", "p*", provider="aws",
    ...                    instance_type="p5.48xlarge", region="us-east-1")
    >>> check_line(line, Location(file="serving.csv", row=2))
    Traceback (most recent call last):
    ...
    finops.errors.InputError: serving.csv, row 2, column InstanceType: p5.48xlarge carries h100-sxm GPUs, not the line's l40s. Hint: an aws instance type with l40s: g6e.xlarge, g6e.2xlarge, g6e.4xlarge, g6e.8xlarge, g6e.16xlarge, g6e.12xlarge, g6e.24xlarge, g6e.48xlarge
    """
    from ..catalog.accelerators import get_accelerator
    from ..catalog.instances import instance, instances_for_gpu
    from ..catalog.models import get_model
    from ..sizing.memory import PRECISIONS, tp_shards_heads
    from .metric_names import metric_names

    def column(name: str) -> Location:
        return replace(where, column=name)

    try:
        gpu = get_accelerator(line.gpu).id
    except UnknownNameError as error:
        raise _located(error, column("Gpu")) from None
    try:
        metric_names(line.engine, "requests")
    except UnknownNameError as error:
        raise _located(error, column("Engine")) from None
    if line.precision not in PRECISIONS:
        raise InputError(f"unknown precision {line.precision!r}", where=column("Precision"),
                         hint=f"one of {', '.join(PRECISIONS)}")
    try:
        model = get_model(line.model)
    except UnknownNameError as error:
        raise _located(error, column("Model")) from None
    if line.tp < 1 or (model is not None and not tp_shards_heads(model, line.tp)):
        heads = f"{model.num_attention_heads} attention heads and {model.num_kv_heads} KV heads" if model else "heads"
        fits = ", ".join(str(t) for t in range(1, 9) if model is not None and tp_shards_heads(model, t))
        raise InputError(f"TP {line.tp} does not shard the {heads} of {line.model}", where=column("TP"),
                         hint=f"a TP the engines can run it at: {fits or 'see the model card'}")
    if line.provider.lower() in ("on-prem", "onprem", ""):
        if line.instance_type or line.region:  # a cloud offer named, its seller not: priced as owned, it was carried
            raise InputError(f"InstanceType {line.instance_type or '(blank)'} and Region {line.region or '(blank)'} "
                             "name capacity bought in a cloud, but the line has no Provider",
                             where=column("Provider"),
                             hint="name the provider that sells it (aws or gcp), or clear InstanceType and Region "
                                  "for capacity you own")
        return line
    try:
        instances_for_gpu(gpu, line.provider)
    except UnknownNameError as error:
        raise _located(error, column("Provider")) from None
    fitting = ", ".join(i.instance_type for i in instances_for_gpu(gpu, line.provider) if i.gpu_count >= line.tp)
    if not line.instance_type:
        raise InputError(f"a {line.provider} line needs the instance type its capacity is bought as",
                         where=column("InstanceType"), hint=f"an {line.provider} instance type with {gpu}: {fitting}")
    try:
        bought = instance(line.provider, line.instance_type)
    except UnknownNameError as error:
        raise _located(error, column("InstanceType")) from None
    if bought.gpu_model != gpu:
        raise InputError(f"{bought.instance_type} carries {bought.gpu_model} GPUs, not the line's {gpu}",
                         where=column("InstanceType"),
                         hint=f"an {line.provider} instance type with {gpu}: {fitting or 'none in the catalog'}")
    if bought.gpu_count < line.tp:
        raise InputError(f"{bought.instance_type} has {bought.gpu_count} GPUs, fewer than TP {line.tp}",
                         where=column("InstanceType"),
                         hint=f"an {line.provider} instance type with at least {line.tp} {gpu}: "
                              f"{fitting or 'none in the catalog'}")
    return line


def serving_lines_from_rows(rows: Sequence[tuple[int, Mapping[str, str]]], source: str) -> tuple[ServingLine, ...]:
    """Serving lines from ``(row number, {column: text})`` rows of a CSV or a sheet; errors name the row."""
    path = Path(source)
    lines = []
    for row, cells in rows:
        for column in _REQUIRED:
            if not cells.get(column):
                raise InputError(f"{column} is blank", where=Location(file=source, row=row, column=column),
                                 hint="every serving line names its plan line, configuration and label rule")
        tp = _number(cells["TP"], path, row, "TP", whole=True)
        lines.append(check_line(ServingLine(
            cells["PlanLine"], cells["Engine"].lower(), cells["Model"], cells["Gpu"], cells["Precision"].lower(),
            1 if tp is None else int(tp), cells["LabelKey"], cells["LabelValue"],
            _target(cells.get("TtftTargetMs", ""), path, row, "TtftTargetMs"),
            _target(cells.get("ItlTargetMs", ""), path, row, "ItlTargetMs"),
            _share(cells.get("Spare", ""), path, row, "Spare"),
            cells.get("Provider", "") or "on-prem", cells.get("InstanceType", ""), cells.get("Region", ""),
            Location(file=source, row=row)), Location(file=source, row=row)))
    return tuple(lines)


def read_serving_lines(path: str | Path) -> tuple[ServingLine, ...]:
    """The Serving table in a CSV with :data:`SERVING_COLUMNS` (the first eight required)."""
    from ..mix._csv import read_table  # here, not at the top: the mix package loads numpy, which reading a
    #                                     workbook's serving lines (finops reconcile) does without
    return serving_lines_from_rows(read_table(Path(path), "serving lines", _REQUIRED), str(path))
