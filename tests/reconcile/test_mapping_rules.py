"""The Mapping sheet's rules as SQL against a reference written here in Python: a table of charges and a
table of rules, every rule tried on every charge in one DuckDB query, each answer compared with what the
rule means (:func:`rule_matches`, from the Mapping sheet's definition in :mod:`finops.reconcile.mapping`:
every non-blank field an :mod:`fnmatch` glob compared case-insensitively, a sub-account by id or name, a
tag by key and value of the JSON object; rules in ``Rule`` order, first match wins, else unmapped).

Each query runs twice: over the columns as they are, and as the scan runs it, over the lowered columns
that :func:`~finops.reconcile.mapping.compared_columns` names.
"""

from __future__ import annotations

import json
import random
from fnmatch import fnmatchcase

import duckdb
import pytest

from finops.reconcile.aggregation import INSTANCE_TYPE
from finops.reconcile.mapping import compared_columns, glob_sql, plan_line_sql, tag_sql
from finops.reconcile.plan import MappingRule

COLUMNS = ("ProviderName", "SubAccountId", "SubAccountName", "ServiceName", "x_InstanceType", "SkuPriceDetails",
           "RegionId", "Tags")
FULL_TAGS = '{"Environment":"prod","Owner":"team-ml","cost_centre":"cc_1042","Tier": 3, "Spot": true}'


def charge(provider: str | None = "AWS", account_id: str | None = "200000000011",
           account_name: str | None = "prod-platform", service: str | None = "AmazonEC2",
           instance: str | None = "p5.48xlarge", details: str | None = None, region: str | None = "us-east-1",
           tags: str | None = FULL_TAGS) -> dict[str, str | None]:
    return dict(zip(COLUMNS, (provider, account_id, account_name, service, instance, details, region, tags),
                    strict=True))


CHARGES = [
    charge(),
    charge(account_id="200000000012", account_name="staging", instance=None,
           details='{"InstanceType": "p4d.24xlarge"}', region="us-west-2", tags='{"env":"staging","owner":"TEAM-ML"}'),
    charge(provider="Google Cloud", account_id="acme-ml", account_name=None, service="Compute Engine",
           instance="a3-highgpu-8g", region="us-central1", tags='{"team":"search","goog-k8s-cluster":"gke-1"}'),
    charge(account_id="333", account_name=None, service="AmazonS3", instance=None, region=None, tags=None),
    charge(service="Amazon_C2", instance="P5.48XLARGE", tags='{"owner": ""}'),
    charge(service="AmazonXC2", instance="p5x48xlarge", tags='{"env": null, "x": "y"}'),
    charge(service="50% off", instance="p4.large", tags='{ "a" : 1 , "env" : "prod" }'),
    charge(service="a%b", account_name="o'brien-lab", instance="m6i.large", tags='{"k\\"q": "v\\\\w", "n": -1.5e3}'),
    charge(service="axb", provider="aws", instance="g6.xlarge", tags='{"b": false, "tier": "3"}'),
    charge(service="x[1]", region="eu-west-1", instance="p[5].x", tags="[1, 2]"),
    charge(service="x1", region="EU-WEST-1", instance="a.b+c(d)", tags="not json"),
    charge(service="line\nbreak", instance="x^y$z|w", tags=""),
    charge(service="a\\b", instance="{2}", tags='{"Owners": "x"}'),
    charge(service="", provider="Oracle", account_id=None, account_name=None, instance="", details=None,
           region="", tags='{"team":"ml-infra","env":"prod-eu"}'),
    charge(service=None, provider=None, instance=None, region=None, tags='{"team":"ml"}'),
    charge(service="AmazonEC2", instance="p5.48xlarge", account_name="platform-ml", tags='{"team":"ml","env":"dev"}'),
]

