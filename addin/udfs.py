"""Excel functions (xlwings UDFs) over the llm-finops core: thin wrappers, no business logic.

One module serves both free xlwings routes:

* **classic Windows add-in**: list ``addin.udfs`` under "UDF Modules" (or ``UDF_MODULES`` in
  ``xlwings.conf``) and click "Import Functions"; xlwings writes one VBA wrapper per function.
* **xlwings Lite** (Excel on the web, Mac, Windows): ``from addin.udfs import *`` in ``main.py`` with
  ``llm-finops`` in ``requirements.txt``; prices come from the workbook's Prices sheet, passed as a
  range (``PriceTable``), never from the network.

Outside Excel (Linux, tests, Pyodide without xlwings) the decorators leave plain callables.
Every function accepts a cell or a one-cell range for each scalar argument, and answers bad input
with a one-line ``#FINOPS: ...`` text, never a traceback. Each function names the core function it
delegates to; the formulas and their sources are documented there.
"""

from __future__ import annotations

from dataclasses import fields
from decimal import Decimal
from functools import lru_cache
from typing import Any

from finops.catalog import resolve_model
from finops.cells import shown
from finops.errors import InputError
from finops.mix import MixOption, MixResult, optimize_mix
from finops.money import Money
from finops.price_book import PriceBook
from finops.registry import Registry
from finops.sizing import (
    DEFAULT_CONFIDENCE,
    SIZING_FIELDS,
    Estimate,
    SearchResult,
    Workload,
    WorkloadSizing,
    concurrency,
    devices_needed,
    estimate,
    kv_bytes,
    memory_fit,
    ranking_table,
    search,
    size_workload,
    weight_bytes,
)
from finops.tco import compare_options, cost_per_million_tokens, reference_case, tco
from finops.token_prices import TokenPriceBook

from ._cells import cell_errors, grid, names, number, optional_text, records, text, whole
from ._price_range import current_book, hourly_cost, price_book_from_range
from ._workload_row import workload_row

try:  # the classic add-in and xlwings Lite both expose ``func`` on the top-level ``xlwings`` module
    from xlwings import func
except ImportError:  # no xlwings (CI, plain Pyodide): an identity decorator keeps plain callables

    def func(f: Any = None, **_options: Any) -> Any:
        return f if f is not None else (lambda g: g)


__all__ = [
    "FINOPS_API_OFFER",
    "FINOPS_API_PER_MTOK",
    "FINOPS_COST_PER_MTOK",
    "FINOPS_MIX",
    "FINOPS_OWNED_TCO",
    "FINOPS_PRICE",
    "FINOPS_TCO",
    "LLM_CONCURRENCY",
    "LLM_DEVICES",
    "LLM_ESTIMATE",
    "LLM_KV_GIB",
    "LLM_MAX_CONCURRENCY",
    "LLM_RANKING",
    "LLM_SIZE",
    "LLM_SIZING",
    "LLM_TOKENS_PER_S",
    "LLM_TPOT_MS",
    "LLM_TTFT_MS",
    "LLM_WEIGHTS_GIB",
    "UDFS",
]

#: A cell value, a range (list or list of lists) or an omitted optional argument.
Cell = Any
_GIB = 2.0**30


# ---- demand -------------------------------------------------------------------------------------------
@func
@cell_errors
def LLM_CONCURRENCY(
    dau: Cell, online_share: Cell, requests_per_user_per_hour: Cell, seconds_per_request: Cell
) -> Any:
    """Peak concurrent requests, Little's law: ``dau x online_share x req/user/h / 3600 x seconds``.

    Source: ``finops.sizing.concurrency`` (seed 000; its stated inputs give ~42, not the article's 7).

    >>> round(LLM_CONCURRENCY(10000, 0.05, 60, 5), 1)
    41.7
    """
    return concurrency(
        number(dau, "dau"),
        number(online_share, "online_share"),
        number(requests_per_user_per_hour, "requests_per_user_per_hour"),
        number(seconds_per_request, "seconds_per_request"),
    )


@func
@cell_errors
def LLM_DEVICES(
    required_tokens_per_s: Cell, per_device_tokens_per_s: Cell, spare: Cell = None, redundancy: Cell = None
) -> Any:
    """Devices to deploy: ``ceil(ceil(R / T) x (1 + spare)) + redundancy`` (seed 003).

    Source: ``finops.sizing.devices_needed``.

    >>> LLM_DEVICES(5000, 800, 0.25)
    9
    """
    return devices_needed(
        number(required_tokens_per_s, "required_tokens_per_s"),
        number(per_device_tokens_per_s, "per_device_tokens_per_s"),
        number(spare, "spare", default=0.0),
        whole(redundancy, "redundancy", default=0),
    )


