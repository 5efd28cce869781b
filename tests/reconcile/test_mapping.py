"""Mapping rules compiled to SQL: every field, globs, case, tags, first match wins, unmapped.

Each case runs the compiled CASE in DuckDB over one charge, and once more after sqlglot wrote it for
BigQuery and Athena and back, so the forms the remote engines receive keep the meaning.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import duckdb
import pytest
import sqlglot

from finops.reconcile.mapping import plan_line_sql
from finops.reconcile.plan import MappingRule

COLUMNS = ("ProviderName", "SubAccountId", "SubAccountName", "ServiceName", "x_InstanceType", "RegionId", "Tags")

CHARGE = {"ProviderName": "AWS", "SubAccountId": "200000000011", "SubAccountName": "prod-platform",
          "ServiceName": "AmazonEC2", "x_InstanceType": "p5.48xlarge", "RegionId": "us-east-1",
          "Tags": '{"Environment":"prod","Owner":"team-ml","cost_centre":"cc_1042","Tier": 3, "Spot": true}'}


def plan_line(rules, charge=CHARGE, dialect="duckdb"):
    """The plan line DuckDB gives ``charge`` under ``rules`` (None: unmapped), via ``dialect``'s SQL."""
    case = plan_line_sql(rules, instance_type="x_InstanceType")
    values = ", ".join(f"CAST(? AS VARCHAR) AS {name}" for name in COLUMNS)
    sql = f"SELECT {case} FROM (SELECT {values}) AS c"
    if dialect != "duckdb":
        sql = sqlglot.transpile(sqlglot.transpile(sql, read="duckdb", write=dialect)[0], read=dialect,
                                write="duckdb")[0]
    return duckdb.connect().execute(sql, [charge.get(name) for name in COLUMNS]).fetchone()[0]


CASES = [
    ("provider exact, other case", MappingRule(1, "x", provider_name="aws"), "x"),
    ("provider other", MappingRule(1, "x", provider_name="Google Cloud"), None),
    ("sub-account by id", MappingRule(1, "x", sub_account="200000000011"), "x"),
    ("sub-account by name glob", MappingRule(1, "x", sub_account="prod-*"), "x"),
    ("sub-account other", MappingRule(1, "x", sub_account="staging-*"), None),
    ("service glob ?", MappingRule(1, "x", service_name="Amazon?C2"), "x"),
    ("instance type family", MappingRule(1, "x", instance_type="P5.*"), "x"),
    ("dot is literal", MappingRule(1, "x", instance_type="p5x*"), None),
    ("instance type other", MappingRule(1, "x", instance_type="g6.*"), None),
    ("character class", MappingRule(1, "x", instance_type="p[45].*"), "x"),
    ("negated class", MappingRule(1, "x", instance_type="p[!5].*"), None),
    ("underscore is literal", MappingRule(1, "x", service_name="Amazon_C2"), None),
    ("percent is literal", MappingRule(1, "x", service_name="Amazon%"), None),
    ("region", MappingRule(1, "x", region_id="us-*"), "x"),
    ("tag key and value", MappingRule(1, "x", tag_key="owner", tag_value="team-ml"), "x"),
    ("tag key other case", MappingRule(1, "x", tag_key="OWNER", tag_value="TEAM-*"), "x"),
    ("tag key only", MappingRule(1, "x", tag_key="Environment"), "x"),
    ("tag key glob", MappingRule(1, "x", tag_key="cost*", tag_value="cc_10?2"), "x"),
    ("tag underscore literal", MappingRule(1, "x", tag_key="cost?centre", tag_value="cc-1042"), None),
    ("tag value only", MappingRule(1, "x", tag_value="team-ml"), "x"),
    ("tag value is not a key", MappingRule(1, "x", tag_key="prod"), None),
    ("tag value mismatch", MappingRule(1, "x", tag_key="Environment", tag_value="dev"), None),
    ("tag value is the whole value", MappingRule(1, "x", tag_key="Environment", tag_value="pro"), None),
    ("number value as text", MappingRule(1, "x", tag_key="tier", tag_value="3"), "x"),
    ("boolean value as text", MappingRule(1, "x", tag_key="spot", tag_value="true"), "x"),
    ("all fields at once", MappingRule(1, "x", "AWS", "prod-platform", "AmazonEC2", "p5.*", "us-east-1",
                                       "Owner", "team-*"), "x"),
    ("one field off among many", MappingRule(1, "x", "AWS", "prod-platform", "AmazonEC2", "p5.*", "eu-*"), None),
    ("all blank matches anything", MappingRule(1, "x"), "x"),
    ("a quote in the plan line", MappingRule(1, "o'brien", provider_name="AWS"), "o'brien"),
]


@pytest.mark.parametrize("dialect", ["duckdb", "bigquery", "athena"])
@pytest.mark.parametrize("rule, expected", [(r, e) for _, r, e in CASES], ids=[c[0] for c in CASES])
def test_one_rule(rule, expected, dialect):
    assert plan_line([rule], dialect=dialect) == expected


def test_globs_agree_with_fnmatch():
    """Plain-field globs (every SQL form: =, LIKE, regular expression) against Python's fnmatch, case-folded,
    every glob on every value in one query."""
    values = ["p5.48xlarge", "P5.48XLARGE", "p4d.24xlarge", "a_b", "axb", "a%b", "50%", "x[1]", "", "line\nbreak",
              "^b", "]b", "a&b", "ab", "!b"]
    globs = ["p5.*", "p?.*", "a_b", "a?b", "a%b", "*%", "x[[]1]", "*", "?*", "[ap]*", "[!p]*", "line*", "a\\b",
             "[^a]*", "[]]*", "[!]a]*", "[!]]*", "a[&]b", "a[&&b]b", "[!]", "[]"]
    cases = ", ".join(plan_line_sql([MappingRule(1, "hit", service_name=glob)], instance_type="x_InstanceType")
                      for glob in globs)
    rows = duckdb.connect().execute(f"SELECT ServiceName, {cases} FROM (SELECT UNNEST(?) AS ServiceName)",
                                    [values]).fetchall()
    for value, *lines in rows:
        for glob, line in zip(globs, lines, strict=True):
            assert (line == "hit") == fnmatchcase(value.lower(), glob.lower()), (glob, value)


def test_first_match_in_rule_order_wins_not_row_order():
    rules = [MappingRule(3, "catch-all"), MappingRule(2, "ec2", service_name="AmazonEC2"),
             MappingRule(1, "gpu", instance_type="p5.*")]
    assert plan_line(rules) == "gpu"
    assert plan_line(rules, {"ServiceName": "AmazonEC2", "x_InstanceType": "m6i.large"}) == "ec2"
    assert plan_line(rules, {"ServiceName": "AmazonS3"}) == "catch-all"


@pytest.mark.parametrize("tags", [None, "", "not json", "[1, 2]", '{"Owners": "x"}'])
def test_missing_or_odd_tags_match_no_tag_rule(tags):
    assert plan_line([MappingRule(1, "tagged", tag_key="Owner")], {"ServiceName": "AmazonEC2", "Tags": tags}) is None


def test_json_written_with_spaces_matches_too():
    assert plan_line([MappingRule(1, "t", tag_key="env", tag_value="prod")], {"Tags": '{ "a" : 1 , "env" : "prod" }'}) == "t"


def test_missing_field_never_matches_a_pattern():
    assert plan_line([MappingRule(1, "x", region_id="*")], {"ServiceName": "Tax"}) is None


def test_no_rules_map_nothing():
    assert plan_line([]) is None
