"""Accelerator catalog: memory, bandwidth and dense tensor throughput per device.

Figures are *dense* (NVIDIA and AMD datasheets quote 2:4-sparse numbers first; dense is half).
``interconnect_gbps`` is the per-device, one-direction bandwidth of the scale-up fabric in GB/s; ``link`` names
its row in ``links.csv`` (:mod:`finops.catalog.links`), which describes how collectives run on it. ``family``
groups accelerators of one silicon generation; ``tp_units_per_chip`` is how many ranks of the runtime's
tensor-parallel degree one chip holds (two NeuronCores per Inferentia2 or Trainium1 chip, four logical
NeuronCores per Trainium2 chip).
Every row carries ``source`` and ``as_of`` (see ``finops/catalog/data/accelerators.csv``).

>>> gpu = get_accelerator("H100")
>>> gpu.id, gpu.memory_bandwidth_gbps, gpu.tflops("fp8")
('h100-sxm', 3350.0, 1979.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..errors import InputError
from ..registry import Registry
from ._table import aliases, parse, read_rows

__all__ = ["Accelerator", "accelerators", "get_accelerator"]

_FILE = "accelerators.csv"


@dataclass(frozen=True)
class Accelerator:
    id: str
    name: str
    vendor: str
    aliases: tuple[str, ...]
    memory_gb: float
    memory_gib_usable: float
    memory_bandwidth_gbps: float
    bf16_tflops: float
    fp8_tflops: float | None
    int8_tops: float | None
    int4_tops: float | None
    tdp_w: float | None
    interconnect: str
    interconnect_gbps: float
    form_factor: str
    source: str
    as_of: str
    family: str = ""               # accelerators of one silicon generation, whose fitted efficiencies transfer
    tp_units_per_chip: int = 1     # ranks a chip counts as in the runtime's TP degree (NeuronCores on Neuron)
    link: str = ""                 # the scale-up link collectives run on (finops/catalog/data/links.csv)

    @property
    def pads_heads(self) -> bool:
        """True when the runtime pads attention heads to a multiple of the TP degree instead of requiring it
        to divide them (AWS Neuron: transformers-neuronx and NxD Inference replicate KV heads and pad query
        heads), so any degree shards a model."""
        return self.vendor == "aws"

    @property
    def int8_weight_only(self) -> bool:
        """True when the runtime's INT8 quantizes the weights only and computes in BF16 (AWS Neuron:
        transformers-neuronx and NxD Inference store int8 weights and dequantize them for BF16 matmuls, the
        Neuron benchmark tables' "weight storage int8, autocast Matmult-BF16"), so an INT8 model reads one
        byte a weight but prefills at the BF16 rate, not the chip's INT8 TOPS."""
        return self.vendor == "aws"

    def tflops(self, precision: str) -> float:
        """Dense tensor throughput (TFLOPS or TOPS) for a compute precision.

        FP32/FP16/BF16 run on the 16-bit tensor path; INT4 weight-only kernels compute in 16 bit,
        so ``int4`` returns the BF16 figure, as ``int8`` does where the runtime quantizes weights only
        (:attr:`int8_weight_only`). A precision the device lacks (FP8 on Ampere) raises.

        >>> get_accelerator("inferentia2").tflops("int8"), get_accelerator("a100-80gb").tflops("int8")
        (190.0, 624.0)
        """
        p = precision.lower()
        if p in ("bf16", "fp16", "fp32", "int4") or (p == "int8" and self.int8_weight_only):
            return self.bf16_tflops
        value = {"fp8": self.fp8_tflops, "int8": self.int8_tops}.get(p)
        if value is None:
            raise InputError(f"{self.name} has no {precision.upper()} tensor path",
                             hint="choose bf16, or a GPU with FP8 (Hopper, Ada, Blackwell, MI300)")
        return value

    def supports(self, precision: str) -> bool:
        try:
            self.tflops(precision)
        except InputError:
            return False
        return True


@cache
def accelerators() -> Registry[Accelerator]:
    """All catalog accelerators, by lower-case id, with their aliases."""
    items: dict[str, Accelerator] = {}
    alias_map: dict[str, str] = {}
    for line, row in read_rows(_FILE):
        def num(col: str, _row=row, _line=line):
            return parse(_row[col], float, file=_FILE, line=_line, column=col)
        acc = Accelerator(
            id=row["id"], name=row["name"], vendor=row["vendor"], aliases=tuple(aliases(row["aliases"])),
            memory_gb=num("memory_gb"), memory_gib_usable=num("memory_gib_usable"),
            memory_bandwidth_gbps=num("memory_bandwidth_gbps"), bf16_tflops=num("bf16_tflops"),
            fp8_tflops=num("fp8_tflops"), int8_tops=num("int8_tops"), int4_tops=num("int4_tops"),
            tdp_w=num("tdp_w"), interconnect=row["interconnect"], interconnect_gbps=num("interconnect_gbps"),
            form_factor=row["form_factor"], source=row["source"], as_of=row["as_of"],
            family=row["family"], tp_units_per_chip=int(num("tp_units_per_chip")), link=row["link"],
        )
        items[acc.id] = acc
        alias_map.update({a: acc.id for a in acc.aliases})
    return Registry("GPU", items, alias_map)


def get_accelerator(name: str) -> Accelerator:
    """Resolve an id or alias (``h100``, ``H100_SXM``, ``tpu-v6e``); unknown names list the closest."""
    return accelerators()[name]