# ---- memory -------------------------------------------------------------------------------------------
@func
@cell_errors
def LLM_WEIGHTS_GIB(model: Cell, precision: Cell) -> Any:
    """Weight memory of the whole model in GiB at a precision (embeddings stay 16-bit when quantized).

    Source: ``finops.sizing.weight_bytes``.

    >>> round(LLM_WEIGHTS_GIB("llama-3.1-8b", "bf16"), 2)
    14.96
    >>> LLM_WEIGHTS_GIB("llama-3.1-8b", "fp7").startswith("#FINOPS: unknown precision 'fp7'")
    True
    """
    return weight_bytes(resolve_model(text(model, "model")), text(precision, "precision").lower()) / _GIB


@func
@cell_errors
def LLM_KV_GIB(model: Cell, tokens: Cell, batch: Cell, kv_precision: Cell = None) -> Any:
    """KV cache in GiB for ``batch`` sequences of ``tokens`` tokens (GQA/MLA/window aware), whole model.

    Source: ``finops.sizing.kv_bytes``.

    >>> LLM_KV_GIB("llama-3.1-8b", 2048, 16)
    4.0
    """
    return (
        kv_bytes(
            resolve_model(text(model, "model")),
            whole(tokens, "tokens"),
            whole(batch, "batch"),
            text(kv_precision, "kv_precision", default="bf16").lower(),
        )
        / _GIB
    )


@func
@cell_errors
def LLM_MAX_CONCURRENCY(model: Cell, gpu: Cell, precision: Cell, tp: Cell, isl: Cell, osl: Cell,
                        context_length: Cell = None) -> Any:
    """Sequences of ``isl + osl`` tokens that fit at once in one replica of ``tp`` GPUs (0 = does not fit).
    ``context_length``: as ``LLM_TTFT_MS`` takes it (past the model's native context; blank: refused there).

    Source: ``finops.sizing.memory_fit`` (vLLM accounting, 0.90 memory utilization).

    >>> LLM_MAX_CONCURRENCY("llama-3.1-70b", "h100-sxm", "bf16", 1, 2048, 512)
    0
    """
    return memory_fit(
        text(model, "model"),
        text(gpu, "gpu"),
        precision=text(precision, "precision").lower(),
        tp=whole(tp, "tp"),
        isl=whole(isl, "isl"),
        osl=whole(osl, "osl"),
        context_length=whole(context_length, "context_length", default=None),
    ).max_concurrency


# ---- performance --------------------------------------------------------------------------------------
def _estimate(
    model: Cell,
    gpu: Cell,
    precision: Cell,
    tp: Cell,
    isl: Cell,
    osl: Cell,
    concurrency_: Cell,
    engine: Cell,
    cache_hit_rate: Cell,
    client: Cell = None,
    context_length: Cell = None,
) -> Estimate:
    wanted = optional_text(concurrency_, "concurrency")
    result = estimate(
        text(model, "model"),
        text(gpu, "gpu"),
        precision=text(precision, "precision").lower(),
        tp=whole(tp, "tp"),
        isl=whole(isl, "isl"),
        osl=whole(osl, "osl"),
        concurrency="max" if wanted in (None, "max", "MAX") else whole(concurrency_, "concurrency"),
        engine=text(engine, "engine", default="vllm"),
        cache_hit_rate=number(cache_hit_rate, "cache_hit_rate", default=0.0),
        client=text(client, "client", default="synchronized"),
        context_length=whole(context_length, "context_length", default=None),
    )
    if not result.fits:
        raise InputError(f"does not fit: {result.shortfall_gib:.1f} GiB short per GPU")
    return result


