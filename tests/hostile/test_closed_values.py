"""Closed values: a bill's ChargeCategory, ChargeClass, ChargeFrequency, PricingCategory and
CommitmentDiscountStatus hold FOCUS's own values, a GCP export's labels are the list of key/value records BigQuery
writes, and a rate for the plan's own currency is 1; anything else is refused with its file, row and column (or
the option), never summed into a total or silently left out of one.

FOCUS values are case-sensitive (the specification's "Allowed values"; the FinOps Foundation's validator compares
them as written), so ``usage`` is refused too, with the value it misspells. Hand figures for the sound cases: the
desk's bill is three rows of 10.00 USD, all mapped to the plan line ``gpu`` (budget 100); a Credit row of -10.00
leaves 10.00 of actual.

On a remote engine (BigQuery over its REST API here) the same values are refused by the one query that checks the
month's charges before the aggregation, and so are the other values the local scan refuses: an empty cost, Tags
that are not a JSON object, a token charge whose unit counts no tokens; the message names the engine, table,
column and the charge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from .desk import MONTH, Case, check, gcp_jsonl_pull, plan, reconcile_argv, write_bill

ROOT = Path(__file__).resolve().parents[2]
GCP_FOCUS_EXPORT = ROOT / "tests" / "gcp" / "fixtures" / "focus_export_sample.csv"
GCP_STANDARD_EXPORT = ROOT / "tests" / "gcp" / "fixtures" / "billing_export_standard.csv"
AWS_FOCUS_EXPORT = ROOT / "tests" / "aws" / "data" / "focus-1.2-aws-sample-40.csv"


def _one_row(column: str, value: str, **more: str) -> Callable[[Path], Sequence[object]]:
    """A reconcile of the desk's three-row bill whose second row (spreadsheet row 3) has ``column`` = ``value``."""
    def build(folder: Path) -> Sequence[object]:
        rows = [{"InvoiceId": "I0"}, {"InvoiceId": "I1", column: value, **more}, {"InvoiceId": "I2"}]
        return reconcile_argv(folder, plan(folder), write_bill(folder / "bill.csv", rows))
    return build


def _profile_row(column: str, value: str) -> Callable[[Path], Sequence[object]]:
    """``mix profile`` of GPU usage rows, the second with ``column`` = ``value``."""
    def build(folder: Path) -> Sequence[object]:
        rows = [{"InvoiceId": f"I{i}", "x_GpuHours": "1", **({column: value} if i == 1 else {})} for i in range(3)]
        return ["mix", "profile", "--bills", write_bill(folder / "bill.csv", rows), "--out", folder / "demand.csv"]
    return build


def _actual(expected: str) -> Callable[[Path, str, str], None]:
    def verify(folder: Path, out: str, err: str) -> None:
        assert Decimal(str(json.loads(out)["actual_effective_cost"])) == Decimal(expected)
    return verify


def _json(build: Callable[[Path], Sequence[object]]) -> Callable[[Path], Sequence[object]]:
    return lambda folder: [*build(folder), "--json"]


PLACE = ("bill.csv", "row 3")

