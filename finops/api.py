"""The Python API for notebooks: the command line's answers as objects, tables as pandas frames.

``finops.size``, ``finops.estimate``, ``finops.tco``, ``finops.optimize_mix`` and
``finops.reconcile_month`` call the same core functions as ``finops size``, ``estimate``, ``tco``,
``mix`` and ``reconcile``, so a notebook, the workbook and the command line agree. A result that is a
table (sizing options, TCO options, mix outcomes, reconciled plan lines) has ``.to_pandas()``; every
result has ``.to_dict()``. pandas is imported only by ``.to_pandas()`` (``pip install
'llm-finops[pandas]'``); the core imports without it. Money columns hold exact ``Decimal`` amounts,
with their currency in a column of its own.

>>> import finops
>>> result = finops.size(preset="seed002-financial-copilot", top=3)
>>> [(o.gpu, o.precision, o.tp, o.instances) for o in result][:1]
[('h100-sxm', 'bf16', 1, 1)]
>>> finops.estimate("llama-3.1-8b", "h100-sxm", precision="bf16", tp=1, isl=2000, osl=500).fits
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from .errors import DependencyError
from .mix import MixOption, MixResult
from .mix import optimize_mix as _optimize_mix
from .money import Money
from .price_book import PriceBook
from .reconcile import Plan, Reconciliation
from .reconcile import reconcile_month as _reconcile_month
from .sizing import (
    DEFAULT_CONFIDENCE,
    Calibration,
    RankBy,
    SearchResult,
    Workload,
    estimate,
    search,
    workload_from,
)
from .tco import Comparison, SpotPolicy, cloud_rows, compare_options, reference_case

__all__ = ["MixTable", "ReconciliationTable", "SizeTable", "TcoTable", "estimate", "optimize_mix",
           "reconcile_month", "size", "tco", "to_pandas"]

R = TypeVar("R")


def to_pandas(rows: Iterable[Any]) -> Any:
    """A ``pandas.DataFrame`` of dataclass rows, one column per field; a :class:`Money` field becomes its
    exact amount and a ``currency`` column (pandas is imported here, not before)."""
    try:
        import pandas
    except ImportError:
        raise DependencyError("pandas", "pandas") from None
    return pandas.DataFrame([_record(row) for row in rows])


def _record(row: Any) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for f in dataclasses.fields(row):
        value = getattr(row, f.name)
        if isinstance(value, Money):
            record[f.name] = value.amount
            record.setdefault("currency", value.currency)
        else:
            record[f.name] = value
    return record


class _Table:
    """A core result whose ``rows`` attribute is a table: iterate it, index it, ``.to_pandas()`` it."""

    rows_field: ClassVar[str]

    @property
    def rows(self) -> Sequence[Any]:
        return getattr(self, self.rows_field)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Any:
        return self.rows[index]

    def to_pandas(self) -> Any:
        return to_pandas(self.rows)


def _as(cls: type[R], result: Any) -> R:
    """The same result as its table subclass (the same fields, values shared)."""
    return cls(**{f.name: getattr(result, f.name) for f in dataclasses.fields(result)})


@dataclasses.dataclass(frozen=True)
class SizeTable(_Table, SearchResult):
    """``finops size``'s result: its options, cheapest first, in the command's order."""

    rows_field: ClassVar[str] = "options"


@dataclasses.dataclass(frozen=True)
class TcoTable(_Table, Comparison):
    """``finops tco``'s result: owned and cloud options, cheapest total first."""

    rows_field: ClassVar[str] = "options"


@dataclasses.dataclass(frozen=True)
class MixTable(_Table, MixResult):
    """``finops mix``'s result: one outcome per purchase option."""

    rows_field: ClassVar[str] = "outcomes"


