"""One plan, one answer: the workbook's Sizing and TCO rows, ``finops size --json`` and ``finops.size`` agree.

For every Workloads row of a fresh build, the cached ``Best*`` cells equal the first option of the
command line and of the Python API for the same preset and the bundled price book; the planner's own
configuration, where priced, meets its targets, sits on whole TP groups and whole instances, and its
cloud cost is instances x the Prices sheet's hourly price x 730. A configuration that misses its
targets, recalculated in the ``formulas`` engine, shows why instead of a cost.
"""

from __future__ import annotations

import contextlib
import io
import json

import openpyxl
import pytest

import finops
from finops.cli import main
from finops.price_book import PRICE_BOOK_ENV
from finops.sizing import presets

from tests.workbook.test_template import Table, formulas_book  # noqa: F401  (a fixture)

BEST = {"BestGpu": "gpu", "BestPrecision": "precision", "BestTp": "tp", "BestGpus": "gpus",
        "BestInstanceType": "instance_type", "BestInstances": "instances"}


@pytest.fixture(scope="module")
def rows(built):
    """(workload name, {Sizing header: cached value}, {TCO header: cached value}) per Workloads row (the
    tables' rows beyond the Workloads rows are room to grow: blank)."""
    wb = openpyxl.load_workbook(built, data_only=True)
    sizing, tco = Table(wb, "tblSizing"), Table(wb, "tblTco")

    def cached(table, i):
        return {h: wb[table.sheet][table.cell(i, h)].value for h in table.headers}

    return [(cached(sizing, i)["Workload"], cached(sizing, i), cached(tco, i)) for i in range(sizing.rows)
            if cached(sizing, i)["Workload"]], wb


@pytest.fixture(scope="module")
def cli_options(rows):
    """``finops size --preset NAME --json``'s options per workload, on the bundled price book."""
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(PRICE_BOOK_ENV, raising=False)
        for name, _, _ in rows[0]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["size", "--preset", name, "--json"]) == 0
            found[name] = json.loads(out.getvalue())["options"]
    return found


def test_every_workloads_row_is_a_preset_sized_by_all_three_faces(rows, cli_options):
    names = [name for name, _, _ in rows[0]]
    assert sorted(names) == sorted(presets())
    book = finops.price_book.PriceBook.bundled()
    for name, sizing, _ in rows[0]:
        cli = cli_options[name][0]
        api = finops.size(preset=name, price_book=book)[0]
        for header, key in BEST.items():
            assert sizing[header] == cli[key] == getattr(api, key), (name, header)
        cost = sizing["BestMonthlyCost"]
        assert cost == pytest.approx(float(cli["monthly_cost"]), rel=0.005), name
        assert cost == pytest.approx(float(api.monthly_cost.amount), rel=0.005), name


def test_every_priced_row_meets_its_targets(rows):
    for name, sizing, tco in rows[0]:
        preset = presets()[name]
        priced = isinstance(sizing["MonthlyCost"], float)
        assert priced == (sizing["MeetsTargets"] == "yes") == isinstance(tco["CloudMonthly"], float), name
        if not priced:
            assert sizing["MonthlyCost"] == sizing["WhyNot"] == tco["CloudMonthly"] != ""
            continue
        if preset.ttft_ms:
            assert sizing["TtftMs"] <= preset.ttft_ms, name
        if preset.itl_ms:
            assert sizing["TpotMs"] <= preset.itl_ms, name


