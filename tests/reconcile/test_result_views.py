"""The views a Reconciliation gives of its figures (finops/reconcile/result.py): the cash-to-P&L
bridge, prepaid added, groups by provider and cost centre, lines over plan and the headline totals.
Each expected figure is worked by hand from the values put in."""
from decimal import Decimal

from finops.money import MONEY_CONTEXT, Money
from finops.reconcile.result import (CommitmentSummary, Forecast, GroupVariance, LineVariance,
                                     Reconciliation)


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def line(name, planned, actual, provider="", cost_centre="", category="OPEX") -> LineVariance:
    variance = usd(actual) - usd(planned)
    pct = None if planned == 0 else variance.amount / Decimal(planned)
    return LineVariance(name, category, usd(planned), usd(actual), usd(actual), variance, pct, "",
                        provider=provider, cost_centre=cost_centre)


COMMITMENTS = CommitmentSummary(purchases=usd(1200), used=usd(300), unused=usd(100), savings=usd(90),
                                utilization=Decimal("0.75"), coverage=Decimal("0.5"))
FORECAST = Forecast(0, usd(0), (), usd(0), 0, usd(0), usd(0), usd(0), usd(0))


def reconciliation(lines=(), **changes) -> Reconciliation:
    values = dict(month="2026-05", currency="USD", effective_cost=usd("5000.004"), billed_cost=usd("6450.555"),
                  planned=usd("4800.105"), opex=usd("5000.004"), capex=usd("250.5"), capex_cash=usd(3000),
                  unmapped_effective_cost=usd("12.345"), lines=tuple(lines), invoices=(), providers=(),
                  commitments=COMMITMENTS, spot_share=None, gpu_hours=(), assets=(), unmapped=(),
                  forecast=FORECAST, threshold_pct=Decimal(10), bill_rows=10, data_through=None,
                  one_off_cost=usd(40), purchases_billed=usd(1290))
    values.update(changes)
    return Reconciliation(**values)


def test_the_bridge_adds_up_from_cash_to_the_pnl_actual():
    r = reconciliation()
    steps = r.bridge()
    assert [(s.label, s.amount) for s in steps] == [
        ("Cash paid this month", usd("9450.555")),           # billed 6,450.555 + assets bought 3,000
        ("less commitment purchases", usd(-1200)),
        ("less other purchases with no P&L cost", usd(-50)),  # 1,290 billed - 1,200 commitments - 40 one-off
        ("plus commitment amortization", usd(400)),           # used 300 + unused 100
        ("less assets bought", usd(-3000)),
        ("plus depreciation", usd("250.5")),
        ("other differences", usd("-600.551")),  # 5,250.504 - (9,450.555 - 1,200 - 50 + 400 - 3,000 + 250.5)
    ]
    assert r.actual == usd("5250.504")                       # opex + capex
    assert Money.total([s.amount for s in steps], "USD") == r.actual
    assert [s.explanation for s in steps] == [
        "cloud BilledCost plus owned assets bought", "prepaid: enters the P&L over the term",
        "fees billed whose EffectiveCost the bill gives as 0", "this month's share of prepaid commitments",
        "capitalized: enters the P&L as depreciation", "this month's straight-line depreciation of owned assets",
        "credits and discounts billed apart from the usage"]


def test_the_bridge_without_purchase_figures_counts_them_zero():
    r = reconciliation(one_off_cost=None, purchases_billed=None)
    other = dict((s.label, s.amount) for s in r.bridge())["less other purchases with no P&L cost"]
    assert other == usd(1200)  # 0 billed - 1,200 commitments - 0 one-off, negated


def test_cash_and_variance():
    r = reconciliation()
    assert r.cash == usd("9450.555")
    assert r.variance == usd("450.399")  # 5,250.504 - 4,800.105
    assert COMMITMENTS.amortization == usd(400)


def test_the_headline_totals_are_rounded_half_up_to_the_cent():
    assert reconciliation().totals() == {
        "month": "2026-05", "actual_effective_cost": Decimal("5000.00"), "actual_billed_cost": Decimal("6450.56"),
        "planned": Decimal("4800.11"), "variance": Decimal("450.40"), "capex": Decimal("250.50"),
        "opex": Decimal("5000.00"), "unmapped_effective_cost": Decimal("12.35"), "currency": "USD"}


LINES = (line("b-gpu", 100, 150, provider="aws", cost_centre="cc-2"),
         line("z-gpu", 10, 10, provider="zeta", cost_centre="zz-9"),  # a named group after "not in plan"
         line("a-gpu", 200, 180, provider="gcp", cost_centre="cc-1"),
         line("c-gpu", 50, 70, provider="aws", cost_centre="cc-1"),
         line("extra", 0, 30),                    # unplanned: no budget row, so no provider
         line("Unmapped", 0, 12))


def test_plan_lines_grouped_by_provider_named_groups_first():
    groups = reconciliation(LINES).by_provider()
    assert [(g.name, g.planned, g.actual) for g in groups] == [
        ("aws", usd(150), usd(220)), ("gcp", usd(200), usd(180)), ("zeta", usd(10), usd(10)),
        ("not in plan", usd(0), usd(30)), ("Unmapped", usd(0), usd(12))]
    assert [g.variance for g in groups] == [usd(70), usd(-20), usd(0), usd(30), usd(12)]
    assert groups[0].variance_pct == MONEY_CONTEXT.divide(Decimal(70), Decimal(150))
    assert groups[3].variance_pct is None


def test_plan_lines_grouped_by_cost_centre():
    groups = reconciliation(LINES).by_cost_centre()
    assert [(g.name, g.planned, g.actual) for g in groups] == [
        ("cc-1", usd(250), usd(250)), ("cc-2", usd(100), usd(150)), ("zz-9", usd(10), usd(10)),
        ("not in plan", usd(0), usd(30)), ("Unmapped", usd(0), usd(12))]
    assert groups[0].variance_pct == Decimal(0)


def test_lines_over_plan_by_more_than_a_percentage():
    # exactly 10 % over is not more than 10; a line with neither plan nor spend is never over
    r = reconciliation(LINES + (line("edge", 100, 110), line("idle", 0, 0)))
    assert [x.plan_line for x in r.lines_over(Decimal(10))] == ["b-gpu", "c-gpu", "extra", "Unmapped"]
    assert [x.plan_line for x in r.lines_over(Decimal(45))] == ["b-gpu", "extra", "Unmapped"]  # b +50 %, c +40 %
    assert [x.plan_line for x in r.lines_over(Decimal("9.99"))] == ["b-gpu", "c-gpu", "extra", "Unmapped", "edge"]
    assert [x.plan_line for x in r.lines_over(Decimal(-5))] == ["b-gpu", "c-gpu", "extra", "Unmapped", "edge"]


def test_a_group_variance_share():
    g = GroupVariance("aws", usd(400), usd(300))
    assert (g.variance, g.variance_pct) == (usd(-100), Decimal("-0.25"))
