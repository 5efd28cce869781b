"""Reconcile a month: bills -> charge groups -> actuals, plan lines, variance, forecast.

:func:`reconcile_month` runs the one aggregation (:mod:`finops.reconcile.aggregation`) over FOCUS
files with DuckDB; :func:`reconcile_groups` turns charge groups (from DuckDB, BigQuery or Athena)
and the plan into a :class:`~finops.reconcile.result.Reconciliation`. Formulas:

* OPEX (P&L) = sum of EffectiveCost (amortized: upfront commitment purchases spread over their
  term); cash = sum of BilledCost (purchases counted when paid). Invoice tie-out = BilledCost per
  ``InvoiceId``. (FOCUS 1.2, EffectiveCost and BilledCost column definitions.)
* CAPEX = straight-line depreciation of the plan's assets in the month
  (:func:`finops.depreciation.monthly_depreciation`); an asset's cost is cash in its purchase month.
* Per plan line: actual = EffectiveCost mapped to the line + depreciation of its assets;
  variance = actual - planned; variance % = variance / |planned| (so it is positive when more was spent
  than planned, whatever the sign of the budget: a credit line planned at -1,000 and credited only 500
  is over); flagged ``over``/``under`` when the variance is beyond both ``threshold_pct`` % of the plan and the
  ``materiality`` amount (:func:`finops.reconcile.story.material_flag`); unit cost = cost / million tokens (the line's
  token charges, :mod:`finops.reconcile.tokens`, unless the Usage sheet gives them) against planned amount /
  ``PlannedMTokens``.
* Spot share = EffectiveCost of usage at ``PricingCategory = 'Dynamic'`` (or ``x_PurchaseOption``
  spot/preemptible) / EffectiveCost of all usage.
* GPU-hours: ``x_GpuHours`` by ``x_GpuModel`` where the bill has them, else hours of usage x GPUs
  per instance from the instance catalog (``finops/catalog/data/instances_*.csv``).
* Forecast: see :mod:`finops.reconcile.forecast` (the capacity-planning loop of seed 003: review
  monthly against plan); forecast and plan cover the same months, the run rate leaves out one-off
  purchases.
* Commitments: one row per ``CommitmentDiscountId`` (:mod:`finops.reconcile.commitment_schedule`).

>>> from finops.reconcile.plan import BudgetLine, MappingRule, Plan
>>> from finops.reconcile.sample_bills import sample_bill_paths
>>> plan = Plan(budget=(BudgetLine("2026-05", "AWS", "cc", "OPEX", "aws", Money.of(60000, "USD")),),
...             mapping=(MappingRule(1, "AWS", provider_name="AWS"),))
>>> rec = reconcile_month(plan, sample_bill_paths(), "2026-05")
>>> str(rec.billed_cost), str(rec.lines[0].actual), str(rec.unmapped_effective_cost)
('157,596.73 USD', '6,049.01 USD', '10,265.84 USD')
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import cache
from pathlib import Path

import duckdb

from ..depreciation import month_index, monthly_depreciation
from ..errors import CurrencyMismatchError, InputError, Location
from ..files import replacing
from ..money import MONEY_CONTEXT, Money
from ..registry import normalize_key
from .aggregation import (
    CHECKED_COLUMNS,
    MONTH_COLUMNS,
    ChargeGroup,
    MonthBasis,
    Summary,
    UnmappedSums,
    bad_values_sql,
    charge_groups_sql,
    month_filter,
    summary_sql,
    unmapped_csv_sql,
)
from .bills import (
    FILE_COLUMN,
    VIEW,
    BillFile,
    bill_provenance,
    locate_bad_value,
    locate_currency,
    locate_malformed_row,
    locate_row,
    open_bills,
)
from .commitment_schedule import EarlierCommitment, commitment_summary
from .contract_applied import (
    APPLIED_COLUMN,
    BAD_CONTRACT_APPLIED,
    AppliedSums,
    contract_applied_sql,
    element_predicate,
    read_applied,
    unknown_commitment,
    unknown_error,
)
from .contract_commitments import ContractTerm
from .fingerprint import refuse_same_charges
from .forecast import year_forecast
from .mapping import UNMAPPED
from .plan import Plan
from .result import (
    AssetCharge,
    Forecast,
    GpuHours,
    InvoiceTotal,
    LinePlan,
    LineVariance,
    ProviderTotal,
    Reconciliation,
    UnmappedCharge,
    variance_share,
)
from .story import DEFAULT_MATERIALITY, material_flag
from .tokens import TOKENS_PER_UNIT, LineTokens, line_tokens, unit_error, unit_problem

__all__ = ["InstanceGpus", "catalog_gpus", "contract_applied", "reconcile_groups", "reconcile_month", "run_aggregation"]

#: ``(provider, instance_type) -> (gpu_model, gpus per instance)`` or ``None`` when not a GPU instance.
InstanceGpus = Callable[[str, str], "tuple[str, int] | None"]

#: FOCUS ProviderName -> instance catalog provider.
_CATALOG_PROVIDERS = {"aws": "aws", "amazon web services": "aws", "google cloud": "gcp", "gcp": "gcp",
                      "google cloud platform": "gcp"}
_SPOT = {"spot", "preemptible"}
_HOUR_UNITS = {"hours", "hour", "hrs", "h"}
#: A bill's empty field (NULL) as text, matched lower-cased against ``_SPOT``, ``_HOUR_UNITS`` or "dynamic"
#: (a constant: any text outside those sets would do, so a literal here had equivalent mutants).
_NO_TEXT = ""
#: DuckDB's memory for the scan; past it, the grouping of many charge groups spills to a temporary folder,
#: so the peak stays bounded whatever the number of resources (see docs/reconcile.md, Scale).
SCAN_MEMORY = "512MB"
#: Temporary table of the charge groups (of each bill file, when there are several).
_GROUPS = "charge_groups"
#: Temporary table of the month's charges that carry FOCUS 1.3 ContractApplied (the columns it is summed by).
_APPLIED = "contract_applied_charges"
#: The scan's DuckDB settings, kept here (setting names and SQL ignore case): its spill folder's name, its
#: memory and spill folder, and the groups' order, which does not matter (so DuckDB needs less memory).
_SPILL_PREFIX = "finops-reconcile-"
_MEMORY_LIMIT, _TEMP_DIRECTORY = "memory_limit", "temp_directory"
_ANY_ORDER = "SET preserve_insertion_order = false"
#: DuckDB's type of a column stored as text (type names ignore case).
_TEXT = "VARCHAR"
#: Why the bills cannot be read when the scan counted a bad value that no row then shows (a file changed meanwhile).
_BAD_VALUE = "a charge of the month holds an empty cost or Tags that are not a JSON object"
#: The scan runs on this thread; the caller's thread reads its progress this often (seconds).
_SCAN_THREAD, _PROGRESS_EVERY = "finops-reconcile-scan", 0.1


def catalog_gpus(provider_name: str, instance_type: str) -> tuple[str, int] | None:
    """(GPU model, GPUs per instance) from the instance catalog; ``None`` for other instances or providers.

    >>> catalog_gpus("AWS", "p5.48xlarge"), catalog_gpus("AWS", "m6i.large"), catalog_gpus("Oracle", "x")
    (('h100-sxm', 8), None, None)
    """
    provider = _CATALOG_PROVIDERS.get(provider_name.strip().lower())
    if provider is None:
        return None
    return _gpu_table(provider).get(normalize_key(instance_type))


@cache
def _gpu_table(provider: str) -> dict[str, tuple[str, int]]:
    """Instance type (normalized) -> (GPU model, GPUs) for one provider; bills hold many non-GPU types."""
    from ..catalog.instances import instances

    return {normalize_key(i.instance_type): (i.gpu_model, i.gpu_count) for i in instances(provider)}


def run_aggregation(con: duckdb.DuckDBPyConnection, files: list[BillFile], month: str, plan: Plan | None = None,
                    on_progress: Callable[[float], None] | None = None, *,
                    rates: Mapping[str, Decimal] | None = None, unmapped_csv: Path | None = None,
                    basis: MonthBasis = "invoice") -> Summary:
    """Run the aggregation over the view made by :func:`~finops.reconcile.bills.open_bills`.

    The scan (:func:`~finops.reconcile.aggregation.charge_groups_sql`, mapping with ``plan``'s rules)
    fills a temporary table; the summary (:func:`~finops.reconcile.aggregation.summary_sql`) reads it,
    and so does the ``unmapped_csv`` file, when given (every unmapped charge group, written atomically).
    ``on_progress`` receives DuckDB's progress in percent while the scan runs (from this thread).
    A value that does not cast, and one the scan counts as FOCUS refuses it (an empty cost, Tags that are not a
    JSON object: :data:`~finops.reconcile.aggregation.BAD_VALUES`, so the view may read values as they are,
    ``open_bills(strict=False)``), raises :class:`InputError` naming file, row and column; a month
    without charges names the months the files do hold. With several files the one scan groups per
    file too, and two files holding the same charges of the month
    (:func:`~finops.reconcile.fingerprint.refuse_same_charges`) raise :class:`InputError`.
    """
    per = FILE_COLUMN if len(files) > 1 else None  # pragma: no mutate
    rules = plan.mapping if plan is not None else ()
    con.execute(_ANY_ORDER)
    as_text = {name for f in files for name, kind in zip(f.columns, f.types or (_TEXT,) * len(f.columns),
                                                             strict=True) if kind.upper() == _TEXT}
    checked = [name for name in CHECKED_COLUMNS if name in as_text]
    sql = f"CREATE OR REPLACE TEMP TABLE {_GROUPS} AS " + charge_groups_sql(
        VIEW, month, rules, per=per, checked=checked, basis=basis, strict=True)
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            con.execute(sql)
            outcome["bad"] = con.execute(bad_values_sql(_GROUPS)).fetchone()[0]  # type: ignore[index]
        except duckdb.Error as exc:  # re-raised below, on the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name=_SCAN_THREAD)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_PROGRESS_EVERY)
            if on_progress is not None and worker.is_alive():
                progress = con.query_progress()
                if progress >= 0:
                    on_progress(progress)
    except BaseException:  # Ctrl-C or a failing callback: stop the scan too
        con.interrupt()
        worker.join()
        raise
    error = outcome.get("error")
    if isinstance(error, duckdb.Error) or outcome.get("bad"):
        located = locate_malformed_row(files) or locate_bad_value(files)
        if located is not None:
            raise located from error
        reason = _BAD_VALUE if error is None else str(error).splitlines()[0]
        raise InputError(f"cannot read the bills: {reason}",
                         where=Location(file=", ".join(str(f.path) for f in files)),
                         hint="check that every file is a FOCUS 1.2 export") from error
    if on_progress is not None:
        on_progress(100.0)
    if per is not None:
        refuse_same_charges(con, files, _GROUPS, month, basis)
    summary = Summary.from_rows(con.execute(summary_sql(_GROUPS, rates=rates)).fetchall())
    if not summary.groups:
        column = MONTH_COLUMNS[basis]
        months = [m for (m,) in con.execute(
            f"SELECT DISTINCT strftime({column}, '%Y-%m') AS m FROM {VIEW} ORDER BY m").fetchall()]
        held = ", ".join(str(m) for m in months if m is not None)
        if None in months:  # a blank BillingPeriodStart (or ChargePeriodStart) has no month
            held = (f"{held}, and " if held else "only ") + f"charges with no {column}"
        raise InputError(f"no charges in {month}; the bills hold {held or 'no rows'}",
                         where=Location(file=", ".join(str(f.path) for f in files), column=column),
                         hint="pick a month the bills cover, or give that month's bills")
    if unmapped_csv is not None:
        _write_unmapped_csv(con, Path(unmapped_csv))
    con.execute(f"DROP TABLE {_GROUPS}")
    return summary


def _write_unmapped_csv(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Every unmapped charge group into ``path`` (CSV with a header), through a temporary file beside it."""
    try:
        with replacing(path) as partial:  # finops.files: whole or not at all
            quoted = str(partial).replace("'", "''")
            con.execute(f"COPY ({unmapped_csv_sql(_GROUPS)}) TO '{quoted}' (FORMAT csv, HEADER true)")
    except (duckdb.Error, OSError) as exc:
        raise InputError(f"cannot write the unmapped charges: {str(exc).splitlines()[0]}",
                         where=Location(file=str(path)), hint="check that the folder exists and is writable") from exc


def reconcile_month(plan: Plan, bills: list[Path], month: str, *, rates: Mapping[str, Decimal] | None = None,
                    threshold_pct: Decimal = Decimal(10), materiality: Decimal = DEFAULT_MATERIALITY, past_actuals: Mapping[str, Decimal] | None = None,
                    instance_gpus: InstanceGpus | None = None,
                    on_progress: Callable[[float], None] | None = None,
                    unmapped_csv: Path | None = None, basis: MonthBasis = "invoice",
                    past_one_off: Mapping[str, Decimal] | None = None,
                    earlier_commitments: Mapping[str, EarlierCommitment] | None = None,
                    contracts: Mapping[str, ContractTerm] | None = None) -> Reconciliation:
    """Reconcile ``month`` (``'YYYY-MM'``) of ``plan`` against FOCUS bill files, with DuckDB.

    ``contracts`` are the FOCUS Contract Commitment dataset's terms by commitment id
    (:func:`~finops.reconcile.contract_commitments.read_contract_commitments`).

    ``basis`` is which month a charge belongs to: its invoice's (``BillingPeriodStart``, the default, so the
    month ties to its invoices) or its usage's (``"usage"``, ``ChargePeriodStart``).

    ``rates`` converts other billing currencies into the plan currency (1 unit = rate units of the
    plan currency); ``past_actuals`` holds earlier months' P&L actuals and ``past_one_off`` their
    one-off cost (from the history) for the forecast, ``earlier_commitments`` the commitments the history
    kept before ``month`` (for their balance left: :mod:`~finops.reconcile.commitment_schedule`);
    ``instance_gpus`` defaults to the instance
    catalog (:func:`catalog_gpus`); ``unmapped_csv`` is a file for every unmapped charge group (the
    review lists the largest ones).
    """
    month_index(month)
    currency = plan.currency()
    spill = tempfile.mkdtemp(prefix=_SPILL_PREFIX)
    con = duckdb.connect(config={_MEMORY_LIMIT: SCAN_MEMORY, _TEMP_DIRECTORY: spill})
    try:
        # the scan counts the values the view would refuse (a strict view refuses them the same way, only slower)
        files = open_bills(con, bills, strict=False)  # pragma: no mutate
        summary = run_aggregation(con, files, month, plan, on_progress, rates=rates, unmapped_csv=unmapped_csv,
                                  basis=basis)
        applied = contract_applied(con, files, month, basis, contracts)
        if unit_problem(summary.groups) is not None:
            raise _token_unit_error(files)
        bill_currencies = {g.billing_currency for g in summary.groups}
        rated = _rated(bill_currencies, currency, rates)
        blank = any(not (c or "").strip() for c in bill_currencies)  # a row in no currency: name it, even alone
        if (len(bill_currencies) > 1 or blank) and rated != bill_currencies:  # one without a rate: its first row
            located = locate_currency(files, currency, rated)
            if located is not None:
                raise located
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)  # pragma: no mutate
    rec = reconcile_groups(plan, summary, month, rates=rates, threshold_pct=threshold_pct, materiality=materiality,
                           past_actuals=past_actuals, instance_gpus=instance_gpus,
                           source=", ".join(str(f.path) for f in files), past_one_off=past_one_off,
                           earlier_commitments=earlier_commitments, contracts=contracts, applied=applied)
    return dataclasses.replace(rec, bill_versions=tuple(bill_provenance(f) for f in files))


