"""TCO: seed 003, the cited H100 reference case, cloud pricing models, unit costs and levers."""

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError, UnknownNameError
from finops.money import Money, to_decimal
from finops.price_book import PriceRow
from finops.tco import (
    OwnedNode,
    SpotPolicy,
    amortized_hourly,
    blended_hourly,
    capital_recovery_factor,
    cloud_rows,
    compare_options,
    cost_per_gpu_hour,
    cost_per_million_tokens,
    cost_per_replica_month,
    load_shaping,
    npv,
    owned_tco,
    prefill_time_share,
    prefix_cache,
    quantization,
    recurring_hourly,
    reference_case,
    reserved_schedule,
    resource_commitment_cost,
    right_sizing,
    spend_commitment_cost,
    spot_effective_hourly,
    tco,
    token_costs,
    utilization,
)


def usd(x):
    return Money.of(x, "USD")


@pytest.mark.parametrize("capex,opex,months,expected", [
    (Money.of(160_000, "CNY") * 9, Money.of(9_000, "CNY") * 9, 36, Money.of(4_356_000, "CNY")),  # seed 003
    (usd(100), usd("0.5"), 0, usd(100)),
    (usd(0), usd("12.34"), 12, usd("148.08")),
])
def test_seed_tco(capex, opex, months, expected):
    assert tco(capex, opex, months) == expected


def test_reference_h100_case_matches_the_published_figures():
    case = reference_case("h100-sxm-8gpu")
    straight = case.node.cost_per_gpu_hour(cost_of_capital=False)
    levelized = case.node.cost_per_gpu_hour()
    assert case.published_per_gpu_hour == usd("1.6") and case.published_per_gpu_hour_with_capital == usd("1.9")
    assert abs(straight.amount / case.published_per_gpu_hour.amount - 1) < Decimal("0.05")
    assert abs(levelized.amount / case.published_per_gpu_hour_with_capital.amount - 1) < Decimal("0.05")
    assert case.cloud_on_demand_per_gpu_hour == usd("6.88")
    assert case.cloud_on_demand_per_gpu_hour.amount / levelized.amount > 3
    assert all(case.sources[p] for p in ("node_price", "node_power_kw", "pue", "electricity_per_kwh"))


def test_reference_case_typo_suggests():
    with pytest.raises(UnknownNameError, match="did you mean"):
        reference_case("h100-sxm-8gp")


def test_reference_power_formula_by_hand():
    node = reference_case().node
    # 10.2 kW x 0.8 x PUE 1.3 x 730 h x 0.08 USD/kWh
    assert node.power_per_month() == usd(Decimal("10.2") * Decimal("0.8") * Decimal("1.3") * 730 * Decimal("0.08"))
    assert node.colocation_per_month() == usd(1530)


@pytest.mark.parametrize("rate,months,expected", [
    (0, 60, Decimal(1) / 60),
    (0.12, 12, Decimal("0.0888487887")),   # standard 1 %/month annuity table
    (0.10, 60, Decimal("0.0212470447")),
])
def test_capital_recovery_factor(rate, months, expected):
    assert abs(capital_recovery_factor(rate, months) - expected) < Decimal("1e-9")


def test_levelized_payments_repay_the_principal():
    # the present value (end-of-month payments) of the levelized capital charge equals the price
    node = OwnedNode(usd(100_000), 8, 0, usd(0), usd(0), life_months=36, cost_of_capital=0.09)
    payment = node.capital_per_month()
    i = Decimal("0.09") / 12
    present = sum((payment.amount / (1 + i) ** k for k in range(1, 37)), Decimal(0))
    assert abs(present - 100_000) < Decimal("0.0001")


def test_owned_schedule_splits_capex_and_opex_and_rebuys_after_the_life():
    node = OwnedNode(usd(12_000), 4, 2.0, usd("0.10"), usd(100), avg_power_share=0.5, pue=1.5,
                     support_per_node_month=usd(50), support_share_per_year=0.12, life_months=12,
                     residual_share=0.25)
    result = owned_tco(node, nodes=3, months=18, start="2026-11")
    months = [m.month for m in result.schedule]
    assert months[0] == "2026-11" and months[-1] == "2028-04" and len(months) == 18
    purchases = [m.month for m in result.schedule if m.capex.amount]
    assert purchases == ["2026-11", "2027-11"]
    assert result.capex == usd(72_000)
    # power 2 kW x 0.5 x 1.5 x 730 h x 0.10 = 109.5; colocation 2 kW x 100 = 200; support 50 + 12,000 x 12 %/12
    per_node = Decimal("109.5") + 200 + 50 + 120
    assert result.opex == usd(per_node * 3 * 18)
    assert [m.month for m in result.schedule if m.residual_recovery.amount] == ["2027-10"]
    assert result.residual_recovery == usd(9_000)
    first_life = sum((m.depreciation.amount for m in result.schedule[:12]), Decimal(0))
    assert first_life == 36_000 - 9_000
    assert result.closing_book_value == usd(36_000) - Money.total(
        [m.depreciation for m in result.schedule[12:]], "USD")
    assert result.cash_total == Money.total([m.cash for m in result.schedule], "USD")
    assert result.book_total == Money.total([m.book_cost for m in result.schedule], "USD")
    assert result.gpus == 12