VOCABULARY: dict[str, Case] = {
    "ChargeCategory misspelt": Case(_one_row("ChargeCategory", "Usgae"),
                                    names=(*PLACE, "column ChargeCategory", "'Usgae'", "Usage, Purchase, Tax")),
    "ChargeCategory in lower case": Case(_one_row("ChargeCategory", "usage"),
                                         names=(*PLACE, "column ChargeCategory", "write 'Usage'", "case-sensitive")),
    "ChargeCategory with a trailing space": Case(_one_row("ChargeCategory", "Usage "),
                                                 names=(*PLACE, "column ChargeCategory", "write 'Usage'")),
    "ChargeCategory empty": Case(_one_row("ChargeCategory", ""), names=(*PLACE, "column ChargeCategory")),
    "ChargeCategory a word of another tool (Refund)": Case(_one_row("ChargeCategory", "Refund"),
                                                          names=(*PLACE, "column ChargeCategory", "'Refund'")),
    "ChargeCategory of FOCUS 0.5 (Discount)": Case(_one_row("ChargeCategory", "Discount"),
                                                  names=(*PLACE, "column ChargeCategory")),
    "ChargeClass misspelt": Case(_one_row("ChargeClass", "Corection"),
                                 names=(*PLACE, "column ChargeClass", "'Corection'", "Correction")),
    "ChargeClass in upper case": Case(_one_row("ChargeClass", "CORRECTION"),
                                      names=(*PLACE, "column ChargeClass", "write 'Correction'")),
    "ChargeFrequency of no FOCUS (Monthly)": Case(_one_row("ChargeFrequency", "Monthly"),
                                                  names=(*PLACE, "column ChargeFrequency", "Recurring")),
    "PricingCategory of FOCUS 0.5 (On-Demand)": Case(_one_row("PricingCategory", "On-Demand"),
                                                     names=(*PLACE, "column PricingCategory", "Standard")),
    "PricingCategory spot": Case(_one_row("PricingCategory", "Spot"), names=(*PLACE, "column PricingCategory")),
    "CommitmentDiscountStatus in lower case": Case(
        _one_row("CommitmentDiscountStatus", "used", CommitmentDiscountId="ri-1", PricingCategory="Committed"),
        names=(*PLACE, "column CommitmentDiscountStatus", "write 'Used'")),
    "CommitmentDiscountStatus of no FOCUS (Partial)": Case(
        _one_row("CommitmentDiscountStatus", "Partial", CommitmentDiscountId="ri-1"),
        names=(*PLACE, "column CommitmentDiscountStatus", "Unused")),
    # the bills read as a strict view elsewhere (mix profile): the same refusal, named alike (was exit 1)
    "mix profile: ChargeCategory misspelt": Case(_profile_row("ChargeCategory", "Usgae"),
                                                 names=(*PLACE, "column ChargeCategory")),
    "mix profile: an empty BilledCost": Case(_profile_row("BilledCost", ""), names=(*PLACE, "column BilledCost")),
    "mix profile: a ChargePeriodStart in words": Case(_profile_row("ChargePeriodStart", "yesterday"),
                                                      names=(*PLACE, "column ChargePeriodStart")),
    # sound values: every FOCUS value is read as it is
    "a Credit row lowers the actual": Case(_json(_one_row("ChargeCategory", "Credit", BilledCost="-10.00",
                                                          EffectiveCost="-10.00")),
                                           exit=0, unchanged=False, verify=_actual("10.00")),
    "a Correction row is summed": Case(_json(_one_row("ChargeClass", "Correction")), exit=0, unchanged=False,
                                       verify=_actual("30.00")),
    "Dynamic, Committed and Other pricing": Case(_json(_one_row("PricingCategory", "Other")), exit=0,
                                                 unchanged=False, verify=_actual("30.00")),
}


@pytest.mark.parametrize("name", sorted(VOCABULARY))
def test_closed_focus_values(name, tmp_path, capsys, monkeypatch):
    check(VOCABULARY[name], tmp_path, capsys, monkeypatch)


#: The FOCUS table a remote engine holds: BigQuery, over its REST API (a local server that runs the SQL it receives
#: on DuckDB, tests/reconcile/bigquery_jobs_server.py).
REMOTE_TABLE = "finops-demo.billing.focus"
REMOTE_PLACE = (f"bigquery:{REMOTE_TABLE}",)


def _remote(json: bool = False, contracts: bool = False) -> Callable[[Path], Sequence[object]]:
    """A reconcile on the remote table; with ``contracts``, with a Contract Commitment dataset listing ``pool-1``."""
    def build(d: Path) -> Sequence[object]:
        dataset = []
        if contracts:
            from tests.reconcile.test_focus_1_3_1_4 import CONTRACTS

            d.mkdir(parents=True, exist_ok=True)
            (d / "contracts.csv").write_text(CONTRACTS + "pool-1,2026-05-01T00:00:00Z,2027-05-01T00:00:00Z,1200.00,USD,"
                                                         "Prepaid Pool,Spend,All Upfront,edp-1\n")
            dataset = ["--contract-commitments", d / "contracts.csv"]
        return ["reconcile", "--plan", plan(d), "--month", MONTH, "--engine", "bigquery", "--table", REMOTE_TABLE,
                "--project", "finops-jobs", "--out", d / "out", "--quiet", *(["--json"] if json else []), *dataset]
    return build