def contract_applied(con: duckdb.DuckDBPyConnection, files: list[BillFile], month: str, basis: MonthBasis = "invoice",
                     contracts: Mapping[str, ContractTerm] | None = None) -> tuple[AppliedSums, ...]:
    """The month's FOCUS 1.3 ``ContractApplied`` sums per commitment (:mod:`finops.reconcile.contract_applied`) over
    the view of ``files`` (none when no file has the column). A value FOCUS refuses (not JSON, no Elements array, an
    element without its commitment or with an amount that is not a number), and, with ``contracts`` (the Contract
    Commitment dataset), a commitment the dataset does not list, raise :class:`InputError` naming file, row and
    column."""
    if not any(APPLIED_COLUMN in f.columns for f in files):
        return ()
    error: duckdb.Error | None = None
    # the bills are read once: the month's charges that carry ContractApplied, then checked and summed from there
    kept = ", ".join(dict.fromkeys((*MONTH_COLUMNS.values(), "ChargePeriodStart", "ProviderName", "BillingCurrency",
                                    "ChargeCategory", APPLIED_COLUMN)))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_APPLIED} AS SELECT {kept} FROM {VIEW} WHERE "
                    f"{month_filter(month, basis)} AND {APPLIED_COLUMN} IS NOT NULL AND {APPLIED_COLUMN} <> ''")
        bad = con.execute(f"SELECT count(*) FROM {_APPLIED} WHERE "
                          f"{BAD_CONTRACT_APPLIED.format(c=APPLIED_COLUMN)}").fetchone()[0]  # type: ignore[index]
        rows = [] if bad else con.execute(contract_applied_sql(_APPLIED, month, basis)).fetchall()
    except duckdb.Error as exc:
        bad, error = 1, exc
    if bad:
        located = locate_bad_value(files)
        if located is not None:
            raise located from error
        raise InputError(f"cannot read {APPLIED_COLUMN}" + (f": {str(error).splitlines()[0]}" if error else ""),
                         where=Location(file=", ".join(str(f.path) for f in files), column=APPLIED_COLUMN),
                         hint="check that ContractApplied holds FOCUS 1.3 JSON objects") from error
    applied = read_applied(rows)
    if contracts is not None:
        known = {cid: term.contract_id for cid, term in contracts.items()}
        found = unknown_commitment(applied, known)
        if found is not None:
            hit = locate_row([f for f in files if APPLIED_COLUMN in f.columns], APPLIED_COLUMN,
                             element_predicate(found.commitment_id))
            where = (Location(file=str(hit[0].path), row=hit[1], column=APPLIED_COLUMN) if hit is not None
                     else Location(file=", ".join(str(f.path) for f in files), column=APPLIED_COLUMN))
            raise unknown_error(found, where, "the Contract Commitment dataset (--contract-commitments)", known)
    return applied


