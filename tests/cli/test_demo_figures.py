"""`finops demo`'s figures, re-derived outside the code that made them: the mix and the TCO from the bundled
price book's rows, the FinOps Foundation samples' review from the sample bills summed with csv + Decimal and
the samples' plan's Budget table.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from finops.cli import main
from finops.cli.demo import MIX_INSTANCE, MIX_PROVIDER, MIX_REGION
from finops.price_book import PriceBook
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE

CENT = Decimal("0.01")


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo-figures")
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    return out


def price(pricing_model: str, instance_type: str = MIX_INSTANCE, region: str = MIX_REGION,
          provider: str = MIX_PROVIDER, payment: str | None = None) -> Decimal:
    (row,) = [r for r in PriceBook.bundled() if r.provider == provider and r.instance_type == instance_type
              and r.region == region and r.pricing_model == pricing_model
              and (payment is None or r.payment_option == payment)]
    return row.hourly_cost


def dec(value: object) -> Decimal:
    return Decimal(str(value))


def test_mix_costs_are_unit_hours_times_the_price_book(demo_out):
    mix = json.loads((demo_out / "mix.json").read_text())
    options = {o["kind"]: o for o in mix["options"]}
    on_demand = price("on_demand")
    od_cost = dec(options["on_demand"]["unit_hours"]) * on_demand
    assert dec(options["on_demand"]["cost"]) == od_cost.quantize(CENT)
    assert abs(dec(options["spot"]["cost"]) - dec(options["spot"]["unit_hours"]) * price("spot")) < CENT
    committed = [o for o in mix["options"] if o["units"]]
    for option in committed:  # a commitment is paid every hour of the year, used or not
        model, _, payment = option["name"].partition("-")
        expected = option["units"] * price(model, payment=payment) * Decimal(8760)
        assert abs(dec(option["cost"]) - expected) < CENT
        assert option["unit_hours"] <= option["units"] * 8760
    served = sum(dec(o["unit_hours"]) for o in mix["options"])
    assert abs(dec(mix["on_demand_only_cost"]) - served * on_demand) < CENT
    assert abs(dec(mix["total_cost"]) - sum(dec(o["cost"]) for o in mix["options"])) <= CENT
    assert abs(dec(mix["savings"]) - (dec(mix["on_demand_only_cost"]) - dec(mix["total_cost"]))) <= CENT
    assert mix["savings"] > 0


def test_tco_cloud_options_are_the_hourly_price_over_the_horizon(demo_out):
    """Every no-upfront cloud option: units x hourly x 730 h x months (one node = one instance)."""
    comparison = json.loads((demo_out / "tco.json").read_text())["comparison"]
    months, checked = comparison["months"], 0
    for option in comparison["options"]:
        if option["kind"] != "on_demand":
            continue
        provider, instance_type = option["name"].split()[:2]
        regions = {r.region for r in PriceBook.bundled() if r.instance_type == instance_type
                   and r.pricing_model == "on_demand"}
        hourly = min(price("on_demand", instance_type, region, provider) for region in regions)
        expected = option["units"] * hourly * 730 * months
        assert abs(dec(option["total"]) - expected) <= CENT, option["name"]
        checked += 1
    assert checked >= 2
    owned = comparison["owned"]
    assert owned["capex"] == 800_000 and owned["gpus"] == comparison["gpus"] == 16


def bill_sums() -> dict[str, Decimal]:
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for path in sample_bill_paths():
        with gzip.open(path, "rt", newline="") as handle:
            for row in csv.DictReader(handle):
                sums["billed"] += Decimal(row["BilledCost"])
                sums["effective"] += Decimal(row["EffectiveCost"])
                sums[f"invoice {row['InvoiceId']}"] += Decimal(row["BilledCost"])
                sums["rows"] += 1
    return sums


def figures(sheet) -> dict[str, object]:
    """First column -> second column of every row of a sheet (labels and their values)."""
    return {row[0]: row[1] for row in sheet.iter_rows(values_only=True) if row and isinstance(row[0], str)
            and len(row) > 1}


def test_the_focus_samples_review_ties_out_to_the_bills_and_the_plan(demo_out):
    """The FinOps Foundation samples, reconciled beside the demo's own bills, still tie out exactly."""
    review = openpyxl.load_workbook(demo_out / "focus-samples" / f"budget-review-{SAMPLE_MONTH}.xlsx", data_only=True)
    summary = figures(review["Summary"])
    sums = bill_sums()
    values = {dec(v) for v in summary.values() if isinstance(v, (int, float))}
    assert sums["billed"] in values            # cloud BilledCost (cash)
    assert sums["effective"] in values         # OPEX: cloud EffectiveCost
    assert sums["rows"] in values              # bill rows
    # the invoice tie-out is the P&L and cash sheet's table (#16): provider, invoice, billed, amortized
    cash = review["P&L and cash"]
    header, *rows = [[c.value for c in r] for r in cash[cash.tables["tblInvoices"].ref]]
    assert header[:3] == ["Provider", "Invoice", "Billed"]
    invoices = {row[1]: dec(row[2]) for row in rows if row[1] != "all invoices"}
    assert invoices == {k.removeprefix("invoice "): v for k, v in sums.items() if k.startswith("invoice ")}
    plan = openpyxl.load_workbook(DEFAULT_TEMPLATE, data_only=True)
    budget = plan["Budget"]
    header, *rows = [r for r in budget[budget.tables["tblBudget"].ref]]
    names = [c.value for c in header]
    planned = sum((dec(r[names.index("Amount")].value) for r in rows
                   if r[names.index("Month")].value == SAMPLE_MONTH), Decimal(0))
    assert planned > 0 and planned in values


