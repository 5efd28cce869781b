"""OwnedTco.total(basis): each labelled basis by the names a user types (a sheet cell, an API argument), and the
figures worked by hand for one small node (finops/tco/owned.py's formulas, a month being 730 h):

1,200 USD, one GPU, 1 kW at full draw, PUE 1, 0.10 USD/kWh: 73 USD of power a month; a 12-month life with a
25 % residual (300 USD): straight-line (1,200 - 300) / 12 = 75 USD a month. Over 6 months: cash = 1,200 + 6 x 73
= 1,638; book = 6 x (75 + 73) = 888; levelized at 0 % = book; net cash = cash - the 300 still held = 1,338.
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import InputError
from finops.money import Money
from finops.tco import OWNED_BASES, OwnedNode, owned_tco


def usd(amount) -> Money:
    return Money.of(amount, "USD")


SMALL = OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                  residual_share=0.25)


@pytest.mark.parametrize("name,expected", [
    ("cash", 1638), ("book", 888), ("levelized", 888), ("net_cash", 1338),
    ("Cash", 1638), (" BOOK ", 888), ("net-cash", 1338), ("Net Cash", 1338), ("NET_CASH", 1338),
    ("\tLevelized\n", 888),
])
def test_each_basis_by_its_names(name, expected):
    assert owned_tco(SMALL, nodes=1, months=6).total(name) == usd(expected)


@pytest.mark.parametrize("name", ["resale", "net cash total", "netcash", "", "cash_total"])
def test_another_name_is_refused_with_the_list(name):
    with pytest.raises(InputError) as caught:
        owned_tco(SMALL, nodes=1, months=6).total(name)
    assert caught.value.message == f"unknown owned cost basis {name!r}"
    assert caught.value.hint == "use one of: cash, book, levelized, net_cash"


def test_the_bases_in_order():
    assert OWNED_BASES == ("cash", "book", "levelized", "net_cash")


@pytest.mark.parametrize("nodes,months,cash,held", [
    # nodes x (1,200 per purchase + 73 a month), less 300 a node resold in the last month of each life
    (1, 6, 1638, 300),           # 1,200 + 438; the node is still held at the end
    (2, 6, 3276, 600),
    (1, 12, 1776, 0),            # a whole life: 1,200 + 876 - 300 resold in its last month, nothing held
    (2, 18, 6828, 600),          # rebought in month 13: 4,800 + 2,628 - 600, the second pair held
    (3, 24, 10656, 0),           # two whole lives: 7,200 + 5,256 - 1,800
])
def test_the_totals_of_a_horizon(nodes, months, cash, held):
    result = owned_tco(SMALL, nodes=nodes, months=months)
    levelized = 148 * nodes * months                      # (75 + 73) a node-month at a zero cost of capital
    assert (result.cash_total, result.held_residual, result.net_cash_total, result.levelized_total) == (
        usd(cash), usd(held), usd(cash - held), usd(levelized))
    payload = result.to_dict()
    assert (payload["cash_total"], payload["levelized_total"], payload["held_residual"],
            payload["net_cash_total"]) == (Decimal(cash), Decimal(levelized), Decimal(held), Decimal(cash - held))