def _token_unit_error(files: list[BillFile]) -> InputError:
    """The first token charge with a ConsumedQuantity but no unit that counts tokens, as an error naming its file,
    row and column (:mod:`finops.reconcile.tokens`)."""
    units = ", ".join(f"'{unit}'" for unit in TOKENS_PER_UNIT)
    for bill in files:
        has = set(bill.columns)
        if "ConsumedQuantity" not in has:
            continue
        meter = 'LOWER("SkuMeter")' if "SkuMeter" in has else "''"
        unit = '"ConsumedUnit"' if "ConsumedUnit" in has else "NULL"
        normal = f"regexp_replace(LOWER(TRIM({unit})), '\\s+', ' ', 'g')"
        predicate = (f"NULLIF(TRIM(\"ConsumedQuantity\"), '') IS NOT NULL AND ({meter} LIKE '%token%' OR "
                     f"LOWER({unit}) LIKE '%token%') AND ({unit} IS NULL OR {normal} NOT IN ({units}))")
        hit = locate_row([bill], "ConsumedUnit" if "ConsumedUnit" in has else "ConsumedQuantity", predicate)
        if hit is not None:
            _, row, found = hit
            return unit_error(found if "ConsumedUnit" in has else "", Location(file=str(bill.path), row=row,
                              column="ConsumedUnit"), "this token charge")
    return InputError("a token charge has no unit that counts tokens",
                      where=Location(file=", ".join(str(f.path) for f in files), column="ConsumedUnit"),
                      hint="export the bill with ConsumedUnit (Tokens, 1K Tokens or 1M Tokens) on token rows")


