"""Builders for reconcile tests: small FOCUS bills and plan workbooks that follow the table contract."""

from __future__ import annotations

import csv
import gzip
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import openpyxl
import pytest
from openpyxl.worksheet.table import Table

from finops.focus import COLUMNS, GPU_COLUMNS
from finops.reconcile.bills import open_bills
from finops.reconcile.sample_bills import sample_bill_paths

BUDGET_HEADERS = ("Month", "PlanLine", "CostCentre", "Category", "Provider", "Amount", "Currency", "PlannedMTokens")
ASSETS_HEADERS = ("AssetId", "Description", "PlanLine", "CostCentre", "GpuModel", "GpuCount", "PurchaseDate",
                  "InServiceDate", "Cost", "ResidualValue", "LifeMonths", "Currency")
MAPPING_HEADERS = ("Rule", "PlanLine", "ProviderName", "SubAccount", "ServiceName", "InstanceType", "RegionId",
                   "TagKey", "TagValue")
USAGE_HEADERS = ("Month", "PlanLine", "ActualMTokens")

#: A usage charge of May 2026 with every mandatory FOCUS column filled.
BASE_ROW: dict[str, Any] = {
    "ProviderName": "AWS", "PublisherName": "AWS", "InvoiceIssuerName": "AWS", "InvoiceId": "INV-1",
    "BillingAccountId": "111", "BillingAccountName": "payer", "SubAccountId": "222", "SubAccountName": "prod",
    "BillingPeriodStart": "2026-05-01T00:00:00Z", "BillingPeriodEnd": "2026-06-01T00:00:00Z",
    "ChargePeriodStart": "2026-05-03T00:00:00Z", "ChargePeriodEnd": "2026-05-03T01:00:00Z",
    "ChargeCategory": "Usage", "ChargeClass": "", "ChargeDescription": "GPU instance hour",
    "ChargeFrequency": "Usage-Based", "BilledCost": "10.00", "EffectiveCost": "10.00", "ListCost": "10.00",
    "ContractedCost": "10.00", "PricingCategory": "Standard", "PricingQuantity": "1", "PricingUnit": "Hours",
    "BillingCurrency": "USD", "ConsumedQuantity": "1", "ConsumedUnit": "Hours", "ServiceName": "AmazonEC2",
    "ServiceCategory": "Compute", "RegionId": "us-east-1", "Tags": '{"team":"ml"}',
}


def write_bill(path: Path, rows: Sequence[dict[str, Any]], *, columns: Sequence[str] | None = None) -> Path:
    """A FOCUS CSV (gzip when the name ends in .gz): every FOCUS column unless ``columns`` is given."""
    names = list(columns) if columns is not None else [c.name for c in COLUMNS]
    extra = sorted({k for r in rows for k in r if k not in names and k in {c.name for c in GPU_COLUMNS}})
    names += extra
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as handle:  # type: ignore[operator]
        writer = csv.DictWriter(handle, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({**BASE_ROW, **_on_its_invoice(row)})
    return path


def _on_its_invoice(row: dict[str, Any]) -> dict[str, Any]:
    """A row whose ChargePeriodStart is in another month than May is on that month's invoice (its
    BillingPeriodStart/End), unless the row gives its billing period or a timestamp that does not parse."""
    if "BillingPeriodStart" in row or not row.get("ChargePeriodStart"):
        return row
    try:
        start = datetime.fromisoformat(str(row["ChargePeriodStart"])).astimezone(UTC)
    except ValueError:
        return row
    end = date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return {"BillingPeriodStart": f"{start.year:04d}-{start.month:02d}-01T00:00:00Z",
            "BillingPeriodEnd": f"{end.isoformat()}T00:00:00Z", **row}


def _table(book: openpyxl.Workbook, sheet: str, name: str, headers: Sequence[str],
           rows: Sequence[Sequence[Any]]) -> None:
    ws = book.create_sheet(sheet)
    ws.append([f"{sheet} sheet"])
    ws.append(list(headers))
    for row in rows:
        ws.append(list(row))
    last = openpyxl.utils.get_column_letter(len(headers))
    ws.add_table(Table(displayName=name, ref=f"A2:{last}{2 + max(len(rows), 1)}"))


def write_plan(path: Path, *, budget: Sequence[Sequence[Any]], assets: Sequence[Sequence[Any]] = (),
               mapping: Sequence[Sequence[Any]] = (), usage: Sequence[Sequence[Any]] | None = None) -> Path:
    """A plan workbook with tblBudget/tblAssets/tblMapping(/tblUsage), tables starting at row 2."""
    book = openpyxl.Workbook()
    book.remove(book.active)
    _table(book, "Budget", "tblBudget", BUDGET_HEADERS, budget)
    _table(book, "Assets", "tblAssets", ASSETS_HEADERS, assets)
    _table(book, "Mapping", "tblMapping", MAPPING_HEADERS, mapping)
    if usage is not None:
        _table(book, "Usage", "tblUsage", USAGE_HEADERS, usage)
    book.save(path)
    return path


@pytest.fixture
def simple_plan(tmp_path: Path) -> Path:
    """Two OPEX lines and a CAPEX line with one server (1,200 USD/month depreciation from 2026-01)."""
    return write_plan(
        tmp_path / "plan.xlsx",
        budget=[("2026-05", "gpu", "cc-1", "OPEX", "AWS", 100, "USD", 10),
                ("2026-05", "storage", "cc-1", "OPEX", "AWS", 50, "USD", None),
                ("2026-05", "onprem", "cc-2", "CAPEX", "On-prem", 1000, "USD", None),
                ("2026-06", "gpu", "cc-1", "OPEX", "AWS", 100, "USD", None)],
        assets=[("SRV-1", "8x H100", "onprem", "cc-2", "h100-sxm", 8, date(2025, 12, 20), date(2026, 1, 2),
                 73_000, 1_000, 60, "USD")],
        mapping=[(1, "gpu", "AWS", "", "AmazonEC2", "p5.*", "", "", ""),
                 (2, "storage", "", "", "AmazonS3", "", "", "", "")],
        usage=[("2026-05", "gpu", 4)])


@pytest.fixture(scope="session")
def template_plan(tmp_path_factory) -> Path:
    """The planning template as the workbook face builds it (built once; tests must not change it)."""
    from templates.builder import build_template

    return build_template(tmp_path_factory.mktemp("template") / "plan.xlsx")


@pytest.fixture(scope="module")
def local():
    """A DuckDB connection with the bundled sample bills open as the bill view (one per test module)."""
    con = duckdb.connect()
    open_bills(con, sample_bill_paths())
    return con
