"""README's table of the committed template's Sizing sheet (section "The planner's choice and the
recommendation, side by side") against the product's answer for each row: the planner's configuration
as the table states it, sized by ``finops.sizing.choice.size_workload`` (what the sheet's ``LLM_SIZING``,
``finops size`` and ``finops.size`` call), on the bundled price book, on demand, USD a month.

The table had once drifted from the product (seed 000's doc Q&A read 29 Inferentia2 chips for
16,051 USD where the product answered 30 for 16,605, seed 003's customer service 108 A100s where it
answered 110): no test read it."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from finops.money import quantize
from finops.sizing.choice import device_noun, size_workload
from finops.sizing.search import SizingOption
from finops.sizing.workload import presets

README = Path(__file__).parents[2] / "README.md"
ROWS = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| seed")]


def _configuration(text: str) -> tuple[str, str, int]:
    """``"h100-sxm int8 TP1"`` -> ``("h100-sxm", "int8", 1)``."""
    gpu, precision, tp = text.split()
    return gpu, precision, int(tp.removeprefix("TP"))


def _deployed(option: SizingOption) -> str:
    """The table's Deployed cell: ``7 on 7x p5.4xlarge``, ``30 chips on 30x inf2.xlarge``,
    ``110 (112 paid) on 14x p4de.24xlarge``, ``4,654 on 4,654x g5.xlarge``."""
    noun = "" if device_noun(option.gpu) == "GPUs" else f" {device_noun(option.gpu)}"
    paid = "" if option.gpus == option.gpus_paid else f" ({option.gpus_paid:,} paid)"
    return f"{option.gpus:,}{noun}{paid} on {option.instances:,}x {option.instance_type}"


def _whole(cost) -> str:
    """A monthly cost as the table prints it: whole dollars with thousands separators."""
    return f"{quantize(cost.amount, Decimal(1)):,}"


def test_the_table_has_a_row_for_every_preset():
    assert sorted(row.split("|")[1].strip() for row in ROWS) == sorted(presets())


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.split("|")[1].strip())
def test_each_row_is_what_the_product_answers(row):
    name, choice, meets, deployed, monthly, best, best_deployed, best_monthly = (
        cell.strip() for cell in row.strip("|").split("|"))
    gpu, precision, tp = _configuration(choice)
    answer = size_workload(presets()[name], gpu=gpu, precision=precision, tp=tp)
    assert meets == ("yes" if answer.choice.meets_targets else "no")
    if answer.choice.meets_targets:
        assert (deployed, monthly) == (_deployed(answer.choice.option), _whole(answer.choice.option.monthly_cost))
    b = answer.best
    assert best == f"{b.gpu} {b.precision} TP{b.tp}"
    assert (best_deployed, best_monthly) == (_deployed(b), _whole(b.monthly_cost))
