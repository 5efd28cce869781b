"""The add-in's functions: seed figures, Excel-shaped arguments, and short errors instead of tracebacks."""

from __future__ import annotations

import doctest
import inspect
import json
import subprocess
import sys
import typing
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import addin._cells
import addin._price_range
import finops
from addin import udfs
from finops.mix import MixOption, optimize_mix
from finops.price_book import COLUMNS, PriceBook
from finops.sizing import Workload
from finops.sizing.search import search

SEED_CASES = [  # (function, arguments, expected, source)
    ("LLM_DEVICES", (5000, 800, 0.25), 9, "seed 003: 5,000 tok/s, 800 per device, 25 % spare"),
    ("LLM_DEVICES", (5000, 800, 0.25, 1), 10, "seed 003 with N+1 redundancy"),
    ("FINOPS_TCO", (9 * 160_000, 9 * 9_000, 36, "CNY"), 4_356_000, "seed 003: 36-month TCO"),
    ("LLM_CONCURRENCY", (10_000, 0.05, 60, 5), pytest.approx(41.667, abs=1e-3), "seed 000 stated inputs"),
    ("LLM_CONCURRENCY", (5000, 1, 1, 5), pytest.approx(6.944, abs=1e-3), "seed 000 as printed: 5,000 req/h"),
    ("LLM_CONCURRENCY", (30_000, 0.05, 60, 5), pytest.approx(125.0), "seed 000, DAU x3"),
    ("LLM_KV_GIB", ("llama-3.1-8b", 2048, 16), 4.0, "GQA-correct: a quarter of seed 003's naive 16 GiB"),
    (
        "LLM_WEIGHTS_GIB",
        ("llama-3.1-8b", "fp8"),
        pytest.approx(9.08e9 / 2**30, rel=2e-3),
        "seed 002: 9.08 GB",
    ),
    (
        "LLM_WEIGHTS_GIB",
        ("llama-3.1-8b", "bf16"),
        pytest.approx(16.06e9 / 2**30, rel=2e-3),
        "seed 002: 16.06 GB",
    ),
    ("FINOPS_COST_PER_MTOK", (36, 10_000), 1.0, "36 per hour at 10,000 tok/s = 1 per million"),
    ("FINOPS_API_PER_MTOK", ("qwen3-30b-a3b", 1000, 1000), 0.75, "Bedrock 0.15 in + 0.60 out per million"),
    (
        "LLM_MAX_CONCURRENCY",
        ("llama-3.1-70b", "h100-sxm", "bf16", 1, 2048, 512),
        0,
        "70B BF16 does not fit 80 GB",
    ),
]


@pytest.mark.parametrize("name, args, expected, source", SEED_CASES, ids=[c[3] for c in SEED_CASES])
def test_seed_figures(name, args, expected, source):
    assert udfs.UDFS[name](*args) == expected


