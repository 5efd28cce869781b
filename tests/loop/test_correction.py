"""The throughput correction table: geometric mean of monthly ratios, a band that narrows with months.

Hand-worked: ratios 0.8 and 0.9 -> factor sqrt(0.72) = 0.8485; logs -0.22314 and -0.10536, mean
-0.16425, squared deviations 0.0034686 each; band = sqrt((0.09 + 0.0069372) / 2) / sqrt(2) = 0.15567.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from finops.errors import InputError
from finops.serving.correction import PRIOR_BAND, CorrectionTable, corrected_rate

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


def test_hook_sizes_for_the_throughput_actually_delivered() -> None:
    assert corrected_rate(1200.0, 0.75) == pytest.approx(1600.0)
