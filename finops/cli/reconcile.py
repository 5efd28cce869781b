"""``finops reconcile``: the monthly plan-vs-actual batch job, written to a budget-review workbook.

Reads the plan workbook, reads FOCUS bills (files, or pulled by a connector with ``--from``), runs
the reconciliation, writes ``budget-review-YYYY-MM.xlsx`` and keeps the month in the history
database beside it. Exit codes: 0 done, 1 a plan line over ``--fail-on-variance``, 2 bad input
(nothing written).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import InputError
from ..money import to_decimal
from ..reconcile import Reconciliation, reconcile_month
from ..reconcile.history import HISTORY_FILE, History
from ._console import console, err_console, print_json

__all__ = ["parse_rates", "reconcile_to_workbook", "register"]


def parse_rates(values: Sequence[str] | None) -> dict[str, Decimal]:
    """``["EUR=1.08"]`` -> ``{"EUR": Decimal("1.08")}`` (1 unit of the code = rate units of the plan currency).

    >>> parse_rates(["eur=1.08", "GBP = 1.27"])
    {'EUR': Decimal('1.08'), 'GBP': Decimal('1.27')}
    """
    rates: dict[str, Decimal] = {}
    for value in values or []:
        code, sep, rate = value.partition("=")
        if not sep or len(code.strip()) != 3:
            raise InputError(f"cannot read the rate {value!r}", hint="write it as CODE=RATE, e.g. --rate EUR=1.08")
        rates[code.strip().upper()] = to_decimal(rate)
    return rates


def reconcile_to_workbook(plan_path: Path, bills: Sequence[Path], month: str, out_dir: Path, *,
                          rates: dict[str, Decimal] | None = None, threshold_pct: Decimal = Decimal(10),
                          run_at: datetime | None = None,
                          on_progress: Callable[[float], None] | None = None) -> tuple[Reconciliation, Path]:
    """Reconcile ``month`` and write the review into ``out_dir``; keep the month in the history there.

    Everything that can fail on bad input fails before anything is written.
    """
    from templates.plan_reader import read_plan
    from templates.review_writer import write_review

    plan = read_plan(Path(plan_path))
    history = History(Path(out_dir) / HISTORY_FILE)
    currency = plan.currency()
    rec = reconcile_month(plan, [Path(b) for b in bills], month, rates=rates, threshold_pct=threshold_pct,
                          past_actuals=history.past_actuals(month, currency), on_progress=on_progress)
    run_at = run_at or datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    path = write_review(rec, Path(out_dir), run_at=run_at, trend=history.months(currency),
                        plan_name=Path(plan_path).name, bill_names=[Path(b).name for b in bills])
    history.record(rec, run_at)
    return rec, path


def _pull(sources: Sequence[str], month: str, folder: Path) -> list[Path]:
    """Pull each ``provider:uri`` source through its connector into ``folder``."""
    from connectors import provider as connector

    paths = []
    for i, source in enumerate(sources):
        name, sep, uri = source.partition(":")
        if not sep or not uri:
            raise InputError(f"cannot read the source {source!r}",
                             hint="write it as provider:uri, e.g. aws:s3://bucket/prefix or gcp:bq://project.dataset.table")
        paths.append(connector(name).pull_bills(uri, month, folder / f"{i:02d}-{name}-{month}.parquet"))
    return paths


def _print_summary(rec: Reconciliation, path: Path) -> None:
    table = Table("plan line", "planned", "actual", "variance", "%", "flag",
                  title=f"{rec.month}: plan vs actual ({rec.currency})")
    for line in rec.lines:
        pct = "" if line.variance_pct is None else f"{line.variance_pct * 100:.1f}"
        table.add_row(line.plan_line, f"{line.planned.rounded().amount:,}", f"{line.actual.rounded().amount:,}",
                      f"{line.variance.rounded().amount:,}", pct, line.flag)
    console.print(table)
    console.print(f"P&L actual {rec.actual} (OPEX {rec.opex}, CAPEX {rec.capex}) vs planned {rec.planned}; "
                  f"cash {rec.billed_cost} billed; unmapped {rec.unmapped_effective_cost}")
    console.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    @app.command("reconcile")
    def reconcile(
        plan: Path = typer.Option(..., "--plan", help="the planning workbook (.xlsx); never modified"),
        month: str = typer.Option(..., "--month", help="YYYY-MM"),
        bills: Optional[list[Path]] = typer.Option(None, "--bills", help="FOCUS files (.parquet, .csv, .csv.gz); repeat"),
        out: Path = typer.Option(Path("."), "--out", help="folder for the review workbook and the history"),
        sources: Optional[list[str]] = typer.Option(None, "--from",
                                                    help="pull bills with a connector: aws:s3://... or gcp:bq://..."),
        engine: str = typer.Option("duckdb", "--engine", help="duckdb (local files)"),
        rate: Optional[list[str]] = typer.Option(None, "--rate", help="CODE=RATE into the plan currency; repeat"),
        threshold: float = typer.Option(10.0, "--threshold", help="flag lines more than PCT over or under plan"),
        fail_on_variance: Optional[float] = typer.Option(None, "--fail-on-variance",
                                                         help="exit 1 when a line is more than PCT over plan"),
        as_json: bool = typer.Option(False, "--json", help="print the totals as JSON"),
        quiet: bool = typer.Option(False, "--quiet", help="no progress bar, no summary (for cron)"),
    ) -> None:
        """Reconcile a month of bills against the plan and write budget-review-YYYY-MM.xlsx."""
        if engine.lower() != "duckdb":
            raise InputError(f"engine {engine!r} is not available in this build",
                             hint="use --engine duckdb with local files or --from")
        if not bills and not sources:
            raise InputError("no bills given", hint="pass --bills FILE ... or --from aws:s3://... gcp:bq://...")
        with tempfile.TemporaryDirectory(prefix="finops-bills-") as pulled:
            paths = list(bills or []) + _pull(sources or [], month, Path(pulled))
            show = not quiet and not as_json and err_console.is_terminal
            with Progress(TextColumn("reading bills"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                          TimeElapsedColumn(), console=err_console, transient=True, disable=not show) as bar:
                task = bar.add_task("scan", total=100)
                rec, path = reconcile_to_workbook(
                    plan, paths, month, out, rates=parse_rates(rate), threshold_pct=to_decimal(threshold),
                    on_progress=lambda pct: bar.update(task, completed=pct))
        if as_json:
            print_json(rec.totals())
        elif not quiet:
            _print_summary(rec, path)
        if fail_on_variance is not None:
            over = rec.lines_over(to_decimal(fail_on_variance))
            if over:
                if not quiet:
                    err_console.print(f"over plan by more than {fail_on_variance}%: "
                                      + ", ".join(line.plan_line for line in over), highlight=False)
                raise SystemExit(1)  # finops.cli.main turns it into exit code 1
