"""Owned capital with residual value and cost of capital together, against a hand-worked annuity.

The levelized monthly capital charge P of a server bought for C, sold for R after n months, financed
at a monthly rate i, is the level payment that repays the loan: the balance B_0 = C,
B_k = B_(k-1) x (1 + i) - P, ends at B_n = R (the resale repays what is left). Solving gives
P = (C - R) x CRF(i, n) + R x i with CRF(i, n) = i / (1 - (1 + i)^-n), the capital recovery factor
(Park, *Contemporary Engineering Economics*, ch. 3, "capital recovery with salvage value"; NREL's
"Simple Levelized Cost of Energy" documentation uses the same CRF). The tests below check the code
against the balance recursion (run here, month by month, in Decimal) and against figures worked by hand.
"""

from __future__ import annotations

import json
from decimal import Decimal, localcontext

import pytest

from finops.cli import main
from finops.errors import InputError
from finops.money import Money
from finops.tco import OwnedNode, capital_recovery_factor, npv, owned_tco, tco


def usd(x) -> Money:
    return Money.of(x, "USD")


def balance_after(price: Decimal, payment: Decimal, monthly_rate: Decimal, months: int) -> Decimal:
    """The loan balance after ``months`` level payments (interest added, then the payment taken)."""
    with localcontext() as ctx:
        ctx.prec = 50
        balance = price
        for _ in range(months):
            balance = balance * (1 + monthly_rate) - payment
        return balance


def node(price, *, residual_share, cost_of_capital, life_months) -> OwnedNode:
    """A node whose only cost is capital (no power, colocation or support)."""
    return OwnedNode(node_price=usd(price), gpus_per_node=8, node_power_kw=10.2,
                     electricity_per_kwh=usd(0), colocation_per_kw_month=usd(0),
                     support_per_node_month=usd(0),
                     life_months=life_months, residual_share=residual_share, cost_of_capital=cost_of_capital)


# price, residual share, annual cost of capital, life (months)
CASES = [
    (400_000, 0.10, 0.10, 60),
    (240_000, 0.20, 0.12, 36),
    (386_000, 0.35, 0.08, 48),
    (160_000, 0.50, 0.15, 24),
    (1_000_000, 0.05, 0.06, 72),
]


@pytest.mark.parametrize("price,residual_share,rate,life", CASES)
def test_levelized_charge_repays_the_loan_down_to_the_residual(price, residual_share, rate, life):
    owned = node(price, residual_share=residual_share, cost_of_capital=rate, life_months=life)
    payment = owned.capital_per_month().amount
    residual = Decimal(price) * Decimal(str(residual_share))
    left = balance_after(Decimal(price), payment, Decimal(str(rate)) / 12, life)
    assert abs(left - residual) < Decimal("0.01"), (left, residual)


@pytest.mark.parametrize("price,residual_share,rate,life", CASES)
def test_residual_lowers_the_charge_by_its_present_value_only(price, residual_share, rate, life):
    """Selling at R saves R discounted n months, spread as an annuity: less than R / n when i > 0."""
    with_resale = node(price, residual_share=residual_share, cost_of_capital=rate, life_months=life)
    without = node(price, residual_share=0.0, cost_of_capital=rate, life_months=life)
    i = Decimal(str(rate)) / 12
    residual = Decimal(price) * Decimal(str(residual_share))
    with localcontext() as ctx:
        ctx.prec = 50
        present_value = residual / (1 + i) ** life
        crf = i / (1 - (1 + i) ** -life)
        expected_saving = present_value * crf
    saving = without.capital_per_month().amount - with_resale.capital_per_month().amount
    assert abs(saving - expected_saving) < Decimal("0.000001")
    assert saving < residual / life


def test_hand_worked_figure_400k_node():
    """C = 400,000, R = 40,000, 10 %/yr, 60 months: i = 0.1/12 = 0.0083333;
    (1 + i)^-60 = 0.6077886; CRF = 0.0083333 / 0.3922114 = 0.0212470;
    P = 360,000 x 0.0212470 + 40,000 x 0.0083333 = 7,648.94 + 333.33 = 7,982.27 USD a month;
    per GPU-hour (no OPEX): 7,982.27 / (730 x 8) = 1.3668 USD."""
    owned = node(400_000, residual_share=0.10, cost_of_capital=0.10, life_months=60)
    assert owned.capital_per_month().rounded() == usd("7982.27")
    assert round(owned.cost_per_gpu_hour().amount, 4) == Decimal("1.3668")
    # straight line (no cost of capital) ignores the interest: (400,000 - 40,000) / 60 = 6,000
    assert owned.capital_per_month(cost_of_capital=False) == usd(6000)


