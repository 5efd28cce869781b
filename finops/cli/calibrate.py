"""``finops calibrate``: refit the performance model from your own load-test results."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ._console import console, print_json
from ._options import ENGINE_HELP


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)


def calibrate_command(
        files: list[Path] = typer.Argument(..., help="load-test JSON: `vllm bench serve --save-result`, "
                                                     "GenAI-Perf/AIPerf profile export, GuideLLM report"),
        engine: str = typer.Option(..., help=ENGINE_HELP),
        model: str = typer.Option(..., help="the model the test served"),
        gpu: str = typer.Option(..., help="the GPU it ran on"),
        precision: str = typer.Option(..., help="weight precision served"),
        tp: int = typer.Option(1, help="tensor-parallel GPUs per replica"),
        concurrency: int | None = typer.Option(None, help="override the concurrency the files state"),
        base: Path | None = typer.Option(None, help="calibration to start from (default: the bundled one)"),
        prior_weight: float | None = typer.Option(
            None, "--prior-weight", help="how strongly constants stay near the base (0 = free fit; default: "
                                         "the refit's prior weight, docs/performance.md)"),
        out: Path = typer.Option(Path("calibration.json"), help="where to write the new calibration"),
        as_json: bool = typer.Option(False, "--json", help="print the fit report as JSON")) -> None:
    """Fit the engine's constants to measured TTFT/TPOT; write a file for `--calibration`."""
    import numpy as np

    from ..outputs import check_replaceable, check_suffix
    from ..sizing import REFIT_PRIOR_WEIGHT, Calibration, fit, predict, read_load_test

    check_suffix(out, (".json",), "the calibration is written as JSON")
    check_replaceable(out, "calibration")
    if prior_weight is None:
        prior_weight = REFIT_PRIOR_WEIGHT
    prior = Calibration.read(base) if base else Calibration.bundled()
    engine_name = engine.strip().lower()
    prior.constants(engine_name)  # an unknown engine fails here, with the known ones listed
    rows = [m for f in files for m in read_load_test(f, engine=engine_name, model=model, gpu=gpu,
                                                     precision=precision, tp=tp, concurrency=concurrency)]
    sources = ", ".join(sorted({f.name for f in files}))
    fitted = fit(rows, prior=prior, prior_weight=prior_weight,
                 source=f"load tests {sources} ({engine_name}, {model}, {tp}x {gpu}, {precision}); "
                        f"prior: {prior.source}")
    fitted.write(out)
    before = predict(rows, prior)
    after = predict(rows, fitted)
    report = [{"file": m.source, "concurrency": m.concurrency, "isl": m.isl, "osl": m.osl,
               "ttft_ms": m.ttft_ms, "tpot_ms": m.tpot_ms,
               "ttft_ms_before": float(before[0][i]), "tpot_ms_before": float(before[1][i]),
               "ttft_ms_after": float(after[0][i]), "tpot_ms_after": float(after[1][i])}
              for i, m in enumerate(rows)]
    if as_json:
        print_json({"out": str(out), "engine": engine_name, "points": report,
                    "constants": fitted.constants(engine_name).to_dict()})
        return
    table = Table("source", "conc", "TTFT ms\nmeasured", "model\nbefore", "model\nafter", "TPOT ms\nmeasured",
                  "model\nbefore", "model\nafter", title=f"{engine_name}: {len(rows)} measured points",
                  box=box.SIMPLE_HEAD)
    table.columns[0].overflow = "fold"      # the file name stays whole, on two lines if need be
    for r in report:
        table.add_row(r["file"], str(r["concurrency"]), f"{r['ttft_ms']:.1f}", f"{r['ttft_ms_before']:.1f}",
                      f"{r['ttft_ms_after']:.1f}", f"{r['tpot_ms']:.2f}", f"{r['tpot_ms_before']:.2f}",
                      f"{r['tpot_ms_after']:.2f}")
    console.print(table)
    error = np.median(np.abs(after[1] / np.array([m.tpot_ms for m in rows]) - 1))
    console.print(f"median TPOT error after the fit: {error:.1%}; wrote {out} "
                  f"(use it with --calibration {out})")
