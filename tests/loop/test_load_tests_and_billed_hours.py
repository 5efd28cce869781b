"""Load-test results and the bill's GPU-hours in the loop.

Load tests: the calibrate tests' real-shaped files (``tests/sizing/fixtures``: ``vllm bench serve
--save-result``, AIPerf and GenAI-Perf profile exports, a GuideLLM report) read against a serving line;
the measured throughput is checked against what the file itself reports (vLLM bench's
``output_throughput``, GuideLLM's and AIPerf's mean concurrency x osl / mean latency).

GPU-hours: a FOCUS bill shaped like the sample AWS bill (its columns, its prod-platform account) with
three g6e.xlarge instances (one L40S each, AWS's instance page) running the month's 744 hours for
aws-inference-prod; the expected GPU-hours are summed from the CSV with Decimal, the generation tokens
from the sample-metrics generator's line spec (tokens x osl / (isl + osl)).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import openpyxl
import pytest

from connectors.prometheus import read_saved
from finops.cli import main
from finops.cli.plan import served_by
from finops.cli.reconcile import reconcile_to_workbook
from finops.errors import InputError
from finops.reconcile.sample_bills import sample_bill_paths
from finops.serving import read_serving_lines, realize
from finops.serving.load_tests import read_load_tests
from finops.sizing.corrections import CORRECTIONS_FILE
from templates.builder import DEFAULT_TEMPLATE

from .serving_sheet import serving_lines, serving_tables

FIXTURES = Path(__file__).resolve().parents[1] / "sizing" / "fixtures"
LINE = "aws-inference-prod"       # vllm, llama-3.1-8b, l40s fp8 TP1, g6e.xlarge in us-east-1


def _sheet(path: Path, name: str, first_row: int = 3) -> list[dict[str, object]]:
    ws = openpyxl.load_workbook(path, read_only=True, data_only=True)[name]
    rows = list(ws.iter_rows(min_row=first_row, values_only=True))
    return [dict(zip(rows[0], r)) for r in rows[1:] if any(v is not None for v in r)]


# ---- load tests ---------------------------------------------------------------------------------------
def test_vllm_bench_throughput_is_what_the_file_reports(serving_csv: Path) -> None:
    data = json.loads((FIXTURES / "vllm-bench-serve.json").read_text())
    [result] = read_load_tests([(LINE, FIXTURES / "vllm-bench-serve.json")], read_serving_lines(serving_csv))
    # TP1: tokens per GPU-hour = the bench's output tokens/s x 3600 (its mean TTFT/TPOT give it to 0.1 %)
    assert result.measured_tokens_per_gpu_hour[0] == pytest.approx(data["output_throughput"] * 3600, rel=1e-3)
    assert result.points[0].concurrency == data["max_concurrency"]
    assert result.ratio == pytest.approx(result.measured_tokens_per_gpu_hour[0] / result.predicted_tokens_per_gpu_hour[0])


@pytest.mark.parametrize("name", ["aiperf-profile-export.json", "genai-perf-profile-export.json"])
def test_aiperf_throughput_follows_the_files_means(serving_csv: Path, name: str) -> None:
    data = json.loads((FIXTURES / name).read_text())
    [result] = read_load_tests([(LINE, FIXTURES / name)], read_serving_lines(serving_csv))
    point = result.points[0]
    osl, ttft, itl = (data[k]["avg"] for k in ("output_sequence_length", "time_to_first_token", "inter_token_latency"))
    expected = point.concurrency * osl / ((ttft + (osl - 1) * itl) / 1e3) * 3600
    assert result.measured_tokens_per_gpu_hour[0] == pytest.approx(expected, rel=1e-9)


def test_guidellm_gives_one_point_per_benchmark(serving_csv: Path) -> None:
    data = json.loads((FIXTURES / "guidellm-report.json").read_text())
    [result] = read_load_tests([(LINE, FIXTURES / "guidellm-report.json")], read_serving_lines(serving_csv))
    assert len(result.points) == len(data["benchmarks"])
    logs = [math.log(m / p) for m, p in zip(result.measured_tokens_per_gpu_hour, result.predicted_tokens_per_gpu_hour)]
    assert result.ratio == pytest.approx(math.exp(sum(logs) / len(logs)))


def test_a_load_test_of_an_unknown_line_or_a_bad_file_is_refused(serving_csv: Path, tmp_path: Path) -> None:
    lines = read_serving_lines(serving_csv)
    with pytest.raises(InputError, match="not a serving line"):
        read_load_tests([("nope", FIXTURES / "vllm-bench-serve.json")], lines)
    bad = tmp_path / "bench.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a recognized load-test result") as caught:
        read_load_tests([(LINE, bad)], lines)
    assert str(bad) in str(caught.value.where)


def test_plan_next_records_the_load_test_beside_the_month(tmp_path: Path, metric_files: list[Path],
                                                         serving_csv: Path) -> None:
    history = tmp_path / "history"
    code = main(["plan", "next", "--plan", str(DEFAULT_TEMPLATE), "--history", str(history), "--month", "2026-05",
                 "--serving", str(serving_csv), "--out", str(tmp_path / "next.xlsx"),
                 "--load-test", f"{LINE}=" + str(FIXTURES / "vllm-bench-serve.json"),
                 *[a for p in metric_files for a in ("--metrics", str(p))]])
    assert code == 0
    saved = json.loads((history / CORRECTIONS_FILE).read_text())
    entry = next(e for e in saved["corrections"] if (e["engine"], e["gpu"], e["model"]) == ("vllm", "l40s", "llama-3.1-8b"))
    [result] = read_load_tests([(LINE, FIXTURES / "vllm-bench-serve.json")], read_serving_lines(serving_csv))
    assert entry["months"]["2026-05 load test vllm-bench-serve.json"] == pytest.approx(result.ratio)
    month = realize(read_serving_lines(serving_csv), read_saved(metric_files), "2026-05")
    production = month.throughput_ratios()[("vllm", "l40s", "llama-3.1-8b")]
    assert entry["months"]["2026-05"] == pytest.approx(production)
    # the next sizing uses both: the Fleet sheet's correction is their geometric mean, band over two
    fleet = {r["PlanLine"]: r for r in _sheet(tmp_path / "next.xlsx", "Fleet")}[LINE]
    assert fleet["ThroughputCorrection"] == pytest.approx(math.sqrt(result.ratio * production), abs=1e-4)
    assert "load test vllm-bench-serve.json" in fleet["CorrectionMonths"]


# ---- GPU-hours from the bill ----------------------------------------------------------------------------
def _gpu_bill(folder: Path) -> Path:
    """Three g6e.xlarge instances of prod-platform's EC2 running all 744 hours of May 2026, on demand."""
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    template = next(r for r in rows if r["ChargeCategory"] == "Usage" and r["SubAccountName"] == "prod-platform"
                    and r["ServiceName"] == "AmazonEC2")
    out = []
    for i in range(3):
        out.append({**template, "ResourceId": f"arn:aws:ec2:us-east-1:100000000002:instance/i-gpu{i}",
                    "ResourceName": f"i-gpu{i}", "RegionId": "us-east-1", "ChargePeriodStart": "2026-05-01T00:00:00Z",
                    "ChargePeriodEnd": "2026-06-01T00:00:00Z", "ConsumedQuantity": "744.0000",
                    "PricingQuantity": "744.0000", "PricingCategory": "Standard", "CommitmentDiscountId": "",
                    "CommitmentDiscountName": "", "CommitmentDiscountCategory": "", "CommitmentDiscountType": "",
                    "CommitmentDiscountStatus": "", "CommitmentDiscountQuantity": "", "CommitmentDiscountUnit": "",
                    "BilledCost": "1391.28", "EffectiveCost": "1391.28", "ListCost": "1391.28",
                    "SkuPriceDetails": json.dumps({"InstanceType": "g6e.xlarge", "CoreCount": 4})})
    path = folder / "gpu-usage.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(out)
    return path


