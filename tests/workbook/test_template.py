"""The planning workbook: structure, contracts, cached values, and its formulas recomputed with the add-in."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import openpyxl
import pytest
from openpyxl.utils import get_column_letter, range_boundaries
from openpyxl.worksheet.formula import ArrayFormula

import finops
from addin import udfs
from finops.catalog import resolve_model
from finops.money import Money
from finops.price_book import COLUMNS
from finops.sizing import demand, memory_fit, presets, weight_bytes
from finops.sizing.choice import size_workload
from finops.sizing.managed import api_options
from templates.builder import DEFAULT_TEMPLATE

CONTRACT = {  # docs/design.md, "The planning workbook contract"
    "tblBudget": [
        "Month",
        "PlanLine",
        "CostCentre",
        "Category",
        "Provider",
        "Amount",
        "Currency",
        "PlannedMTokens",
        "PlannedGpuHours",
    ],
    "tblAssets": [
        "AssetId",
        "Description",
        "PlanLine",
        "CostCentre",
        "GpuModel",
        "GpuCount",
        "PurchaseDate",
        "InServiceDate",
        "Cost",
        "ResidualValue",
        "LifeMonths",
        "Currency",
    ],
    "tblMapping": [
        "Rule",
        "PlanLine",
        "ProviderName",
        "SubAccount",
        "ServiceName",
        "InstanceType",
        "RegionId",
        "TagKey",
        "TagValue",
    ],
    "tblUsage": ["Month", "PlanLine", "ActualMTokens"],
    "tblPrices": list(COLUMNS),
}
SHEETS = [
    "Start",
    "Workloads",
    "Sizing",
    "TCO",
    "Mix",
    "Budget",
    "Assets",
    "Mapping",
    "Usage",
    "Catalog",
    "Prices",
]


class Table:
    """An Excel table located by name, its cells addressed by (data row, header)."""

    def __init__(self, wb: openpyxl.Workbook, name: str) -> None:
        for ws in wb.worksheets:
            if name in ws.tables:
                self.sheet = ws.title
                self.ref = ws.tables[name].ref
                break
        else:
            raise KeyError(name)
        min_col, min_row, max_col, max_row = range_boundaries(self.ref)
        ws = wb[self.sheet]
        self.headers = [ws.cell(min_row, c).value for c in range(min_col, max_col + 1)]
        self.min_col, self.min_row, self.rows = min_col, min_row, max_row - min_row

    def cell(self, index: int, header: str) -> str:
        return f"{get_column_letter(self.min_col + self.headers.index(header))}{self.min_row + 1 + index}"


@pytest.fixture(scope="module")
def formulas_book(built: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(built)


@pytest.fixture(scope="module")
def values_book(built: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(built, data_only=True)


def test_the_committed_template_equals_a_fresh_build(built: Path):
    assert DEFAULT_TEMPLATE.read_bytes() == built.read_bytes(), (
        "rebuild it: finops template build --replace --out templates/llm-finops-plan.xlsx"
    )


def test_two_builds_give_the_same_bytes(built: Path, tmp_path: Path):
    from templates import build_template

    assert build_template(tmp_path / "again.xlsx").read_bytes() == built.read_bytes()


def test_excel_opens_it_with_the_stored_values(built: Path):
    """No full recalculation on load, so cells read right where the add-in is not installed."""
    import zipfile

    calc = re.search(r"<calcPr[^>]*>", zipfile.ZipFile(built).read("xl/workbook.xml").decode()).group(0)
    assert "fullCalcOnLoad" not in calc and 'calcId="191029"' in calc


def test_sheets_in_order(formulas_book):
    assert formulas_book.sheetnames == SHEETS


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_contract_tables_have_exact_headers(formulas_book, name):
    assert Table(formulas_book, name).headers == CONTRACT[name]


def test_every_defined_name_resolves_to_cells_on_a_sheet(formulas_book):
    names = dict(formulas_book.defined_names.items())
    assert {"PriceTable", "PlanLines", "ModelIds", "GpuIds", "MixDemand", "MixOptions", "TcoTotal"} <= set(
        names
    )
    for name, definition in names.items():
        destinations = list(definition.destinations)
        assert destinations, name
        for sheet, ref in destinations:
            ws = formulas_book[sheet]
            min_col, min_row, max_col, max_row = range_boundaries(ref.replace("$", ""))
            assert (
                ws.cell(min_row, min_col).value is not None or ws.cell(max_row, max_col).value is not None
            ), name


def test_plan_line_dropdowns_offer_lines_added_below_the_demo_plan(formulas_book):
    """``PlanLines`` (the Assets/Mapping/Usage dropdown) reaches as far down as Budget's own validation."""
    budget = Table(formulas_book, "tblBudget")
    ((sheet, ref),) = formulas_book.defined_names["PlanLines"].destinations
    min_col, min_row, _, max_row = range_boundaries(ref.replace("$", ""))
    validated_to = max(
        range_boundaries(str(rng))[3]
        for v in formulas_book["Budget"].data_validations.dataValidation
        for rng in v.sqref.ranges
    )
    assert (sheet, get_column_letter(min_col), min_row) == ("Budget", budget.cell(0, "PlanLine")[0], budget.min_row + 1)
    assert max_row == validated_to > budget.min_row + budget.rows


