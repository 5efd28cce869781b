"""The options of ``finops reconcile``, in groups (:func:`~finops.cli._options.option_groups`), in the order
``--help`` lists them: the plan, the month and its bills (:class:`MonthOptions`); where the aggregation runs
(:class:`EngineOptions`); how actual is judged against plan (:class:`JudgingOptions`); what is printed and
written (:class:`OutputOptions`); the month's serving metrics and contract terms (:class:`ServingOptions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..money import to_decimal
from ..reconcile import DEFAULT_MATERIALITY, MONTH_BASES, MonthBasis
from ._options import SERVING_LINES, month_option

__all__ = ["EngineOptions", "JudgingOptions", "MonthOptions", "OutputOptions", "ServingOptions", "parse_amount",
           "parse_basis", "parse_percent", "parse_rates"]

#: Rates must be below this (no currency is worth a billion of another; larger is a typing error).
MAX_RATE = Decimal(10) ** 9
#: Percentages (``--threshold``, ``--fail-on-variance``) stay at or below this (a million per cent).
MAX_PERCENT = Decimal(10) ** 6


@dataclass(frozen=True, kw_only=True)
class MonthOptions:
    """The plan, the month, and the bills: files, or sources a connector pulls."""

    plan: Annotated[Path, typer.Option("--plan", help="the planning workbook (.xlsx); never modified")]
    month: Annotated[str, typer.Option("--month", metavar="YYYY-MM", help="the month to reconcile")]
    basis: Annotated[str, typer.Option("--basis", metavar="invoice|usage",
                                       help="a charge's month: its invoice's (BillingPeriodStart, ties to the "
                                            "invoices) or its usage's (ChargePeriodStart, usage-month accrual)")] = "invoice"
    bills: Annotated[list[Path] | None, typer.Option("--bills", metavar="FILE...",
                                                     help="FOCUS files (.parquet, .csv, .csv.gz); repeat")] = None
    out: Annotated[Path, typer.Option("--out", help="folder for the review workbook and the history")] = Path(".")
    sources: Annotated[list[str] | None, typer.Option("--from", metavar="PROVIDER:URI...",
                                                      help="pull bills with a connector: aws:s3://... or "
                                                           "gcp:bq://...")] = None

    def checked_month(self) -> str:
        return month_option(self.month, "--month")


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """Where the month's charges are aggregated: here in DuckDB, or on BigQuery or Athena where the bills live."""

    engine: Annotated[str, typer.Option("--engine", help="duckdb (local files), or bigquery/athena to aggregate "
                                                         "where the bills live")] = "duckdb"
    table: Annotated[str | None, typer.Option("--table", help="with --engine bigquery|athena: the FOCUS table "
                                                              "(project.dataset.table)")] = None
    table_lacks: Annotated[list[str] | None, typer.Option("--table-lacks", metavar="COLUMN",
                                                          help="FOCUS columns the remote table does not have; "
                                                               "repeat")] = None
    project: Annotated[str | None, typer.Option("--project", help="--engine bigquery: the project the query job "
                                                                  "runs in (default: GOOGLE_CLOUD_PROJECT / the "
                                                                  "credentials')")] = None
    database: Annotated[str | None, typer.Option("--database", help="--engine athena: database of an unqualified "
                                                                    "--table (or FINOPS_ATHENA_DATABASE)")] = None
    workgroup: Annotated[str | None, typer.Option("--workgroup", help="--engine athena: the workgroup (or "
                                                                      "FINOPS_ATHENA_WORKGROUP; default primary)")] = None
    output_location: Annotated[str | None, typer.Option("--output-location",
                                                        help="--engine athena: s3:// folder for query results, "
                                                             "unless the workgroup sets one (or "
                                                             "FINOPS_ATHENA_OUTPUT_LOCATION)")] = None

    @property
    def remote(self) -> bool:
        """Whether the aggregation runs on a remote engine (BigQuery, Athena) rather than DuckDB here."""
        return self.engine.lower() != "duckdb"

    def where(self) -> dict[str, str]:
        """The remote query's keywords given (project; database, workgroup, output location); with DuckDB
        here, none of them nor ``--table-lacks`` may be given."""
        given = {name: value for name, value in {"project": self.project, "database": self.database,
                                                 "workgroup": self.workgroup,
                                                 "output_location": self.output_location}.items() if value}
        remote_only = [*given, *(["table_lacks"] if self.table_lacks else [])]
        if remote_only and not self.remote:
            raise InputError(f"--{remote_only[0].replace('_', '-')} is for --engine bigquery or athena",
                             hint="with local bills (--bills, --from) the aggregation runs here, in DuckDB")
        return given


@dataclass(frozen=True, kw_only=True)
class JudgingOptions:
    """How actual is set against plan: currency rates, token counts, the flagging threshold, the exit rule."""

    rate: Annotated[list[str] | None, typer.Option("--rate", metavar="CODE=RATE",
                                                   help="CODE=RATE into the plan currency; repeat")] = None
    usage: Annotated[Path | None, typer.Option("--usage", help="CSV of token counts: Month, PlanLine, "
                                                               "ActualMTokens")] = None
    threshold: Annotated[str, typer.Option("--threshold", metavar="PCT",
                                           help="flag lines more than PCT % over or under plan")] = "10"
    flag_amount: Annotated[str, typer.Option("--flag-amount", metavar="AMOUNT",
                                             help="and at least AMOUNT (plan currency) over or under it")
                           ] = str(DEFAULT_MATERIALITY)
    fail_on_variance: Annotated[str | None, typer.Option("--fail-on-variance", metavar="PCT",
                                                         help="exit 1 when a line is more than PCT % over "
                                                              "plan")] = None
    unmapped_csv: Annotated[Path | None, typer.Option("--unmapped-csv", metavar="FILE",
                                                      help="write every unmapped charge group to this CSV "
                                                           "(the review lists the 200 largest)")] = None

    def rates(self) -> dict[str, Decimal]:
        return parse_rates(self.rate)

    def threshold_pct(self) -> Decimal:
        """``--threshold`` as an exact percentage (0 flags every line off plan)."""
        return parse_percent(self.threshold, "--threshold") or Decimal(0)

    def materiality(self) -> Decimal:
        """``--flag-amount``: the amount a variance must reach to be flagged, in the plan currency."""
        return parse_amount(self.flag_amount, "--flag-amount")

    def fail_pct(self) -> Decimal | None:
        return parse_percent(self.fail_on_variance, "--fail-on-variance")


