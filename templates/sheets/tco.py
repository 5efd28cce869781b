"""The TCO sheet: seed 003's check, then owned vs cloud per workload with cost per million tokens.

Seed 003 block, native arithmetic: ``CAPEX = GPUs x price``, ``OPEX/month = GPUs x opex``,
``TCO = CAPEX + OPEX/month x months`` (9 x 160,000 + 9 x 9,000 x 36 = 4,356,000 CNY; ``finops.tco.tco``).

Beside it, the cited owned H100 fleet over a horizon in each labelled basis, ``FINOPS_OWNED_TCO(GPUs,
months, basis)``: cash, book, levelized, and net cash (cash - the residual value still held), which
``finops tco`` ranks against commitments charged their whole term (:mod:`finops.tco.compare`).

Per workload (``tblTco``, one row per Workloads row with room to grow as the Sizing sheet has: every
formula reads its own row of Workloads and Sizing, blank while the workload is), the planner's configuration
as the Sizing sheet deploys it (``S`` = its Sizing row; ``finops.sizing.choice``)::

    Gpus, Instances, GpusPaid, InstanceType = S                 (whole TP groups on whole instances)
    Provider, Region, PeakTokensPerS        = LLM_SIZING(...)    (the instance priced, peak output tokens/s)
    PricingModel   = the workload's (on_demand unless the plan prices it otherwise, e.g. spot)
    InstanceHourly = FINOPS_PRICE(Provider, InstanceType, PricingModel, Region, PriceTable)
    CloudMonthly   = Instances x InstanceHourly x HoursPerMonth  OwnedMonthly = Gpus x OwnedGpuHour x HoursPerMonth
    CloudPerMTokPeak    = Instances x InstanceHourly / (PeakTokensPerS x 3,600) x 10^6      (owned likewise;
                          finops.tco.cost_per_million_tokens; no tokens: #DIV/0!, never a number)
    CloudPerMTokAverage = CloudPerMTokPeak x Workloads' PeakToAverage    (owned likewise)
    PlanLine        = Workloads' PlanLine (the Budget line the fleet is planned on)
    MTokensPerMonth = PeakTokensPerS x 3,600 x HoursPerMonth / PeakToAverage / 10^6  (output tokens served
                      in a month at the average load: the Budget line's PlannedMTokens)

The cheapest managed API serving the row's model per token on demand (Amazon Bedrock, Vertex AI; the bundled
token prices, ``finops.sizing.managed.api_options``), beside the fleet::

    ApiProvider = FINOPS_API_OFFER(Model, ISL, OSL, "provider"), ApiModel = FINOPS_API_OFFER(Model, ISL, OSL,
                  "model")   (the API ApiPerMTok prices; blank and "no API" where none serves the model)
    ApiPerMTok  = FINOPS_API_PER_MTOK(Model, ISL, OSL)   (input price x ISL / OSL + output price; "no API" where
                  the add-in answers that no managed API serves the model; without the add-in, an error)
    ApiMonthly  = ApiPerMTok x MTokensPerMonth             (the API's bill for the workload's average month)
    FleetCheaperAboveMTok = CloudMonthly / ApiPerMTok      (million output tokens a month above which the
                                                            row's own fleet, paid every hour, costs less)

``HoursPerMonth`` is the Start sheet's named input (730). Only the price lookup (``FINOPS_PRICE``), the
sizing (``LLM_SIZING``), the owned fleet's cost bases (``FINOPS_OWNED_TCO``) and the managed API's token price
(``FINOPS_API_PER_MTOK``) call the add-in; the rest
is plain Excel, which computes without it.

Cost per million output tokens on two labelled bases: ``*PerMTokPeak`` at the peak load running 24/7,
``*PerMTokAverage`` at the workload's average load with the fleet still sized and paid for the peak
(the same monthly cost over ``PeakToAverage`` times fewer tokens;
:func:`finops.sizing.ranking.per_million_at_average`).

A configuration that misses its targets (``S.MeetsTargets = "no"``) is priced nowhere: its cost cells
show why (``S.WhyNot``), so it stays out of the chart. The owned GPU-hour is the cited H100 reference
node of ``finops.tco.reference`` with its cost of capital (other accelerators: type your own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook

from finops.cells import NOT_APPLICABLE
from finops.money import Money
from finops.price_book import PriceBook
from finops.tco import cost_per_million_tokens, reference_case, tco

from ..styles import Styles
from . import _answers
from ._table import (
    ROOM,
    Column,
    Formula,
    TablePlace,
    fit_for_print,
    readable_chart,
    spare,
    titled_sheet,
    unless_blank,
    write_cell,
    write_table,
)
from .sizing import SizedRow, sizing_formula, sizing_value
from .start import HOURS_PER_MONTH
from .workloads import WorkloadRow

__all__ = ["TCO_COLUMNS", "PlannedFleet", "write_tco"]

_SEED003 = (
    ("GPUs", "TcoGpus", 9, "int"),
    ("Price per GPU", "TcoPricePerGpu", 160_000, "money"),
    ("OPEX per GPU-month", "TcoOpexPerGpuMonth", 9_000, "money"),
    ("Months", "TcoMonths", 36, "int"),
    ("Currency", "TcoCurrency", "CNY", "text"),
)
TCO_COLUMNS = (
    Column("Workload", role="computed", width=30),
    Column("Gpu", role="computed", width=11),
    Column("TP", "int", "computed", 5),
    Column("Gpus", "int", "computed", 7),
    Column("Instances", "int", "computed", 9),
    Column("GpusPaid", "int", "computed", 8),
    Column("PeakTokensPerS", "number", "computed", 12),
    Column("Provider", role="computed", width=9),
    Column("Region", role="computed", width=13),
    Column("InstanceType", role="computed", width=16),
    Column("PricingModel", role="computed", width=12),
    Column("InstanceHourly", "usd_rate", "computed", 12),
    Column("CloudMonthly", "usd", "computed", 14),
    Column("CloudPerMTokPeak", "usd_rate", "computed", 12),
    Column("CloudPerMTokAverage", "usd_rate", "computed", 12),
    Column("OwnedGpuHour", "usd_rate", width=11),
    Column("OwnedMonthly", "usd", "computed", 14),
    Column("OwnedPerMTokPeak", "usd_rate", "computed", 12),
    Column("OwnedPerMTokAverage", "usd_rate", "computed", 12),
    Column("Cheaper", role="computed", width=9),
    Column("PlanLine", role="computed", width=22),
    Column("MTokensPerMonth", "number", "computed", 13),
    Column("ApiProvider", role="computed", width=8),
    Column("ApiModel", role="computed", width=26),
    Column("ApiPerMTok", "usd_rate", "computed", 10),
    Column("ApiMonthly", "usd", "computed", 12),
    Column("FleetCheaperAboveMTok", "number", "computed", 13),
)




def _per_mtok(hourly: float, tokens_per_s: float) -> float:
    """The cached value of the cost-per-million-tokens formula: ``finops.tco.cost_per_million_tokens``."""
    return float(cost_per_million_tokens(Money.of(hourly, "USD"), tokens_per_s).amount)


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _seed003(ws: Any, wb: Workbook, styles: Styles, top: int) -> None:
    ws.write_string(top, 0, "Seed 003 check: TCO = CAPEX + OPEX x months", styles.label)
    for i, (label, name, value, kind) in enumerate(_SEED003, start=1):
        ws.write_string(top + i, 0, label)
        write_cell(ws, top + i, 1, value, styles.input(kind))
        wb.define_name(name, f"=TCO!{xl_rowcol_to_cell(top + i, 1, True, True)}")
    gpus, price, opex, months, currency = (v for _, _, v, _ in _SEED003)
    capex, opex_month = gpus * price, gpus * opex
    derived = (
        ("CAPEX", "TcoCapex", Formula("=TcoGpus*TcoPricePerGpu", capex)),
        ("OPEX per month", "TcoOpexPerMonth", Formula("=TcoGpus*TcoOpexPerGpuMonth", opex_month)),
        (
            "TCO",
            "TcoTotal",
            Formula(
                "=TcoCapex+TcoOpexPerMonth*TcoMonths",
                float(tco(Money.of(capex, currency), Money.of(opex_month, currency), months).amount),
            ),
        ),
    )
    first = top + len(_SEED003) + 1
    for i, (label, name, formula) in enumerate(derived):
        ws.write_string(first + i, 0, label, styles.label)
        write_cell(ws, first + i, 1, formula, styles.computed("money"))
        wb.define_name(name, f"=TCO!{xl_rowcol_to_cell(first + i, 1, True, True)}")


_OWNED_BASES = (
    ("Cash: purchases + OPEX as paid - resale", "cash"),
    ("Book: straight-line depreciation + OPEX", "book"),
    ("Levelized: capital recovery annuity + OPEX", "levelized"),
    ("Net cash: cash - residual still held (ranked)", "net_cash"),
)
_OWNED_INPUTS = (("Owned GPUs", "TcoOwnedGpus", 8), ("Horizon, months", "TcoOwnedMonths", 36))


def _owned_bases(ws: Any, wb: Workbook, styles: Styles, top: int, label_col: int, value_col: int) -> None:
    """The cited owned fleet's totals over a horizon in each labelled basis (``FINOPS_OWNED_TCO``)."""
    case = reference_case("h100")
    ws.write_string(top, label_col, f"Owned {case.name} fleet over a horizon, each cost basis "
                                    "(finops tco; docs/tco.md)", styles.label)
    for i, (label, name, value) in enumerate(_OWNED_INPUTS, start=1):
        ws.write_string(top + i, label_col, label)
        write_cell(ws, top + i, value_col, value, styles.input("int"))
        wb.define_name(name, f"=TCO!{xl_rowcol_to_cell(top + i, value_col, True, True)}")
    gpus, months = (v for _, _, v in _OWNED_INPUTS)
    for i, (label, basis) in enumerate(_OWNED_BASES, start=len(_OWNED_INPUTS) + 1):
        ws.write_string(top + i, label_col, label)
        write_cell(ws, top + i, value_col,
                   Formula(f'=FINOPS_OWNED_TCO(TcoOwnedGpus,TcoOwnedMonths,"{basis}")',
                           _answers.owned_total(gpus, months, basis)), styles.computed("usd"))