def test_npv_at_zero_rate_is_the_cash_total_and_discounting_lowers_it():
    node = reference_case().node
    plain = owned_tco(node, nodes=2, months=36, discount_rate=0)
    assert plain.npv is None
    undiscounted = npv([m.cash for m in plain.schedule], 0, "USD")
    assert undiscounted == plain.cash_total
    discounted = owned_tco(node, nodes=2, months=36)  # the node's 10 % cost of capital
    assert discounted.npv is not None and discounted.npv < plain.cash_total
    assert discounted.npv > plain.capex  # the purchase is not discounted, OPEX is still added


# ---- cloud -----------------------------------------------------------------------------------------

def _row(model, option, hourly, upfront):
    return PriceRow("aws", "us-east-1", "p5.48xlarge", "h100-sxm", 8, model, option, to_decimal(hourly),
                    to_decimal(upfront), "USD", "2026-07-01", "test")


@pytest.mark.parametrize("model,option,upfront,recurring", [
    ("reserved_3y", "all_upfront", "788400", "0"),
    ("reserved_1y", "all_upfront", "262800", "0"),
    ("reserved_1y", "partial_upfront", "131400", "15"),
    ("reserved_3y", "no_upfront", "0", "24.5"),
])
def test_upfront_amortization_equals_focus_effective_hourly(model, option, upfront, recurring):
    term = {"reserved_1y": 8760, "reserved_3y": 26280}[model]
    effective = to_decimal(recurring) + to_decimal(upfront) / term      # FOCUS EffectiveCost per hour
    row = _row(model, option, effective, upfront)
    assert amortized_hourly(usd(upfront), usd(recurring), row.term_hours) == usd(effective)
    assert recurring_hourly(row) == usd(recurring)
    months = term // 730
    schedule = reserved_schedule(usd(upfront), usd(recurring), months, units=3, start="2026-12")
    billed = Money.total([m.billed for m in schedule], "USD")
    amortized = Money.total([m.effective for m in schedule], "USD")
    assert billed == amortized == usd(upfront) * 3 + usd(recurring) * (term * 3)
    assert schedule[0].billed == usd(upfront) * 3 + usd(recurring) * (730 * 3)
    assert schedule[1].billed == usd(recurring) * (730 * 3)
    assert schedule[-1].month == ("2029-11" if model == "reserved_3y" else "2027-11")


@pytest.mark.parametrize("spot,od,lost,fallback,expected", [
    ("2", "6", 0, 0, "2"),
    ("3", "10", 0.25, 0, "4"),           # a quarter of the work is redone
    ("2", "6", 0, 1, "6"),               # no spot capacity: all on-demand
    ("2", "6", 0.2, 0.1, "2.85"),
])
def test_spot_overhead(spot, od, lost, fallback, expected):
    got = spot_effective_hourly(usd(spot), usd(od), lost_work_share=lost, fallback_share=fallback)
    assert got == usd(expected)


def test_spot_share_cap():
    assert blended_hourly(usd(6), usd(2), spot_share=0.3, max_share=0.3) == usd("4.8")
    with pytest.raises(InputError, match="cap"):
        blended_hourly(usd(6), usd(2), spot_share=0.5, max_share=0.3)


@pytest.mark.parametrize("usage,committed,cost,utilization,coverage", [
    ([2, 4, 6], 4, "46", 10 / 12, 10 / 12),      # 3 x 4 x 3 + 2 x 5
    ([0, 0], 1, "6", 0.0, 1.0),                  # unused commitment is still paid
    ([5, 5], 0, "50", 0.0, 0.0),                 # no commitment: all on-demand
])
def test_resource_commitment(usage, committed, cost, utilization, coverage):
    out = resource_commitment_cost(usage, committed, usd(3), usd(5))
    assert out.cost == usd(cost)
    assert out.utilization == pytest.approx(utilization) and out.coverage == pytest.approx(coverage)
    assert out.on_demand_only == usd(5 * sum(usage)) and out.savings == out.on_demand_only - out.cost


