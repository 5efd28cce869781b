"""Every figure :func:`~finops.reconcile.engine.reconcile_groups` makes from charge groups and a plan, against
the same figures worked here group by group (the formulas of :mod:`finops.reconcile.engine`'s docstring:
FOCUS 1.2 EffectiveCost and BilledCost, straight-line depreciation, variance and its flag, spot share,
GPU-hours), without DuckDB: the groups are built here, as the aggregation would return them.

The groups are many per plan line, in two billing currencies (one written in lower case), with credits,
purchases, taxes, commitments, spot and preemptible usage, GPU-hours from the bill and from a catalog.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from finops.errors import CurrencyMismatchError
from finops.money import MONEY_CONTEXT, Money
from finops.reconcile.aggregation import ChargeGroup, Summary, UnmappedSums
from finops.reconcile.commitment_schedule import EarlierCommitment, commitment_summary
from finops.reconcile.engine import reconcile_groups
from finops.reconcile.forecast import year_forecast
from finops.reconcile.plan import Asset, BudgetLine, MappingRule, Plan, UsageLine
from finops.reconcile.result import GpuHours, UnmappedCharge

D = Decimal
MONTH = "2026-05"
RATES = {"eur": D("1.0837")}  # a key in lower case: codes are compared in upper case
START = datetime(2026, 5, 1)


def usd(value: Any) -> Money:
    return Money(D(value), "USD")


def group(plan_line: str | None, effective: Any, billed: Any = None, **fields: Any) -> ChargeGroup:
    """A charge group with the aggregation's fields (AWS usage in USD unless said otherwise)."""
    values: dict[str, Any] = {
        "provider_name": "AWS", "billing_currency": "USD", "invoice_id": "INV-1", "service_name": "AmazonEC2",
        "instance_type": None, "charge_category": "Usage", "charge_frequency": "Usage-Based",
        "pricing_category": "Standard", "commitment_status": None, "commitment_id": None, "commitment_type": None,
        "commitment_name": None, "commitment_term": None, "gpu_model": None, "purchase_option": None,
        "consumed_unit": "Hours", "list_cost": D(effective), "consumed_quantity": D(0), "gpu_hours": None,
        "first_charge_start": START, "last_charge_end": START + timedelta(days=1), "row_count": 24, **fields}
    return ChargeGroup(plan_line=plan_line, effective_cost=D(effective),
                       billed_cost=D(effective if billed is None else billed), **values)


