"""``finops tco``: owned GPU servers against the price book's cloud options for a steady fleet.

    finops tco --gpus 64 --months 36
    finops tco --gpus 16 --provider gcp --region us-central1 --electricity 0.12 --tokens-per-s 1200 --json
    finops tco --gpus 8 --months 60 --schedule
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

import typer

from ..depreciation import month_index
from ..errors import InputError
from ..money import Money, quantize
from ..price_book import PriceBook
from ._console import amount, compact_table, console, print_json
from ._options import in_range, month_option

if TYPE_CHECKING:
    from ..sizing import Estimate
    from ..tco import Comparison, LeverEffect, OptionCost, OwnedNode

# The TCO model loads inside the command, so registering it is cheap for the commands that need none
# (finops reconcile).

_MILLI = Decimal("0.001")
#: Token-cost columns: at the peak running 24/7 ("pk"), and at the average load ("avg", --peak-to-average).
_TOKEN_HEADERS = {"per_million_tokens": "M tok pk", "per_million_tokens_average": "M tok avg",
                  "per_million_input": "M in pk", "per_million_input_average": "M in avg",
                  "per_million_output": "M out pk", "per_million_output_average": "M out avg",
                  "per_replica_month": "replica-mo"}
# The options in help panels by what they price: the fleet, owned hardware, cloud prices, tokens, levers.
_FLEET, _OWNED, _CLOUD = "Fleet and output", "Owned hardware (default: the reference case)", "Cloud prices"
_TOKENS, _WHAT_IF = "Cost per token", "What if (cost levers)"


def register(app: typer.Typer) -> None:
    app.command("tco")(tco)


def tco(gpus: int = typer.Option(8, help="GPUs running all the time", rich_help_panel=_FLEET),
        months: int = typer.Option(36, help="horizon in months (730 hours each)", rich_help_panel=_FLEET),
        start: str = typer.Option("2026-01", help="first month, YYYY-MM", rich_help_panel=_FLEET),
        reference: str = typer.Option("h100-sxm-8gpu", help="owned reference case to start from "
                                      "(finops/catalog/data/owned_reference.csv)", rich_help_panel=_OWNED),
        currency: str | None = typer.Option(None, help="currency of the owned prices (default: the "
                                            "reference case's); cloud prices must be in the same one", rich_help_panel=_OWNED),
        node_price: str | None = typer.Option(None, "--node-price", help="all-in price of one node", rich_help_panel=_OWNED),
        gpu_price: str | None = typer.Option(None, "--gpu-price",
                                             help="all-in price per GPU (node price = this x GPUs per node)", rich_help_panel=_OWNED),
        gpus_per_node: int | None = typer.Option(None, "--gpus-per-node", rich_help_panel=_OWNED),
        node_power_kw: float | None = typer.Option(None, "--node-power-kw", help="maximum node power, kW", rich_help_panel=_OWNED),
        avg_power_share: float | None = typer.Option(None, "--avg-power-share",
                                                        help="average draw as a share of the maximum", rich_help_panel=_OWNED),
        pue: float | None = typer.Option(None, help="facility power / IT power", rich_help_panel=_OWNED),
        electricity: str | None = typer.Option(None, help="price per kWh", rich_help_panel=_OWNED),
        colocation: str | None = typer.Option(None, help="colocation price per kW-month", rich_help_panel=_OWNED),
        support: str | None = typer.Option(None, help="support and operations per node-month", rich_help_panel=_OWNED),
        support_share: float | None = typer.Option(None, "--support-share",
                                                      help="support as a share of the node price per year", rich_help_panel=_OWNED),
        life_months: int | None = typer.Option(None, "--life-months", rich_help_panel=_OWNED),
        residual_share: float | None = typer.Option(None, "--residual-share",
                                                       help="resale value as a share of the price", rich_help_panel=_OWNED),
        cost_of_capital: float | None = typer.Option(None, "--cost-of-capital",
                                                        help="annual rate, e.g. 0.10; 0 = straight-line", rich_help_panel=_OWNED),
        discount_rate: float | None = typer.Option(None, "--discount-rate", help="annual rate for the owned "
                                                      "fleet's NPV of cash (default: --cost-of-capital)", rich_help_panel=_OWNED),
        no_owned: bool = typer.Option(False, "--no-owned", help="compare cloud options only", rich_help_panel=_OWNED),
        no_cloud: bool = typer.Option(False, "--no-cloud", help="cost the owned fleet only", rich_help_panel=_CLOUD),
        provider: str | None = typer.Option(None, help="aws or gcp (default: every provider)", rich_help_panel=_CLOUD),
        region: str | None = typer.Option(None, help="default: the cheapest on-demand region", rich_help_panel=_CLOUD),
        instance_type: str | None = typer.Option(None, "--instance-type",
                                                    help="default: the 8-GPU type of the reference GPU", rich_help_panel=_CLOUD),
        price_book: Path | None = typer.Option(
            None, "--price-book", help="a pulled price book (default: FINOPS_PRICE_BOOK or the bundled snapshot)", rich_help_panel=_CLOUD),
        spot_lost_work: float = typer.Option(0.05, "--spot-lost-work",
                                             help="share of spot work lost to interruptions and redone", rich_help_panel=_CLOUD),
        spot_fallback: float = typer.Option(0.10, "--spot-fallback",
                                            help="share of spot hours that fall back to on-demand", rich_help_panel=_CLOUD),
        spot_max_share: float = typer.Option(0.30, "--spot-max-share", help="cap on the fleet's spot share", rich_help_panel=_CLOUD),
        tokens_per_s: float | None = typer.Option(None, "--tokens-per-s",
                                                     help="tokens per second served per GPU at the peak", rich_help_panel=_TOKENS),
        peak_to_average: float | None = typer.Option(
            None, "--peak-to-average", help="peak over average load: also price tokens at the average load, "
                                            "the fleet still sized for the peak", rich_help_panel=_TOKENS),
        model: str | None = typer.Option(None, help="price tokens from the sizing engine for this model", rich_help_panel=_TOKENS),
        precision: str = typer.Option("fp8", help="weight precision for --model", rich_help_panel=_TOKENS),
        tp: int = typer.Option(1, help="GPUs per replica (tensor parallel) for --model", rich_help_panel=_TOKENS),
        isl: int = typer.Option(2000, help="input tokens per request for --model", rich_help_panel=_TOKENS),
        osl: int = typer.Option(500, help="output tokens per request for --model", rich_help_panel=_TOKENS),
        engine: str = typer.Option("vllm", help="serving engine for --model: vllm, sglang, trtllm", rich_help_panel=_TOKENS),
        concurrency: int | None = typer.Option(None, help="running requests per replica (default: "
                                                  "the most the KV cache holds)", rich_help_panel=_TOKENS),
        cache_hit_rate: float = typer.Option(0.0, "--cache-hit-rate", help="prefix-cache hit rate for --model", rich_help_panel=_TOKENS),
        what_if_utilization: str | None = typer.Option(
            None, "--what-if-utilization", help="BEFORE:AFTER utilization, e.g. 0.4:0.8 (seed 000)", rich_help_panel=_WHAT_IF),
        what_if_quantize: str | None = typer.Option(
            None, "--what-if-quantize", help="PRECISION[:TP], priced with --model against --precision", rich_help_panel=_WHAT_IF),
        what_if_cache: float | None = typer.Option(
            None, "--what-if-cache", help="prefix-cache hit rate to reach, priced with --model", rich_help_panel=_WHAT_IF),
        what_if_shift: str | None = typer.Option(
            None, "--what-if-shift", help="PEAK:OFFPEAK:SHIFTABLE GPUs of batch work moved off-peak", rich_help_panel=_WHAT_IF),
        schedule: bool = typer.Option(False, "--schedule", help="print the owned fleet month by month", rich_help_panel=_FLEET),
        as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables", rich_help_panel=_FLEET)) -> None:
    """Owned CAPEX/OPEX against on-demand, reserved, savings plans/CUDs and spot: monthly, total,
    per GPU-hour and per million tokens."""
    from ..tco import SpotPolicy, cloud_rows, compare_options, reference_case

    start = month_option(start, "--start")
    in_range(gpus, "--gpus", 1, 10_000_000)
    in_range(months, "--months", 1, 1200, hint="a horizon of up to 100 years, e.g. --months 36")
    if month_index(start) + months - 1 > month_index("9999-12"):
        raise InputError(f"--start {start} with --months {months} ends after 9999-12",
                         hint="start earlier or shorten the horizon")
    case = reference_case(reference)
    if no_owned and no_cloud:
        raise InputError("--no-owned and --no-cloud leave nothing to compare")
    node = None if no_owned else _owned_node(
        case.node, currency=currency, node_price=node_price, gpu_price=gpu_price, gpus_per_node=gpus_per_node,
        node_power_kw=node_power_kw, avg_power_share=avg_power_share, pue=pue, electricity=electricity,
        colocation=colocation, support=support, support_share=support_share, life_months=life_months,
        residual_share=residual_share, cost_of_capital=cost_of_capital)
    rows = []
    if not no_cloud:
        book = PriceBook.read(price_book) if price_book else PriceBook.current()
        per_node = node.gpus_per_node if node else case.node.gpus_per_node
        rows = cloud_rows(book, gpu_model=case.gpu_model, provider=provider, region=region,
                          instance_type=instance_type, gpus_per_instance=per_node, cited=case.cloud_price_row())
        if not rows and (provider or region or instance_type):
            raise InputError(f"no prices for {provider or 'any provider'} {instance_type or case.gpu_model} "
                             f"in {region or 'any region'}",
                             hint="see `finops prices show`, or pull prices with `finops prices pull`")
    result = compare_options(gpus, months, node, rows, start=start, owned_name=f"owned {case.name}" if node == case.node else f"owned (from {case.name})",
                             spot=SpotPolicy(spot_lost_work, spot_fallback, spot_max_share),
                             discount_rate=discount_rate, currency=currency.strip().upper() if currency else None)
    sizing = sized = None
    if model is not None:
        from ..sizing import estimate

        sizing = _Sizing(model, case.gpu_model, precision, tp, isl, osl, engine,
                         "max" if concurrency is None else concurrency,
                         cache_hit_rate)
        sized = estimate(sizing.model, sizing.gpu, precision=sizing.precision, tp=sizing.tp, isl=sizing.isl,
                         osl=sizing.osl, engine=sizing.engine, concurrency=sizing.concurrency,
                         cache_hit_rate=sizing.cache_hit_rate)
    levers = _levers(result, sizing, utilization=what_if_utilization, quantize_to=what_if_quantize,
                     cache=what_if_cache, shift=what_if_shift)
    token_rows = [_token_costs(o, tokens_per_s, sized, peak_to_average) for o in result.options]
    if as_json:
        payload = result.to_dict()
        for entry, tokens in zip(payload["options"], token_rows):  # type: ignore[arg-type]
            entry.update(tokens)
        if sized is not None:
            payload["sizing"] = sized.to_dict()
        if levers:
            payload["what_if"] = {"option": result.cheapest.name,
                                  "levers": [_lever_dict(effect) for effect in levers]}
        print_json(payload)
        return
    _print_options(result, token_rows, start, peak_to_average)
    if node is not None and result.owned is not None:
        _print_owned(node, result, schedule)
    if levers:
        _print_levers(result, levers)


def _owned_node(base: OwnedNode, *, currency: str | None, node_price: str | None, gpu_price: str | None,
                gpus_per_node: int | None, node_power_kw: float | None, avg_power_share: float | None,
                pue: float | None, electricity: str | None, colocation: str | None, support: str | None,
                support_share: float | None, life_months: int | None, residual_share: float | None,
                cost_of_capital: float | None) -> OwnedNode:
    """The reference node with the command line's overrides; another currency needs every money figure."""
    code = (currency or base.currency).strip().upper()
    if node_price is not None and gpu_price is not None:
        raise InputError("give --node-price or --gpu-price, not both")
    if code != base.currency:
        missing = [name for name, value in (("--node-price or --gpu-price", node_price or gpu_price),
                                            ("--electricity", electricity), ("--colocation", colocation))
                   if value is None]
        if missing:
            raise InputError(f"--currency {code} needs {', '.join(missing)} in {code}",
                             hint=f"the reference case is in {base.currency}; give every owned price in {code}")

    def cash(text: str | None, option: str) -> Money | None:
        if text is None:
            return None
        try:
            return Money.of(text, code)
        except InputError as exc:
            raise InputError(f"{option}: {exc.message}", hint=f"an amount in {code}, e.g. 0.12") from None

    per_node = gpus_per_node or base.gpus_per_node
    price = cash(node_price, "--node-price") or (cash(gpu_price, "--gpu-price") * per_node if gpu_price else None)
    fixed_support = cash(support, "--support")
    if fixed_support is None and code != base.currency:
        fixed_support = Money.zero(code)
    overrides = {"node_price": price, "gpus_per_node": gpus_per_node,
                 "node_power_kw": node_power_kw, "avg_power_share": avg_power_share, "pue": pue,
                 "electricity_per_kwh": cash(electricity, "--electricity"),
                 "colocation_per_kw_month": cash(colocation, "--colocation"),
                 "support_per_node_month": fixed_support, "support_share_per_year": support_share,
                 "life_months": life_months, "residual_share": residual_share, "cost_of_capital": cost_of_capital}
    return dataclasses.replace(base, **{k: v for k, v in overrides.items() if v is not None})


