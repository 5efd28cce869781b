"""The TCO sheet: seed 003's check, then owned vs cloud per workload with cost per million tokens.

Seed 003 block: ``CAPEX = GPUs x price``, ``OPEX/month = GPUs x opex``, ``TCO = FINOPS_TCO(CAPEX,
OPEX/month, months)`` (9 x 160,000 + 9 x 9,000 x 36 = 4,356,000 CNY).

Per workload (``tblTco``)::

    InstanceHourly = FINOPS_PRICE(Provider, InstanceType, PricingModel, Region, PriceTable)
    CloudGpuHour   = InstanceHourly / GpusPerInstance
    CloudMonthly   = Gpus x CloudGpuHour x 730            OwnedMonthly = Gpus x OwnedGpuHour x 730
    CloudPerMTok   = FINOPS_COST_PER_MTOK(CloudGpuHour x TP, ReplicaTokensPerS)   (owned likewise)

The cloud instance is the one ``finops.sizing.search`` priced for the workload's GPU and TP (the
cheapest in the price book); the owned GPU-hour is the cited H100 reference node of ``finops.tco.reference``
with its cost of capital (other GPUs: type your own).
"""

from __future__ import annotations

from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook

from addin import udfs
from finops.price_book import PriceBook, PriceRow
from finops.tco.reference import reference_case

from ..styles import Styles
from ._table import Column, Formula, TablePlace, titled_sheet, write_cell, write_table
from .catalog import prices_range
from .sizing import SizingValues
from .workloads import WorkloadRow

__all__ = ["TCO_COLUMNS", "write_tco"]

HOURS_PER_MONTH = 730
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
    Column("Gpus", "int", "computed", 7),
    Column("TP", "int", "computed", 5),
    Column("ReplicaTokensPerS", "number", "computed", 12),
    Column("Provider", width=9),
    Column("Region", width=13),
    Column("InstanceType", width=16),
    Column("GpusPerInstance", "int", width=10),
    Column("PricingModel", width=12),
    Column("InstanceHourly", "usd_rate", "computed", 12),
    Column("CloudGpuHour", "usd_rate", "computed", 11),
    Column("CloudMonthly", "usd", "computed", 13),
    Column("CloudPerMTok", "usd_rate", "computed", 12),
    Column("OwnedGpuHour", "usd_rate", width=11),
    Column("OwnedMonthly", "usd", "computed", 13),
    Column("OwnedPerMTok", "usd_rate", "computed", 12),
    Column("Cheaper", role="computed", width=9),
)


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _instance(book: PriceBook, row: WorkloadRow) -> PriceRow | None:
    """The on-demand price row of the instance the search chose for this workload, if any."""
    if row.instance is None:
        return None
    provider, region, instance_type = row.instance
    found = book.filter(
        provider=provider, region=region, instance_type=instance_type, pricing_model="on_demand"
    )
    return min(found, key=lambda r: r.hourly_cost) if len(found) else None


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
                "=FINOPS_TCO(TcoCapex,TcoOpexPerMonth,TcoMonths,TcoCurrency)",
                udfs.FINOPS_TCO(capex, opex_month, months, currency),
            ),
        ),
    )
    first = top + len(_SEED003) + 1
    for i, (label, name, formula) in enumerate(derived):
        ws.write_string(first + i, 0, label, styles.label)
        write_cell(ws, first + i, 1, formula, styles.computed("money"))
        wb.define_name(name, f"=TCO!{xl_rowcol_to_cell(first + i, 1, True, True)}")