P5 = {"instance_type": "p5.48xlarge", "gpu_model": "h100-sxm"}
GROUPS = [
    # gpu: on-demand hours in two groups, spot, preemptible, a reserved instance used and unused, its fee
    group("gpu", "1234.5678", **P5, gpu_hours=D("744"), consumed_quantity=D(93), row_count=744),
    group("gpu", "320.25", **P5, gpu_hours=D("96.5"), invoice_id="INV-2", row_count=120,
          last_charge_end=datetime(2026, 5, 31, 23)),
    group("gpu", "80.08", **P5, pricing_category="Dynamic", gpu_hours=D(40), row_count=5),
    group("gpu", "11.5", **P5, pricing_category="dynamic", purchase_option="spot", gpu_hours=D(8), row_count=1),
    group("gpu", "20", **P5, purchase_option="PREEMPTIBLE", gpu_hours=D(16), row_count=2),
    group("gpu", "7", **P5, purchase_option="on-demand", gpu_hours=D(0)),
    # the instance's storage, billed in GB-months: no GPU-hours from the catalog (not an hour unit)
    group("gpu", "1.75", instance_type="p5.48xlarge", consumed_unit="GB-Mo", consumed_quantity=D(40), row_count=30),
    group("gpu", "300.1", "0", **P5, pricing_category="Committed", commitment_id="ri-1", commitment_status="Used",
          commitment_type="Reserved Instance", list_cost=D("550.4"), gpu_hours=D(80), row_count=10),
    group("gpu", "60.2", "0", commitment_id="ri-1", commitment_status="Unused", commitment_type="Reserved Instance",
          consumed_quantity=D(0), row_count=2),
    group("gpu", "0", "2222.22", charge_category="Purchase", charge_frequency="Recurring", commitment_id="ri-1",
          commitment_type="Reserved Instance", commitment_term="1yr", consumed_unit=None, row_count=1,
          first_charge_start=START, last_charge_end=datetime(2026, 6, 1)),
    # gpu on GCP in EUR (two spellings of the code), hours from the catalog only
    group("gpu", "500", "510", provider_name="Google Cloud", billing_currency="EUR", invoice_id="G-1",
          service_name="Compute Engine", instance_type="a3-highgpu-8g", consumed_quantity=D(10), row_count=10),
    group("gpu", "-40.5", provider_name="Google Cloud", billing_currency="eur", invoice_id="G-1",
          service_name="Compute Engine", charge_category="Credit", consumed_unit=None, row_count=1),
    group("gpu", "25", provider_name="Google Cloud", billing_currency="EUR", invoice_id="G-1",
          service_name="Compute Engine", instance_type="a3-highgpu-8g", consumed_unit="hour",
          consumed_quantity=D("2.5"), purchase_option="Preemptible"),
    # storage and a line not in the plan; a line whose charges net to zero
    group("storage", "41.337", service_name="AmazonS3", consumed_unit="GB-Mo", consumed_quantity=D("1801.4"),
          instance_type="s3"),
    group("storage", "13.663", service_name="AmazonS3", consumed_unit="GB-Mo", pricing_category="Dynamic"),
    group("zeta", "12", instance_type="g6.xlarge", consumed_unit="HRS", consumed_quantity=D(12)),
    group("zeta", "3", instance_type="g6.xlarge", consumed_unit="h", consumed_quantity=D(3), gpu_model="l4"),
    group("alpha", "5", instance_type="m6i.large", consumed_quantity=D(5)), group("alpha", "-5", charge_category="Credit"),
    group("edge", "221"),
    # the owned servers' line also has a billed charge (their Direct Connect port): cash beside the assets' cash
    group("onprem", "410.4", service_name="AWSDirectConnect", consumed_quantity=D(744), row_count=744),
    # unmapped: a support fee bought this month, tax, a data transfer; hours of a GPU-less unit
    group(None, "100", charge_category="Purchase", charge_frequency="One-Time", service_name="AWSSupport",
          consumed_unit=None),
    group(None, "183.07", charge_category="Tax", service_name=None, invoice_id=None, consumed_unit=None,
          last_charge_end=None, first_charge_start=None),
    group(None, "2.5", service_name="AWSDataTransfer", consumed_unit="GB", instance_type="p5.48xlarge",
          consumed_quantity=D(12), provider_name=None),
    group(None, "9.9", instance_type="m6i.large", consumed_quantity=D(9), gpu_hours=D(3), charge_category="Adjustment"),
]

#: instance type -> (GPU model, GPUs per instance): the test's own catalog (a3-highgpu-8g: 8x H100, Google's page)
CATALOG = {("Google Cloud", "a3-highgpu-8g"): ("h100-sxm", 8), ("AWS", "g6.xlarge"): ("l4", 1),
           ("AWS", "p5.48xlarge"): ("h100-sxm", 8)}


def catalog(provider: str, instance_type: str) -> tuple[str, int] | None:
    return CATALOG.get((provider, instance_type))


SRV_1 = Asset("SRV-1", "8x H100", "onprem", "cc-asset", "h100-sxm", 8, date(2025, 12, 20), date(2026, 1, 2),
              usd(73_000), usd(1_000), 60)  # 72,000 over 60 months: 1,200 a month
SRV_2 = Asset("SRV-2", "lab box", "lab", "cc-lab", "l4", 1, date(2026, 5, 3), date(2026, 5, 10), usd(12_000),
              usd(0), 24)  # bought and in service in May: 500 a month, 12,000 cash
SRV_3 = Asset("SRV-3", "next", "onprem", "cc-other", "h100-sxm", 8, date(2026, 5, 30), date(2026, 6, 2),
              usd(30_000), usd(6_000), 48)  # bought in May, in service in June: cash only
DEPRECIATION = {"SRV-1": D(1200), "SRV-2": D(500), "SRV-3": D(0)}
CASH = {"SRV-1": D(0), "SRV-2": D(12_000), "SRV-3": D(30_000)}

