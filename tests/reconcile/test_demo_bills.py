"""``finops demo`` bills its own plan's fleet, and each surprise in that bill shows where a CFO looks.

Expected amounts are computed here from the price book's rows (hours x rate) and the plan's TCO sheet
(instances per workload), not from the generator: a bill that drifts from the fleet, the prices or the
calendar fails them.
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from finops.cli import main
from finops.price_book import PriceBook
from finops.reconcile.demo_bills import FleetLine, write_demo_bills
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.demo_fleet_plan import PLAN_LINES, PRICING_MODELS

MAY_HOURS = 31 * 24
INTERRUPTED_HOURS = 5 * 24   # the default spot interruption: days 12 to 16
UNPLANNED_HOURS = 14 * 24    # the unplanned instance: days 18 to 31


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo-bills")
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    return out


def rate(provider: str, instance_type: str, region: str, model: str) -> Decimal:
    """The price book's hourly price, found by hand (one row; no-upfront where a term has several)."""
    rows = [r for r in PriceBook.bundled() if (r.provider, r.instance_type, r.region, r.pricing_model)
            == (provider, instance_type, region, model) and r.payment_option in ("", "no_upfront")]
    assert len(rows) == 1, (provider, instance_type, region, model)
    return rows[0].hourly_cost


def table(path: Path, sheet: str, name: str) -> list[dict[str, object]]:
    ws = openpyxl.load_workbook(path, data_only=True)[sheet]
    header, *rows = [[c.value for c in r] for r in ws[ws.tables[name].ref]]
    return [dict(zip(header, r)) for r in rows]


def fleet(demo_out: Path) -> list[dict[str, object]]:
    """The plan's TCO rows on a plan line: the fleet the bill must charge."""
    return [r for r in table(demo_out / "llm-finops-plan.xlsx", "TCO", "tblTco") if r["PlanLine"]]


def bill_rows(demo_out: Path) -> list[dict[str, str]]:
    rows = []
    for path in sorted((demo_out / "bills").glob("demo-*.csv.gz")):
        with gzip.open(path, "rt", newline="") as handle:
            rows += list(csv.DictReader(handle))
    return rows


def test_the_bill_has_the_samples_focus_columns_and_real_shaped_ids(demo_out):
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        sample_header = next(csv.reader(handle))
    for path in (demo_out / "bills").glob("demo-*.csv.gz"):
        with gzip.open(path, "rt", newline="") as handle:
            assert next(csv.reader(handle)) == sample_header, path.name
    rows = bill_rows(demo_out)
    assert {r["ProviderName"] for r in rows} == {"AWS", "Google Cloud"}
    aws = [r for r in rows if r["ProviderName"] == "AWS"]
    assert all(r["ResourceId"].startswith("arn:aws:ec2:us-east-1:") and len(r["SubAccountId"]) == 12 for r in aws)
    gcp = [r for r in rows if r["ProviderName"] == "Google Cloud" and r["ChargeCategory"] == "Usage"]
    assert all(r["ResourceId"].startswith("//compute.googleapis.com/projects/gcp-batch-translation-") for r in gcp)


def test_a_plan_line_costs_its_instances_hours_times_the_price_book(demo_out):
    """aws-inference-prod: every instance the TCO sheet deploys for its workloads, 744 h at on-demand."""
    lines = [r for r in fleet(demo_out) if r["PlanLine"] == "aws-inference-prod"]
    assert {r["Workload"] for r in lines} == {w for w, line in PLAN_LINES.items() if line == "aws-inference-prod"}
    expected = sum((int(r["Instances"]) * MAY_HOURS * rate("aws", str(r["InstanceType"]), str(r["Region"]),
                                                             "on_demand") for r in lines), Decimal(0))
    billed = sum((Decimal(r["EffectiveCost"]) for r in bill_rows(demo_out) if r["SubAccountName"] ==
                  "aws-inference-prod"), Decimal(0))
    assert billed == expected                                   # exact: whole hours x the price book's price
    assert expected == 9 * 744 * Decimal("6.88")                # 7 + 1 + 1 p5.4xlarge at 6.88 USD an hour
    variance = {r["Plan line"]: r for r in table(demo_out / "budget-review-2026-05.xlsx", "Variance", "tblVariance")}
    assert Decimal(str(variance["aws-inference-prod"]["P&L actual"])) == expected
    planned = expected * 730 / 744                               # the plan's month is 730 hours
    assert variance["aws-inference-prod"]["Planned"] == pytest.approx(float(planned), rel=1e-12)
    assert variance["aws-inference-prod"]["Flag"] is None        # 1.9 %: the month's length, not material


