"""``finops mix --shift-batch`` and ``finops mix scenarios --low/--high``: results worked by hand.

With an on-demand price of 10 and a reservation of 6 per unit-hour, the k-th reserved unit pays off when
it is busy more than 6 / 10 = 60 % of the (probability-weighted) hours: the break-even rule of committed
capacity (the load-duration-curve argument of docs/mix.md).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from finops.cli import main

OPTIONS = "name,kind,hourly_cost\nod,on_demand,10\nri,reserved,6\n"


def mix_json(capsys, *args: str) -> dict:
    assert main(["mix", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def write(folder: Path, demand: list[float]) -> tuple[str, str]:
    (folder / "demand.csv").write_text("hour,units\n" + "".join(f"{h},{u}\n" for h, u in enumerate(demand)))
    (folder / "options.csv").write_text(OPTIONS)
    return str(folder / "demand.csv"), str(folder / "options.csv")


@pytest.mark.parametrize("share,units_after,cost_after", [
    # each day: 12 h at 2 units, 12 h at 10. Keep (1 - s) of every hour; the batch energy
    # B = s x 144 fills the 12 low hours up to L = 2 (1 - s) + B / 12.
    # s = 0.3: kept 1.4 / 7, B = 43.2, L = 5.0 -> 12 h at 5, 12 h at 7: 5 units busy 100 %, 2 busy 50 %
    #          -> ri 5; a day costs 5 x 6 x 24 + 2 x 10 x 12 = 960
    (0.3, 5, 960 * 7),
    # s = 0.5: kept 1 / 5, B = 72, L = 7 > 5: the whole day levels at 144 / 24 = 6 -> ri 6, 6 x 6 x 24 = 864
    (0.5, 6, 864 * 7),
])
def test_shift_batch_saving_worked_by_hand(capsys, tmp_path, share, units_after, cost_after):
    demand, options = write(tmp_path, ([2.0] * 12 + [10.0] * 12) * 7)
    lever = mix_json(capsys, "--demand", demand, "--options", options, "--no-compare",
                     "--shift-batch", str(share))["load_shaping"]
    # before: ri 2 (busy 100 %), the other 8 units busy 50 %: a day costs 2 x 6 x 24 + 8 x 10 x 12 = 1,248
    assert lever["units_before"] == {"ri": 2} and Decimal(str(lever["cost_before"])) == 1248 * 7
    assert lever["units_after"] == {"ri": units_after}
    assert Decimal(str(lever["cost_after"])) == cost_after
    assert Decimal(str(lever["saved"])) == 1248 * 7 - cost_after


@pytest.mark.parametrize("low,high,expected_units,low_units,per_scenario", [
    # base 10 units for 100 h; weights 0.25 / 0.5 / 0.25.
    # low 0.5, high 1.5: units 1-5 busy in every scenario, 6-10 in base and high (75 % > 60 %), 11-15 only
    # in high (25 %) -> expected ri 10; commit-to-low ri 5.
    # ri 10: low 10 x 6 x 100 = 6,000, base 6,000, high 6,000 + 5 x 10 x 100 = 11,000
    # ri 5: low 3,000, base 3,000 + 5,000 = 8,000, high 3,000 + 10,000 = 13,000
    (0.5, 1.5, 10, 5, {"expected": (6000, 6000, 11000), "commit_to_low": (3000, 8000, 13000)}),
    # low 0.8, high 1.2: expected ri 10 (units 9-10 busy 75 %), commit-to-low ri 8
    # ri 10: low 6,000 (8 busy), base 6,000, high 6,000 + 2 x 1,000 = 8,000
    # ri 8: low 4,800, base 4,800 + 2,000 = 6,800, high 4,800 + 4,000 = 8,800
    (0.8, 1.2, 10, 8, {"expected": (6000, 6000, 8000), "commit_to_low": (4800, 6800, 8800)}),
])
def test_scenarios_low_high_worked_by_hand(capsys, tmp_path, low, high, expected_units, low_units,
                                           per_scenario):
    demand, options = write(tmp_path, [10.0] * 100)
    payload = mix_json(capsys, "scenarios", "--demand", demand, "--options", options,
                       "--low", str(low), "--high", str(high))
    assert payload["expected"]["units"] == {"ri": expected_units}
    assert payload["commit_to_low"]["units"] == {"ri": low_units}
    weights = (Decimal("0.25"), Decimal("0.5"), Decimal("0.25"))
    for plan, costs in per_scenario.items():
        got = payload["per_scenario"][plan]
        assert tuple(Decimal(str(got[s])) for s in ("low", "base", "high")) == costs
        expected_cost = sum((w * c for w, c in zip(weights, costs, strict=True)), Decimal(0))
        assert Decimal(str(payload[plan]["total_cost"])) == expected_cost
