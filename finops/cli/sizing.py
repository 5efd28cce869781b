"""``finops estimate`` and ``finops size``: one configuration's numbers, and the ranked search."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.table import Table

from ..errors import InputError
from ._console import console, print_json, styled
from ._options import ENGINE_HELP, ENGINE_VERSION_HELP

if TYPE_CHECKING:
    from ..api_offers import ApiOffers
    from ..sizing import ApiOption, Calibration, Estimate, SearchResult, ThroughputCorrection, Workload

# The models (finops.sizing, finops.mix, numpy) load inside the commands, so registering them is cheap
# for the commands that need none (finops reconcile).


def _calibration(path: Path | None) -> Calibration | None:
    from ..sizing import Calibration

    return Calibration.read(path) if path else None


def _with_step_time(path: Path | None, engine: str, step_time: str) -> Calibration | None:
    """The calibration (``path`` or the bundled one) with ``engine``'s steps timed as ``step_time`` says
    (:func:`~finops.sizing.performance.with_step_time`, what ``estimate(step_time=...)`` applies)."""
    from dataclasses import replace

    from ..sizing import Calibration, with_step_time

    cal = _calibration(path)
    if step_time == "auto":
        return cal
    cal = cal or Calibration.bundled()
    name = engine.strip().lower()
    return replace(cal, engines={**cal.engines, name: with_step_time(cal.constants(name), step_time)})


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise InputError(f"--{name} must be a whole number >= 1, got {value}")
    return value


def _concurrency(text: str) -> int | str:
    if text.strip().lower() == "max":
        return "max"
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"--concurrency must be a whole number or 'max', got {text!r}") from None
    return _positive("concurrency", value)


def _cell(value: object) -> str:
    """One value of the estimate table: floats to 3 places, a band as ``low - high``, a mapping as
    ``key: value`` lines."""
    if isinstance(value, float):
        return f"{value:,.3f}"
    if isinstance(value, (tuple, list)):
        return " - ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return str(value)


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def _correction(path: Path | None, workload: Workload, gpus: list[str] | None, engine: str) -> ThroughputCorrection:
    """The correction ``path`` holds for the one GPU searched, this engine and the workload's model (none: 1)."""
    from ..catalog import get_accelerator
    from ..sizing import CorrectionTable, ThroughputCorrection

    if path is None:
        return ThroughputCorrection()
    if not path.is_file():
        raise InputError(f"--corrections {path}: no such file", hint="`finops plan next` writes it in its --history")
    searched = gpus or list(workload.gpus or ())
    if len(searched) != 1:
        raise InputError("--corrections needs exactly one GPU in --gpus", hint="a correction is per engine, GPU and "
                         "model, e.g. --gpus l40s")
    return CorrectionTable.read(path).correction(engine.strip().lower(), get_accelerator(searched[0]).id,
                                                 workload.model)


def _correction_dict(correction: ThroughputCorrection) -> dict[str, object]:
    return {"factor": correction.factor, "band": correction.band, "sources": list(correction.sources)}


def _correction_line(correction: ThroughputCorrection) -> str:
    if not correction.sources:
        return "throughput correction: none recorded for this engine, GPU and model (factor 1)"
    return (f"throughput correction: x{correction.factor:.3g} of the modelled throughput (band +/-"
            f"{correction.band:.0%}, from {', '.join(correction.sources)}); sized for the demand over it")


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate_command)
    app.command("size")(size_command)


