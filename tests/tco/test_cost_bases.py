"""Owned TCO's labelled bases (cash, book, levelized, net cash) and a short horizon compared like with like.

Every expected figure is worked by hand from the formulas of docs/tco.md: cash = purchases + OPEX -
resale; book = straight-line depreciation + OPEX; levelized = ((price - residual) x CRF(i, life) +
residual x i + OPEX) x nodes x months with CRF(i, n) = i / (1 - (1 + i)^-n); net cash = cash - the
residual value of the nodes still held at the horizon's end; a commitment is owed its whole term.
"""

import json
from decimal import Decimal

import pytest

from finops.cli import main
from finops.money import Money, to_decimal
from finops.price_book import PriceRow
from finops.tco import OwnedNode, compare_options, owned_tco


def usd(x):
    return Money.of(x, "USD")


def small_node(cost_of_capital=0.0):
    """1,200 USD, one GPU, 1 kW at full draw and PUE 1 at 0.10 USD/kWh = 73 USD a month of power;
    12-month life, 25 % residual (300 USD), so straight-line (1,200 - 300) / 12 = 75 USD a month."""
    return OwnedNode(usd(1200), 1, 1.0, usd("0.10"), usd(0), avg_power_share=1, pue=1, life_months=12,
                     residual_share=0.25, cost_of_capital=cost_of_capital)


def test_six_months_of_a_twelve_month_life_in_each_basis():
    """Two nodes for 6 months: purchases 2,400; OPEX 2 x 73 x 6 = 876; depreciation 2 x 75 x 6 = 900.
    cash 2,400 + 876 = 3,276 (nothing sold yet); book 900 + 876 = 1,776; levelized at 0 % = book;
    net cash 3,276 - 2 x 300 held = 2,676."""
    fleet = owned_tco(small_node(), nodes=2, months=6)
    assert (fleet.cash_total, fleet.book_total, fleet.levelized_total) == (usd(3276), usd(1776), usd(1776))
    assert fleet.held_residual == usd(600) and fleet.net_cash_total == usd(2676)


def test_levelized_total_at_a_cost_of_capital():
    """12 %/yr, i = 0.01: CRF(0.01, 12) = 0.01 / (1 - 1.01^-12); capital = 900 x CRF + 300 x 0.01 a node-month;
    levelized = (capital + 73) x 2 nodes x 6 months."""
    i = Decimal("0.01")
    crf = i / (1 - (1 + i) ** -12)                      # 0.08884878867...
    expected = (Decimal(900) * crf + Decimal(300) * i + 73) * 12
    fleet = owned_tco(small_node(0.12), nodes=2, months=6)
    assert round(fleet.levelized_total.amount, 6) == round(expected, 6)
    assert round(expected, 2) == Decimal("1871.57")
    assert fleet.cash_total == usd(3276)                # cash does not depend on the cost of capital


def test_a_whole_life_sells_at_the_end_and_holds_nothing():
    """12 months = the life: resale 600 in month 12, nothing held; cash 2,400 + 1,752 - 600 = 3,552 = book."""
    fleet = owned_tco(small_node(), nodes=2, months=12)
    assert fleet.held_residual == usd(0)
    assert fleet.net_cash_total == fleet.cash_total == fleet.book_total == usd(3552)


def _reserved_3y(per_instance_hourly):
    return PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, "reserved_3y", "no_upfront",
                    to_decimal(per_instance_hourly), to_decimal(0), "USD", "2026-11-01", "test fixture")


def test_a_twelve_month_horizon_does_not_rank_owned_first_on_its_book_value():
    """One 8-GPU node (400,000 USD, 60-month life, no residual; OPEX 619.5072 + 1,530 + 500 = 2,649.5072 a
    month) against a 3-year reservation at 1.50 USD per GPU-hour (12 USD per instance-hour).

    Over 12 months the reservation is owed its 36 months: 12 x 730 x 36 = 315,360. The node's book cost
    (80,000.04 depreciation, each month rounded to the cent, + 31,794.09 OPEX = 111,794.13) or its
    levelized cost would rank it first; the one rule for both sides charges it the purchase: 400,000 + 12 x 2,649.5072 = 431,794.09, so the
    reservation is the cheaper commitment."""
    from finops.tco.reference import reference_case

    node = reference_case().node
    result = compare_options(8, 12, node, [_reserved_3y("12")])
    owned = next(o for o in result.options if o.kind == "owned")
    reserved = next(o for o in result.options if o.kind == "reserved")
    assert reserved.total == usd(12 * 730 * 36)
    assert owned.total.rounded() == usd("431794.09")
    assert result.cheapest is reserved
    assert result.owned is not None and result.owned.book_total.rounded() < reserved.total


