"""Reading demand and options files: good files parse, bad ones name the file, row and column."""

import json
from decimal import Decimal

import numpy as np
import pytest

from finops.errors import CurrencyMismatchError, InputError, UnknownNameError
from finops.mix import (
    Campaign,
    MixOption,
    WorkloadShape,
    check_options,
    generate_profile,
    read_demand_csv,
    read_options_csv,
    write_demand_csv,
)
from finops.mix.profile import shift_batch_off_peak


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, expected", [
    ("hour,units\n0,1\n1,2.5\n2,0\n", [1.0, 2.5, 0.0]),
    ("units,hour,note\n3,5,x\n4,6,y\n", [3.0, 4.0]),
    ("hour,units\n2026-03-29T00:00,1\n2026-03-29T01:00,2\n", [1.0, 2.0]),
    ("hour,units\n0,1\n\n1,2\n", [1.0, 2.0]),
])
def test_demand_files_that_parse(tmp_path, text, expected):
    assert read_demand_csv(write(tmp_path, "d.csv", text)).tolist() == expected


@pytest.mark.parametrize("text, row, column, words", [
    ("time,units\n0,1\n", 1, "hour", "missing column 'hour'"),
    ("hour,load\n0,1\n", 1, "units", "no column of units"),
    ("hour,gpus,instances\n0,8,1\n", 1, "units", "2 columns of units (gpus, instances)"),
    ("hour,gpus\n0,-1\n", 2, "gpus", ">= 0"),
    ("hour,units\n-1,1\n", 2, "hour", "negative hour"),
    ("hour,units\n0,1\n1,2\n3,2\n", 4, "hour", "gap"),
    ("hour,units\n0,1\n0,2\n", 3, "hour", "gap"),
    ("hour,units\n2026-01-01T00:00,1\n2026-01-01T02:00,2\n", 3, "hour", "gap"),
    ("hour,units\n0,1\n1,-2\n", 3, "units", ">= 0"),
    ("hour,units\n0,many\n", 2, "units", "must be a number"),
    ("hour,units\n0,nan\n", 2, "units", "finite"),
    ("hour,units\nnoon,1\n", 2, "hour", "ISO timestamp"),
])
def test_bad_demand_names_file_row_and_column(tmp_path, text, row, column, words):
    path = write(tmp_path, "demand.csv", text)
    with pytest.raises(InputError) as caught:
        read_demand_csv(path)
    assert caught.value.where.file == str(path)
    assert (caught.value.where.row, caught.value.where.column) == (row, column)
    assert words in str(caught.value)


def test_options_file_parses_every_column(tmp_path):
    path = write(tmp_path, "o.csv", "name,kind,hourly_cost,variable_cost,upfront,term_hours,max_share,max_units,"
                                    "availability,currency\n"
                                    "own,owned,1.60,0.25,50000,,,16,,usd\nod,On-Demand,6.88,,,,,,,USD\n"
                                    "sp,spot,2.75,,,,0.3,,0.9,USD\nri,RI,4.30,,,8760,,,,USD\n")
    own, od, spot, ri = read_options_csv(path)
    assert own == MixOption("own", "owned", Decimal("1.60"), "USD", Decimal("0.25"), Decimal(50000), None, None, 16)
    assert (od.kind, spot.max_share, spot.availability, ri.kind, ri.term_hours) == (
        "on_demand", 0.3, 0.9, "reserved", 8760)


@pytest.mark.parametrize("text, row, column, error", [
    ("name,kind\nod,on_demand\n", 1, "hourly_cost", InputError),
    ("name,kind,hourly_cost\nod,on_demnd,1\n", 2, "kind", InputError),
    ("name,kind,hourly_cost\nod,on_demand,cheap\n", 2, "hourly_cost", InputError),
    ("name,kind,hourly_cost\nod,on_demand,-1\n", 2, "hourly_cost", InputError),
    ("name,kind,hourly_cost,max_share\nsp,spot,1,1.5\n", 2, "max_share", InputError),
    ("name,kind,hourly_cost,max_units\nri,reserved,1,2.5\n", 2, "max_units", InputError),
    ("name,kind,hourly_cost,max_share\nri,reserved,1,0.5\n", 2, "max_share", InputError),
    ("name,kind,hourly_cost,variable_cost\nod,on_demand,1,0.5\n", 2, "variable_cost", InputError),
])
def test_bad_options_name_file_row_and_column(tmp_path, text, row, column, error):
    path = write(tmp_path, "options.csv", text)
    with pytest.raises(error) as caught:
        read_options_csv(path)
    assert (caught.value.where.file, caught.value.where.row, caught.value.where.column) == (str(path), row, column)