@dataclass(frozen=True, kw_only=True)
class OutputOptions:
    """What the run prints, and whether it also updates the plan."""

    as_json: Annotated[bool, typer.Option("--json", help="print the totals as JSON")] = False
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar, no summary (for cron)")] = False
    in_place: Annotated[bool, typer.Option("--in-place", help="also write Actuals and Variance sheets into the "
                                                              "plan (backup kept)")] = False


@dataclass(frozen=True, kw_only=True)
class ServingOptions:
    """The month's serving metrics (the review's Serving sheet), and the contracts' own terms."""

    metrics: Annotated[list[Path] | None, typer.Option("--metrics", metavar="FILE",
                                                       help="saved Prometheus query_range answers: adds the "
                                                            "Serving sheet")] = None
    prometheus: Annotated[str | None, typer.Option("--prometheus", metavar="URL",
                                                   help="a live Prometheus instead of --metrics")] = None
    serving: Annotated[Path | None, SERVING_LINES] = None
    contract_commitments: Annotated[Path | None, typer.Option(
        "--contract-commitments", metavar="FILE",
        help="the FOCUS Contract Commitment dataset (CSV): commitments' terms, payment and cost from it, and "
             "the ContractApplied commitments checked against it")] = None
    load_test: Annotated[list[str] | None, typer.Option("--load-test", metavar="PLANLINE=FILE",
                                                        help="with --metrics/--prometheus: a load-test result "
                                                             "of a serving line (as `finops calibrate` reads); "
                                                             "repeat")] = None


def parse_rates(values: Sequence[str] | None) -> dict[str, Decimal]:
    """``["EUR=1.08"]`` -> ``{"EUR": Decimal("1.08")}`` (1 unit of the code = rate units of the plan currency).

    >>> parse_rates(["eur=1.08", "GBP = 1.27"])
    {'EUR': Decimal('1.08'), 'GBP': Decimal('1.27')}
    """
    rates: dict[str, Decimal] = {}
    for value in values or []:
        code, sep, rate = value.partition("=")
        amount = _number(rate) if sep else None
        if len(code.strip()) != 3 or amount is None or not 0 < amount < MAX_RATE:
            raise InputError(f"cannot read --rate {value!r}",
                             hint=f"write it as CODE=RATE, a rate above 0 and below {MAX_RATE:,}, e.g. --rate EUR=1.08")
        earlier = rates.get(code.strip().upper())
        if earlier is not None and earlier != amount:  # which one meant is unknown: neither is taken
            raise InputError(f"--rate {code.strip().upper()} is given twice, as {earlier} and {amount}",
                             hint=f"give one rate for {code.strip().upper()}")
        rates[code.strip().upper()] = amount
    return rates


def parse_percent(value: str | None, option: str) -> Decimal | None:
    """A percentage option (``--threshold``, ``--fail-on-variance``) as an exact, non-negative Decimal.

    >>> parse_percent("12.5", "--threshold"), parse_percent(None, "--fail-on-variance")
    (Decimal('12.5'), None)
    """
    if value is None:
        return None
    pct = _number(value)
    if pct is None or not 0 <= pct <= MAX_PERCENT:
        raise InputError(f"{option} must be a percentage from 0 to {MAX_PERCENT:,}, got {value!r}",
                         hint=f"for example {option} 10 (10 %)")
    return pct


def parse_amount(value: str, option: str) -> Decimal:
    """An amount option (``--flag-amount``) in the plan currency, as an exact, non-negative Decimal.

    >>> parse_amount("250", "--flag-amount")
    Decimal('250')
    """
    amount = _number(value)
    if amount is None or not 0 <= amount < MAX_RATE:
        raise InputError(f"{option} must be an amount from 0 to {MAX_RATE:,} in the plan currency, got {value!r}",
                         hint=f"for example {option} 100 (variances under 100 are never flagged)")
    return amount


def parse_basis(value: str, *, remote: bool = False) -> MonthBasis:
    """``--basis``: ``invoice`` or ``usage`` (any case); the remote engines aggregate by invoice month only.

    >>> parse_basis("Usage")
    'usage'
    """
    basis = value.strip().lower()
    if basis not in MONTH_BASES:
        raise InputError(f"--basis must be invoice or usage, got {value!r}",
                         hint="invoice: the month's invoices (default); usage: charges by their usage month")
    if remote and basis != "invoice":
        raise InputError("--basis usage is for local bills", hint="drop --basis, or reconcile local FOCUS files")
    return basis  # type: ignore[return-value]


def _number(text: str) -> Decimal | None:
    """``text`` as a Decimal, or ``None`` when it is not a number."""
    try:
        return to_decimal(text)
    except InputError:
        return None
