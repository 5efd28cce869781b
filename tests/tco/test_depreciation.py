"""Straight-line depreciation: schedules sum to the cent, zero outside the life, bad input names the field."""

from datetime import date
from decimal import Decimal

import pytest

from finops.depreciation import (
    DEFAULT_LIFE_MONTHS,
    depreciation_schedule,
    month_index,
    monthly_depreciation,
    net_book_value,
)
from finops.errors import CurrencyMismatchError, InputError
from finops.money import Money


def usd(x):
    return Money.of(x, "USD")


# (cost, residual, life) -> the schedule sums exactly to cost - residual, each month within a cent of even
SCHEDULES = [
    ("400000", "0", 60),
    ("400000", "40000", 60),
    ("100000", "0", 60),
    ("1000", "100", 7),
    ("1", "0", 60),            # half-up would overshoot: falls back to rounding down
    ("0.01", "0", 36),
    ("123456.789", "0.123", 37),
    ("5000", "5000", 12),      # fully residual: nothing to depreciate
]


@pytest.mark.parametrize("cost,residual,life", SCHEDULES)
def test_schedule_sums_exactly_and_is_even(cost, residual, life):
    rows = depreciation_schedule(usd(cost), usd(residual), life, date(2026, 5, 20))
    assert len(rows) == life
    total = sum((v.amount for _, v in rows), Decimal(0))
    assert total == Decimal(cost) - Decimal(residual)
    even = (Decimal(cost) - Decimal(residual)) / life
    assert all(v.amount >= 0 for _, v in rows)
    # every month but the last is the same rounded charge, within a cent of the exact share
    assert len({v.amount for _, v in rows[:-1]}) <= 1
    assert all(abs(v.amount - even) < Decimal("0.01") for _, v in rows[:-1])


@pytest.mark.parametrize("month,expected", [
    ("2026-02", "0"),          # before in-service
    ("2026-03", "100.00"),     # in-service month counts in full (full-month convention)
    ("2027-02", "100.00"),     # last month of a 12-month life
    ("2027-03", "0"),          # after the life
    ("2035-01", "0"),
])
def test_monthly_depreciation_window(month, expected):
    got = monthly_depreciation(Money.of(1200, "EUR"), Money.of(0, "EUR"), 12, date(2026, 3, 31), month)
    assert got == Money.of(expected, "EUR")


def test_monthly_matches_schedule_and_nbv_walks_down():
    cost, residual, life, start = usd("386000"), usd("20000"), 60, date(2026, 7, 1)
    schedule = dict(depreciation_schedule(cost, residual, life, start))
    running = cost
    for month in ("2026-06",) + tuple(schedule) + ("2031-07",):
        charge = monthly_depreciation(cost, residual, life, start, month)
        assert charge == schedule.get(month, Money.zero("USD"))
        running = running - charge
        assert net_book_value(cost, residual, life, start, month) == running
    assert running == residual


def test_schedule_months_are_consecutive_labels():
    rows = depreciation_schedule(usd(1300), usd(0), 13, date(2026, 12, 1))
    assert [m for m, _ in rows][:2] == ["2026-12", "2027-01"]
    assert rows[-1][0] == "2027-12"
    assert [month_index(m) for m, _ in rows] == list(range(month_index("2026-12"), month_index("2026-12") + 13))


def test_default_life_is_five_years():
    assert DEFAULT_LIFE_MONTHS == 60


def test_currency_mixing_fails():
    with pytest.raises(CurrencyMismatchError):
        depreciation_schedule(usd(1000), Money.of(0, "EUR"), 12, date(2026, 1, 1))


@pytest.mark.parametrize("kwargs,field", [
    ({"life_months": 0}, "life_months"),
    ({"life_months": 12.5}, "life_months"),
    ({"cost": usd(-1)}, "cost"),
    ({"residual": usd(2000)}, "residual"),
    ({"residual": usd(-5)}, "residual"),
    ({"cost": 1000}, "cost"),
    ({"month": "2026-13"}, "month"),
    ({"month": "May 2026"}, "month"),
    ({"in_service": "2026-01-01"}, "in_service"),
])
def test_bad_input_names_the_field(kwargs, field):
    args = {"cost": usd(1000), "residual": usd(0), "life_months": 12, "in_service": date(2026, 1, 1),
            "month": "2026-01", **kwargs}
    with pytest.raises(InputError) as caught:
        monthly_depreciation(**args)
    assert field in str(caught.value)