def _formula_cells(wb: openpyxl.Workbook):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                text = c.value.text if isinstance(c.value, ArrayFormula) else c.value
                if isinstance(text, str) and text.startswith("="):
                    yield ws.title, c.coordinate, text


def _calls(formula: str):
    """(function name, argument count) for each LLM_/FINOPS_ call, counting top-level commas."""
    for match in re.finditer(r"\b((?:LLM|FINOPS)_[A-Z_]+)\(", formula):
        depth, args, i = 1, 1, match.end()
        empty = formula[i] == ")"
        while depth:
            ch = formula[i]
            depth += ch == "("
            depth -= ch == ")"
            args += ch == "," and depth == 1
            i += 1
        yield match.group(1), 0 if empty else args


def test_every_udf_in_the_template_exists_with_a_matching_signature(formulas_book):
    seen = set()
    for sheet, cell, formula in _formula_cells(formulas_book):
        for name, count in _calls(formula):
            assert name in udfs.UDFS, f"{sheet}!{cell} calls unknown {name}"
            params = inspect.signature(udfs.UDFS[name]).parameters.values()
            required = sum(p.default is inspect.Parameter.empty for p in params)
            assert required <= count <= len(params), f"{sheet}!{cell}: {name} with {count} arguments"
            seen.add(name)
    # the add-in only where Python is needed: sizing, the performance model, the mix, the price book's lookup,
    # the owned fleet's cost bases and the managed APIs' token prices; arithmetic Excel does (Little's law,
    # CAPEX + OPEX x months, cost per
    # million tokens) is written as formulas
    assert seen == {"LLM_WEIGHTS_GIB", "LLM_KV_GIB", "LLM_MAX_CONCURRENCY", "LLM_SIZING", "LLM_RANKING",
                    "FINOPS_PRICE", "FINOPS_MIX", "FINOPS_OWNED_TCO", "FINOPS_API_PER_MTOK", "FINOPS_API_OFFER"}


def test_no_formula_types_an_hours_constant(formulas_book):
    """Hours per month and the profile's hours are named inputs (HoursPerMonth, MixProfileHours), never typed
    into a formula: a 336-hour profile pasted over the Mix sheet's is costed per month right."""
    typed = [f"{sheet}!{cell}: {formula}" for sheet, cell, formula in _formula_cells(formulas_book)
             if re.search(r"(?<![\w.$])(730|672|8760|744|720)(?![\w.])", formula)]
    assert typed == []
    names = formulas_book.defined_names
    assert names["HoursPerMonth"].attr_text.startswith("Start!") and names["MixProfileHours"].attr_text.startswith("Mix!")