@func
@cell_errors
def LLM_TTFT_MS(
    model: Cell,
    gpu: Cell,
    precision: Cell,
    tp: Cell,
    isl: Cell,
    osl: Cell,
    concurrency: Cell = None,
    engine: Cell = None,
    cache_hit_rate: Cell = None,
    client: Cell = None,
    context_length: Cell = None,
) -> Any:
    """Time to first token in ms of one replica at ``concurrency`` (blank or "max": the KV-cache limit).
    ``client``: "synchronized" (blank: all clients start together, as the calibration's campaigns) or
    "staggered" (a steady state, as AIPerf or NIM's benchmarks measure). ``context_length``: the sequence
    length the engine serves when it runs the model past its native context (RoPE scaling; blank: the native
    context, and ``isl + osl`` beyond it is refused); the same optional argument on every estimate function.

    Source: ``finops.sizing.performance.estimate`` (calibrated prefill and per-step overhead model).
    """
    return _estimate(
        model, gpu, precision, tp, isl, osl, concurrency, engine, cache_hit_rate, client, context_length
    ).ttft_ms


@func
@cell_errors
def LLM_TPOT_MS(
    model: Cell,
    gpu: Cell,
    precision: Cell,
    tp: Cell,
    isl: Cell,
    osl: Cell,
    concurrency: Cell = None,
    engine: Cell = None,
    cache_hit_rate: Cell = None,
    client: Cell = None,
    context_length: Cell = None,
) -> Any:
    """Time per output token (inter-token latency) in ms of one replica at ``concurrency``.

    Source: ``finops.sizing.performance.estimate``.
    """
    return _estimate(
        model, gpu, precision, tp, isl, osl, concurrency, engine, cache_hit_rate, client, context_length
    ).tpot_ms


@func
@cell_errors
def LLM_TOKENS_PER_S(
    model: Cell,
    gpu: Cell,
    precision: Cell,
    tp: Cell,
    isl: Cell,
    osl: Cell,
    concurrency: Cell = None,
    engine: Cell = None,
    cache_hit_rate: Cell = None,
    client: Cell = None,
    context_length: Cell = None,
) -> Any:
    """Output tokens per second of one replica (``tp`` GPUs) at ``concurrency``.

    Source: ``finops.sizing.performance.estimate``.
    """
    return _estimate(
        model, gpu, precision, tp, isl, osl, concurrency, engine, cache_hit_rate, client, context_length
    ).output_tokens_per_s


#: The fields of an estimate ``LLM_ESTIMATE`` answers, by name (``finops estimate --json`` keys).
_ESTIMATE_FIELDS: Registry[str] = Registry("estimate field", {f.name: f.name for f in fields(Estimate)})


@func
@cell_errors
def LLM_ESTIMATE(
    model: Cell,
    gpu: Cell,
    precision: Cell,
    tp: Cell,
    isl: Cell,
    osl: Cell,
    field: Cell,
    concurrency: Cell = None,
    engine: Cell = None,
    cache_hit_rate: Cell = None,
    client: Cell = None,
    context_length: Cell = None,
) -> Any:
    """One field of the estimate of one replica, by its ``finops estimate --json`` name: ``calibrated``
    (``yes``/``no``), ``efficiency_source`` (``engine`` or a vendor fit such as ``amd-cdna3:vllm``), ``kv_precision``,
    ``step_time_source``, ``weights_gib_per_gpu``, ``output_tokens_per_s_per_gpu``, ... A band
    (``ttft_ms_band``, ``tpot_ms_band``, ``output_tokens_per_s_band``) spills its P10 and P90 as one row,
    and is ``-`` where the calibration has none (``finops.cells``: no cell answer is blank or a boolean).
    ``beyond_native_context`` is ``yes`` when ``isl + osl`` runs past the model's native context on the
    ``context_length`` given (without one such a request answers the refusal).

    Source: ``finops.sizing.performance.estimate`` (``Estimate``).

    >>> LLM_ESTIMATE("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256, "efficiency_source")
    'amd-cdna3:vllm'
    >>> LLM_ESTIMATE("llama-3.1-8b", "h100-sxm", "bf16", 1, 1024, 256, "efficiency_source")
    'engine'
    >>> LLM_ESTIMATE("llama-2-7b", "h100-sxm", "fp16", 1, 5000, 500, "beyond_native_context", context_length=5500)
    'yes'
    """
    name = _ESTIMATE_FIELDS[text(field, "field")]
    value = getattr(
        _estimate(model, gpu, precision, tp, isl, osl, concurrency, engine, cache_hit_rate, client, context_length),
        name,
    )
    if isinstance(value, tuple):
        return [list(value)]
    return shown(value)


