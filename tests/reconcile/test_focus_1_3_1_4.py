"""FOCUS 1.3 and 1.4 bills reconcile to the cent with Mapping rules written against ProviderName; token charges give
a plan line its tokens; a token charge without a unit and a file of no known version exit 2 naming file, row and
column.

The bills are shaped as the specification writes them: 1.4 has ServiceProviderName and HostProviderName and no
ProviderName or PublisherName; 1.3 has both names and a shared cost split by the provider into allocated charges
(AllocatedMethodId, AllocatedResourceId, AllocatedTags laid over the origin charge's Tags). Expected figures are sums
of the rows below, written out by hand."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path

import pytest

from finops.focus import COLUMNS
from finops.money import Money
from finops.reconcile.bills import focus_version
from finops.reconcile.engine import reconcile_month
from finops.reconcile.plan import BudgetLine, MappingRule, Plan, UsageLine

from .conftest import write_bill

V12 = [c.name for c in COLUMNS]
V13 = V12 + ["ServiceProviderName", "HostProviderName", "AllocatedMethodId", "AllocatedMethodDetails",
             "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags", "ContractApplied"]
V14 = [c for c in V13 if c not in ("ProviderName", "PublisherName")]

AWS_14 = {"ServiceProviderName": "AWS", "HostProviderName": "AWS", "InvoiceIssuerName": "Amazon Web Services, Inc.",
          "ProviderName": "", "PublisherName": ""}
EC2 = {"ServiceName": "AmazonEC2", "x_InstanceType": "p5.48xlarge", "BilledCost": "98.32", "EffectiveCost": "98.32",
       "SkuMeter": "USE1-BoxUsage:p5.48xlarge"}
#: Amazon Bedrock on demand, Llama 3.3 70B Instruct: 0.00072 USD per 1K input and per 1K output tokens (us-east-1).
BEDROCK_IN = {"ServiceName": "AmazonBedrock", "ServiceCategory": "AI and Machine Learning", "ConsumedUnit": "1K Tokens",
              "ConsumedQuantity": "2500", "PricingUnit": "1K Tokens", "PricingQuantity": "2500",
              "SkuMeter": "USE1-Llama3-3-70B-input-tokens", "ChargeDescription": "Llama 3.3 70B input tokens",
              "BilledCost": "1.80", "EffectiveCost": "1.80", "ListCost": "1.80", "ContractedCost": "1.80"}
BEDROCK_OUT = {**BEDROCK_IN, "ConsumedQuantity": "500", "PricingQuantity": "500",
               "SkuMeter": "USE1-Llama3-3-70B-output-tokens", "ChargeDescription": "Llama 3.3 70B output tokens",
               "BilledCost": "0.36", "EffectiveCost": "0.36", "ListCost": "0.36", "ContractedCost": "0.36"}
BEDROCK_CACHED = {**BEDROCK_IN, "ConsumedUnit": "Tokens", "ConsumedQuantity": "1000000", "PricingUnit": "Tokens",
                  "SkuMeter": "USE1-Llama3-3-70B-cache-read-input-token-count", "ChargeDescription": "cache read",
                  "BilledCost": "0.07", "EffectiveCost": "0.07", "ListCost": "0.07", "ContractedCost": "0.07"}
S3 = {"ServiceName": "AmazonS3", "BilledCost": "4.44", "EffectiveCost": "4.44", "ConsumedUnit": "GiB-Hours"}


def _plan(usage: tuple[UsageLine, ...] = ()) -> Plan:
    budget = tuple(BudgetLine("2026-05", line, "cc", "OPEX", "AWS", Money.of(amount, "USD"))
                   for line, amount in (("gpu", 100), ("chat-api", 5), ("team-a", 60), ("team-b", 40)))
    mapping = (MappingRule(1, "gpu", provider_name="AWS", service_name="AmazonEC2"),
               MappingRule(2, "chat-api", provider_name="aws", service_name="AmazonBedrock"),
               MappingRule(3, "team-a", provider_name="AWS", tag_key="team", tag_value="a"),
               MappingRule(4, "team-b", provider_name="AWS", tag_key="team", tag_value="b"))
    return Plan(budget=budget, mapping=mapping, usage=usage)


def test_a_focus_1_4_bill_reconciles_exactly_with_rules_written_against_provider_name(tmp_path):
    rows = [{**AWS_14, **r} for r in (EC2, BEDROCK_IN, BEDROCK_OUT, BEDROCK_CACHED, S3)]
    bill = write_bill(tmp_path / "focus-1.4.csv", rows, columns=V14)
    rec = reconcile_month(_plan(), [bill], "2026-05")
    lines = {line.plan_line: line for line in rec.lines}
    assert rec.billed_cost == Money.of("104.99", "USD")  # 98.32 + 1.80 + 0.36 + 0.07 + 4.44
    assert lines["gpu"].actual == Money.of("98.32", "USD")
    assert lines["chat-api"].actual == Money.of("2.23", "USD")
    assert rec.unmapped_effective_cost == Money.of("4.44", "USD")  # S3: no rule
    assert [p.provider_name for p in rec.providers] == ["AWS"]
    provenance = "focus-1.4.csv: FOCUS 1.4, provider from ServiceProviderName, host from HostProviderName"
    assert rec.bill_versions == (provenance,)


def test_bedrock_token_rows_give_their_plan_line_tokens_and_unit_cost_without_a_usage_row(tmp_path):
    rows = [{**AWS_14, **r} for r in (BEDROCK_IN, BEDROCK_OUT, BEDROCK_CACHED)]
    bill = write_bill(tmp_path / "focus-1.4.csv", rows, columns=V14)
    line = next(x for x in reconcile_month(_plan(), [bill], "2026-05").lines if x.plan_line == "chat-api")
    assert (line.billed_tokens.input, line.billed_tokens.output, line.billed_tokens.cached) == (D("2.5"), D("0.5"), D(1))
    assert line.actual_mtokens == D(4)
    assert line.tokens_source == "bill"
    assert line.actual_unit_cost == Money.of("2.23", "USD") / D(4)  # 0.5575 USD per million tokens


def test_a_usage_row_overrides_the_bills_tokens(tmp_path):
    bill = write_bill(tmp_path / "b.csv", [{**AWS_14, **BEDROCK_IN}], columns=V14)
    line = next(x for x in reconcile_month(_plan((UsageLine("2026-05", "chat-api", D(3)),)), [bill], "2026-05").lines
                if x.plan_line == "chat-api")
    assert (line.actual_mtokens, line.tokens_source, line.billed_tokens.input) == (D(3), "usage", D("2.5"))


def test_a_focus_1_3_bill_maps_a_split_shared_cost_by_its_allocated_tags(tmp_path):
    origin = {"ServiceProviderName": "AWS", "HostProviderName": "AWS", "ServiceName": "AmazonEKS",
              "ResourceId": "arn:aws:eks:us-east-1:222:cluster/shared", "Tags": '{"cluster":"shared"}'}
    allocated = {"AllocatedMethodId": "eks-split-cost-allocation", "AllocatedMethodDetails": '{"x_Metric":"GPU"}'}
    rows = [{**origin, **allocated, "AllocatedResourceId": "pod/a-1", "AllocatedResourceName": "a-1",
             "AllocatedTags": '{"team":"a"}', "BilledCost": "61.235", "EffectiveCost": "61.235"},
            {**origin, **allocated, "AllocatedResourceId": "pod/b-1", "AllocatedResourceName": "b-1",
             "AllocatedTags": '{"team":"b"}', "BilledCost": "28.765", "EffectiveCost": "28.765"},
            {**origin, "ProviderName": "", "Tags": '{"team":"b"}', "BilledCost": "3.10", "EffectiveCost": "3.10"}]
    bill = write_bill(tmp_path / "focus-1.3.csv", rows, columns=V13)
    assert focus_version(bill, tuple(V13)) == "1.3"
    rec = reconcile_month(_plan(), [bill], "2026-05")
    lines = {line.plan_line: line.actual for line in rec.lines}
    assert rec.effective_cost == Money.of("93.10", "USD")
    assert (lines["team-a"], lines["team-b"]) == (Money.of("61.235", "USD"), Money.of("31.865", "USD"))
    assert rec.unmapped_effective_cost == Money.zero("USD")  # the empty, deprecated ProviderName reads the new one
    assert rec.bill_versions[0].startswith("focus-1.3.csv: FOCUS 1.3")


def _reconcile(tmp_path, bill: Path, capsys) -> tuple[int, str]:
    from finops.cli import main

    from .conftest import write_plan
    plan = write_plan(tmp_path / "plan.xlsx", budget=[("2026-05", "chat-api", "cc", "OPEX", "AWS", 5, "USD", None)],
                      mapping=[(1, "chat-api", "AWS", "", "AmazonBedrock", "", "", "", "")])
    code = main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--out", str(tmp_path / "o"), "--quiet",
                 "--bills", str(bill)])
    return code, capsys.readouterr().err.replace("\n", " ")


@pytest.mark.parametrize("unit", ["", "Hours"])
def test_a_token_row_without_a_token_unit_exits_2_naming_file_row_and_column(tmp_path, capsys, unit):
    rows = [{**AWS_14, **BEDROCK_IN}, {**AWS_14, **BEDROCK_OUT, "ConsumedUnit": unit}]
    bill = write_bill(tmp_path / "tokens.csv", rows, columns=V14)
    code, message = _reconcile(tmp_path, bill, capsys)
    assert code == 2, message
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").glob("*"))
    for fragment in ("tokens.csv", "row 3", "ConsumedUnit", "token"):
        assert fragment in message


@pytest.mark.parametrize("columns, missing", [
    ([c for c in V14 if c != "InvoiceId"], "InvoiceId"),  # 1.4 made InvoiceId mandatory
    ([c for c in V14 if c != "ServiceProviderName"], "ProviderName"),  # neither 1.4's provider column nor 1.2's
])
def test_a_bill_of_no_known_focus_version_exits_2_naming_the_column(tmp_path, capsys, columns, missing):
    bill = write_bill(tmp_path / "odd.csv", [{**AWS_14, **BEDROCK_IN}], columns=columns)
    code, message = _reconcile(tmp_path, bill, capsys)
    assert code == 2
    for fragment in ("odd.csv", "row 1", "not a FOCUS 1.0, 1.1, 1.2, 1.3 or 1.4 bill", missing):
        assert fragment in message


CONTRACTS = ("ContractCommitmentId,ContractCommitmentPeriodStart,ContractCommitmentPeriodEnd,ContractCommitmentCost,"
             "BillingCurrency,ContractCommitmentType,ContractCommitmentCategory,ContractCommitmentPaymentModel,"
             "ContractId\n")


def _committed_bill(tmp_path) -> Path:
    """A 1.4 bill of May with a reservation's used and unused hours and no purchase row (bought in January)."""
    committed = {**AWS_14, **EC2, "CommitmentDiscountId": "arn:aws:ec2:us-east-1:222:reserved-instances/ri-1",
                 "CommitmentDiscountType": "Reserved Instance", "CommitmentDiscountName": "gpu reservation",
                 "PricingCategory": "Committed", "BilledCost": "0"}
    rows = [{**committed, "CommitmentDiscountStatus": "Used", "EffectiveCost": "75.00"},
            {**committed, "CommitmentDiscountStatus": "Unused", "EffectiveCost": "25.00"}]
    return write_bill(tmp_path / "may.csv", rows, columns=V14)