def test_no_cached_value_is_an_add_in_error(formulas_book, values_book):
    errors = [
        f"{s}!{c}"
        for s, c, _ in _formula_cells(formulas_book)
        if str(values_book[s][c].value).startswith("#")
    ]
    assert errors == []


def test_inputs_are_styled_apart_from_computed_cells(formulas_book):
    workloads, sizing = Table(formulas_book, "tblWorkloads"), Table(formulas_book, "tblSizing")
    typed = formulas_book["Workloads"][workloads.cell(0, "DAU")].fill.fgColor.rgb
    computed = formulas_book["Sizing"][sizing.cell(0, "Concurrency")].fill.fgColor.rgb
    assert typed != computed


def test_no_formula_cell_is_formatted_as_text(formulas_book):
    """Excel keeps a formula re-entered into a Text ("@") cell as a literal string (Lite's binding step)."""
    text_formulas = [
        f"{sheet}!{cell}"
        for sheet, cell, _ in _formula_cells(formulas_book)
        if formulas_book[sheet][cell].number_format == "@"
    ]
    assert text_formulas == []


@pytest.mark.parametrize(
    "table, header, shows",
    [
        ("tblTco", "CloudMonthly", "$"),
        ("tblTco", "CloudPerMTokPeak", "$"),
        ("tblWorkloads", "OnlineShare", "%"),
        ("tblBudget", "Amount", "#,##0.00"),
        ("tblAssets", "PurchaseDate", "yyyy-mm-dd"),
    ],
)
def test_number_formats(formulas_book, table, header, shows):
    place = Table(formulas_book, table)
    assert shows in formulas_book[place.sheet][place.cell(0, header)].number_format


def test_headers_are_frozen_and_lists_validated(formulas_book):
    for sheet in ("Workloads", "Sizing", "Budget", "Assets", "Mapping", "Usage", "Prices"):
        assert formulas_book[sheet].freeze_panes is not None, sheet
    sources = {v.formula1 for v in formulas_book["Workloads"].data_validations.dataValidation}
    assert {"ModelIds", "GpuIds"} <= {s.lstrip("=") for s in sources if s}


def test_charts_are_present(formulas_book):
    assert len(formulas_book["Mix"]._charts) == 2 and len(formulas_book["TCO"]._charts) == 1


# ---- the formulas, recomputed in Python with the add-in, against the core --------------------------------
def _sizing_rows(formulas_book):
    workloads, sizing = Table(formulas_book, "tblWorkloads"), Table(formulas_book, "tblSizing")
    ws = formulas_book["Workloads"]
    for i in range(workloads.rows):
        name = ws[workloads.cell(i, "Workload")].value
        yield i, name, workloads, sizing


