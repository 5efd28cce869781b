"""The next plan's money, worked out by hand: a fleet that follows its hourly demand in whole instances, priced at
the price book's on-demand rate, and the bridge from this month's actual cost to the next budget (fleet, hours
paid, price) that explains why a larger fleet can cost less.

The observed line: 5 p5.48xlarge (40 H100) ran every hour of May (744 h) at 55.04 USD an instance-hour, billed
204,748.80 USD for 29,760 GPU-hours. Its demand: half of a 730-hour profile at the peak, half at a quarter of it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest

from finops.money import Money
from finops.price_book import PriceBook
from finops.serving import RealizedLine, ServingLine, ServingMonth, plan_next_month
from finops.serving.next_month import hourly_instances
from finops.sizing.corrections import CorrectionTable

RATE = Decimal("55.04")          # AWS p5.48xlarge on-demand, us-east-1, the bundled price book
BILLED = RATE * 5 * 744          # 204,748.80 USD
PEAK_GEN_PER_HOUR = 12_000_000.0  # generation tokens in the busiest hour
OSL, ISL = 2000, 20000


def _line(label: str = "agents") -> ServingLine:
    return ServingLine("aws-agents-prod", "vllm", "qwen3-32b", "h100-sxm", "bf16", 8, "namespace", label,
                       ttft_target_ms=2000, provider="aws", instance_type="p5.48xlarge", region="us-east-1")


def _realized(line: ServingLine, scale: float = 1.0, gpu_hours: float = 29_760.0, gpus: int = 40) -> RealizedLine:
    hourly = np.r_[np.full(365, PEAK_GEN_PER_HOUR), np.full(365, PEAK_GEN_PER_HOUR / 4)] * scale
    generation = float(hourly.sum())
    requests = generation / OSL
    return RealizedLine(line, requests * ISL, generation, requests, hourly, None, None, None, None, None, None,
                        5, None, gpus, gpu_hours, "bill", gpu_hours, None, None, Money(BILLED, "USD"), 0.0, ())


@pytest.fixture(scope="module")
def one_line():
    book = PriceBook.current()
    assert book.lookup("aws", "p5.48xlarge", "on_demand", "us-east-1").hourly_cost == RATE
    month = ServingMonth("2026-05", (_realized(_line()),), (), 0)
    return plan_next_month(month, growth=1.0, corrections=CorrectionTable(), price_book=book)


def test_whole_instances_follow_the_hourly_demand():
    # 7 TP8 replicas on 8-GPU instances: 7 at the peak; a quarter of the peak needs ceil(7 / 4) = 2, not 1.75
    assert hourly_instances(7, 56, np.array([8.0, 2.0, 1.0, 0.0]), 8).tolist() == [7, 2, 1, 0]
    # 3 TP2 replicas (6 GPUs) on 8-GPU instances: ceil(2 replicas x 2 GPUs / 8) = 1 instance at two thirds
    assert hourly_instances(3, 6, np.array([3.0, 2.0]), 8).tolist() == [1, 1]


def test_the_budget_is_the_instance_hours_the_demand_needs_at_the_on_demand_rate(one_line):
    nxt = one_line.lines[0]
    r = nxt.replicas
    assert nxt.gpus == 8 * r and nxt.instances == r
    instance_hours = 365 * r + 365 * math.ceil(r / 4)             # per 730 hours, by hand
    assert nxt.gpu_hours == pytest.approx(8 * instance_hours)
    assert nxt.gpus_paid == pytest.approx(8 * instance_hours / 730)
    assert nxt.committed_units == {}                              # the book sells p5.48xlarge on demand only
    assert nxt.budget.rounded() == Money(RATE * instance_hours, "USD")   # x 730 / 8,760: exact to the cent


def test_the_cost_bridge_splits_fleet_hours_and_price(one_line):
    nxt = one_line.lines[0]
    r = nxt.replicas
    instance_hours = 365 * r + 365 * math.ceil(r / 4)
    rows = {c.what: c for c in one_line.changes if c.what.startswith("monthly cost")}
    per_gpu_hour = BILLED / 29_760                                # 6.88 USD
    fleet = BILLED * 8 * r / 40                                  # 8r GPUs at May's 744 hours and price
    hours = per_gpu_hour * 8 * instance_hours                     # the hours the demand needs, at May's price
    expected = {"monthly cost: fleet": (BILLED, fleet), "monthly cost: hours paid": (fleet, hours),
                "monthly cost: price": (hours, RATE * instance_hours), "monthly cost": (BILLED, RATE * instance_hours)}
    assert set(rows) == set(expected)
    for what, (before, after) in expected.items():
        assert (rows[what].before, rows[what].after) == (float(round(before, 2)), float(round(after, 2))), what
    assert per_gpu_hour == Decimal("6.88") and rows["monthly cost: price"].before == rows["monthly cost: price"].after
    assert "744 -> " in rows["monthly cost: hours paid"].why and "of 730" in rows["monthly cost: hours paid"].why


def test_two_serving_lines_on_one_plan_line_share_its_cost_and_sum_into_it():
    """Two workloads on one plan line: each sized and bought on its own; the bill's cost and GPU-hours split by the
    GPU-hours DCGM saw (3 : 1 here); the plan line's budget is the sum of both."""
    book = PriceBook.current()
    a, b = _line("agents"), _line("agents-small")
    month = ServingMonth("2026-05", (_realized(a, gpu_hours=29_760.0), _realized(b, 0.25, gpu_hours=29_760.0)), (), 0)
    from finops.serving.realized import _shared

    dcgm = [replace(r, dcgm_gpu_hours=h) for r, h in zip(month.lines, (22_320.0, 7_440.0))]
    shared = _shared(dcgm)
    assert [s.cost for s in shared] == [Money(BILLED * 3 / 4, "USD"), Money(BILLED / 4, "USD")]
    assert [s.gpu_hours for s in shared] == [22_320.0, 7_440.0]
    nxt = plan_next_month(ServingMonth("2026-05", tuple(shared), (), 0), growth=1.0, corrections=CorrectionTable(),
                          price_book=book)
    assert [n.plan_line for n in nxt.lines] == ["aws-agents-prod"] * 2
    assert {c.serving_line for c in nxt.changes} == {"namespace=agents", "namespace=agents-small"}
    total = sum((n.budget.rounded().amount for n in nxt.lines), Decimal(0))
    hand = sum(RATE * (365 * n.replicas + 365 * math.ceil(n.replicas / 4)) for n in nxt.lines)
    assert total == hand and nxt.lines[0].replicas > nxt.lines[1].replicas