def test_the_contract_commitment_dataset_gives_term_payment_and_cost_instead_of_the_estimate(tmp_path):
    from finops.reconcile.contract_commitments import read_contract_commitments

    bill = _committed_bill(tmp_path)
    (without,) = reconcile_month(_plan(), [bill], "2026-05").commitment_lines
    assert (without.source, without.term_months) == ("", None)  # no term anywhere in the bills
    dataset = tmp_path / "contract-commitments.csv"
    dataset.write_text(CONTRACTS + "arn:aws:ec2:us-east-1:222:reserved-instances/ri-1,2026-01-01T00:00:00Z,"
                       "2027-01-01T00:00:00Z,1200.00,USD,Reserved Instance,Usage,All Upfront,c-1\n")
    (line,) = reconcile_month(_plan(), [bill], "2026-05",
                              contracts=read_contract_commitments(dataset)).commitment_lines
    assert (line.source, line.term_months, line.payment) == ("contract", 12, "upfront")
    assert (str(line.purchase_date), str(line.end_date)) == ("2026-01-01", "2027-01-01")
    # 1,200 paid up front over 12 months: 100 a month; May amortized 75 used + 25 unused; 1,100 left
    assert (line.paid_to_date, line.scheduled_monthly, line.amortized, line.balance_left) == (
        Money.of(1200, "USD"), Money.of(100, "USD"), Money.of(100, "USD"), Money.of(1100, "USD"))


