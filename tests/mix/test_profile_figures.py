"""Generated profiles at hours worked by hand from the formula of ``generate_profile``'s docstring,
off-peak shifting by water filling worked by hand, and the demand CSV read and written byte for byte.

units(t) = peak x [trough + (1 - trough) x (1 + cos(2 pi (h - peak_hour) / 24)) / 2] x weekend
x (1 + growth)^(t / 8760) x campaign x noise; hour 0 is a Monday 00:00.
"""

import math
from datetime import datetime

import numpy as np
import pytest

from finops.errors import InputError, Location
from finops.mix.profile import (
    Campaign,
    WorkloadShape,
    generate_profile,
    read_demand,
    read_demand_csv,
    shift_batch_off_peak,
    write_demand_csv,
)


def diurnal(trough, hour, peak_hour=14):
    return trough + (1 - trough) * (1 + math.cos(2 * math.pi * (hour - peak_hour) / 24)) / 2


@pytest.mark.parametrize("hour, expected", [
    (14, 10.0),                 # Monday's peak
    (2, 3.0),                   # twelve hours from the peak: the trough, 0.3 x 10
    (8, 6.5),                   # six hours before: 0.3 + 0.7 x 0.5
    (20, 6.5),
    (4 * 24 + 14, 10.0),        # Friday
    (5 * 24 + 14, 7.0),         # Saturday at the weekend ratio
    (6 * 24 + 2, 2.1),          # Sunday night: 0.7 x 3
    (7 * 24 + 14, 10.0),        # Monday again
])
def test_the_diurnal_and_weekly_shape(hour, expected):
    week = generate_profile(WorkloadShape(peak_units=10), 8 * 24)
    assert week[hour] == pytest.approx(expected, rel=1e-12)
    assert len(week) == 8 * 24


def test_the_peak_hour_moves_the_peak():
    day = generate_profile(WorkloadShape(peak_units=4, trough_ratio=0.5, peak_hour=9), 24)
    assert int(day.argmax()) == 9 and day[9] == pytest.approx(4) and day[21] == pytest.approx(2)
    assert day[3] == pytest.approx(4 * diurnal(0.5, 3, peak_hour=9))


def test_growth_compounds_per_8760_hours():
    hours = 2 * 8760
    grown = generate_profile(WorkloadShape(peak_units=10, annual_growth=0.21), hours)
    flat = generate_profile(WorkloadShape(peak_units=10), hours)
    for t in (0, 4380, 8760, 13140, hours - 1):
        assert grown[t] == pytest.approx(flat[t] * 1.21 ** (t / 8760), rel=1e-12)
    assert grown[4380] / flat[4380] == pytest.approx(1.1, rel=1e-12)


def test_campaigns_multiply_their_days_only():
    shape = WorkloadShape(peak_units=10, weekend_ratio=1.0,
                          campaigns=(Campaign(start_day=2, days=3, multiplier=10.0), Campaign(4, 1, 2.0)))
    promo = generate_profile(shape, 7 * 24)
    plain = generate_profile(WorkloadShape(peak_units=10, weekend_ratio=1.0), 7 * 24)
    factors = [round(float(promo[d * 24 + 14] / plain[d * 24 + 14]), 9) for d in range(7)]
    assert factors == [1.0, 1.0, 10.0, 10.0, 20.0, 1.0, 1.0]
    assert promo[2 * 24] / plain[2 * 24] == pytest.approx(10) and promo[5 * 24 - 1] / plain[5 * 24 - 1] == pytest.approx(20)


def test_noise_is_seeded_multiplicative_and_never_negative():
    plain = generate_profile(WorkloadShape(peak_units=10), 500)
    noisy = generate_profile(WorkloadShape(peak_units=10, noise=0.1, seed=3), 500)
    factors = np.random.default_rng(3).normal(1.0, 0.1, 500)
    assert noisy == pytest.approx(plain * factors, rel=1e-12)
    wild = generate_profile(WorkloadShape(peak_units=10, noise=2.0, seed=5), 500)
    draws = np.random.default_rng(5).normal(1.0, 2.0, 500)
    assert wild == pytest.approx(plain * np.maximum(draws, 0.0), rel=1e-12, abs=1e-12)
    assert (wild == 0).sum() == (draws <= 0).sum() > 50
    assert generate_profile(WorkloadShape(peak_units=10, noise=0.0, seed=9), 500).tolist() == plain.tolist()


def test_a_generated_batch_share_is_shifted_within_each_day():
    shape = WorkloadShape(peak_units=10, trough_ratio=0.2, batch_share=0.25)
    shaped = generate_profile(shape, 48)
    plain = generate_profile(WorkloadShape(peak_units=10, trough_ratio=0.2), 48)
    assert shaped.tolist() == shift_batch_off_peak(plain, 0.25).tolist()
    assert shaped.max() < plain.max()


