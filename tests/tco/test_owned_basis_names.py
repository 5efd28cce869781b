"""OwnedTco.total(basis): each labelled basis by the names a user types (a sheet cell, an API argument), and the
figures worked by hand for one small node (finops/tco/owned.py's formulas, a month being 730 h):

1,200 USD, one GPU, 1 kW at full draw, PUE 1, 0.10 USD/kWh: 73 USD of power a month; a 12-month life with a
25 % residual (300 USD): straight-line (1,200 - 300) / 12 = 75 USD a month. Over 6 months: cash = 1,200 + 6 x 73
= 1,638; book = 6 x (75 + 73) = 888; levelized at 0 % = book; net cash = cash - the 300 still held = 1,338.
"""
from __future__ import annotations

import pytest

from finops.errors import InputError
from finops.money import Money
from finops.tco import OWNED_BASES, OwnedNode, owned_tco


def usd(amount) -> Money:
    return Money.of(amount, "USD")


RESULT = owned_tco(OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                             residual_share=0.25), nodes=1, months=6)


@pytest.mark.parametrize("name,expected", [
    ("cash", 1638), ("book", 888), ("levelized", 888), ("net_cash", 1338),
    ("Cash", 1638), (" BOOK ", 888), ("net-cash", 1338), ("Net Cash", 1338), ("NET_CASH", 1338),
    ("\tLevelized\n", 888),
])
def test_each_basis_by_its_names(name, expected):
    assert RESULT.total(name) == usd(expected)


@pytest.mark.parametrize("name", ["resale", "net cash total", "netcash", "", "cash_total"])
def test_another_name_is_refused_with_the_list(name):
    with pytest.raises(InputError) as caught:
        RESULT.total(name)
    assert caught.value.message == f"unknown owned cost basis {name!r}"
    assert caught.value.hint == "use one of: cash, book, levelized, net_cash"


def test_the_bases_in_order():
    assert OWNED_BASES == ("cash", "book", "levelized", "net_cash")