def write_tco(
    wb: Workbook,
    styles: Styles,
    rows: list[WorkloadRow],
    workloads: TablePlace,
    sizing: TablePlace,
    sized: list[SizingValues],
    book: PriceBook,
) -> TablePlace:
    ws = titled_sheet(
        wb,
        styles,
        "TCO",
        "Owned vs cloud per workload, per month and per million output tokens. Cloud prices "
        "come from the Prices sheet (PriceTable); yellow cells are choices you can change.",
    )
    ws.set_column(0, 0, 30)
    _seed003(ws, wb, styles, 3)
    top = 3 + len(_SEED003) + 5
    owned = float(reference_case("h100").node.cost_per_gpu_hour(cost_of_capital=True).amount)
    place = TablePlace("TCO", "tblTco", tuple(c.header for c in TCO_COLUMNS), top, 0, len(rows))
    table = []
    price_cells = prices_range(book)
    for i, (row, values) in enumerate(zip(rows, sized)):

        def own(header: str, i: int = i) -> str:
            return place.cell(i, header, absolute=False)

        instance = _instance(book, row)
        provider, region, itype, count, model = (
            (instance.provider, instance.region, instance.instance_type, instance.gpu_count, "on_demand")
            if instance
            else ("", "", "", None, "on_demand")
        )
        hourly = (
            udfs.FINOPS_PRICE(provider, itype, model, region, price_cells)
            if instance
            else "#FINOPS: no price"
        )
        gpu_hour = hourly / count if _num(hourly) and count else hourly
        gpus, tps = values.gpus, values.replica_tokens_per_s
        cloud_month = gpus * gpu_hour * HOURS_PER_MONTH if _num(gpus) and _num(gpu_hour) else ""
        cloud_mtok = udfs.FINOPS_COST_PER_MTOK(gpu_hour * row.tp, tps) if _num(gpu_hour) and _num(tps) else ""
        owned_hour = owned if row.gpu == "h100-sxm" else None
        owned_month = gpus * owned_hour * HOURS_PER_MONTH if owned_hour and _num(gpus) else ""
        owned_mtok = udfs.FINOPS_COST_PER_MTOK(owned_hour * row.tp, tps) if owned_hour and _num(tps) else ""
        cheaper = (
            ("owned" if owned_month < cloud_month else "cloud")
            if _num(owned_month) and _num(cloud_month)
            else ""
        )
        table.append(
            [
                Formula(f"={sizing.cell(i, 'Workload', sheet=True)}", row.workload.name),
                Formula(f"={workloads.cell(i, 'Gpu', sheet=True)}", row.gpu),
                Formula(f"={sizing.cell(i, 'Gpus', sheet=True)}", gpus),
                Formula(f"={workloads.cell(i, 'TP', sheet=True)}", row.tp),
                Formula(f"={sizing.cell(i, 'ReplicaTokensPerS', sheet=True)}", tps),
                provider,
                region,
                itype,
                count,
                model,
                Formula(
                    f"=FINOPS_PRICE({own('Provider')},{own('InstanceType')},{own('PricingModel')},{own('Region')},"
                    "PriceTable)",
                    hourly,
                ),
                Formula(f"={own('InstanceHourly')}/{own('GpusPerInstance')}", gpu_hour),
                Formula(f"={own('Gpus')}*{own('CloudGpuHour')}*{HOURS_PER_MONTH}", cloud_month),
                Formula(
                    f"=FINOPS_COST_PER_MTOK({own('CloudGpuHour')}*{own('TP')},{own('ReplicaTokensPerS')})",
                    cloud_mtok,
                ),
                owned_hour,
                Formula(
                    f'=IF(ISNUMBER({own("OwnedGpuHour")}),{own("Gpus")}*{own("OwnedGpuHour")}*{HOURS_PER_MONTH},"")',
                    owned_month,
                ),
                Formula(
                    f"=IF(ISNUMBER({own('OwnedGpuHour')}),FINOPS_COST_PER_MTOK({own('OwnedGpuHour')}*{own('TP')},"
                    f'{own("ReplicaTokensPerS")}),"")',
                    owned_mtok,
                ),
                Formula(
                    f"=IF(AND(ISNUMBER({own('OwnedMonthly')}),ISNUMBER({own('CloudMonthly')})),"
                    f'IF({own("OwnedMonthly")}<{own("CloudMonthly")},"owned","cloud"),"")',
                    cheaper,
                ),
            ]
        )
    ws.write_string(
        top - 1,
        0,
        f"Per workload (owned GPU-hour: {reference_case('h100').name}, "
        "cited in finops/catalog/data/owned_reference.csv, with its 10 % cost of capital)",
        styles.label,
    )
    write_table(ws, styles, "tblTco", TCO_COLUMNS, table, first_row=top)
    ws.freeze_panes(top + 1, 1)
    chart = wb.add_chart({"type": "column"})
    for header, colour in (("CloudMonthly", "#4472C4"), ("OwnedMonthly", "#ED7D31")):
        col = place.col(header)
        chart.add_series(
            {
                "name": header,
                "categories": ["TCO", place.row(0), 0, place.row(place.rows - 1), 0],
                "values": ["TCO", place.row(0), col, place.row(place.rows - 1), col],
                "fill": {"color": colour},
            }
        )
    chart.set_title({"name": "Monthly cost per workload: cloud vs owned"})
    chart.set_y_axis({"name": "USD per month", "num_format": "#,##0"})
    chart.set_size({"width": 900, "height": 360})
    ws.insert_chart(place.row(place.rows) + 2, 0, chart)
    return place