def test_the_unplanned_gpu_instance_is_the_unmapped_cost_and_the_headline_names_it(demo_out):
    expected = UNPLANNED_HOURS * rate("aws", "p5.48xlarge", "us-east-1", "on_demand")
    (unmapped,) = table(demo_out / "budget-review-2026-05.xlsx", "Unmapped", "tblUnmapped")[:1]
    assert (unmapped["Sub-account"], unmapped["Instance type"]) == ("ml-research", "p5.48xlarge")
    assert Decimal(str(unmapped["Amortized"])) == expected
    headline = openpyxl.load_workbook(demo_out / "budget-review-2026-05.xlsx", data_only=True)["Summary"]["A3"].value
    assert (f"the main cause: cost no plan line covers (Unmapped), {expected:,.2f} USD over" in headline
            and "most of it AWS ml-research p5.48xlarge" in headline), headline


def test_the_spot_interruption_is_a_flagged_rate_variance_on_the_spot_line(demo_out):
    (line,) = [r for r in fleet(demo_out) if r["PlanLine"] == "gcp-batch-translation"]
    assert line["PricingModel"] == PRICING_MODELS[str(line["Workload"])] == "spot"
    spot = rate("gcp", str(line["InstanceType"]), str(line["Region"]), "spot")
    on_demand = rate("gcp", str(line["InstanceType"]), str(line["Region"]), "on_demand")
    instances = int(line["Instances"])
    actual = instances * ((MAY_HOURS - INTERRUPTED_HOURS) * spot + INTERRUPTED_HOURS * on_demand)
    planned = instances * 730 * spot
    variance = {r["Plan line"]: r for r in table(demo_out / "budget-review-2026-05.xlsx", "Variance", "tblVariance")}
    row = variance["gcp-batch-translation"]
    assert Decimal(str(row["P&L actual"])) == actual
    assert row["Planned"] == pytest.approx(float(planned), rel=1e-12)
    assert row["Flag"] == "over" and row["Favourable"] == "unfavourable"
    # most of it is rate (on-demand hours at the spot line), the rest the month's 14 extra hours
    extra = INTERRUPTED_HOURS * (on_demand - spot) * instances
    assert row["Rate"] == pytest.approx(float(extra), rel=0.01)
    assert row["Volume"] == pytest.approx(float(14 * spot * instances), rel=0.01)


def test_the_unused_commitment_fails_the_tie_out(demo_out):
    fee = MAY_HOURS * rate("gcp", "a3-highgpu-8g", "us-central1", "cud_1y")
    purchases = [r for r in bill_rows(demo_out) if r["ChargeCategory"] == "Purchase"]
    assert len(purchases) == 1 and Decimal(purchases[0]["BilledCost"]) == fee
    assert purchases[0]["ChargeFrequency"] == "Recurring" and Decimal(purchases[0]["EffectiveCost"]) == 0
    assert not [r for r in bill_rows(demo_out) if r["CommitmentDiscountStatus"]]   # nothing ran on it
    figures = {r["Figure"]: r["Value"] for r in
               table(demo_out / "budget-review-2026-05.xlsx", "Summary", "tblTieOut")}
    assert Decimal(str(figures["Scheduled amortization this month (purchase / term)"])) == fee
    assert figures["Amortized in the bills (used + unused commitment)"] == 0
    assert figures["Tie-out"].startswith("check: the bills amortize less than the schedule")


def test_the_plans_cloud_lines_are_formulas_over_its_fleet(demo_out):
    ws = openpyxl.load_workbook(demo_out / "llm-finops-plan.xlsx")["Budget"]
    header, *rows = [[c.value for c in r] for r in ws[ws.tables["tblBudget"].ref]]
    amounts = {r[header.index("PlanLine")]: (r[header.index("Category")], r[header.index("Amount")]) for r in rows}
    assert set(amounts) == set(PLAN_LINES.values()) | {"onprem-inference"}
    for line, (category, amount) in amounts.items():
        assert str(amount).startswith("=IF(COUNTIFS(TCO!" if category == "OPEX" else "=SUMPRODUCT("), line


def test_the_same_fleet_gives_the_same_bytes(tmp_path):
    line = FleetLine("aws-inference-prod", "w", "aws", "us-east-1", "p5.4xlarge", 2)
    spot = FleetLine("gcp-batch", "t", "gcp", "us-central1", "a3-highgpu-2g", 1, "spot")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_demo_bills(tmp_path / "a", [line, spot], PriceBook.bundled(), SAMPLE_MONTH)
    second = write_demo_bills(tmp_path / "b", [line, spot], PriceBook.bundled(), SAMPLE_MONTH)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    counts: dict[str, int] = defaultdict(int)
    for path in first:
        with gzip.open(path, "rt", newline="") as handle:
            for row in csv.DictReader(handle):
                counts[row["ChargeCategory"]] += 1
    assert counts == {"Usage": (2 + 1) * 31 + 14, "Purchase": 1}


