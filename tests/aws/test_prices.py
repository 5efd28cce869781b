"""AWS prices -> the price book: Pricing API, Savings Plans and spot history through botocore's Stubber with
responses in the shapes AWS documents, then the whole ``pull_prices`` through real (stubbed) clients."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import pytest
from botocore.stub import ANY, Stubber

from connectors import aws
from connectors.aws.pricing import fetch_product_documents, price_rows
from connectors.aws.spot import percentile, summarize
from finops.errors import InputError, UnknownNameError
from finops.money import MONEY_CONTEXT

D = Decimal
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class StubbedSession:
    """Implements ``AwsSession.client``: real botocore clients, each with an active Stubber."""

    def __init__(self) -> None:
        self.stubbers: dict[tuple[str, str], Stubber] = {}
        self._clients: dict[tuple[str, str], object] = {}

    def stub(self, service: str, region: str = "us-east-1") -> Stubber:
        key = (service, region)
        if key not in self._clients:
            client = boto3.client(service, region_name=region, aws_access_key_id="AKIAEXAMPLE",
                                  aws_secret_access_key="example")
            self._clients[key] = client
            self.stubbers[key] = Stubber(client)
            self.stubbers[key].activate()
        return self.stubbers[key]

    def client(self, service: str, region: str | None = None) -> object:
        self.stub(service, region or "us-east-1")
        return self._clients[(service, region or "us-east-1")]


@pytest.fixture
def pages(data):
    return json.loads((data / "get_products_p5.json").read_text())["pages"]


def _rate(plan: str, payment: str, seconds: int, rate: str, *, region: str = "us-east-1",
          usage: str = "BoxUsage:p5.48xlarge", operation: str = "RunInstances") -> dict:
    return {"savingsPlanOffering": {"offeringId": f"off-{plan}-{payment}-{seconds}", "paymentOption": payment,
                                    "planType": plan, "durationSeconds": seconds, "currency": "USD",
                                    "planDescription": f"{plan} {payment}"},
            "rate": rate, "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2", "usageType": usage,
            "operation": operation,
            "properties": [{"name": "region", "value": region}, {"name": "instanceType", "value": "p5.48xlarge"},
                           {"name": "instanceFamily", "value": "p5"},
                           {"name": "productDescription", "value": "Linux/UNIX"},
                           {"name": "tenancy", "value": "shared"}]}


def _spot(zone: str, price: str, hours_ago: float) -> dict:
    return {"AvailabilityZone": zone, "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
            "SpotPrice": price, "Timestamp": NOW - timedelta(hours=hours_ago)}


@pytest.fixture
def session(pages):
    session = StubbedSession()
    pricing = session.stub("pricing")
    pricing.add_response("get_products", pages[0])
    pricing.add_response("get_products", pages[1], {"ServiceCode": "AmazonEC2", "FormatVersion": "aws_v1",
                                                    "NextToken": "page-2", "Filters": ANY})
    savings = session.stub("savingsplans")
    savings.add_response("describe_savings_plans_offering_rates", {"searchResults": [
        _rate("EC2Instance", "No Upfront", 31536000, "37.2800"),
        _rate("Compute", "All Upfront", 94608000, "24.1000"),
        _rate("EC2Instance", "No Upfront", 31536000, "51.0000", operation="RunInstances:0002"),  # Windows
    ], "nextToken": "sp-2"})
    savings.add_response("describe_savings_plans_offering_rates", {"searchResults": [
        _rate("EC2Instance", "Partial Upfront", 31536000, "36.0000", region="us-west-2"),
        _rate("Compute", "No Upfront", 31536000, "40.0000", usage="DedicatedUsage:p5.48xlarge"),  # dedicated
    ]})
    east = session.stub("ec2", "us-east-1")
    east.add_response("describe_spot_price_history", {"SpotPriceHistory": [
        _spot("us-east-1a", "20.00", 100), _spot("us-east-1a", "22.00", 50)], "NextToken": "spot-2"})
    east.add_response("describe_spot_price_history", {"SpotPriceHistory": [
        _spot("us-east-1a", "24.00", 10), _spot("us-east-1b", "30.00", 60), _spot("us-east-1b", "31.00", 5)],
        "NextToken": ""})
    session.stub("ec2", "us-west-2").add_response("describe_spot_price_history", {"SpotPriceHistory": []})
    return session


def test_pull_prices_reads_every_page_of_every_api(session):
    book = aws.pull_prices(instance_types=["p5.48xlarge"], session=session, today=NOW.date())
    for stubber in session.stubbers.values():
        stubber.assert_no_pending_responses()
    got = {(r.region, r.pricing_model, r.payment_option, r.source.split("; ")[1].split(",")[0]): r for r in book}
    assert got[("us-east-1", "on_demand", "", "on-demand")].hourly_cost == D("55.04")
    assert got[("us-west-2", "on_demand", "", "on-demand")].per_gpu_hour == D("6.88")
    partial = got[("us-east-1", "reserved_1y", "partial_upfront", "reserved standard 1yr Partial Upfront")]
    amortized = MONEY_CONTEXT.add(D("18.342"), MONEY_CONTEXT.divide(D("160676"), D(8760)))
    assert (partial.hourly_cost, partial.upfront_cost) == (amortized, D("160676"))
    all_3y = got[("us-east-1", "reserved_3y", "all_upfront", "reserved standard 3yr All Upfront")]
    assert all_3y.hourly_cost == MONEY_CONTEXT.divide(D("648000"), D(26280))
    convertible = got[("us-east-1", "reserved_1y", "no_upfront", "reserved convertible 1yr No Upfront")]
    assert convertible.hourly_cost == D("42.95")
    assert all(r.gpu_model == "h100-sxm" and r.gpu_count == 8 and r.effective_date == "2026-11-30" for r in book)


def test_savings_plan_rows_keep_linux_shared_only_with_upfront_apart(session):
    book = aws.pull_prices(instance_types=["p5.48xlarge"], session=session, today=NOW.date())
    plans = sorted((r.region, r.pricing_model, r.payment_option, r.hourly_cost, r.upfront_cost)
                   for r in book if r.pricing_model.startswith("savings_plan"))
    assert plans == [("us-east-1", "savings_plan_1y", "no_upfront", D("37.2800"), D("0")),
                     ("us-east-1", "savings_plan_3y", "all_upfront", D("24.1000"), D("24.1000") * 26280),
                     ("us-west-2", "savings_plan_1y", "partial_upfront", D("36.0000"), D("36.0000") * 8760 / 2)]


def test_spot_row_is_the_zone_with_the_lowest_median(session):
    book = aws.pull_prices(instance_types=["p5.48xlarge"], session=session, today=NOW.date())
    spot, = [r for r in book if r.pricing_model == "spot"]
    assert (spot.region, spot.hourly_cost) == ("us-east-1", D("22.00"))
    assert "us-east-1a (latest 24.00, p90 23.600, 3 prices)" in spot.source


@pytest.mark.parametrize("values, q, expected", [
    (["5"], 50, "5"), (["1", "3"], 50, "2"), (["1", "2", "3", "4", "5"], 90, "4.6"), (["4", "1", "3", "2"], 0, "1"),
])
def test_percentile_matches_linear_interpolation(values, q, expected):
    assert percentile([D(v) for v in values], q) == D(expected)


def test_spot_summary_latest_is_by_timestamp_not_order():
    records = [_spot("us-east-1a", "3", 1), _spot("us-east-1a", "9", 30), _spot("us-east-1a", "6", 20)]
    summary, = summarize(records, "us-east-1", NOW - timedelta(days=7), NOW)
    assert (summary.latest, summary.median, summary.samples) == (D("3"), D("6"), 3)


def test_unknown_instance_type_is_refused_before_any_call():
    with pytest.raises(UnknownNameError) as info:
        aws.pull_prices(instance_types=["p5.48xlarg"], session=StubbedSession())
    assert "p5.48xlarge" in str(info.value)


def test_get_products_filters_are_the_documented_term_matches(pages):
    session = StubbedSession()
    expected = {"ServiceCode": "AmazonEC2", "FormatVersion": "aws_v1", "Filters": [
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "p5.48xlarge"},
        {"Type": "TERM_MATCH", "Field": "location", "Value": "US West (Oregon)"}]}
    session.stub("pricing").add_response("get_products", pages[1], expected)
    documents = fetch_product_documents(session.client("pricing"), ["p5.48xlarge"], ["us-west-2"])
    assert [d["product"]["attributes"]["regionCode"] for d in documents] == ["us-west-2"]


def test_other_variants_are_not_priced_and_bad_units_fail(pages):
    document = json.loads(pages[0]["PriceList"][0])
    windows = {**document, "product": {**document["product"], "attributes": {
        **document["product"]["attributes"], "operatingSystem": "Windows"}}}
    assert price_rows(windows, gpu_of=lambda t: ("h100-sxm", 8), as_of="2026-11-30", source="t") == []
    term, = document["terms"]["OnDemand"].values()
    dimension, = term["priceDimensions"].values()
    dimension["unit"] = "GB-Mo"
    with pytest.raises(InputError, match="unknown unit 'GB-Mo'"):
        price_rows(document, gpu_of=lambda t: ("h100-sxm", 8), as_of="2026-11-30", source="t")
