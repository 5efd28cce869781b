"""``finops tco``: owned GPU servers against the price book's cloud options for a steady fleet.

    finops tco --gpus 64 --months 36
    finops tco --gpus 16 --provider gcp --region us-central1 --electricity 0.12 --tokens-per-s 1200 --json
    finops tco --gpus 8 --months 60 --schedule
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..errors import InputError
from ..money import Money
from ..price_book import PriceBook
from ..tco import Comparison, OwnedNode, SpotPolicy, cloud_rows, compare_options, reference_case
from ._console import console, print_json


def register(app: typer.Typer) -> None:
    @app.command("tco")
    def tco(gpus: int = typer.Option(8, help="GPUs running all the time"),
            months: int = typer.Option(36, help="horizon in months (730 hours each)"),
            start: str = typer.Option("2026-01", help="first month, YYYY-MM"),
            reference: str = typer.Option("h100-sxm-8gpu", help="owned reference case to start from "
                                          "(finops/catalog/data/owned_reference.csv)"),
            node_price: Optional[str] = typer.Option(None, "--node-price", help="all-in price of one node"),
            gpus_per_node: Optional[int] = typer.Option(None, "--gpus-per-node"),
            node_power_kw: Optional[float] = typer.Option(None, "--node-power-kw", help="maximum node power, kW"),
            avg_power_share: Optional[float] = typer.Option(None, "--avg-power-share",
                                                            help="average draw as a share of the maximum"),
            pue: Optional[float] = typer.Option(None, help="facility power / IT power"),
            electricity: Optional[str] = typer.Option(None, help="price per kWh"),
            colocation: Optional[str] = typer.Option(None, help="colocation price per kW-month"),
            support: Optional[str] = typer.Option(None, help="support and operations per node-month"),
            support_share: Optional[float] = typer.Option(None, "--support-share",
                                                          help="support as a share of the node price per year"),
            life_months: Optional[int] = typer.Option(None, "--life-months"),
            residual_share: Optional[float] = typer.Option(None, "--residual-share",
                                                           help="resale value as a share of the price"),
            cost_of_capital: Optional[float] = typer.Option(None, "--cost-of-capital",
                                                            help="annual rate, e.g. 0.10; 0 = straight-line"),
            no_owned: bool = typer.Option(False, "--no-owned", help="compare cloud options only"),
            provider: Optional[str] = typer.Option(None, help="aws or gcp (default: every provider)"),
            region: Optional[str] = typer.Option(None, help="default: the cheapest on-demand region"),
            instance_type: Optional[str] = typer.Option(None, "--instance-type",
                                                        help="default: the 8-GPU type of the reference GPU"),
            price_book: Optional[Path] = typer.Option(None, "--price-book",
                                                      help="a pulled price book (default: FINOPS_PRICE_BOOK "
                                                           "or the bundled snapshot)"),
            spot_lost_work: float = typer.Option(0.05, "--spot-lost-work",
                                                 help="share of spot work lost to interruptions and redone"),
            spot_fallback: float = typer.Option(0.10, "--spot-fallback",
                                                help="share of spot hours that fall back to on-demand"),
            spot_max_share: float = typer.Option(0.30, "--spot-max-share", help="cap on the fleet's spot share"),
            tokens_per_s: Optional[float] = typer.Option(None, "--tokens-per-s",
                                                         help="tokens per second served per GPU"),
            schedule: bool = typer.Option(False, "--schedule", help="print the owned fleet month by month"),
            as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables")) -> None:
        """Owned CAPEX/OPEX against on-demand, reserved, savings plans/CUDs and spot: monthly, total,
        per GPU-hour and per million tokens."""
        case = reference_case(reference)
        node = None if no_owned else _owned_node(case.node, node_price=node_price, gpus_per_node=gpus_per_node,
                                                 node_power_kw=node_power_kw, avg_power_share=avg_power_share,
                                                 pue=pue, electricity=electricity, colocation=colocation,
                                                 support=support, support_share=support_share,
                                                 life_months=life_months, residual_share=residual_share,
                                                 cost_of_capital=cost_of_capital)
        book = PriceBook.read(price_book) if price_book else PriceBook.current()
        per_node = node.gpus_per_node if node else case.node.gpus_per_node
        rows = cloud_rows(book, gpu_model=case.gpu_model, provider=provider, region=region,
                          instance_type=instance_type, gpus_per_instance=per_node, cited=case.cloud_price_row())
        if not rows and (provider or region or instance_type):
            raise InputError(f"no prices for {provider or 'any provider'} {instance_type or case.gpu_model} "
                             f"in {region or 'any region'}",
                             hint="see `finops prices show`, or pull prices with `finops prices pull`")
        result = compare_options(gpus, months, node, rows, start=start, owned_name=f"owned {case.name}",
                                 spot=SpotPolicy(spot_lost_work, spot_fallback, spot_max_share))
        if as_json:
            payload = result.to_dict()
            if tokens_per_s is not None:
                payload["tokens_per_s_per_gpu"] = tokens_per_s
                for entry, option in zip(payload["options"], result.options):  # type: ignore[arg-type]
                    entry["per_million_tokens"] = option.per_million_tokens(tokens_per_s).rounded().amount
            print_json(payload)
            return
        _print_options(result, tokens_per_s, start)
        if node is not None and result.owned is not None:
            _print_owned(node, result, schedule)


def _owned_node(base: OwnedNode, *, node_price: str | None, gpus_per_node: int | None, node_power_kw: float | None,
                avg_power_share: float | None, pue: float | None, electricity: str | None, colocation: str | None,
                support: str | None, support_share: float | None, life_months: int | None,
                residual_share: float | None, cost_of_capital: float | None) -> OwnedNode:
    currency = base.currency

    def cash(text: str | None, option: str) -> Money | None:
        if text is None:
            return None
        try:
            return Money.of(text, currency)
        except InputError as exc:
            raise InputError(f"{option}: {exc.message}", hint=f"an amount in {currency}, e.g. 0.12") from None

    overrides = {"node_price": cash(node_price, "--node-price"), "gpus_per_node": gpus_per_node,
                 "node_power_kw": node_power_kw, "avg_power_share": avg_power_share, "pue": pue,
                 "electricity_per_kwh": cash(electricity, "--electricity"),
                 "colocation_per_kw_month": cash(colocation, "--colocation"),
                 "support_per_node_month": cash(support, "--support"), "support_share_per_year": support_share,
                 "life_months": life_months, "residual_share": residual_share, "cost_of_capital": cost_of_capital}
    return dataclasses.replace(base, **{k: v for k, v in overrides.items() if v is not None})


def _print_options(result: Comparison, tokens_per_s: float | None, start: str) -> None:
    currency = result.options[0].total.currency
    columns = ["option", "units", "per GPU-h", "per month", f"total {result.months} mo", "CAPEX", "OPEX", "upfront"]
    if tokens_per_s is not None:
        columns.append("per M tokens")
    table = _table(f"{result.gpus} GPUs for {result.months} months from {start} ({currency}), cheapest first",
                   columns)
    for o in result.options:
        cells = [o.name, str(o.units), f"{o.per_gpu_hour.amount:.4f}", _amount(o.monthly), _amount(o.total),
                 _amount(o.capex), _amount(o.opex), _amount(o.upfront)]
        if tokens_per_s is not None:
            cells.append(f"{o.per_million_tokens(tokens_per_s).amount:.4f}")
        table.add_row(*cells)
    console.print(table)
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
    if not schedule:
        return
    table = _table("owned fleet month by month", ["month", "CAPEX", "depreciation", "power", "colocation",
                                                   "support", "OPEX", "book cost", "cash"])
    for m in owned.schedule:
        table.add_row(m.month, _amount(m.capex), _amount(m.depreciation), _amount(m.power), _amount(m.colocation),
                      _amount(m.support), _amount(m.opex), _amount(m.book_cost), _amount(m.cash))
    console.print(table)


def _table(title: str, columns: list[str]) -> Table:
    """Numbers fold onto a second line in a narrow terminal instead of being cut."""
    table = Table(title=title)
    table.add_column(columns[0], overflow="fold", min_width=7)
    for column in columns[1:]:
        table.add_column(column, justify="right", overflow="fold")
    return table


def _amount(value: Money) -> str:
    return f"{value.rounded().amount:,}"
