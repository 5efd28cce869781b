"""Mix options: every rule's message, where it points (file, row, column) and hint; spot caps worked by hand."""

from decimal import Decimal

import numpy as np
import pytest

from finops.errors import CurrencyMismatchError, InputError, Location, UnknownNameError
from finops.mix.options import COMMITTED_KINDS, MixOption, check_options, read_options_csv

OD = MixOption("od", "on_demand", Decimal(10))


@pytest.mark.parametrize("fields, column, message", [
    ({"kind": "leased"}, "kind", "unknown kind 'leased'"),
    ({"hourly_cost": Decimal(-1)}, "hourly_cost", "hourly_cost must be >= 0"),
    ({"kind": "owned", "variable_cost": Decimal("-0.1")}, "variable_cost", "variable_cost must be >= 0"),
    ({"upfront": Decimal(-5)}, "upfront", "upfront must be >= 0"),
    ({"term_hours": 0}, "term_hours", "term_hours must be > 0"),
    ({"kind": "spot", "max_share": 1.01}, "max_share", "max_share must be in [0, 1]"),
    ({"kind": "spot", "max_share": -0.01}, "max_share", "max_share must be in [0, 1]"),
    ({"max_units": -1}, "max_units", "max_units must be >= 0"),
    ({"availability": 1.5}, "availability", "availability must be in [0, 1]"),
    ({"availability": -0.5}, "availability", "availability must be in [0, 1]"),
    ({"kind": "spot", "variable_cost": Decimal(1)}, "variable_cost",
     "variable_cost applies to committed kinds only (on-demand and spot are all variable)"),
    ({"kind": "on_demand", "variable_cost": Decimal(1)}, "variable_cost",
     "variable_cost applies to committed kinds only (on-demand and spot are all variable)"),
    ({"max_share": 0.5}, "max_share", "max_share applies to spot only"),
    ({"kind": "on_demand", "max_units": 3}, "max_units", "on-demand capacity is unlimited; drop max_units"),
])
def test_each_field_rule(fields, column, message):
    values = {"name": "x", "kind": "reserved", "hourly_cost": Decimal(1), **fields}
    with pytest.raises(InputError) as caught:
        MixOption(**values)
    assert caught.value.message == f"option 'x': {message}"
    assert caught.value.where == Location(column=column)
    with pytest.raises(InputError) as caught:
        MixOption(**values, origin=Location(file="o.csv", row=4))
    assert caught.value.where == Location(file="o.csv", row=4, column=column)


@pytest.mark.parametrize("fields", [
    {"kind": "spot", "max_share": 0.0, "availability": 0.0},
    {"kind": "spot", "max_share": 1.0, "availability": 1.0, "max_units": 0},
    {"kind": "owned", "hourly_cost": Decimal(0), "variable_cost": Decimal(0), "upfront": Decimal(0), "term_hours": 1},
    {"kind": "reserved", "max_units": 0},
])
def test_edges_of_each_rule_are_allowed(fields):
    MixOption(**{"name": "x", "hourly_cost": Decimal(1), **fields})


def test_committed_kinds():
    assert COMMITTED_KINDS == {"owned", "reserved", "savings_plan", "cud", "provisioned_throughput"}
    assert [MixOption("x", k, Decimal(1)).committed for k in ("owned", "reserved", "savings_plan", "cud",
                                                               "provisioned_throughput", "on_demand", "spot")] == \
        [True] * 5 + [False] * 2


@pytest.mark.parametrize("fields, expected", [
    ({}, [10.0, 100.0, 0.0]),
    ({"max_share": 0.3}, [3.0, 30.0, 0.0]),
    ({"max_units": 5}, [5.0, 5.0, 0.0]),
    ({"max_share": 0.3, "max_units": 5}, [3.0, 5.0, 0.0]),
    ({"max_share": 0.3, "max_units": 5, "availability": 0.5}, [1.5, 2.5, 0.0]),
    ({"availability": 0.25}, [2.5, 25.0, 0.0]),
])
def test_spot_capacity_worked_by_hand(fields, expected):
    spot = MixOption("s", "spot", Decimal(1), **fields)
    assert spot.spot_capacity(np.array([10.0, 100.0, 0.0])).tolist() == expected


