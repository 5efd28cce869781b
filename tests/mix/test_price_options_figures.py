"""Mix options from price-book rows: one option per price of the pool, named, priced and capped as the rows say."""

from decimal import Decimal

import pytest

from finops.errors import InputError
from finops.mix.price_options import options_from_prices
from finops.price_book import PriceBook, PriceRow


def row(model, hourly, payment="", upfront="0", provider="aws", region="us-east-1", itype="p5.48xlarge",
        currency="USD"):
    return PriceRow(provider, region, itype, "h100-sxm", 8, model, payment, Decimal(hourly), Decimal(upfront),
                    currency, "2026-07-30", "test row")


BOOK = PriceBook([
    row("on_demand", "98.32"), row("spot", "40.10"), row("reserved_1y", "57.63", "all_upfront", "504838.8"),
    row("reserved_3y", "43.16", "no_upfront"), row("savings_plan_1y", "64.00", "no_upfront"),
    row("on_demand", "1", region="us-west-2"), row("on_demand", "2", itype="p4d.24xlarge"),
    row("on_demand", "3", provider="other"),
    row("on_demand", "88.25", provider="gcp", itype="a3-highgpu-8g", region="us-central1"),
    row("cud_1y", "60", "no_upfront", provider="gcp", itype="a3-highgpu-8g", region="us-central1"),
    row("cud_3y", "40", "no_upfront", provider="gcp", itype="a3-highgpu-8g", region="us-central1"),
])


def test_one_option_per_price_within_the_horizon():
    options = options_from_prices(BOOK, "aws", "p5.48xlarge", "us-east-1", horizon_hours=8760,
                                  spot_share=0.25, spot_availability=0.8)
    assert [(o.name, o.kind, o.hourly_cost, o.upfront, o.term_hours, o.max_share, o.availability, o.currency)
            for o in options] == [
        ("on_demand", "on_demand", Decimal("98.32"), 0, None, None, 1.0, "USD"),
        ("spot", "spot", Decimal("40.10"), 0, None, 0.25, 0.8, "USD"),
        ("reserved_1y-all_upfront", "reserved", Decimal("57.63"), Decimal("504838.8"), 8760, None, 1.0, "USD"),
        ("savings_plan_1y-no_upfront", "savings_plan", Decimal("64.00"), 0, 8760, None, 1.0, "USD")]
    assert all(o.max_units is None and o.variable_cost == 0 for o in options)


def test_a_three_year_horizon_keeps_the_three_year_terms_and_the_defaults_cap_spot():
    options = options_from_prices(BOOK, "AWS", "P5.48xlarge", "US-East-1", horizon_hours=26280)
    assert [o.name for o in options] == ["on_demand", "spot", "reserved_1y-all_upfront", "reserved_3y-no_upfront",
                                         "savings_plan_1y-no_upfront"]
    spot = options[1]
    assert (spot.max_share, spot.availability) == (0.3, 1.0)
    assert options_from_prices(BOOK, "aws", "p5.48xlarge", "us-east-1", horizon_hours=26279)[3].name \
        == "savings_plan_1y-no_upfront"


def test_gcp_commitments_are_cuds():
    options = options_from_prices(BOOK, "gcp", "a3-highgpu-8g", "us-central1", horizon_hours=26280)
    assert [(o.name, o.kind, o.term_hours) for o in options] == [
        ("on_demand", "on_demand", None), ("cud_1y-no_upfront", "cud", 8760), ("cud_3y-no_upfront", "cud", 26280)]


def test_a_pool_without_an_on_demand_price_is_refused():
    with pytest.raises(InputError) as caught:
        options_from_prices(BOOK, "aws", "g5.xlarge", "us-east-1", horizon_hours=8760)
    assert caught.value.message == "no on-demand price for aws g5.xlarge in us-east-1"
    assert caught.value.hint == "run `finops prices show` to see what the price book holds"
    only_spot = PriceBook([row("spot", "3")])
    with pytest.raises(InputError, match="no on-demand price"):
        options_from_prices(only_spot, "aws", "p5.48xlarge", "us-east-1", horizon_hours=8760)


def test_the_options_take_the_price_books_currency():
    book = PriceBook([row("on_demand", "600", currency="CNY"), row("reserved_1y", "400", "no_upfront", currency="CNY")])
    options = options_from_prices(book, "aws", "p5.48xlarge", "us-east-1", horizon_hours=8760)
    assert [o.currency for o in options] == ["CNY", "CNY"]