def test_a_bad_contract_commitment_row_exits_2_naming_file_row_and_column(tmp_path, capsys):
    from finops.cli import main

    from .conftest import write_plan
    dataset = tmp_path / "cc.csv"
    dataset.write_text(CONTRACTS + "ri-1,2026-01-01T00:00:00Z,next year,1200.00,USD,Reserved Instance,Usage,,c-1\n")
    plan = write_plan(tmp_path / "plan.xlsx", budget=[("2026-05", "gpu", "cc", "OPEX", "AWS", 5, "USD", None)])
    code = main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--out", str(tmp_path / "o"), "--quiet",
                 "--bills", str(_committed_bill(tmp_path)), "--contract-commitments", str(dataset)])
    message = capsys.readouterr().err.replace("\n", " ")
    assert code == 2
    for fragment in ("cc.csv", "row 2", "ContractCommitmentPeriodEnd", "not a date"):
        assert fragment in message


def test_a_remote_focus_1_4_table_maps_by_provider_name_too(tmp_path):
    """BigQuery or Athena over a 1.4 table: the aggregation reads ServiceProviderName where ProviderName is missing
    (here run by DuckDB, the engine the SQL is written for, over a table without the two removed columns)."""
    import duckdb

    from finops.reconcile.bills import open_bills
    from finops.reconcile.dialects import reconcile_remote

    rows = [{**AWS_14, **r} for r in (EC2, BEDROCK_IN, BEDROCK_OUT, S3)]
    bill = write_bill(tmp_path / "focus-1.4.csv", rows, columns=V14)
    with duckdb.connect() as con:
        open_bills(con, [bill])
        con.execute("CREATE TABLE bills_14 AS SELECT * EXCLUDE (ProviderName, PublisherName) FROM focus_bills")
        rec = reconcile_remote(_plan(), lambda sql: con.execute(sql).fetchall(), "duckdb", "bills_14", "2026-05",
                               missing=["ProviderName", "PublisherName"])
    lines = {line.plan_line: line.actual for line in rec.lines}
    assert (lines["gpu"], lines["chat-api"]) == (Money.of("98.32", "USD"), Money.of("2.16", "USD"))
    assert rec.unmapped_effective_cost == Money.of("4.44", "USD")


