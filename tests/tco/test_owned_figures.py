"""finops/tco/owned.py figure by figure, each worked by hand from the module's formulas (a month is 730 h;
levelized capital = (price - residual) x CRF(i, n) + residual x i, CRF(i, n) = i / (1 - (1 + i)^-n),
i = r / 12), and every check on a node's inputs with its message."""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError
from finops.money import Money
from finops.tco.owned import OwnedNode, capital_recovery_factor, npv, owned_tco, tco


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def node(**changes) -> OwnedNode:
    values = dict(node_price=usd(400_000), gpus_per_node=8, node_power_kw=10, electricity_per_kwh=usd("0.10"),
                  colocation_per_kw_month=usd(150), avg_power_share=0.5, pue=1.2, support_per_node_month=usd(500),
                  support_share_per_year=0.03, life_months=60, residual_share=0.1, cost_of_capital=0.12)
    values.update(changes)
    return OwnedNode(**values)


def test_each_monthly_line_of_a_node():
    n = node()
    assert n.power_per_month() == usd("438.00")        # 10 kW x 0.5 x 1.2 x 730 h x 0.10
    assert n.colocation_per_month() == usd(1500)       # 10 kW x 150
    assert n.support_per_month() == usd(1500)          # 500 + 400,000 x 0.03 / 12
    assert n.opex_per_month() == usd("3438.00")
    assert n.residual == usd(40_000)
    assert n.currency == "USD"
    assert node(support_per_node_month=None).support_per_month() == usd(1000)


def test_capital_straight_line_and_levelized():
    n = node()
    assert n.capital_per_month(cost_of_capital=False) == usd(6000)  # (400,000 - 40,000) / 60
    i = 0.12 / 12
    crf = i / (1 - (1 + i) ** -60)
    levelized = 360_000 * crf + 40_000 * i
    assert float(n.capital_per_month().amount) == pytest.approx(levelized, rel=1e-12)
    assert round(levelized, 2) == 8408.00
    assert node(cost_of_capital=0).capital_per_month() == usd(6000)
    assert float(n.cost_per_gpu_hour().amount) == pytest.approx((levelized + 3438) / (730 * 8), rel=1e-12)
    assert n.cost_per_gpu_hour(cost_of_capital=False) == usd(9438) / (730 * 8)


def test_capital_recovery_factor_and_npv():
    at_zero = capital_recovery_factor(0, 48)
    assert abs(at_zero * 48 - 1) < Decimal("1e-30")  # 1 / n, to the 34 digits of money
    assert float(capital_recovery_factor("0.06", 36)) == pytest.approx(0.005 / (1 - 1.005 ** -36), rel=1e-12)
    assert npv([usd(100), usd(101), usd("102.01")], 0.12, "USD") == usd(300)  # each is 100 today at 1 %/month
    assert npv([usd(5), usd(7)], 0, "USD") == usd(12)
    with pytest.raises(InputError) as caught:
        npv([usd(1)], -0.01, "USD")
    assert caught.value.message == "discount_rate must be >= 0, got -0.01"
    with pytest.raises(InputError) as caught:
        capital_recovery_factor(0.1, 0)
    assert caught.value.message == "life_months must be a whole number >= 1, got 0"


def test_seed_003_tco_and_its_checks():
    assert tco(usd(1000), usd(10), 0) == usd(1000)
    assert tco(usd(1000), usd(10), 36) == usd(1360)
    with pytest.raises(InputError) as caught:
        tco(usd(1000), usd(10), -1)
    assert caught.value.message == "months must be a whole number >= 0, got -1"
    with pytest.raises(CurrencyMismatchError) as caught:
        tco(usd(1000), Money.of(10, "EUR"), 3)
    assert caught.value.message == "opex_per_month is in EUR but the rest is in USD"


def test_a_fleet_rebought_at_end_of_life_across_a_year_end():
    small = OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                      residual_share=0.25)
    result = owned_tco(small, nodes=2, months=30, start="2026-11")
    months = [m.month for m in result.schedule]
    assert months[:3] == ["2026-11", "2026-12", "2027-01"] and months[-1] == "2029-04" and len(months) == 30
    assert [k for k, m in enumerate(result.schedule) if m.capex.amount] == [0, 12, 24]
    assert {m.capex for m in result.schedule if m.capex.amount} == {usd(2400)}
    assert [k for k, m in enumerate(result.schedule) if m.residual_recovery.amount] == [11, 23]  # 35 is past the end
    assert all(m.depreciation == usd(150) for m in result.schedule)  # (1,200 - 300) x 2 / 12, one cohort at a time
    assert result.schedule[0].power == usd(146)  # 1 kW x 730 h x 0.10 x 2 nodes
    assert (result.nodes, result.gpus) == (2, 2)
    assert result.capex == usd(7200) and result.depreciation == usd(4500)
    assert result.residual_recovery == usd(1200) and result.closing_book_value == usd(1500)
    assert result.opex == usd(146 * 30)
    assert result.cash_total == usd(7200 + 4380 - 1200)
    assert result.book_total == usd(4500 + 4380)
    assert result.npv is None  # no cost of capital, no discount rate
    assert result.schedule[11].cash == usd(146 - 600)
    assert result.schedule[0].book_cost == usd(150 + 146)


def test_npv_at_the_cost_of_capital_or_the_rate_given():
    small = OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                      cost_of_capital=0.12)
    at_capital = owned_tco(small, nodes=1, months=3)
    expected = 1200 + 73 + 73 / 1.01 + 73 / 1.01 ** 2
    assert float(at_capital.npv.amount) == pytest.approx(expected, rel=1e-12)
    at_six = owned_tco(small, nodes=1, months=3, discount_rate=0.06)
    assert float(at_six.npv.amount) == pytest.approx(1273 + 73 / 1.005 + 73 / 1.005 ** 2, rel=1e-12)
    assert owned_tco(small, nodes=1, months=3, discount_rate=0).npv is None


