"""AWS region codes, the location names the Price List uses, and the usage-type prefixes of bills.

The Pricing API filters and the bulk offer files name regions by location (``US East (N. Virginia)``);
everything else (EC2, Savings Plans properties, CUR ``product_region_code``) uses the code
(``us-east-1``). Usage types carry a short prefix (``USE1-BoxUsage:p5.48xlarge``).

Source: AWS Price List API attribute values for ``location`` / ``regionCode`` and the usage-type prefixes in
Cost and Usage Reports (https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/price-changes.html),
as of 2026-07.

>>> location_of("us-east-1"), region_of("EU (Frankfurt)"), region_of_usage_type("APN1-BoxUsage:p5.48xlarge")
('US East (N. Virginia)', 'eu-central-1', 'ap-northeast-1')
"""

from __future__ import annotations

from finops.registry import Registry

__all__ = ["REGIONS", "location_of", "region_of", "region_of_usage_type"]

#: region code -> (Price List location name, usage-type prefix)
REGIONS: dict[str, tuple[str, str]] = {
    "us-east-1": ("US East (N. Virginia)", "USE1"),
    "us-east-2": ("US East (Ohio)", "USE2"),
    "us-west-1": ("US West (N. California)", "USW1"),
    "us-west-2": ("US West (Oregon)", "USW2"),
    "ca-central-1": ("Canada (Central)", "CAN1"),
    "ca-west-1": ("Canada West (Calgary)", "CAN2"),
    "mx-central-1": ("Mexico (Central)", "MXC1"),
    "sa-east-1": ("South America (Sao Paulo)", "SAE1"),
    "eu-central-1": ("EU (Frankfurt)", "EUC1"),
    "eu-central-2": ("EU (Zurich)", "EUC2"),
    "eu-west-1": ("EU (Ireland)", "EU"),
    "eu-west-2": ("EU (London)", "EUW2"),
    "eu-west-3": ("EU (Paris)", "EUW3"),
    "eu-north-1": ("EU (Stockholm)", "EUN1"),
    "eu-south-1": ("EU (Milan)", "EUS1"),
    "eu-south-2": ("EU (Spain)", "EUS2"),
    "il-central-1": ("Israel (Tel Aviv)", "ILC1"),
    "me-south-1": ("Middle East (Bahrain)", "MES1"),
    "me-central-1": ("Middle East (UAE)", "MEC1"),
    "af-south-1": ("Africa (Cape Town)", "AFS1"),
    "ap-east-1": ("Asia Pacific (Hong Kong)", "APE1"),
    "ap-south-1": ("Asia Pacific (Mumbai)", "APS3"),
    "ap-south-2": ("Asia Pacific (Hyderabad)", "APS5"),
    "ap-southeast-1": ("Asia Pacific (Singapore)", "APS1"),
    "ap-southeast-2": ("Asia Pacific (Sydney)", "APS2"),
    "ap-southeast-3": ("Asia Pacific (Jakarta)", "APS4"),
    "ap-southeast-4": ("Asia Pacific (Melbourne)", "APS6"),
    "ap-southeast-5": ("Asia Pacific (Malaysia)", "APS7"),
    "ap-southeast-7": ("Asia Pacific (Thailand)", "APS9"),
    "ap-northeast-1": ("Asia Pacific (Tokyo)", "APN1"),
    "ap-northeast-2": ("Asia Pacific (Seoul)", "APN2"),
    "ap-northeast-3": ("Asia Pacific (Osaka)", "APN3"),
    "us-gov-east-1": ("AWS GovCloud (US-East)", "UGE1"),
    "us-gov-west-1": ("AWS GovCloud (US-West)", "UGW1"),
}

_BY_CODE: Registry[str] = Registry("AWS region", {code: loc for code, (loc, _) in REGIONS.items()})
_BY_LOCATION: Registry[str] = Registry("AWS location", {loc: code for code, (loc, _) in REGIONS.items()})
_BY_PREFIX = {prefix: code for code, (_, prefix) in REGIONS.items()}


def location_of(region: str) -> str:
    """The Price List location name of a region code; a typo gets suggestions."""
    return _BY_CODE[region]


def region_of(location: str) -> str:
    """The region code of a Price List location name."""
    return _BY_LOCATION[location]


def region_of_usage_type(usage_type: str) -> str | None:
    """The region code a usage type belongs to (``USE1-BoxUsage:...`` -> ``us-east-1``); ``BoxUsage:...``
    without a prefix is us-east-1, as AWS bills it. ``None`` for a prefix not in the table."""
    head, dash, _ = usage_type.partition("-")
    if not dash or ":" in head:
        return "us-east-1"
    return _BY_PREFIX.get(head)
