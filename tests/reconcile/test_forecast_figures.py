"""The year-end forecast's figures, worked by hand from the formulas in finops/reconcile/forecast.py:
run rate = mean of (actual - one-off) over the last three reconciled months of the year; planned year
end = actuals of planned months + run rate x planned months without an actual; unplanned months apart.
"""
from decimal import Decimal

from finops.money import Money
from finops.reconcile.forecast import year_forecast


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def test_a_year_with_gaps_other_years_and_one_off_costs():
    actuals = {"2025-12": usd(999), "2026-02": usd(100), "2026-03": usd(130), "2026-04": usd(160),
               "2026-06": usd(220), "2026-07": usd(5000)}  # 2025-12: last year; 2026-07: after the month
    one_off = {"2026-02": usd(50), "2026-04": usd(30), "2026-06": usd(20)}  # 2026-02's is not among the last 3
    planned = ["2026-01", "2026-02", "2026-04", "2026-05", "2026-06", "2026-07", "2026-08", "2026-12"]
    plan = {m: usd(150) for m in planned} | {"2027-01": usd(7777), "2025-12": usd(8888)}
    f = year_forecast("2026-06", actuals, one_off, plan, "USD")
    # the last three reconciled months of 2026 up to June: March, April, June (May has no actual)
    run_rate = (Decimal(130) + (160 - 30) + (220 - 20)) / 3  # 460 / 3
    assert f.months_known == 4  # Feb, Mar, Apr, Jun
    assert f.run_rate.amount.quantize(Decimal("1e-20")) == run_rate.quantize(Decimal("1e-20"))
    assert f.planned_months == tuple(planned)
    assert f.actual_to_date == usd(100 + 160 + 220)  # planned months with an actual; one-offs stay in
    assert f.months_to_forecast == 5  # Jan, May, Jul, Aug, Dec
    assert str(f.year_end) == "1,246.67 USD"  # 480 + 5 x 153.333...
    assert f.year_plan == usd(8 * 150)  # other years' plan rows left out
    assert f.unplanned_actual == usd(130)  # March
    assert str(f.unplanned_forecast) == "460.00 USD"  # Sep, Oct, Nov: 3 x 460 / 3


def test_the_run_rate_averages_only_the_latest_three_months():
    actuals = {f"2026-0{m}": usd(m * 100) for m in range(1, 6)}  # 100 .. 500
    f = year_forecast("2026-05", actuals, {}, {"2026-12": usd(1)}, "USD")
    assert f.run_rate == usd(400)  # (300 + 400 + 500) / 3
    assert f.months_known == 5
    assert f.year_end == usd(400)  # December only: nothing known, one month at the run rate
    assert f.months_to_forecast == 1


def test_one_month_known_is_the_run_rate_itself():
    f = year_forecast("2026-01", {"2026-01": usd(90)}, {"2026-01": usd(10)}, {"2026-01": usd(100)}, "USD")
    assert f.run_rate == usd(80)
    assert f.year_end == usd(90)  # January is known; no planned month left to forecast
    assert f.months_to_forecast == 0
    assert f.unplanned_forecast == usd(80 * 11)  # February .. December


def test_the_current_month_unplanned_is_an_actual_not_a_forecast():
    plan = {m: usd(10) for m in ("2026-01", "2026-02", "2026-03")}
    f = year_forecast("2026-05", {"2026-04": usd(100), "2026-05": usd(200)}, {}, plan, "USD")
    assert f.run_rate == usd(150)
    assert f.unplanned_actual == usd(300)  # April and May
    assert f.unplanned_forecast == usd(150 * 7)  # June .. December; May is already an actual
    assert f.actual_to_date == usd(0)
    assert f.year_end == usd(150 * 3)  # January .. March have no actual
    assert f.year_plan == usd(30)


def test_no_month_reconciled_yet():
    f = year_forecast("2026-03", {}, {}, {"2026-03": usd(10), "2026-04": usd(10)}, "USD")
    assert (f.months_known, f.run_rate, f.year_end, f.months_to_forecast) == (0, usd(0), usd(0), 2)