def test_spend_commitment_fee_is_exact_and_steady_usage_needs_hours():
    out = spend_commitment_cost([0.0] * 3, usd(10), usd(3), usd(5))   # covers 3.33... units an hour
    assert out.cost == out.commitment == usd(30) and out.utilization == 0.0
    with pytest.raises(InputError, match="hours"):
        spend_commitment_cost(10, usd(20), usd("2.5"), usd(5))


def test_spend_commitment_steady_usage():
    # 10 units all year; commit 20 USD/h at the 2.5 USD discounted rate covers 8 units, 2 overflow at 5 USD
    out = spend_commitment_cost(10, usd(20), usd("2.5"), usd(5), hours=8760)
    assert out.cost == usd((20 + 2 * 5) * 8760)
    assert out.utilization == pytest.approx(1.0) and out.coverage == pytest.approx(0.8)


# ---- unit costs and levers ---------------------------------------------------------------------------

@pytest.mark.parametrize("call,expected", [
    (lambda: cost_per_gpu_hour(usd("55.04"), 8), usd("6.88")),
    (lambda: cost_per_replica_month(usd(2), 4), usd(5840)),
    (lambda: cost_per_million_tokens(usd("7.2"), 500), usd(4)),
    (lambda: token_costs(usd(36), 8000, 2000, 0.2).per_million_output, usd(4)),
    (lambda: token_costs(usd(36), 8000, 2000, 0.2).per_million_input, usd("0.25")),
    (lambda: token_costs(usd(36), 0, 2000, 0).per_million_input, usd(0)),
    (lambda: utilization(usd(10_000), 0.4, 0.8).after, usd(5_000)),          # seed 000: halves the cost
    (lambda: quantization(9, usd(1_000), 2).after, usd(5_000)),
    (lambda: prefix_cache(usd(1_000), 0.5, 0.2, 0.6).after, usd(750)),
    (lambda: load_shaping(20, 16, 5, usd(100)).after, usd(1_800)),          # flattened: peak 18
    (lambda: right_sizing(2, usd(50), 3, 1, usd(20)).saved, usd(40)),
])
def test_unit_costs_and_levers(call, expected):
    assert call() == expected


def test_prefill_share_from_rates_and_the_split_adds_back_to_the_hour():
    p = prefill_time_share(4000, 1000, prefill_tokens_per_s=20_000, decode_tokens_per_s=500)
    assert p == pytest.approx(0.2 / 2.2)
    costs = token_costs(usd(10), input_tokens_per_s=2000, output_tokens_per_s=500, prefill_share=p)
    hourly = (costs.per_million_input.amount * 2000 + costs.per_million_output.amount * 500) * 3600 / 10**6
    assert abs(hourly - 10) < Decimal("1e-20")


# ---- currencies and bad input ------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: tco(usd(1), Money.of(1, "CNY"), 3),
    lambda: amortized_hourly(usd(1), Money.of(1, "EUR"), 8760),
    lambda: spot_effective_hourly(usd(1), Money.of(1, "EUR")),
    lambda: resource_commitment_cost([1], 1, usd(1), Money.of(2, "EUR")),
    lambda: OwnedNode(usd(1), 8, 1.0, Money.of("0.1", "EUR"), usd(1)),
    lambda: right_sizing(1, usd(1), 1, 1, Money.of(1, "JPY")),
])
def test_currency_mixing_fails(call):
    with pytest.raises(CurrencyMismatchError):
        call()


