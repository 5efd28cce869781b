"""The bundled AWS snapshot: every row dated and sourced, and exactly what the connector's own mappers make
of the recorded observations (so it cannot drift from the code path). Plus the modules' docstring examples,
which pytest collects only under finops/."""

from __future__ import annotations

import doctest
import gzip
import importlib
from decimal import Decimal
from importlib import resources

import pytest

from connectors import aws
from connectors.aws.snapshot import build_snapshot, recorded_observations
from finops.errors import InputError
from finops.price_book import PriceBook

MODULES = ["connectors.aws.session", "connectors.aws.regions", "connectors.aws.pricing", "connectors.aws.spot",
           "connectors.aws.savings_plans", "connectors.aws.cur", "connectors.aws.focus_export",
           "connectors.focus_table", "connectors.aws.cost_explorer", "connectors.aws.bills",
           "connectors.aws.snapshot"]


def _bundled_aws_files():
    folder = resources.files("finops").joinpath("data", "prices")
    return sorted(e for e in folder.iterdir() if e.name.startswith("aws-") and e.name.endswith(".csv.gz"))


def test_the_bundled_snapshot_is_the_mappers_output_of_the_recorded_observations():
    newest = _bundled_aws_files()[-1]
    bundled = PriceBook.read_csv(newest.name, text=gzip.decompress(newest.read_bytes()).decode())
    rebuilt = build_snapshot(recorded_observations(), gpu_of=aws._required_gpu)
    assert [r.to_record() for r in bundled] == [r.to_record() for r in rebuilt]


def test_every_bundled_aws_row_has_a_source_and_a_date():
    book = PriceBook.bundled().filter(provider="aws")
    assert len(book) >= 50
    assert all(r.source and len(r.effective_date) == 10 for r in book)
    p5 = book.lookup("aws", "p5.48xlarge", "on_demand", "us-east-1")
    assert (p5.per_gpu_hour, p5.effective_date) == (Decimal("6.88"), "2025-06-05")


_HEADER = "instance_type,region,pricing_model,payment_option,zone,price,source,as_of\n"


@pytest.mark.parametrize("row, refusal", [
    ("g6.xlarge,us-east-1,on_demand,,,0.8048,,2026-11-30", "without source"),
    ("g6.xlarge,us-east-1,savings_plan_1y,,,0.5,a page,2026-11-30", "a known pricing_model"),
    ("g6.xlarge,us-east-1,reserved_1y,,,0.52392,a page,2026-11-30", "needs payment_option no_upfront or all"),
    ("g6.xlarge,us-east-1,reserved_3y,partial_upfront,,0.34,a page,2026-11-30", "needs payment_option no_upfront or"),
    ("g6.xlarge,us-east-1,on_demand,no_upfront,,0.8048,a page,2026-11-30", "needs payment_option empty"),
])
def test_a_recorded_row_that_cannot_be_priced_is_refused(row, refusal):
    with pytest.raises(InputError, match=refusal):
        recorded_observations(_HEADER + row + "\n")


@pytest.mark.parametrize("instance_type, region, model, option, effective, hours, per_gpu, source", [
    ("p4d.24xlarge", "us-east-1", "on_demand", "", "21.957642", 0, "2.74470525", "tsaol/aws-gpu@77fcd9fe"),
    ("p4d.24xlarge", "us-east-1", "reserved_1y", "no_upfront", "13.921094", 0, "1.74013675", "tsaol/aws-gpu@77fcd9fe"),
    ("p4d.24xlarge", "us-east-1", "reserved_3y", "all_upfront", "8.159056", 26280, "1.019882", "tsaol/aws-gpu@2d0108c"),
    ("p5.48xlarge", "us-east-1", "reserved_3y", "no_upfront", "23.77728", 0, "2.97216", "tsaol/aws-gpu@2d0108c"),
    ("g6e.xlarge", "us-west-2", "reserved_1y", "no_upfront", "1.17243", 0, "1.17243", "tsaol/aws-gpu@77fcd9fe"),
    ("g6e.xlarge", "us-east-1", "reserved_1y", "all_upfront", "1.094292", 8760, "1.094292", "tsaol/aws-gpu@2d0108c"),
    ("trn1.32xlarge", "us-east-1", "on_demand", "", "21.5", 0, "1.34375", "tsaol/aws-gpu@77fcd9fe"),
    # 85.964 / 16 Trainium2 chips; the only region any source prices it in
    ("trn2.48xlarge", "us-east-2", "on_demand", "", "85.964", 0, "5.37275", "skypilot-catalog@001367d2"),
])
def test_recorded_on_demand_and_reserved_rows_reach_the_bundled_book(instance_type, region, model, option, effective,
                                                                     hours, per_gpu, source):
    """A recorded reserved price is the effective hourly rate; All Upfront carries it as rate x term hours."""
    row = PriceBook.bundled().lookup("aws", instance_type, model, region, payment_option=option or None)
    assert (row.payment_option, row.hourly_cost) == (option, Decimal(effective))
    assert row.upfront_cost == Decimal(effective) * hours and row.per_gpu_hour == Decimal(per_gpu)
    assert source in row.source


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failed, _attempted = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert failed == 0