PLAN = Plan(
    budget=(BudgetLine(MONTH, "gpu", "cc-ml", "OPEX", "AWS", usd(1500), D(10)),
            BudgetLine(MONTH, "storage", "cc-st", "OPEX", "AWS", usd(50)),
            BudgetLine(MONTH, "gpu", "cc-second", "CAPEX", "Google Cloud", usd(1000), D(5)),
            BudgetLine(MONTH, "onprem", "cc-2", "CAPEX", "On-prem", usd(1000)),
            # a CAPEX budget with no asset yet: its category comes from the budget, not from the assets
            BudgetLine(MONTH, "idle", "cc-3", "CAPEX", "AWS", usd(200), D(0)),
            BudgetLine(MONTH, "net", "cc-4", "OPEX", "", usd(100)),
            BudgetLine(MONTH, "edge", "cc-4", "OPEX", "", usd(200)),
            BudgetLine("2026-06", "gpu", "cc-ml", "OPEX", "AWS", usd(2500)),
            BudgetLine("2026-04", "gpu", "cc-ml", "OPEX", "AWS", usd(2400)),
            BudgetLine("2025-05", "gpu", "cc-ml", "OPEX", "AWS", usd(9999))),
    assets=(SRV_1, SRV_2, SRV_3),
    mapping=(MappingRule(1, "gpu", instance_type="p5.*"),),
    usage=(UsageLine(MONTH, "gpu", D("1200")), UsageLine(MONTH, "gpu", D("300")), UsageLine("2026-04", "storage", D(1)),
           UsageLine(MONTH, "storage", D("0.5"))))
#: The "net" line: planned 100, two charges of 90 in all: exactly -10 % (no flag at a 10 % threshold).
NET = [group("net", "95"), group("net", "-5", charge_category="Credit")]


def convert(amount: Decimal, currency: str | None) -> Decimal:
    """Into USD: a EUR amount times the rate (1 EUR = rate USD), whatever the case of its code."""
    return amount if currency == "USD" else MONEY_CONTEXT.multiply(amount, RATES[(currency or "").lower()])


def reconcile(groups=GROUPS + NET, **options: Any):
    """The plan's lines are tens of USD: no materiality amount (0), so the flags follow the percent rule."""
    options = {"rates": RATES, "instance_gpus": catalog, "materiality": D(0), **options}
    return reconcile_groups(PLAN, list(groups), MONTH, **options)


@pytest.fixture
def rec():
    """Per test, not per module: mutmut 3 runs a mutant only against the tests it saw reach the code, and a
    module-scoped result is made in the first test alone."""
    return reconcile()


def test_totals_providers_and_invoices(rec):
    groups = GROUPS + NET
    assert rec.effective_cost.amount == sum(convert(g.effective_cost, g.billing_currency) for g in groups)
    assert rec.billed_cost.amount == sum(convert(g.billed_cost, g.billing_currency) for g in groups)
    assert rec.opex == rec.effective_cost and (rec.month, rec.currency) == (MONTH, "USD")
    providers: dict[str, list[Decimal]] = defaultdict(lambda: [D(0), D(0)])
    invoices: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for g in groups:
        providers[g.provider_name or ""][0] += convert(g.effective_cost, g.billing_currency)
        providers[g.provider_name or ""][1] += convert(g.billed_cost, g.billing_currency)
        invoices[(g.provider_name or "", g.invoice_id or "")] += convert(g.billed_cost, g.billing_currency)
    assert [(p.provider_name, p.effective_cost.amount, p.billed_cost.amount) for p in rec.providers] == sorted(
        (k, *v) for k, v in providers.items())
    assert [(i.provider_name, i.invoice_id, i.billed_cost.amount) for i in rec.invoices] == sorted(
        (*k, v) for k, v in invoices.items())
    assert len(rec.invoices) == 5 and {("AWS", ""), ("", "INV-1")} <= set(invoices)  # the tax, the transfer


def test_capex_from_the_assets_in_the_month(rec):
    assert [(a.asset_id, a.plan_line, a.depreciation.amount, a.purchase_cash.amount) for a in rec.assets] == [
        (a.asset_id, a.plan_line, DEPRECIATION[a.asset_id], CASH[a.asset_id]) for a in PLAN.assets]
    assert rec.capex.amount == sum(DEPRECIATION.values()) == 1700
    assert rec.capex_cash.amount == sum(CASH.values()) == 42_000
    assert rec.planned.amount == 1500 + 50 + 1000 + 1000 + 200 + 100 + 200