def test_owned_tco_checks_its_counts():
    with pytest.raises(InputError) as caught:
        owned_tco(node(), nodes=0, months=3)
    assert caught.value.message == "nodes must be a whole number >= 1, got 0"
    with pytest.raises(InputError) as caught:
        owned_tco(node(), nodes=1, months=0)
    assert caught.value.message == "months must be a whole number >= 1, got 0"


def test_to_dict_rounds_every_figure_to_the_cent():
    small = OwnedNode(usd(1000), 2, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=3)
    d = owned_tco(small, nodes=1, months=2).to_dict()
    assert d["nodes"] == 1 and d["gpus"] == 2 and d["npv"] is None
    # depreciation is charged in cents, the last month of the life taking the remainder (333.34)
    assert d["capex"] == Decimal("1000.00") and d["depreciation"] == Decimal("666.66")  # 2 x 333.33
    assert d["closing_book_value"] == Decimal("333.34") and d["residual_recovery"] == Decimal("0.00")
    assert d["opex"] == Decimal("146.00") and d["cash_total"] == Decimal("1146.00")
    assert d["book_total"] == Decimal("812.66")
    assert d["schedule"][0] == {"month": "2026-01", "capex": Decimal("1000.00"), "depreciation": Decimal("333.33"),
                                "power": Decimal("73.00"), "colocation": Decimal("0.00"), "support": Decimal("0.00"),
                                "opex": Decimal("73.00"), "residual_recovery": Decimal("0.00"),
                                "book_cost": Decimal("406.33"), "cash": Decimal("1073.00")}
    assert d["schedule"][1]["cash"] == Decimal("73.00")


@pytest.mark.parametrize("changes,error,message", [
    ({"node_price": 400_000}, InputError, "node_price must be Money, got int 400000"),
    ({"node_price": usd(-1)}, InputError, "node_price must not be negative, got -1.00 USD"),
    ({"gpus_per_node": 0}, InputError, "gpus_per_node must be a whole number >= 1, got 0"),
    ({"gpus_per_node": True}, InputError, "gpus_per_node must be a whole number >= 1, got True"),
    ({"node_power_kw": -1}, InputError, "node_power_kw must be >= 0, got -1"),
    ({"node_power_kw": "lots"}, InputError, "node_power_kw must be a finite number, got 'lots'"),
    ({"node_power_kw": None}, InputError, "node_power_kw must be a number, got None"),
    ({"electricity_per_kwh": Money.of("0.1", "EUR")}, CurrencyMismatchError,
     "electricity_per_kwh is in EUR but the rest is in USD"),
    ({"colocation_per_kw_month": Money.of(1, "EUR")}, CurrencyMismatchError,
     "colocation_per_kw_month is in EUR but the rest is in USD"),
    ({"avg_power_share": 1.5}, InputError, "avg_power_share must be a share in [0, 1], got 1.5"),
    ({"pue": 0.9}, InputError, "pue must be >= 1 (facility power over IT power), got 0.9"),
    ({"pue": 0}, InputError, "pue must be > 0, got 0"),
    ({"support_per_node_month": Money.of(1, "EUR")}, CurrencyMismatchError,
     "support_per_node_month is in EUR but the rest is in USD"),
    ({"support_share_per_year": -0.1}, InputError, "support_share_per_year must be a share in [0, 1], got -0.1"),
    ({"life_months": 0}, InputError, "life_months must be a whole number >= 1, got 0"),
    ({"residual_share": 1.01}, InputError, "residual_share must be a share in [0, 1], got 1.01"),
    ({"cost_of_capital": -0.05}, InputError, "cost_of_capital must be >= 0, got -0.05"),
])
def test_each_bad_input_is_named(changes, error, message):
    with pytest.raises(error) as caught:
        node(**changes)
    assert caught.value.message == message


def test_hints_of_the_node_checks():
    with pytest.raises(InputError) as caught:
        node(pue=0.9)
    assert caught.value.hint == "a modern data centre runs at about 1.1-1.5"
    with pytest.raises(InputError) as caught:
        node(avg_power_share=2)
    assert caught.value.hint == "write 80 % as 0.8"
    with pytest.raises(InputError) as caught:
        node(node_price=1)
    assert caught.value.hint == "use Money.of(amount, currency)"
    with pytest.raises(CurrencyMismatchError) as caught:
        node(electricity_per_kwh=Money.of(1, "EUR"))
    assert caught.value.hint == "convert one side explicitly first"


def test_the_edges_of_the_checks_are_allowed():
    n = node(node_power_kw=0, avg_power_share=1, pue=1, support_share_per_year=0, residual_share=1, cost_of_capital=0,
             life_months=1, gpus_per_node=1, node_price=usd(0))
    assert n.opex_per_month() == usd(500)


def test_tco_names_a_capex_that_is_not_money():
    with pytest.raises(InputError) as caught:
        tco(1000, usd(10), 3)
    assert caught.value.message == "capex must be Money, got int 1000"


def test_to_dict_keeps_the_npv_in_cents():
    small = OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                      cost_of_capital=0.12)
    d = owned_tco(small, nodes=1, months=3).to_dict()
    assert d["npv"] == Decimal(str(round(1200 + 73 + 73 / 1.01 + 73 / 1.01 ** 2, 2)))
