"""README's CLI options whose results no other test checked: each run through ``finops`` and its output
checked against figures worked by hand from the option's documented meaning.

``mix generate``: units(t) = peak x [trough + (1 - trough)(1 + cos(2 pi (h - 14) / 24)) / 2] x weekend
x (1 + growth)^(t / 8760) x campaign x noise, batch shifted off-peak within each day (finops/mix/profile.py's
docstring, the formula README's "finops mix generate" line relies on). At the peak hour (14:00) the
bracket is 1, at 02:00 it is the trough (0.3); over a whole day the cosine sums to zero, so a weekday holds
24 x (0.3 + 0.35) = 15.6 peak-hours.

``size --confidence p``: each option is judged at the p-quantile of its own class's held-out measured /
modelled TTFT and TPOT (finops/sizing/confidence.py): for a closed population on one accelerator class,
the same answer as a search at the model's own figures with the targets divided by that quantile.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from finops.cli import main
from finops.mix import read_demand_csv

PEAK = 40.0


def generate(tmp_path, *args: str) -> np.ndarray:
    out = tmp_path / "demand.csv"
    assert main(["mix", "generate", "--out", str(out), "--peak", str(PEAK), *args]) == 0
    return read_demand_csv(out)


def hour(day: int, hour_of_day: int) -> int:
    return day * 24 + hour_of_day


def test_generate_hours_peak_and_trough(tmp_path):
    units = generate(tmp_path, "--hours", "336")
    assert len(units) == 336
    assert units[hour(0, 14)] == pytest.approx(PEAK, abs=1e-3)        # Monday's peak
    assert units[hour(0, 2)] == pytest.approx(0.3 * PEAK, abs=1e-3)   # the night trough
    assert units[hour(0, 20)] == pytest.approx(PEAK * (0.3 + 0.7 * (1 + math.cos(2 * math.pi * 6 / 24)) / 2),
                                               abs=1e-3)
    assert units[hour(5, 14)] == pytest.approx(0.7 * PEAK, abs=1e-3)  # Saturday: the weekend share
    assert units[: 24].sum() == pytest.approx(15.6 * PEAK, abs=0.02)


@pytest.mark.parametrize("growth", ["0.6", "1.0"])
def test_generate_growth_compounds_per_year(tmp_path, growth):
    units = generate(tmp_path, "--hours", "8784", "--growth", growth)
    day = 365  # 365 % 7 == 1: a weekday, one year after day 0; its 14:00 is 8,774 hours in
    assert units[hour(day, 14)] == pytest.approx(PEAK * (1 + float(growth)) ** (8774 / 8760), abs=1e-3)
    assert units[hour(182, 14)] == pytest.approx(PEAK * (1 + float(growth)) ** (hour(182, 14) / 8760), abs=1e-3)


def test_generate_campaign_multiplies_its_days(tmp_path):
    units = generate(tmp_path, "--hours", "336", "--campaign", "2:3:10")  # days 2, 3, 4 at 10x
    assert units[hour(1, 14)] == pytest.approx(PEAK, abs=1e-3)
    assert [units[hour(d, 14)] for d in (2, 3, 4)] == pytest.approx([10 * PEAK] * 3, abs=1e-3)
    assert units[hour(5, 14)] == pytest.approx(0.7 * PEAK, abs=1e-3)  # Saturday, after the campaign


def test_generate_batch_share_keeps_each_day_and_lowers_its_peak(tmp_path):
    plain = generate(tmp_path, "--hours", "168")
    shifted = generate(tmp_path, "--hours", "168", "--batch-share", "0.15")
    assert shifted.reshape(7, 24).sum(axis=1) == pytest.approx(plain.reshape(7, 24).sum(axis=1), abs=0.02)
    # each hour keeps 85 %; the 15 % of the day (0.15 x 624 = 93.6 peak-hours) fills the lowest hours to one level
    assert shifted[hour(0, 14)] == pytest.approx(0.85 * PEAK, abs=1e-3)
    level = shifted[hour(0, 2)]
    assert level > 0.3 * PEAK
    filled = shifted[:24][shifted[:24] > 0.85 * plain[:24] + 1e-3]
    assert filled == pytest.approx([level] * len(filled), abs=2e-3)
    assert (filled - 0.85 * plain[:24][shifted[:24] > 0.85 * plain[:24] + 1e-3]).sum() == pytest.approx(
        0.15 * 15.6 * PEAK, abs=0.02)


def test_generate_noise_is_a_seeded_multiplicative_spread(tmp_path):
    plain = generate(tmp_path, "--hours", "8760")
    noisy = generate(tmp_path, "--hours", "8760", "--noise", "0.05")
    ratio = noisy / plain
    assert ratio.mean() == pytest.approx(1.0, abs=0.004)   # 3 standard errors of 0.05 / sqrt(8760)
    assert ratio.std() == pytest.approx(0.05, abs=0.002)
    assert generate(tmp_path, "--hours", "8760", "--noise", "0.05").tolist() == noisy.tolist()
    other_seed = generate(tmp_path, "--hours", "8760", "--noise", "0.05", "--seed", "1")
    assert other_seed.tolist() != noisy.tolist()


def size_json(capsys, *args: str) -> dict:
    assert main(["size", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_size_confidence_is_sizing_for_targets_tightened_by_the_error_band(capsys):
    from dataclasses import replace
    from decimal import Decimal

    from finops.catalog import get_accelerator
    from finops.price_book import PriceBook
    from finops.sizing.engine_constants import Calibration, model_class
    from finops.sizing.search import search
    from finops.sizing.workload import presets

    # seed 003's customer service on A100s (kernels measured, no end-to-end row fitted): a closed population
    # with an ITL target, so sizing at a confidence only tightens the target, by the A100 class's TPOT ratio
    preset = presets()["seed003-customer-service"]
    cal = Calibration.bundled()
    kind = model_class(preset.model_spec())
    reach = cal.reach("vllm", get_accelerator("a100-80gb"))
    k_tpot = {level: cal.band("vllm", "tpot_ms", level, kind, reach=reach) for level in (0.5, 0.9)}
    assert reach == "kernels" and k_tpot[0.9] > k_tpot[0.5]
    at_90 = size_json(capsys, "--preset", preset.name, "--gpus", "a100-80gb", "--top", "5")   # the default, 0.9
    at_50 = size_json(capsys, "--preset", preset.name, "--gpus", "a100-80gb", "--confidence", "0.5", "--top", "5")
    assert at_90["confidence"] == 0.9 and at_50["confidence"] == 0.5
    assert at_90["options"][0]["monthly_cost"] > at_50["options"][0]["monthly_cost"]
    # the same searches by hand: the preset's ITL target divided by the band, the model's own figures
    for level, answer in ((0.9, at_90), (0.5, at_50)):
        by_hand = search(replace(preset, itl_ms=preset.itl_ms / k_tpot[level]), gpus=["a100-80gb"], top=5,
                         confidence=None, price_book=PriceBook.current())
        assert [(o["gpu"], o["gpus"], Decimal(repr(o["monthly_cost"]))) for o in answer["options"]] == \
            [(o.gpu, o.gpus, o.monthly_cost.amount) for o in by_hand.options]


def test_size_calibration_uses_the_refitted_file(capsys, tmp_path):
    """``finops calibrate ... --out my-cal.json`` then ``finops size ... --calibration my-cal.json`` (README):
    the option on the measured configuration (vLLM, Llama 3.1 8B, H100 SXM, BF16) is then calibrated, and
    its modelled TPOT is what ``estimate --calibration`` gives at the same concurrency."""
    from pathlib import Path

    fixtures = Path(__file__).parents[1] / "sizing" / "fixtures"
    cal = tmp_path / "my-cal.json"
    assert main(["calibrate", str(fixtures / "vllm-bench-serve.json"), "--engine", "vllm", "--model", "llama-3.1-8b",
                 "--gpu", "h100-sxm", "--precision", "bf16", "--out", str(cal)]) == 0
    capsys.readouterr()
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"name": "w", "model": "llama-3.1-8b", "isl": 1024, "osl": 256, "concurrency": 16,
                                    "precisions": ["bf16"], "gpus": ["h100-sxm"], "itl_ms": 100}))
    before = size_json(capsys, "--workload", str(workload), "--top", "50")["options"]
    after = size_json(capsys, "--workload", str(workload), "--top", "50", "--calibration", str(cal))["options"]
    tp1_before = next(o for o in before if o["tp"] == 1)
    tp1_after = next(o for o in after if o["tp"] == 1)
    assert tp1_before["calibrated"] is False and tp1_after["calibrated"] is True
    assert tp1_after["tpot_ms"] != pytest.approx(tp1_before["tpot_ms"], rel=1e-3)