@dataclass(frozen=True)
class PlannedFleet:
    """A workload's line of the TCO sheet as the Budget reads it: its plan line, monthly cloud cost (the
    why-not text when it misses its targets), million output tokens a month and accelerators paid."""

    plan_line: str
    monthly_cost: float | str
    mtokens: float | str
    gpus_paid: float | str = ""


def write_tco(
    wb: Workbook,
    styles: Styles,
    rows: list[WorkloadRow],
    workloads: TablePlace,
    sizing: TablePlace,
    sized: list[SizedRow],
    book: PriceBook,
) -> tuple[TablePlace, list[PlannedFleet]]:
    """The TCO sheet; returns ``tblTco``'s place and what each workload plans (for the Budget sheet)."""
    ws = titled_sheet(
        wb,
        styles,
        "TCO",
        "Owned vs cloud per workload, per month and per million output tokens (*PerMTokPeak: at the peak, "
        "running 24/7; *PerMTokAverage: at the average load, the fleet still sized for the peak), for your "
        "configuration as the Sizing sheet deploys it; one that misses its targets is not "
        "priced. Cloud prices come from the Prices sheet (PriceTable); OwnedGpuHour is yours to change.",
        widths=[c.width for c in TCO_COLUMNS],
    )
    ws.set_column(0, 0, 30)
    _seed003(ws, wb, styles, 3)
    headers = [c.header for c in TCO_COLUMNS]
    _owned_bases(ws, wb, styles, 3, headers.index("Gpus"), headers.index("PeakTokensPerS"))
    top = 3 + len(_SEED003) + 5
    owned = float(reference_case("h100").node.cost_per_gpu_hour(cost_of_capital=True).amount)
    place = TablePlace("TCO", "tblTco", tuple(c.header for c in TCO_COLUMNS), top, 0, max(ROOM, len(rows)))
    table = []
    for i in range(place.rows):
        row, answer = (rows[i], sized[i]) if i < len(rows) else (rows[0], sized[0])
        cells = unless_blank(workloads.cell(i, "Workload", sheet=True, follow=True),
                             _tco_row(i, row, answer, place, workloads, sizing, book,
                                      owned if row.gpu == "h100-sxm" else None))
        table.append(cells if i < len(rows) else spare(cells))
    ws.write_string(
        top - 1,
        0,
        f"Per workload (OwnedGpuHour: {reference_case('h100').name}, cited in "
        "finops/catalog/data/owned_reference.csv, levelized at its 10 % cost of capital; OwnedMonthly on that basis)",
        styles.label,
    )
    write_table(ws, styles, "tblTco", TCO_COLUMNS, table, first_row=top)
    ws.freeze_panes(top + 1, 1)
    fit_for_print(ws, top, [c.width for c in TCO_COLUMNS])
    chart = wb.add_chart({"type": "column"})
    for header, colour in (("CloudMonthly", "#4472C4"), ("OwnedMonthly", "#ED7D31")):
        col = place.col(header)
        chart.add_series(
            {
                "name": header,
                "categories": ["TCO", place.row(0), 0, place.row(len(rows) - 1), 0],
                "values": ["TCO", place.row(0), col, place.row(len(rows) - 1), col],
                "fill": {"color": colour},
            }
        )
    readable_chart(chart, "Monthly cost per workload: cloud vs owned (configurations meeting their targets)",
                   y={"name": "USD per month (log scale)", "num_format": "#,##0", "log_base": 10}, legend="bottom")
    chart.set_size({"width": 900, "height": 360})
    ws.insert_chart(place.row(place.rows) + 2, 0, chart)
    return place, [PlannedFleet(row.plan_line, cells[place.headers.index("CloudMonthly")].value,
                                cells[place.headers.index("MTokensPerMonth")].value,
                                cells[place.headers.index("GpusPaid")].value)
                   for row, cells in zip(rows, table)]


