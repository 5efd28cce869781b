"""The Excel workbooks, as the command line reaches them: :class:`finops.workbooks.Workbooks` for ``.xlsx``.

Registered in ``pyproject.toml`` under the entry-point group ``llm_finops.workbooks`` as ``xlsx``; the
command line loads it through :func:`finops.workbooks.workbooks` and never imports this package. Each
member imports its module on first call, so reading a plan and writing a review (``finops reconcile``)
load neither the template's sheet writers nor XlsxWriter's chart code before they are needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from finops.price_book import PriceBook
    from finops.reconcile import MonthRecord, Plan, Reconciliation
    from finops.reconcile.demo_bills import FleetLine
    from finops.serving import NextPlan, ServingLine, ServingMonth

__all__ = ["SAMPLE_PLAN", "build_fleet_plan", "build_template", "check_in_place", "planned_fleets", "read_plan",
           "read_serving_sheet", "review_name", "served_tokens", "typed_in_review", "write_in_place",
           "write_next_plan", "write_review", "write_serving_month"]

#: The bundled planning workbook (``build_template``'s default output): the samples' plan.
SAMPLE_PLAN = Path(__file__).with_name("llm-finops-plan.xlsx")


def build_template(out: Path, *, prices: PriceBook | None = None) -> Path:
    from .builder import build_template as build

    return build(out, prices=prices)


def build_fleet_plan(out: Path, prices: PriceBook) -> Path:
    from .builder import build_template as build
    from .demo_fleet_plan import FLEET_PLAN, PLAN_LINES, PRICING_MODELS

    return build(out, prices=prices, plan_lines=PLAN_LINES, pricing_models=PRICING_MODELS, plan=FLEET_PLAN)


def planned_fleets(plan: Path) -> list[FleetLine]:
    from .demo_fleet_plan import planned_fleets as fleets

    return fleets(plan)


def write_serving_month(plan: Path, month: str, folder: Path) -> tuple[Path, list[Path]]:
    from .demo_serving import write_serving_month as write

    return write(plan, month, folder)


def served_tokens(plan: Path, month: str, folder: Path) -> Path:
    from .demo_fleet_plan import served_tokens as tokens

    return tokens(plan, month, folder)


def read_plan(plan: Path) -> Plan:
    from .plan_reader import read_plan as read

    return read(plan)


def read_serving_sheet(plan: Path) -> tuple[ServingLine, ...] | None:
    from .plan_next_writer import read_serving_sheet as read

    return read(plan)


def review_name(month: str) -> str:
    from .review_writer import review_name as name

    return name(month)


def typed_in_review(review: Path, comments: Mapping[str, str], actions: Mapping[str, tuple[str, str]]
                    ) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    from .review.comments import kept_actions, kept_comments

    return kept_comments(review, comments), kept_actions(review, actions)


def write_review(rec: Reconciliation, out_dir: Path, *, run_at: datetime, trend: Sequence[MonthRecord],
                 plan_name: str, bill_names: Sequence[str], serving: ServingMonth | None,
                 comments: Mapping[str, str], actions: Mapping[str, tuple[str, str]]) -> Path:
    from .review_writer import write_review as write

    return write(rec, out_dir, run_at=run_at, trend=trend, plan_name=plan_name, bill_names=bill_names,
                 serving=serving, comments=comments, actions=actions)


def check_in_place(plan: Path) -> None:
    from .plan_actuals import check_in_place as check

    check(plan)


def write_in_place(plan: Path, rec: Reconciliation, history: Sequence[MonthRecord], run_at: datetime) -> Path:
    from .plan_actuals import write_in_place as write

    return write(plan, rec, history, run_at)


def write_next_plan(plan_path: Path, plan: Plan, nxt: NextPlan, observed_month: str, out: Path) -> Path:
    from .plan_next_writer import write_next_plan as write

    return write(plan_path, plan, nxt, observed_month, out)
