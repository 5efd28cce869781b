"""Mapping rules: every field, globs, case, tags, first match wins, unmapped."""

from __future__ import annotations

import pytest

from finops.reconcile.mapping import UNMAPPED, Charge, Mapper
from finops.reconcile.plan import MappingRule

CHARGE = Charge(provider_name="AWS", sub_account_id="200000000011", sub_account_name="prod-platform",
                service_name="AmazonEC2", instance_type="p5.48xlarge", region_id="us-east-1",
                tags='{"Environment":"prod","Owner":"team-ml"}')

CASES = [
    ("provider exact, other case", MappingRule(1, "x", provider_name="aws"), "x"),
    ("provider other", MappingRule(1, "x", provider_name="Google Cloud"), UNMAPPED),
    ("sub-account by id", MappingRule(1, "x", sub_account="200000000011"), "x"),
    ("sub-account by name glob", MappingRule(1, "x", sub_account="prod-*"), "x"),
    ("sub-account other", MappingRule(1, "x", sub_account="staging-*"), UNMAPPED),
    ("service glob ?", MappingRule(1, "x", service_name="Amazon?C2"), "x"),
    ("instance type family", MappingRule(1, "x", instance_type="P5.*"), "x"),
    ("instance type other", MappingRule(1, "x", instance_type="g6.*"), UNMAPPED),
    ("region", MappingRule(1, "x", region_id="us-*"), "x"),
    ("tag key and value", MappingRule(1, "x", tag_key="owner", tag_value="team-ml"), "x"),
    ("tag key only", MappingRule(1, "x", tag_key="Environment"), "x"),
    ("tag value mismatch", MappingRule(1, "x", tag_key="Environment", tag_value="dev"), UNMAPPED),
    ("all fields at once", MappingRule(1, "x", "AWS", "prod-platform", "AmazonEC2", "p5.*", "us-east-1",
                                       "Owner", "team-*"), "x"),
    ("one field off among many", MappingRule(1, "x", "AWS", "prod-platform", "AmazonEC2", "p5.*", "eu-*"), UNMAPPED),
    ("all blank matches anything", MappingRule(1, "x"), "x"),
]


@pytest.mark.parametrize("rule, expected", [(r, e) for _, r, e in CASES], ids=[c[0] for c in CASES])
def test_one_rule(rule, expected):
    assert Mapper([rule]).plan_line(CHARGE) == expected


def test_first_match_in_rule_order_wins_not_row_order():
    rules = [MappingRule(3, "catch-all"), MappingRule(2, "ec2", service_name="AmazonEC2"),
             MappingRule(1, "gpu", instance_type="p5.*")]
    mapper = Mapper(rules)
    assert mapper.plan_line(CHARGE) == "gpu"
    assert mapper.plan_line(Charge(service_name="AmazonEC2", instance_type="m6i.large")) == "ec2"
    assert mapper.plan_line(Charge(service_name="AmazonS3")) == "catch-all"


@pytest.mark.parametrize("tags", [None, "", "not json", "[1, 2]"])
def test_missing_or_odd_tags_match_no_tag_rule(tags):
    mapper = Mapper([MappingRule(1, "tagged", tag_key="Owner")])
    assert mapper.plan_line(Charge(service_name="AmazonEC2", tags=tags)) == UNMAPPED


def test_missing_field_never_matches_a_pattern():
    assert Mapper([MappingRule(1, "x", region_id="*")]).plan_line(Charge(service_name="Tax")) == UNMAPPED