def expected_lines(groups: list[ChargeGroup], threshold: Decimal, materiality: Decimal = D(0)) -> list[tuple[Any, ...]]:
    """Each plan line as the engine docstring defines it, worked from the groups, budget, assets and usage."""
    actual: dict[str, Decimal] = defaultdict(Decimal)
    cash: dict[str, Decimal] = defaultdict(Decimal)
    for g in groups:
        actual[g.plan_line or "Unmapped"] += convert(g.effective_cost, g.billing_currency)
        cash[g.plan_line or "Unmapped"] += convert(g.billed_cost, g.billing_currency)
    for a in PLAN.assets:
        actual[a.plan_line] += DEPRECIATION[a.asset_id]
        cash[a.plan_line] += CASH[a.asset_id]
    may = [b for b in PLAN.budget if b.month == MONTH]
    budgeted = list(dict.fromkeys(b.plan_line for b in may))
    names = budgeted + sorted(set(actual) - set(budgeted) - {"Unmapped"}) + ["Unmapped"]
    rows = []
    for name in names:
        lines = [b for b in may if b.plan_line == name]
        planned = sum((b.amount.amount for b in lines), D(0))
        variance = actual[name] - planned
        pct = MONEY_CONTEXT.divide(variance, planned) if planned else None
        side = "over" if variance > 0 else "under" if variance < 0 else ""
        flag = side if pct is None or abs(pct) * 100 > threshold else ""
        flag = flag if abs(variance) >= materiality else ""
        tokens = [b.planned_mtokens for b in lines if b.planned_mtokens is not None]
        p_tok = sum(tokens, D(0)) if tokens else None
        used = [u.actual_mtokens for u in PLAN.usage if u.month == MONTH and u.plan_line == name]
        a_tok = sum(used, D(0)) if used else None
        assets = [a for a in PLAN.assets if a.plan_line == name]
        category = lines[0].category if lines else "CAPEX" if assets else "OPEX"
        centre = assets[-1].cost_centre if assets else lines[0].cost_centre if lines else ""
        rows.append((name, category, planned, actual[name], cash[name], variance, pct, flag, p_tok, a_tok,
                     MONEY_CONTEXT.divide(planned, p_tok) if p_tok else None,
                     MONEY_CONTEXT.divide(actual[name], a_tok) if a_tok else None,
                     lines[0].provider if lines else "", centre))
    return rows


def line_rows(rec) -> list[tuple[Any, ...]]:
    return [(x.plan_line, x.category, x.planned.amount, x.actual.amount, x.actual_cash.amount, x.variance.amount,
             x.variance_pct, x.flag, x.planned_mtokens, x.actual_mtokens,
             None if x.planned_unit_cost is None else x.planned_unit_cost.amount,
             None if x.actual_unit_cost is None else x.actual_unit_cost.amount, x.provider, x.cost_centre)
            for x in rec.lines]


def test_every_plan_line(rec):
    got = line_rows(rec)
    assert got == expected_lines(GROUPS + NET, D(10))
    assert [row[0] for row in got] == ["gpu", "storage", "onprem", "idle", "net", "edge", "alpha", "lab", "zeta",
                                       "Unmapped"]
    flags = {row[0]: row[7] for row in got}
    # net is exactly -10 %, edge +10.5 % (the default threshold is 10 %), alpha nets to 0 outside the plan,
    # idle spent nothing of its 200
    assert (flags["net"], flags["edge"], flags["alpha"], flags["idle"], flags["zeta"]) == ("", "over", "", "under",
                                                                                           "over")
    assert rec.unmapped_effective_cost.amount == got[-1][3]
    assert rec.threshold_pct == D(10)


def test_categories_come_from_the_first_budget_line_else_from_the_assets(rec):
    """gpu's first budget line says OPEX (its second CAPEX), idle's budget CAPEX without an asset; lab has an
    asset and no budget (CAPEX), zeta neither (OPEX)."""
    got = {x.plan_line: x.category for x in rec.lines}
    assert (got["gpu"], got["idle"], got["onprem"], got["lab"], got["zeta"]) == ("OPEX", "CAPEX", "CAPEX", "CAPEX",
                                                                                 "OPEX")


