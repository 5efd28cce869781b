"""``finops mix``: the cheapest commitment mix for an hourly demand profile, and the tools around it.

    finops mix --demand demand.csv --options options.csv [--json]
    finops mix --demand demand.csv --provider gcp --instance-type a3-highgpu-8g --region us-central1 [--demand-unit accelerators]
    finops mix generate --peak 40 --growth 0.5 --campaign 314:3:10 --out demand.csv
    finops mix scenarios --demand demand.csv --options options.csv --low 0.7 --high 1.3
    finops mix ladder --demand demand-3y.csv --options options.csv
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..money import quantize
from ._console import amount, compact_table, console, print_json, shared_currency
from ._options import in_range

if TYPE_CHECKING:
    import numpy as np

    from ..mix import Campaign, MixOption, MixResult, Recommendation

# The mix model (numpy) loads inside each command, so registering them is cheap for the commands that
# need none (finops reconcile).

#: The longest profile ``mix generate`` writes: 20 years of hours.
MAX_HOURS = 20 * 8784

_DEMAND = typer.Option(None, "--demand", help="CSV with columns hour and accelerators (or gpus, chips), instances "
                                             "or units (unit not stated), one row per hour")
_OPTIONS = typer.Option(None, "--options", help="CSV with columns name, kind, hourly_cost [, max_share, max_units...]")
_JSON = typer.Option(False, "--json", help="print JSON instead of tables")


def register(app: typer.Typer) -> None:
    mix = typer.Typer(help="Optimize the core + elastic commitment mix (owned, reserved, savings plan, "
                           "on-demand, spot) for an hourly demand profile.", invoke_without_command=True)
    app.add_typer(mix, name="mix")

    mix.callback()(optimize)
    mix.command("generate")(generate)
    mix.command("profile")(profile)
    mix.command("scenarios")(scenarios)
    mix.command("ladder")(ladder)


def optimize(ctx: typer.Context, demand: Path | None = _DEMAND, options: Path | None = _OPTIONS,
             provider: str | None = typer.Option(None, help="instead of --options: prices from the price "
                                                               "book for this provider (aws or gcp)"),
             instance_type: str | None = typer.Option(None, "--instance-type"),
             region: str | None = typer.Option(None),
             spot_share: float = typer.Option(0.3, "--spot-share", help="with the price book: spot cap"),
             demand_unit: str | None = typer.Option(None, "--demand-unit",
                                                    help="with the price book: what the demand counts, "
                                                         "accelerators or instances (converted to whole "
                                                         "instances); a file whose header names its unit "
                                                         "needs none, and must agree with it"),
             as_json: bool = _JSON,
             shift_batch: float = typer.Option(0.0, "--shift-batch",
                                               help="also price moving this share of each day's work "
                                                    "off-peak (load shaping)"),
             compare: bool = typer.Option(True, "--compare/--no-compare",
                                          help="also cost the AWS/GCP recommenders' rules and a -30 %/+50 % "
                                               "stress test")) -> None:
    """Units per option, cost per month and year, utilization, coverage and savings against on-demand."""
    from ..mix import compare_recommenders, load_shaping, optimize_mix, recommenders_for, stress_test

    if ctx.invoked_subcommand is not None:
        return
    profile, choices, demand_path = _demand_and_options(demand, options, provider, instance_type, region,
                                                        spot_share, demand_unit)
    result = optimize_mix(profile, choices)
    rows = compare_recommenders(profile, choices, recommenders_for(provider)) if compare else []   # its own rules
    stress = stress_test(profile, choices, result.units) if compare else {}
    shaping = load_shaping(profile, choices, shift_batch) if shift_batch else None
    if as_json:
        payload = result.to_dict()
        if compare:
            payload["recommenders"] = [r.to_dict() for r in rows[1:]]
            payload["stress"] = {f"{factor:g}": _brief(r) for factor, r in stress.items()}
        if shaping:
            payload["load_shaping"] = shaping.to_dict()
        print_json(payload)
        return
    _print_mix(result, f"mix for {demand_path.name} ({len(profile):,} hours)")
    if compare:
        _print_recommenders(rows, stress)
    if shaping:
        console.print(f"shifting {shaping.batch_share:.0%} of each day's work off-peak: units "
                      f"{_units(shaping.after.units)}, cost {shaping.after.total_cost.rounded()}, "
                      f"saves {shaping.saved.rounded()}")


def _demand_and_options(demand: Path | None, options: Path | None, provider: str | None, instance_type: str | None,
                        region: str | None, spot_share: float, demand_unit: str | None
                        ) -> tuple[np.ndarray, list[MixOption], Path]:
    """(hourly demand, options, the demand's file): from ``--demand`` and ``--options``, or with ``--provider``,
    ``--instance-type`` and ``--region`` the price book's options, the demand converted to whole instances."""
    from ..mix import (
        in_instances,
        options_from_prices,
        read_demand,
        read_demand_csv,
        read_options_csv,
        resolve_unit,
    )
    from ..price_book import PriceBook

    if options is None and provider and instance_type and region and demand is not None:
        stated = read_demand(demand)
        unit = resolve_unit(stated.unit, demand_unit, str(demand), stated.column)
        if unit is None:
            raise InputError(f"--demand-unit is needed with --provider: {demand.name}'s column "
                             f"{stated.column!r} does not say whether it counts accelerators or instances",
                             hint="name the column accelerators (or gpus, chips) or instances, or give "
                                  "--demand-unit accelerators / --demand-unit instances")
        book = PriceBook.current()
        per_instance = next((r.gpu_count for r in book.filter(provider=provider, instance_type=instance_type,
                                                               region=region)), 1)
        profile = in_instances(stated.units, unit, accelerators_per_instance=per_instance)
        return profile, options_from_prices(book, provider, instance_type, region, horizon_hours=len(profile),
                                            spot_share=spot_share), demand
    demand_path, options_path = _required(demand, options)
    return read_demand_csv(demand_path), read_options_csv(options_path), demand_path


def _print_recommenders(rows: list[Recommendation], stress: dict[float, MixResult]) -> None:
    """The cloud recommenders' rules beside this mix, and this mix under the stress test's demand."""
    unit = shared_currency(r.result.total_cost for r in rows)
    table = compact_table(f"cloud recommenders, whole horizon{_in(unit)}",
                          ["rule", "units", "total cost", "extra vs\nours"], text=("units",))
    for row in rows:
        table.add_row(row.name, _units(row.units), amount(row.result.total_cost, unit), amount(row.extra_cost, unit))
    console.print(table)
    for factor, r in stress.items():
        console.print(f"demand x {factor:g}: this mix costs {r.total_cost.rounded()} "
                      f"(all on-demand {r.on_demand_only_cost.rounded()})")


def generate(out: Path = typer.Option(..., "--out", help="demand CSV to write"),
             hours: int = typer.Option(8760, help="length of the profile"),
             peak: float = typer.Option(..., help="weekday peak units at the start"),
             trough: float = typer.Option(0.3, help="night level as a share of the peak"),
             peak_hour: int = typer.Option(14, "--peak-hour"),
             weekend: float = typer.Option(0.7, help="weekend level as a share of weekdays"),
             growth: float = typer.Option(0.0, help="compound growth per year (1.0 doubles)"),
             campaign: list[str] | None = typer.Option(
                 None, help="START_DAY:DAYS:MULTIPLIER, repeatable (seed 003's promotion: 314:3:10)"),
             batch_share: float = typer.Option(0.0, "--batch-share",
                                               help="share of each day's work shifted off-peak"),
             noise: float = typer.Option(0.0, help="std. dev. of multiplicative hourly noise"),
             seed: int = typer.Option(0),
             unit: str = typer.Option("accelerators", help="what the profile counts, written as its column "
                                                           "name: accelerators (GPUs or chips) or instances")
             ) -> None:
    """Write an hourly demand profile built from a workload shape, its column named by its unit."""
    from ..mix import WorkloadShape, generate_profile, resolve_unit, write_demand_csv

    stated = resolve_unit(None, unit.strip().lower(), str(out), "units")
    in_range(hours, "--hours", 1, MAX_HOURS, hint="up to 20 years of hours, e.g. --hours 8760")
    for value, option, high in ((peak, "--peak", 1e9), (trough, "--trough", 1), (weekend, "--weekend", 1e3),
                                (growth, "--growth", 10), (batch_share, "--batch-share", 1),
                                (noise, "--noise", 10)):
        in_range(value, option, 0, high)
    in_range(peak_hour, "--peak-hour", 0, 23)
    shape = WorkloadShape(peak_units=peak, trough_ratio=trough, peak_hour=peak_hour, weekend_ratio=weekend,
                          annual_growth=growth, campaigns=tuple(_campaign(c) for c in campaign or []),
                          batch_share=batch_share, noise=noise, seed=seed)
    profile = generate_profile(shape, hours)
    write_demand_csv(out, profile, unit=stated)
    console.print(f"wrote {hours:,} hours to {out}: peak {profile.max():.1f}, mean {profile.mean():.1f}, "
                  f"min {profile.min():.1f} {stated}")


def profile(bills: list[Path] = typer.Option(..., "--bills", help="FOCUS bill files (repeatable)"),
            out: Path = typer.Option(..., "--out", help="demand CSV to write"),
            instance_type: str | None = typer.Option(None, "--instance-type"),
            region: str | None = typer.Option(None),
            gpus_per_unit: int = typer.Option(1, "--gpus-per-unit",
                                              help="count units of this many GPUs (8: p5.48xlarge instances, "
                                                   "to match price-book options)")) -> None:
    """Write the hourly GPUs (or units) in use, from FOCUS bills (x_GpuHours), as a demand CSV."""
    from ..mix import write_demand_csv
    from ..mix.usage import profile_from_bills

    usage = profile_from_bills(bills, instance_type=instance_type, region=region, gpus_per_unit=gpus_per_unit)
    if not usage.units.size:
        raise InputError("the bills hold no GPU usage (x_GpuHours) for this selection",
                         hint="check --instance-type and --region, or pull bills with the connectors")
    # one GPU a unit: the file says accelerators; units of several GPUs are counted but not named
    write_demand_csv(out, usage.units, hours=usage.hours(), unit="accelerators" if gpus_per_unit == 1 else None)
    console.print(f"wrote {usage.units.size:,} hours to {out}: peak {usage.units.max():.1f}, "
                  f"mean {usage.units.mean():.1f} units of {gpus_per_unit} GPU(s)")


def scenarios(demand: Path | None = _DEMAND, options: Path | None = _OPTIONS,
              low: float = typer.Option(0.7, help="low scenario = demand x this"),
              high: float = typer.Option(1.3, help="high scenario = demand x this"),
              weights: str = typer.Option("0.25,0.5,0.25", help="weights of low, base, high: summing to 1, or "
                                                                 "to 100 as percentages (25,50,25)"),
              as_json: bool = _JSON) -> None:
    """The expected-cost mix over low/base/high scenarios, and the commit-to-low alternative."""
    from ..mix import Scenario, plan_scenarios, read_demand_csv, read_options_csv

    demand_path, options_path = _required(demand, options)
    profile, choices = read_demand_csv(demand_path), read_options_csv(options_path)
    w = _weights(weights)
    plan = plan_scenarios([Scenario("low", w[0], profile * low), Scenario("base", w[1], profile),
                           Scenario("high", w[2], profile * high)], choices)
    if as_json:
        print_json(plan.to_dict())
        return
    _print_mix(plan.expected, "expected-cost mix over low/base/high")
    unit = shared_currency([plan.expected.total_cost, plan.commit_to_low.total_cost])
    table = compact_table(f"cost under each scenario{_in(unit)}",
                          ["plan", "units", "expected\ncost", "low\nbase\nhigh"], text=("units",))
    for name, result in (("expected", plan.expected), ("commit_to_low", plan.commit_to_low)):
        costs = plan.per_scenario[name]
        table.add_row(name, _units(result.units, "\n"), amount(result.total_cost, unit),
                      "\n".join(amount(costs[s].total_cost, unit) for s in ("low", "base", "high")))
    console.print(table)


def ladder(demand: Path | None = _DEMAND, options: Path | None = _OPTIONS, as_json: bool = _JSON) -> None:
    """A staggered ladder of term commitments (term_hours per option) for a multi-year, growing profile."""
    from ..mix import plan_ladder, read_demand_csv, read_options_csv

    demand_path, options_path = _required(demand, options)
    plan = plan_ladder(read_demand_csv(demand_path), read_options_csv(options_path))
    if as_json:
        print_json(plan.to_dict())
        return
    names = list(plan.purchases)
    unit = shared_currency(plan.monthly_cost)
    table = compact_table(f"commitment ladder over {plan.months} months (months with a purchase){_in(unit)}",
                          ["month", *(f"buy\n{n}" for n in names), *(f"active\n{n}" for n in names), "cost"])
    for month in range(plan.months):
        if any(plan.purchases[n][month] for n in names):
            table.add_row(str(month), *(str(plan.purchases[n][month]) for n in names),
                          *(str(plan.active[n][month]) for n in names), amount(plan.monthly_cost[month], unit))
    console.print(table)
    console.print(f"total {plan.total_cost.rounded()}; all on-demand {plan.on_demand_only_cost.rounded()}; "
                  f"savings {plan.savings.rounded()}; still owed after the horizon {plan.outstanding.rounded()}")


def _required(demand: Path | None, options: Path | None) -> tuple[Path, Path]:
    if demand is None or options is None:
        missing = "--demand" if demand is None else "--options"
        raise InputError(f"missing {missing}", hint="finops mix --demand demand.csv --options options.csv, or "
                                                    "--provider, --instance-type and --region instead of --options")
    return demand, options


def _campaign(text: str) -> Campaign:
    from ..mix import Campaign

    try:
        start, days, multiplier = text.split(":")
        return Campaign(in_range(int(start), "--campaign START_DAY", 0, MAX_HOURS),
                        in_range(int(days), "--campaign DAYS", 0, MAX_HOURS),
                        in_range(float(multiplier), "--campaign MULTIPLIER", 0, 1e6))
    except ValueError:
        raise InputError(f"--campaign {text!r} is not START_DAY:DAYS:MULTIPLIER", hint="e.g. 314:3:10") from None


def _weights(text: str) -> list[float]:
    from ..mix import probabilities

    values = text.split(",")
    if len(values) != 3:
        raise InputError(f"--weights {text!r} must be three numbers for low, base, high", hint="e.g. 0.25,0.5,0.25")
    return probabilities(values, "--weights")


def _units(units: dict[str, int], separator: str = ", ") -> str:
    return separator.join(f"{name} {count}" for name, count in units.items()) or "-"


def _brief(result: MixResult) -> dict[str, object]:
    return {"total_cost": quantize(result.total_cost.amount),
            "on_demand_only_cost": quantize(result.on_demand_only_cost.amount),
            "savings": quantize(result.savings.amount)}


def _in(currency: str | None) -> str:
    return f", {currency}" if currency else ""


def _print_mix(result: MixResult, title: str) -> None:
    """Compact columns and the currency in the title keep every figure whole in an 80-column terminal."""
    unit = shared_currency(o.cost for o in result.outcomes)
    table = compact_table(title + _in(unit), ["option", "kind", "units", "share\nserved", "utili-\nzation", "cost"])
    for o in result.outcomes:
        table.add_row(o.name, o.kind, "" if o.units is None else str(o.units), f"{result.share[o.name]:.1%}",
                      "" if o.units is None else f"{result.utilization[o.name]:.1%}", amount(o.cost, unit))
    console.print(table)
    console.print(f"total {result.total_cost.rounded()} ({result.cost_per_month.rounded()} per month, "
                  f"{result.cost_per_year.rounded()} per year); all on-demand {result.on_demand_only_cost.rounded()}; "
                  f"savings {result.savings.rounded()}")