def _tco_row(i: int, row: WorkloadRow, answer: SizedRow, place: TablePlace, workloads: TablePlace,
             sizing: TablePlace, book: PriceBook, owned_hour: float | None) -> list[Any]:
    """Formulas and cached values of ``tblTco`` row ``i``."""

    def own(header: str) -> str:
        return place.cell(i, header, absolute=False)

    def sized(header: str) -> str:
        return sizing.cell(i, header, sheet=True, follow=True)

    def unless_missed(formula: str) -> str:
        """``formula`` when the configuration meets its targets, else the Sizing sheet's why-not text."""
        return f'=IF({sized("MeetsTargets")}="yes",{formula},{sized("WhyNot")})'

    v = answer.values
    meets, why = answer.meets_targets, v["WhyNot"]
    provider, region, peak_tps = (sizing_value(row, f, book) for f in ("Provider", "Region", "OutputTokensPerS"))
    hourly = _answers.hourly_price(book, provider, v["InstanceType"], row.pricing_model, region) if meets else why
    cloud_hour = v["Instances"] * hourly if meets else None
    cloud_month = cloud_hour * HOURS_PER_MONTH if meets else why
    cloud_mtok = _per_mtok(cloud_hour, peak_tps) if meets else why
    owned_month = (v["Gpus"] * owned_hour * HOURS_PER_MONTH if owned_hour else "") if meets else why
    owned_mtok = (_per_mtok(v["Gpus"] * owned_hour, peak_tps) if owned_hour else "") if meets else why
    ratio = row.workload.peak_to_average
    cloud_avg = cloud_mtok * ratio if meets else why
    owned_avg = (owned_mtok * ratio if owned_hour else "") if meets else why
    to_average = f"*{workloads.cell(i, 'PeakToAverage', sheet=True, follow=True)}"
    mtokens = peak_tps * 3600 * HOURS_PER_MONTH / ratio / 1e6 if meets else why
    api = _answers.cheapest_api(row.workload, cloud_month if meets else None, peak_tps if meets else None)
    api_mtok = float(api.cost_per_million_output_tokens.amount) if api else "no API"
    request = ",".join(workloads.cell(i, name, sheet=True, follow=True) for name in ("Model", "ISL", "OSL"))
    api_call = f"FINOPS_API_PER_MTOK({request})"

    def api_offer(part: str, none: str) -> str:
        """The API's provider or model id, ``none`` where no managed API serves the model."""
        call = f'FINOPS_API_OFFER({request},"{part}")'
        return f'=IF(ISNUMBER(SEARCH("no managed API",{call})),"{none}",{call})'

    def with_api(fleet: str, formula: str) -> str:
        """``formula`` where the fleet is priced and an API serves the model, else blank (an error still shows)."""
        return f'=IF(OR(ISTEXT({own(fleet)}),{own("ApiPerMTok")}="no API"),"",{formula})'

    cheaper = ("owned" if owned_month < cloud_month else "cloud") if _num(owned_month) and _num(cloud_month) else ""
    owned_if = f'IF(ISNUMBER({own("OwnedGpuHour")}),{{}},"")'

    def per_mtok(hourly: str) -> str:
        """Cost of a million output tokens at ``hourly`` cost: hourly / (tokens/s x 3,600) x 10^6."""
        return f"{hourly}/({own('PeakTokensPerS')}*3600)*10^6"

    return [
        Formula(f"={sized('Workload')}", row.workload.name),
        Formula(f"={workloads.cell(i, 'Gpu', sheet=True, follow=True)}", row.gpu),
        Formula(f"={workloads.cell(i, 'TP', sheet=True, follow=True)}", row.tp),
        Formula(f"={sized('Gpus')}", v["Gpus"]),
        Formula(f"={sized('Instances')}", v["Instances"]),
        Formula(f"={sized('GpusPaid')}", v["GpusPaid"]),
        Formula(f"={sizing_formula(workloads, i, 'OutputTokensPerS')}", peak_tps),
        Formula(f"={sizing_formula(workloads, i, 'Provider')}", provider),
        Formula(f"={sizing_formula(workloads, i, 'Region')}", region),
        Formula(f"={sized('InstanceType')}", v["InstanceType"]),
        row.pricing_model,
        Formula(unless_missed(f"FINOPS_PRICE({own('Provider')},{own('InstanceType')},{own('PricingModel')},"
                              f"{own('Region')},PriceTable)"), hourly),
        Formula(unless_missed(f"{own('Instances')}*{own('InstanceHourly')}*HoursPerMonth"), cloud_month),
        Formula(unless_missed(per_mtok(f"{own('Instances')}*{own('InstanceHourly')}")), cloud_mtok),
        Formula(unless_missed(own("CloudPerMTokPeak") + to_average), cloud_avg),
        owned_hour,
        Formula(unless_missed(owned_if.format(f"{own('Gpus')}*{own('OwnedGpuHour')}*HoursPerMonth")), owned_month),
        Formula(unless_missed(owned_if.format(per_mtok(f"{own('Gpus')}*{own('OwnedGpuHour')}"))), owned_mtok),
        Formula(unless_missed(owned_if.format(own("OwnedPerMTokPeak") + to_average)), owned_avg),
        Formula(f'=IF(OR(ISTEXT({own("OwnedMonthly")}),ISTEXT({own("CloudMonthly")})),"",'
                f'IF({own("OwnedMonthly")}<{own("CloudMonthly")},"owned","cloud"))', cheaper),
        Formula(f'=""&{workloads.cell(i, "PlanLine", sheet=True, follow=True)}', row.plan_line),
        Formula(unless_missed(f"{own('PeakTokensPerS')}*3600*HoursPerMonth/"
                              f"{workloads.cell(i, 'PeakToAverage', sheet=True, follow=True)}/10^6"), mtokens),
        Formula(api_offer("provider", NOT_APPLICABLE), api.provider if api else NOT_APPLICABLE),
        Formula(api_offer("model", "no API"), api.offer_model if api else "no API"),
        Formula(f'=IF(ISNUMBER(SEARCH("no managed API",{api_call})),"no API",{api_call})', api_mtok),
        Formula(with_api("MTokensPerMonth", f"{own('ApiPerMTok')}*{own('MTokensPerMonth')}"),
                api_mtok * mtokens if api and meets else ""),
        Formula(with_api("CloudMonthly", f"{own('CloudMonthly')}/{own('ApiPerMTok')}"),
                cloud_month / api_mtok if api and meets else ""),
    ]