def _rated(currencies: Iterable[str | None], target: str, rates: Mapping[str, Decimal] | None) -> set[str]:
    """The bill currencies that convert into ``target``: itself, or one with a rate (codes in any case, as
    :class:`_Converter` reads them)."""
    codes = {code.strip().upper() for code in rates or ()}
    return {c for c in currencies if c is not None and (c.strip().upper() == target or c.strip().upper() in codes)}


class _Converter:
    """Bill money into the plan currency: identity, or an explicit rate."""

    def __init__(self, currency: str, rates: Mapping[str, Decimal] | None, source: str) -> None:
        self.currency = currency
        self.rates = {k.upper(): Decimal(v) for k, v in (rates or {}).items()}
        self.source = source
        own = self.rates.get(currency.upper())
        if own is not None and own != 1:  # never read (the plan's own money is not converted): refused, not ignored
            raise InputError(f"--rate {currency}={own} is a rate for the plan's own currency {currency}, which is 1",
                             hint=f"drop --rate {currency}=..., or give rates of the other billing currencies into "
                                  f"{currency}, e.g. --rate EUR=1.08")

    def __call__(self, amount: Decimal, bill_currency: str | None) -> Money:
        code = (bill_currency or "").strip().upper()  # " usd" is USD, as Money.of reads a code
        if code == self.currency:
            return Money(amount, self.currency)
        if code not in self.rates:
            raise CurrencyMismatchError(
                f"bills are in {code or 'no currency'} but the plan is in {self.currency}, and no rate was given",
                where=Location(file=self.source, column="BillingCurrency"),
                hint=f"give a rate into the plan currency, e.g. --rate {code or 'EUR'}=1.08")
        return Money(MONEY_CONTEXT.multiply(amount, self.rates[code]), self.currency)


