from decimal import Decimal

import pytest

from finops import InputError
from finops.price_book import COLUMNS, PriceBook, PriceRow


def _row(**over):
    base = dict(provider="aws", region="us-east-1", instance_type="p5.48xlarge", gpu_model="h100-sxm", gpu_count=8,
                pricing_model="on_demand", payment_option="", hourly_cost=Decimal("55.04"),
                upfront_cost=Decimal("0"), currency="USD", effective_date="2026-11-01", source="test")
    base.update(over)
    return PriceRow(**base)


BOOK = PriceBook([
    _row(),
    _row(pricing_model="reserved_1y", payment_option="no_upfront", hourly_cost=Decimal("40.00")),
    _row(pricing_model="reserved_1y", payment_option="all_upfront", hourly_cost=Decimal("36.50"),
         upfront_cost=Decimal("319740")),
    _row(provider="gcp", region="us-central1", instance_type="a3-highgpu-8g", hourly_cost=Decimal("88.25")),
])


@pytest.mark.parametrize("kwargs, expected", [
    ({"provider": "AWS"}, 3), ({"instance_type": "P5.48XLARGE"}, 3), ({"pricing_model": "reserved_1y"}, 2),
    ({"provider": "gcp", "region": "us-central1"}, 1), ({"region": "eu-west-1"}, 0),
])
def test_filter(kwargs, expected):
    assert len(BOOK.filter(**kwargs)) == expected


def test_lookup_picks_the_cheapest_effective_payment_option():
    row = BOOK.lookup("aws", "p5.48xlarge", "reserved_1y", "us-east-1")
    assert row.payment_option == "all_upfront" and row.per_gpu_hour == Decimal("4.5625")
    assert BOOK.lookup("aws", "p5.48xlarge", "reserved_1y", "us-east-1", "no_upfront").hourly_cost == Decimal("40.00")
    assert row.term_hours == 8760


@pytest.mark.parametrize("args", [("aws", "p5.48xlarge", "spot", "us-east-1"),
                                  ("aws", "p5.48xlarge", "reserved_9y", "us-east-1")])
def test_lookup_misses_are_input_errors(args):
    with pytest.raises(InputError):
        BOOK.lookup(*args)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_round_trip_is_exact(tmp_path, suffix):
    path = BOOK.write_parquet(tmp_path / f"b{suffix}") if suffix == ".parquet" else BOOK.write_csv(tmp_path / f"b{suffix}")
    assert PriceBook.read(path).rows == BOOK.rows


def test_bad_rows_name_file_and_row(tmp_path):
    path = tmp_path / "bad.csv"
    lines = [",".join(COLUMNS), "aws,us-east-1,p5.48xlarge,h100-sxm,8,on_demand,,55.04,0,USD,2026-11-01,x",
             "aws,us-east-1,p5.48xlarge,h100-sxm,8,hourly,,55.04,0,USD,2026-11-01,x"]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad.csv, row 3.*unknown pricing_model 'hourly'"):
        PriceBook.read(path)


def test_current_honours_the_environment(tmp_path, monkeypatch):
    path = BOOK.write_csv(tmp_path / "pulled.csv")
    monkeypatch.setenv("FINOPS_PRICE_BOOK", str(path))
    assert PriceBook.current().rows == BOOK.rows
