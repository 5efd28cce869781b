"""``MixResult``: every figure finance reads, on a result built by hand (730-hour months, 8,760-hour years)."""

from decimal import Decimal

import pytest

from finops.mix.result import HOURS_PER_MONTH, HOURS_PER_YEAR, MixResult, OptionOutcome
from finops.money import Money


def usd(amount):
    return Money(Decimal(amount), "USD")


# 1,460 hours (two months); 5,000 unit-hours of demand
RESULT = MixResult("USD", 1460.0, 5000.0, (
    OptionOutcome("ri", "reserved", 2, 2500.0, usd("8760"), usd("1000")),
    OptionOutcome("own", "owned", 0, 0.0, usd("0"), usd("0")),
    OptionOutcome("spot", "spot", None, 1500.0, usd("3000")),
    OptionOutcome("od", "on_demand", None, 1000.0, usd("6883.333")),
), usd("34416.665"))


def test_totals_savings_and_rates():
    assert (HOURS_PER_MONTH, HOURS_PER_YEAR) == (730, 8760)
    assert RESULT.units == {"ri": 2, "own": 0}
    assert RESULT.total_cost == usd("18643.333")
    assert RESULT.upfront == usd("1000")
    assert RESULT.savings == usd("15773.332")
    assert RESULT.cost_per_month == usd("9321.6665")             # two months
    assert RESULT.cost_per_year == usd("111859.998")             # six times that
    assert RESULT.share == {"ri": 0.5, "own": 0.0, "spot": 0.3, "od": 0.2}
    assert RESULT.coverage == {"ri": 0.5, "own": 0.0}
    assert RESULT.utilization == {"ri": 2500 / 2920, "own": 0.0}


def test_the_json_summary():
    assert RESULT.to_dict() == {
        "currency": "USD", "hours": 1460.0, "units": {"ri": 2, "own": 0},
        "total_cost": Decimal("18643.33"), "on_demand_only_cost": Decimal("34416.67"), "savings": Decimal("15773.33"),
        "savings_share": round(15773.332 / 34416.665, 6), "cost_per_month": Decimal("9321.67"),
        "cost_per_year": Decimal("111860.00"), "upfront": Decimal("1000.00"),
        "options": [
            {"name": "ri", "kind": "reserved", "units": 2, "unit_hours": 2500.0, "share": 0.5,
             "utilization": round(2500 / 2920, 6), "cost": Decimal("8760.00")},
            {"name": "own", "kind": "owned", "units": 0, "unit_hours": 0.0, "share": 0.0, "utilization": 0.0,
             "cost": Decimal("0.00")},
            {"name": "spot", "kind": "spot", "units": None, "unit_hours": 1500.0, "share": 0.3, "utilization": None,
             "cost": Decimal("3000.00")},
            {"name": "od", "kind": "on_demand", "units": None, "unit_hours": 1000.0, "share": 0.2,
             "utilization": None, "cost": Decimal("6883.33")}]}


def test_shares_and_rounding_to_six_places():
    result = MixResult("EUR", 3.0, 3.0, (OptionOutcome("od", "on_demand", None, 1.23456789, Money.of(1, "EUR")),
                                         OptionOutcome("ri", "reserved", 3, 2.0, Money.of(3, "EUR"))),
                       Money.of(3, "EUR"))
    summary = result.to_dict()
    assert [o["share"] for o in summary["options"]] == [0.411523, 0.666667]
    assert summary["options"][1]["utilization"] == 0.222222 and summary["options"][0]["unit_hours"] == 1.234568
    assert summary["savings_share"] == round(-1 / 3, 6) and summary["currency"] == "EUR"
    assert result.upfront == Money.zero("EUR")


def test_no_demand_has_no_shares_and_no_savings_share():
    empty = MixResult("USD", 10.0, 0.0, (OptionOutcome("ri", "reserved", 1, 0.0, usd("60")),
                                         OptionOutcome("od", "on_demand", None, 0.0, usd("0"))), usd("0"))
    assert empty.share == {"ri": 0.0, "od": 0.0} and empty.utilization == {"ri": 0.0}
    assert empty.to_dict()["savings_share"] == 0.0 and empty.savings == usd("-60")
    assert empty.to_dict()["savings_share"] == pytest.approx(0.0)