def test_the_review_shows_the_bills_tokens_and_each_files_focus_version(tmp_path, capsys):
    import openpyxl

    from finops.cli import main

    from .conftest import write_plan
    rows = [{**AWS_14, **r} for r in (BEDROCK_IN, BEDROCK_OUT, BEDROCK_CACHED)]
    bill = write_bill(tmp_path / "bedrock-1.4.csv", rows, columns=V14)
    plan = write_plan(tmp_path / "plan.xlsx", budget=[("2026-05", "chat-api", "cc", "OPEX", "AWS", 5, "USD", 5)],
                      mapping=[(1, "chat-api", "AWS", "", "AmazonBedrock", "", "", "", "")])
    assert main(["reconcile", "--plan", str(plan), "--month", "2026-05", "--out", str(tmp_path / "o"), "--quiet",
                 "--bills", str(bill)]) == 0
    book = openpyxl.load_workbook(tmp_path / "o" / "budget-review-2026-05.xlsx", data_only=True)
    ws = book["Variance"]
    cells = [[c.value for c in row] for row in ws[ws.tables["tblUnitCost"].ref]]
    table = {row[0]: dict(zip(cells[0], row)) for row in cells[1:]}
    line = table["chat-api"]
    assert (line["Actual M tokens"], line["Actual tokens from"]) == (4, "bill")
    assert (line["Billed M input"], line["Billed M output"], line["Billed M cached"]) == (2.5, 0.5, 1)
    assert line["Actual per M tokens"] == pytest.approx(2.23 / 4)
    assert line["Planned per M tokens"] == pytest.approx(1)  # 5 USD planned for 5 M tokens
    summary = {row[0]: row[1] for row in book["Summary"].iter_rows(values_only=True) if row and row[0]}
    assert summary["FOCUS version, provider column"] == \
        "bedrock-1.4.csv: FOCUS 1.4, provider from ServiceProviderName, host from HostProviderName"
