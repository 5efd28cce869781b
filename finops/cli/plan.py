"""``finops plan next``: the next month's plan from the month production served (the loop's last step).

Reads the plan (never modified), the month's serving metrics (saved ``query_range`` answers with
``--metrics``, or a live server with ``--prometheus``), the serving lines (``--serving`` CSV, else the
plan's ``Serving`` sheet), optionally the month's FOCUS bills (line costs, commitments already bought),
and the throughput corrections kept in ``--history``; writes the next plan and the updated
corrections. Exit 2 on bad input, nothing written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ..errors import InputError
from ..files import make_folder
from ..money import Money
from ..outputs import check_replaceable, check_suffix
from ..workbooks import workbooks
from ._console import console, err_console
from ._options import SERVING_LINES

if TYPE_CHECKING:
    from ..serving import NextPlan

__all__ = ["is_metrics", "observed_month", "register", "served_by"]

_DEFAULT_STEP_S = 300
#: Bounds of --growth and --horizon-months: demand a hundred times the observed month's, commitments judged
#: over ten years (a 3-year term three times over); past them the figures are a typo, not a plan.
_MOST_GROWTH = 100.0
_LONGEST_HORIZON_MONTHS = 120


def _serving_lines(serving: Path | None, plan: Path):  # type: ignore[no-untyped-def]
    from ..serving import read_serving_lines

    if serving is not None:
        return read_serving_lines(serving)
    lines = workbooks().read_serving_sheet(plan)
    if not lines:
        raise InputError("no serving lines: the plan has no Serving sheet and no --serving was given",
                         hint="pass --serving lines.csv (columns in docs/loop.md), e.g. "
                              "finops/data/metrics/serving-lines.csv for the demo plan")
    return lines


def _check_sources(metrics: Sequence[Path] | None, prometheus: str | None) -> None:
    if bool(metrics) == bool(prometheus):
        raise InputError("give the month's serving metrics with --metrics FILE... or --prometheus URL (one of them)",
                         hint="--metrics takes saved /api/v1/query_range answers (.json, .json.gz)")


#: The coarsest --step: a sample an hour still shows a day's shape; a month has 744 hours at most.
_COARSEST_STEP_S = 3600


def _step(step: float | None, prometheus: str | None) -> float:
    """``--step`` in seconds: only with ``--prometheus`` (saved answers keep their own resolution), a number of
    seconds above 0 and at most :data:`_COARSEST_STEP_S` (0 or a negative step would never advance through the
    month's windows); the default when not given."""
    if step is None:
        return _DEFAULT_STEP_S
    if prometheus is None:
        raise InputError("--step sets the resolution of --prometheus queries; saved answers (--metrics) keep their own",
                         hint="drop --step, or query a live Prometheus with --prometheus URL")
    if not 0 < step <= _COARSEST_STEP_S:  # NaN fails too
        raise InputError(f"--step must be a number of seconds above 0 and at most {_COARSEST_STEP_S}, got {step}",
                         hint=f"for example --step {_DEFAULT_STEP_S} (a sample every 5 minutes)")
    return step


def observed_month(month: str, serving: Path | None, plan: Path, metrics: Sequence[Path] | None,
                   prometheus: str | None, step_s: float, costs: dict[str, Money] | None = None,
                   load_tests: Sequence[str] = (), gpu_hours: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    """The realized month of every serving line, from saved answers or a live server, with its load tests
    (``PLANLINE=FILE``) and the bill's GPU-hours per plan line."""
    from dataclasses import replace

    from connectors.prometheus import pull_month, read_saved

    from ..serving import parse_load_test_option, read_load_tests, realize

    _check_sources(metrics, prometheus)
    tests = [parse_load_test_option(v) for v in load_tests]
    lines = _serving_lines(serving, plan)
    read = read_load_tests(tests, lines)
    series = read_saved(metrics) if metrics else pull_month(prometheus, month, step_s=step_s)  # type: ignore[arg-type]
    return replace(realize(lines, series, month, costs=costs, billed_gpu_hours=gpu_hours), load_tests=read)


def served_by(month: str, serving: Path | None, plan: Path, metrics: Sequence[Path] | None, prometheus: str | None,
              step_s: float, load_tests: Sequence[str] = ()):  # type: ignore[no-untyped-def]
    """The review's hook: a reconciliation -> the realized month, with its line costs and billed GPU-hours."""
    from ..serving import billed_gpu_hours

    def served(rec):  # type: ignore[no-untyped-def]
        return observed_month(month, serving, plan, metrics, prometheus, step_s,
                              {line.plan_line: line.actual for line in rec.lines}, load_tests, billed_gpu_hours(rec))
    return served


def _warn_ignored(observed) -> None:  # type: ignore[no-untyped-def]
    if observed.ignored_metrics:
        err_console.print(f"ignored series of metrics no name table knows: {', '.join(observed.ignored_metrics)}",
                          highlight=False)
    if observed.unassigned_series:
        err_console.print(f"{observed.unassigned_series} series matched no serving line's label rule", highlight=False)


def _refuse_unbudgeted(observed, plan_values, month: str) -> None:  # type: ignore[no-untyped-def]
    """A serving line whose plan line has no Budget row in ``month`` would get a fleet and a cost that no Budget
    row of the next plan carries: refused at its Serving row."""
    budgeted = {b.plan_line for b in plan_values.budget_for(month)}
    for realized in observed.lines:
        line = realized.line
        if line.plan_line not in budgeted:
            where = None if line.where is None else replace(line.where, column="PlanLine")
            raise InputError(f"serving line {line.plan_line!r} has no Budget row in {month}, so the next plan would "
                             "carry its fleet without its cost", where=where,
                             hint=f"add a Budget row for {line.plan_line} in {month}, or name a plan line the Budget "
                                  f"has: {', '.join(sorted(budgeted)) or 'none in that month'}")


def is_metrics(path: Path) -> bool:
    """Whether a bare file argument is a saved query answer (``.json``, ``.json.gz``) rather than a bill."""
    return path.name.lower().endswith((".json", ".json.gz"))


def register(app: typer.Typer) -> None:
    plan_app = typer.Typer(name="plan", no_args_is_help=True, help="The planning loop: the next month's plan.")
    app.add_typer(plan_app)

    plan_app.command("next")(plan_next)


def plan_next(
    plan: Path = typer.Option(..., "--plan", help="the planning workbook (.xlsx); never modified"),
    history: Path = typer.Option(..., "--history", help="folder of the loop's history (throughput corrections)"),
    month: str = typer.Option(..., "--month", metavar="YYYY-MM", help="the month production served"),
    serving: Annotated[Path | None, SERVING_LINES] = None,
    metrics: list[Path] | None = typer.Option(None, "--metrics", metavar="FILE...",
                                                 help="saved /api/v1/query_range answers; repeat"),
    prometheus: str | None = typer.Option(None, "--prometheus", metavar="URL",
                                             help="a live Prometheus (token from FINOPS_PROMETHEUS_TOKEN)"),
    bills: list[Path] | None = typer.Option(None, "--bills", metavar="FILE...",
                                               help="the month's FOCUS bills: line costs and commitments bought"),
    load_test: list[str] | None = typer.Option(None, "--load-test", metavar="PLANLINE=FILE",
                                                help="a load-test result of a serving line's configuration "
                                                     "(as `finops calibrate` reads); repeat"),
    growth: float = typer.Option(1.0, "--growth", help="demand of the next month over the observed one"),
    horizon_months: int = typer.Option(12, "--horizon-months", help="months over which commitments are judged"),
    step: float | None = typer.Option(None, "--step", help=f"--prometheus: query resolution in seconds "
                                                             f"[default: {_DEFAULT_STEP_S}]"),
    out: Path = typer.Option(Path("plan-next.xlsx"), "--out", help="the next plan (.xlsx)"),
    quiet: bool = typer.Option(False, "--quiet", help="print nothing but errors"),
    more: list[Path] | None = typer.Argument(None, hidden=True, metavar="FILE",
                                                help="further files, as in --metrics a.json b.json: .json and "
                                                     ".json.gz are metrics, the rest bills"),
) -> None:
    """Write next month's plan: observed demand x growth, fleets re-sized, commitments re-optimized."""
    from ..serving import plan_next_month, sunk_commitments
    from ..sizing import CORRECTIONS_FILE, CorrectionTable

    if not 0 < growth <= _MOST_GROWTH:  # NaN and infinity too
        raise InputError(f"--growth must be a number above 0 and at most {_MOST_GROWTH:g}, got {growth}",
                         hint="the next month's demand over the observed month's: 1.1 plans 10 % more")
    if not 1 <= horizon_months <= _LONGEST_HORIZON_MONTHS:
        raise InputError(f"--horizon-months must be a whole number from 1 to {_LONGEST_HORIZON_MONTHS}, "
                         f"got {horizon_months}", hint="12 judges commitments over a year; 36 covers a 3-year term")
    if history.exists() and not history.is_dir():
        raise InputError("--history must be a folder", hint="the corrections are kept in this folder")
    metrics = list(metrics or []) + [p for p in more or [] if is_metrics(p)]
    bills = list(bills or []) + [p for p in more or [] if not is_metrics(p)]
    _check_sources(metrics, prometheus)
    step = _step(step, prometheus)
    check_suffix(out, (".xlsx",), "the next plan is written as .xlsx")
    check_replaceable(out, "next plan")  # an earlier next plan is replaced; anyone's workbook there never
    plan_values = workbooks().read_plan(plan)
    costs, commitments, gpu_hours = {}, [], None
    if bills:
        from ..reconcile import reconcile_month
        from ..serving import billed_gpu_hours

        rec = reconcile_month(plan_values, list(bills), month)
        costs = {line.plan_line: line.actual for line in rec.lines}
        gpu_hours = billed_gpu_hours(rec)
        commitments = sunk_commitments(list(bills), plan_values.mapping)
    observed = observed_month(month, serving, plan, metrics, prometheus, step, costs, load_test or (), gpu_hours)
    _refuse_unbudgeted(observed, plan_values, month)
    _warn_ignored(observed)
    corrections_path = history / CORRECTIONS_FILE
    nxt = plan_next_month(observed, growth=growth, corrections=CorrectionTable.read(corrections_path),
                          commitments=commitments, horizon_months=horizon_months, costs=costs)
    written = workbooks().write_next_plan(plan, plan_values, nxt, month, out)
    make_folder(history)
    nxt.corrections.write(corrections_path)
    if not quiet:
        _print_next(nxt, month, growth)
        console.print(f"wrote {written} and {corrections_path}")


def _print_next(nxt: NextPlan, month: str, growth: float) -> None:
    """Each plan line's fleet now and next, the commitments sunk and to buy, its budget and correction."""
    table = Table("plan line", "GPUs now", "GPUs next", "sunk", "new commitments", "per month", "correction",
                  title=f"{nxt.month}: next plan from {month} (growth {growth:g})")
    for name, n in zip(nxt.names(), nxt.lines):
        table.add_row(name, str(n.realized.gpus), "" if n.gpus is None else str(n.gpus), str(n.sunk_units),
                      ", ".join(f"{u} x {k}" for k, u in sorted(n.committed_units.items())) or "-",
                      "carried over" if n.budget is None else str(n.budget.rounded()),
                      f"{n.factor:.3f} +-{n.band:.0%}")
    console.print(table)