def reconcile_groups(plan: Plan, summary: Summary | list[ChargeGroup], month: str, *,
                     rates: Mapping[str, Decimal] | None = None, threshold_pct: Decimal = Decimal(10),
                     materiality: Decimal = DEFAULT_MATERIALITY, past_actuals: Mapping[str, Decimal] | None = None,
                     instance_gpus: InstanceGpus | None = None, source: str = "bills",
                     past_one_off: Mapping[str, Decimal] | None = None,
                     earlier_commitments: Mapping[str, EarlierCommitment] | None = None,
                     contracts: Mapping[str, ContractTerm] | None = None,
                     applied: Sequence[AppliedSums] = ()) -> Reconciliation:
    """Turn the aggregation's summary (or bare charge groups, already mapped) and the plan into a
    reconciliation (no I/O but the bundled instance catalog).

    Bare groups list their unmapped ones by provider, service and instance type only.
    """
    if not isinstance(summary, Summary):
        summary = Summary(tuple(summary), tuple(
            UnmappedSums((g.provider_name or "", "", g.service_name or "", g.instance_type or "", "", ""),
                         g.billing_currency, g.effective_cost, g.billed_cost) for g in summary if g.plan_line is None))
    groups = list(summary.groups)
    currency = plan.currency()
    instance_gpus = catalog_gpus if instance_gpus is None else instance_gpus
    money = _Converter(currency, rates, source)
    zero = Money.zero(currency)

    effective, billed = zero, zero
    by_line: dict[str, Money] = defaultdict(lambda: zero)
    cash_by_line: dict[str, Money] = defaultdict(lambda: zero)
    invoices: dict[tuple[str, str], Money] = defaultdict(lambda: zero)
    providers: dict[str, list[Money]] = defaultdict(lambda: [zero, zero])
    for g in groups:
        eff, bil = money(g.effective_cost, g.billing_currency), money(g.billed_cost, g.billing_currency)
        effective, billed = effective + eff, billed + bil
        provider = g.provider_name or ""
        providers[provider][0] += eff
        providers[provider][1] += bil
        invoices[(provider, g.invoice_id or "")] += bil
        line = UNMAPPED if g.plan_line is None else g.plan_line
        by_line[line] += eff
        cash_by_line[line] += bil

    assets = _asset_charges(plan, month, currency)
    capex = Money.total([a.depreciation for a in assets], currency)
    for asset in assets:
        by_line[asset.plan_line] += asset.depreciation
        cash_by_line[asset.plan_line] += asset.purchase_cash
    gpu_hours_by_line = _gpu_hours(groups, instance_gpus, by_line=True)
    lines = _line_variances(plan, month, by_line, cash_by_line, zero, threshold_pct, line_tokens(groups, UNMAPPED),
                            materiality, gpu_hours_by_line)
    planned = Money.total([b.amount for b in plan.budget_for(month)], currency)
    actual = effective + capex
    purchases = [g for g in groups if g.charge_category == "Purchase"]
    one_off = Money.total([money(g.effective_cost, g.billing_currency) for g in purchases], currency)
    return Reconciliation(
        month=month, currency=currency, effective_cost=effective, billed_cost=billed, planned=planned,
        opex=effective, capex=capex, capex_cash=Money.total([a.purchase_cash for a in assets], currency),
        unmapped_effective_cost=by_line.get(UNMAPPED, zero), lines=lines,
        invoices=tuple(InvoiceTotal(p, i, v) for (p, i), v in sorted(invoices.items())),
        providers=tuple(ProviderTotal(p, v[0], v[1]) for p, v in sorted(providers.items())),
        commitments=commitment_summary(groups, money, currency, month, earlier_commitments, contracts, applied),
        spot_share=_spot_share(groups, money, zero),
        gpu_hours=_gpu_hours(groups, instance_gpus),
        gpu_hours_by_line=gpu_hours_by_line, assets=assets,
        unmapped=_unmapped(summary, money, zero),
        forecast=_forecast(plan, month, actual, one_off, past_actuals or {}, past_one_off or {}),
        threshold_pct=threshold_pct, materiality=materiality, bill_rows=sum(g.row_count for g in groups),
        data_through=max((g.last_charge_end for g in groups if g.last_charge_end is not None), default=None),
        one_off_cost=one_off,
        purchases_billed=Money.total([money(g.billed_cost, g.billing_currency) for g in purchases], currency),
        year_plan=tuple(LinePlan(b.plan_line, b.month, b.amount) for b in plan.budget_for_year(month)))


