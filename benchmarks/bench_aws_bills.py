"""Speed of the AWS bill path: CUR 2.0 line items -> FOCUS records -> Parquet, and offer-file pricing.

Replicates the hand-built CUR 2.0 month of ``tests/aws/data`` (13 line items covering every line item type
the mapping handles) to N rows, then times :func:`connectors.aws.cur.focus_rows_from_cur` and
:func:`connectors.focus_table.write_focus_parquet`, and checks the totals still tie out exactly
(BilledCost = unblended, EffectiveCost = amortized, times the number of copies). Also times pricing the
offer-file excerpt through the JSON and CSV readers. Rates are given per wall-clock second and per CPU-second
of this process (the latter stays meaningful on a shared, loaded machine).

Run: ``python benchmarks/bench_aws_bills.py [ROWS]`` (default 200,000).
"""

from __future__ import annotations

import csv
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from connectors.aws import catalog_gpu, read_offer_file
from connectors.aws.cur import focus_rows_from_cur
from connectors.focus_table import write_focus_parquet

DATA = Path(__file__).resolve().parent.parent / "tests" / "aws" / "data"
UNBLENDED, AMORTIZED = Decimal("92631.11"), Decimal("12471.11")


def main(rows: int) -> None:
    with (DATA / "cur2-2026-05.csv").open(newline="") as handle:
        month = list(csv.DictReader(handle))
    copies = max(rows // len(month), 1)
    records = month * copies
    start, cpu = time.perf_counter(), time.process_time()
    focus = focus_rows_from_cur(records, gpu_of=catalog_gpu)
    mapped, mapped_cpu = time.perf_counter() - start, time.process_time() - cpu
    with tempfile.TemporaryDirectory() as folder:
        start, cpu = time.perf_counter(), time.process_time()
        out = write_focus_parquet(focus, Path(folder) / "bench.parquet")
        written, written_cpu = time.perf_counter() - start, time.process_time() - cpu
        size = out.stat().st_size
    billed = sum(r["BilledCost"] for r in focus)
    effective = sum(r["EffectiveCost"] for r in focus)
    print(f"CUR 2.0 line items          {len(records):>10,}")
    print(f"FOCUS rows                  {len(focus):>10,}")
    print(f"map to FOCUS                {mapped:>10.2f} s  ({len(records) / mapped:,.0f} line items/s; "
          f"{len(records) / mapped_cpu:,.0f} per CPU-second)")
    print(f"write Parquet               {written:>10.2f} s  ({len(focus) / written:,.0f} rows/s; "
          f"{len(focus) / written_cpu:,.0f} per CPU-second; {size / 1e6:.1f} MB)")
    print(f"BilledCost ties out         {billed == UNBLENDED * copies}")
    print(f"EffectiveCost ties out      {effective == AMORTIZED * copies}")
    for name in ("offer-AmazonEC2-excerpt.json", "offer-AmazonEC2-excerpt.csv"):
        start = time.perf_counter()
        book = read_offer_file(DATA / name)
        print(f"price {name:<29} {(time.perf_counter() - start) * 1000:>6.1f} ms ({len(book)} rows)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