@pytest.mark.parametrize("spent, flag", [("0.4", "over"), ("1", "over"), ("1.01", "over"), ("0", ""),
                                         ("-0.3", "under")])
def test_a_line_outside_the_plan_is_over_as_soon_as_it_spends(spent, flag):
    """No plan amount, so no variance %: with no materiality amount, any cost above zero is over budget, however
    small, and a credit under it."""
    got = {x.plan_line: (x.variance_pct, x.flag) for x in reconcile([group("tiny", spent), group(None, spent)]).lines}
    assert got["tiny"] == got["Unmapped"] == (None, flag)


@pytest.mark.parametrize("threshold", [D(0), D(5), D("10"), D("60.5"), D(200)])
def test_flags_follow_the_threshold(threshold):
    assert line_rows(reconcile(threshold_pct=threshold)) == expected_lines(GROUPS + NET, threshold)


@pytest.mark.parametrize("materiality", [D(5), D(10), D("10.01"), D(100)])
def test_a_variance_under_the_materiality_amount_is_never_flagged(materiality):
    """A line is flagged beyond both the percent (10 %) and the amount: each line's flag as the percent rule
    gives it, blank where its variance is smaller than the amount."""
    rec = reconcile(threshold_pct=D(10), materiality=materiality)
    assert line_rows(rec) == expected_lines(GROUPS + NET, D(10), materiality)
    assert rec.materiality == materiality


def test_storage_exactly_at_the_threshold_is_not_flagged():
    """Storage spends 55 of its 50: +10 %, flagged only past the threshold."""
    storage = [x for x in reconcile(threshold_pct=D(10)).lines if x.plan_line == "storage"][0]
    assert (storage.variance_pct, storage.flag) == (D("0.1"), "")
    assert [x for x in reconcile(threshold_pct=D("9.99")).lines if x.plan_line == "storage"][0].flag == "over"


def test_one_off_and_purchases_billed(rec):
    purchases = [g for g in GROUPS + NET if g.charge_category == "Purchase"]
    assert rec.one_off_cost.amount == sum(convert(g.effective_cost, g.billing_currency) for g in purchases) == 100
    assert rec.purchases_billed.amount == sum(convert(g.billed_cost, g.billing_currency) for g in purchases)


def test_spot_share_is_dynamic_or_spot_usage_over_all_usage(rec):
    usage = [g for g in GROUPS + NET if g.charge_category == "Usage"]
    spot = [g for g in usage if (g.pricing_category or "").lower() == "dynamic"
            or (g.purchase_option or "").lower() in ("spot", "preemptible")]
    expected = (sum(convert(g.effective_cost, g.billing_currency) for g in spot)
                / sum(convert(g.effective_cost, g.billing_currency) for g in usage))
    assert abs(rec.spot_share - expected) < D("1e-25")
    assert len(spot) == 5  # Dynamic, dynamic (and spot), PREEMPTIBLE, Preemptible, storage's Dynamic


def test_no_usage_has_no_spot_share():
    assert reconcile([group("gpu", "10", charge_category="Purchase", pricing_category="Dynamic")]).spot_share is None


def expected_gpu_hours(groups: list[ChargeGroup], by_line: bool) -> list[GpuHours]:
    """Usage only: x_GpuHours where the bill has them, else hours (an hour unit) x GPUs from the catalog."""
    hours: dict[tuple[str, str, str], Decimal] = defaultdict(Decimal)
    for g in groups:
        line = (g.plan_line or "Unmapped") if by_line else ""
        if g.charge_category != "Usage":
            continue
        if g.gpu_hours is not None:
            hours[(line, g.gpu_model or "unknown", "bill")] += g.gpu_hours
        elif g.instance_type and (g.consumed_unit or "").lower() in ("hours", "hour", "hrs", "h"):
            found = catalog(g.provider_name or "", g.instance_type)
            if found:
                hours[(line, found[0], "catalog")] += g.consumed_quantity * found[1]
    return [GpuHours(model, value, source, line or None) for (line, model, source), value in sorted(hours.items())]