#: (field, glob): one field of a rule, for single-field rules (every SQL form: =, LIKE, regular expression).
GLOBS = {
    "provider_name": ["aws", "AWS", "Google Cloud", "google*", "*", "", "o?acle"],
    "sub_account": ["200000000011", "prod-*", "staging", "acme-*", "333", "o'brien*", "*-ml", "2000000000?[12]"],
    "service_name": ["AmazonEC2", "Amazon?C2", "Amazon_C2", "Amazon%", "50%*", "a%b", "a_b", "a?b", "x[[]1]", "x[1]",
                     "line*", "a\\b", "a\\*", "*", "?*", "", "[!a]*", "[ax]*", "[]a]*", "[!]a]*", "x[1",
                     "*ec2", "amazon[_x]c2"],
    "instance_type": ["p5.*", "P5.*", "p5x*", "p[45].*", "p[!5].*", "p?d.*", "a3-*", "p[[]5].x", "a.b+c(d)",
                      "x^y$z|w", "{2}", "*.*xlarge", "p4d.24xlarge", "[a-c]*", "*\\*", ""],
    "region_id": ["us-*", "us-east-1", "eu-west-1", "*", "", "?s-*"],
}
#: (tag key, tag value) of tag rules (None: blank).
TAGS = [("owner", "team-ml"), ("OWNER", "TEAM-*"), ("Environment", None), ("cost*", "cc_10?2"),
        ("cost?centre", "cc-1042"), (None, "team-ml"), ("prod", None), ("Environment", "dev"), ("Environment", "pro"),
        ("tier", "3"), ("tier", "[2-4]"), ("n", "-[0-9]*"), ("n", "-1.5?3"), ("spot", "true"), ("b", "false"), ("n", "-1.5e3"), ("n", "*"), ("env", "*"), ("env", ""),
        ("env", "prod"), ("env", "null"), ("env", "n*"), ("env", "?*"), ("env", "[n][u][l][l]"), ("owner", ""), ("owner", "*"), ('k"q', "v\\w"), ('k"*', "v?w"), ("*", "y"), ("x", None),
        (None, "*ml*"), ("team", "ml*"), ("team", "ml"), ("goog-k8s-*", "gke-?"), ("a", "1"), ("a", "?"),
        ("[et]*", "[!s]*"), (None, None)]


def rule_matches(rule: MappingRule, row: dict[str, str | None]) -> bool:
    """What a rule means: every non-blank field a glob over the charge, case-folded; a tag rule a member of
    the JSON object text whose key and value match (a number or boolean as its JSON text, null as '')."""
    instance = row["x_InstanceType"]
    if instance is None and row["SkuPriceDetails"]:
        instance = json.loads(row["SkuPriceDetails"]).get("InstanceType")
    values = {"provider_name": [row["ProviderName"]], "service_name": [row["ServiceName"]],
              "instance_type": [instance], "region_id": [row["RegionId"]],
              "sub_account": [row["SubAccountId"], row["SubAccountName"]]}
    for field, candidates in values.items():
        glob = getattr(rule, field)
        if glob is not None and not any(v is not None and fnmatchcase(v.lower(), glob.lower()) for v in candidates):
            return False
    if rule.tag_key is None and rule.tag_value is None:
        return True
    return any((rule.tag_key is None or fnmatchcase(key, rule.tag_key.lower()))
               and (rule.tag_value is None or fnmatchcase(value, rule.tag_value.lower()))
               for key, value in tag_members(row["Tags"]))


def tag_members(text: str | None) -> list[tuple[str, str]]:
    """(key, value) of each member of a JSON object, lowercased, values as text; none for anything else."""
    try:
        parsed = json.loads((text or "").lower(), parse_int=str, parse_float=str)
    except ValueError:
        return []
    if not isinstance(parsed, dict):
        return []
    words = {True: "true", False: "false", None: ""}
    return [(k, v if isinstance(v, str) else words[v]) for k, v in parsed.items()]


def reference_plan_line(rules: list[MappingRule], row: dict[str, str | None]) -> str | None:
    """The plan line of the lowest-numbered rule that matches, None when none does."""
    return next((r.plan_line for r in sorted(rules, key=lambda r: r.rule) if rule_matches(r, row)), None)


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE charges (id INTEGER, " + ", ".join(f"{c} VARCHAR" for c in COLUMNS) + ")")
    con.executemany(f"INSERT INTO charges VALUES (?{', ?' * len(COLUMNS)})",
                    [[i, *(row[c] for c in COLUMNS)] for i, row in enumerate(CHARGES)])
    return con