def _token_costs(option: OptionCost, tokens_per_s: float | None, sized: Estimate | None,
                 peak_to_average: float | None) -> dict[str, Decimal]:
    """Per-million-token costs of one option at the peak (from a per-GPU rate, and/or a sizing estimate),
    each followed by its ``_average`` at the average load when ``peak_to_average`` is given."""
    costs: dict[str, Decimal] = {}
    if tokens_per_s is not None:
        costs["per_million_tokens"] = quantize(option.per_million_tokens(tokens_per_s).amount, _MILLI)
        if peak_to_average is not None:
            costs["per_million_tokens_average"] = quantize(
                option.per_million_tokens(tokens_per_s, peak_to_average).amount, _MILLI)
    if sized is not None:
        from ..tco import replica_cost

        replica = replica_cost(sized, option.per_gpu_hour)
        bases = [("", replica.tokens)]
        if peak_to_average is not None:
            bases.append(("_average", replica.tokens.at_average(peak_to_average)))
        for suffix, tokens in bases:
            costs[f"per_million_input{suffix}"] = quantize(tokens.per_million_input.amount, _MILLI)
            costs[f"per_million_output{suffix}"] = quantize(tokens.per_million_output.amount, _MILLI)
        costs["per_replica_month"] = quantize(replica.replica_month.amount)
    return costs