def estimate_command(
        model: str = typer.Option(..., help="catalog alias, Hugging Face id, or path to a config.json"),
        gpu: str = typer.Option(..., help="a10g, l4, l40s, a100-40gb, a100-80gb, h100-sxm, h100-pcie, h200, "
                                          "h20, b200, mi300x, mi325x, tpu-v5e, tpu-v5p, tpu-v6e"),
        precision: str = typer.Option(..., help="fp32 | bf16 | fp16 | fp8 | int8 | int4"),
        tp: int = typer.Option(1, help="tensor-parallel GPUs per replica"),
        isl: int = typer.Option(..., help="input tokens per request"),
        osl: int = typer.Option(..., help="output tokens per request"),
        concurrency: str = typer.Option("max", help="running requests, or 'max' (offline throughput point)"),
        engine: str = typer.Option("vllm", help=ENGINE_HELP),
        engine_version: str | None = typer.Option(None, "--engine-version", help=ENGINE_VERSION_HELP),
        cache_hit_rate: float = typer.Option(0.0, "--cache-hit-rate", help="prefix-cache hit rate, 0-1"),
        kv_precision: str | None = typer.Option(None, "--kv-precision",
                                                help="KV cache precision (default: the engine's for this checkpoint)"),
        max_batch: int | None = typer.Option(None, "--max-batch",
                                             help="sequences the engine runs at once (default: the engine's)"),
        prefill_token_budget: int | None = typer.Option(None, "--prefill-token-budget",
                                                        help="prompt tokens per engine step (default: the engine's)"),
        calibration: Path | None = typer.Option(None, help="a calibration file from `finops calibrate`"),
        step_time: str = typer.Option("auto", "--step-time",
                                      help="auto (the calibration's choice per engine) | kernels (measured "
                                           "kernel tables where they cover the step) | roofline"),
        expert_parallel: bool = typer.Option(False, "--expert-parallel",
                                             help="a mixture-of-experts model's experts split by expert "
                                                  "parallelism (vLLM --enable-expert-parallel) instead of TP"),
        client: str = typer.Option("synchronized", "--client",
                                   help="how the load test's clients run at a fixed concurrency: synchronized "
                                        "(all start together, as the calibration's campaigns) | staggered "
                                        "(a steady state, as AIPerf, GenAI-Perf, NIM's benchmarks) | static "
                                        "(a static batch, all prompts before any decode); TTFT only"),
        context_length: int | None = typer.Option(
            None, "--context-length", help="tokens the engine serves when it runs the model past its native "
                                           "context (RoPE scaling; vLLM --max-model-len, TRT-LLM max_seq_len); "
                                           "without it a request beyond the native context is refused"),
        arrival_rate: float | None = typer.Option(None, "--arrival-rate",
                                                  help="requests/s: add queueing delay, TTFT P50/P99"),
        ttft_target_ms: float | None = typer.Option(None, "--ttft-target-ms",
                                                    help="with --arrival-rate: SLA attainment P_ok"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Memory fit, TTFT, TPOT and throughput of one replica (GPU x precision x TP) at a concurrency.

    With --arrival-rate, also the replica under that Poisson load ("under_load"): queueing delay,
    TTFT P50/P99, ITL P99 and, with --ttft-target-ms, the share of requests within the target."""
    from ..sizing import check_engine_version, estimate, serve

    check_engine_version(engine.strip().lower(), engine_version)
    replica = {"precision": precision, "engine": engine, "cache_hit_rate": cache_hit_rate, "kv_precision": kv_precision,
               "calibration": _calibration(calibration), "context_length": context_length}  # estimate's and serve's
    result = estimate(model, gpu, tp=_positive("tp", tp), isl=_positive("isl", isl), osl=_positive("osl", osl),
                      concurrency=_concurrency(concurrency), max_batch=max_batch, client=client,
                      prefill_token_budget=prefill_token_budget, step_time=step_time.strip().lower(),
                      expert_parallel=expert_parallel, **replica)
    payload = result.to_dict()
    if ttft_target_ms is not None and arrival_rate is None:
        raise InputError("--ttft-target-ms needs --arrival-rate", hint="e.g. --arrival-rate 4 --ttft-target-ms 500")
    if arrival_rate is not None and result.fits:
        payload["under_load"] = serve(model, gpu, tp=tp, isl=isl, osl=osl, arrival_rate=arrival_rate,
                                      ttft_target_ms=ttft_target_ms, **replica).to_dict()
    if as_json:
        print_json(payload)
    else:
        _print_estimate(result, payload, kv_precision)


def _print_estimate(result: Estimate, payload: dict[str, object], kv_precision: str | None) -> None:
    """The estimate as a table of its quantities, then what they rest on: the KV cache and batch limits, the
    band a load test would likely measure, and whether the calibration or the efficiencies reach this case."""
    from ..sizing import ENGINE_EFFICIENCY, NO_EFFICIENCY

    table = Table("quantity", "value", title=f"{result.model} on {result.tp}x {result.gpu}, {result.precision}, "
                                             f"{result.engine}", show_header=False)
    loaded: dict[str, object] = payload.pop("under_load", {})  # type: ignore[assignment]
    rows = list(payload.items()) + [(f"under_load.{k}", v) for k, v in loaded.items()]
    for key, value in rows:
        table.add_row(key, _cell(value))
    console.print(table)
    chosen = "as asked" if kv_precision else f"{result.engine}'s default for a {result.precision} checkpoint"
    console.print(f"KV cache: {result.kv_precision} ({chosen}); batch limit {result.max_batch}, "
                  f"{result.prefill_token_budget:,} prompt tokens per step")
    if result.output_tokens_per_s_band:
        low, high = result.output_tokens_per_s_band
        console.print(f"a load test would likely measure {low:,.0f}-{high:,.0f} output tokens/s "
                      f"(P10-P90 of the held-out error of its class, {result.band_classes['output_tokens_per_s']}"
                      f"; reach: {result.extrapolation}; docs/performance.md, 'Error bands')")
    if not result.calibrated:
        console.print(f"calibrated: no. {result.engine} on {result.gpu} at {result.precision}, TP{result.tp}, "
                      f"for a {result.model_class} model of this size was not in the calibration data; these "
                      "latencies are extrapolated (docs/performance.md)")
    if result.efficiency_source == NO_EFFICIENCY:
        console.print(f"bandwidth and compute efficiencies: none measured. No calibration row or published "
                      f"result of {result.engine} on this vendor's accelerators answers; the engine's "
                      "constants are extrapolated unchecked (finops/catalog/data/README.md)")
    elif result.extrapolation == "carried":
        console.print(f"bandwidth and compute efficiencies: {result.efficiency_source}, the accelerator family's "
                      f"shortfall measured under {(result.evidence or {}).get('measured_engine')} (finops/data/calibration/"
                      f"published_*.csv) carried to {result.engine}'s constants; no row of {result.engine} on this "
                      "family checks it, and the band envelops the unmeasured one")
    elif result.efficiency_source != ENGINE_EFFICIENCY:
        console.print(f"bandwidth and compute efficiencies: {result.efficiency_source}'s, fitted on published "
                      f"results of that accelerator family (finops/data/calibration/"
                      "published_*.csv); the band is their held-out error")
    if not result.fits:
        console.print(f"does not fit: short {result.shortfall_gib:.1f} GiB per GPU; try more TP, a lower "
                      "precision or a larger GPU")


def _fleet_band(band: tuple[int | None, int | None] | None) -> str:
    """``low-high`` accelerators at the band's ends; ``-`` where an end meets the targets nowhere searched."""
    if band is None:
        return ""
    return "-".join("-" if end is None else f"{end:,}" for end in band)


def size_command(
        preset: str | None = typer.Option(None, help="a named workload (an unknown name lists them)"),
        workload: Path | None = typer.Option(None, help="a workload file (TOML or JSON)"),
        engine: str = typer.Option("vllm", help=ENGINE_HELP),
        engine_version: str | None = typer.Option(None, "--engine-version", help=ENGINE_VERSION_HELP),
        pricing_model: str = typer.Option("on_demand", "--pricing-model",
                                          help="on_demand, spot, reserved_1y, cud_1y, ..."),
        gpus: list[str] | None = typer.Option(None, "--gpus", help="limit the GPUs (repeat or comma-separate)"),
        precisions: list[str] | None = typer.Option(None, "--precisions", help="limit the precisions"),
        top: int = typer.Option(10, help="how many options to print"),
        rank_by: str = typer.Option("monthly_cost", "--rank-by", help="monthly_cost | cost_per_million"),
        calibration: Path | None = typer.Option(None, help="a calibration file from `finops calibrate`"),
        step_time: str = typer.Option("auto", "--step-time", help="auto | kernels | roofline (finops estimate's)"),
        corrections: Path | None = typer.Option(
            None, "--corrections", help="throughput-corrections.json from `finops plan next`: size for the "
                                        "throughput production delivered on one --gpus GPU"),
        calibrated_only: bool = typer.Option(False, "--calibrated-only",
                                             help="only engine x GPU x precision x TP the calibration measured"),
        confidence: float | None = typer.Option(
            None, help="size every option at this quantile of its own class's held-out error: 0.9 (the "
                       "default) the pessimistic end of its P10-P90 band, 0.5 its median"),
        peak_to_average: float | None = typer.Option(
            None, "--peak-to-average", help="peak over average load (default: the workload's, else 1), for "
                                            "the cost per million tokens at the average load"),
        demand_profile: Path | None = typer.Option(
            None, "--demand-profile", help="an hourly demand CSV (finops mix's): its peak over its average "
                                           "hour sets --peak-to-average"),
        api_offers: Path | None = typer.Option(
            None, "--api-offers", metavar="FILE",
            help="managed API offers you were quoted (CSV: provider, model, kind on_demand|provisioned, price, "
                 "unit, term_months, tokens_per_unit_s), priced beside the bundled per-token prices"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Search GPU x precision x TP x replicas for a workload; print the priced options, cheapest first.

    Only combinations the engine runs are searched; the 'calibrated' column says whether the
    latency model was fitted on that engine, GPU and precision ('no': extrapolated)."""
    from ..api_offers import read_api_offers, with_api_offers
    from ..sizing import DEFAULT_CONFIDENCE, check_engine_version, corrected_search

    check_engine_version(engine.strip().lower(), engine_version)
    confidence = DEFAULT_CONFIDENCE if confidence is None else confidence
    chosen = _workload(preset, workload, peak_to_average, demand_profile)
    offers = None if api_offers is None else read_api_offers(api_offers)
    correction = _correction(corrections, chosen, _split(gpus), engine)
    result = corrected_search(chosen, correction, gpus=_split(gpus), precisions=_split(precisions), engine=engine,
                              pricing_model=pricing_model, top=_positive("top", top),
                              calibration=_with_step_time(calibration, engine, step_time.strip().lower()),
                              rank_by=rank_by,
                              calibrated_only=calibrated_only, confidence=confidence)
    if offers is not None:
        result = with_api_offers(result, chosen, offers)
    if as_json:
        print_json({**result.to_dict(), "step_time": step_time.strip().lower(),
                    **({"correction": _correction_dict(correction)} if corrections else {})})
    else:
        _print_search(result, chosen, confidence, correction if corrections is not None else None, offers)


def _print_search(result: SearchResult, chosen: Workload, confidence: float, correction: ThroughputCorrection | None,
                  offers: ApiOffers | None) -> None:
    """The correction applied, the ranking (or why nothing fits), the managed APIs beside it, what has no price."""
    if correction is not None:
        console.print(_correction_line(correction))
    if not result.options:
        console.print(styled(("no feasible configuration", "bold"),
                             f" for {result.workload}: {result.infeasible_reason}"))
        return
    _print_ranking(result, chosen, confidence)
    _print_managed(result.managed, chosen)
    _print_published_provisioned(chosen, offers)
    if result.unpriced:
        console.print(f"feasible but with no {result.pricing_model} price in the price book: "
                      f"{', '.join(result.unpriced)}")


def _workload(preset: str | None, workload: Path | None, peak_to_average: float | None,
              demand_profile: Path | None) -> Workload:
    """The workload ``--preset`` or ``--workload`` names, its peak over average load from ``--peak-to-average``
    or the ``--demand-profile``'s peak hour over its average one."""
    from ..mix import peak_to_average as profile_peak_to_average
    from ..mix import read_demand
    from ..sizing import presets, workload_from

    if (preset is None) == (workload is None):
        raise InputError("give exactly one of --preset NAME or --workload FILE",
                         hint=f"presets: {', '.join(presets())}")
    chosen = workload_from(preset=preset, workload=workload)
    if demand_profile is not None:
        if peak_to_average is not None:
            raise InputError("give --peak-to-average or --demand-profile, not both")
        peak_to_average = profile_peak_to_average(read_demand(demand_profile).units, str(demand_profile))
    return chosen if peak_to_average is None else chosen.with_changes(peak_to_average=peak_to_average)


def _print_ranking(result: SearchResult, chosen: Workload, confidence: float) -> None:
    """The ranked options, each with its fleet band, instances, cost and latencies, and the legend."""
    pct = chosen.slo_percentile.upper()
    currencies = {o.monthly_cost.currency for o in result.options}
    unit = next(iter(currencies)) if len(currencies) == 1 else "cost"   # else each cell names its currency
    # Two-line cells and headers keep the ranking whole in an 80-column terminal; a longer value
    # folds onto another line instead of being cut short.
    table = Table("#", "configuration", "accel.\nused/paid\nP10-P90", "instances", f"{unit}/\nmonth",
                  f"{unit}/M\npk|avg", f"TTFT\n{pct} ms", f"ITL\n{pct} ms", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True,
                  title=f"{result.workload}: {result.candidates:,} configurations searched\n({result.engine}, "
                        f"{result.pricing_model}, sized at confidence {confidence:g})")
    for column in table.columns:
        column.overflow = "fold"
        column.no_wrap = column.header not in ("configuration", "instances")
        column.min_width = {"configuration": 13, "instances": 16}.get(str(column.header))
    for rank, o in enumerate(result.options, start=1):
        ttft, itl = (o.ttft_p99_ms, o.itl_p99_ms) if pct == "P99" else (o.ttft_p50_ms, o.tpot_ms)
        month, peak, average = (f"{m.amount:,.{places}f}" if unit != "cost" else str(m.rounded())
                                for m, places in ((o.monthly_cost, 0), (o.cost_per_million_output_tokens, 2),
                                                  (o.cost_per_million_output_tokens_average, 2)))
        table.add_row(str(rank), f"{o.gpu}\n{o.precision} TP{o.tp} x{o.replicas}\n{o.extrapolation}",
                      f"{o.gpus}/{o.gpus_paid}\n{_fleet_band(o.gpus_band)}",
                      f"{o.instances}x {o.instance_type}\n{o.region}", month, f"{peak}\n{average}",
                      f"{ttft:,.0f}\n{o.ttft_sized_ms:,.0f}", f"{itl:.1f}\n{o.itl_sized_ms:.1f}")
    console.print(table)
    console.print(f"TTFT, ITL: the model's figure, and below it the figure sized for: at the {confidence:g} "
                  "quantile of the held-out error of the option's class; P10-P90: accelerators deployed were "
                  "the model at the optimistic or the pessimistic end of its band")
    if any(o.extrapolation != "measured" for o in result.options):
        console.print("under each configuration, its reach: measured (the engine measured end to end on that "
                      "accelerator), fitted (its family's published rows fitted), carried (its family's rows "
                      "fitted under another engine, the shortfall carried over), kernels (its kernels measured, "
                      "no end-to-end row fitted), unmeasured (another family's constants: the widest band); "
                      "confirm with a load test and `finops calibrate` (docs/sizing.md, 'Error bands')")
    if result.options[0].beyond_native_context:
        console.print(f"beyond native context: {chosen.isl:,} + {chosen.osl:,} tokens run past {chosen.model}'s native "
                      f"context of {chosen.model_spec().max_context:,}, served on a context length of {chosen.context_length:,} (RoPE scaling); the figures "
                      "hold, what the model answers that far out is yours to check")
    console.print("accel.: accelerators (GPUs, or TPU/Inferentia/Trainium chips) used by the replicas / paid "
                  "for on whole instances; /M out: cost per million output tokens at the peak load running "
                  f"24/7 (pk), and at the average load, peak/average {chosen.peak_to_average:.3g}, the fleet "
                  "still sized and paid for the peak (avg)")


def _print_managed(managed: list[ApiOption], workload: Workload) -> None:
    """The managed APIs serving the workload's model beside the fleets: per million tokens, on demand."""
    if not managed:
        console.print(f"managed APIs: none in the token price book serves {workload.model}")
        return
    unit = managed[0].cost_per_request.currency
    table = Table("API, model", "in|out\n/M", f"{unit}/M\nout", f"{unit}/\nrequest", f"{unit}/\nmonth",
                  "fleet wins\nabove M/mo", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                  title=f"managed APIs serving {workload.model}, " + (
                      "on demand per token and provisioned throughput" if any(
                          m.pricing_model == "provisioned" for m in managed) else "on demand, priced per token"))
    for column in table.columns:
        column.overflow = "fold"
    table.columns[0].min_width = 30
    marks = []
    for m in managed:
        mark = "" if m.match == "same model" else "*" * (len(marks) + 1)
        if mark:
            marks.append(f"{mark} {m.offer_model}: {m.match}")
        month = "" if m.monthly_cost is None else f"{m.monthly_cost.amount:,.0f}"
        above = "" if m.fleet_cheaper_above_mtokens is None else f"{m.fleet_cheaper_above_mtokens:,.0f}"
        table.add_row(f"{_SERVICE_NAMES.get(m.service, m.service)} {m.region}\n{m.offer_model}{mark}",
                      "provisioned" if m.input_per_mtok is None or m.output_per_mtok is None
                      else f"{m.input_per_mtok.amount:g}|{m.output_per_mtok.amount:g}",
                      f"{m.cost_per_million_output_tokens.amount:,.2f}", f"{m.cost_per_request.amount:.5f}", month, above)
    console.print(table)
    for line in marks:
        console.print(line)
    first = managed[0]
    if first.monthly_output_mtokens is not None:
        console.print(f"/M out: input price x ISL/OSL + output price; /month at the average volume, "
                      f"{first.monthly_output_mtokens:,.0f} M output tokens; fleet wins: the cheapest fleet above "
                      f"costs less past this volume (it serves up to {first.fleet_capacity_mtokens:,.0f} M a month). "
                      "Prices: finops/data/token_prices/ (each row with its page and date)")
    if any(m.pricing_model == "provisioned" for m in managed):
        console.print("provisioned: whole units for the fleet's peak output tokens/s, paid every hour of the term; "
                      "/M out is its month over the average volume (a commitment: paid whether used or not)")


def _print_published_provisioned(workload: Workload, offers: ApiOffers | None) -> None:
    """The published provisioned-throughput prices of the workload's model that no offer prices per token (their
    tokens a second per unit are not published)."""
    from ..api_offers import published_for

    priced = {(p.model, p.term_months) for p in offers.provisioned} if offers is not None else set()
    for p in published_for(workload.model):
        if (p.model, p.term_months) in priced:
            continue
        console.print(f"{_SERVICE_NAMES.get(p.service, p.service)} provisioned throughput of {p.offer_model}, as "
                      f"published {p.effective_date}: {p.price_per_unit_hour} {p.currency} per model unit-hour for "
                      f"{p.term_months} month(s); the tokens a second a unit serves are not published: give them "
                      f"with --api-offers (a provisioned row with tokens_per_unit_s and no price) to price it here")


#: The providers' service names (FOCUS ServiceName) as the table shows them.
_SERVICE_NAMES = {"AmazonBedrock": "Bedrock", "Vertex AI": "Vertex AI"}