def test_a_typo_in_kind_suggests_the_right_one(tmp_path):
    with pytest.raises(UnknownNameError, match="did you mean: on_demand"):
        read_options_csv(write(tmp_path, "o.csv", "name,kind,hourly_cost\nod,on_demnd,1\n"))


@pytest.mark.parametrize("text, hours, row, column, error", [
    ("name,kind,hourly_cost,currency\nod,on_demand,6,USD\nri,reserved,4,EUR\n", 10, 3, "currency",
     CurrencyMismatchError),
    ("name,kind,hourly_cost,term_hours\nod,on_demand,6,\nri,reserved,4,8760\n", 100, 3, "term_hours", InputError),
    ("name,kind,hourly_cost\nri,reserved,4\n", 10, 2, "kind", InputError),
    ("name,kind,hourly_cost\nod,on_demand,6\nod,reserved,4\n", 10, 3, "name", InputError),
    ("name,kind,hourly_cost,variable_cost\nod,on_demand,6,\nown,owned,1,7\n", 10, 3, "variable_cost", InputError),
])
def test_options_that_do_not_fit_together(tmp_path, text, hours, row, column, error):
    options = read_options_csv(write(tmp_path, "o.csv", text))
    with pytest.raises(error) as caught:
        check_options(options, hours=hours)
    assert (caught.value.where.row, caught.value.where.column) == (row, column)


def test_generated_profile_shape():
    flat = WorkloadShape(peak_units=10, trough_ratio=0.5, weekend_ratio=0.5)
    week = generate_profile(flat, 24 * 7)
    assert week[14] == pytest.approx(10) and week[2] == pytest.approx(5)
    assert week[5 * 24 + 14] == pytest.approx(5)                 # Saturday afternoon at half
    grown = generate_profile(WorkloadShape(peak_units=10, annual_growth=1.0), 8760 + 24)
    assert grown[8760 + 14] == pytest.approx(2 * grown[14])      # doubles in a year
    promo = generate_profile(WorkloadShape(peak_units=10, campaigns=(Campaign(3, 2, 10.0),)), 24 * 7)
    plain = generate_profile(WorkloadShape(peak_units=10), 24 * 7)
    assert promo[3 * 24 + 14] == pytest.approx(10 * plain[3 * 24 + 14])
    assert promo[5 * 24 + 14] == pytest.approx(plain[5 * 24 + 14])
    noisy = generate_profile(WorkloadShape(peak_units=10, noise=0.1, seed=3), 100)
    assert noisy.tolist() == generate_profile(WorkloadShape(peak_units=10, noise=0.1, seed=3), 100).tolist()


def test_off_peak_shifting_keeps_daily_totals_and_cuts_the_peak():
    days = generate_profile(WorkloadShape(peak_units=10, trough_ratio=0.2), 24 * 3 + 5)
    shaped = shift_batch_off_peak(days, 0.3)
    assert shaped[:72].reshape(3, 24).sum(axis=1) == pytest.approx(days[:72].reshape(3, 24).sum(axis=1))
    assert shaped[72:].sum() == pytest.approx(days[72:].sum())
    assert shaped.max() < days.max() and shaped.min() > days.min()
    assert np.all(shaped >= (1 - 0.3) * days - 1e-12)


def test_write_then_read_round_trip(tmp_path):
    values = np.array([0.0, 1.25, 3.3333333, 12345.678])
    path = write_demand_csv(tmp_path / "d.csv", values)
    assert read_demand_csv(path).tolist() == [0.0, 1.25, 3.333, 12345.678]