SHAPES = [  # the same value as Excel, xlwings Lite or the formulas evaluator may hand it over
    pytest.param(lambda v: v, id="scalar"),
    pytest.param(lambda v: [v], id="one-cell row"),
    pytest.param(lambda v: [[v]], id="one-cell block"),
    pytest.param(lambda v: np.array([[v]], dtype=object), id="numpy block"),
    pytest.param(lambda v: str(v) if isinstance(v, (int, float)) else v, id="numeric text"),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_ranges_and_scalars_are_accepted_alike(shape):
    assert udfs.LLM_DEVICES(shape(5000), shape(800), shape(0.25)) == 9
    assert udfs.LLM_WEIGHTS_GIB(shape("llama-3.1-8b"), shape("BF16")) == udfs.LLM_WEIGHTS_GIB(
        "llama-3.1-8b", "bf16"
    )
    assert udfs.LLM_MAX_CONCURRENCY(
        *(shape(v) for v in ("llama-3.1-8b", "h100-sxm", "bf16", 1.0, 1024, 256))
    ) == udfs.LLM_MAX_CONCURRENCY("llama-3.1-8b", "h100-sxm", "bf16", 1, 1024, 256)


BAD_INPUT = [  # (function, arguments, what the message must say)
    ("LLM_DEVICES", ("lots", 800, 0.25), "required_tokens_per_s: expected a number"),
    ("LLM_DEVICES", (5000, 0, 0.25), "per_device"),
    ("LLM_DEVICES", (None, 800, 0.25), "a number is required"),
    ("LLM_CONCURRENCY", (10_000, 1.5, 60, 5), "online_share"),
    ("LLM_WEIGHTS_GIB", ("llama-3.1-8", "bf16"), "did you mean"),
    ("LLM_WEIGHTS_GIB", ("llama-3.1-8b", "fp7"), "precision"),
    ("LLM_MAX_CONCURRENCY", ("llama-3.1-8b", "h10", "bf16", 1, 1024, 256), "unknown GPU 'h10'"),
    (
        "LLM_MAX_CONCURRENCY",
        ("llama-3.1-8b", "h100-sxm", "bf16", 1.5, 1024, 256),
        "tp: expected a whole number",
    ),
    ("LLM_KV_GIB", ("llama-3.1-8b", [[1024, 2048]], 4), "tokens: expected one cell"),
    ("LLM_TTFT_MS", ("llama-3.1-70b", "h100-sxm", "bf16", 1, 2048, 512), "does not fit"),
    ("LLM_TOKENS_PER_S", ("llama-3.1-8b", "h100-sxm", "bf16", 1, 1024, 256, 8, "ollama"), "unknown engine"),
    ("LLM_TTFT_MS", ("llama-3.1-8b", "h100-sxm", "bf16", 1, 1024, 256, 8, "vllm", 0, "wave"), "unknown client"),
    ("FINOPS_TCO", (1000, 10, 12, "dollars"), "currency"),
    ("FINOPS_COST_PER_MTOK", (10, 0), "tokens_per_s"),
    ("FINOPS_API_PER_MTOK", ("mistral-7b-v0.1", 1000, 1000), "no managed API"),
    ("FINOPS_PRICE", ("gcp", "a3-highgpu-8g", "forever", "us-central1", [list(COLUMNS)]), "pricing model"),
    ("FINOPS_PRICE", ("gcp", "a3-highgpu-8g", "on_demand", "us-central1", [["provider"], ["gcp"]]), "header"),
    ("FINOPS_MIX", ([[1], [2]], [["name", "kind"], ["od", "on_demand"]]), "hourly_cost"),
    ("LLM_SIZE", ("qwen3-32b", 20_000, 2000, 30, 2, None, "l4"), "no configuration meets"),
    ("FINOPS_MIX", ([[1], [-2]], [["name", "kind", "hourly_cost"], ["od", "on_demand", 1]]), ""),
]


@pytest.mark.parametrize(
    "name, args, says", BAD_INPUT, ids=[f"{c[0]}-{c[2] or 'negative'}" for c in BAD_INPUT]
)
def test_bad_input_gives_one_short_line_in_the_cell(name, args, says):
    answer = udfs.UDFS[name](*args)
    assert isinstance(answer, str) and answer.startswith("#FINOPS: "), answer
    assert says.lower() in answer.lower()
    assert "\n" not in answer and "Traceback" not in answer and len(answer) < 200


def test_every_udf_is_exported_documented_and_excel_callable():
    assert sorted(udfs.UDFS) == sorted(n for n in udfs.__all__ if n != "UDFS")
    for name, function in udfs.UDFS.items():
        assert function.__doc__ and "Source:" in function.__doc__, name
        kinds = {p.kind for p in inspect.signature(function).parameters.values()}
        assert kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD}, (
            f"{name}: xlwings needs plain positional args"
        )
        # xlwings (classic and Lite) reads type hints as converters: every hint must resolve, to Any
        assert set(typing.get_type_hints(function).values()) == {typing.Any}, name


def test_price_from_the_workbook_range_equals_the_price_book():
    book = PriceBook.bundled()
    row = book.filter(region="us-central1", pricing_model="on_demand").rows[0]
    prices = [list(COLUMNS)] + [
        [float(v) if isinstance(v, Decimal) else v for v in r.to_record().values()]
        for r in book.filter(region="us-central1")
    ]
    expected = float(book.lookup(row.provider, row.instance_type, "on_demand", row.region).hourly_cost)
    assert udfs.FINOPS_PRICE(row.provider, row.instance_type, "on_demand", row.region, prices) == expected
    assert udfs.FINOPS_PRICE(row.provider, row.instance_type, "on_demand", row.region) == expected