def test_check_options_returns_the_one_currency():
    assert check_options([MixOption("od", "on_demand", Decimal(1), currency="EUR"),
                          MixOption("ri", "reserved", Decimal(1), currency="EUR", term_hours=24)], hours=24) == "EUR"


def csv_options(tmp_path, text):
    path = tmp_path / "options.csv"
    path.write_text(text, encoding="utf-8")
    return path, read_options_csv(path)


@pytest.mark.parametrize("text, hours, row, column, message, hint, error", [
    ("name,kind,hourly_cost\nri,reserved,4\n", 10, 2, "kind", "no on_demand option",
     "add a row with kind on_demand: the price paid for demand nothing else covers", InputError),
    ("name,kind,hourly_cost\nod,on_demand,6\nod,reserved,4\n", 10, 3, "name", "option name 'od' appears twice",
     None, InputError),
    ("name,kind,hourly_cost,currency\nod,on_demand,6,USD\nri,reserved,4,EUR\n", 10, 3, "currency",
     "option 'ri' is in EUR, others in USD", "convert all options to one currency", CurrencyMismatchError),
    ("name,kind,hourly_cost,term_hours\nod,on_demand,6,\nri,reserved,4,11\n", 10, 3, "term_hours",
     "option 'ri' has a term of 11 hours, longer than the 10-hour demand profile",
     "give a profile covering the whole term, or use the ladder for multi-year terms", InputError),
    ("name,kind,hourly_cost,variable_cost\nod,on_demand,6,\nsp,spot,3,\nown,owned,1,3\n", 10, 4, "variable_cost",
     "option 'own': variable_cost 3 is not below the cheapest flexible price 3",
     "committed capacity must be cheaper to run than to rent; drop this option", InputError),
])
def test_options_that_do_not_fit_together(tmp_path, text, hours, row, column, message, hint, error):
    path, options = csv_options(tmp_path, text)
    with pytest.raises(error) as caught:
        check_options(options, hours=hours)
    assert caught.value.message == message and caught.value.hint == hint
    assert caught.value.where == Location(file=str(path), row=row, column=column)


def test_the_same_rules_without_a_file_name_the_column():
    with pytest.raises(InputError) as caught:
        check_options([MixOption("ri", "reserved", Decimal(1))], hours=1)
    assert caught.value.where == Location(column="kind")
    with pytest.raises(InputError) as caught:
        check_options([OD, MixOption("own", "owned", Decimal(1), variable_cost=Decimal(10))], hours=1)
    assert caught.value.where == Location(column="variable_cost")
    with pytest.raises(InputError) as caught:
        check_options([], hours=1)
    assert caught.value.message == "no options given" and caught.value.hint == "list at least an on_demand option"


def test_a_term_equal_to_the_horizon_and_a_variable_cost_below_every_flexible_price_fit():
    options = [OD, MixOption("spot", "spot", Decimal(3)), MixOption("own", "owned", Decimal(1),
                                                                   variable_cost=Decimal("2.99"), term_hours=10)]
    assert check_options(options, hours=10) == "USD"


