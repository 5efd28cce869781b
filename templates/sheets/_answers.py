"""The values the workbook's formulas answer, computed by the core when the workbook is built.

Every formula cell is stored with the value the add-in's function returns for the same inputs, so a
cell reads the same before and after recalculation. The builder knows those inputs as typed values
(the rows it writes), so it calls the core functions the add-in's functions delegate to
(``addin/udfs.py`` names each one) without going through cell parsing; a figure the core refuses
becomes the cell's one-line ``#FINOPS: ...`` text, as the add-in shows it.
``tests/workbook/test_template.py`` recomputes every formula with the add-in and compares.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any

from finops import sizing
from finops.catalog import resolve_model
from finops.errors import FinopsError, InputError
from finops.mix import MixOption, optimize_mix
from finops.money import Money
from finops.price_book import PriceBook
from finops.sizing.managed import api_options
from finops.tco import compare_options, cost_per_million_tokens, reference_case, tco
from finops.token_prices import TokenPriceBook

__all__ = ["cheapest_api", "concurrency_of", "cost_per_mtok", "hourly_price", "kv_gib", "max_concurrency",
           "mix_table", "owned_total", "ranking", "sizing_figure", "tco_total", "weights_gib"]

_GIB = 2.0**30


def _answer(compute: Callable[[], Any]) -> Any:
    """``compute()``, or the one-line text a cell shows when the core refuses the inputs."""
    try:
        return compute()
    except FinopsError as exc:
        return exc.short()


@lru_cache(maxsize=256)
def _sized(workload: sizing.Workload, gpu: str, precision: str, tp: int, engine: str, book: PriceBook,
           top: int) -> sizing.WorkloadSizing:
    return sizing.size_workload(workload, gpu=gpu, precision=precision, tp=tp, engine=engine,
                                pricing_model="on_demand",
                         price_book=book, top=top)


def sizing_figure(workload: sizing.Workload, choice: tuple[str, str, int, str], field: str,
                  book: PriceBook) -> Any:
    """``LLM_SIZING``: one figure of a Workloads row's answer (:data:`finops.sizing.SIZING_FIELDS`)."""
    return _answer(lambda: sizing.SIZING_FIELDS[field](_sized(workload, *choice, book, 1)))


def ranking(workload: sizing.Workload, choice: tuple[str, str, int, str], top: int, book: PriceBook) -> Any:
    """``LLM_RANKING``: the cheapest configurations for a Workloads row, header first."""
    def table() -> list[list[Any]]:
        sized = _sized(workload, *choice, book, top)
        if not sized.search.options:
            raise InputError(sized.search.infeasible_reason or "no priced configuration meets the targets")
        return sizing.ranking_table(sized.search.options)
    return _answer(table)


def concurrency_of(dau: float, online_share: float, requests_per_user_per_hour: float,
                   seconds_per_request: float) -> Any:
    """``LLM_CONCURRENCY``: Little's law (:func:`finops.sizing.concurrency`)."""
    return _answer(lambda: sizing.concurrency(dau, online_share, requests_per_user_per_hour,
                                              seconds_per_request))


def weights_gib(model: str, precision: str) -> Any:
    """``LLM_WEIGHTS_GIB``: the model's weights in GiB (:func:`finops.sizing.weight_bytes`)."""
    return _answer(lambda: sizing.weight_bytes(resolve_model(model), precision.lower()) / _GIB)


def kv_gib(model: str, tokens: int, batch: int) -> Any:
    """``LLM_KV_GIB``: the KV cache of ``batch`` sequences in GiB, 16-bit (:func:`finops.sizing.kv_bytes`)."""
    return _answer(lambda: sizing.kv_bytes(resolve_model(model), tokens, batch, "bf16") / _GIB)


def max_concurrency(model: str, gpu: str, precision: str, tp: int, isl: int, osl: int,
                    context_length: int | None = None) -> Any:
    """``LLM_MAX_CONCURRENCY``: sequences that fit in one replica (:func:`finops.sizing.memory_fit`)."""
    return _answer(lambda: sizing.memory_fit(model, gpu, precision=precision.lower(), tp=tp, isl=isl,
                                             osl=osl, context_length=context_length).max_concurrency)


def hourly_price(book: PriceBook, provider: str, instance_type: str, pricing_model: str, region: str) -> Any:
    """``FINOPS_PRICE``: the effective hourly cost of one instance (:meth:`PriceBook.lookup`)."""
    return _answer(lambda: float(book.lookup(provider, instance_type, pricing_model, region).hourly_cost))


def _money(value: float, currency: str = "USD") -> Money:
    return Money.of(Decimal(repr(float(value))), currency)


def tco_total(capex: float, opex_per_month: float, months: int, currency: str) -> Any:
    """``FINOPS_TCO``: ``capex + opex_per_month x months`` (:func:`finops.tco.tco`)."""
    return _answer(lambda: float(tco(_money(capex, currency), _money(opex_per_month, currency),
                                     months).amount))


def cost_per_mtok(hourly_cost: float, tokens_per_s: float) -> Any:
    """``FINOPS_COST_PER_MTOK``: ``hourly x 10^6 / (tokens/s x 3600)``
    (:func:`finops.tco.cost_per_million_tokens`)."""
    return _answer(lambda: float(cost_per_million_tokens(_money(hourly_cost), tokens_per_s).amount))


def cheapest_api(workload: sizing.Workload, fleet_monthly: float | None,
                 peak_output_tokens_per_s: float | None) -> sizing.ApiOption | None:
    """The cheapest managed API serving the workload's model per token on demand, with its month at the workload's
    average volume and its break-even against a fleet costing ``fleet_monthly`` (``FINOPS_API_PER_MTOK`` answers
    its cost per million output tokens: :func:`finops.sizing.managed.api_options`, the bundled token prices)."""
    options = api_options(workload, fleet_monthly=None if fleet_monthly is None else _money(fleet_monthly),
                          peak_output_tokens_per_s=peak_output_tokens_per_s, book=TokenPriceBook.bundled())
    return next((o for o in options if o.pricing_model == "on_demand"), None)


def owned_total(gpus: int, months: int, basis: str, reference: str = "h100-sxm-8gpu") -> Any:
    """``FINOPS_OWNED_TCO``: the cited owned fleet's total in one basis
    (:func:`finops.tco.compare_options`)."""
    def total() -> float:
        owned = compare_options(gpus, months, reference_case(reference).node, []).owned
        assert owned is not None
        return float(owned.total(basis).amount)
    return _answer(total)


def mix_table(units: list[float], options: list[list[Any]]) -> Any:
    """``FINOPS_MIX``: the recommended mix of ``options`` rows (name, kind, hourly_cost, max_share,
    max_units) for an hourly demand (:func:`finops.mix.optimize_mix`, :meth:`finops.mix.MixResult.table`)."""
    def table() -> Any:
        for _name, _kind, cost, _share, _units in options:  # a price cell that answered an error: the mix
            if isinstance(cost, str):                       # shows it, as Excel carries an error on
                raise InputError(cost.removeprefix("#FINOPS: "))
        return optimize_mix(units, [MixOption(str(name), kind.lower(), Decimal(repr(float(cost))), max_share=max_share,
                                              max_units=max_units)
                                    for name, kind, cost, max_share, max_units in options]).table()
    return _answer(table)
