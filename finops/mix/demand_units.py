"""The unit a demand profile counts: accelerators (GPUs or chips) or instances, and the conversion.

A demand CSV states its unit by the name of its value column (:data:`UNIT_COLUMNS`): ``hour,accelerators``
(or ``gpus``, ``chips``) or ``hour,instances``. Files written before units were declared have
``hour,units``: they stay readable, with no unit stated, and a conversion then needs ``--demand-unit``.
A ``--demand-unit`` given with a file that states its own must agree with it (:func:`resolve_unit`).

Options priced from the price book are per instance-hour, so a demand counted in accelerators becomes
whole instances hour by hour: ``instances = ceil(accelerators / accelerators_per_instance)`` (an
instance is bought whole; 9 GPUs need two 8-GPU machines).

>>> instances_needed([8, 9, 16.5, 0], accelerators_per_instance=8).tolist()
[1.0, 2.0, 3.0, 0.0]
>>> value_column(["hour", "gpus"], "demand.csv")
('gpus', 'accelerators')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from ..errors import InputError, Location

__all__ = ["DEMAND_UNITS", "UNIT_COLUMNS", "DemandUnit", "in_instances", "instances_needed", "peak_to_average",
           "resolve_unit", "value_column"]

DemandUnit = Literal["accelerators", "instances"]
DEMAND_UNITS: tuple[str, ...] = get_args(DemandUnit)

#: A demand CSV's value column -> the unit it states (``units``: none, the format before units were declared).
UNIT_COLUMNS: dict[str, DemandUnit | None] = {"accelerators": "accelerators", "gpus": "accelerators",
                                              "chips": "accelerators", "instances": "instances", "units": None}


def value_column(header: Sequence[str], file: str) -> tuple[str, DemandUnit | None]:
    """The one value column of a demand CSV's ``header`` and the unit its name states."""
    found = [name for name in header if name.strip().lower() in UNIT_COLUMNS]
    if len(found) != 1:
        what = "no column of units" if not found else f"{len(found)} columns of units ({', '.join(found)})"
        raise InputError(f"the demand has {what}", where=Location(file=file, row=1, column="units"),
                         hint="name one column hour and one by its unit: accelerators (or gpus, chips) or "
                              "instances; 'units' is read as before, with no unit stated")
    return found[0], UNIT_COLUMNS[found[0].strip().lower()]


def resolve_unit(stated: DemandUnit | None, asked: str | None, file: str, column: str) -> DemandUnit | None:
    """The demand's unit: the file's own, or ``--demand-unit`` where the file states none; the two must agree."""
    if asked is not None and asked not in DEMAND_UNITS:
        raise InputError(f"unknown demand unit {asked!r}", hint=f"use one of: {', '.join(DEMAND_UNITS)}")
    if stated is not None and asked is not None and asked != stated:
        raise InputError(f"--demand-unit {asked} disagrees with the demand file, whose column {column!r} counts "
                         f"{stated}", where=Location(file=file, row=1, column=column),
                         hint=f"drop --demand-unit (the file says {stated}) or fix the file's header")
    return stated or asked  # type: ignore[return-value]


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


def peak_to_average(demand: Sequence[float] | np.ndarray, file: str | None = None) -> float:
    """A profile's peak over its average hour (the Mix sheet's "Peak / average"), whatever its unit.

    >>> peak_to_average([2, 4, 6, 4])
    1.5
    """
    values = np.asarray(demand)  # ints, floats or Decimals: the ratio is the same
    mean = float(values.mean()) if values.size else 0.0
    if mean <= 0:
        raise InputError("the demand profile has no demand: its average hour is 0",
                         where=Location(file=file) if file else None, hint="give a profile with some demand")
    return float(values.max()) / mean