#: (column, value) of the second of the desk's three rows, held by the remote table -> the case. A remote engine
#: returns sums: the keys of the groups are checked on them, ChargeClass (no key) by a query of its own.
REMOTE: dict[str, tuple[tuple[str, str], Case]] = {
    "ChargeClass misspelt": (("ChargeClass", "Corection"), Case(
        _remote(), names=(*REMOTE_PLACE, "column ChargeClass", "'Corection'", "Correction"))),
    "ChargeClass in upper case": (("ChargeClass", "CORRECTION"), Case(
        _remote(), names=(*REMOTE_PLACE, "column ChargeClass", "write 'Correction'"))),
    "ChargeClass a word of another tool (Refund)": (("ChargeClass", "Refund"), Case(
        _remote(), names=(*REMOTE_PLACE, "column ChargeClass", "'Refund'"))),
    "ChargeCategory misspelt, a key of the groups": (("ChargeCategory", "Usgae"), Case(
        _remote(), names=(*REMOTE_PLACE, "column ChargeCategory", "'Usgae'"))),
    "a Correction row is summed": (("ChargeClass", "Correction"), Case(
        _remote(json=True), exit=0, unchanged=False, verify=_actual("30.00"))),
    # the other values the local scan refuses, checked by the same query (finops/reconcile/bill_checks.py); the
    # charge is named by its keys, as a remote table has no rows to count
    "an empty BilledCost (summed as 0)": (("BilledCost", ""), Case(
        _remote(), names=(*REMOTE_PLACE, "column BilledCost", "is empty", "InvoiceId 'I1'"))),
    "an empty EffectiveCost (summed as 0)": (("EffectiveCost", ""), Case(
        _remote(), names=(*REMOTE_PLACE, "column EffectiveCost", "is empty", "InvoiceId 'I1'"))),
    "Tags that are not JSON (the charge left unmapped)": (("Tags", "team=ml"), Case(
        _remote(), names=(*REMOTE_PLACE, "column Tags", "'team=ml'", "InvoiceId 'I1'"))),
    "Tags a JSON array": (("Tags", '["team", "ml"]'), Case(
        _remote(), names=(*REMOTE_PLACE, "column Tags", "not a JSON object", "InvoiceId 'I1'"))),
    "a token charge counted in requests (its tokens left out)": (("SkuMeter", "USE1-Llama3-3-70B-input-tokens"), Case(
        _remote(), names=(*REMOTE_PLACE, "column ConsumedUnit", "'Requests'", "ConsumedUnit (Tokens"))),
    "Tags an empty object are read": (("Tags", "{}"), Case(_remote(json=True), exit=0, unchanged=False,
                                                           verify=_actual("30.00"))),
    # FOCUS 1.3 ContractApplied, read with the Contract Commitment dataset only: no Elements array adds nothing there
    "ContractApplied without an Elements array": (("ContractApplied", '{"Elements": {}}'), Case(
        _remote(contracts=True), names=(*REMOTE_PLACE, "column ContractApplied", "InvoiceId 'I1'"))),
    "ContractApplied of a listed commitment is read": (("ContractApplied", json.dumps({"Elements": [
        {"ContractID": "edp-1", "ContractCommitmentID": "pool-1", "ContractCommitmentAppliedCost": 10}]})), Case(
        _remote(json=True, contracts=True), exit=0, unchanged=False, verify=_actual("30.00"))),
}
#: Values set beside the case's own on the second row (a token charge's unit, quantity).
REMOTE_BESIDE = {"a token charge counted in requests (its tokens left out)": {"ConsumedUnit": "Requests",
                                                                             "ConsumedQuantity": "1000"}}