def test_the_demo_fleets_review_prints_at_8_pt_or_more(demo_out, tmp_path):
    pytest.importorskip("pypdf")  # the LibreOffice print check's reader (skips there without LibreOffice)
    from tests.reconcile.test_review_print import SOFFICE, to_pdf
    from tests.workbook.test_libreoffice import smallest_text

    if SOFFICE is None:
        pytest.skip("LibreOffice is not installed")
    assert smallest_text(to_pdf(demo_out / "budget-review-2026-05.xlsx", tmp_path)) == []


def test_a_fleet_lines_volume_is_counted_in_gpu_hours_the_plan_and_the_bill_agree_on(demo_out):
    """aws-inference-prod is a fleet: its volume is GPU-hours, the plan's (accelerators paid x 730) against the
    bill's (the same accelerators x the 744 hours of May), at the planned cost per GPU-hour; its price is the
    plan's, so nothing is left for rate."""
    lines = [r for r in fleet(demo_out) if r["PlanLine"] == "aws-inference-prod"]
    gpus = sum(int(r["GpusPaid"]) for r in lines)
    budget = {r["PlanLine"]: r for r in table(demo_out / "llm-finops-plan.xlsx", "Budget", "tblBudget")}
    assert budget["aws-inference-prod"]["PlannedGpuHours"] == gpus * 730
    units = {r["Plan line"]: r for r in table(demo_out / "budget-review-2026-05.xlsx", "Variance", "tblUnitCost")}
    row = units["aws-inference-prod"]
    assert (row["Volume in"], row["Planned GPU-hours"], row["Actual GPU-hours"]) == ("GPU-hours", gpus * 730,
                                                                                      gpus * MAY_HOURS)
    variance = {r["Plan line"]: r for r in table(demo_out / "budget-review-2026-05.xlsx", "Variance", "tblVariance")}
    line = variance["aws-inference-prod"]
    assert line["Volume"] == pytest.approx(line["Planned"] * (MAY_HOURS - 730) / 730, rel=1e-9)
    assert line["Rate"] == pytest.approx(0, abs=1e-6)


def test_the_demo_closes_the_loop_on_its_own_plan(demo_out):
    """The serving loop runs on the plan the demo bills: every workload of a cloud plan line is a serving line with
    its month of metrics (a line with several workloads: one serving line per workload, namespace = the workload),
    in the review's Serving sheet and in next month's plan, whose Budget has a 2026-06 row for every line of the
    plan. The metrics are drawn at the performance model's latencies, so the realized throughput is the predicted
    one (ratio within 10 %), but for the agents' line, drawn 15 % slower: its correction sizes it up."""
    import json

    from templates.demo_fleet_plan import FLEET_PLAN

    workloads: dict[str, list[str]] = defaultdict(list)
    for workload, line in PLAN_LINES.items():
        workloads[line].append(workload)
    with open(demo_out / "serving" / "serving-lines.csv", newline="") as handle:
        serving = list(csv.DictReader(handle))
    cloud = {"aws-inference-prod", "aws-inference-staging", "aws-agents-prod", "gcp-batch-translation"}
    assert {r["PlanLine"] for r in serving} == cloud == set(workloads)
    names = {r["LabelValue"] for r in serving}
    assert names == {line if len(w) == 1 else name for line, w in workloads.items() for name in w}
    assert sum(r["PlanLine"] == "aws-inference-prod" for r in serving) == len(workloads["aws-inference-prod"]) == 3
    assert {p.name for p in (demo_out / "serving" / "metrics").iterdir()} == {f"{SAMPLE_MONTH}-{x}.json.gz"
                                                                              for x in names}
    review = [r["PlanLine"] for r in table(demo_out / "budget-review-2026-05.xlsx", "Serving", "tblServingReview")]
    assert sorted(review) == sorted(r["PlanLine"] for r in serving)
    summed = table(demo_out / "budget-review-2026-05.xlsx", "Serving", "tblServingPlanLines")
    assert [(r["PlanLine"], r["ServingLines"]) for r in summed] == [("aws-inference-prod", 3)]
    following = table(demo_out / "llm-finops-plan-next.xlsx", "Budget", "tblBudget")
    assert {r["PlanLine"] for r in following if r["Month"] == "2026-06"} == {row[1] for row in FLEET_PLAN.budget}
    corrections = json.loads((demo_out / "throughput-corrections.json").read_text())["corrections"]
    ratio = {c["model"]: c["months"][SAMPLE_MONTH] for c in corrections}
    agents = next(r["Model"] for r in serving if r["PlanLine"] == "aws-agents-prod")
    assert ratio[agents] < 0.9
    assert all(0.9 <= ratio[r["Model"]] <= 1.1 for r in serving if r["PlanLine"] != "aws-agents-prod"), ratio
