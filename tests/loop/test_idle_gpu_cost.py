"""What finance asks of a serving line: the cost per request served and the cost of GPU-hours paid but not serving
(the bill's GPU-hours less the line's GPUs x the hours its metrics show it generating tokens). Figures by hand."""

from __future__ import annotations

from decimal import Decimal as D

import numpy as np

from finops.money import Money
from finops.serving.realized import RealizedLine
from finops.serving.serving_lines import ServingLine


def _line(hourly: np.ndarray, *, gpu_hours: float = 5_760.0, cost: Money | None = Money.of(7_200, "USD"),
          requests: float = 1_200_000.0) -> RealizedLine:
    serving = ServingLine("chat", "vllm", "llama-3.1-8b", "h100-sxm", "fp8", 1, "app", "chat")
    return RealizedLine(serving, prompt_tokens=1e9, generation_tokens=float(hourly.sum()), requests=requests,
                        hourly_generation_tokens=hourly, ttft_p50_ms=None, ttft_p99_ms=None, itl_p50_ms=None,
                        itl_p99_ms=None, ttft_p_ok=None, itl_p_ok=None, replicas=8, mean_running=None, gpus=8,
                        gpu_hours=gpu_hours, gpu_hours_source="bill", dcgm_gpu_hours=gpu_hours,
                        gpu_utilization=None, predicted_tokens_per_gpu_hour=None, cost=cost, gap_hours=0.0,
                        missing=())


def test_idle_gpu_hours_and_their_cost_from_the_hours_without_generated_tokens():
    hourly = np.zeros(720)
    hourly[:600] = 50_000.0  # 8 GPUs paid all 720 hours (5,760 GPU-hours), serving in 600 of them
    line = _line(hourly)
    assert line.serving_gpu_hours == 4_800.0
    assert line.idle_gpu_hours == 960.0
    assert line.idle_gpu_cost == Money.of(1_200, "USD")  # 7,200 x 960 / 5,760
    assert line.cost_per_request == Money.of(D("0.006"), "USD")  # 7,200 / 1,200,000


def test_without_metrics_or_cost_the_figures_are_not_made_up():
    assert _line(np.zeros(0)).idle_gpu_hours is None
    assert _line(np.ones(720), cost=None).idle_gpu_cost is None
    assert _line(np.ones(720), requests=0.0).cost_per_request is None
    assert _line(np.ones(720), gpu_hours=5_000.0).idle_gpu_hours == 0.0  # the bill paid fewer hours than served


def test_idle_gpu_hours_count_partial_hours_at_the_scrape_resolution():
    from finops.serving.realized import realize
    from finops.serving.series import Series

    # one replica scraped every 60 s for 3 hours; it generates from minute 10 to minute 30 of each hour: 20 of
    # every 60 minutes, 1 serving hour in 3, where whole hours would count all 3 as serving
    start, hours = 1_780_272_000.0, 3  # 2026-06-01T00:00Z
    times = start + 60.0 * np.arange(hours * 60 + 1)
    minute = np.arange(hours * 60 + 1) % 60
    generating = (minute > 10) & (minute <= 30)
    counter = np.cumsum(np.where(generating, 1_000.0, 0.0))
    labels = {"app": "chat"}
    series = [Series("vllm:generation_tokens_total", labels, times, counter),
              Series("vllm:prompt_tokens_total", labels, times, counter * 4),
              Series("vllm:request_success_total", labels, times, counter / 100)]
    serving = ServingLine("chat", "vllm", "llama-3.1-8b", "h100-sxm", "fp8", 1, "app", "chat")
    month = realize([serving], series, "2026-06", window=(start, hours), billed_gpu_hours={"chat": 8 * 3.0})
    line = month.line("chat")
    assert line.serving_hours == 1.0                      # 3 x 20 steps of 60 s
    assert line.gpus == 0 and line.serving_gpu_hours == 0  # no DCGM series: the GPUs are not known here
    sized = RealizedLine(**{**line.__dict__, "gpus": 8})
    assert sized.serving_gpu_hours == 8.0 and sized.idle_gpu_hours == 16.0  # whole hours: 24 serving, 0 idle