def _pair(text: str | None, option: str, parts: int) -> list[str] | None:
    if text is None:
        return None
    values = text.split(":")
    if len(values) != parts or not all(v.strip() for v in values):
        raise InputError(f"{option} {text!r} needs {parts} values separated by ':'",
                         hint={"--what-if-utilization": "e.g. 0.4:0.8", "--what-if-shift": "e.g. 40:10:8"}.get(option))
    return values


class _Sizing(NamedTuple):
    """The sizing-engine settings of ``--model`` and its companions."""

    model: str
    gpu: str
    precision: str
    tp: int
    isl: int
    osl: int
    engine: str
    concurrency: int | Literal["max"]
    cache_hit_rate: float


def _levers(result: Comparison, sizing: _Sizing | None, *, utilization: str | None, quantize_to: str | None,
            cache: float | None, shift: str | None) -> list[LeverEffect]:
    """The what-if levers asked for, priced on the cheapest option."""
    from ..tco import load_shaping, prefix_cache_from_sizing, quantization_from_sizing
    from ..tco import utilization as utilization_lever

    base = result.cheapest
    effects: list[LeverEffect] = []
    if (quantize_to or cache is not None) and sizing is None:
        raise InputError("--what-if-quantize and --what-if-cache need --model", hint="e.g. --model llama-3.1-70b")
    pair = _pair(utilization, "--what-if-utilization", 2)
    if pair:
        effects.append(utilization_lever(base.monthly, _float(pair[0], "--what-if-utilization"),
                                         _float(pair[1], "--what-if-utilization")))
    if quantize_to and sizing is not None:
        target, _, target_tp = quantize_to.partition(":")
        effects.append(quantization_from_sizing(
            sizing.model, sizing.gpu, gpus=base.gpus, cost_per_gpu_month=base.per_gpu_hour * 730, isl=sizing.isl,
            osl=sizing.osl, before=sizing.precision, after=target, tp_before=sizing.tp,
            tp_after=int(_float(target_tp, "--what-if-quantize")) if target_tp else sizing.tp,
            engine=sizing.engine, concurrency=sizing.concurrency))
    if cache is not None and sizing is not None:
        effects.append(prefix_cache_from_sizing(
            sizing.model, sizing.gpu, monthly_cost=base.monthly, precision=sizing.precision, tp=sizing.tp,
            isl=sizing.isl, osl=sizing.osl, hit_rate_before=sizing.cache_hit_rate, hit_rate_after=cache,
            engine=sizing.engine, concurrency=sizing.concurrency))
    triple = _pair(shift, "--what-if-shift", 3)
    if triple:
        peak, offpeak, shiftable = (_float(v, "--what-if-shift") for v in triple)
        effects.append(load_shaping(peak, offpeak, shiftable, cost_per_unit_month=base.per_gpu_hour * 730))
    return effects