@pytest.mark.parametrize("call,field", [
    (lambda: tco(usd(1), usd(1), -1), "months"),
    (lambda: tco(usd(-1), usd(1), 1), "capex"),
    (lambda: tco(1000, usd(1), 1), "capex"),
    (lambda: OwnedNode(usd(1), 0, 1.0, usd(1), usd(1)), "gpus_per_node"),
    (lambda: OwnedNode(usd(1), 8, -1, usd(1), usd(1)), "node_power_kw"),
    (lambda: OwnedNode(usd(1), 8, 1.0, usd(1), usd(1), pue=0.9), "pue"),
    (lambda: OwnedNode(usd(1), 8, 1.0, usd(1), usd(1), avg_power_share=1.2), "avg_power_share"),
    (lambda: OwnedNode(usd(1), 8, 1.0, usd(1), usd(1), life_months=0), "life_months"),
    (lambda: OwnedNode(usd(1), 8, 1.0, usd(1), usd(1), cost_of_capital=-0.1), "cost_of_capital"),
    (lambda: owned_tco(reference_case().node, 0, 12), "nodes"),
    (lambda: owned_tco(reference_case().node, 1, 12, start="2026/01"), "month"),
    (lambda: spot_effective_hourly(usd(1), usd(2), lost_work_share=1), "lost_work_share"),
    (lambda: resource_commitment_cost([1, -2], 1, usd(1), usd(2)), "usage units"),
    (lambda: cost_per_million_tokens(usd(1), 0), "tokens_per_s"),
    (lambda: cost_per_million_tokens(usd(1), "fast"), "tokens_per_s"),
    (lambda: utilization(usd(1), 0, 0.8), "utilization_before"),
    (lambda: quantization(4, usd(1), 0), "throughput_ratio"),
    (lambda: load_shaping(10, 12, 1, usd(1)), "offpeak_units"),
    (lambda: reserved_schedule(usd(1), usd(1), 0, 1), "term_months"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(InputError) as caught:
        call()
    assert field in str(caught.value)


# ---- option selection and comparison -----------------------------------------------------------------

def _price(provider, region, instance, gpus, model, hourly, upfront=0, option=""):
    return PriceRow(provider, region, instance, "h100-sxm", gpus, model, option, to_decimal(hourly),
                    to_decimal(upfront), "USD", "2026-07-01", "test")


_ROWS = [
    _price("gcp", "us-central1", "a3-highgpu-1g", 1, "on_demand", "11"),
    _price("gcp", "us-central1", "a3-highgpu-8g", 8, "on_demand", "88"),
    _price("gcp", "us-central1", "a3-highgpu-8g", 8, "spot", "48"),
    _price("gcp", "europe-west4", "a3-highgpu-8g", 8, "on_demand", "96"),
    _price("gcp", "europe-west4", "a3-highgpu-8g", 8, "cud_3y", "40", option="no_upfront"),
]


@pytest.mark.parametrize("filters,expected", [
    ({}, {("a3-highgpu-8g", "us-central1", "on_demand"), ("a3-highgpu-8g", "us-central1", "spot"),
          ("p5.48xlarge", "us-east-1", "on_demand")}),                    # 8-GPU type, cheapest region, cited
    ({"region": "europe-west4"}, {("a3-highgpu-8g", "europe-west4", "on_demand"),
                                  ("a3-highgpu-8g", "europe-west4", "cud_3y")}),
    ({"instance_type": "a3-highgpu-1g"}, {("a3-highgpu-1g", "us-central1", "on_demand")}),
    ({"provider": "aws"}, {("p5.48xlarge", "us-east-1", "on_demand")}),
    ({"provider": "azure"}, set()),
])
def test_cloud_rows_choose_one_type_and_region_per_provider(filters, expected):
    rows = cloud_rows(_ROWS, gpu_model="h100-sxm", cited=reference_case().cloud_price_row(), **filters)
    assert {(r.instance_type, r.region, r.pricing_model) for r in rows} == expected


def test_comparison_is_sorted_and_spot_is_capped_and_blended_with_on_demand():
    rows = cloud_rows(_ROWS, gpu_model="h100-sxm")
    result = compare_options(12, 24, reference_case().node, rows, spot=SpotPolicy(0, 0, 0.25))
    totals = [o.total.amount for o in result.options]
    assert totals == sorted(totals) and result.cheapest.kind == "owned"
    spot = next(o for o in result.options if o.kind == "spot")
    assert spot.units == 2 and spot.gpus == 16                       # 12 GPUs need two 8-GPU instances
    assert spot.per_gpu_hour == usd(88) / 8 * Decimal("0.75") + usd(48) / 8 * Decimal("0.25")
    assert spot.monthly == spot.per_gpu_hour * (16 * 730)


def test_cloud_prices_in_another_currency_do_not_mix():
    row = PriceRow("gcp", "x", "y", "h100-sxm", 8, "on_demand", "", to_decimal(1), to_decimal(0), "EUR", "2026-01-01",
                   "t")
    with pytest.raises(CurrencyMismatchError):
        compare_options(8, 12, reference_case().node, [row])
    with pytest.raises(CurrencyMismatchError, match="priced in EUR, the comparison in USD"):
        compare_options(8, 12, None, [row], currency="USD")        # cloud only: the asked currency holds
    assert compare_options(8, 12, None, [row], currency="EUR").options[0].total.currency == "EUR"
