"""``finops tco``: owned GPU servers against the price book's cloud options for a steady fleet.

    finops tco --gpus 64 --months 36
    finops tco --gpus 16 --provider gcp --region us-central1 --electricity 0.12 --tokens-per-s 1200 --json
    finops tco --gpus 8 --months 60 --schedule
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..money import Money, quantize
from ._console import amount, compact_table, console, print_json
from ._options import option_groups
from .tco_options import CloudOptions, FleetOptions, OwnedOptions, TokenOptions, WhatIfOptions

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


def register(app: typer.Typer) -> None:
    app.command("tco")(tco)


@option_groups
def tco(fleet: FleetOptions, owned: OwnedOptions, cloud: CloudOptions, tokens: TokenOptions,
        what_if: WhatIfOptions) -> None:
    """Owned CAPEX/OPEX against on-demand, reserved, savings plans/CUDs and spot: monthly, total,
    per GPU-hour and per million tokens."""
    from ..tco import compare_options, reference_case

    start = fleet.first_month()
    case = reference_case(owned.reference)
    if owned.no_owned and cloud.no_cloud:
        raise InputError("--no-owned and --no-cloud leave nothing to compare")
    node = None if owned.no_owned else owned.node(case.node)
    rows = cloud.rows(case, node.gpus_per_node if node else case.node.gpus_per_node)
    result = compare_options(fleet.gpus, fleet.months, node, rows, start=start,
                             owned_name=f"owned {case.name}" if node == case.node else f"owned (from {case.name})",
                             spot=cloud.spot(), discount_rate=owned.discount_rate, currency=owned.currency_code())
    sized = tokens.estimate(case.gpu_model)
    levers = _levers(result, tokens, case.gpu_model, what_if)
    token_rows = [_token_costs(o, tokens.tokens_per_s, sized, tokens.peak_to_average) for o in result.options]
    if fleet.as_json:
        print_json(_payload(result, token_rows, sized, levers))
        return
    _print_options(result, token_rows, start, tokens.peak_to_average)
    if node is not None and result.owned is not None:
        _print_owned(node, result, fleet.schedule)
    if levers:
        _print_levers(result, levers)


def _payload(result: Comparison, token_rows: list[dict[str, Decimal]], sized: Estimate | None,
             levers: list[LeverEffect]) -> dict[str, object]:
    """``--json``: the comparison, each option with its token costs, the sizing estimate and the levers."""
    payload = result.to_dict()
    for entry, tokens in zip(payload["options"], token_rows):  # type: ignore[arg-type]
        entry.update(tokens)
    if sized is not None:
        payload["sizing"] = sized.to_dict()
    if levers:
        payload["what_if"] = {"option": result.cheapest.name, "levers": [_lever_dict(effect) for effect in levers]}
    return payload


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


def _levers(result: Comparison, tokens: TokenOptions, gpu: str, what_if: WhatIfOptions) -> list[LeverEffect]:
    """The what-if levers asked for, priced on the cheapest option (the model's on ``gpu``, as ``--model`` says)."""
    from ..tco import load_shaping, prefix_cache_from_sizing, quantization_from_sizing
    from ..tco import utilization as utilization_lever

    base, utilization, quantize_to, cache, shift = (result.cheapest, what_if.utilization, what_if.quantize,
                                                    what_if.cache, what_if.shift)
    effects: list[LeverEffect] = []
    if (quantize_to or cache is not None) and tokens.model is None:
        raise InputError("--what-if-quantize and --what-if-cache need --model", hint="e.g. --model llama-3.1-70b")
    pair = _pair(utilization, "--what-if-utilization", 2)
    if pair:
        effects.append(utilization_lever(base.monthly, _float(pair[0], "--what-if-utilization"),
                                         _float(pair[1], "--what-if-utilization")))
    if quantize_to and tokens.model is not None:
        target, _, target_tp = quantize_to.partition(":")
        effects.append(quantization_from_sizing(
            tokens.model, gpu, gpus=base.gpus, cost_per_gpu_month=base.per_gpu_hour * 730, isl=tokens.isl,
            osl=tokens.osl, before=tokens.precision, after=target, tp_before=tokens.tp,
            tp_after=int(_float(target_tp, "--what-if-quantize")) if target_tp else tokens.tp,
            engine=tokens.engine, concurrency=tokens.concurrency_or_max))
    if cache is not None and tokens.model is not None:
        effects.append(prefix_cache_from_sizing(
            tokens.model, gpu, monthly_cost=base.monthly, precision=tokens.precision, tp=tokens.tp,
            isl=tokens.isl, osl=tokens.osl, hit_rate_before=tokens.cache_hit_rate, hit_rate_after=cache,
            engine=tokens.engine, concurrency=tokens.concurrency_or_max))
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
