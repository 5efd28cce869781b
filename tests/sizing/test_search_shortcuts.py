"""The search's shortcuts change nothing: cached candidate table, grid slices, idle and cost bounds.

The reference is the plain search: a freshly built candidate table, every replica count of every
configuration through the queueing model in one pass, nothing left out before it. The fast path must
return exactly the same result (every field of every option, the candidate count, the unpriced GPUs
and the advice), on a table of workloads that exercises each shortcut.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from finops.catalog import accelerators, get_model
from finops.price_book import PriceBook
from finops.sizing.candidates import candidate_table, clear_candidate_tables
from finops.sizing.engine_constants import Calibration
from finops.sizing.engine_defaults import default_kv_precision, engine_defaults
from finops.sizing.memory import memory_fit
from finops.sizing.performance import replica_physics
from finops.sizing.queueing import operating_point
from finops.sizing.workload import Workload, presets

search_module = importlib.import_module("finops.sizing.search")
ranking_module = importlib.import_module("finops.sizing.ranking")
BOOK = PriceBook.bundled()
BOOKS = {"bundled": BOOK, "gcp only": BOOK.filter(provider="gcp"), "empty": PriceBook([])}
ALL_GPUS = list(accelerators())


def _load(model: str, isl: int, osl: int, concurrency: float, ttft: float | None, itl: float | None,
          percentile: str = "p99", **more) -> Workload:
    return Workload(name=f"{model} {isl}/{osl} x{concurrency}", model=model, isl=isl, osl=osl,
                    concurrency=concurrency, ttft_ms=ttft, itl_ms=itl, slo_percentile=percentile, **more)


# (workload, search keywords, price book): what each case exercises is in its id
CASES = {
    "excel LLM_SIZE: every GPU, top 5": (_load("llama-3.1-8b", 5000, 500, 50, 1000, None), {"top": 5}, "bundled"),
    "top 1 (tightest cost bound)": (_load("llama-3.1-8b", 1024, 256, 200, 500, 50), {"top": 1}, "bundled"),
    "p50 ttft and itl": (_load("llama-3.1-70b", 2048, 512, 64, 800, 60, "p50"), {"top": 3}, "bundled"),
    "no targets (idle bound off)": (_load("llama-3.1-70b", 2048, 512, 8, None, None), {"top": 5}, "bundled"),
    "itl only": (_load("qwen3-8b", 1024, 1024, 20, None, 20), {"top": 5}, "gcp only"),
    "moe": (_load("qwen3-30b-a3b", 8000, 1000, 500, 2000, 80), {"top": 5}, "bundled"),
    "mla, large": (_load("deepseek-v3", 2048, 512, 100, 3000, 100), {"top": 5}, "bundled"),
    "tight ttft (many rows out of reach)": (_load("llama-3.1-8b", 8000, 256, 30, 300, None), {"top": 5}, "bundled"),
    "high concurrency (rows deep in the grid)": (_load("llama-3.1-8b", 512, 128, 3000, 300, 30), {"top": 5},
                                                 "bundled"),
    "cost per million (no cost bound)": (_load("llama-3.1-8b", 1024, 256, 200, 500, 50),
                                         {"top": 5, "rank_by": "cost_per_million"}, "bundled"),
    "no prices: unpriced GPUs": (_load("llama-3.1-8b", 1024, 256, 200, 500, 50), {"top": 5}, "empty"),
    "no configuration meets the targets": (_load("llama-3.1-70b", 8000, 512, 50, 20, None), {"top": 5}, "bundled"),
    "does not fit memory": (_load("deepseek-v3", 4096, 1024, 10, None, None), {"top": 5, "gpus": ["l4", "a10g"]},
                            "bundled"),
    "calibrated only, spare and redundancy": (_load("llama-3.1-8b", 2048, 256, 40, 600, 40, spare=0.3,
                                                    redundancy=1), {"top": 5, "calibrated_only": True}, "bundled"),
    "sglang": (_load("llama-3.1-8b", 2048, 256, 40, 600, 40), {"top": 5, "engine": "sglang"}, "bundled"),
}
for _name, _preset in presets().items():  # request-rate workloads, restricted precisions, P50
    CASES[f"preset {_name}"] = (_preset, {"top": 3, "gpus": ALL_GPUS}, "bundled")
    CASES[f"preset {_name}, cost per million"] = (_preset, {"top": 2, "gpus": ALL_GPUS,
                                                            "rank_by": "cost_per_million"}, "bundled")


def _plain_search(monkeypatch: pytest.MonkeyPatch, workload: Workload, book: PriceBook, **options) -> dict:
    """The reference: new candidate table, the whole replica grid in one pass, nothing pruned."""
    with monkeypatch.context() as patch:
        patch.setattr(search_module, "_PASS_WIDTHS", (search_module._GRID_STEPS,))
        patch.setattr(search_module, "_out_of_reach", lambda phys, constants, workload, sized: np.zeros(len(phys.tp), bool))
        clear_candidate_tables()
        return search_module.search(workload, price_book=book, **options).to_dict()


@pytest.mark.parametrize("case", list(CASES))
def test_the_fast_search_returns_exactly_the_plain_search(monkeypatch, case):
    workload, options, book = CASES[case]
    reference = _plain_search(monkeypatch, workload, BOOKS[book], **options)
    first = search_module.search(workload, price_book=BOOKS[book], **options).to_dict()    # builds the table
    again = search_module.search(workload, price_book=BOOKS[book], **options).to_dict()    # reuses it
    assert first["evaluated"] == again["evaluated"] <= reference["evaluated"]
    for result in (first, again, reference):
        del result["evaluated"]       # how much work was done: the one thing allowed to differ
    assert first == reference
    assert again == reference


def test_the_cases_exercise_every_shortcut(monkeypatch):
    """Rows left out by the idle bound and by the cost bound, counts skipped by the queueing floors, and
    rows settled after the first window all occur in the table of cases."""
    seen = {"idle": 0, "cost": 0, "floors": 0, "later window": 0}
    out_of_reach, first_possible = search_module._out_of_reach, search_module._first_possible
    first_feasible, worth = search_module._first_feasible, ranking_module.Ranking.worth

    def count_idle(phys, constants, workload, sized):
        flagged = out_of_reach(phys, constants, workload, sized)
        seen["idle"] += int(flagged.sum())
        return flagged

    def count_floors(grid, active, start, *rest):
        found = first_possible(grid, active, start, *rest)
        seen["floors"] += int((found - start).sum())
        return found

    def count_cost(ranking, picks, active, columns):
        keep = worth(ranking, picks, active, columns)
        seen["cost"] += int((~keep).sum())
        return keep

    def count_later(grid, *rest):
        picks, evaluated = first_feasible(grid, *rest)
        seen["later window"] += sum(1 for k, pick in enumerate(picks)
                                    if pick is not None and pick[0]["replicas"][pick[1]] > grid[k, 3])
        return picks, evaluated

    monkeypatch.setattr(search_module, "_out_of_reach", count_idle)
    monkeypatch.setattr(search_module, "_first_possible", count_floors)
    monkeypatch.setattr(ranking_module.Ranking, "worth", count_cost)
    monkeypatch.setattr(search_module, "_first_feasible", count_later)
    for workload, options, book in CASES.values():
        search_module.search(workload, price_book=BOOKS[book], **options)
    assert all(count > 0 for count in seen.values()), seen


MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "deepseek-v3", "mistral-7b-v0.1")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(("isl", "osl"), [(128, 128), (2000, 500), (30000, 2000)])
def test_the_table_fit_is_memory_fit_row_by_row(model, isl, osl):
    spec = get_model(model)
    if spec.max_context and isl + osl > spec.max_context:
        pytest.skip("beyond the model's context")
    table = candidate_table(spec, tuple(ALL_GPUS), ("bf16", "fp8", "int4"), (1, 2, 4, 8), "trtllm",
                            Calibration.bundled())
    slots, shortfall = table.fit(isl, osl)
    for row in range(len(table)):
        precision = table.precisions[row]   # TRT-LLM serves an FP8 checkpoint with an FP8 KV cache
        fit = memory_fit(spec, table.gpus[row], precision=precision, tp=table.tps[row], isl=isl, osl=osl,
                         kv_precision=default_kv_precision("trtllm", precision),
                         of_free_memory=engine_defaults("trtllm", table.gpus[row]).kv_of_free_memory)
        assert (int(slots[row]), float(shortfall[row]), float(table.weights_gib_per_gpu[row])) == \
            (fit.max_concurrency, fit.shortfall_gib, fit.weights_gib), table.label(row)


def test_a_table_is_built_once_per_model_and_calibration():
    spec, bundled = get_model("llama-3.1-8b"), Calibration.bundled()
    args = (spec, ("h100-sxm", "l4"), ("bf16", "fp8"), (1, 2), "vllm")
    table = candidate_table(*args, bundled)
    assert candidate_table(*args, bundled) is table
    other = Calibration.from_dict(bundled.to_dict())      # equal constants, another object: its own table
    assert candidate_table(*args, other) is not table
    assert candidate_table(spec, ("h100-sxm",), ("bf16", "fp8"), (1, 2), "vllm", bundled) is not table


def test_a_points_figures_do_not_depend_on_what_is_solved_beside_it():
    """The search may solve points in any grouping: each is the same alone as in a batch."""
    c = Calibration.bundled().constants("vllm")
    model = get_model("llama-3.1-70b")
    rows = [replica_physics(model, gpu, precision="fp8", tp=tp) for gpu in accelerators().values()
            if gpu.supports("fp8") for tp in (2, 4, 8)]
    rates = np.linspace(0.2, 12.0, len(rows))
    stacked = type(rows[0])(**{f: np.array([getattr(r, f) for r in rows]) for f in rows[0].__dataclass_fields__})
    together = operating_point(stacked, c, arrival_rate=rates, isl=2048, osl=512, max_batch=256.0)
    for n, phys in enumerate(rows):
        alone = operating_point(phys, c, arrival_rate=np.array([rates[n]]), isl=2048, osl=512, max_batch=256.0)
        for field in together.__dataclass_fields__:
            assert np.array_equal(getattr(alone, field), getattr(together, field)[n:n + 1], equal_nan=True), field
