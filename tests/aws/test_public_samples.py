"""The FinOps Foundation's anonymized legacy CUR (focus_converters' AWS test dataset, an excerpt) mapped to
FOCUS: its columns read under their CUR 2.0 names, every total equal to DuckDB's sum run on the file.

Fixture: ``data/legacy-cur-focus-converters-excerpt.csv`` (source and license in ``data/SOURCES.md``).
"""

from __future__ import annotations

import csv
from decimal import Decimal

import duckdb

from connectors.aws.cur import focus_rows_from_cur
from connectors.focus_table import write_focus_parquet


def _direct(path, expression):
    with duckdb.connect() as con:
        return con.execute(f"SELECT {expression} FROM read_csv(?, all_varchar = true)", [str(path)]).fetchone()


def test_the_legacy_cur_ties_to_duckdb_on_the_file(data, gpu_of, tmp_path):
    path = data / "legacy-cur-focus-converters-excerpt.csv"
    with path.open(newline="") as handle:
        rows = focus_rows_from_cur(list(csv.DictReader(handle)), gpu_of=gpu_of, file=path.name)
    unblended, count, taxes = _direct(path, 'SUM(CAST("lineItem/UnblendedCost" AS DECIMAL(38, 10))), count(*), '
                                            "count(*) FILTER (WHERE \"lineItem/LineItemType\" = 'Tax')")
    assert len(rows) == count == 72
    # no net columns in this export: the gross basis, so EffectiveCost = BilledCost = unblended, line by line
    assert sum(r["BilledCost"] for r in rows) == sum(r["EffectiveCost"] for r in rows) == unblended
    assert sum(r["ChargeCategory"] == "Tax" for r in rows) == taxes == 12
    assert {r["InvoiceIssuerName"] for r in rows} == {"Amazon Web Services Canada, Inc."}
    assert {r["BillingPeriodStart"].isoformat() for r in rows} == {"2023-11-01T00:00:00"}
    # and to the cent through the Parquet file reconcile reads
    out = write_focus_parquet(rows, tmp_path / "nov.parquet")
    with duckdb.connect() as con:
        (billed,) = con.execute("SELECT SUM(BilledCost) FROM read_parquet(?)", [str(out)]).fetchone()
    assert Decimal(billed).quantize(Decimal("0.01")) == unblended.quantize(Decimal("0.01"))