def test_sizing_recomputed_matches_the_core_for_every_seed_scenario(formulas_book, evaluated):
    checked = 0
    for i, name, workloads, sizing in _sizing_rows(formulas_book):  # same rows and places in both builds
        preset = presets()[name]
        gpu, precision, tp = (
            evaluated.value("Workloads", workloads.cell(i, h)) for h in ("Gpu", "Precision", "TP")
        )

        def got(header, i=i, sizing=sizing):
            return evaluated.value("Sizing", sizing.cell(i, header))

        expected_demand = demand(preset)
        assert got("Concurrency") == pytest.approx(expected_demand.concurrency, rel=1e-12), name
        assert got("WeightsGiB") == pytest.approx(
            weight_bytes(resolve_model(preset.model), precision) / 2**30
        )
        fit = memory_fit(preset.model, gpu, precision=precision, tp=tp, isl=preset.isl, osl=preset.osl)
        assert got("MaxConcurrency") == fit.max_concurrency
        engine = evaluated.value("Workloads", workloads.cell(i, "Engine"))
        answer = size_workload(preset, gpu=gpu, precision=precision, tp=tp, engine=engine, price_book=evaluated.prices)
        chosen, best = answer.choice.option, answer.best
        assert got("MeetsTargets") == ("yes" if chosen else "no"), name
        if chosen:
            p99 = preset.slo_percentile == "p99"
            assert got("TtftMs") == pytest.approx(chosen.ttft_p99_ms if p99 else chosen.ttft_p50_ms, rel=1e-9)
            assert got("TpotMs") == pytest.approx(chosen.itl_p99_ms if p99 else chosen.tpot_ms, rel=1e-9)
            assert (got("Replicas"), got("Gpus"), got("Instances"), got("GpusPaid"), got("InstanceType")) == (
                chosen.replicas, chosen.gpus, chosen.instances, chosen.gpus_paid, chosen.instance_type), name
            assert got("MonthlyCost") == pytest.approx(float(chosen.monthly_cost.amount), rel=1e-12)
        assert (got("BestGpu"), got("BestTp"), got("BestGpus"), got("BestInstances")) == (
            best.gpu, best.tp, best.gpus, best.instances), name
        checked += 1
    assert checked == len(presets())


def _computed_cells(formulas_book: openpyxl.Workbook, evaluated):
    """(sheet, cell, recomputed value) for every formula cell and every cell of each array formula's range."""
    for sheet, cell, _ in _formula_cells(formulas_book):
        found = formulas_book[sheet][cell].value
        if not isinstance(found, ArrayFormula):
            yield sheet, cell, evaluated.value(sheet, cell)
            continue
        block = evaluated.block(sheet, found.ref)
        min_col, min_row, max_col, max_row = range_boundaries(found.ref)
        for r in range(min_row, max_row + 1):
            for c in range(min_col, max_col + 1):
                inside = r - min_row < len(block) and c - min_col < len(block[0])
                yield sheet, f"{get_column_letter(c)}{r}", block[r - min_row][c - min_col] if inside else None


def test_every_formula_caches_the_value_it_recomputes_to(evaluated):
    """What a viewer shows before recalculation is what Excel shows after it (all sheets, whole spills)."""
    formulas_book = openpyxl.load_workbook(evaluated.path)
    values_book = openpyxl.load_workbook(evaluated.path, data_only=True)
    checked, picked = 0, 0
    for sheet, cell, got in _computed_cells(formulas_book, evaluated):
        cached = values_book[sheet][cell].value
        if isinstance(cached, float) or isinstance(got, float):
            assert got == pytest.approx(cached, rel=1e-9), f"{sheet}!{cell}"
        else:
            assert (got if got != "" else None) == (cached if cached != "" else None), f"{sheet}!{cell}"
        checked += 1
        picked += str(formulas_book[sheet][cell].value).startswith(("=INDEX(LLM_RANKING(", "=INDEX(FINOPS_MIX("))
    assert checked > 100 and picked > 150  # the LLM_RANKING and FINOPS_MIX tables, one INDEX formula per cell


def test_seed_003_tco_is_4356000(evaluated):
    total = evaluated.solution[f"'[{evaluated.book}]'!TCOTOTAL"].value[0][0]
    assert total == 4_356_000


def test_changing_an_input_moves_its_dependents(formulas_book, evaluated):
    workloads, sizing = Table(formulas_book, "tblWorkloads"), Table(formulas_book, "tblSizing")
    ws = formulas_book["Workloads"]
    row = next(
        i for i in range(workloads.rows) if ws[workloads.cell(i, "Workload")].value == "seed000-doc-qa"
    )
    dau = ws[workloads.cell(row, "DAU")].value
    before = {h: evaluated.value("Sizing", sizing.cell(row, h)) for h in ("Concurrency", "KvGiB", "Gpus")}
    after_solution = evaluated.recalculate(
        {
            ("Workloads", workloads.cell(row, "DAU")): dau * 3,
            ("TCO", _name_cell(formulas_book, "TcoGpus")): 10,
        }
    )
    after = {h: evaluated.value("Sizing", sizing.cell(row, h), after_solution) for h in before}
    assert after["Concurrency"] == pytest.approx(before["Concurrency"] * 3)  # seed 000: DAU x3 -> x3
    assert after["KvGiB"] > before["KvGiB"] and after["Gpus"] > before["Gpus"]
    assert after_solution[f"'[{evaluated.book}]'!TCOTOTAL"].value[0][0] == 10 * 160_000 + 10 * 9_000 * 36


