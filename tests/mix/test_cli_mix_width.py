"""``finops mix`` tables in an 80-column terminal: every figure whole, no line longer than 80, nothing cut to '…'."""

from pathlib import Path

import pytest

from finops.cli import main
from finops.cli._console import console
from finops.mix import optimize_mix, read_demand_csv, read_options_csv
from finops.money import quantize

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mix"
DEMAND, OPTIONS = EXAMPLES / "demand.csv", EXAMPLES / "options.csv"


@pytest.fixture
def eighty_columns(monkeypatch):
    monkeypatch.setattr(console, "_width", 80)  # whatever the terminal running the tests is


def _assert_readable(out: str) -> None:
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_mix_table_keeps_every_cost_whole_at_80_columns(capsys, eighty_columns):
    result = optimize_mix(read_demand_csv(DEMAND), read_options_csv(OPTIONS))
    code = main(["mix", "--demand", str(DEMAND), "--options", str(OPTIONS)])
    out = capsys.readouterr().out
    assert code == 0
    _assert_readable(out)
    assert "mix for demand.csv (8,760 hours), USD" in out  # the shared currency is named once, in the title
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for outcome in result.outcomes:
        assert outcome.name in rows and f"{quantize(outcome.cost.amount):,}" in rows[outcome.name]
    assert f"{quantize(result.total_cost.amount):,} USD" in out


def test_mix_scenarios_table_keeps_every_cost_whole_at_80_columns(capsys, eighty_columns):
    code = main(["mix", "scenarios", "--demand", str(DEMAND), "--options", str(OPTIONS)])
    out = capsys.readouterr().out
    assert code == 0
    _assert_readable(out)
    assert "compute-sp-1y 0" in out and "commit_to_low" in out
