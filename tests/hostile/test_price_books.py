"""Money in, price books: a price book given to ``tco --price-book`` prices each instance once, in a currency
it names. A key priced twice by one source (two pulls appended, a row pasted and edited) was offered twice, the
cheaper row ranked first, with exit 0; it is refused naming both rows. Two sources pricing one key (AWS's
standard and convertible reserved instances) stay two offers. A book saved by Excel (a byte-order mark before the
header) or a currency in lower case is read as meant."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from finops.price_book import COLUMNS

from .desk import Case, check, text_file

#: The on-demand p5.48xlarge row of the bundled book (AWS's page after the June 2025 cut), as a CSV line.
ON_DEMAND = "aws,us-east-1,p5.48xlarge,h100-sxm,8,on_demand,,55.04,0,{currency},2025-06-05,aws.amazon.com/ec2/pricing"
RESERVED = ("aws,us-east-1,p5.48xlarge,h100-sxm,8,reserved_3y,no_upfront,23.77728,0,USD,2025-11-30,"
            "aws.amazon.com/ec2/pricing/reserved-instances")
HEADER = ",".join(COLUMNS)
#: 36 months of 730 hours of one p5.48xlarge (8 GPUs, ``tco``'s default fleet) on demand at 55.04 USD an hour.
ON_DEMAND_TOTAL = Decimal("55.04") * 730 * 36


def _tco(folder: Path, *lines: str, head: str = "") -> list[object]:
    book = text_file(folder, "prices.csv", head + "\n".join((HEADER, *lines)) + "\n")
    return ["tco", "--provider", "aws", "--instance-type", "p5.48xlarge", "--region", "us-east-1", "--no-owned",
            "--json", "--price-book", book]


def _totals_are(out: str, totals: list[Decimal]) -> None:
    options = [(o["name"], Decimal(str(o["total"]))) for o in json.loads(out)["options"]]
    assert options == [("aws p5.48xlarge on_demand", total) for total in totals], options


def _on_demand_total(folder: Path, out: str, err: str) -> None:
    _totals_are(out, [ON_DEMAND_TOTAL])


TWICE = "priced twice by one source"
CASES: dict[str, Case] = {
    "an instance priced twice, the second row cheaper (was exit 0: both offered, the cheaper first)": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="USD"), RESERVED,
                       ON_DEMAND.format(currency="USD").replace("55.04", "5.504")),
        names=("prices.csv", "row 4", "hourly_cost", TWICE, "row 2")),
    "a row given twice alike (was exit 0: offered twice)": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="USD"), ON_DEMAND.format(currency="USD")),
        names=("prices.csv", "row 3", TWICE, "row 2")),
    "a key priced twice in another case": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="USD"),
                       ON_DEMAND.format(currency="USD").replace("p5.48xlarge", "P5.48XLARGE")),
        names=("prices.csv", "row 3", TWICE)),
    "two sources pricing one key are two offers": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="USD"), ON_DEMAND.format(currency="USD").replace(
            "55.04", "60.00").replace("aws.amazon.com/ec2/pricing", "a reseller's list")), exit=0,
        verify=lambda d, out, err: _totals_are(out, [ON_DEMAND_TOTAL, Decimal("60.00") * 730 * 36])),
    "a currency US$": Case(lambda d: _tco(d, ON_DEMAND.format(currency="US$")),
                           names=("prices.csv", "row 2", "column currency", "ISO 4217")),
    "a currency left empty": Case(lambda d: _tco(d, ON_DEMAND.format(currency="")),
                                  names=("prices.csv", "row 2", "column currency")),
    "a currency in lower case is that currency (was exit 2, naming no place)": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="usd")), exit=0, verify=_on_demand_total),
    "a book saved by Excel with a byte-order mark (was exit 2: 'lacks columns provider')": Case(
        lambda d: _tco(d, ON_DEMAND.format(currency="USD"), head="\ufeff"), exit=0, verify=_on_demand_total),
}


def _parquet_bomb(folder: Path) -> Path:
    """A Parquet price book of a few kB whose ``source`` of 1 MiB, stored once in a dictionary page, stands in
    each of its 600 rows: 600 MiB of values once read, past the 512 MiB any inflation may reach."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 600
    values = dict(zip(COLUMNS, ON_DEMAND.format(currency="USD").split(","), strict=True))
    columns = {name: pa.array([value] * rows) for name, value in values.items()}
    columns["gpu_count"] = pa.array([8] * rows, pa.int32())
    columns["source"] = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["x" * (1 << 20)]))
    path = folder / "prices.parquet"
    pq.write_table(pa.table(columns), path, compression="zstd")
    assert path.stat().st_size < 64 * 1024
    return path


CASES["a Parquet book of a few kB inflating to 600 MiB of values (was read whole, gigabytes for larger ones)"] = Case(
    lambda d: ["tco", "--provider", "aws", "--instance-type", "p5.48xlarge", "--region", "us-east-1", "--no-owned",
               "--json", "--price-book", _parquet_bomb(d)], names=("prices.parquet", "more than 512 MiB"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_price_book_prices_each_instance_once(name, tmp_path, capsys, monkeypatch):
    check(CASES[name], tmp_path, capsys, monkeypatch)
