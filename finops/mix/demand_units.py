"""The unit a demand profile counts: accelerators (GPUs or chips) or instances, and the conversion.

Options priced from the price book are per instance-hour, so a demand counted in accelerators becomes
whole instances hour by hour: ``instances = ceil(accelerators / accelerators_per_instance)`` (an
instance is bought whole; 9 GPUs need two 8-GPU machines).

>>> instances_needed([8, 9, 16.5, 0], accelerators_per_instance=8).tolist()
[1.0, 2.0, 3.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from ..errors import InputError

__all__ = ["DEMAND_UNITS", "DemandUnit", "in_instances", "instances_needed"]

DemandUnit = Literal["accelerators", "instances"]
DEMAND_UNITS: tuple[str, ...] = get_args(DemandUnit)


def instances_needed(accelerators: Sequence[float] | np.ndarray, *, accelerators_per_instance: int) -> np.ndarray:
    """Whole instances per hour for a demand counted in accelerators."""
    if accelerators_per_instance < 1:
        raise InputError(f"accelerators per instance must be >= 1, got {accelerators_per_instance}")
    return np.ceil(np.round(np.asarray(accelerators, dtype=float) / accelerators_per_instance, 9))


def in_instances(demand: Sequence[float] | np.ndarray, unit: str, *, accelerators_per_instance: int) -> np.ndarray:
    """A demand in ``unit`` (see :data:`DEMAND_UNITS`) as instances per hour."""
    if unit not in DEMAND_UNITS:
        raise InputError(f"unknown demand unit {unit!r}", hint=f"use one of: {', '.join(DEMAND_UNITS)}")
    if unit == "instances":
        return np.asarray(demand, dtype=float)
    return instances_needed(demand, accelerators_per_instance=accelerators_per_instance)