def _unmapped(summary: Summary, money: _Converter, zero: Money) -> tuple[UnmappedCharge, ...]:
    """The largest unmapped charge groups in the plan currency (largest EffectiveCost first, then by key),
    then one row for the rest, named by its number of groups."""
    listed: dict[tuple[str, ...], list[Money]] = defaultdict(lambda: [zero, zero])
    for sums in summary.unmapped:
        listed[sums.key][0] += money(sums.effective_cost, sums.billing_currency)
        listed[sums.key][1] += money(sums.billed_cost, sums.billing_currency)
    ordered = sorted(listed.items(), key=lambda kv: (-kv[1][0].amount, kv[0]))
    charges = [UnmappedCharge(*key, v[0], v[1]) for key, v in ordered]
    if summary.rest:
        rest_effective = Money.total([money(s.effective_cost, s.billing_currency) for s in summary.rest], zero.currency)
        rest_billed = Money.total([money(s.billed_cost, s.billing_currency) for s in summary.rest], zero.currency)
        charges.append(UnmappedCharge(f"{summary.rest_count:,} more unmapped charge groups (all in --unmapped-csv)",
                                      "", "", "", "", "", rest_effective, rest_billed))
    return tuple(charges)


def _asset_charges(plan: Plan, month: str, currency: str) -> tuple[AssetCharge, ...]:
    charges = []
    for a in plan.assets:
        depreciation = monthly_depreciation(a.cost, a.residual_value, a.life_months, a.in_service_date, month)
        bought = f"{a.purchase_date.year:04d}-{a.purchase_date.month:02d}" == month
        charges.append(AssetCharge(a.asset_id, a.plan_line, depreciation, a.cost if bought else Money.zero(currency)))
    return tuple(charges)


