"""Hourly demand profiles: units of capacity needed each hour, read from CSV or generated from a workload.

The demand CSV has columns ``hour`` (an index 0, 1, 2... or an ISO timestamp, one row per hour with no
gaps) and ``units`` (>= 0, may be fractional). The generator builds a profile from a workload shape:
a diurnal cosine between a night trough and an afternoon peak, quieter weekends, compound growth,
campaign spikes (seed 003's e-commerce promotion runs at 10x) and off-peak shifting of deferrable
batch work into each day's valleys (seed 000's load shaping), which lowers the peak without
changing the day's total.

>>> shape = WorkloadShape(peak_units=10, trough_ratio=0.5, weekend_ratio=1.0)
>>> day = generate_profile(shape, hours=24)
>>> round(float(day.max()), 6), round(float(day.min()), 6), int(day.argmax())
(10.0, 5.0, 14)
>>> shaped = generate_profile(WorkloadShape(peak_units=10, trough_ratio=0.5, weekend_ratio=1.0,
...                                         batch_share=0.2), hours=24)
>>> round(float(shaped.sum()), 6) == round(float(day.sum()), 6), bool(shaped.max() < day.max())
(True, True)
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InputError, Location
from ..files import replacing
from ..outputs import check_replaceable, check_suffix
from ._csv import read_table
from .demand_units import DemandUnit, value_column

__all__ = ["Campaign", "StatedDemand", "WorkloadShape", "generate_profile", "read_demand", "read_demand_csv",
           "shift_batch_off_peak", "write_demand_csv"]

HOURS_PER_DAY = 24
_ENCODING = "utf-8"  # codec names ignore case: a constant, not a literal in a function body


@dataclass(frozen=True)
class Campaign:
    """A spike: demand times ``multiplier`` for ``days`` days from day ``start_day`` (0 = first day)."""

    start_day: int
    days: int
    multiplier: float


@dataclass(frozen=True)
class WorkloadShape:
    """How a workload's hourly demand moves. Hour 0 is a Monday 00:00.

    ``peak_units`` is the weekday peak at the start of the profile; ``trough_ratio`` the night level
    as a share of it; ``annual_growth`` compound growth per 8,760 hours (1.0 doubles in a year);
    ``batch_share`` the share of each day's unit-hours that is deferrable batch work; ``noise`` the
    standard deviation of multiplicative hourly noise (seeded, reproducible).
    """

    peak_units: float
    trough_ratio: float = 0.3
    peak_hour: int = 14
    weekend_ratio: float = 0.7
    annual_growth: float = 0.0
    campaigns: tuple[Campaign, ...] = ()
    batch_share: float = 0.0
    noise: float = 0.0
    seed: int = 0


def generate_profile(shape: WorkloadShape, hours: int = 8760) -> np.ndarray:
    """Hourly units for ``hours`` hours following ``shape``.

    units(t) = peak x [trough + (1 - trough) x (1 + cos(2 pi (h - peak_hour) / 24)) / 2]
    x weekend x (1 + growth)^(t / 8760) x campaign x noise, then batch shifted off-peak per day.
    """
    if (hours <= 0 or shape.peak_units < 0 or not 0 <= shape.trough_ratio <= 1 or not 0 <= shape.batch_share < 1
            or shape.noise < 0):
        raise InputError("a workload shape needs hours > 0, peak_units >= 0, trough_ratio in [0, 1], "
                         "batch_share in [0, 1) and noise >= 0")
    days = -(-hours // HOURS_PER_DAY)
    outside = next((c for c in shape.campaigns if c.start_day >= days), None)
    if outside is not None:  # it would change no hour: the profile the user asked for is not the one written
        raise InputError(f"campaign START_DAY {outside.start_day} is past the profile's {days} days",
                         hint=f"start the campaign on day 0 to {days - 1}, or give more --hours")
    t = np.arange(hours)
    day, hour_of_day = np.divmod(t, HOURS_PER_DAY)
    diurnal = shape.trough_ratio + (1 - shape.trough_ratio) * (
        1 + np.cos(2 * np.pi * (hour_of_day - shape.peak_hour) / HOURS_PER_DAY)) / 2
    weekly = np.where(day % 7 >= 5, shape.weekend_ratio, 1.0)
    growth = (1 + shape.annual_growth) ** (t / 8760)
    units = shape.peak_units * diurnal * weekly * growth
    for campaign in shape.campaigns:
        in_campaign = (day >= campaign.start_day) & (day < campaign.start_day + campaign.days)
        units = np.where(in_campaign, units * campaign.multiplier, units)
    # noise 0 draws factors of exactly 1, batch share 0 shifts nothing: both steps always run
    units = units * np.clip(np.random.default_rng(shape.seed).normal(1.0, shape.noise, hours), 0, None)
    return shift_batch_off_peak(units, shape.batch_share)


def shift_batch_off_peak(units: np.ndarray, batch_share: float) -> np.ndarray:
    """Move ``batch_share`` of each day's unit-hours into that day's valleys (water filling).

    Each hour keeps (1 - share) of its demand; the batch energy B fills the lowest hours up to the
    level L with sum(max(L - kept_t, 0)) = B. Totals per day are unchanged; a trailing partial day is
    shaped on its own hours (a profile shorter than a day is one such part).

    >>> shift_batch_off_peak(np.array([2.0, 10.0]), 0.5).tolist()
    [6.0, 6.0]
    """
    days = len(units) // HOURS_PER_DAY
    whole = days * HOURS_PER_DAY
    parts = [units[:whole].reshape(days, HOURS_PER_DAY)]  # no rows when there is no whole day
    if whole < len(units):
        parts.append(units[None, whole:])
    return np.concatenate([_water_fill(block * (1 - batch_share), block.sum(axis=1) * batch_share).ravel()
                           for block in parts])


def _water_fill(kept: np.ndarray, energy: np.ndarray) -> np.ndarray:
    """Raise each row's lowest values to a common level until ``energy`` (one per row) is spent.

    The level is L = min_k (B + S_k) / k, S_k the sum of the k lowest values: for every k,
    k L - S_k <= sum_t max(L - kept_t, 0) = B, so L <= (B + S_k) / k, with equality for k = the number
    of values below L.
    """
    ordered = np.sort(kept)  # along each row
    count = np.arange(1, ordered.shape[1] + 1)
    level = ((energy[:, None] + np.cumsum(ordered, axis=1)) / count).min(axis=1)
    return np.maximum(kept, level[:, None])


def read_demand_csv(path: str | Path) -> np.ndarray:
    """Read a demand CSV (``hour`` and its units column) into an array of hourly units.

    The units column is named by its unit (``accelerators``, ``gpus``, ``chips``, ``instances``) or
    ``units`` (no unit stated); :func:`read_demand` gives the unit too.

    Hours are consecutive integers or consecutive hourly ISO timestamps; a gap, a repeat, a negative
    hour or a negative unit count fails naming the file, row and column.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "d.csv")
    >>> _ = open(p, "w").write("hour,units\\n2026-01-01T00:00,3\\n2026-01-01T01:00,4.5\\n")
    >>> read_demand_csv(p).tolist()
    [3.0, 4.5]
    """
    return read_demand(path).units


class StatedDemand(NamedTuple):
    """A demand profile and what its header says it counts (``None``: an old ``hour,units`` file)."""

    units: np.ndarray
    unit: DemandUnit | None
    column: str


def read_demand(path: str | Path) -> StatedDemand:
    """Read a demand CSV with the unit its value column states (:mod:`.demand_units`)."""
    path = Path(path)
    units: list[float] = []
    previous: int | datetime | None = None
    rows = read_table(path, "demand", ("hour",))
    column, unit = value_column(list(rows[0][1]), str(path))
    for line, row in rows:
        previous = _hour(row["hour"], Location(file=str(path), row=line, column="hour"), previous)
        units.append(_units(row[column], Location(file=str(path), row=line, column=column)))
    return StatedDemand(np.array(units), unit, column)


def _hour(text: str, where: Location, previous: int | datetime | None) -> int | datetime:
    value: int | datetime
    try:
        value = int(text)
    except ValueError:
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"hour must be an index or an ISO timestamp, got {text!r}", where=where) from None
    if isinstance(value, int) and value < 0:
        raise InputError(f"negative hour {value}", where=where)
    if previous is None:
        return value
    if type(value) is not type(previous):
        raise InputError("hours mix indexes and timestamps", where=where)
    expected = previous + (1 if isinstance(previous, int) else timedelta(hours=1))  # type: ignore[operator]
    if value != expected:
        raise InputError(f"hour {text} does not follow the previous row (expected {_show(expected)}): "
                         "the profile has a gap, a repeat or is out of order", where=where,
                         hint="give one row per hour, in order, with no gaps")
    return value


def _show(value: int | datetime) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _units(text: str, where: Location) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"units must be a number, got {text!r}", where=where) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"units must be a finite number >= 0, got {text!r}", where=where)
    return value


def write_demand_csv(path: str | Path, units: Sequence[float] | np.ndarray, *, decimals: int = 3,
                     hours: Sequence[datetime] | None = None, unit: DemandUnit | None = None) -> Path:
    """Write ``units`` as a demand CSV (whole or not at all), hours as an index or the given timestamps,
    the value column named by ``unit`` (``units`` when none is stated); returns the path."""
    path = Path(path)
    check_suffix(path, (".csv",), "the demand profile is written as CSV")
    check_replaceable(path, "demand CSV")  # a file there that this tool did not write is never replaced
    labels = [h.isoformat() for h in hours] if hours is not None else range(len(units))
    if not np.isfinite(units).all():
        raise InputError("the profile holds a unit count that is not a finite number; nothing was written",
                         where=Location(file=str(path)))
    text = io.StringIO()  # no newline translation: the csv module's \r\n on every platform
    writer = csv.writer(text)
    writer.writerow(["hour", unit or "units"])
    for hour, value in zip(labels, units):
        writer.writerow([hour, np.format_float_positional(float(value), precision=decimals, unique=False, trim="-")])
    with replacing(path) as temporary:
        temporary.write_bytes(text.getvalue().encode(_ENCODING))
    return path
