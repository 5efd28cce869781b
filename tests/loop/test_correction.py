"""The throughput correction table: geometric mean of monthly ratios, a band that narrows with months;
and the sizing hook that applies it (finops/sizing/corrections.py).

Hand-worked: ratios 0.8 and 0.9 -> factor sqrt(0.72) = 0.8485; logs -0.22314 and -0.10536, mean
-0.16425, squared deviations 0.0034686 each; band = sqrt((0.09 + 0.0069372) / 2) / sqrt(2) = 0.15567.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from finops.errors import InputError
from finops.price_book import PriceBook
from finops.sizing.choice import size_workload
from finops.sizing.corrections import PRIOR_BAND, CorrectionTable, ThroughputCorrection, corrected_search
from finops.sizing.search import search
from finops.sizing.workload import Workload

KEY = ("vllm", "h100-sxm", "llama-3.1-70b")


def test_factor_and_band_worked_by_hand() -> None:
    table = CorrectionTable().with_ratio(*KEY, "2026-05", 0.8).with_ratio(*KEY, "2026-06", 0.9)
    assert table.factor(*KEY) == pytest.approx(math.sqrt(0.72))
    assert table.band(*KEY) == pytest.approx(0.15567, abs=1e-5)
    assert table.months(*KEY) == ("2026-05", "2026-06")


def test_band_narrows_as_agreeing_months_accumulate() -> None:
    table, bands = CorrectionTable(), []
    for month, ratio in (("2026-05", 0.78), ("2026-06", 0.80), ("2026-07", 0.79), ("2026-08", 0.81)):
        table = table.with_ratio(*KEY, month, ratio)
        bands.append(table.band(*KEY))
    assert bands[0] == pytest.approx(PRIOR_BAND)
    assert bands == sorted(bands, reverse=True) and bands[-1] < PRIOR_BAND / 3


def test_a_month_recorded_again_replaces_its_ratio_and_the_file_round_trips(tmp_path: Path) -> None:
    table = CorrectionTable().with_ratio(*KEY, "2026-05", 0.5).with_ratio(*KEY, "2026-05", 0.8)
    path = table.write(tmp_path / "c.json")
    again = CorrectionTable.read(path)
    assert again.months(*KEY) == ("2026-05",) and again.factor(*KEY) == pytest.approx(0.8)
    assert CorrectionTable.read(tmp_path / "missing.json").factor(*KEY) == 1.0


def test_bad_ratio_and_damaged_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="positive"):
        CorrectionTable().with_ratio(*KEY, "2026-05", 0.0)
    damaged = tmp_path / "c.json"
    damaged.write_text("{not json")
    with pytest.raises(InputError, match="cannot read the throughput corrections"):
        CorrectionTable.read(damaged)


#: A throughput-bound line: no latency targets, so its replicas follow the demand over one replica's rate.
WORKLOAD = Workload(name="loop", model="llama-3.1-8b", isl=1024, osl=256, peak_requests_per_hour=40_000.0)


def test_the_sizing_hook_sizes_for_the_throughput_actually_delivered() -> None:
    # delivering half the modelled throughput needs the fleet of twice the demand, found by the search itself
    common = {"gpus": ["l40s"], "precisions": ["fp8"], "tps": [1], "price_book": PriceBook.bundled(), "top": 1}
    doubled = search(Workload(**{**WORKLOAD.__dict__, "peak_requests_per_hour": 80_000.0}), **common).options[0]
    half = corrected_search(WORKLOAD, ThroughputCorrection(0.5), **common).options[0]
    plain = search(WORKLOAD, **common).options[0]
    assert half.gpus == doubled.gpus and half.gpus > plain.gpus
    assert corrected_search(WORKLOAD, ThroughputCorrection(), **common).options[0].gpus == plain.gpus


def test_the_planners_choice_is_sized_with_the_correction_of_its_configuration() -> None:
    table = CorrectionTable().with_ratio("vllm", "l40s", "llama-3.1-8b", "2026-05", 0.5)
    plain = size_workload(WORKLOAD, gpu="l40s", precision="fp8", tp=1, price_book=PriceBook.bundled())
    corrected = size_workload(WORKLOAD, gpu="l40s", precision="fp8", tp=1, price_book=PriceBook.bundled(),
                              correction=table.correction("vllm", "l40s", "llama-3.1-8b"))
    assert corrected.choice.option.gpus > plain.choice.option.gpus
    assert table.correction("vllm", "l40s", "llama-3.1-8b").sources == ("2026-05",)