def _ratio(part: Decimal, whole: Decimal) -> Decimal | None:
    return None if whole == 0 else MONEY_CONTEXT.divide(part, whole)


def _line_variances(plan: Plan, month: str, by_line: Mapping[str, Money], cash_by_line: Mapping[str, Money],
                    zero: Money, threshold_pct: Decimal,
                    billed_tokens: Mapping[str, LineTokens] | None = None,
                    materiality: Decimal = DEFAULT_MATERIALITY,
                    gpu_hours: Iterable[GpuHours] = ()) -> tuple[LineVariance, ...]:
    planned: dict[str, Money] = {}
    category: dict[str, str] = {}
    provider: dict[str, str] = {}
    cost_centre: dict[str, str] = {a.plan_line: a.cost_centre for a in plan.assets}
    tokens_planned: dict[str, Decimal] = {}
    hours_planned: dict[str, Decimal] = {}
    hours_billed: dict[str, Decimal] = defaultdict(Decimal)
    for used in gpu_hours:
        hours_billed[used.plan_line or UNMAPPED] += used.hours
    for b in plan.budget_for(month):
        if b.planned_gpu_hours is not None:
            hours_planned[b.plan_line] = hours_planned.get(b.plan_line, Decimal(0)) + b.planned_gpu_hours
        planned[b.plan_line] = planned.get(b.plan_line, zero) + b.amount
        category.setdefault(b.plan_line, b.category)
        provider.setdefault(b.plan_line, b.provider)
        cost_centre.setdefault(b.plan_line, b.cost_centre)
        if b.planned_mtokens is not None:
            tokens_planned[b.plan_line] = tokens_planned.get(b.plan_line, Decimal(0)) + b.planned_mtokens
    billed_tokens = billed_tokens or {}
    # a line's actual tokens: its Usage rows when the plan has them (they override), else its token charges' tokens
    tokens_actual: dict[str, Decimal] = {line: t.total for line, t in billed_tokens.items() if t.total}
    from_usage: dict[str, Decimal] = {}
    for u in plan.usage_for(month):
        from_usage[u.plan_line] = from_usage.get(u.plan_line, Decimal(0)) + u.actual_mtokens
    tokens_actual |= from_usage
    assets_lines = {a.plan_line for a in plan.assets}
    names = list(planned) + sorted(n for n in by_line if n not in planned and n != UNMAPPED)
    if UNMAPPED in by_line:
        names.append(UNMAPPED)
    result = []
    for name in names:
        plan_amount, actual = planned.get(name, zero), by_line.get(name, zero)
        variance = actual - plan_amount
        pct = variance_share(variance.amount, plan_amount.amount)
        p_tok, a_tok = tokens_planned.get(name), tokens_actual.get(name)
        result.append(LineVariance(
            plan_line=name, category=category.get(name, "CAPEX" if name in assets_lines else "OPEX"),
            planned=plan_amount, actual=actual, actual_cash=cash_by_line.get(name, zero), variance=variance, variance_pct=pct,
            flag=material_flag(variance.amount, plan_amount.amount, threshold_pct, materiality), planned_mtokens=p_tok, actual_mtokens=a_tok,
            planned_unit_cost=plan_amount / p_tok if p_tok else None,
            actual_unit_cost=actual / a_tok if a_tok else None, provider=provider.get(name, ""),
            cost_centre=cost_centre.get(name, ""), billed_tokens=billed_tokens.get(name),
            tokens_source=("usage" if name in from_usage else "bill") if a_tok is not None else "",
            planned_gpu_hours=hours_planned.get(name), actual_gpu_hours=hours_billed.get(name)))
    return tuple(result)