def _float(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{option}: expected a number, got {text!r}") from None


def _lever_dict(effect: LeverEffect) -> dict[str, object]:
    return {"lever": effect.lever, "before": quantize(effect.before.amount), "after": quantize(effect.after.amount),
            "saved": quantize(effect.saved.amount), "saved_share": round(effect.saved_share, 4),
            "detail": effect.detail}


def _print_levers(result: Comparison, levers: list[LeverEffect]) -> None:
    table = compact_table(f"what-if levers on {result.cheapest.name}, per month",
                   ["lever", "before", "after", "saved", "detail"], text=("detail",))
    for effect in levers:
        table.add_row(effect.lever, _amount(effect.before), _amount(effect.after), _amount(effect.saved),
                      effect.detail)
    console.print(table)


def _print_options(result: Comparison, token_rows: list[dict[str, Decimal]], start: str,
                   peak_to_average: float | None) -> None:
    """Stacked cells (provider and instance over the pricing; month over total; CAPEX over OPEX over upfront)
    keep every figure whole in an 80-column terminal; the currency is named once, in the title."""
    from ..tco import TOTAL_BASIS

    currency = result.options[0].total.currency
    parts = [(name, attribute) for name, attribute in (("CAPEX", "capex"), ("OPEX", "opex"), ("upfront", "upfront"))
             if name == "OPEX" or any(getattr(o, attribute).amount for o in result.options)]
    columns = ["option", "units", "per\nGPU-h", f"per month\ntotal {result.months} mo",
               "\n".join(name for name, _ in parts)]
    token_columns = list(token_rows[0]) if token_rows else []
    columns += ["\n".join(_TOKEN_HEADERS[c] for c in token_columns)] if token_columns else []
    table = compact_table(f"{result.gpus} GPUs for {result.months} months from {start} ({currency}), "
                          "cheapest first", columns)
    table.columns[0].min_width = 17  # "gcp a3-highgpu-8g" on one line
    for o, tokens in zip(result.options, token_rows):
        where, _, pricing = o.name.partition(" ")
        instance, _, pricing = pricing.partition(" ")
        table.add_row(f"{where} {instance}" + (f"\n{pricing}" if pricing else ""), str(o.units),
                      f"{o.per_gpu_hour.amount:.4f}", f"{_amount(o.monthly)}\n{_amount(o.total)}",
                      "\n".join(_amount(getattr(o, attribute)) for _, attribute in parts),
                      *(["\n".join(f"{tokens[c]:,}" for c in token_columns)] if token_columns else []))
    console.print(table)
    console.print(f"per month: the steady rate (owned levelized, cloud upfront amortized); total {result.months} "
                  f"mo, which ranks: {TOTAL_BASIS} (docs/tco.md)")
    if token_rows and token_rows[0]:
        console.print("M tok/in/out: cost per million tokens at the peak load running 24/7 (pk)"
                      + (f" and at the average load, peak/average {peak_to_average:g}, the fleet still sized for "
                         "the peak (avg)" if peak_to_average is not None else ""))
    for o in result.options:
        if o.note:
            console.print(f"  {o.name}: {o.note}")


def _print_owned(node: OwnedNode, result: Comparison, schedule: bool) -> None:
    owned = result.owned
    assert owned is not None
    console.print(
        f"owned per node-month: power {_amount(node.power_per_month())}, colocation "
        f"{_amount(node.colocation_per_month())}, support {_amount(node.support_per_month())}; capital "
        f"{_amount(node.capital_per_month(cost_of_capital=False))} straight-line, "
        f"{_amount(node.capital_per_month())} levelized; per GPU-hour "
        f"{node.cost_per_gpu_hour(cost_of_capital=False).amount:.4f} straight-line, "
        f"{node.cost_per_gpu_hour().amount:.4f} with cost of capital")
    console.print(f"owned over the horizon: CAPEX {_amount(owned.capex)}, OPEX {_amount(owned.opex)}, "
                  f"depreciation {_amount(owned.depreciation)}, closing book value "
                  f"{_amount(owned.closing_book_value)}"
                  + (f", NPV of cash {_amount(owned.npv)}" if owned.npv is not None else ""))
    rate = f"{node.cost_of_capital:.0%} cost of capital" if node.cost_of_capital else "no cost of capital"
    console.print(f"owned totals over {result.months} months: cash {_amount(owned.cash_total)} (purchases + OPEX "
                  f"as paid - resale); book {_amount(owned.book_total)} (straight-line depreciation + OPEX); "
                  f"levelized {_amount(owned.levelized_total)} (capital recovery annuity at {rate} + OPEX); "
                  f"ranked on net cash {_amount(owned.net_cash_total)} (cash - "
                  f"{_amount(owned.held_residual)} residual value still held)")
    if not schedule:
        return
    table = compact_table("owned fleet month by month", ["month", "CAPEX\ndepreciation", "power\ncolocation",
                                                           "support\nOPEX", "book cost\ncash"])
    table.columns[0].no_wrap = True  # two-line cells keep a year-long schedule's figures whole at 80 columns
    for m in owned.schedule:
        table.add_row(m.month, *(f"{_amount(a)}\n{_amount(b)}" for a, b in (
            (m.capex, m.depreciation), (m.power, m.colocation), (m.support, m.opex), (m.book_cost, m.cash))))
    console.print(table)


def _amount(value: Money) -> str:
    return amount(value, value.currency)
