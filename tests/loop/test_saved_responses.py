"""The bundled month of saved ``query_range`` answers, read and measured per plan line.

Expected figures come from outside the code under test: the month's tokens from the demo plan's Usage
table (``templates/demo_plan.py``, which the generator was given), requests and lengths from the
generator's line specs, GPU counts from its replicas x TP, and P_ok from the lognormal it drew the
latencies from (the TTFT target of 500 ms is a bucket bound, so the histogram gives it exactly).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from connectors.prometheus import parse_query_range, read_saved
from finops.errors import InputError
from finops.serving import ServingLine, read_serving_lines, realize
from finops.serving.synthetic_metrics import load_profile
from templates.demo_plan import USAGE

from .serving_sheet import serving_lines


@pytest.fixture(scope="module")
def month(metric_files: list[Path], serving_csv: Path):  # type: ignore[no-untyped-def]
    return realize(read_serving_lines(serving_csv), read_saved(metric_files), "2026-05")


@pytest.mark.parametrize(("plan_line", "mtokens"), [(line, m) for _, line, m in USAGE])
def test_tokens_served_match_the_usage_the_month_was_drawn_from(month, plan_line: str, mtokens: float) -> None:
    assert month.line(plan_line).tokens / 1e6 == pytest.approx(mtokens, rel=1e-6)


def test_requests_lengths_and_gpus_follow_the_generator(month, generator: ModuleType) -> None:
    for spec in generator.SPECS:
        line = month.line(spec.plan_line)
        assert line.requests == pytest.approx(spec.mtokens * 1e6 / (spec.isl + spec.osl), rel=1e-5)
        assert (round(line.isl), round(line.osl)) == (spec.isl, spec.osl)
        assert (line.replicas, line.gpus) == (spec.replicas, spec.replicas * spec.tp)
        assert line.gpu_hours == pytest.approx(spec.replicas * spec.tp * 744)
        assert line.missing == ()


def test_restart_and_gap_are_handled(month, generator: ModuleType) -> None:
    # aws-inference-prod has a replica restart at hour 400: its tokens are still the month's whole usage
    assert month.line("aws-inference-prod").tokens == pytest.approx(1_150e6, rel=1e-6)
    # gcp-inference-prod misses the scrapes of hours 200-202: one gap, from hour 199 to 203
    assert month.line("gcp-inference-prod").gap_hours == 4.0
    assert month.line("onprem-inference").gap_hours == 0.0
    # the sample closing the gap (hour 203, which ends hour index 202) carries the four hours in it
    profile = month.line("gcp-inference-prod").hourly_generation_tokens
    assert profile[199:202].sum() == 0 and profile[202] > 3 * profile[195]


def test_ttft_p_ok_matches_the_lognormal_it_was_drawn_from(month, generator: ModuleType) -> None:
    spec = next(s for s in generator.SPECS if s.plan_line == "aws-inference-prod")
    load = load_profile(np.random.default_rng(2026_05 + sum(map(ord, spec.plan_line))), 31 * 24, 4)  # May: a Friday
    median = spec.ttft_median_s * np.sqrt(load)
    within = 0.5 * (1 + np.vectorize(math.erf)((math.log(0.5) - np.log(median)) / (spec.sigma * math.sqrt(2))))
    expected = float((load * within).sum() / load.sum())
    assert month.line("aws-inference-prod").ttft_p_ok == pytest.approx(expected, abs=2e-4)


def test_sglang_line_is_read_through_its_own_names(month) -> None:
    line = month.line("gcp-inference-staging")
    assert line.line.engine == "sglang" and line.ttft_p99_ms is not None and line.mean_running is not None


def _answer(result: list[dict], status: str = "success", kind: str = "matrix") -> bytes:
    return json.dumps({"status": status, "data": {"resultType": kind, "result": result}}).encode()


@pytest.mark.parametrize(("body", "message"), [
    (b"<html>502</html>", "not a Prometheus JSON answer"),
    (json.dumps({"status": "error", "error": "parse error at char 3"}).encode(), "parse error at char 3"),
    (_answer([], kind="vector"), "resultType matrix"),
    (_answer([{"metric": {"pod": "a"}, "values": [[0, "1"]]}]), "no __name__"),
    (_answer([{"metric": {"__name__": "x"}, "values": [[0, "abc"]]}]), "not \\[time"),
])
def test_bad_answers_name_the_file(body: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_query_range(body, "saved/may.json")
    assert "saved/may.json" in str(caught.value)


def test_missing_file_and_unknown_series_and_unmatched_line(tmp_path: Path, metric_files: list[Path],
                                                            serving_csv: Path) -> None:
    with pytest.raises(InputError, match="metrics file not found"):
        read_saved([tmp_path / "nope.json"])
    unknown = parse_query_range(_answer([{"metric": {"__name__": "node_cpu_seconds_total", "namespace": "x"},
                                          "values": [[0, "1"], [60, "2"]]}]), "node.json")
    with pytest.raises(InputError, match="no series of a known serving metric.*node_cpu_seconds_total"):
        realize(read_serving_lines(serving_csv), unknown, "2026-05")
    lost = ServingLine("new-line", "vllm", "llama-3.1-8b", "l40s", "fp8", 1, "namespace", "inference-nowhere")
    with pytest.raises(InputError, match="'new-line'.*namespace matching 'inference-nowhere'"):
        realize([lost], read_saved(metric_files[:1]), "2026-05")


def test_unknown_metrics_beside_known_ones_are_listed_not_fatal(metric_files: list[Path], serving_csv: Path) -> None:
    extra = parse_query_range(_answer([{"metric": {"__name__": "node_cpu_seconds_total"},
                                        "values": [[1777593600, "1"], [1777597200, "2"]]}]), "node.json")
    month = realize(read_serving_lines(serving_csv), read_saved(metric_files) + extra, "2026-05")
    assert month.ignored_metrics == ("node_cpu_seconds_total",)


def test_review_shows_realized_figures_per_plan_line(tmp_path: Path, metric_files: list[Path],
                                                     serving_csv: Path) -> None:

    from finops.cli import main
    from finops.reconcile.sample_bills import sample_bill_paths
    from templates.builder import DEFAULT_TEMPLATE

    args = ["reconcile", "--plan", str(DEFAULT_TEMPLATE), "--month", "2026-05", "--out", str(tmp_path), "--quiet",
            "--serving", str(serving_csv), "--json"]
    for bill in sample_bill_paths():
        args += ["--bills", str(bill)]
    for path in metric_files:
        args += ["--metrics", str(path)]
    assert main(args) == 0
    table = serving_lines(tmp_path / "budget-review-2026-05.xlsx")
    assert sorted(table) == sorted(line for _, line, _ in USAGE)
    for _, line, mtokens in USAGE:
        assert table[line]["MTokens"] == pytest.approx(mtokens, rel=1e-6)
        assert 0 < table[line]["TtftPOk"] <= 1 and table[line]["GpuHours"] > 0
    # the on-prem line's actual is its depreciation, 11,475 USD (templates/demo_plan.py): per million tokens
    assert table["onprem-inference"]["CostPerMTokens"] == pytest.approx(11_475 / 2_480, abs=0.005)