def test_gpu_hours_per_model_and_per_plan_line(rec):
    assert list(rec.gpu_hours) == expected_gpu_hours(GROUPS, by_line=False)
    assert list(rec.gpu_hours_by_line) == expected_gpu_hours(GROUPS, by_line=True)
    assert [(g.gpu_model, g.source) for g in rec.gpu_hours] == [("h100-sxm", "bill"), ("h100-sxm", "catalog"),
                                                                ("l4", "catalog")]


def test_no_unmapped_line_when_every_charge_is_mapped():
    got = reconcile([group("gpu", "10"), group("zeta", "2")])
    assert [x.plan_line for x in got.lines] == ["gpu", "storage", "onprem", "idle", "net", "edge", "lab", "zeta"]
    assert got.unmapped_effective_cost.amount == 0 and got.unmapped == ()


def test_gpu_hours_of_a_model_the_bill_does_not_name():
    got = reconcile([group("gpu", "1", gpu_hours=D(5)), group(None, "1", gpu_hours=D("2.5"), gpu_model="l4")])
    assert [(g.gpu_model, g.hours, g.source, g.plan_line) for g in got.gpu_hours_by_line] == [
        ("l4", D("2.5"), "bill", "Unmapped"), ("unknown", D(5), "bill", "gpu")]  # by plan line, as text


def test_a_charge_without_a_provider_is_looked_up_under_no_provider_name():
    """The instance_gpus callable gets the bill's ProviderName, empty text when the bill has none."""
    asked: list[tuple[str, str]] = []

    def gpus(provider: str, instance_type: str) -> tuple[str, int] | None:
        asked.append((provider, instance_type))
        return ("l4", 1) if (provider, instance_type) == ("", "g6.xlarge") else None

    got = reconcile([group("gpu", "3", provider_name=None, instance_type="g6.xlarge", consumed_quantity=D(3)),
                     group("gpu", "4", instance_type="g6.xlarge", consumed_quantity=D(4))], instance_gpus=gpus)
    assert [(g.gpu_model, g.hours, g.source) for g in got.gpu_hours] == [("l4", D(3), "catalog")]
    assert sorted(set(asked)) == [("", "g6.xlarge"), ("AWS", "g6.xlarge")]


def test_rows_and_data_through(rec):
    assert rec.bill_rows == sum(g.row_count for g in GROUPS + NET)
    assert rec.data_through == datetime(2026, 6, 1)
    assert reconcile([group("gpu", "1", last_charge_end=None)]).data_through is None


def test_commitments_from_the_converted_groups():
    """The commitment summary gets every group in USD, the month and the commitments kept earlier."""
    earlier = {"ri-0": EarlierCommitment("ri-0", "AWS", "Reserved Instance", "All Upfront", date(2025, 11, 1), 12,
                                         D(1200), D(600), "2025-11", D(100))}
    got = reconcile(earlier_commitments=earlier).commitments
    expected = commitment_summary(GROUPS + NET, lambda amount, code: Money(convert(amount, code), "USD"), "USD",
                                  MONTH, earlier)
    assert got == expected
    assert {c.commitment_id for c in got.lines} == {"ri-0", "ri-1"}


def test_unmapped_charges_of_bare_groups_by_provider_service_and_instance(rec):
    sums: dict[tuple[str, ...], list[Decimal]] = defaultdict(lambda: [D(0), D(0)])
    for g in GROUPS:
        if g.plan_line is None:
            key = (g.provider_name or "", "", g.service_name or "", g.instance_type or "", "", "")
            sums[key][0] += convert(g.effective_cost, g.billing_currency)
            sums[key][1] += convert(g.billed_cost, g.billing_currency)
    expected = [UnmappedCharge(*k, usd(v[0]), usd(v[1])) for k, v in sorted(sums.items(), key=lambda kv: (-kv[1][0],
                                                                                                           kv[0]))]
    assert list(rec.unmapped) == expected and len(expected) == 4