def test_an_options_file_with_every_column(tmp_path):
    path, (own, od, spot, ri) = csv_options(
        tmp_path, "name,kind,hourly_cost,variable_cost,upfront,term_hours,max_share,max_units,availability,currency\n"
                  "own,owned,1.60,0.25,50000,,,16,,eur\nod,On-Demand,6.88,,,,,,,EUR\n"
                  "sp,Savings Plan,2.75,,,,,,,EUR\nri,RI,4.30,,,8760.0,,,,EUR\n")
    assert own == MixOption("own", "owned", Decimal("1.60"), "EUR", Decimal("0.25"), Decimal(50000), None, None, 16)
    assert (od.kind, od.currency, od.availability, od.variable_cost, od.upfront) == ("on_demand", "EUR", 1.0, 0, 0)
    assert (spot.kind, ri.kind, ri.term_hours, ri.max_units, ri.max_share) == (
        "savings_plan", "reserved", 8760, None, None)
    assert own.origin == Location(file=str(path), row=2) and ri.origin == Location(file=str(path), row=5)
    assert [type(o.hourly_cost) for o in (own, od)] == [Decimal, Decimal]


def test_spot_columns_are_floats_and_the_currency_defaults_to_usd(tmp_path):
    _, (od, spot) = csv_options(tmp_path, "name,kind,hourly_cost,max_share,availability\nod,od,6,,\n"
                                          "s,preemptible,2,0.3,0.9\n")
    assert (spot.kind, spot.max_share, spot.availability, spot.currency, od.currency) == (
        "spot", 0.3, 0.9, "USD", "USD")
    assert type(spot.max_share) is float and type(spot.availability) is float


@pytest.mark.parametrize("text, column, message, hint", [
    ("name,kind\nod,on_demand\n", "hourly_cost", "missing column 'hourly_cost'",
     "the options CSV needs columns name, kind, hourly_cost"),
    ("name,kind,hourly_cost\n,on_demand,1\n", "name", "empty name", None),
    ("name,kind,hourly_cost\nod,on_demand,\n", "hourly_cost", "empty hourly_cost", None),
    ("name,kind,hourly_cost\nod,on_demand,1e30\n", "hourly_cost", "'1e30' is out of range",
     "numbers here have at most 28 digits before the decimal point"),
    ("name,kind,hourly_cost,upfront\nod,on_demand,1,-1e28\n", "upfront", "'-1e28' is out of range",
     "numbers here have at most 28 digits before the decimal point"),
    ("name,kind,hourly_cost,max_units\nri,reserved,1,2.5\n", "max_units", "expected a whole number, got '2.5'", None),
    ("name,kind,hourly_cost,term_hours\nri,reserved,1,0.5\n", "term_hours", "expected a whole number, got '0.5'",
     None),
])
def test_bad_cells_name_the_file_row_and_column(tmp_path, text, column, message, hint):
    path = tmp_path / "options.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_options_csv(path)
    assert caught.value.message == message and caught.value.hint == hint
    assert caught.value.where == Location(file=str(path), row=1 if "missing" in message else 2, column=column)


def test_an_empty_options_file_is_named(tmp_path):
    path = tmp_path / "options.csv"
    path.write_text("name,kind,hourly_cost\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_options_csv(path)
    assert caught.value.message == "options file has no rows"


def test_a_number_just_inside_the_range_is_read(tmp_path):
    _, (od,) = csv_options(tmp_path, "name,kind,hourly_cost\nod,on_demand,9999999999999999999999999999\n")
    assert od.hourly_cost == Decimal("9999999999999999999999999999")


@pytest.mark.parametrize("kind, message, hint", [
    ("on_demnd", "unknown option kind 'on_demnd'; did you mean: on_demand, owned?", None),
    ("zzz", "unknown option kind 'zzz'", "known: owned, reserved, savings_plan, cud, provisioned_throughput, on_demand, spot"),
])
def test_an_unknown_kind_suggests_the_known_ones(tmp_path, kind, message, hint):
    path = tmp_path / "options.csv"
    path.write_text(f"name,kind,hourly_cost\nod,{kind},1\n", encoding="utf-8")
    with pytest.raises(UnknownNameError) as caught:
        read_options_csv(path)
    assert caught.value.message == message and caught.value.hint == hint
    assert caught.value.where == Location(file=str(path), row=2, column="kind")