def _name_cell(wb: openpyxl.Workbook, name: str) -> str:
    ((_, ref),) = wb.defined_names[name].destinations
    return ref.replace("$", "")


def test_a_workload_added_below_the_others_sizes_and_costs_itself(formulas_book, evaluated):
    """Type an eighth workload under the seven (as a planner does in Excel, the table growing by a row): its
    Sizing and TCO rows, there already and blank, follow it; the answer is ``finops size``'s for it."""
    workloads, sizing, tco = (Table(formulas_book, n) for n in ("tblWorkloads", "tblSizing", "tblTco"))
    ws = formulas_book["Workloads"]
    source = next(i for i in range(workloads.rows) if ws[workloads.cell(i, "Workload")].value == "seed000-doc-qa")
    new = workloads.rows          # the row under the table: Excel grows the table into it
    assert sizing.rows >= new + 1 and tco.rows >= new + 1
    assert evaluated.value("Sizing", sizing.cell(new, "Workload")) == ""     # blank until the workload is typed
    typed = openpyxl.load_workbook(evaluated.path)["Workloads"]
    inputs = {("Workloads", workloads.cell(new, h)): typed[workloads.cell(source, h)].value for h in workloads.headers}
    inputs[("Workloads", workloads.cell(new, "Workload"))] = "support-bot-eu"
    inputs[("Workloads", workloads.cell(new, "DAU"))] = 3 * typed[workloads.cell(source, "DAU")].value
    solution = evaluated.recalculate(inputs)

    def got(table, sheet, header):
        return evaluated.value(sheet, table.cell(new, header), solution)

    preset = presets()["seed000-doc-qa"]
    grown = dataclasses.replace(preset, name="support-bot-eu", dau=3 * preset.dau)
    gpu, precision, tp, engine = (inputs[("Workloads", workloads.cell(new, h))] for h in ("Gpu", "Precision", "TP",
                                                                                            "Engine"))
    answer = size_workload(grown, gpu=gpu, precision=precision, tp=tp, engine=engine, price_book=evaluated.prices)
    chosen = answer.choice.option
    assert got(sizing, "Sizing", "Workload") == "support-bot-eu"
    assert got(sizing, "Sizing", "Concurrency") == pytest.approx(demand(grown).concurrency, rel=1e-12)
    assert got(sizing, "Sizing", "MeetsTargets") == ("yes" if chosen else "no")
    assert chosen and got(sizing, "Sizing", "Gpus") == chosen.gpus
    assert got(sizing, "Sizing", "MonthlyCost") == pytest.approx(float(chosen.monthly_cost.amount), rel=1e-12)
    # TCO prices the same instances by the hour, times the named hours per month
    assert got(tco, "TCO", "Instances") == chosen.instances
    assert got(tco, "TCO", "CloudMonthly") == pytest.approx(
        chosen.instances * got(tco, "TCO", "InstanceHourly") * 730, rel=1e-12)
    assert got(tco, "TCO", "CloudMonthly") == pytest.approx(float(chosen.monthly_cost.amount), rel=1e-9)