@pytest.mark.parametrize("fields, hours", [
    ({"peak_units": 1}, 0), ({"peak_units": -1}, 24), ({"peak_units": 1, "trough_ratio": -0.1}, 24),
    ({"peak_units": 1, "trough_ratio": 1.1}, 24), ({"peak_units": 1, "batch_share": 1.0}, 24),
    ({"peak_units": 1, "batch_share": -0.1}, 24), ({"peak_units": 1, "noise": -0.1}, 24),
])
def test_impossible_shapes_are_refused(fields, hours):
    with pytest.raises(InputError) as caught:
        generate_profile(WorkloadShape(**fields), hours)
    assert caught.value.message == ("a workload shape needs hours > 0, peak_units >= 0, trough_ratio in [0, 1], "
                                    "batch_share in [0, 1) and noise >= 0")


def test_the_edges_of_each_range_are_allowed():
    assert generate_profile(WorkloadShape(peak_units=0, trough_ratio=0.0), 1).tolist() == [0.0]
    assert generate_profile(WorkloadShape(peak_units=2, trough_ratio=1.0, batch_share=0.0), 2).tolist() == [2.0, 2.0]


def test_water_filling_worked_by_hand():
    # a 24-hour day: 12 hours at 2, 12 at 10 (144 unit-hours). Share 0.5 keeps 1 and 5, and 72 unit-hours
    # fill the night to L with 12 (L - 1) = 72 - 0 -> L = 7 (above the 5 of the day: everything at 6)
    day = np.r_[np.full(12, 2.0), np.full(12, 10.0)]
    assert shift_batch_off_peak(day, 0.5).tolist() == [6.0] * 24
    # share 0.25 keeps 1.5 and 7.5, and 36 unit-hours fill the night: 12 (L - 1.5) = 36 -> L = 4.5 < 7.5
    assert shift_batch_off_peak(day, 0.25).tolist() == [4.5] * 12 + [7.5] * 12
    # share 0 moves nothing
    assert shift_batch_off_peak(day, 0.0).tolist() == day.tolist()


def test_each_day_and_a_trailing_part_are_filled_on_their_own():
    two_days = np.r_[np.full(12, 2.0), np.full(12, 10.0), np.full(12, 4.0), np.full(12, 8.0)]
    tail = np.array([1.0, 3.0, 8.0])
    shaped = shift_batch_off_peak(np.r_[two_days, tail], 0.25)
    # day 2 keeps 3 and 6 and fills 36 unit-hours: 12 (L - 3) = 36 -> L = 6: flat at 6
    # tail keeps 0.75, 2.25, 6 and fills 3: 2 L - 3 = 3 -> L = 3 (below 6)
    assert shaped.tolist() == [4.5] * 12 + [7.5] * 12 + [6.0] * 24 + [3.0, 3.0, 6.0]
    assert shift_batch_off_peak(tail, 0.25).tolist() == [3.0, 3.0, 6.0]   # shorter than a day: one part
    assert shift_batch_off_peak(np.full(24, 5.0), 0.4).tolist() == [5.0] * 24