def test_an_edited_price_range_is_read_again_an_unchanged_one_is_not():
    """The parsed book is kept by the range's content: an equal range (even new lists) gives the same
    book, and a cell edited in place in the very lists passed before gives the new price, not the old."""
    row = ["gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, "on_demand", "", 88.25, 0, "USD", "2026-07-30", "x"]
    prices = [list(COLUMNS), row]
    first = addin._price_range.price_book_from_range(prices)
    assert addin._price_range.price_book_from_range([list(COLUMNS), list(row)]) is first
    assert udfs.FINOPS_PRICE("gcp", "a3-highgpu-8g", "on_demand", "us-central1", prices) == 88.25
    row[7] = 90.5                                       # the same list objects, one cell edited
    assert udfs.FINOPS_PRICE("gcp", "a3-highgpu-8g", "on_demand", "us-central1", prices) == 90.5
    assert addin._price_range.price_book_from_range(prices) is not first
    row[7] = 88.25                                      # back to the first content: its book again
    assert addin._price_range.price_book_from_range(prices) is first


def test_size_spills_the_search_ranking():
    table = udfs.LLM_SIZE(
        "llama-3.1-8b", 5000, 500, 50, 1000, None, "h100-sxm, l40s", [["bf16"], ["fp8"]], None, 3
    )
    expected = search(
        Workload(
            name="x",
            model="llama-3.1-8b",
            isl=5000,
            osl=500,
            concurrency=50,
            ttft_ms=1000,
            gpus=("h100-sxm", "l40s"),
            precisions=("bf16", "fp8"),
        ),
        top=3,
    ).options
    assert [row[:5] for row in table[1:]] == [
        [o.gpu, o.precision, o.tp, o.replicas, o.gpus] for o in expected
    ]
    column = {name: j for j, name in enumerate(table[0])}
    assert [(row[column["gpus_paid"]], row[column["instances"]], row[column["monthly_cost"]]) for row in table[1:]] \
        == [(o.gpus_paid, o.instances, float(o.monthly_cost.amount)) for o in expected]


def test_mix_spills_the_optimizer_result():
    demand = [8.0] * 60 + [20.0] * 28
    options = [
        ["name", "kind", "hourly_cost", "max_share"],
        ["od", "on_demand", 6.88, None],
        ["ri", "reserved", 4.30, None],
        ["spot", "spot", 2.75, 0.3],
    ]
    table = udfs.FINOPS_MIX([[d] for d in demand], options)
    expected = optimize_mix(
        demand,
        [
            MixOption("od", "on_demand", Decimal("6.88")),
            MixOption("ri", "reserved", Decimal("4.3")),
            MixOption("spot", "spot", Decimal("2.75"), max_share=0.3),
        ],
    )
    assert table[0] == ["option", "kind", "units", "share", "cost"]
    assert {r[0]: r[2] for r in table[1:4] if r[2] != "-"} == expected.units
    totals = {r[0]: r[4] for r in table[4:]}
    assert totals == {
        "total": float(expected.total_cost.amount),
        "all on-demand": float(expected.on_demand_only_cost.amount),
        "savings": float(expected.savings.amount),
    }


@pytest.mark.parametrize("module", [udfs, addin._cells, addin._price_range])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


IMPORT_CHECK = (
    "import sys\n"
    "{block}"
    "import addin.udfs as u\n"
    "assert u.LLM_DEVICES(5000, 800, 0.25) == 9\n"
    "bad = sorted({{n.split('.')[0] for n, m in sys.modules.items() if m is not None}} & set({forbidden!r}))\n"
    "print(','.join(bad))\n"
)
NATIVE_ONLY = (
    "boto3",
    "botocore",
    "google",
    "openpyxl",
    "xlsxwriter",
    "typer",
    "rich",
    "click",
    "duckdb_engine",
)


@pytest.mark.parametrize("without_xlwings", [False, True], ids=["with xlwings", "without xlwings (Pyodide)"])
def test_the_udfs_import_path_loads_nothing_native_only(without_xlwings):
    # Without xlwings (plain Pyodide, CI) the decorators fall back to identity and pandas stays out too;
    # with it, xlwings itself imports pandas when present, which Pyodide has.
    forbidden = NATIVE_ONLY + (("xlwings", "pandas", "pyarrow") if without_xlwings else ())
    block = "sys.modules['xlwings'] = None\n" if without_xlwings else ""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK.format(block=block, forbidden=forbidden)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == ""


#: Native packages that Pyodide builds, so xlwings Lite installs them from its own repository
#: (pyodide/pyodide-recipes, packages/<name>/meta.yaml; checked 2026-11 for Pyodide 0.27-0.29).
PYODIDE_BUILDS = {"numpy", "scipy", "duckdb", "pyarrow", "pandas", "pyyaml", "markupsafe", "pydantic-core"}
#: Markers as Pyodide evaluates them (Emscripten, CPython 3.12 in xlwings Lite's Pyodide 0.27).
PYODIDE_MARKERS = {"sys_platform": "emscripten", "platform_system": "Emscripten", "python_version": "3.12"}


def _base_requirements(name: str) -> list[str]:
    """The distributions ``name`` needs on Pyodide, without extras, one level down."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    needed = []
    for line in requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({**PYODIDE_MARKERS, "extra": ""}):
            needed.append(requirement.name.lower().replace("_", "-"))
    return needed


def test_every_dependency_installs_in_xlwings_lite():
    """micropip takes pure-Python wheels from PyPI and native packages only from Pyodide's own builds."""
    from importlib.metadata import distribution

    seen, queue, native = set(), _base_requirements("llm-finops"), []
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        wheel = distribution(name).read_text("WHEEL") or ""
        if "Root-Is-Purelib: true" not in wheel and name not in PYODIDE_BUILDS:
            native.append(name)
        queue.extend(_base_requirements(name))
    assert {"numpy", "typer", "openpyxl"} <= seen  # the walk reached direct and transitive dependencies
    assert native == [], f"native without a Pyodide build (xlwings Lite cannot install them): {native}"


def test_price_without_a_range_uses_the_configured_price_book(tmp_path, monkeypatch):
    from finops.money import to_decimal
    from finops.price_book import PRICE_BOOK_ENV, PriceRow

    path = PriceBook(
        [
            PriceRow(
                "aws",
                "us-east-1",
                "p5.48xlarge",
                "h100-sxm",
                8,
                "on_demand",
                "",
                to_decimal("55.04"),
                to_decimal(0),
                "USD",
                "2025-06-05",
                "test",
            )
        ]
    ).write_csv(tmp_path / "book.csv")
    monkeypatch.setenv(PRICE_BOOK_ENV, str(path))
    assert udfs.FINOPS_PRICE("aws", "p5.48xlarge", "on_demand", "us-east-1") == 55.04


_MIX_OPTIONS = [["name", "kind", "hourly_cost"], ["od", "on_demand", 6.88], ["ri", "reserved", 4.3]]


@pytest.mark.parametrize("demand, reads", [
    ([[8.0], [8.0], [20.0]], [8.0, 8.0, 20.0]),                                   # one column
    ([["Hour", "GPUs"], [1, 8.0], [2, 8.0], [3, 20.0]], [8.0, 8.0, 20.0]),        # the Mix sheet's two columns
    ([["instances", "hour"], [8.0, 1], [8.0, 2], [20.0, 3]], [8.0, 8.0, 20.0]),   # by header, any order
    ([[1, 8.0], [2, 8.0], [3, 20.0]], "needs a header row with Hour"),            # hours would be read as demand
    ([["Hour", "GPUs", "Sorted"], [1, 8.0, 20.0]], "needs a header row with Hour"),
])
def test_mix_reads_an_hour_units_range_by_its_header_or_refuses_it(demand, reads):
    got = udfs.FINOPS_MIX(demand, _MIX_OPTIONS)
    if isinstance(reads, str):
        assert isinstance(got, str) and got.startswith("#FINOPS: demand:") and reads in got
        return
    assert got == udfs.FINOPS_MIX([[v] for v in reads], _MIX_OPTIONS)
    total = next(r for r in got if r[0] == "total")[4]
    assert total == pytest.approx(min(6.88 * 36, 4.3 * 3 * 8 + 6.88 * 12, 4.3 * 3 * 20))   # 0, 8 or 20 reserved


@pytest.mark.parametrize("args, field, expected", [
    (("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256), "efficiency_source", "amd-cdna3:vllm"),   # AMD's published vLLM fit
    (("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256), "calibrated", "no"),          # vendor rows are no measurement
    (("llama-3.1-8b", "h100-sxm", "bf16", 1, 1024, 256), "efficiency_source", "engine"),  # vLLM's own H100 fit
    (("llama-3.1-70b", "h100-sxm", "fp8", 4, 1024, 256), "calibrated", "yes"),         # measured: vLLM, H100, FP8, TP4
    (("llama-3.1-70b", "h100-sxm", "fp8", 4, 1024, 256), "Efficiency-Source", "engine"),  # names as the registry reads them
    (("llama-3.1-8b", "h100-sxm", "fp8", 1, 1024, 256, 8, "trtllm"), "kv_precision", "fp8"),  # TRT-LLM FP8 checkpoint
    (("llama-3.1-8b", "h100-sxm", "fp8", 1, 1024, 256, 8, "vllm"), "kv_precision", "bf16"),   # vLLM 'auto'
])
def test_estimate_shows_where_its_efficiencies_come_from(args, field, expected):
    got = udfs.LLM_ESTIMATE(*args[:6], field, *args[6:])
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("client", [None, "synchronized", "staggered", "Staggered"])
def test_the_latency_cells_take_the_load_tests_client(client):
    """The optional last argument reaches the core: blank is the calibration's synchronized clients."""
    from finops.sizing.performance import estimate

    core = estimate("llama-3.3-70b", "h100-sxm", precision="fp8", tp=2, isl=5000, osl=500, concurrency=50,
                    engine="trtllm", client=(client or "synchronized").lower())
    args = ("llama-3.3-70b", "h100-sxm", "fp8", 2, 5000, 500)
    assert udfs.LLM_TTFT_MS(*args, 50, "trtllm", None, client) == core.ttft_ms
    assert udfs.LLM_TOKENS_PER_S(*args, 50, "trtllm", None, client) == core.output_tokens_per_s
    assert udfs.LLM_TPOT_MS(*args, 50, "trtllm", None, client) == core.tpot_ms
    assert udfs.LLM_ESTIMATE(*args, "client", 50, "trtllm", None, client) == core.client


def test_estimate_spills_a_band_and_names_the_fields_on_a_typo():
    from finops.sizing.performance import estimate

    core = estimate("llama-3.1-8b", "mi300x", precision="bf16", tp=1, isl=1024, osl=256, concurrency="max")
    assert udfs.LLM_ESTIMATE("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256, "tpot_ms_band") == [list(core.tpot_ms_band)]
    assert udfs.LLM_ESTIMATE("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256, "weights_gib_per_gpu") \
        == core.weights_gib_per_gpu
    says = udfs.LLM_ESTIMATE("llama-3.1-8b", "mi300x", "bf16", 1, 1024, 256, "efficency_source")
    assert says.startswith("#FINOPS: unknown estimate field") and "efficiency-source" in says



def test_size_says_for_each_option_whether_it_was_measured_and_whose_efficiencies_it_uses():
    table = udfs.LLM_SIZE("llama-3.1-70b", 2000, 500, 64, 30000, None, "h100-sxm", "fp8, bf16", None, 40)
    column = {name: j for j, name in enumerate(table[0])}
    rows = table[1:]
    # vLLM was measured on this model class on H100 at FP8 (TP 2-8), not at BF16: both kinds of option rank
    seen = {(row[column["precision"]], row[column["calibrated"]]) for row in rows}
    assert {("fp8", "yes"), ("bf16", "no")} <= seen and ("bf16", "yes") not in seen
    for row in rows:   # the same answer as the one-replica estimate gives for that configuration
        args = ("llama-3.1-70b", row[column["gpu"]], row[column["precision"]], row[column["tp"]], 2000, 500)
        assert row[column["calibrated"]] == udfs.LLM_ESTIMATE(*args, "calibrated")
        assert row[column["efficiency_source"]] == udfs.LLM_ESTIMATE(*args, "efficiency_source") == "engine"


_SIZING_HEADERS = ["Workload", "Model", "Precision", "Gpu", "TP", "Concurrency", "ISL", "OSL", "TtftTargetMs"]


@pytest.mark.parametrize("precision, ttft_ms, calibrated, source", [
    ("fp8", 30000, "yes", "engine"),     # measured: vLLM, H100, FP8, TP4
    ("bf16", 30000, "no", "engine"),     # vLLM's own constants, extrapolated to BF16 for this model
    ("fp8", 1, "-", "-"),                # misses its 1 ms TTFT: no figures for a failing choice
])
def test_sizing_row_says_whether_the_planners_choice_was_measured(precision, ttft_ms, calibrated, source):
    row = ["w", "llama-3.1-70b", precision, "h100-sxm", 4, 64, 2000, 500, ttft_ms]
    assert udfs.LLM_SIZING(_SIZING_HEADERS, row, "Calibrated") == calibrated
    assert udfs.LLM_SIZING(_SIZING_HEADERS, row, "EfficiencySource") == source


def _bundled_p90(key: str, metric: str) -> float:
    """The held-out P90 ratio measured / modelled, read from the shipped calibration file itself."""
    shipped = json.loads((Path(finops.__file__).parent / "catalog" / "data" / "calibration.json").read_text())
    return shipped["bands"][key][metric][shipped["band_levels"].index(0.9)]


def test_size_spills_each_options_latencies_at_the_models_90th_percentile_error():
    table = udfs.LLM_SIZE("llama-3.1-70b", 2000, 500, 64, 30000, None, "h100-sxm", "fp8, bf16", None, 10)
    column = {name: j for j, name in enumerate(table[0])}
    assert table[0][-3:] == ["ttft_p99_ms_p90", "itl_p99_ms_p90", "beyond_native_context"]
    for row in table[1:]:   # vLLM's held-out ratios of its dense rows at the row's TP (H100: measured)
        tp = row[column["tp"]]
        assert row[column["beyond_native_context"]] == "no"     # 2,500 tokens: well within Llama 3.1's context
        assert row[column["ttft_p99_ms_p90"]] == pytest.approx(row[column["ttft_p99_ms"]]
                                                               * _bundled_p90(f"vllm:dense:tp{tp}", "ttft_ms"))
        assert row[column["itl_p99_ms_p90"]] == pytest.approx(row[column["itl_p99_ms"]]
                                                              * _bundled_p90(f"vllm:dense:tp{tp}", "tpot_ms"))


@pytest.mark.parametrize("model, ttft_ms, key", [
    ("llama-3.1-70b", 30000, "vllm:dense:tp8"),
    ("qwen3-235b-a22b", 30000, "vllm:moe:tp8"),     # the MoE models' own held-out band at TP8
    ("llama-3.1-70b", 1, None),                 # misses its 1 ms TTFT: "-" (not applicable)
])
def test_sizing_row_shows_its_latencies_at_the_models_90th_percentile_error(model, ttft_ms, key):
    row = ["w", model, "fp8", "h100-sxm", 8, 16, 2000, 500, ttft_ms]
    ttft, tpot = (udfs.LLM_SIZING(_SIZING_HEADERS, row, f) for f in ("TtftMs", "TpotMs"))
    ttft_p90, tpot_p90 = (udfs.LLM_SIZING(_SIZING_HEADERS, row, f) for f in ("TtftMsP90", "TpotMsP90"))
    if key is None:
        assert (ttft_p90, tpot_p90) == ("-", "-")
        return
    assert ttft_p90 == pytest.approx(ttft * _bundled_p90(key, "ttft_ms"))
    assert tpot_p90 == pytest.approx(tpot * _bundled_p90(key, "tpot_ms"))
    assert tpot_p90 > tpot


def test_the_cells_that_pick_the_mix_figures_run_the_optimizer_once():
    """The Mix sheet holds 45 ``=INDEX(FINOPS_MIX(...), r, c)`` cells: one optimization answers them all, and a
    cell that changes its copy of the table changes no other cell's."""
    udfs._mixed.cache_clear()
    demand = [[8.0], [8.0], [20.0]]
    first = udfs.FINOPS_MIX(demand, _MIX_OPTIONS)
    expected = [list(row) for row in first]
    first[1][2] = "changed"
    for _ in range(44):
        assert udfs.FINOPS_MIX(demand, _MIX_OPTIONS) == expected
    assert (udfs._mixed.cache_info().misses, udfs._mixed.cache_info().hits) == (1, 44)
    udfs.FINOPS_MIX([[8.0], [9.0], [20.0]], _MIX_OPTIONS)
    assert udfs._mixed.cache_info().misses == 2
