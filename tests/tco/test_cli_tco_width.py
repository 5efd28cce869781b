"""``finops tco`` tables in an 80-column terminal: option names and every figure whole, nothing cut to '…'."""

import json

import pytest

from finops.cli import main
from finops.cli._console import console


@pytest.fixture
def eighty_columns(monkeypatch):
    monkeypatch.setattr(console, "_width", 80)  # whatever the terminal running the tests is


def _figures(capsys, *args) -> list[dict]:
    assert main(["tco", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["options"]


@pytest.mark.parametrize("args", [
    ("--gpus", "64", "--months", "36"),
    ("--gpus", "64", "--months", "36", "--no-owned", "--tokens-per-s", "1200"),
])
def test_tco_table_keeps_names_and_figures_whole_at_80_columns(capsys, eighty_columns, args):
    options = _figures(capsys, *args)
    code = main(["tco", *args])
    out = capsys.readouterr().out
    assert code == 0
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert "(USD)" in out.splitlines()[0]  # the currency is named once, in the title
    tokens = set(out.split())
    for option in options:
        provider, instance = option["name"].split()[:2]
        assert f"{provider} {instance}" in out  # the name's first line is never folded
        figures = [f"{option[key]:,.2f}" for key in ("monthly", "total", "opex")] + [f"{option['per_gpu_hour']:.4f}"]
        figures += [f"{option['per_million_tokens']:,.3f}"] if "per_million_tokens" in option else []
        assert set(figures) <= tokens, (option["name"], figures)
