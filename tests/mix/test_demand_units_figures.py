"""What a demand counts: the value column's name, ``--demand-unit`` against it, and GPUs bought as whole machines."""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import InputError, Location
from finops.mix.demand_units import (
    DEMAND_UNITS,
    UNIT_COLUMNS,
    in_instances,
    instances_needed,
    peak_to_average,
    resolve_unit,
    value_column,
)

HINT = ("name one column hour and one by its unit: accelerators (or gpus, chips) or instances; 'units' is read as "
        "before, with no unit stated")


def test_the_unit_names():
    assert DEMAND_UNITS == ("accelerators", "instances")
    assert UNIT_COLUMNS == {"accelerators": "accelerators", "gpus": "accelerators", "chips": "accelerators",
                            "instances": "instances", "units": None}


@pytest.mark.parametrize("header, expected", [
    (["hour", "gpus"], ("gpus", "accelerators")), (["hour", " Chips "], (" Chips ", "accelerators")),
    (["INSTANCES", "hour", "note"], ("INSTANCES", "instances")), (["hour", "units"], ("units", None)),
])
def test_the_value_column_and_its_unit(header, expected):
    assert value_column(header, "d.csv") == expected


@pytest.mark.parametrize("header, what", [
    (["hour", "load"], "no column of units"),
    (["hour", "gpus", "instances"], "2 columns of units (gpus, instances)"),
    (["hour", "gpus", "units", "chips"], "3 columns of units (gpus, units, chips)"),
])
def test_a_header_without_one_value_column_is_refused(header, what):
    with pytest.raises(InputError) as caught:
        value_column(header, "d.csv")
    assert caught.value.message == f"the demand has {what}" and caught.value.hint == HINT
    assert caught.value.where == Location(file="d.csv", row=1, column="units")


@pytest.mark.parametrize("stated, asked, expected", [
    ("accelerators", None, "accelerators"), (None, "instances", "instances"), (None, None, None),
    ("instances", "instances", "instances"),
])
def test_the_unit_is_the_files_or_the_one_asked(stated, asked, expected):
    assert resolve_unit(stated, asked, "d.csv", "gpus") == expected


def test_an_unknown_or_disagreeing_unit_is_refused():
    with pytest.raises(InputError) as caught:
        resolve_unit(None, "machines", "d.csv", "units")
    assert caught.value.message == "unknown demand unit 'machines'"
    assert caught.value.hint == "use one of: accelerators, instances"
    with pytest.raises(InputError) as caught:
        resolve_unit("accelerators", "instances", "d.csv", "gpus")
    assert caught.value.message == ("--demand-unit instances disagrees with the demand file, whose column 'gpus' "
                                    "counts accelerators")
    assert caught.value.hint == "drop --demand-unit (the file says accelerators) or fix the file's header"
    assert caught.value.where == Location(file="d.csv", row=1, column="gpus")


def test_accelerators_become_whole_instances_hour_by_hour():
    # 9 GPUs need two 8-GPU machines; 16.0000000001 (a float sum of fractions) is still two
    assert instances_needed([8, 9, 16.5, 0, 16.0000000001, 7.9999999999], accelerators_per_instance=8).tolist() == [
        1.0, 2.0, 3.0, 0.0, 2.0, 1.0]
    assert instances_needed([3], accelerators_per_instance=1).tolist() == [3.0]
    assert in_instances([9, 17], "accelerators", accelerators_per_instance=8).tolist() == [2.0, 3.0]
    assert in_instances([9, 17.5], "instances", accelerators_per_instance=8).tolist() == [9.0, 17.5]
    assert in_instances([9, 17], "instances", accelerators_per_instance=8).dtype == np.float64


def test_float_noise_below_a_billionth_of_a_machine_is_not_a_machine():
    """16.0000000032 GPUs (a sum of fractional GPU-hours) are 2.0000000004 machines: two, rounded at 9 places."""
    assert instances_needed([16.0000000032, 16.000000008], accelerators_per_instance=8).tolist() == [2.0, 3.0]


def test_decimal_counts_as_a_spreadsheet_gives_them():
    assert instances_needed([Decimal("9"), Decimal("16.5")], accelerators_per_instance=8).tolist() == [2.0, 3.0]
    assert peak_to_average([Decimal(2), Decimal(4), Decimal(6), Decimal(4)]) == 1.5


def test_bad_conversions_are_refused():
    with pytest.raises(InputError) as caught:
        instances_needed([8], accelerators_per_instance=0)
    assert caught.value.message == "accelerators per instance must be >= 1, got 0"
    with pytest.raises(InputError) as caught:
        in_instances([8], "gpu-hours", accelerators_per_instance=8)
    assert caught.value.message == "unknown demand unit 'gpu-hours'"
    assert caught.value.hint == "use one of: accelerators, instances"


def test_peak_to_average():
    assert peak_to_average([2, 4, 6, 4]) == 1.5 and peak_to_average(np.array([3.0])) == 1.0
    assert peak_to_average([0.2, 0.6]) == pytest.approx(1.5)          # an average below one unit is demand
    for empty, file in (([0, 0], "d.csv"), ([], None)):
        with pytest.raises(InputError) as caught:
            peak_to_average(empty, file)
        assert caught.value.message == "the demand profile has no demand: its average hour is 0"
        assert caught.value.hint == "give a profile with some demand"
        assert caught.value.where == (Location(file="d.csv") if file else None)