def test_a_workload_past_its_models_native_context_says_so_in_its_sizing_row(formulas_book, values_book, evaluated):
    """The seed rows all fit their models' native contexts (``no``, stored and recomputed); a row typed below them
    for Llama-2 (native 4,096 tokens) with 5,000 + 500 tokens on a ContextLength of 5,500 reads ``yes``, and the
    same row within 4,096 tokens ``no``."""
    workloads, sizing = Table(formulas_book, "tblWorkloads"), Table(formulas_book, "tblSizing")
    ws, stored = formulas_book["Workloads"], values_book["Sizing"]
    seeds = [i for i in range(workloads.rows) if ws[workloads.cell(i, "Workload")].value in presets()]
    assert len(seeds) == len(presets())
    assert {stored[sizing.cell(i, "BeyondNativeContext")].value for i in seeds} == {"no"}
    assert {evaluated.value("Sizing", sizing.cell(i, "BeyondNativeContext")) for i in seeds} == {"no"}
    typed = openpyxl.load_workbook(evaluated.path)["Workloads"]
    source = seeds[0]
    new = workloads.rows
    inputs = {("Workloads", workloads.cell(new, h)): typed[workloads.cell(source, h)].value for h in workloads.headers}
    for header, value in (("Workload", "long-contracts"), ("Model", "llama-2-7b"), ("Gpu", "h100-sxm"),
                          ("Precision", "fp16"), ("TP", 1), ("ISL", 5000), ("OSL", 500), ("ContextLength", 5500)):
        inputs[("Workloads", workloads.cell(new, header))] = value
    flag = ("Sizing", sizing.cell(new, "BeyondNativeContext"))
    assert evaluated.value(*flag, evaluated.recalculate(inputs)) == "yes"
    inputs[("Workloads", workloads.cell(new, "ISL"))] = 2048
    inputs[("Workloads", workloads.cell(new, "OSL"))] = 512
    assert evaluated.value(*flag, evaluated.recalculate(inputs)) == "no"