@dataclasses.dataclass(frozen=True)
class ReconciliationTable(_Table, Reconciliation):
    """``finops reconcile``'s result for one month: one variance row per plan line."""

    rows_field: ClassVar[str] = "lines"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def size(workload: Workload | str | Path | None = None, *, preset: str | None = None,
         gpus: Sequence[str] | None = None, precisions: Sequence[str] | None = None, engine: str = "vllm",
         pricing_model: str = "on_demand", top: int = 10, rank_by: RankBy = "monthly_cost",
         calibrated_only: bool = False, price_book: PriceBook | None = None,
         calibration: Calibration | None = None, peak_to_average: float | None = None,
         confidence: float | None = DEFAULT_CONFIDENCE, api_offers: str | Path | None = None) -> SizeTable:
    """The ranked configurations for a workload (a :class:`Workload`, a workload file, or ``preset``),
    as ``finops size`` prints them, cheapest first (:func:`finops.sizing.search.search`), each sized at
    ``confidence``: the quantile of its own class's held-out error (0.9: the pessimistic end of its P10-P90
    band; ``None``: the model's own figures; :mod:`finops.sizing.confidence`).

    Each option's ``cost_per_million_output_tokens`` is at the peak load running 24/7 and
    ``cost_per_million_output_tokens_average`` at the average load (``peak_to_average``, default the
    workload's), the fleet still sized for the peak (``size --peak-to-average``). ``managed`` lists the managed
    APIs that serve the model, priced per token (:func:`finops.sizing.managed.api_options`), with the offers of an
    ``api_offers`` file beside them (``size --api-offers``: :mod:`finops.api_offers`, provisioned throughput priced
    as a commitment)."""
    from .api_offers import read_api_offers, with_api_offers

    chosen = workload_from(preset=preset, workload=workload)
    if peak_to_average is not None:
        chosen = chosen.with_changes(peak_to_average=peak_to_average)
    result = search(chosen, gpus=gpus, precisions=precisions, engine=engine, pricing_model=pricing_model, top=top,
                    rank_by=rank_by, price_book=price_book, calibration=calibration, calibrated_only=calibrated_only,
                    confidence=confidence)
    if api_offers is not None:
        result = with_api_offers(result, chosen, read_api_offers(api_offers))
    return _as(SizeTable, result)


def tco(gpus: int = 8, months: int = 36, *, reference: str = "h100-sxm-8gpu", owned: bool = True,
        cloud: bool = True, provider: str | None = None, region: str | None = None,
        instance_type: str | None = None, price_book: PriceBook | None = None, start: str = "2026-01",
        spot: SpotPolicy | None = None, discount_rate: float | None = None) -> TcoTable:
    """Owned hardware (the cited ``reference`` case) against the price book's cloud options for ``gpus``
    GPUs over ``months``, as ``finops tco`` with its defaults (:func:`finops.tco.compare_options`)."""
    case = reference_case(reference)
    rows = []
    if cloud:
        book = PriceBook.current() if price_book is None else price_book
        rows = cloud_rows(book, gpu_model=case.gpu_model, provider=provider, region=region,
                          instance_type=instance_type, gpus_per_instance=case.node.gpus_per_node,
                          cited=case.cloud_price_row())
    return _as(TcoTable, compare_options(gpus, months, case.node if owned else None, rows, start=start, spot=spot or SpotPolicy(),
                                         discount_rate=discount_rate, owned_name=f"owned {case.name}"))


def optimize_mix(demand: Sequence[float], options: Sequence[MixOption],
                 weights: Sequence[float] | None = None) -> MixTable:
    """Whole committed units per option for an hourly demand (:func:`finops.mix.optimize_mix`)."""
    return _as(MixTable, _optimize_mix(demand, options, weights))


def reconcile_month(plan: Plan, bills: Sequence[str | Path], month: str, **options: Any) -> ReconciliationTable:
    """Plan vs actual for ``month`` from FOCUS bill files (:func:`finops.reconcile.reconcile_month`).

    ``plan`` is a :class:`finops.reconcile.Plan`; a planning workbook reads into one with
    ``templates.plan_reader.read_plan(path)``, as ``finops reconcile`` does.
    """
    return _as(ReconciliationTable, _reconcile_month(plan, [Path(b) for b in bills], month, **options))