def test_the_review_takes_gpu_hours_from_the_bill(tmp_path: Path, metric_files: list[Path], serving_csv: Path,
                                                  generator: ModuleType) -> None:
    bill = _gpu_bill(tmp_path)
    with bill.open(newline="") as handle:
        billed = sum(Decimal(r["ConsumedQuantity"]) * 1 for r in csv.DictReader(handle))   # 1 L40S per g6e.xlarge
    assert billed == 2232
    spec = next(s for s in generator.SPECS if s.plan_line == LINE)
    generation = spec.mtokens * 1e6 * spec.osl / (spec.isl + spec.osl)
    _, review = reconcile_to_workbook(DEFAULT_TEMPLATE, [sample_bill_paths()[0], bill], "2026-05", tmp_path / "out",
                                      serving=served_by("2026-05", serving_csv, DEFAULT_TEMPLATE, metric_files, None,
                                                        300, [f"{LINE}={FIXTURES / 'vllm-bench-serve.json'}"]))
    rows = serving_lines(review)
    row = rows[LINE]
    assert (row["GpuHours"], row["GpuHoursFrom"]) == (float(billed), "bill")
    assert row["DcgmGpuHours"] == pytest.approx(spec.replicas * spec.tp * 744)     # 2 L40S seen by DCGM, 3 paid
    assert row["RealizedTokPerGpuHour"] == pytest.approx(generation / float(billed), abs=1)
    # DCGM still gives the utilization, and the lines the bill does not carry keep DCGM's GPU-hours
    on_prem = next(s for s in generator.SPECS if s.plan_line == "onprem-inference")
    assert rows["onprem-inference"]["GpuHoursFrom"] == "DCGM"
    assert rows["onprem-inference"]["GpuHours"] == pytest.approx(on_prem.replicas * on_prem.tp * 744)
    assert row["GpuUtilization"] is not None
    # the load test is listed under the production lines, measured against predicted
    test_row = next(r for table in serving_tables(review) for r in table if "File" in r)
    assert (test_row["PlanLine"], test_row["File"], test_row["Concurrency"]) == (LINE, "vllm-bench-serve.json", 16)