def test_npv_of_the_fleet_discounts_the_resale_at_the_end_of_life():
    """Cash: -240,000 in month 0, +48,000 resale in month 35 (flows at the start of a month);
    NPV at 12 %/yr = 240,000 - 48,000 / 1.01^35 = 240,000 - 48,000 x 0.7059142 = 206,116.12."""
    owned = node(240_000, residual_share=0.20, cost_of_capital=0.12, life_months=36)
    fleet = owned_tco(owned, nodes=1, months=36)
    assert fleet.npv is not None and fleet.npv.rounded() == usd("206116.12")
    assert fleet.residual_recovery == usd(48_000)
    assert fleet.depreciation == usd(192_000)
    assert fleet.cash_total == usd(192_000)


def tco_json(capsys, *args: str) -> dict:
    assert main(["tco", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


CAPITAL_ONLY = ("--gpus", "8", "--gpus-per-node", "8", "--months", "36", "--no-cloud",
                "--node-price", "240000",
                "--electricity", "0", "--colocation", "0", "--support", "0", "--support-share", "0",
                "--life-months", "36")


@pytest.mark.parametrize("residual_share,rate,monthly,per_gpu_hour", [
    # (240,000 - 48,000) x CRF(0.01, 36) + 48,000 x 0.01 = 192,000 x 0.0332143 + 480 = 6,857.15
    ("0.2", "0.12", "6857.15", "1.1742"),
    # no residual: 240,000 x 0.0332143 = 7,971.43
    ("0", "0.12", "7971.43", "1.3650"),
    # no cost of capital: straight line (240,000 - 48,000) / 36 = 5,333.33
    ("0.2", "0", "5333.33", "0.9132"),
])
def test_cli_residual_share_with_cost_of_capital(capsys, residual_share, rate, monthly, per_gpu_hour):
    payload = tco_json(capsys, *CAPITAL_ONLY, "--residual-share", residual_share, "--cost-of-capital", rate)
    (owned,) = payload["options"]
    assert Decimal(str(owned["monthly"])) == Decimal(monthly)
    assert Decimal(str(owned["per_gpu_hour"])) == Decimal(per_gpu_hour)
    resale = Decimal(240_000) * Decimal(residual_share)
    assert Decimal(str(payload["owned"]["residual_recovery"])) == resale
    assert Decimal(str(payload["owned"]["cash_total"])) == Decimal(240_000) - resale


def test_a_fleet_rebought_at_end_of_life_depreciates_each_cohort_from_its_purchase():
    """Two 12-month lives in a 24-month horizon: 1,200 USD nodes, 25 % residual, so (1,200 - 300) / 12 =
    75 USD a month per node in every month, each cohort bought in months 0 and 12 and sold in 11 and 23."""
    owned = OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                      residual_share=0.25)
    fleet = owned_tco(owned, nodes=2, months=24)
    assert [m.depreciation for m in fleet.schedule] == [usd(150)] * 24
    assert [k for k, m in enumerate(fleet.schedule) if m.capex.amount] == [0, 12]
    assert [k for k, m in enumerate(fleet.schedule) if m.residual_recovery.amount] == [11, 23]
    assert fleet.capex == usd(4800) and fleet.residual_recovery == usd(1200)
    assert fleet.closing_book_value == usd(0)


def test_a_cost_of_capital_of_100_percent_is_levelized_too():
    owned = node(120_000, residual_share=0.0, cost_of_capital=1.0, life_months=12)
    payment = owned.capital_per_month().amount
    assert abs(balance_after(Decimal(120_000), payment, Decimal(1) / 12, 12)) < Decimal("0.01")


@pytest.mark.parametrize("call,message", [
    (lambda: tco(usd(1), usd(1), -1), "months must be a whole number >= 0, got -1"),
    (lambda: tco(usd(1), Money.of(1, "EUR"), 1), "opex_per_month is in EUR but the rest is in USD"),
    (lambda: capital_recovery_factor(-0.1, 12), "cost_of_capital must be >= 0, got -0.1"),
    (lambda: capital_recovery_factor(0.1, 0), "life_months must be a whole number >= 1, got 0"),
    (lambda: npv([usd(1)], -0.1, "USD"), "discount_rate must be >= 0, got -0.1"),
    (lambda: owned_tco(node(1200, residual_share=0, cost_of_capital=0, life_months=12), 0, 12),
     "nodes must be a whole number >= 1, got 0"),
    (lambda: owned_tco(node(1200, residual_share=0, cost_of_capital=0, life_months=12), 1, 0),
     "months must be a whole number >= 1, got 0"),
])
def test_bad_owned_inputs_name_the_input(call, message):
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.message == message
