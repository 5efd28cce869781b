"""finops/tco/compare.py figure by figure: the rows it picks from a price book with many rows per provider, and
each option's figures worked by hand from the module's rules:

* a month is 730 h; cloud: ceil(GPUs / GPUs per instance) instances, monthly = per-GPU-hour rate x GPUs x 730;
  total = monthly x the horizon, or x the whole term for a commitment longer than the horizon;
* spot: effective = (1 - fallback) x spot / (1 - lost work) + fallback x on-demand, and the option is
  max_share of it + (1 - max_share) of the same instance's on-demand rate in the same region;
* owned: ceil(GPUs / GPUs per node) nodes, cost per GPU-hour = (capital + OPEX) per node-month / (730 x GPUs),
  total = purchases + OPEX - resale - the residual still held at the end.
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError
from finops.money import Money, to_decimal
from finops.price_book import PriceRow
from finops.tco import SpotPolicy, cloud_rows, compare_options
from finops.tco.owned import OwnedNode, capital_recovery_factor


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def price(provider, region, instance, gpus, model, hourly, upfront=0, option="", gpu="h100-sxm", currency="USD"):
    return PriceRow(provider, region, instance, gpu, gpus, model, option, to_decimal(hourly), to_decimal(upfront),
                    currency, "2026-07-01", "test")


# ---- choosing the rows --------------------------------------------------------------------------------

BOOK = [
    price("aws", "us-east-1", "p5.48xlarge", 8, "on_demand", "55.04"),               # 6.88 a GPU-hour
    price("aws", "us-east-1", "p5.48xlarge", 8, "spot", "20"),
    price("aws", "us-east-1", "p5.48xlarge", 8, "reserved_1y", "35", "100000", "partial_upfront"),
    price("aws", "us-west-2", "p5.48xlarge", 8, "on_demand", "60"),                  # 7.50
    price("aws", "us-west-2", "p5.48xlarge", 8, "spot", "18"),                       # the cheapest row of all
    price("aws", "us-east-1", "p4d.24xlarge", 8, "on_demand", "32.77", gpu="a100-40gb"),
    price("gcp", "us-central1", "a3-highgpu-8g", 8, "on_demand", "88"),              # 11
    price("gcp", "us-central1", "a3-highgpu-8g", 8, "spot", "48"),
    price("gcp", "us-central1", "a3-highgpu-8g", 8, "cud_1y", "60", option="no_upfront"),
    price("gcp", "asia-east1", "a3-highgpu-8g", 8, "on_demand", "88"),               # 11 too: the name decides
    price("gcp", "asia-east1", "a3-highgpu-8g", 8, "spot", "40"),
    price("gcp", "europe-west4", "a3-highgpu-8g", 8, "on_demand", "96"),
    price("gcp", "europe-west4", "a3-highgpu-8g", 8, "cud_3y", "40", option="no_upfront"),
    price("gcp", "us-central1", "a3-megagpu-8g", 8, "on_demand", "80"),              # 8 GPUs, named after highgpu
    price("gcp", "us-central1", "a3-highgpu-1g", 1, "on_demand", "11"),
    price("gcp", "us-central1", "a3-highgpu-2g", 2, "on_demand", "22"),
    price("gcp", "us-central1", "a3-highgpu-4g", 4, "on_demand", "44"),
    price("gcp", "us-east5", "a3-ultragpu-8g", 8, "cud_1y", "80", option="no_upfront"),
    price("gcp", "us-south1", "a3-ultragpu-8g", 8, "cud_1y", "72", option="no_upfront"),  # no on-demand price
    price("gcp", "us-central1", "a2-megagpu-16g", 16, "on_demand", "55.74", gpu="a100-40gb"),
    price("gcp", "us-central1", "a2-highgpu-8g", 8, "on_demand", "29.39", gpu="a100-40gb"),
]
CITED = price("aws", "us-east-1", "p5.48xlarge", 8, "on_demand", "55.04")


def picked(rows):
    return [(r.provider, r.region, r.instance_type, r.pricing_model) for r in rows]


@pytest.mark.parametrize("filters,expected", [
    ({"gpu_model": "h100-sxm"}, [                      # the 8-GPU type, the region cheapest on demand
        ("aws", "us-east-1", "p5.48xlarge", "on_demand"), ("aws", "us-east-1", "p5.48xlarge", "spot"),
        ("aws", "us-east-1", "p5.48xlarge", "reserved_1y"),
        ("gcp", "asia-east1", "a3-highgpu-8g", "on_demand"), ("gcp", "asia-east1", "a3-highgpu-8g", "spot")]),
    ({"gpu_model": " H100_SXM "}, [                    # names compare in their canonical form
        ("aws", "us-east-1", "p5.48xlarge", "on_demand"), ("aws", "us-east-1", "p5.48xlarge", "spot"),
        ("aws", "us-east-1", "p5.48xlarge", "reserved_1y"),
        ("gcp", "asia-east1", "a3-highgpu-8g", "on_demand"), ("gcp", "asia-east1", "a3-highgpu-8g", "spot")]),
    ({"gpu_model": "h100-sxm", "region": "us-central1"}, [
        ("gcp", "us-central1", "a3-highgpu-8g", "on_demand"), ("gcp", "us-central1", "a3-highgpu-8g", "spot"),
        ("gcp", "us-central1", "a3-highgpu-8g", "cud_1y")]),
    ({"gpu_model": "h100-sxm", "region": "europe-west4"}, [
        ("gcp", "europe-west4", "a3-highgpu-8g", "on_demand"), ("gcp", "europe-west4", "a3-highgpu-8g", "cud_3y")]),
    ({"gpu_model": "h100-sxm", "gpus_per_instance": 4}, [       # aws has no 4-GPU type: its largest
        ("aws", "us-east-1", "p5.48xlarge", "on_demand"), ("aws", "us-east-1", "p5.48xlarge", "spot"),
        ("aws", "us-east-1", "p5.48xlarge", "reserved_1y"), ("gcp", "us-central1", "a3-highgpu-4g", "on_demand")]),
    ({"gpu_model": "h100-sxm", "gpus_per_instance": 16, "provider": "gcp"}, [   # none has 16: the most GPUs
        ("gcp", "asia-east1", "a3-highgpu-8g", "on_demand"), ("gcp", "asia-east1", "a3-highgpu-8g", "spot")]),
    ({"gpu_model": "h100-sxm", "gpus_per_instance": 1}, [
        ("aws", "us-east-1", "p5.48xlarge", "on_demand"), ("aws", "us-east-1", "p5.48xlarge", "spot"),
        ("aws", "us-east-1", "p5.48xlarge", "reserved_1y"), ("gcp", "us-central1", "a3-highgpu-1g", "on_demand")]),
    ({"instance_type": "a3-highgpu-1g", "gpu_model": "a100-40gb"}, [            # a type named: any GPU model
        ("gcp", "us-central1", "a3-highgpu-1g", "on_demand")]),
    ({"instance_type": "a3-megagpu-8g"}, [("gcp", "us-central1", "a3-megagpu-8g", "on_demand")]),
    ({"instance_type": "a3-ultragpu-8g"}, [("gcp", "us-south1", "a3-ultragpu-8g", "cud_1y")]),  # cheapest of all
    ({"provider": "AWS", "gpu_model": "a100-40gb"}, [("aws", "us-east-1", "p4d.24xlarge", "on_demand")]),
    ({"gpu_model": "a100-40gb"}, [("aws", "us-east-1", "p4d.24xlarge", "on_demand"),      # 8 GPUs, not 16
                                  ("gcp", "us-central1", "a2-highgpu-8g", "on_demand")]),
    ({"gpu_model": "a100-40gb", "gpus_per_instance": 16}, [
        ("aws", "us-east-1", "p4d.24xlarge", "on_demand"), ("gcp", "us-central1", "a2-megagpu-16g", "on_demand")]),
    ({"provider": "aws", "region": "us-west-2"}, [
        ("aws", "us-west-2", "p5.48xlarge", "on_demand"), ("aws", "us-west-2", "p5.48xlarge", "spot")]),
    ({"provider": "azure"}, []),
    ({"gpu_model": "b200"}, []),
])
def test_one_type_and_one_region_per_provider(filters, expected):
    assert picked(cloud_rows(BOOK, **filters)) == expected


WITHOUT_P5 = [r for r in BOOK if r.instance_type != "p5.48xlarge"]


@pytest.mark.parametrize("rows,filters,added", [
    (BOOK, {"gpu_model": "h100-sxm"}, False),                       # the book prices that instance already
    (WITHOUT_P5, {"gpu_model": "h100-sxm"}, True),
    (WITHOUT_P5, {"gpu_model": "a100-40gb"}, False),                # a price of another GPU is not added
    (WITHOUT_P5, {"gpu_model": "h100-sxm", "provider": "gcp"}, False),
    (WITHOUT_P5, {"gpu_model": "h100-sxm", "provider": "aws"}, True),
    (WITHOUT_P5, {"gpu_model": "h100-sxm", "region": "us-east-1"}, True),
    (WITHOUT_P5, {"gpu_model": "h100-sxm", "region": "europe-west4"}, False),
    (WITHOUT_P5, {"instance_type": "p5.48xlarge"}, True),
    (WITHOUT_P5, {"instance_type": "p4d.24xlarge"}, False),
    ([r for r in WITHOUT_P5 if r.instance_type != "p4d.24xlarge"], {}, True),
    (WITHOUT_P5, {}, True),                                          # aws has p4d, not the cited p5
])
def test_the_cited_price_is_added_when_the_book_lacks_it(rows, filters, added):
    assert cloud_rows(rows, cited=CITED, **filters) == cloud_rows(rows, **filters) + [CITED] * added


def test_without_a_cited_price_nothing_is_added():
    assert picked(cloud_rows(WITHOUT_P5, provider="aws")) == [("aws", "us-east-1", "p4d.24xlarge", "on_demand")]


# ---- costing the options -------------------------------------------------------------------------------

def node(**changes) -> OwnedNode:
    # 70,080 = 5,840 x 12: straight-line (70,080 - 17,520) / 12 = 4,380 a month; power 8 kW x 730 h x 0.10 = 584;
    # (4,380 + 584) / (730 x 8) = 0.85 a GPU-hour
    values = dict(node_price=usd(70_080), gpus_per_node=8, node_power_kw=8, electricity_per_kwh=usd("0.10"),
                  colocation_per_kw_month=usd(0), avg_power_share=1, pue=1, life_months=12, residual_share=0.25)
    values.update(changes)
    return OwnedNode(**values)


FLEET_ROWS = [
    price("gcp", "us-central1", "a3-highgpu-8g", 8, "on_demand", "88"),              # 11 a GPU-hour
    price("aws", "us-west-2", "p5.48xlarge", 8, "on_demand", "104"),                 # 13
    price("aws", "us-east-1", "p4d.24xlarge", 8, "on_demand", "72"),                 # 9
    price("aws", "us-east-1", "p5.48xlarge", 8, "on_demand", "80"),                  # 10
    price("aws", "us-east-1", "p5.48xlarge", 8, "spot", "24"),                       # 3
    price("aws", "us-east-1", "p5.48xlarge", 8, "reserved_1y", "48", "8760", "partial_upfront"),  # 6
    price("gcp", "us-central1", "a3-highgpu-8g", 8, "cud_3y", "40"),                 # 5, no payment option
    price("gcp", "europe-west4", "a3-highgpu-8g", 8, "spot", "30"),                  # no on-demand there: skipped
    price("gcp", "us-central1", "a3-highgpu-1g", 1, "on_demand", "11"),              # 11
    price("aws", "us-east-1", "p5.48xlarge", 8, "savings_plan_3y", "56", option="no_upfront"),  # 7
]

# 12 GPUs for 6 months: 2 nodes or 2 eight-GPU instances (16 GPUs, 11,680 GPU-hours a month), or 12 one-GPU ones.
# name, kind, instance, units, GPUs, per GPU-hour, monthly, total, capex, opex, upfront, term, note
FLEET_OPTIONS = [
    ("owned", "owned", "owned", 2, 16, "0.85", "9928", "112128", "140160", "7008", "0", 12,
     "2 nodes, 12-month life, straight-line; total less the 35,040.00 residual value still held"),
    # spot: 0.8 x 3 / 0.75 + 0.2 x 10 = 5.2 effective; 0.5 x 10 + 0.5 x 5.2 = 7.6
    ("aws p5.48xlarge spot 50% + on_demand", "spot", "p5.48xlarge", 2, 16, "7.6", "88768", "532608", "0", "532608",
     "0", 0, "spot 3.00/GPU-h -> 5.20 effective (25% work redone, 20% fallback)"),
    ("gcp a3-highgpu-1g on_demand", "on_demand", "a3-highgpu-1g", 12, 12, "11", "96360", "578160", "0", "578160",
     "0", 0, ""),
    ("aws p4d.24xlarge on_demand", "on_demand", "p4d.24xlarge", 2, 16, "9", "105120", "630720", "0", "630720", "0", 0,
     ""),
    ("aws p5.48xlarge on_demand", "on_demand", "p5.48xlarge", 2, 16, "10", "116800", "700800", "0", "700800", "0", 0,
     ""),
    ("gcp a3-highgpu-8g on_demand", "on_demand", "a3-highgpu-8g", 2, 16, "11", "128480", "770880", "0", "770880", "0",
     0, ""),
    # a 12-month term over a 6-month horizon: all 12 months are owed
    ("aws p5.48xlarge reserved_1y partial_upfront", "reserved", "p5.48xlarge", 2, 16, "6", "70080", "840960", "0",
     "420480", "17520", 12, "includes 6 months of commitment past the horizon"),
    # the us-west-2 row: the region is not in the name
    ("aws p5.48xlarge on_demand", "on_demand", "p5.48xlarge", 2, 16, "13", "151840", "911040", "0", "911040", "0", 0, ""),
    ("gcp a3-highgpu-8g cud_3y", "cud", "a3-highgpu-8g", 2, 16, "5", "58400", "2102400", "0", "350400", "0", 36,
     "includes 30 months of commitment past the horizon"),
    ("aws p5.48xlarge savings_plan_3y no_upfront", "savings_plan", "p5.48xlarge", 2, 16, "7", "81760", "2943360",
     "0", "490560", "0", 36, "includes 30 months of commitment past the horizon"),
]


def test_each_option_of_a_twelve_gpu_fleet_over_six_months():
    result = compare_options(12, 6, node(), FLEET_ROWS, spot=SpotPolicy(0.25, 0.2, 0.5))
    got = [(o.name, o.kind, o.instance_type, o.units, o.gpus, o.per_gpu_hour, o.monthly, o.total, o.capex, o.opex,
            o.upfront, o.term_months, o.note) for o in result.options]
    expected = [(name, kind, instance, units, gpus, usd(rate), usd(monthly), usd(total), usd(capex), usd(opex),
                 usd(upfront), term, note)
                for name, kind, instance, units, gpus, rate, monthly, total, capex, opex, upfront, term, note
                in FLEET_OPTIONS]
    assert got == expected
    assert result.cheapest == result.options[0] and result.cheapest.name == "owned"
    assert (result.gpus, result.months) == (12, 6)
    assert result.owned is not None and result.owned.nodes == 2 and result.owned.npv is None
    assert result.owned.schedule[0].month == "2026-01" and len(result.owned.schedule) == 6


def test_equal_totals_rank_by_name():
    rows = [price("gcp", "b", "zz-8g", 8, "on_demand", "80"), price("aws", "a", "yy-8g", 8, "on_demand", "80")]
    assert [o.name for o in compare_options(8, 3, None, rows).options] == ["aws yy-8g on_demand",
                                                                           "gcp zz-8g on_demand"]


def test_the_default_spot_policy():
    # 5 % redone, 10 % fallback, at most 30 % on spot: effective = 0.9 x 3 / 0.95 + 0.1 x 10 = 73 / 19;
    # rate = 0.7 x 10 + 0.3 x 73 / 19 = 154.9 / 19; one 8-GPU instance for a month: x 5,840
    rows = [price("aws", "us-east-1", "p5.48xlarge", 8, "on_demand", "80"),
            price("aws", "us-east-1", "p5.48xlarge", 8, "spot", "24")]
    result = compare_options(8, 1, None, rows)
    spot = next(o for o in result.options if o.kind == "spot")
    rate = Decimal("154.9") / 19
    assert spot.name == "aws p5.48xlarge spot 30% + on_demand"
    assert spot.note == "spot 3.00/GPU-h -> 3.84 effective (5% work redone, 10% fallback)"
    assert abs(spot.per_gpu_hour.amount - rate) < Decimal("1e-25")
    assert spot.to_dict() == {
        "name": "aws p5.48xlarge spot 30% + on_demand", "kind": "spot", "instance_type": "p5.48xlarge", "units": 1,
        "gpus": 8, "per_gpu_hour": Decimal("8.1526"), "monthly": Decimal("47611.37"),
        "total": Decimal("47611.37"), "capex": Decimal("0.00"), "opex": Decimal("47611.37"),
        "upfront": Decimal("0.00"), "term_months": 0,
        "note": "spot 3.00/GPU-h -> 3.84 effective (5% work redone, 10% fallback)"}
    assert result.owned is None and result.cheapest.kind == "spot"


@pytest.mark.parametrize("max_share,rate", [(0, "10"), (1, "3"), (0.25, "8.25")])   # no redone work, no fallback
def test_the_spot_cap_blends_with_on_demand(max_share, rate):
    rows = [price("aws", "us-east-1", "p5.48xlarge", 8, "spot", "24"),
            price("aws", "us-east-1", "p5.48xlarge", 8, "on_demand", "80")]
    spot = compare_options(8, 1, None, rows, spot=SpotPolicy(0, 0, max_share)).options
    assert [o.per_gpu_hour for o in spot if o.kind == "spot"] == [usd(rate)]


def test_spot_without_an_on_demand_price_of_its_own_is_left_out():
    rows = [price("aws", "us-east-1", "p5.48xlarge", 8, "spot", "24"),
            price("aws", "us-west-2", "p5.48xlarge", 8, "on_demand", "80"),      # another region
            price("aws", "us-east-1", "p4d.24xlarge", 8, "on_demand", "72"),     # another type
            price("gcp", "us-east-1", "p5.48xlarge", 8, "on_demand", "64")]      # another provider
    assert [o.kind for o in compare_options(8, 1, None, rows).options] == ["on_demand"] * 3


@pytest.mark.parametrize("gpus,months,nodes,units,note", [
    (8, 12, 1, 1, "1 node, 12-month life, 12% cost of capital"),     # sold at the end of its life: none held
    (9, 6, 2, 2, "2 nodes, 12-month life, 12% cost of capital; total less the 35,040.00 residual value still held"),
    (16, 24, 2, 2, "2 nodes, 12-month life, 12% cost of capital"),
])
def test_owned_at_a_cost_of_capital(gpus, months, nodes, units, note):
    n = node(cost_of_capital=0.12)
    rows = [price("aws", "us-east-1", "p5.48xlarge", 8, "reserved_1y", "48", "8760", "partial_upfront")]
    result = compare_options(gpus, months, n, rows, start="2026-11", owned_name="our racks")
    owned = next(o for o in result.options if o.kind == "owned")
    i = 0.01                                                   # 12 % a year, monthly
    crf = float(capital_recovery_factor(0.12, 12))
    assert crf == pytest.approx(i / (1 - (1 + i) ** -12), rel=1e-12)
    levelized = 52_560 * crf + 17_520 * i                      # (price - residual) x CRF + residual x i
    assert float(owned.per_gpu_hour.amount) == pytest.approx((levelized + 584) / 5840, rel=1e-12)
    assert owned.monthly == owned.per_gpu_hour * (nodes * 8 * 730)
    assert (owned.name, owned.instance_type, owned.units, owned.gpus, owned.note) == (
        "our racks", "our racks", nodes, nodes * 8, note)
    lives = -(-months // 12)                                   # purchases inside the horizon
    sold = months // 12                                        # lives that end inside it
    held = 17_520 * nodes if months % 12 else 0
    assert owned.capex == usd(70_080 * nodes * lives)
    assert owned.opex == usd(584 * nodes * months)
    assert owned.total == usd(70_080 * nodes * lives + 584 * nodes * months - 17_520 * nodes * sold - held)
    assert result.owned.schedule[0].month == "2026-11"
    assert result.owned.npv is not None                        # discounted at the node's cost of capital
    reserved = next(o for o in result.options if o.kind == "reserved")
    assert reserved.units == units


def test_a_discount_rate_of_zero_gives_no_npv():
    result = compare_options(8, 12, node(cost_of_capital=0.12), [], discount_rate=0)
    assert result.owned.npv is None
    result = compare_options(8, 12, node(), [], discount_rate=0.12)
    # 70,080 bought in month 0, 584 a month at the start of each month, 17,520 back in month 11, at 1 % a month
    by_hand = 70_080 + sum(584 / 1.01 ** k for k in range(12)) - 17_520 / 1.01 ** 11
    assert float(result.owned.npv.amount) == pytest.approx(by_hand, rel=1e-12)


def test_tokens_cost_at_the_peak_and_at_the_average():
    rows = [price("aws", "us-east-1", "p4d.24xlarge", 8, "on_demand", "72")]        # 9 a GPU-hour
    option = compare_options(8, 1, None, rows).cheapest
    assert option.per_million_tokens(2500) == usd(1)                               # 9 / (2,500 x 3,600) x 10^6
    assert option.per_million_tokens(2500, 2) == usd(2)
    assert option.per_million_tokens(1250, "1.5") == usd(3)


def test_a_comparison_as_json():
    rows = [price("aws", "us-east-1", "p4d.24xlarge", 8, "on_demand", "72")]
    result = compare_options(8, 1, node(), rows)
    payload = result.to_dict()
    assert payload == {"gpus": 8, "months": 1, "currency": "USD", "cheapest": "aws p4d.24xlarge on_demand",
                       "total_basis": ("what the horizon commits you to: owned purchases + OPEX - resale - the "
                                       "residual value still held (never its book value); commitments every month "
                                       "of their term; on-demand and spot the horizon"),
                       "options": [o.to_dict() for o in result.options], "owned": result.owned.to_dict()}
    # one node for a month: 70,080 + 584 - 17,520 held = 53,144; p4d: 9 x 5,840 = 52,560
    assert [(o["name"], o["total"]) for o in payload["options"]] == [
        ("aws p4d.24xlarge on_demand", Decimal("52560.00")), ("owned", Decimal("53144.00"))]
    assert payload["owned"]["nodes"] == 1 and payload["options"][1]["per_gpu_hour"] == Decimal("0.8500")
    assert "owned" not in compare_options(8, 1, None, rows).to_dict()


@pytest.mark.parametrize("owned,rows,currency,message", [
    (node(), [price("gcp", "x", "a3-highgpu-8g", 8, "on_demand", "1", currency="EUR")], None,
     "gcp a3-highgpu-8g is priced in EUR, the comparison in USD"),
    (node(node_price=Money.of(70_080, "EUR"), electricity_per_kwh=Money.of("0.1", "EUR"),
          colocation_per_kw_month=Money.of(0, "EUR")), [price("aws", "x", "p5.48xlarge", 8, "on_demand", "1")], None,
     "aws p5.48xlarge is priced in USD, the comparison in EUR"),
    (node(), [], "EUR", "the owned node is priced in USD, the comparison in EUR"),
    (None, [price("aws", "x", "p5.48xlarge", 8, "on_demand", "1"),
            price("gcp", "x", "a3-highgpu-8g", 8, "on_demand", "1", currency="EUR")], None,
     "gcp a3-highgpu-8g is priced in EUR, the comparison in USD"),           # the first row's currency
])
def test_prices_in_another_currency_are_refused(owned, rows, currency, message):
    with pytest.raises(CurrencyMismatchError) as caught:
        compare_options(8, 12, owned, rows, currency=currency)
    assert (caught.value.message, caught.value.hint) == (message, "convert one side explicitly first")