def plan_lines(con: duckdb.DuckDBPyConnection, rule_sets: list[list[MappingRule]], *,
               lowered: bool) -> list[list[str | None]]:
    """For each set of rules, the plan line SQL gives each charge, all in one query."""
    columns = list(dict.fromkeys(c for rules in rule_sets for c in compared_columns(rules, instance_type=INSTANCE_TYPE)))
    names = {column: f"lowered_{i}" for i, column in enumerate(columns)} if lowered else {}
    cases = [plan_line_sql(rules, instance_type=INSTANCE_TYPE, lowered={c: names[c] for c in names if c in
                                                                          compared_columns(rules, instance_type=INSTANCE_TYPE)})
             for rules in rule_sets]
    source = "charges" if not names else (
        "(SELECT *, " + ", ".join(f"LOWER({c}) AS {n}" for c, n in names.items()) + " FROM charges) AS c")
    rows = con.execute(f"SELECT {', '.join(cases)} FROM {source} ORDER BY id").fetchall()
    return [[row[j] for row in rows] for j in range(len(rule_sets))]


SINGLE_RULES = ([MappingRule(1, "hit", **{field: glob}) for field, globs in GLOBS.items() for glob in globs]
                + [MappingRule(1, "hit", tag_key=key, tag_value=value) for key, value in TAGS])


def describe(rule: MappingRule) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in vars(rule).items() if v is not None and k not in ("rule", "plan_line"))


@pytest.mark.parametrize("lowered", [False, True], ids=["columns", "lowered once"])
def test_each_rule_on_each_charge_means_what_the_sheet_says(con, lowered):
    got = plan_lines(con, [[rule] for rule in SINGLE_RULES], lowered=lowered)
    wrong = [(describe(rule), CHARGES[i]) for rule, lines in zip(SINGLE_RULES, got, strict=True)
             for i, line in enumerate(lines) if (line == "hit") != rule_matches(rule, CHARGES[i])]
    assert wrong == []


def test_the_table_tries_both_answers():
    """Nearly every single-field rule matches some charges and not others (the rest are literal checks that
    match none, such as ``Amazon%``, and the blank rule): the table can tell a rule that matches too much or
    too little."""
    answers = [{rule_matches(rule, row) for row in CHARGES} for rule in SINGLE_RULES]
    assert sum(1 for a in answers if a == {True, False}) >= 0.85 * len(SINGLE_RULES)


#: Rules of several fields at once (conditions joined by AND; a sub-account's id OR name kept together).
COMBINED = [
    MappingRule(1, "hit", provider_name="AWS", sub_account="prod-*"),
    MappingRule(1, "hit", provider_name="Google*", sub_account="prod-*"),
    MappingRule(1, "hit", provider_name="Google*", sub_account="200000000011"),
    MappingRule(1, "hit", sub_account="o'brien-lab", service_name="a%b"),
    MappingRule(1, "hit", "AWS", "prod-platform", "AmazonEC2", "p5.*", "us-east-1", "Owner", "team-*"),
    MappingRule(1, "hit", "AWS", "prod-platform", "AmazonEC2", "p5.*", "eu-*"),
    MappingRule(1, "hit", instance_type="p4d.*", region_id="us-west-2", tag_key="env"),
    MappingRule(1, "hit", service_name="AmazonEC2", tag_key="team", tag_value="ml"),
    MappingRule(1, "hit", region_id="us-*", tag_value="prod"),
    MappingRule(1, "hit"),
]


@pytest.mark.parametrize("lowered", [False, True], ids=["columns", "lowered once"])
def test_rules_of_several_fields(con, lowered):
    got = plan_lines(con, [[rule] for rule in COMBINED], lowered=lowered)
    expected = [["hit" if rule_matches(rule, row) else None for row in CHARGES] for rule in COMBINED]
    assert got == expected
    # a sub-account's id OR name stays inside its parentheses: each field of rules 2 and 3 alone matches
    # some charge, together none
    for rule in COMBINED[1:3]:
        alone = [MappingRule(1, "hit", provider_name=rule.provider_name), MappingRule(1, "hit", sub_account=rule.sub_account)]
        assert all(any(rule_matches(r, row) for row in CHARGES) for r in alone)
        assert not any(rule_matches(rule, row) for row in CHARGES)