def _spot_share(groups: list[ChargeGroup], money: _Converter, zero: Money) -> Decimal | None:
    usage = spot = zero
    for g in groups:
        if g.charge_category != "Usage":
            continue
        cost = money(g.effective_cost, g.billing_currency)
        usage += cost
        dynamic = (g.pricing_category or _NO_TEXT).lower() == "dynamic"
        if dynamic or (g.purchase_option or _NO_TEXT).lower() in _SPOT:
            spot += cost
    return _ratio(spot.amount, usage.amount)


def _gpu_hours(groups: list[ChargeGroup], instance_gpus: InstanceGpus, *,
               by_line: bool = False) -> tuple[GpuHours, ...]:
    """GPU-hours of the usage per GPU model (and per plan line with ``by_line``)."""
    hours: dict[tuple[str | None, str, str], Decimal] = defaultdict(Decimal)
    for g in groups:
        if g.charge_category != "Usage":
            continue
        line = (UNMAPPED if g.plan_line is None else g.plan_line) if by_line else None
        if g.gpu_hours is not None:
            hours[(line, g.gpu_model or "unknown", "bill")] += g.gpu_hours
        elif g.instance_type and (g.consumed_unit or _NO_TEXT).lower() in _HOUR_UNITS:
            gpus = instance_gpus(g.provider_name or "", g.instance_type)
            if gpus is not None:
                hours[(line, gpus[0], "catalog")] += g.consumed_quantity * gpus[1]
    # every key's line is None (per model) or every key's is text (per plan line): the keys sort as they are
    return tuple(GpuHours(model, value, source, line)  # type: ignore[arg-type]
                 for (line, model, source), value in sorted(hours.items()))


def _forecast(plan: Plan, month: str, actual: Money, one_off: Money, past: Mapping[str, Decimal],
              past_one_off: Mapping[str, Decimal]) -> Forecast:
    """:func:`~finops.reconcile.forecast.year_forecast` of this month with the earlier ones (this run wins)."""
    currency = actual.currency
    # year_forecast reads the months up to this one only; this run's month replaces the history's
    actuals = {m: Money(v, currency) for m, v in past.items()} | {month: actual}
    one_offs = {m: Money(v, currency) for m, v in past_one_off.items()} | {month: one_off}
    plan_by_month: dict[str, Money] = {}
    for b in plan.budget_for_year(month):
        plan_by_month[b.month] = plan_by_month.get(b.month, Money.zero(currency)) + b.amount
    return year_forecast(month, actuals, one_offs, plan_by_month, currency)
