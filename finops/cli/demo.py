"""``finops demo``: the main job end to end on the bundled, dated snapshots, with no cloud credentials.

1. sizes every seed scenario (presets) and ranks priced GPU configurations;
2. costs the seed-003 TCO case and owned H100s against the price book's cloud options;
3. optimizes the commitment mix for a year of hourly demand on GCP a3-highgpu-8g;
4. builds the planning workbook: the seed workloads on plan lines, so the Budget's cloud lines are
   formulas over their sized fleets (``templates/demo_fleet_plan.py``);
5. bills that fleet's month (2026-05, :mod:`finops.reconcile.demo_bills`: its instances at the price
   book's prices, with an unplanned GPU instance, a spot interruption and an unused commitment) and
   reconciles the plan against those bills; beside it, the bundled FinOps Foundation FOCUS 1.2 samples
   against the samples' plan (``focus-samples/``), which proves the format;
6. closes the loop on its own plan: a synthetic month of serving metrics for its fleet lines
   (``templates/demo_serving.py``, one line generating slower than modelled) gives its review's Serving
   sheet and ``plan next`` for 2026-06 from its plan and bills; the samples' review keeps the bundled sample
   metrics (``finops/data/metrics``, drawn for the samples' plan lines), which prove the format.

Every step writes its result into ``--out`` (JSON beside the workbooks) and prints a short table. The demo
writes into a new or empty folder, or one an earlier demo wrote (known by its mark, :data:`DEMO_MARK`, written
first): a folder holding anything else (a planning workbook of the template's name filled in by hand, a
``mix.json`` of someone's) is refused before anything is written there.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ..errors import InputError, Location
from ..files import make_folder, write_atomically
from ..money import Money
from ..price_book import PriceBook
from ..workbooks import workbooks
from ._console import console, styled, write_json

#: The mix step's instance type and the shape of its year of demand (instances per hour).
MIX_PROVIDER, MIX_INSTANCE, MIX_REGION = "gcp", "a3-highgpu-8g", "us-central1"
#: The bundled synthetic serving metrics of the sample month and the serving lines of the samples' plan.
SAMPLE_METRICS = Path(__file__).resolve().parents[1] / "data" / "metrics"
SAMPLE_SERVING = SAMPLE_METRICS / "serving-lines.csv"
#: Where the demo reconciles the FinOps Foundation samples against the template's plan.
SAMPLES_FOLDER = "focus-samples"
#: The file a demo writes first into its ``--out`` folder: the folder is a demo's, whose files a rerun replaces.
DEMO_MARK = ".llm-finops-demo"


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(out: Path = typer.Option(Path("finops-demo"), help="folder for the demo's outputs"),
         quiet: bool = typer.Option(False, "--quiet", help="print only the list of files written")) -> None:
    """Run the main job on bundled defaults: size, cost, mix, build the workbook, reconcile."""
    _claim(out)
    book = PriceBook.current()
    written = [_size(out, book, quiet), _tco(out, book, quiet), _mix(out, book, quiet)]
    files, plan, bills, serving = _workbooks(out, book, quiet)
    written += files
    written += _loop(out, plan, bills, serving, quiet)
    console.print(styled("\n", ("wrote", "bold"), "\n" + "\n".join(f"  {p}" for p in written)))


def _claim(out: Path) -> None:
    """Make ``out`` the demo's folder: new, empty or an earlier demo's (:data:`DEMO_MARK`); otherwise refuse."""
    if out.exists() and not out.is_dir():
        raise InputError("--out is a file; the demo writes a folder of files", where=Location(file=str(out)),
                         hint="give --out the name of a new folder")
    make_folder(out)
    if (out / DEMO_MARK).is_file():
        return
    found = sorted(p.name for p in out.iterdir())
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise InputError(f"this folder holds files no demo wrote ({shown}); the demo writes only into a new or "
                         "empty folder, or one an earlier demo wrote, and replaces nothing else",
                         where=Location(file=str(out)), hint="give --out a new folder, e.g. --out finops-demo")
    write_atomically(out / DEMO_MARK, b"llm-finops demo outputs: `finops demo --out` replaces the files here\n")


def _fleet_range(option: Any) -> str:
    """``7 (4-7)``: the option's accelerators, and the fleet at the optimistic and pessimistic ends of its band."""
    low, high = option.gpus_band or (None, None)
    return f"{option.gpus}" if low is None or high is None or low == high else f"{option.gpus} ({low}-{high})"