def rule_sets() -> list[list[MappingRule]]:
    """Sets of overlapping rules given out of order (the sheet's row order is not its Rule order)."""
    pool = [MappingRule(0, "gpu", instance_type="p*"), MappingRule(0, "ec2", service_name="AmazonEC2"),
            MappingRule(0, "aws", provider_name="aws"), MappingRule(0, "tagged-ml", tag_key="team", tag_value="ml*"),
            MappingRule(0, "staging", sub_account="staging"), MappingRule(0, "o'brien", sub_account="o'brien*"),
            MappingRule(0, "us", region_id="us-*"), MappingRule(0, "catch-all"),
            MappingRule(0, "odd", service_name="a[%_]b")]
    shuffle = random.Random(18)
    sets = []
    for size in (1, 2, 3, 4, 6, 9, 9, 9):
        picked = shuffle.sample(pool, size)
        numbers = shuffle.sample(range(1, 50), size)
        sets.append([MappingRule(n, r.plan_line, r.provider_name, r.sub_account, r.service_name, r.instance_type,
                                 r.region_id, r.tag_key, r.tag_value) for n, r in zip(numbers, picked, strict=True)])
    return sets


@pytest.mark.parametrize("lowered", [False, True], ids=["columns", "lowered once"])
def test_first_match_in_rule_order_wins(con, lowered):
    sets = rule_sets()
    got = plan_lines(con, sets, lowered=lowered)
    expected = [[reference_plan_line(rules, row) for row in CHARGES] for rules in sets]
    assert got == expected
    assert len({line for lines in expected for line in lines}) >= 6  # the sets give many different answers


def test_no_rules_give_an_unmapped_text_column(con):
    (value, kind) = con.execute(f"SELECT {plan_line_sql([], instance_type='x')} AS p, typeof(p)").fetchone()
    assert (value, kind) == (None, "VARCHAR")


def reference_columns(rules: list[MappingRule]) -> list[str]:
    """The columns compared with a glob, as first used in Rule order: within a rule provider, service,
    instance type, region, then sub-account id and name (the order its conditions are written)."""
    names = {"provider_name": ["ProviderName"], "service_name": ["ServiceName"], "instance_type": ["IT"],
             "region_id": ["RegionId"], "sub_account": ["SubAccountId", "SubAccountName"]}
    seen: list[str] = []
    for rule in sorted(rules, key=lambda r: r.rule):
        for field, columns in names.items():
            if getattr(rule, field) is not None:
                seen += [c for c in columns if c not in seen]
    return seen


@pytest.mark.parametrize("rules", [[], [MappingRule(1, "t", tag_key="team")],
                                   [MappingRule(2, "a", region_id="x"), MappingRule(1, "b", instance_type="p*")],
                                   [MappingRule(1, "a", sub_account="x", provider_name="y", service_name="s")],
                                   [MappingRule(3, "a", region_id="r"), MappingRule(1, "b", service_name="s"),
                                    MappingRule(2, "c", service_name="t", instance_type="i", provider_name="p")],
                                   *rule_sets()],
                         ids=lambda rules: f"{len(rules)} rules")
def test_compared_columns_are_the_globbed_ones_in_first_use_order(rules):
    assert compared_columns(rules, instance_type="IT") == reference_columns(rules)


@pytest.mark.parametrize("column, glob, lowered, expected", [
    ("RegionId", "us-east-1", None, "LOWER(RegionId) = 'us-east-1'"),
    ("RegionId", "US-East-1", "r", "r = 'us-east-1'"),
    ("ServiceName", "Amazon*", "s", "s LIKE 'amazon%'"),
    ("ServiceName", "o'b?", None, "LOWER(ServiceName) LIKE 'o''b_'"),
])
def test_glob_sql_takes_the_lowered_column_when_there_is_one(column, glob, lowered, expected):
    """The SQL text itself only where no query can show the difference: which expression holds the value."""
    assert glob_sql(column, glob, lowered=lowered) == expected


def test_tag_sql_reads_its_column(con):
    """tag_sql compares the column it is given (here a second column of tags), lowered."""
    sql = tag_sql("OtherTags", "Env", "PROD")
    got = con.execute(f"SELECT {sql} FROM (SELECT '{{\"ENV\": \"Prod\"}}' AS OtherTags, NULL AS Tags)").fetchone()
    assert got == (True,)


def test_a_quote_in_a_plan_line_and_in_a_glob(con):
    rules = [MappingRule(1, "o'brien's", sub_account="o'brien-*"), MappingRule(2, "it's", service_name="a%b")]
    assert plan_lines(con, [rules], lowered=False)[0] == [reference_plan_line(rules, row) for row in CHARGES]
    assert "o'brien's" in plan_lines(con, [rules], lowered=True)[0]