def test_at_the_full_life_with_no_residual_owned_is_seed_003s_capex_plus_opex():
    """60 months, one node: 400,000 + 60 x 2,649.5072 = 558,970.43 (seed 003: TCO = CAPEX + OPEX x months)."""
    from finops.tco.reference import reference_case

    result = compare_options(8, 60, reference_case().node, [])
    assert result.cheapest.total.rounded() == usd("558970.43")
    assert result.owned is not None and result.owned.net_cash_total == result.owned.book_total


def test_cli_json_and_text_label_each_owned_basis(capsys):
    """The small node through the command line: --gpus 2 with one GPU a node is the two-node fleet above."""
    args = ["tco", "--gpus", "2", "--gpus-per-node", "1", "--node-price", "1200", "--node-power-kw", "1",
            "--avg-power-share", "1", "--pue", "1", "--electricity", "0.10", "--colocation", "0", "--support", "0",
            "--life-months", "12", "--residual-share", "0.25", "--cost-of-capital", "0", "--months", "6",
            "--no-cloud"]
    assert main([*args, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    owned = payload["owned"]
    figures = {k: Decimal(str(owned[k])) for k in ("cash_total", "book_total", "levelized_total",
                                                   "held_residual", "net_cash_total")}
    assert figures == {"cash_total": 3276, "book_total": 1776, "levelized_total": 1776, "held_residual": 600,
                       "net_cash_total": 2676}
    assert Decimal(str(payload["options"][0]["total"])) == 2676
    assert "residual value still held (never its book value)" in payload["total_basis"]
    assert "commitments every month of their term" in payload["total_basis"]
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())
    for label in ("cash 3,276.00 (purchases + OPEX as paid - resale)",
                  "book 1,776.00 (straight-line depreciation + OPEX)",
                  "levelized 1,776.00 (capital recovery annuity at no cost of capital + OPEX)",
                  "ranked on net cash 2,676.00", "which ranks: what the horizon commits you to"):
        assert label in text


@pytest.mark.parametrize("months", [12, 24])
def test_api_tco_has_the_same_owned_bases(months):
    import finops

    table = finops.tco(8, months, cloud=False)
    assert table.owned is not None
    assert table[0].total == table.owned.net_cash_total
    assert table.owned.cash_total == table.owned.capex + table.owned.opex


def test_the_owned_tco_udf_gives_each_basis_of_the_cited_node():
    """One 400,000 USD node for 12 months, OPEX 2,649.5072 a month, 10 % cost of capital, 60-month life:
    cash = 400,000 + 12 x 2,649.5072; book = 12 x 6,666.67 (each month rounded to the cent) + OPEX;
    levelized = 12 x (400,000 x CRF(0.1/12, 60) + 2,649.5072); net cash = cash (no residual held)."""
    from addin.udfs import FINOPS_OWNED_TCO

    opex = Decimal("2649.5072") * 12
    i = Decimal("0.1") / 12
    crf = i / (1 - (1 + i) ** -60)
    expected = {"cash": 400_000 + opex, "book": Decimal("6666.67") * 12 + opex,
                "levelized": 12 * (400_000 * crf + Decimal("2649.5072")), "net_cash": 400_000 + opex}
    for basis, figure in expected.items():
        assert FINOPS_OWNED_TCO(8, 12, basis) == pytest.approx(float(figure), abs=0.01), basis
    assert FINOPS_OWNED_TCO(8, 12, "resale").startswith("#FINOPS: unknown owned cost basis 'resale'")