def _sheet_rows(path: Path, sheet: str) -> list[dict[str, object]]:
    ws = openpyxl.load_workbook(path, data_only=True)[sheet]
    rows = list(ws.iter_rows(min_row=3, values_only=True))
    return [dict(zip(rows[0], r)) for r in rows[1:] if r[0] is not None]


def test_the_next_plan_covers_every_cloud_line_and_bridges_its_cost(demo_out):
    """Every cloud line of the demo's plan is in the loop (aws-inference-prod's three models as three serving
    lines); the next Budget row of a line is the sum of its serving lines' cost, its PlannedGpuHours their GPUs
    paid x 730; the agents' line's cost moves by fleet, hours paid and price, re-derived from its bill (5
    p5.48xlarge x 744 h x the book's on-demand rate) and the Fleet sheet."""
    nxt = demo_out / "llm-finops-plan-next.xlsx"
    fleet = _sheet_rows(nxt, "Fleet")
    budget = {r["PlanLine"]: r for r in _sheet_rows(nxt, "Budget") if r["Month"] == "2026-06"}
    cloud = {"aws-inference-prod", "aws-inference-staging", "aws-agents-prod", "gcp-batch-translation"}
    assert {r["PlanLine"] for r in fleet} == cloud
    assert sum(r["PlanLine"] == "aws-inference-prod" for r in fleet) == 3
    for line in cloud:
        mine = [r for r in fleet if r["PlanLine"] == line]
        assert dec(budget[line]["Amount"]) == sum(dec(r["MonthlyCost"]) + dec(r["SunkAmortization"]) for r in mine)
        assert budget[line]["PlannedGpuHours"] == pytest.approx(sum(r["GpusPaid"] for r in mine) * 730)
    rate = price("on_demand", "p5.48xlarge", "us-east-1", "aws")
    billed = rate * 5 * 744
    agents = next(r for r in fleet if r["PlanLine"] == "aws-agents-prod")
    changes = {r["What"]: r for r in _sheet_rows(nxt, "Changes") if r["PlanLine"] == "aws-agents-prod"}
    per_gpu_hour = billed / (40 * 744)
    fleet_step = billed * agents["GpusNext"] / 40
    paid_hours = dec(agents["GpusPaid"]) * 730
    assert dec(changes["monthly cost: fleet"]["Before"]) == billed
    assert dec(changes["monthly cost: fleet"]["After"]) == fleet_step.quantize(CENT)
    assert dec(changes["monthly cost: hours paid"]["After"]) == pytest.approx(per_gpu_hour * paid_hours, abs=CENT)
    assert dec(changes["monthly cost: price"]["After"]) == dec(budget["aws-agents-prod"]["Amount"])
    assert dec(budget["aws-agents-prod"]["Amount"]) == pytest.approx(rate * paid_hours / 8, abs=CENT)  # on demand