def _size(out: Path, book: PriceBook, quiet: bool) -> Path:
    from ..sizing import presets, search

    table = Table("scenario", "cheapest configuration meeting the SLOs", "GPUs", "per month", "per M out tok",
                  title="1. Sizing the seed scenarios",
                  caption="sized at the pessimistic end of each estimate's band; the GPUs' range is the fleet at the "
                          "band's two ends. Reach: measured (the engine on this GPU), kernels (its measured kernels), "
                          "fitted (its family's published rows), unmeasured (another family's constants: wide band)")
    results = []
    for name, workload in presets().items():
        result = search(workload, price_book=book, top=3)
        results.append(result.to_dict())
        if result.options:
            best = result.options[0]
            table.add_row(styled(f"{name}\n", (workload.model, "dim")),
                          styled(f"{best.gpu} {best.precision} TP{best.tp} x{best.replicas}\n",
                                 ((f"{best.provider} {best.instance_type} x{best.instances}"
                                   f", {best.extrapolation}"), "dim")),
                          _fleet_range(best), f"{best.monthly_cost.rounded().amount:,.0f}",
                          f"{best.cost_per_million_output_tokens.rounded().amount:,.2f}")
        else:
            table.add_row(name, f"none: {result.infeasible_reason}", "", "", "")
    if not quiet:
        console.print(table)
    return write_json(out / "sizing.json", results)


def _tco(out: Path, book: PriceBook, quiet: bool) -> Path:
    from ..tco import cloud_rows, compare_options, reference_case, tco

    seed = tco(Money.of(160_000, "CNY") * 9, Money.of(9_000, "CNY") * 9, 36)
    case = reference_case()
    rows = cloud_rows(book, gpu_model=case.gpu_model, cited=case.cloud_price_row())
    comparison = compare_options(16, 36, case.node, rows)
    if not quiet:
        table = Table("option", "36-month total", "per GPU-hour",
                      title=f"2. TCO: 16 {case.gpu_model} GPUs for 36 months (seed 003 check: {seed})")
        for option in comparison.options[:8]:
            table.add_row(option.name, str(option.total), str(option.per_gpu_hour))
        console.print(table)
    return write_json(out / "tco.json", {"seed003_tco": seed.amount, "seed003_currency": seed.currency,
                                          "comparison": comparison.to_dict()})


def _mix(out: Path, book: PriceBook, quiet: bool) -> Path:
    from ..mix import Campaign, WorkloadShape, generate_profile, optimize_mix, options_from_prices

    shape = WorkloadShape(peak_units=12, trough_ratio=0.35, annual_growth=0.3, noise=0.05,
                          campaigns=(Campaign(start_day=318, days=3, multiplier=3.0),))
    demand = generate_profile(shape, hours=8760)
    options = options_from_prices(book, MIX_PROVIDER, MIX_INSTANCE, MIX_REGION, horizon_hours=len(demand))
    result = optimize_mix(demand, options)
    if not quiet:
        table = Table("option", "units", "share served",
                      title=f"3. Commitment mix: a year of {MIX_INSTANCE} demand in {MIX_REGION} "
                            f"(peak {demand.max():.1f}, mean {demand.mean():.1f} instances)")
        for outcome in result.outcomes:
            table.add_row(outcome.name, "" if outcome.units is None else str(outcome.units),
                          f"{result.share.get(outcome.name, 0.0):.1%}")
        console.print(table)
        console.print(f"   total {result.total_cost} vs all on-demand {result.on_demand_only_cost}: "
                      f"saves {result.savings}")
    return write_json(out / "mix.json", result.to_dict())


