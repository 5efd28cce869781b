"""The workbooks the command line reads and writes, named as an interface; a package registers how.

``finops reconcile``, ``finops plan next``, ``finops template build`` and ``finops demo`` read the planning
workbook and write the budget review and the next plan, yet the command line imports no workbook code: a
face imports no other face (``tests/core/test_layers.py``). It asks :func:`workbooks` for the format
registered under the entry-point group :data:`ENTRY_POINT_GROUP`; the Excel one is the module
``templates.workbooks``, declared in ``pyproject.toml``::

    [project.entry-points."llm_finops.workbooks"]
    xlsx = "templates.workbooks"

A registered format is any object (a module will do) with the members of :class:`Workbooks`. Its readers
hand back the core's normalized tables (:class:`~finops.reconcile.Plan`,
:class:`~finops.serving.ServingLine`, :class:`~finops.reconcile.demo_bills.FleetLine`) and its writers take
the core's results (:class:`~finops.reconcile.Reconciliation`, :class:`~finops.serving.NextPlan`), so
nothing of a sheet's layout reaches the core or the command line.

Why the plan's readers live with the workbook's writers rather than in ``connectors/`` or here: data flows
connectors -> normalized tables -> core -> faces. Reading a plan is the connector's step for the plan (a
file -> normalized tables), but a connector knows one cloud and nothing about Excel, and the core imports no
Excel library. What the reader must know is the layout the builder writes (table names, headers, the
Serving sheet, the review's comment columns): one package owns that layout both ways, so a column renamed
in the template is renamed for its reader in the same place. The core names the operations; the workbook
package, reached only through them, does both.

The entry point is part of the installed package's metadata: a checkout is used after ``pip install -e .``
(or ``pip install .``); without it :func:`workbooks` fails with that line.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .errors import FinopsError

if TYPE_CHECKING:
    from .price_book import PriceBook
    from .reconcile import MonthRecord, Plan, Reconciliation
    from .reconcile.demo_bills import FleetLine
    from .serving import NextPlan, ServingLine, ServingMonth

__all__ = ["DEFAULT_FORMAT", "ENTRY_POINT_GROUP", "Workbooks", "workbooks"]

#: The entry-point group a workbook format registers under.
ENTRY_POINT_GROUP = "llm_finops.workbooks"
#: The format the command line uses: the Excel workbooks (``templates.workbooks``).
DEFAULT_FORMAT = "xlsx"


class Workbooks(Protocol):
    """What the command line reads from and writes to workbooks. Every reader refuses a damaged or
    malformed file with an :class:`~finops.errors.InputError` naming the file, sheet and cell; every
    writer writes atomically (:mod:`finops.files`) and never over the plan it read."""

    #: The bundled planning workbook: the plan of the FOCUS samples and of the sample serving metrics.
    SAMPLE_PLAN: Path

    def build_template(self, out: Path, *, prices: PriceBook | None = None) -> Path:
        """Write the planning workbook (the samples' plan) to ``out``; ``prices`` defaults to the bundled book."""
        ...

    def build_fleet_plan(self, out: Path, prices: PriceBook) -> Path:
        """Write the demo's plan: the seed workloads' fleets on plan lines, their Budget lines by formula."""
        ...

    def planned_fleets(self, plan: Path) -> list[FleetLine]:
        """The fleets a plan budgets: each sized, priced workload on a plan line."""
        ...

    def write_serving_month(self, plan: Path, month: str, folder: Path) -> tuple[Path, list[Path]]:
        """A synthetic month of serving for the plan's fleet lines, in ``folder``: its serving lines (CSV) and one
        saved ``query_range`` answer per line."""
        ...

    def served_tokens(self, plan: Path, month: str, folder: Path) -> Path:
        """A usage file (``Month,PlanLine,ActualMTokens``) in ``folder``: each line's planned load over ``month``."""
        ...

    def read_plan(self, plan: Path) -> Plan:
        """The plan's Budget, Assets, Mapping and Usage tables (the plan is never modified)."""
        ...

    def read_serving_sheet(self, plan: Path) -> tuple[ServingLine, ...] | None:
        """The plan's serving lines, or ``None`` when it has no Serving sheet."""
        ...

    def review_name(self, month: str) -> str:
        """The file name of the review of ``month``, in its output folder."""
        ...

    def typed_in_review(self, review: Path, comments: Mapping[str, str], actions: Mapping[str, tuple[str, str]]
                        ) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
        """What a run of the month writes and keeps: plan line -> comment, and plan line -> (owner, action); the
        history's (``comments``, ``actions``), overridden by what people typed into the review it replaces."""
        ...

    def write_review(self, rec: Reconciliation, out_dir: Path, *, run_at: datetime, trend: Sequence[MonthRecord],
                     plan_name: str, bill_names: Sequence[str], serving: ServingMonth | None,
                     comments: Mapping[str, str], actions: Mapping[str, tuple[str, str]]) -> Path:
        """Write the budget review of ``rec`` into ``out_dir``; ``serving`` (a ServingMonth) adds its sheet."""
        ...

    def check_in_place(self, plan: Path) -> None:
        """Refuse, before anything is written, a plan that :meth:`write_in_place` could not update."""
        ...

    def write_in_place(self, plan: Path, rec: Reconciliation, history: Sequence[MonthRecord],
                       run_at: datetime) -> Path:
        """Write the Actuals and Variance sheets into the plan itself; return the backup kept of it."""
        ...

    def write_next_plan(self, plan_path: Path, plan: Plan, nxt: NextPlan, observed_month: str, out: Path) -> Path:
        """Write the next month's plan: the plan at ``plan_path`` with its Budget and Serving from ``nxt``."""
        ...


@functools.cache
def workbooks(name: str = DEFAULT_FORMAT) -> Workbooks:
    """The workbook format registered as ``name`` under :data:`ENTRY_POINT_GROUP`, loaded on first use.

    >>> workbooks().review_name("2026-05")
    'budget-review-2026-05.xlsx'
    """
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name not in found:
        registered = ", ".join(sorted(found)) or "none"
        raise FinopsError(f"no workbook format {name!r} is installed (registered: {registered})",
                          hint="install the package, which registers it: pip install -e . (or pip install .)")
    loaded: Workbooks = found[name].load()
    return loaded