def test_the_tco_sheet_puts_the_cheapest_managed_api_beside_each_fleet(formulas_book, values_book, evaluated):
    """Each TCO row shows what ``finops size`` shows for its workload: the cheapest API serving its model per token
    (seed002-translation: Bedrock's Qwen3 Coder 30B, 0.75 USD a million output tokens), its month at the row's
    volume, and the volume above which the row's own fleet costs less, CloudMonthly / ApiPerMTok."""
    tco = Table(formulas_book, "tblTco")
    stored = values_book["TCO"]
    row = next(i for i in range(tco.rows) if stored[tco.cell(i, "Workload")].value == "seed002-translation")

    def cell(header):
        return stored[tco.cell(row, header)].value

    managed = finops.size(preset="seed002-translation", price_book=evaluated.prices).managed
    cheapest = next(o for o in managed if o.pricing_model == "on_demand")
    assert (cell("ApiProvider"), cell("ApiModel")) == (cheapest.provider, cheapest.offer_model) == (
        "aws", "qwen.qwen3-coder-30b-a3b-v1:0")
    assert cell("ApiPerMTok") == float(cheapest.cost_per_million_output_tokens.amount) == 0.75
    cloud, volume = cell("CloudMonthly"), cell("MTokensPerMonth")
    assert cell("ApiMonthly") == pytest.approx(0.75 * volume, rel=1e-12)
    again = api_options(presets()["seed002-translation"], fleet_monthly=Money.of(repr(cloud), "USD"),
                        peak_output_tokens_per_s=cell("PeakTokensPerS"))[0]
    assert cell("FleetCheaperAboveMTok") == pytest.approx(again.fleet_cheaper_above_mtokens, rel=1e-12)
    assert again.monthly_output_mtokens == pytest.approx(volume, rel=1e-12)
    # the formulas, recomputed: the add-in's price and plain Excel's break-even
    assert evaluated.value("TCO", tco.cell(row, "ApiPerMTok")) == 0.75
    # the API's name is a formula too, so a row typed later shows its API after a recalculation
    for header, expected in (("ApiProvider", "aws"), ("ApiModel", "qwen.qwen3-coder-30b-a3b-v1:0")):
        assert str(formulas_book["TCO"][tco.cell(row, header)].value).startswith("=")
        assert evaluated.value("TCO", tco.cell(row, header)) == expected
    sizing = Table(formulas_book, "tblSizing")
    at = next(i for i in range(sizing.rows)
              if values_book["Sizing"][sizing.cell(i, "Workload")].value == "seed002-translation")
    assert evaluated.value("Sizing", sizing.cell(at, "ApiPerMTok")) == 0.75
    assert evaluated.value("Sizing", sizing.cell(at, "ApiModel")) == "qwen.qwen3-coder-30b-a3b-v1:0"
    assert values_book["Sizing"][sizing.cell(at, "ApiModel")].value == "qwen.qwen3-coder-30b-a3b-v1:0"
    # another model typed into the Workloads row: the TCO row names that model's API after a recalculation
    workloads = Table(formulas_book, "tblWorkloads")
    w = next(i for i in range(workloads.rows)
             if values_book["Workloads"][workloads.cell(i, "Workload")].value == "seed002-translation")
    after = evaluated.recalculate({("Workloads", workloads.cell(w, "Model")): "llama-3.1-405b"})
    assert evaluated.value("TCO", tco.cell(row, "ApiModel"), after) == "meta.llama3-1-405b-instruct-v1:0"
    assert evaluated.value("Sizing", sizing.cell(at, "ApiPerMTok"), after) == 4.8  # Bedrock 2.4 in + 2.4 out
    assert evaluated.value("TCO", tco.cell(row, "FleetCheaperAboveMTok")) == pytest.approx(
        evaluated.value("TCO", tco.cell(row, "CloudMonthly")) / 0.75, rel=1e-12)
    assert evaluated.value("TCO", tco.cell(row, "ApiMonthly")) == pytest.approx(
        0.75 * evaluated.value("TCO", tco.cell(row, "MTokensPerMonth")), rel=1e-12)
    # a model no API serves says so, with no figure
    unserved = [i for i in range(tco.rows) if stored[tco.cell(i, "Workload")].value in presets()
                and not api_options(presets()[stored[tco.cell(i, "Workload")].value])]
    for i in unserved:
        assert stored[tco.cell(i, "ApiPerMTok")].value == evaluated.value("TCO", tco.cell(i, "ApiPerMTok")) == "no API"
        assert stored[tco.cell(i, "ApiModel")].value == evaluated.value("TCO", tco.cell(i, "ApiModel")) == "no API"
        assert stored[tco.cell(i, "ApiProvider")].value == evaluated.value("TCO", tco.cell(i, "ApiProvider")) == "-"
        assert stored[tco.cell(i, "FleetCheaperAboveMTok")].value in (None, "")


def test_the_owned_line_budget_is_the_assets_depreciation_by_formula(formulas_book, evaluated):
    """The CAPEX line's Amount is a formula over the Assets sheet: the month's straight-line depreciation of the
    line's assets in service; a server bought for more moves it by the difference over its life."""
    budget, assets = Table(formulas_book, "tblBudget"), Table(formulas_book, "tblAssets")
    ws = formulas_book["Budget"]
    row = next(i for i in range(budget.rows) if ws[budget.cell(i, "Category")].value == "CAPEX")
    amount = budget.cell(row, "Amount")
    assert str(ws[amount].value).startswith("=SUMPRODUCT((Assets!")
    assert evaluated.value("Budget", amount) == pytest.approx(320_000 / 60 * 2 - 32_000 / 60 * 2 + 90_000 / 48)
    first = next(i for i in range(assets.rows) if formulas_book["Assets"][assets.cell(i, "AssetId")].value
                 == "SRV-H100-01")
    after = evaluated.recalculate({("Assets", assets.cell(first, "Cost")): 380_000})
    assert evaluated.value("Budget", amount, after) == pytest.approx(11_475 + 60_000 / 60)