# ---- search -------------------------------------------------------------------------------------------
@func
@cell_errors
def LLM_SIZE(
    model: Cell,
    isl: Cell,
    osl: Cell,
    concurrency: Cell,
    ttft_ms: Cell = None,
    tpot_ms: Cell = None,
    gpus: Cell = None,
    precisions: Cell = None,
    pricing_model: Cell = None,
    top: Cell = None,
    prices: Cell = None,
    confidence: Cell = None,
    context_length: Cell = None,
) -> Any:
    """Ranked configurations, cheapest per month first, serving ``concurrency`` within the targets (spills).

    ``ttft_ms``/``tpot_ms`` are P99 targets (blank: none); ``gpus`` and ``precisions`` are a range or a
    comma-separated list (blank: every catalog GPU / precision); ``prices`` is ``PriceTable`` (blank: the
    add-in's price book); ``confidence`` (blank: 0.9) sizes every option at that quantile of its own class's
    held-out error (0.9: the pessimistic end of its P10-P90 band; ``finops.sizing.confidence``);
    ``context_length`` as ``LLM_TTFT_MS`` takes it. One row per option: GPU, precision, TP, replicas, GPUs, instance, monthly cost,
    cost per million output tokens at the peak running 24/7 (``cost_per_mtok_peak``) and at the average load
    (``cost_per_mtok_avg``; ``LLM_SIZE`` states no peak/average, so the two are equal; ``LLM_RANKING`` takes
    the Workloads row's ``PeakToAverage``), TTFT and ITL at P99, whether the configuration was measured
    (``calibrated``, else extrapolated) and whose efficiencies the roofline uses (``efficiency_source``:
    ``engine`` or a vendor fit such as ``amd-cdna3:vllm``), and the TTFT and ITL at P99 as a load test would show
    them were the model as optimistic as its 90th-percentile held-out error (``ttft_p99_ms_p90``,
    ``itl_p99_ms_p90``; ``-`` without a band), and ``beyond_native_context`` (``yes`` when ``isl + osl`` runs past
    the model's native context on the ``context_length`` given). Source: ``finops.sizing.search.search``.

    >>> table = LLM_SIZE("llama-3.1-8b", 5000, 500, 50, 1000, None, "h100-sxm", "bf16", "on_demand", 1)
    >>> table[0][:5], table[1][:3]
    (['gpu', 'precision', 'tp', 'replicas', 'gpus'], ['h100-sxm', 'bf16', 1])
    """
    workload = Workload(
        name="LLM_SIZE",
        model=text(model, "model"),
        isl=whole(isl, "isl"),
        osl=whole(osl, "osl"),
        concurrency=number(concurrency, "concurrency"),
        ttft_ms=number(ttft_ms, "ttft_ms", default=None),
        itl_ms=number(tpot_ms, "tpot_ms", default=None),
        gpus=names(gpus),
        precisions=tuple(p.lower() for p in names(precisions)),
        context_length=whole(context_length, "context_length", default=None),
    )
    result = _ranked(
        workload,
        text(pricing_model, "pricing_model", default="on_demand"),
        _book(prices),
        whole(top, "top", default=5),
        number(confidence, "confidence", default=DEFAULT_CONFIDENCE),
    )
    if not result.options:
        raise InputError(result.infeasible_reason or "no priced configuration meets the targets")
    return ranking_table(result.options)


@lru_cache(maxsize=256)
def _ranked(workload: Workload, pricing_model: str, book: PriceBook, top: int,
            confidence: float | None = DEFAULT_CONFIDENCE) -> SearchResult:
    """``search`` remembered per arguments: Excel recalculates a spilled range with unchanged inputs often.

    A price range parses to the same book while its content is unchanged (``price_book_from_range``),
    so an edited Prices table is a new key.
    """
    return search(workload, pricing_model=pricing_model, price_book=book, top=top, confidence=confidence)