def write(tmp_path, text, name="demand.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_demand_csv_is_written_byte_for_byte(tmp_path):
    path = write_demand_csv(tmp_path / "d.csv", [0.0, 1.25, 3.3336, 12345.0, 0.5, 2.0004])
    assert path == tmp_path / "d.csv"
    assert path.read_bytes() == b"hour,units\r\n0,0\r\n1,1.25\r\n2,3.334\r\n3,12345\r\n4,0.5\r\n5,2\r\n"
    hours = [datetime(2026, 5, 1, 23), datetime(2026, 5, 2, 0)]
    stamped = write_demand_csv(tmp_path / "t.csv", [8, 16.5], hours=hours, unit="accelerators", decimals=0)
    assert stamped.read_bytes() == b"hour,accelerators\r\n2026-05-01T23:00:00,8\r\n2026-05-02T00:00:00,16\r\n"
    assert read_demand(stamped).units.tolist() == [8.0, 16.0]


def test_a_profile_with_a_bad_number_writes_nothing(tmp_path):
    target = tmp_path / "d.csv"
    with pytest.raises(InputError) as caught:
        write_demand_csv(target, [1.0, float("nan")])
    assert caught.value.message == ("the profile holds a unit count that is not a finite number; nothing was "
                                    "written")
    assert caught.value.where == Location(file=str(target)) and not target.exists()
    with pytest.raises(InputError):
        write_demand_csv(target, [float("inf")])


@pytest.mark.parametrize("text, expected, unit, column", [
    ("hour,units\n0,1\n1,2.5\n2,0\n", [1.0, 2.5, 0.0], None, "units"),
    ("hour,GPUs\n7,1\n8,2\n", [1.0, 2.0], "accelerators", "GPUs"),
    ("hour,instances\n2026-03-29T00:00,1\n2026-03-29T01:00,2\n2026-03-29T02:00,3\n", [1.0, 2.0, 3.0], "instances",
     "instances"),
    ("hour,units\n2026-12-31T23:00,1\n2027-01-01T00:00,2\n", [1.0, 2.0], None, "units"),
    ("hour,units\n0,1e2\n", [100.0], None, "units"),
])
def test_demand_files_that_read(tmp_path, text, expected, unit, column):
    stated = read_demand(write(tmp_path, text))
    assert stated.units.tolist() == expected and stated.unit == unit and stated.column == column
    assert read_demand_csv(write(tmp_path, text)).tolist() == expected


@pytest.mark.parametrize("text, row, column, message, hint", [
    ("hour,units\nnoon,1\n", 2, "hour", "hour must be an index or an ISO timestamp, got 'noon'", None),
    ("hour,units\n-3,1\n", 2, "hour", "negative hour -3", None),
    ("hour,units\n0,1\n2026-01-01T00:00,1\n", 3, "hour", "hours mix indexes and timestamps", None),
    ("hour,units\n2026-01-01T00:00,1\n1,1\n", 3, "hour", "hours mix indexes and timestamps", None),
    ("hour,units\n4,1\n5,1\n7,1\n", 4, "hour",
     "hour 7 does not follow the previous row (expected 6): the profile has a gap, a repeat or is out of order",
     "give one row per hour, in order, with no gaps"),
    ("hour,units\n2026-01-01T00:00,1\n2026-01-01T00:30,1\n", 3, "hour",
     "hour 2026-01-01T00:30 does not follow the previous row (expected 2026-01-01T01:00:00): the profile has a "
     "gap, a repeat or is out of order", "give one row per hour, in order, with no gaps"),
    ("hour,units\n0,1\n1,lots\n", 3, "units", "units must be a number, got 'lots'", None),
    ("hour,units\n0,-0.5\n", 2, "units", "units must be a finite number >= 0, got '-0.5'", None),
    ("hour,units\n0,inf\n", 2, "units", "units must be a finite number >= 0, got 'inf'", None),
    ("hour,units\n0,nan\n", 2, "units", "units must be a finite number >= 0, got 'nan'", None),
])
def test_bad_rows_name_the_file_row_and_column(tmp_path, text, row, column, message, hint):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_demand_csv(path)
    assert caught.value.message == message and caught.value.hint == hint
    assert caught.value.where == Location(file=str(path), row=row, column=column)


def test_hour_zero_and_zero_units_are_read():
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "d.csv"
    path.write_text("hour,units\n0,0\n1,0\n", encoding="utf-8")
    assert read_demand_csv(path).tolist() == [0.0, 0.0]


def test_a_year_of_hours_by_default():
    year = generate_profile(WorkloadShape(peak_units=1))
    assert len(year) == 8760 and year.tolist() == generate_profile(WorkloadShape(peak_units=1), 8760).tolist()


def test_whole_numbers_keep_their_zeros_at_any_precision(tmp_path):
    """With decimals=0, 10 and 0 were written as '1' and '' (trailing zeros stripped from a whole number)."""
    path = write_demand_csv(tmp_path / "d.csv", [10.0, 0.0, 16.4, 100.0, 7.6], decimals=0)
    assert path.read_bytes() == b"hour,units\r\n0,10\r\n1,0\r\n2,16\r\n3,100\r\n4,8\r\n"
    path = write_demand_csv(tmp_path / "e.csv", [10.0, 100.5, 0.25], decimals=1)
    assert path.read_bytes() == b"hour,units\r\n0,10\r\n1,100.5\r\n2,0.2\r\n"


@pytest.mark.parametrize("text, row, column, message, hint", [
    ("time,units\n0,1\n", 1, "hour", "missing column 'hour'", "the demand CSV needs columns hour"),
    ("hour,units\n", None, None, "demand file has no rows", None),
])
def test_a_demand_file_without_hours_is_named(tmp_path, text, row, column, message, hint):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_demand(path)
    assert caught.value.message == message and caught.value.hint == hint
    assert caught.value.where == Location(file=str(path), row=row, column=column)


def test_many_decimals_write_the_binary_value_digit_for_digit(tmp_path):
    """decimals=20 writes 0.1 as the double holds it, as Python's '%.20f' does, not as its shortest repr."""
    path = write_demand_csv(tmp_path / "d.csv", [0.1], decimals=20)
    assert path.read_text().splitlines()[1] == "0," + f"{0.1:.20f}".rstrip("0") == "0,0.10000000000000000555"