def test_priced_rows_are_whole_tp_groups_on_whole_instances(rows):
    table, wb = rows
    prices = Table(wb, "tblPrices")
    ws = wb[prices.sheet]
    per_instance = {}
    for i in range(prices.rows):
        key = (ws[prices.cell(i, "provider")].value, ws[prices.cell(i, "instance_type")].value)
        per_instance[key] = ws[prices.cell(i, "gpu_count")].value
    hourly = {}
    for i in range(prices.rows):
        if ws[prices.cell(i, "pricing_model")].value == "on_demand":
            key = (ws[prices.cell(i, "provider")].value, ws[prices.cell(i, "instance_type")].value,
                   ws[prices.cell(i, "region")].value)
            hourly[key] = min(hourly.get(key, float("inf")), ws[prices.cell(i, "hourly_cost")].value)
    checked = 0
    for name, sizing, tco in table:
        if sizing["MeetsTargets"] != "yes":
            continue
        tp, gpus, paid, instances = tco["TP"], sizing["Gpus"], sizing["GpusPaid"], sizing["Instances"]
        count = per_instance[(tco["Provider"], sizing["InstanceType"])]
        assert gpus == sizing["Replicas"] * tp, name                       # whole TP groups
        assert paid == instances * count >= gpus > paid - count, name      # whole instances, none spare
        assert count >= tp and sizing["Replicas"] <= instances * (count // tp), name   # no group straddles two
        price = hourly[(tco["Provider"], sizing["InstanceType"], tco["Region"])]
        assert tco["InstanceHourly"] == price, name
        assert tco["CloudMonthly"] == pytest.approx(instances * price * 730, rel=1e-12) \
            == pytest.approx(sizing["MonthlyCost"], rel=1e-12), name
        checked += 1
    assert checked >= 5


def test_a_configuration_that_misses_its_targets_is_priced_nowhere(formulas_book, evaluated):
    """seed002's research agent at TP 1: its idle TTFT (2.9 s) is over the 2 s target at any replica count."""
    workloads, sizing, tco = (Table(formulas_book, t) for t in ("tblWorkloads", "tblSizing", "tblTco"))
    ws = formulas_book["Workloads"]
    i = next(i for i in range(workloads.rows) if ws[workloads.cell(i, "Workload")].value == "seed002-drug-discovery-agent")
    assert evaluated.value("TCO", tco.cell(i, "CloudMonthly")) > 0
    after = evaluated.recalculate({("Workloads", workloads.cell(i, "TP")): 1})

    def sized(header):
        return evaluated.value("Sizing", sizing.cell(i, header), after)

    assert sized("MeetsTargets") == "no"
    assert sized("WhyNot") == sized("MonthlyCost") == "misses TTFT 2000 ms: 2565 ms"
    assert sized("Instances") == sized("GpusPaid") == "-"    # not applicable: not priced
    for header in ("InstanceHourly", "CloudMonthly", "CloudPerMTokPeak", "OwnedMonthly", "OwnedPerMTokPeak"):
        assert evaluated.value("TCO", tco.cell(i, header), after) == "misses TTFT 2000 ms: 2565 ms", header
    assert evaluated.value("TCO", tco.cell(i, "Cheaper"), after) in ("", None)
    assert sized("BestTp") == 8 and isinstance(sized("BestMonthlyCost"), float)   # the recommendation stays


def test_cost_per_million_at_the_average_load_beside_the_peak(formulas_book, evaluated):
    """Workloads' PeakToAverage 2.5 on the financial copilot, recalculated: the fleet and its monthly cost
    stay at the peak size; per million output tokens at the average load = monthly cost / (peak tokens/s
    / 2.5 x 3,600 x 730 / 10^6), on the Sizing and TCO sheets, and equal to ``finops.size(...,
    peak_to_average=2.5)`` (``size --peak-to-average 2.5``) for the same configuration and price book."""
    workloads, sizing, tco = (Table(formulas_book, t) for t in ("tblWorkloads", "tblSizing", "tblTco"))
    ws = formulas_book["Workloads"]
    i = next(i for i in range(workloads.rows) if ws[workloads.cell(i, "Workload")].value == "seed002-financial-copilot")
    before = {h: evaluated.value("Sizing", sizing.cell(i, h)) for h in ("MonthlyCost", "CostPerMTokPeak",
                                                                        "CostPerMTokAverage")}
    assert before["CostPerMTokAverage"] == before["CostPerMTokPeak"]          # PeakToAverage 1: the peak 24/7
    after = evaluated.recalculate({("Workloads", workloads.cell(i, "PeakToAverage")): 2.5})

    def cell(sheet, table, header):
        return evaluated.value(sheet, table.cell(i, header), after)

    monthly, peak_tps = cell("TCO", tco, "CloudMonthly"), cell("TCO", tco, "PeakTokensPerS")
    expected = monthly / (peak_tps / 2.5 * 3600 * 730 / 1e6)
    assert cell("Sizing", sizing, "MonthlyCost") == pytest.approx(before["MonthlyCost"], rel=1e-12)
    assert cell("Sizing", sizing, "CostPerMTokAverage") == pytest.approx(expected, rel=1e-9)
    assert cell("Sizing", sizing, "CostPerMTokPeak") == pytest.approx(before["CostPerMTokPeak"], rel=1e-12)
    assert cell("TCO", tco, "CloudPerMTokAverage") == pytest.approx(expected, rel=1e-9)
    owned_hour = cell("TCO", tco, "OwnedGpuHour")
    owned_expected = cell("TCO", tco, "Gpus") * owned_hour * 730 / (peak_tps / 2.5 * 3600 * 730 / 1e6)
    assert cell("TCO", tco, "OwnedPerMTokAverage") == pytest.approx(owned_expected, rel=1e-9)
    choice = (ws[workloads.cell(i, "Gpu")].value, ws[workloads.cell(i, "Precision")].value,
              ws[workloads.cell(i, "TP")].value)
    options = finops.size(preset="seed002-financial-copilot", peak_to_average=2.5, price_book=evaluated.prices,
                          top=50)
    same = next(o for o in options if (o.gpu, o.precision, o.tp) == choice)
    assert cell("Sizing", sizing, "CostPerMTokAverage") == pytest.approx(
        float(same.cost_per_million_output_tokens_average.amount), rel=0.005)
