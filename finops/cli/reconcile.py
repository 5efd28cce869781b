"""``finops reconcile``: the monthly plan-vs-actual batch job, written to a budget-review workbook.

Reads the plan workbook, reads FOCUS bills (files, or pulled by a connector with ``--from``), runs
the reconciliation, writes ``budget-review-YYYY-MM.xlsx`` and keeps the month in the history
database beside it. Exit codes: 0 done, 1 a plan line over ``--fail-on-variance``, 2 bad input
(nothing written).
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..depreciation import parse_month
from ..errors import InputError, Location, UnknownNameError, redacted
from ..files import inputs_kept, locked, one_unit, recover
from ..outputs import check_replaceable
from ..reconcile import (
    DEFAULT_MATERIALITY,
    HISTORY_FILE,
    History,
    MonthBasis,
    Plan,
    Reconciliation,
    read_contract_commitments,
    reconcile_month,
    usage_from_csv,
)
from ..workbooks import workbooks
from ._console import console, err_console, print_json
from ._options import option_groups
from .reconcile_options import (
    EngineOptions,
    JudgingOptions,
    MonthOptions,
    OutputOptions,
    ServingOptions,
    parse_basis,
)

#: The lock file of an output folder, held while a run reads and writes its history and review.
LOCK_FILE = ".reconcile-history.lock"
#: How long a run waits for another run of the same folder before giving up, in seconds.
LOCK_WAIT_S = 600.0

__all__ = ["LOCK_FILE", "LOCK_WAIT_S", "reconcile_to_workbook", "register"]


def reconcile_to_workbook(plan_path: Path, bills: Sequence[Path], month: str, out_dir: Path, *,
                          rates: dict[str, Decimal] | None = None, threshold_pct: Decimal = Decimal(10),
                          usage: Path | None = None, run_at: datetime | None = None,
                          on_progress: Callable[[float], None] | None = None,
                          bill_names: Sequence[str] | None = None,
                          basis: MonthBasis = "invoice",
                          unmapped_csv: Path | None = None,
                          serving: Callable[[Reconciliation], object] | None = None,
                          contract_commitments: Path | None = None,
                          materiality: Decimal = DEFAULT_MATERIALITY) -> tuple[Reconciliation, Path]:
    """Reconcile ``month`` and write the review into ``out_dir``; keep the month in the history there.

    ``usage`` is an optional CSV of token counts (``Month, PlanLine, ActualMTokens``) added to the
    plan's Usage table. ``bill_names`` are what the review lists as its bills (default: the files'
    names). ``basis`` is which month a charge belongs to (``invoice``: its BillingPeriodStart; ``usage``:
    its ChargePeriodStart). ``materiality`` is the amount a variance must reach to be flagged (the review's
    ``FlagAmount``). ``contract_commitments`` is a FOCUS Contract Commitment dataset (CSV) whose terms replace
    those read from the bills. Everything that can fail on bad input fails before anything is written.
    """
    review_name = workbooks().review_name
    _check_out(Path(out_dir))
    month = parse_month(month)
    contracts = None if contract_commitments is None else read_contract_commitments(contract_commitments)
    read = {Path(plan_path): f"the plan {Path(plan_path).name}", **{Path(b): f"the bill {Path(b).name}" for b in bills},
            **({Path(usage): f"the usage file {Path(usage).name}"} if usage is not None else {}),
            **({Path(contract_commitments): f"the contract commitments {Path(contract_commitments).name}"}
               if contract_commitments is not None else {})}
    own = {Path(out_dir) / HISTORY_FILE: f"the history {HISTORY_FILE}",  # read, replaced only by its writer
           Path(out_dir) / review_name(month): f"the review {review_name(month)}, whose comments are kept"}
    with inputs_kept(read, owned=own), _folder_held(Path(out_dir)):  # from Python too: its inputs stay as they are
        if unmapped_csv is not None:  # an earlier run's list is replaced; anyone's CSV there, or an input, never
            check_replaceable(Path(unmapped_csv), "list of unmapped charges", "--unmapped-csv")
        plan = _read_plan(Path(plan_path), usage)
        history = History(Path(out_dir) / HISTORY_FILE)
        rec = reconcile_month(plan, [Path(b) for b in bills], month, rates=rates, threshold_pct=threshold_pct,
                              materiality=materiality, on_progress=on_progress, basis=basis,
                              unmapped_csv=unmapped_csv, contracts=contracts,
                              **history.earlier_inputs(month, plan.currency()))
        names = list(bill_names) if bill_names is not None else [Path(b).name for b in bills]
        served = None if serving is None else serving(rec)
        return rec, _write_and_keep(rec, history, Path(plan_path), Path(out_dir), names, run_at, served)


@contextmanager
def _folder_held(out_dir: Path) -> Iterator[None]:
    """Hold the output folder's lock (another run of it is waited for, at most :data:`LOCK_WAIT_S`), after
    finishing or cleaning what a killed run left there. A folder that does not exist yet is made for the
    lock, so two first runs take turns too (a run that fails removes it again)."""
    with locked(out_dir / LOCK_FILE, wait_s=LOCK_WAIT_S,
                on_wait=lambda message: err_console.print(message, highlight=False)):
        recover(out_dir)
        yield


def _import_openpyxl_without_numpy() -> None:
    """Import openpyxl, if nothing has yet, while numpy cannot be imported: openpyxl imports numpy only to accept
    numpy's number types as cell values (``openpyxl.compat.numbers``), which a reconcile run never writes, and
    numpy's import is about half of openpyxl's (0.1-0.2 s of the command's start, docs/reconcile.md, Speed).
    numpy stays importable afterwards; only this short-lived command process sees openpyxl without it."""
    if "openpyxl" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # "import numpy" raises ImportError meanwhile
    try:
        import openpyxl  # noqa: F401
    finally:
        del sys.modules["numpy"]


def _read_plan(plan_path: Path, usage: Path | None) -> Plan:
    _import_openpyxl_without_numpy()
    plan = workbooks().read_plan(plan_path)
    return plan if usage is None else plan.with_usage(usage_from_csv(usage), str(usage))


def _check_out(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError("--out must be a folder, not a file", where=Location(file=str(out_dir)),
                         hint="the review and the history database are written into this folder")


def _write_and_keep(rec: Reconciliation, history: History, plan_path: Path, out_dir: Path, bill_names: list[str],
                    run_at: datetime | None, serving: object = None) -> Path:
    """Write the review and keep the month in the history, as one unit (:func:`~finops.files.one_unit`),
    with the comments typed into the review it replaces (or kept in the history)."""
    xlsx = workbooks()
    run_at = run_at or datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    comments, actions = xlsx.typed_in_review(out_dir / xlsx.review_name(rec.month), history.comments(rec.month),
                                             history.actions(rec.month))
    with one_unit():  # the review and the history change together or not at all
        path = xlsx.write_review(rec, out_dir, run_at=run_at, trend=history.months(rec.currency),
                            plan_name=plan_path.name, bill_names=bill_names, serving=serving, comments=comments,
                            actions=actions)
        history.record(rec, run_at, comments, actions)
    return path


def _is_source(value: str) -> bool:
    """Whether a bare argument is a ``provider:uri`` source (as in ``--from aws:s3://b/p gcp:bq://p.d.t``)
    rather than a bill file: it names no existing file and starts with a word and a colon.

    >>> _is_source("gcp:bq://acme.billing.focus"), _is_source("may.parquet"), _is_source("C:/bills/may.csv")
    (True, False, False)
    """
    return not Path(value).exists() and re.match(r"[A-Za-z][\w-]+:", value) is not None


def _pull(sources: Sequence[str], month: str, folder: Path) -> list[Path]:
    """Pull each ``provider:uri`` source through its connector into ``folder``."""
    from connectors import provider as connector

    paths = []
    for i, source in enumerate(sources):
        name, sep, uri = source.partition(":")
        if not sep or not uri:
            raise InputError(f"cannot read the source {source!r}",
                             hint="write it as provider:uri, e.g. aws:s3://bucket/prefix or gcp:bq://project.dataset.table")
        try:
            pulling = connector(name)
        except UnknownNameError as exc:
            raise InputError(f"--from {source!r}: {exc.message}", hint=exc.hint) from exc
        paths.append(pulling.pull_bills(uri, month, folder / f"{i:02d}-{name}-{month}.parquet"))
    return paths


def _print_summary(rec: Reconciliation, path: Path) -> None:
    table = Table("plan line", "planned", "actual", "variance", "%", "flag",
                  title=f"{rec.month}: plan vs actual ({rec.currency})")
    for line in rec.lines:
        pct = "" if line.variance_pct is None else f"{line.variance_pct * 100:.1f}"
        table.add_row(line.plan_line, f"{line.planned.rounded().amount:,}", f"{line.actual.rounded().amount:,}",
                      f"{line.variance.rounded().amount:,}", pct, line.flag)
    console.print(table)
    console.print(f"P&L actual {rec.actual} (cloud {rec.opex}, depreciation {rec.capex}) vs planned {rec.planned}; "
                  f"cash {rec.billed_cost} billed; unmapped {rec.unmapped_effective_cost}")
    console.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("reconcile")(reconcile)


@option_groups
def reconcile(inputs: MonthOptions, engine: EngineOptions, judging: JudgingOptions, output: OutputOptions,
              served: ServingOptions,
              more: list[str] | None = typer.Argument(None, hidden=True, metavar="FILE|PROVIDER:URI",
                                                      help="further bill files or sources, as in --bills a.csv "
                                                           "b.csv or --from aws:s3://... gcp:bq://...")) -> None:
    """Reconcile a month of bills against the plan and write budget-review-YYYY-MM.xlsx."""
    run_at = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    month = inputs.checked_month()
    threshold_pct, materiality, fail_pct = judging.threshold_pct(), judging.materiality(), judging.fail_pct()
    basis = parse_basis(inputs.basis, remote=engine.remote)
    if output.in_place:
        workbooks().check_in_place(inputs.plan)  # refuse before anything is written
    where = engine.where()
    if engine.remote:
        if inputs.bills or inputs.sources or more:
            raise InputError(f"--engine {engine.engine} reads --table, not bill files or --from sources",
                             hint="drop --bills/--from, or drop --engine to reconcile local bills in DuckDB")
        if judging.unmapped_csv is not None:
            raise InputError(f"--unmapped-csv is for local bills, not --engine {engine.engine}",
                             hint="the review lists the 200 largest unmapped charge groups")
        rec, path = _reconcile_remote(engine.engine, engine.table, engine.table_lacks or [], inputs.plan,
                                      judging.usage, month, inputs.out, rates=judging.rates(),
                                      threshold_pct=threshold_pct, materiality=materiality, run_at=run_at,
                                      where=where, contract_commitments=served.contract_commitments)
    else:
        rec, path = _reconcile_local(inputs, judging, output, served, more or [], month=month, basis=basis,
                                     threshold_pct=threshold_pct, materiality=materiality, run_at=run_at)
    _finish(rec, path, inputs.plan, inputs.out, run_at, in_place=output.in_place, as_json=output.as_json,
            quiet=output.quiet, fail_on_variance=fail_pct)


def _reconcile_local(inputs: MonthOptions, judging: JudgingOptions, output: OutputOptions, served: ServingOptions,
                     more: list[str], *, month: str, basis: MonthBasis, threshold_pct: Decimal,
                     materiality: Decimal, run_at: datetime) -> tuple[Reconciliation, Path]:
    """Local bills aggregated here, in DuckDB: the files given, and the sources pulled into a temporary folder;
    a bare argument is a metrics file (.json, .json.gz), a ``provider:uri`` source, or a bill file."""
    from .plan import is_metrics

    metrics = list(served.metrics or []) + [Path(v) for v in more if is_metrics(Path(v))]
    more = [v for v in more if not is_metrics(Path(v))]
    more_sources = [value for value in more if _is_source(value)]
    bills = list(inputs.bills or []) + [Path(value) for value in more if value not in more_sources]
    sources = list(inputs.sources or []) + more_sources
    if not bills and not sources:
        raise InputError("no bills given", hint="pass --bills FILE ... or --from aws:s3://... gcp:bq://...")
    with tempfile.TemporaryDirectory(prefix="finops-bills-") as pulled:
        paths = bills + _pull(sources, month, Path(pulled))
        show = not output.quiet and not output.as_json and err_console.is_terminal
        with Progress(TextColumn("reading bills"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                      TimeElapsedColumn(), console=err_console, transient=True, disable=not show) as bar:
            task = bar.add_task("scan", total=100)
            return reconcile_to_workbook(
                inputs.plan, paths, month, inputs.out, rates=judging.rates(), threshold_pct=threshold_pct,
                materiality=materiality,
                usage=judging.usage, run_at=run_at, on_progress=lambda pct: bar.update(task, completed=pct),
                bill_names=[p.name for p in bills] + [redacted(s) for s in sources],  # not its temporary file
                basis=basis, unmapped_csv=judging.unmapped_csv, contract_commitments=served.contract_commitments,
                serving=_serving_figures(month, served.serving, inputs.plan, metrics, served.prometheus,
                                         served.load_test or []))


def _serving_figures(month: str, serving: Path | None, plan: Path, metrics: list[Path] | None,
                     prometheus: str | None, load_tests: list[str]) -> Callable[[Reconciliation], object] | None:
    """With --metrics or --prometheus: the reconciliation -> the month's realized serving figures."""
    if not metrics and not prometheus:
        for option, given in (("--load-test", load_tests), ("--serving", serving)):
            if given:  # read by nothing without the month's metrics: refused, not ignored
                raise InputError(f"{option} goes with --metrics or --prometheus (the Serving sheet)",
                                 hint="give the month's serving metrics as well")
        return None
    from .plan import served_by

    return served_by(month, serving, plan, metrics, prometheus, 300, load_tests)


def _finish(rec: Reconciliation, path: Path, plan: Path, out: Path, run_at: datetime, *, in_place: bool,
            as_json: bool, quiet: bool, fail_on_variance: Decimal | None) -> None:
    """Optionally update the plan in place, print, and exit 1 when a line is over ``fail_on_variance``."""
    if in_place:
        backup = workbooks().write_in_place(plan, rec, History(Path(out) / HISTORY_FILE).months(rec.currency), run_at)
        if not quiet and not as_json:
            console.print(f"updated Actuals and Variance in {plan} (backup: {backup})")
    if as_json:
        print_json(rec.totals())
    elif not quiet:
        _print_summary(rec, path)
    if fail_on_variance is not None:
        over = rec.lines_over(fail_on_variance)
        if over:
            if not quiet:
                err_console.print(f"over plan by more than {fail_on_variance}%: "
                                  + ", ".join(line.plan_line for line in over), highlight=False)
            raise typer.Exit(1)


#: Remote engine -> the connector whose client runs its queries.
_ENGINE_CONNECTOR = {"bigquery": "gcp", "athena": "aws"}
#: Remote engine -> the ``run_query`` keywords its options set (where the query runs).
_ENGINE_OPTIONS = {"bigquery": ("project",), "athena": ("database", "workgroup", "output_location")}


def _reconcile_remote(engine: str, table: str | None, lacks: list[str], plan_path: Path, usage: Path | None,
                      month: str, out: Path, *,
                      rates: dict[str, Decimal], threshold_pct: Decimal, run_at: datetime,
                      materiality: Decimal = DEFAULT_MATERIALITY, where: dict[str, str],
                      contract_commitments: Path | None = None) -> tuple[Reconciliation, Path]:
    """Run the aggregation on BigQuery or Athena through the connector's ``run_query``; ``where``
    holds its keywords (project; database, workgroup, output location). With ``contract_commitments``, the table's
    ContractApplied is summed too (:func:`finops.reconcile.dialects.reconcile_remote`)."""
    from connectors import provider as connector

    from ..reconcile import canonical_engine, reconcile_remote

    name = canonical_engine(engine)
    if name not in _ENGINE_CONNECTOR:
        raise InputError(f"--engine {engine} reads no remote table", hint="use --engine bigquery or athena")
    if not table:
        raise InputError(f"--engine {name} needs --table", hint="the FOCUS table, e.g. --table project.dataset.focus")
    foreign = sorted(where.keys() - set(_ENGINE_OPTIONS[name]))
    if foreign:
        owner = next(other for other, options in _ENGINE_OPTIONS.items() if foreign[0] in options)
        raise InputError(f"--{foreign[0].replace('_', '-')} is for --engine {owner}, not {name}",
                         hint=f"--engine {name} takes " + ", ".join(f"--{o.replace('_', '-')}"
                                                                    for o in _ENGINE_OPTIONS[name]))
    run_query = partial(connector(_ENGINE_CONNECTOR[name]).run_query, **where)
    _check_out(Path(out))
    with _folder_held(Path(out)):
        plan = _read_plan(Path(plan_path), usage)
        history = History(Path(out) / HISTORY_FILE)
        contracts = None if contract_commitments is None else read_contract_commitments(contract_commitments)
        rec = reconcile_remote(plan, run_query, name, table, month, missing=lacks, rates=rates,
                               threshold_pct=threshold_pct, materiality=materiality, contracts=contracts,
                               **history.earlier_inputs(month, plan.currency()))
        return rec, _write_and_keep(rec, history, Path(plan_path), Path(out), [f"{name}:{table}"], run_at)
