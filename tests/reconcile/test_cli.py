"""`finops reconcile` end to end: JSON totals, --fail-on-variance exit codes, --quiet, --from a connector."""

from __future__ import annotations

import gzip
import json
import shutil
from decimal import Decimal

import openpyxl
import pytest

from finops.cli import main
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths

from .conftest import write_bill

KEYS = ["month", "actual_effective_cost", "actual_billed_cost", "planned", "variance", "capex", "opex",
        "unmapped_effective_cost", "currency"]


def run(capsys, *args):
    code = main(["reconcile", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def may(tmp_path):
    return write_bill(tmp_path / "may.csv", [{"x_InstanceType": "p5.48xlarge", "EffectiveCost": "104.5",
                                              "BilledCost": "104.5"}, {"ServiceName": "AmazonS3", "EffectiveCost": "50"}])


def test_json_prints_the_totals(tmp_path, simple_plan, may, capsys):
    code, out, _ = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--bills", may, "--out", tmp_path / "o",
                       "--json")
    assert code == 0
    totals = json.loads(out)
    assert list(totals) == KEYS
    assert totals == {"month": "2026-05", "actual_effective_cost": 154.5, "actual_billed_cost": 114.5,
                      "planned": 1150.0, "variance": 204.5, "capex": 1200.0, "opex": 154.5,
                      "unmapped_effective_cost": 0.0, "currency": "USD"}
    assert (tmp_path / "o" / "budget-review-2026-05.xlsx").is_file()


@pytest.mark.parametrize("pct, code", [("4", 1), ("19.9", 1), ("20", 0), ("50", 0)])
def test_fail_on_variance(tmp_path, simple_plan, may, capsys, pct, code):
    """Lines: gpu +4.5 % (104.5 vs 100), storage 0 %, onprem +20 % (1,200 depreciation vs 1,000)."""
    result, _, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--bills", may, "--out", tmp_path / "o",
                         "--quiet", "--fail-on-variance", pct)
    assert result == code
    assert err == ""  # --quiet: nothing printed, the exit code says it


def test_fail_on_variance_names_the_lines(tmp_path, simple_plan, may, capsys):
    code, _, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--bills", may, "--out", tmp_path / "o",
                       "--fail-on-variance", "4")
    assert code == 1
    assert "gpu" in err and "onprem" in err and "storage" not in err


def test_quiet_prints_nothing_and_still_writes(tmp_path, simple_plan, may, capsys):
    code, out, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--bills", may, "--out", tmp_path / "o",
                         "--quiet")
    assert (code, out, err) == (0, "", "")
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["budget-review-2026-05.xlsx",
                                                                  "reconcile-history.duckdb"]


def test_bills_as_a_list_after_one_option(tmp_path, simple_plan, capsys):
    aws, gcp = sample_bill_paths()
    code, out, _ = run(capsys, "--plan", simple_plan, "--month", SAMPLE_MONTH, "--out", tmp_path / "o", "--json",
                       "--bills", aws, gcp)
    assert code == 0 and json.loads(out)["actual_billed_cost"] == 157596.73


def aws_export(root, bill):
    """A local copy of an AWS Data Exports FOCUS 1.2 export of May 2026 holding ``bill``."""
    data = root / "focus/data/BILLING_PERIOD=2026-05"
    meta = root / "focus/metadata/BILLING_PERIOD=2026-05"
    data.mkdir(parents=True)
    meta.mkdir(parents=True)
    shutil.copyfile(bill, data / "focus-00001.csv.gz")
    (meta / "focus-Manifest.json").write_text(json.dumps({"executionId": "x", "columns": [], "dataFiles": [
        "s3://bucket/exports/focus/data/BILLING_PERIOD=2026-05/focus-00001.csv.gz"]}))
    return root


def test_from_the_aws_connector_with_a_local_copy_of_a_focus_export(tmp_path, simple_plan, capsys):
    code, out, _ = run(capsys, "--plan", simple_plan, "--month", SAMPLE_MONTH, "--out", tmp_path / "o", "--json",
                       "--from", f"aws:{aws_export(tmp_path / 'export', sample_bill_paths()[0])}")
    assert code == 0
    assert json.loads(out)["actual_billed_cost"] == 67941.2