@func
@cell_errors
def LLM_SIZING(headers: Cell, row: Cell, field: Cell, prices: Cell = None, pricing_model: Cell = None) -> Any:
    """One figure of a Workloads row's answer: its own choice checked, or the cheapest that works.

    ``headers`` is the Workloads header row, ``row`` the workload's row (``addin._workload_row``);
    ``field`` one of ``MeetsTargets``, ``WhyNot``, ``TtftMs``, ``TpotMs``, ``Replicas``, ``Gpus``,
    ``Instances``, ``GpusPaid``, ``InstanceType``, ``MonthlyCost``, ... ``BestGpu``, ``BestPrecision``,
    ``BestTp``, ``BestGpus``, ``BestInstanceType``, ``BestInstances``, ``BestMonthlyCost``, ``Calibrated``, ``EfficiencySource``,
    ``TtftMsP90``, ``TpotMsP90``, ``BeyondNativeContext`` (``yes`` when the row's ISL + OSL run past the model's
    native context on its ``ContextLength``) (``finops.sizing.figures``). A choice that misses its targets shows
    why in its cost cells, never a cost. Source: ``finops.sizing.choice.size_workload``, the function ``finops size`` and
    ``finops.size`` call.

    >>> headers = ["Workload", "Model", "Precision", "Gpu", "TP", "Concurrency", "ISL", "OSL", "TtftTargetMs"]
    >>> row = ["agent", "qwen3-32b", "bf16", "h100-sxm", 1, 30, 20000, 2000, 2000]
    >>> LLM_SIZING(headers, row, "MonthlyCost"), LLM_SIZING(headers, row, "BestTp")
    ('misses TTFT 2000 ms: 2565 ms', 8)
    """
    return SIZING_FIELDS[text(field, "field")](_sized_row(headers, row, prices, pricing_model, 1))


@func
@cell_errors
def LLM_RANKING(headers: Cell, row: Cell, top: Cell = None, prices: Cell = None, pricing_model: Cell = None) -> Any:
    """The cheapest configurations for a Workloads row, cheapest first (spills; the first is ``Best*``).

    Columns as ``LLM_SIZE``. The template picks each figure with ``=INDEX(LLM_RANKING(...), r, c)``; the
    search runs once per change of its inputs (``_sized`` remembers it). Source: ``finops.sizing.choice.size_workload`` (its whole search).
    """
    sized = _sized_row(headers, row, prices, pricing_model, whole(top, "top", default=5))
    if not sized.search.options:
        raise InputError(sized.search.infeasible_reason or "no priced configuration meets the targets")
    return ranking_table(sized.search.options)


def _sized_row(headers: Cell, row: Cell, prices: Cell, pricing_model: Cell, top: int) -> WorkloadSizing:
    workload, (gpu, precision, tp, engine) = workload_row(headers, row)
    return _sized(workload, gpu, precision, tp, engine, text(pricing_model, "pricing_model", default="on_demand"),
                  _book(prices), top)


@lru_cache(maxsize=256)
def _sized(workload: Workload, gpu: str, precision: str, tp: int, engine: str, pricing_model: str, book: PriceBook,
           top: int) -> WorkloadSizing:
    """``size_workload`` remembered per arguments: every Sizing and TCO cell of a row asks the same question."""
    return size_workload(workload, gpu=gpu, precision=precision, tp=tp, engine=engine, pricing_model=pricing_model,
                         price_book=book, top=top)


# ---- money --------------------------------------------------------------------------------------------
def _book(prices: Cell) -> PriceBook:
    return current_book() if prices is None else price_book_from_range(prices)


@func
@cell_errors
def FINOPS_PRICE(
    provider: Cell, instance_type: Cell, pricing_model: Cell, region: Cell, prices: Cell = None
) -> Any:
    """Effective hourly cost of one instance from the price book (upfront amortized, cheapest payment option).

    ``prices`` is the Prices table range with its header (xlwings Lite: pass ``PriceTable``); omitted,
    the add-in's current price book is used (``FINOPS_PRICE_BOOK`` or the bundled snapshot).
    Source: ``finops.price_book.PriceBook.lookup``.

    >>> from finops.price_book import COLUMNS
    >>> FINOPS_PRICE("gcp", "a3-highgpu-8g", "on_demand", "us-central1", [list(COLUMNS),
    ...     ["gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, "on_demand", "", 88.25, 0, "USD", "2026-07-30", "x"]])
    88.25
    >>> FINOPS_PRICE("gcp", "a3-highgpu-8g", "sometimes", "us-central1", [list(COLUMNS)])
    "#FINOPS: unknown pricing model 'sometimes'"
    """
    return hourly_cost(
        _book(prices),
        text(provider, "provider"),
        text(instance_type, "instance_type"),
        text(pricing_model, "pricing_model"),
        text(region, "region"),
    )


def _money(value: Cell, name: str, currency: Cell) -> Money:
    return Money.of(Decimal(repr(number(value, name))), text(currency, "currency", default="USD"))


