"""Which serving engine runs which accelerator at which weight precision.

A sizing candidate is an (engine, accelerator, precision) that exists: TensorRT-LLM runs on NVIDIA
GPUs only; vLLM on NVIDIA, AMD ROCm, Google TPU and AWS Neuron (vLLM-Neuron); SGLang on NVIDIA and
AMD. Precisions follow each engine's quantization kernels per device (FP8 needs Ada, Hopper or
Blackwell on NVIDIA; TPUs run INT8 but not FP8; Neuron runs FP8 and INT8). The table ships in
``finops/catalog/data/engine_support.json`` with a source and date on every row.

>>> supports("trtllm", "mi300x", "fp8"), supports("vllm", "mi300x", "fp8"), supports("vllm", "tpu-v6e", "fp8")
(False, True, False)
>>> engines_for("inferentia2", "int8")
('vllm',)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..catalog import get_accelerator
from ..errors import InputError

__all__ = ["SupportRow", "check_supported", "engines_for", "support_table", "supports"]


@dataclass(frozen=True)
class SupportRow:
    """One engine on a set of accelerators, at a set of weight precisions."""

    engine: str
    gpus: frozenset[str]
    precisions: frozenset[str]
    source: str
    as_of: str


@cache
def support_table() -> tuple[SupportRow, ...]:
    """The bundled engine/accelerator/precision table."""
    text = resources.files("finops.catalog").joinpath("data", "engine_support.json").read_text(encoding="utf-8")
    return tuple(SupportRow(engine=r["engine"], gpus=frozenset(r["gpus"]), precisions=frozenset(r["precisions"]),
                            source=r["source"], as_of=r["as_of"]) for r in json.loads(text)["rows"])


def supports(engine: str, gpu: str, precision: str) -> bool:
    """True when ``engine`` serves ``precision`` weights on ``gpu`` (a catalog id or alias)."""
    gpu_id = get_accelerator(gpu).id
    return any(r.engine == engine and gpu_id in r.gpus and precision in r.precisions for r in support_table())


def engines_for(gpu: str, precision: str) -> tuple[str, ...]:
    """The engines that serve ``precision`` weights on ``gpu``, in table order."""
    gpu_id = get_accelerator(gpu).id
    found = [r.engine for r in support_table() if gpu_id in r.gpus and precision in r.precisions]
    return tuple(dict.fromkeys(found))


def check_supported(engine: str, gpu: str, precision: str) -> None:
    """Raise an :class:`InputError` naming what does run when ``engine`` cannot serve this combination.

    >>> check_supported("trtllm", "tpu-v5e", "bf16")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: trtllm does not serve bf16 weights on tpu-v5e. Hint: engines for bf16 on tpu-v5e: vllm
    """
    if supports(engine, gpu, precision):
        return
    gpu_id = get_accelerator(gpu).id
    others = engines_for(gpu_id, precision)
    precisions = sorted({p for r in support_table() if r.engine == engine and gpu_id in r.gpus for p in r.precisions})
    hints = []
    if others:
        hints.append(f"engines for {precision} on {gpu_id}: {', '.join(others)}")
    if precisions:
        hints.append(f"{engine} on {gpu_id} serves: {', '.join(precisions)}")
    raise InputError(f"{engine} does not serve {precision} weights on {gpu_id}",
                     hint="; ".join(hints) or f"no engine in the support table serves {precision} on {gpu_id}")