#: The cases whose remote table holds FOCUS 1.3's columns (ContractApplied).
REMOTE_1_3 = {name for name in REMOTE if "ContractApplied" in name}


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_closed_focus_values_on_a_remote_engine(name, tmp_path, capsys, monkeypatch):
    pytest.importorskip("google.cloud.bigquery")
    import duckdb

    from finops.reconcile.bills import VIEW, open_bills
    from tests.reconcile.bigquery_jobs_server import BigQueryJobsServer
    from tests.reconcile.test_focus_1_3_1_4 import V13

    (column, value), case = REMOTE[name]
    rows = [{"InvoiceId": "I0"}, {"InvoiceId": "I1", column: value, **REMOTE_BESIDE.get(name, {})}, {"InvoiceId": "I2"}]
    columns = V13 if name in REMOTE_1_3 else None
    con = duckdb.connect()
    open_bills(con, [write_bill(tmp_path / "table.csv", rows, columns=columns)], strict=False)  # as the engine holds it
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with BigQueryJobsServer(con, {REMOTE_TABLE: VIEW}) as endpoint:
        env = {"FINOPS_GCP_BIGQUERY_ENDPOINT": endpoint, "FINOPS_GCP_RETRY_TIMEOUT": "5"}
        check(Case(case.build, exit=case.exit, names=case.names, unchanged=case.unchanged, env=env,
                   verify=case.verify), tmp_path / "run", capsys, monkeypatch)


def _pull_export(source: Path, name: str, change: Callable[[str], str]) -> Callable[[Path], Sequence[object]]:
    """``bills pull`` of a GCP export file whose text ``change`` edits."""
    def build(folder: Path) -> Sequence[object]:
        text = source.read_text()
        changed = change(text)
        assert changed != text
        (folder / name).write_text(changed)
        return ["bills", "pull", "--provider", "gcp", "--source", folder / name, "--month", MONTH,
                "--out", folder / "focus.parquet"]
    return build


def _in_row(line: int, old: str, new: str) -> Callable[[str], str]:
    """The text with ``old`` replaced by ``new`` on line ``line`` (1: the header) only."""
    def change(text: str) -> str:
        lines = text.split("\n")
        assert old in lines[line - 1]
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
        return "\n".join(lines)
    return change


def _set(index: int, field: str, value: object) -> Callable[[list[dict[str, object]]], None]:
    def change(rows: list[dict[str, object]]) -> None:
        target: dict[str, object] = rows[index]
        *parents, leaf = field.split(".")
        for part in parents:
            target = target[part]  # type: ignore[assignment]
        target[leaf] = value
    return change


def _tags_of_first_row(expected: dict[str, str]) -> Callable[[Path, str, str], None]:
    def verify(folder: Path, out: str, err: str) -> None:
        import duckdb

        with duckdb.connect() as con:
            tags = [json.loads(t) for (t,) in con.execute(
                "SELECT Tags FROM read_parquet(?) WHERE Tags IS NOT NULL", [str(folder / "focus.parquet")]).fetchall()]
        assert expected in tags, tags
    return verify


