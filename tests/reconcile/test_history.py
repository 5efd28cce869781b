"""The history database: a re-run replaces its month only; the forecast and the trend read it."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import openpyxl

from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile.history import HISTORY_FILE, History

from .conftest import write_bill

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)


def test_rerun_replaces_that_month_only_and_feeds_forecast_and_trend(tmp_path, simple_plan):
    out = tmp_path / "out"
    april = write_bill(tmp_path / "april.csv", [{"ChargePeriodStart": "2026-04-10T00:00:00Z", "EffectiveCost": "300",
                                                 "x_InstanceType": "p5.48xlarge"}])
    may_v1 = write_bill(tmp_path / "may1.csv", [{"EffectiveCost": "100", "x_InstanceType": "p5.48xlarge"}])
    may_v2 = write_bill(tmp_path / "may2.csv", [{"EffectiveCost": "150", "x_InstanceType": "p5.48xlarge"}])
    reconcile_to_workbook(simple_plan, [april], "2026-04", out, run_at=RUN_AT)
    reconcile_to_workbook(simple_plan, [may_v1], "2026-05", out, run_at=RUN_AT)
    rec, path = reconcile_to_workbook(simple_plan, [may_v2], "2026-05", out, run_at=RUN_AT)

    months = History(out / HISTORY_FILE).months()
    assert [(m.month, m.opex, m.capex) for m in months] == [("2026-04", Decimal(300), Decimal(1200)),
                                                            ("2026-05", Decimal(150), Decimal(1200))]
    assert months[1].lines["gpu"] == Decimal(150)
    # forecast: April 1,500 (no plan) and May 1,350 known; run rate 1,425; the plan holds May and June
    f = rec.forecast
    assert (f.months_known, f.run_rate.amount, f.year_end.amount, f.year_plan.amount) == (
        2, Decimal(1425), Decimal(1350 + 1425), Decimal(1150 + 100))
    assert (f.unplanned_actual.amount, f.unplanned_forecast.amount) == (Decimal(1500), Decimal(1425 * 6))
    trend = openpyxl.load_workbook(path, data_only=True)["P&L and cash"]
    rows = [[c.value for c in row] for row in trend.iter_rows(min_col=1, max_col=4) if row[0].value in
            ("2026-04", "2026-05")]
    # this run's May, not the first one; cash is each month's BilledCost (10 a row) and no asset bought
    assert rows == [["2026-04", 0, 1500, 10], ["2026-05", 1150, 1350, 10]]
