"""Year-end forecast on the plan's own months: forecast and plan always cover the same months.

The months of the year split in two. **Planned months** (the plan has budget rows for them) give
the figure set against the plan; **unplanned months** are shown apart, never added to it:

* run rate = mean of (P&L actual - one-off cost) over the last (up to) three reconciled months of
  the year; one-off cost is the EffectiveCost of ``ChargeCategory = Purchase`` rows (a licence, a
  support fee): it does not recur, so it is left out of what is projected;
* planned year end = actuals of the planned months reconciled so far + run rate x planned months
  without an actual yet; it stands against ``year_plan``, the plan of the same months;
* outside the plan: actuals of unplanned months reconciled so far, and run rate x unplanned months
  after this one.

>>> f = year_forecast("2026-05", {"2026-05": Money.of(120, "USD")}, {"2026-05": Money.of(20, "USD")},
...                   {"2026-05": Money.of(100, "USD"), "2026-06": Money.of(100, "USD")}, "USD")
>>> str(f.run_rate), str(f.year_end), str(f.year_plan), str(f.unplanned_forecast)
('100.00 USD', '220.00 USD', '200.00 USD', '600.00 USD')
"""

from __future__ import annotations

from collections.abc import Mapping

from ..depreciation import month_index, month_label
from ..money import Money
from .result import Forecast

__all__ = ["RUN_RATE_MONTHS", "year_forecast"]

#: How many of the latest reconciled months the run rate averages.
RUN_RATE_MONTHS = 3


def year_forecast(month: str, actuals: Mapping[str, Money], one_off: Mapping[str, Money],
                  plan_by_month: Mapping[str, Money], currency: str) -> Forecast:
    """The forecast of ``month``'s year from reconciled ``actuals`` (P&L, by month, ``month`` included),
    their ``one_off`` cost and the plan's amount by month (see the module docstring for the formulas)."""
    year = month[:4]
    known = {m: a for m, a in actuals.items() if m[:4] == year and m <= month}
    recent = sorted(known)[-RUN_RATE_MONTHS:]
    zero = Money.zero(currency)
    run_rate = Money.total([known[m] - one_off.get(m, zero) for m in recent], currency) / max(len(recent), 1)
    first = month_index(f"{year}-01")
    months = [month_label(first + i) for i in range(12)]
    planned = [m for m in months if m in plan_by_month]
    unplanned = [m for m in months if m not in plan_by_month]
    to_date = Money.total([known[m] for m in planned if m in known], currency)
    rest = [m for m in planned if m not in known]
    return Forecast(
        months_known=len(known), run_rate=run_rate, planned_months=tuple(planned),
        actual_to_date=to_date, months_to_forecast=len(rest), year_end=to_date + run_rate * len(rest),
        year_plan=Money.total([plan_by_month[m] for m in planned], currency),
        unplanned_actual=Money.total([known[m] for m in unplanned if m in known], currency),
        unplanned_forecast=run_rate * len([m for m in unplanned if m > month]))