EXPORTS: dict[str, Case] = {
    # GCP JSONL: labels are a list of {key, value} records; any other shape is refused with its line (was ignored)
    "labels as an object of names to values": Case(gcp_jsonl_pull(_set(0, "labels", {"team": "llm"})),
                                                   names=("export.jsonl", "row 1", "labels", "{key, value}")),
    "labels as one text": Case(gcp_jsonl_pull(_set(2, "labels", "team=llm")), names=("export.jsonl", "row 3", "labels")),
    "a label record without its key": Case(gcp_jsonl_pull(_set(0, "labels", [{"name": "team", "value": "llm"}])),
                                           names=("export.jsonl", "row 1", "labels")),
    "project.labels as an object": Case(gcp_jsonl_pull(_set(0, "project.labels", {"cost-center": "cc-42"})),
                                        names=("export.jsonl", "row 1", "project.labels")),
    "system_labels as an object": Case(gcp_jsonl_pull(_set(0, "system_labels", {"machine": "a3-highgpu-8g"})),
                                       names=("export.jsonl", "row 1", "system_labels")),
    "tags as a number": Case(gcp_jsonl_pull(_set(1, "tags", 7)), names=("export.jsonl", "row 2", "tags")),
    "labels as exported": Case(gcp_jsonl_pull(lambda rows: None), exit=0, unchanged=False,
                               verify=_tags_of_first_row({"cost-center": "cc-42", "env": "prod", "team": "llm"})),
    "labels empty": Case(gcp_jsonl_pull(_set(0, "labels", [])), exit=0, unchanged=False,
                         verify=_tags_of_first_row({"cost-center": "cc-42"})),
    # a provider's FOCUS export with a value outside FOCUS: refused at the pull, with its line (was written as it is)
    "GCP FOCUS export: ChargeCategory misspelt": Case(
        _pull_export(GCP_FOCUS_EXPORT, "export.csv", _in_row(3, "Z,Usage,,", "Z,Usgae,,")),
        names=("export.csv", "row 3", "ChargeCategory", "'Usgae'")),
    "GCP FOCUS export: CommitmentDiscountStatus in upper case": Case(
        _pull_export(GCP_FOCUS_EXPORT, "export.csv", _in_row(3, ",Used,", ",USED,")),
        names=("export.csv", "row 3", "CommitmentDiscountStatus", "write 'Used'")),
    # GCP CSV: labels as TO_JSON_STRING writes them are read; an object of names to values is refused with its row
    "GCP CSV export: labels as an object": Case(
        _pull_export(GCP_STANDARD_EXPORT, "export.csv",
                     _in_row(2, '"[{""key"": ""team"", ""value"": ""llm""}, {""key"": ""env"", ""value"": ""prod""}]"',
                             '"{""team"": ""llm""}"')),
        names=("export.csv", "row 2", "labels")),
    "GCP CSV export: labels not JSON": Case(
        _pull_export(GCP_STANDARD_EXPORT, "export.csv",
                     _in_row(2, '"[{""key"": ""team"", ""value"": ""llm""}, {""key"": ""env"", ""value"": ""prod""}]"',
                             '"[{""key"": ""team"""')),
        names=("export.csv", "row 2", "labels")),
}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_provider_exports(name, tmp_path, capsys, monkeypatch):
    check(EXPORTS[name], tmp_path, capsys, monkeypatch)


RATES: dict[str, Case] = {
    "a rate for the plan's own currency": Case(
        lambda d: reconcile_argv(d, plan(d), write_bill(d / "bill.csv", [{"InvoiceId": "I0"}]), extra=["--rate", "USD=2"]),
        names=("--rate USD=2", "plan's own currency")),
    "a rate for the plan's own currency in lower case": Case(
        lambda d: reconcile_argv(d, plan(d), write_bill(d / "bill.csv", [{"InvoiceId": "I0"}]),
                                 extra=["--rate", "EUR=1.08", "--rate", "usd=0.5"]),
        names=("--rate USD=0.5",)),
    "a rate of 1 for the plan's own currency changes nothing": Case(
        lambda d: [*reconcile_argv(d, plan(d), write_bill(d / "bill.csv", [{"InvoiceId": f"I{i}"} for i in range(3)]),
                                   extra=["--rate", "USD=1"]), "--json"],
        exit=0, unchanged=False, verify=_actual("30.00")),
}


@pytest.mark.parametrize("name", sorted(RATES))
def test_rates(name, tmp_path, capsys, monkeypatch):
    check(RATES[name], tmp_path, capsys, monkeypatch)


def test_an_aws_focus_export_row_outside_focus_is_refused_with_its_line():
    """AWS's own FOCUS export is read through the same cell check: a PricingCategory in lower case on its 5th line is
    named with its file, row and column, with the value it misspells."""
    import csv

    from connectors.aws.focus_export import focus_rows_from_focus
    from finops.errors import InputError

    with AWS_FOCUS_EXPORT.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    index = next(i for i, row in enumerate(rows) if row["PricingCategory"] == "Standard" and i >= 3)
    rows[index]["PricingCategory"] = "standard"
    with pytest.raises(InputError) as caught:
        focus_rows_from_focus(rows, gpu_of=lambda t: None, file="part-1.csv", first_row=2)
    assert caught.value.where is not None
    assert (caught.value.where.file, caught.value.where.row, caught.value.where.column) == (
        "part-1.csv", index + 2, "PricingCategory")
    assert "write 'Standard'" in str(caught.value)
