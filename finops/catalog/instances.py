"""Cloud instance types that carry accelerators: how many of which, with the host's vCPU and memory.

Rows live in ``finops/catalog/data/instances_<provider>.csv`` (columns ``provider, instance_type,
gpu_model, gpu_count, vcpu, memory_gib, local_ssd_gb, source, as_of``). ``gpu_model`` is an
accelerator id of :mod:`finops.catalog.accelerators`; ``local_ssd_gb`` counts only the local SSD that
comes bundled with the type (0 where it is optional or absent). Cloud TPUs are listed per chip
(``tpu-v5e``, ``tpu-v5p``, ``tpu-v6e``: one chip and its share of the host) because Google prices
them per chip-hour.

>>> p5 = instance("aws", "p5.48xlarge")
>>> p5.gpu_model, p5.gpu_count, p5.gpu_memory_gib
('h100-sxm', 8, 633.6)
>>> [i.instance_type for i in instances_for_gpu("h200")]
['p5e.48xlarge', 'p5en.48xlarge', 'a3-ultragpu-8g']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal, get_args

from ..errors import InputError, Location
from ..registry import Registry
from ._table import parse, read_rows
from .accelerators import Accelerator, accelerators, get_accelerator

__all__ = ["PROVIDERS", "InstanceType", "Provider", "instance", "instances", "instances_for_gpu"]

Provider = Literal["aws", "gcp"]
PROVIDERS: tuple[str, ...] = get_args(Provider)


@dataclass(frozen=True)
class InstanceType:
    provider: Provider
    instance_type: str
    gpu_model: str
    gpu_count: int
    vcpu: int
    memory_gib: float
    local_ssd_gb: float
    source: str
    as_of: str

    @property
    def accelerator(self) -> Accelerator:
        """The catalog accelerator this type carries."""
        return get_accelerator(self.gpu_model)

    @property
    def gpu_memory_gib(self) -> float:
        """Usable accelerator memory of the whole instance: ``gpu_count x memory_gib_usable``."""
        return round(self.gpu_count * self.accelerator.memory_gib_usable, 3)


def _provider(name: str) -> str:
    return _providers().canonical(name)


@cache
def _providers() -> Registry[str]:
    return Registry("provider", {p: p for p in PROVIDERS})


@cache
def _catalog(provider: str) -> Registry[InstanceType]:
    filename = f"instances_{provider}.csv"
    items: dict[str, InstanceType] = {}
    gpus = accelerators()
    for line, row in read_rows(filename):
        def num(col: str, kind: type, _row: dict[str, str] = row, _line: int = line):
            value = parse(_row[col], kind, file=filename, line=_line, column=col)
            if value is None or value < 0:
                raise InputError(f"{col} must be a number >= 0", where=Location(file=filename, row=_line, column=col))
            return value
        where = Location(file=filename, row=line)
        if row["provider"] != provider:
            raise InputError(f"row for provider {row['provider']!r} in the {provider} catalog", where=where)
        item = InstanceType(provider=provider, instance_type=row["instance_type"],  # type: ignore[arg-type]
                            gpu_model=gpus.canonical(row["gpu_model"]), gpu_count=num("gpu_count", int),
                            vcpu=num("vcpu", int), memory_gib=num("memory_gib", float),
                            local_ssd_gb=num("local_ssd_gb", float), source=row["source"], as_of=row["as_of"])
        if item.gpu_count < 1:
            raise InputError("gpu_count must be at least 1", where=where)
        items[item.instance_type] = item
    return Registry(f"{provider.upper()} instance type", items)


def instance(provider: str, instance_type: str) -> InstanceType:
    """One instance type; unknown names fail with the closest matches.

    >>> instance("gcp", "a3-highgpu-8g").gpu_count
    8
    """
    return _catalog(_provider(provider))[instance_type]


def instances(provider: str | None = None) -> list[InstanceType]:
    """All instance types, of one provider or of all, in catalog order.

    >>> len(instances("aws")) > 30 and len(instances()) > len(instances("gcp"))
    True
    """
    chosen = [_provider(provider)] if provider else list(PROVIDERS)
    return [item for p in chosen for item in _catalog(p).values()]


def instances_for_gpu(gpu_id: str, provider: str | None = None) -> list[InstanceType]:
    """Instance types carrying an accelerator (any id or alias), fewest accelerators first.

    >>> [(i.instance_type, i.gpu_count) for i in instances_for_gpu("l40s", "aws")][:2]
    [('g6e.xlarge', 1), ('g6e.2xlarge', 1)]
    """
    gpu = get_accelerator(gpu_id).id
    matches = [item for item in instances(provider) if item.gpu_model == gpu]
    return sorted(matches, key=lambda i: (i.gpu_count, PROVIDERS.index(i.provider), i.vcpu, i.memory_gib))