@func
@cell_errors
def FINOPS_TCO(capex: Cell, opex_per_month: Cell, months: Cell, currency: Cell = None) -> Any:
    """Total cost of ownership ``capex + opex_per_month x months`` (seed 003).

    Source: ``finops.tco.tco``.

    >>> FINOPS_TCO(9 * 160000, 9 * 9000, 36, "CNY")
    4356000.0
    """
    return float(
        tco(
            _money(capex, "capex", currency),
            _money(opex_per_month, "opex_per_month", currency),
            whole(months, "months"),
        ).amount
    )


@func
@cell_errors
def FINOPS_API_PER_MTOK(model: Cell, isl: Cell, osl: Cell, provider: Cell = None) -> Any:
    """The cheapest managed API's cost per million output tokens for ``model`` at ``isl`` input and ``osl`` output
    tokens a request: ``input price x isl / osl + output price`` (Amazon Bedrock, Vertex AI; ``provider`` aws or
    gcp keeps one), from the bundled token prices, comparable with a fleet's ``FINOPS_COST_PER_MTOK``.

    Source: ``finops.token_prices.TokenPrice.per_million_output``.

    >>> FINOPS_API_PER_MTOK("llama-3.3-70b", 1000, 1000)
    1.44
    """
    price, isl_n, osl_n = _cheapest_api(model, isl, osl, provider)
    return float(price.per_million_output(isl_n, osl_n).amount)


#: What ``FINOPS_API_OFFER`` answers of the cheapest API: its provider (aws, gcp) or its model id.
_API_PARTS = Registry("part", {"provider": "provider", "model": "offer_model"}, aliases={"offer_model": "model"})


@func
@cell_errors
def FINOPS_API_OFFER(model: Cell, isl: Cell, osl: Cell, part: Cell = "model", provider: Cell = None) -> Any:
    """Which managed API ``FINOPS_API_PER_MTOK`` prices for ``model`` at ``isl`` / ``osl``: its ``provider`` (aws,
    gcp) or its ``model`` id (the provider's own, e.g. ``meta.llama3-3-70b-instruct-v1:0``); ties go to the
    provider, then the model id, first in alphabetical order.

    Source: ``finops.token_prices.TokenPriceBook.serving``, ``TokenPrice.per_million_output``.

    >>> FINOPS_API_OFFER("llama-3.3-70b", 1000, 1000), FINOPS_API_OFFER("llama-3.3-70b", 1000, 1000, "provider")
    ('meta.llama3-3-70b-instruct-v1:0', 'aws')
    """
    price, _, _ = _cheapest_api(model, isl, osl, provider)
    return getattr(price, _API_PARTS[text(part, "part")])


def _cheapest_api(model: Cell, isl: Cell, osl: Cell, provider: Cell) -> tuple[Any, float, float]:
    """The bundled token price cheapest per output token at ``isl`` / ``osl`` (then by provider and model id)."""
    name = resolve_model(text(model, "model")).id
    wanted = optional_text(provider, "provider")
    prices = [p for p in TokenPriceBook.bundled().serving(name) if wanted is None or p.provider == wanted.lower()]
    if not prices:
        raise InputError(f"no managed API in the token prices serves {name}"
                         + (f" on {wanted}" if wanted else ""))
    isl_n, osl_n = number(isl, "isl"), number(osl, "osl")
    if osl_n <= 0:
        raise InputError("osl: output tokens per request must be > 0")
    cheapest = min(prices, key=lambda p: (p.per_million_output(isl_n, osl_n).amount, p.provider, p.offer_model))
    return cheapest, isl_n, osl_n


@func
@cell_errors
def FINOPS_COST_PER_MTOK(hourly_cost: Cell, tokens_per_s: Cell, currency: Cell = None) -> Any:
    """Cost of a million tokens: ``hourly_cost x 10^6 / (tokens_per_s x 3600)``.

    Source: ``finops.tco.cost_per_million_tokens``.

    >>> FINOPS_COST_PER_MTOK(36, 10000)
    1.0
    """
    return float(
        cost_per_million_tokens(
            _money(hourly_cost, "hourly_cost", currency), number(tokens_per_s, "tokens_per_s")
        ).amount
    )