def _workbooks(out: Path, book: PriceBook, quiet: bool) -> tuple[list[Path], Path, list[Path], tuple[Path, list[Path]]]:
    """Steps 4 and 5: the plan of the seed workloads' fleets; that fleet's month of bills; the review of the
    plan against them; and the FinOps Foundation samples against the samples' plan (the format's proof)."""
    from ..reconcile import HISTORY_FILE, SAMPLE_MONTH, headline, sample_bill_paths
    from ..reconcile.demo_bills import write_demo_bills
    from .plan import served_by
    from .reconcile import reconcile_to_workbook

    xlsx = workbooks()
    plan = xlsx.build_fleet_plan(out / "llm-finops-plan.xlsx", book)
    fleets = xlsx.planned_fleets(plan)
    make_folder(out / "bills")
    bills = write_demo_bills(out / "bills", fleets, book, SAMPLE_MONTH)
    metrics = sorted(SAMPLE_METRICS.glob(f"{SAMPLE_MONTH}-*.json.gz"))
    usage = xlsx.served_tokens(plan, SAMPLE_MONTH, out / "bills")
    serving = xlsx.write_serving_month(plan, SAMPLE_MONTH, out / "serving")
    rec, review = reconcile_to_workbook(plan, bills, SAMPLE_MONTH, out, usage=usage, run_at=datetime.now(UTC),
                                        serving=served_by(SAMPLE_MONTH, serving[0], plan, serving[1], None, 300))
    samples = out / SAMPLES_FOLDER  # with the serving metrics, which describe the samples' plan lines
    make_folder(samples)
    proof, proof_review = reconcile_to_workbook(
        xlsx.SAMPLE_PLAN, sample_bill_paths(), SAMPLE_MONTH, samples, run_at=datetime.now(UTC),
        serving=served_by(SAMPLE_MONTH, SAMPLE_SERVING, xlsx.SAMPLE_PLAN, metrics, None, 300))
    if not quiet:
        console.print(styled(("4. Planning workbook", "bold"), f" {plan}: the seed workloads' fleets on "
                             f"{len({fleet.plan_line for fleet in fleets})} plan lines, by formula"))
        console.print(styled((f"5. Reconcile {SAMPLE_MONTH}", "bold"), " (the plan's own fleet, billed: "
                             f"{', '.join(b.name for b in bills)}): P&L actual {rec.actual} (cloud {rec.opex}, "
                             f"depreciation {rec.capex}) vs planned {rec.planned}; cash billed {rec.billed_cost}; "
                             f"unmapped {rec.unmapped_effective_cost}"))
        console.print(f"   {headline(rec)}")
        console.print(f"   the FinOps Foundation FOCUS 1.2 samples (AWS + GCP) against their plan: P&L actual "
                      f"{proof.actual}, cash billed {proof.billed_cost} ({proof_review})")
    return ([plan, *bills, usage, serving[0], *serving[1], review, out / HISTORY_FILE, proof_review], plan, bills,
            serving)


def _loop(out: Path, plan: Path, bills: list[Path], serving: tuple[Path, list[Path]], quiet: bool) -> list[Path]:
    """Step 6: ``finops plan next`` on the demo's own plan, its bills and its fleet lines' month of metrics."""
    from ..reconcile import SAMPLE_MONTH
    from . import app

    lines, metrics = serving
    args = ["plan", "next", "--plan", str(plan), "--history", str(out), "--month", SAMPLE_MONTH,
            "--serving", str(lines), "--growth", "1.1",
            "--out", str(out / "llm-finops-plan-next.xlsx")] + (["--quiet"] if quiet else [])
    args += [a for p in metrics for a in ("--metrics", str(p))]
    args += [a for p in bills for a in ("--bills", str(p))]
    if not quiet:
        console.print(styled(("6. Close the loop", "bold"),
                             " (a synthetic month of vLLM and DCGM metrics of the plan's own fleet lines): "
                             "next month's plan"))
    app(args=args, standalone_mode=False)  # its errors reach the one boundary, which undoes the demo's files
    return [out / "llm-finops-plan-next.xlsx", out / "throughput-corrections.json"]