def test_several_sources_after_one_from(tmp_path, simple_plan, capsys):
    """As the issue writes it: --from aws:... gcp:... (the GCP connector also reads a local FOCUS export file)."""
    aws, gcp = sample_bill_paths()
    gcp_file = tmp_path / "gcp-focus.csv"
    gcp_file.write_bytes(gzip.decompress(gcp.read_bytes()))
    code, out, _ = run(capsys, "--plan", simple_plan, "--month", SAMPLE_MONTH, "--out", tmp_path / "o", "--json",
                       "--from", f"aws:{aws_export(tmp_path / 'export', aws)}", f"gcp:{gcp_file}")
    assert code == 0
    assert json.loads(out)["actual_billed_cost"] == 157596.73  # 67,941.20 AWS + 89,655.53 GCP
    summary = openpyxl.load_workbook(tmp_path / "o" / "budget-review-2026-05.xlsx")["Summary"]
    listed = next(row[1] for row in summary.iter_rows(values_only=True) if row[0] == "Bill files")
    assert listed == f"aws:{tmp_path / 'export'}, gcp:{gcp_file}"  # the sources, not their temporary files


def test_local_bills_with_a_remote_engine_are_refused(tmp_path, simple_plan, capsys):
    code, _, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--engine", "bigquery", "--table",
                       "p.d.t", "--bills", sample_bill_paths()[0], "--out", tmp_path / "o")
    assert code == 2 and "reads --table, not bill files" in err and not (tmp_path / "o").exists()


def test_remote_engine_without_a_table_is_refused(tmp_path, simple_plan, capsys):
    code, _, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--engine", "athena", "--out", tmp_path)
    assert code == 2 and "needs --table" in err


def test_token_counts_from_a_usage_csv(tmp_path, simple_plan, may):
    from finops.cli.reconcile import reconcile_to_workbook

    usage = tmp_path / "usage.csv"
    usage.write_text("Month,PlanLine,ActualMTokens\n2026-05,storage,12.5\n2026-04,storage,99\n")
    rec, _ = reconcile_to_workbook(simple_plan, [may], "2026-05", tmp_path / "o", usage=usage)
    lines = {line.plan_line: line for line in rec.lines}
    assert lines["storage"].actual_unit_cost.amount == 4  # 50 / 12.5
    assert lines["gpu"].actual_unit_cost.amount == Decimal("26.125")  # 104.5 / 4 from the workbook's Usage sheet


@pytest.mark.parametrize("content, fragments", [
    (b"Month,PlanLine,ActualMTokens\n2026-05,gpu,many\n", ["row 2", "column ActualMTokens", "'many'"]),
    (b"Month,PlanLine,ActualMTokens\n2026-05,gpu,-3\n", ["row 2", "column ActualMTokens", "0 or more"]),
    (b"Month,PlanLine,ActualMTokens\nMay,gpu,3\n", ["row 2", "column Month", "YYYY-MM"]),
    (b"Month,PlanLine\n2026-05,gpu\n", ["column ActualMTokens", "Month, PlanLine, ActualMTokens"]),
    (b"PK\x03\x04\xf1\x00binary", ["not a UTF-8 CSV file", "Month, PlanLine, ActualMTokens"]),
], ids=["not a number", "negative", "month", "missing column", "not a CSV"])
def test_bad_usage_csv_exits_2_naming_row_and_column(content, fragments, tmp_path, simple_plan, may, capsys):
    usage = tmp_path / "usage.csv"
    usage.write_bytes(content)
    code, _, err = run(capsys, "--plan", simple_plan, "--month", "2026-05", "--bills", may, "--out", tmp_path / "o",
                       "--usage", usage)
    assert code == 2
    assert all(f in err.replace("\n", "") for f in ("usage.csv", *fragments)), err
    assert not (tmp_path / "o").exists()