@func
@cell_errors
def FINOPS_OWNED_TCO(gpus: Cell, months: Cell, basis: Cell, reference: Cell = None) -> Any:
    """An owned fleet's total over ``months`` in one labelled basis, for ``gpus`` GPUs on whole nodes
    of the cited ``reference`` case (default ``h100-sxm-8gpu``).

    ``basis``: ``cash`` (purchases + OPEX as paid - resale), ``book`` (straight-line depreciation +
    OPEX), ``levelized`` (capital recovery annuity at the cost of capital + OPEX) or ``net_cash``
    (cash - the residual value still held at the end: what ``finops tco`` ranks). Source:
    ``finops.tco.compare_options`` (``Comparison.owned``, :class:`finops.tco.OwnedTco`).

    >>> FINOPS_OWNED_TCO(8, 60, "net_cash")     # 400,000 + 60 x 2,649.5072 (seed 003: CAPEX + OPEX x months)
    558970.432
    """
    case = reference_case(text(reference, "reference", default="h100-sxm-8gpu"))
    result = compare_options(whole(gpus, "gpus"), whole(months, "months"), case.node, [])
    assert result.owned is not None
    return float(result.owned.total(text(basis, "basis")).amount)


# ---- commitment mix -----------------------------------------------------------------------------------
@func
@cell_errors
def FINOPS_MIX(demand: Cell, options: Cell) -> Any:
    """Recommended units per purchase option for an hourly demand profile (spills a table).

    ``demand``: a column of units needed per hour, or a range with a header row naming ``Hour`` and one
    units column (``GPUs``, ``instances``, ...), read by that header; a wider range without one is refused.
    ``options``: a range whose first row is the header
    ``name, kind, hourly_cost`` and optionally ``max_share, max_units`` (the ``finops mix`` options
    file). Returns one row per option (units ``-`` for on-demand and spot), then the total cost,
    the all-on-demand cost and the savings over the profile. The template picks each figure with
    ``=INDEX(FINOPS_MIX(MixDemand,MixOptions), r, c)``; the optimizer runs once per change of its inputs
    (``_mixed`` remembers it). Source: ``finops.mix.optimize_mix``.

    >>> FINOPS_MIX([[8], [8], [20]], [["name", "kind", "hourly_cost"], ["od", "on_demand", 6.88],
    ...                                ["ri", "reserved", 4.3]])[:2]
    [['option', 'kind', 'units', 'share', 'cost'], ['od', 'on_demand', '-', 0.3333333333333333, 82.56]]
    """
    units = [number(v, "demand") for v in _demand_column(demand) if v not in (None, "")]
    choices = [
        MixOption(
            str(r["name"]),
            text(r["kind"], "kind").lower(),
            Decimal(repr(number(r["hourly_cost"], "hourly_cost"))),
            max_share=None if r.get("max_share") is None else number(r["max_share"], "max_share"),
            max_units=None if r.get("max_units") is None else whole(r["max_units"], "max_units"),
        )
        for r in records(options, "options", ("name", "kind", "hourly_cost"))
    ]
    return _mixed(tuple(units), tuple(choices)).table()


@lru_cache(maxsize=32)
def _mixed(units: tuple[float, ...], choices: tuple[MixOption, ...]) -> MixResult:
    """``optimize_mix`` remembered per arguments: every cell that picks one figure of the recommendation
    (``INDEX(FINOPS_MIX(...), r, c)``) asks the same question."""
    return optimize_mix(list(units), list(choices))


def _demand_column(demand: Cell) -> list[Any]:
    """The units per hour of a demand range: its one column, or the column beside ``Hour`` under a header.

    >>> _demand_column([["Hour", "GPUs"], [1, 8], [2, 9]]), _demand_column([[8], [9]])
    ([8, 9], [8, 9])
    """
    rows = grid(demand)
    if len(rows[0]) == 1 or len(rows) == 1:
        return [v for row in rows for v in row]
    header = [str(h).strip().lower() if isinstance(h, str) else None for h in rows[0]]
    units = [j for j, h in enumerate(header) if h and h != "hour"]
    if "hour" not in header or len(units) != 1 or len(header) != 2:
        raise InputError(f"demand: a range of {len(rows[0])} columns needs a header row with Hour and one units "
                         "column (e.g. Hour, GPUs); or pass the units column alone")
    return [row[units[0]] for row in rows[1:]]


#: Every Excel function of the add-in, by the name a cell uses.
UDFS: dict[str, Any] = {
    name: obj
    for name, obj in list(globals().items())
    if name.isupper() and callable(obj) and name.startswith(("LLM_", "FINOPS_"))
}