# ---- a demand states its unit -------------------------------------------------------------------------
@pytest.mark.parametrize("column, unit", [
    ("accelerators", "accelerators"), ("gpus", "accelerators"), ("Chips", "accelerators"),
    ("instances", "instances"), ("units", None),     # an old file: readable, no unit stated
])
def test_the_value_column_names_the_unit(tmp_path, column, unit):
    from finops.mix.profile import read_demand

    stated = read_demand(write(tmp_path, "d.csv", f"hour,{column}\n0,8\n1,9\n"))
    assert stated.units.tolist() == [8.0, 9.0] and stated.unit == unit and stated.column == column


@pytest.mark.parametrize("unit", ["accelerators", "instances", None])
def test_write_names_the_column_by_its_unit(tmp_path, unit):
    from finops.mix.profile import read_demand

    path = write_demand_csv(tmp_path / "d.csv", [1, 2], unit=unit)
    assert path.read_text().splitlines()[0] == f"hour,{unit or 'units'}"
    assert read_demand(path).unit == unit


def _mix(capsys, demand, *args):
    from finops.cli import main

    code = main(["mix", "--demand", str(demand), "--provider", "gcp", "--instance-type", "a3-highgpu-8g",
                 "--region", "us-central1", "--no-compare", "--json", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_mix_converts_a_demand_by_the_unit_its_file_states(tmp_path, capsys, monkeypatch):
    """9 and 16.5 GPUs on 8-GPU a3-highgpu-8g machines are ceil(9 / 8) = 2 and ceil(16.5 / 8) = 3 machines;
    the same numbers counted as instances are 9 and 17 (16.5 bought whole) machines."""
    from finops.price_book import PRICE_BOOK_ENV, PriceBook

    monkeypatch.delenv(PRICE_BOOK_ENV, raising=False)
    hourly = float(PriceBook.current().lookup("gcp", "a3-highgpu-8g", "on_demand", "us-central1").hourly_cost)
    body = "0,9\n1,16.5\n"
    for column, machines in (("gpus", 2 + 3), ("accelerators", 2 + 3)):
        code, out, _ = _mix(capsys, write(tmp_path, f"{column}.csv", f"hour,{column}\n{body}"))
        assert code == 0
        assert float(json.loads(out)["on_demand_only_cost"]) == pytest.approx(hourly * machines,
                                                                                          abs=0.005)
    old = write(tmp_path, "old.csv", f"hour,units\n{body}")
    code, out, _ = _mix(capsys, old, "--demand-unit", "accelerators")      # an old file with the override
    assert code == 0
    assert float(json.loads(out)["on_demand_only_cost"]) == pytest.approx(hourly * 5, abs=0.005)
    code, _, err = _mix(capsys, old)                                        # an old file alone: never guessed
    assert code == 2 and "--demand-unit is needed" in err and "'units'" in err


def test_a_demand_unit_that_disagrees_with_the_file_exits_2_naming_the_header(tmp_path, capsys):
    path = write(tmp_path, "demand.csv", "hour,gpus\n0,9\n")
    code, out, err = _mix(capsys, path, "--demand-unit", "instances")
    assert code == 2 and out == ""
    assert f"{path}, row 1, column gpus" in err and "disagrees" in err and "counts accelerators" in err
    code, _, err = _mix(capsys, path, "--demand-unit", "machines")
    assert code == 2 and "unknown demand unit 'machines'" in err


@pytest.mark.parametrize("args, header", [([], "hour,accelerators"), (["--unit", "instances"], "hour,instances")])
def test_mix_generate_writes_its_unit(tmp_path, capsys, args, header):
    from finops.cli import main

    out = tmp_path / "demand.csv"
    assert main(["mix", "generate", "--peak", "4", "--hours", "3", "--out", str(out), *args]) == 0
    assert out.read_text().splitlines()[0] == header
    assert main(["mix", "generate", "--peak", "4", "--hours", "3", "--out", str(tmp_path / "x.csv"),
                 "--unit", "gpu-hours"]) == 2
    assert not (tmp_path / "x.csv").exists()