def test_unmapped_charges_of_a_summary_with_the_rest():
    """Listed keys summed over their currencies, largest first (ties by key), then one row for the rest."""
    key_a = ("AWS", "prod", "AmazonCloudWatch", "", "us-east-1", "")
    key_b = ("Google Cloud", "acme", "Cloud Storage", "", "us-central1", '{"team":"data"}')
    key_c = ("AWS", "dev", "AmazonCloudWatch", "", "us-east-1", "")
    listed = (UnmappedSums(key_a, "USD", D("10"), D("11")), UnmappedSums(key_b, "EUR", D("5"), D("6")),
              UnmappedSums(key_b, "USD", D("4.6"), D("4")), UnmappedSums(key_c, "USD", D("10"), D("12")))
    rest = (UnmappedSums(("",) * 6, "USD", D("3"), D("4")), UnmappedSums(("",) * 6, "eur", D("2"), D("2")))
    summary = Summary((group(None, "35.0137", "35.5"),), listed, rest, 1234)
    got = reconcile_groups(PLAN, summary, MONTH, rates=RATES).unmapped
    b_effective, b_billed = convert(D(5), "EUR") + D("4.6"), convert(D(6), "EUR") + D(4)
    assert [(c.provider_name, c.sub_account, c.service_name, c.instance_type, c.region_id, c.tags,
             c.effective_cost.amount, c.billed_cost.amount) for c in got] == [
        (*key_b, b_effective, b_billed), (*key_c, D(10), D(12)), (*key_a, D(10), D(11)),
        ("1,234 more unmapped charge groups (all in --unmapped-csv)", "", "", "", "", "",
         D(3) + convert(D(2), "EUR"), D(4) + convert(D(2), "EUR"))]
    assert b_effective > 10 > D(5) + D("4.6")  # first only once its EUR part is converted and both are summed
    assert key_c < key_a and D(12) > D(11)  # the tie is broken by the key ("dev" before "prod"), not by billed cost


def test_no_rest_row_without_a_rest():
    summary = Summary((group(None, "1"),), (UnmappedSums(("AWS", "", "S", "", "", ""), "USD", D(1), D(1)),))
    assert [c.service_name for c in reconcile_groups(PLAN, summary, MONTH).unmapped] == ["S"]


def test_forecast_of_the_year_with_the_history():
    """This month's actual (cloud cost + depreciation) and one-off cost join the history's earlier months of
    the year; the plan of every month of the year gives the planned months (2026-04, 05, 06)."""
    past = {"2026-03": D(4000), "2026-04": D(5000), MONTH: D(1)}
    past_one_off = {"2026-04": D(700), MONTH: D(99)}
    rec = reconcile(past_actuals=past, past_one_off=past_one_off)
    actual = usd(rec.effective_cost.amount + 1700)
    plan_by_month = {"2026-05": usd(4050), "2026-06": usd(2500), "2026-04": usd(2400)}
    expected = year_forecast(MONTH, {"2026-03": usd(4000), "2026-04": usd(5000), MONTH: actual},
                             {"2026-04": usd(700), MONTH: usd(100)}, plan_by_month, "USD")
    assert rec.forecast == expected
    assert rec.forecast.run_rate.amount == MONEY_CONTEXT.divide(4000 + 4300 + actual.amount - 100, 3)
    assert rec.forecast.year_plan.amount == 4050 + 2500 + 2400


def test_forecast_without_history():
    rec = reconcile()
    assert rec.forecast.months_known == 1
    assert rec.forecast.run_rate.amount == rec.effective_cost.amount + 1700 - 100


def test_a_currency_without_a_rate_names_it_and_the_source():
    with pytest.raises(CurrencyMismatchError, match="bills are in GBP but the plan is in USD") as err:
        reconcile([group("gpu", "1"), group("gpu", "2", billing_currency="GBP")], source="may.csv")
    assert (err.value.where.file, err.value.where.column) == ("may.csv", "BillingCurrency")
    assert "--rate GBP=1.08" in str(err.value)
    with pytest.raises(CurrencyMismatchError, match="bills are in no currency") as err:
        reconcile([group("gpu", "2", billing_currency=None)], rates=None)
    assert "--rate EUR=1.08" in str(err.value) and err.value.where.file == "bills"


def test_the_plan_currency_needs_no_rate_in_any_case():
    """A group billed in the plan currency is taken as it is, its code in any case (codes compare upper case)."""
    got = reconcile([group("gpu", "2.5"), group("gpu", "1", billing_currency="usd")], rates=None)
    assert got.effective_cost.amount == D("3.5")
