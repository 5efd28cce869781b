"""Benchmark `finops reconcile` on a generated FOCUS Parquet file: time vs DuckDB's bare aggregation, peak memory.

Goal (issue 7): reconciling takes at most 1.5x the time of DuckDB's own aggregation query over the same
file, with peak memory under 2 GB. Each measurement runs in a fresh subprocess so its peak RSS is its own.

    python benchmarks/bench_reconcile.py                 # 10 million rows (about 1 GB of Parquet)
    python benchmarks/bench_reconcile.py --rows 200000   # quick run
    python benchmarks/bench_reconcile.py --parts 4       # the same rows as 4 part files (as AWS exports them)

With several part files, reconcile_month's scan also groups by file, to refuse the same bill given twice
in two formats (finops/reconcile/fingerprint.py); the bare queries read all parts with one read_parquet.

Printed: rows, file size, seconds for the bare DuckDB aggregation (the same GROUP BY the engine sends,
straight on read_parquet, and a plain two-column SUM for reference), seconds for reconcile_month
(checks, view, aggregation, mapping, figures), their ratio, peak RSS of each, and whether the goals hold.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

GENERATE = """
COPY (
  SELECT
    CASE WHEN i % 3 = 0 THEN 'Google Cloud' ELSE 'AWS' END AS ProviderName,
    CASE WHEN i % 3 = 0 THEN 'Google' ELSE 'AWS' END AS PublisherName,
    CASE WHEN i % 3 = 0 THEN 'Google Cloud' ELSE 'AWS' END AS InvoiceIssuerName,
    'INV-2026-05-' || (i % 4)::VARCHAR AS InvoiceId,
    '1000000000' || (i % 2)::VARCHAR AS BillingAccountId, 'payer' AS BillingAccountName, 'Payer' AS BillingAccountType,
    '2000000000' || lpad((hash(i) % 20)::VARCHAR, 2, '0') AS SubAccountId,
    'team-' || (hash(i) % 20)::VARCHAR AS SubAccountName, 'Linked Account' AS SubAccountType,
    TIMESTAMP '2026-05-01' AS BillingPeriodStart, TIMESTAMP '2026-06-01' AS BillingPeriodEnd,
    TIMESTAMP '2026-05-01' + to_hours((i % 744)::BIGINT) AS ChargePeriodStart,
    TIMESTAMP '2026-05-01' + to_hours((i % 744 + 1)::BIGINT) AS ChargePeriodEnd,
    CASE WHEN i % 1000 = 0 THEN 'Purchase' WHEN i % 997 = 0 THEN 'Tax' ELSE 'Usage' END AS ChargeCategory,
    NULL::VARCHAR AS ChargeClass, 'instance hour' AS ChargeDescription, 'Usage-Based' AS ChargeFrequency,
    ((hash(i) % 100000) / 10000.0)::DECIMAL(38, 10) AS BilledCost,
    ((hash(i) % 90000) / 10000.0)::DECIMAL(38, 10) AS EffectiveCost,
    ((hash(i) % 120000) / 10000.0)::DECIMAL(38, 10) AS ListCost,
    ((hash(i) % 100000) / 10000.0)::DECIMAL(38, 10) AS ContractedCost,
    NULL::DECIMAL(38, 10) AS ListUnitPrice, NULL::DECIMAL(38, 10) AS ContractedUnitPrice,
    CASE WHEN i % 7 = 0 THEN 'Committed' WHEN i % 11 = 0 THEN 'Dynamic' ELSE 'Standard' END AS PricingCategory,
    1::DECIMAL(38, 10) AS PricingQuantity, 'Hours' AS PricingUnit, 'USD' AS PricingCurrency,
    NULL::DECIMAL(38, 10) AS PricingCurrencyContractedUnitPrice, NULL::DECIMAL(38, 10) AS PricingCurrencyEffectiveCost,
    NULL::DECIMAL(38, 10) AS PricingCurrencyListUnitPrice, 'USD' AS BillingCurrency,
    1::DECIMAL(38, 10) AS ConsumedQuantity, 'Hours' AS ConsumedUnit,
    (['AmazonEC2', 'AmazonS3', 'Compute Engine', 'AmazonSageMaker', 'BigQuery', 'Cloud Storage', 'AWSLambda',
      'AmazonRDS'])[1 + i % 8] AS ServiceName,
    'Compute' AS ServiceCategory, NULL::VARCHAR AS ServiceSubcategory, 'SKU-' || (i % 50)::VARCHAR AS SkuId,
    NULL::VARCHAR AS SkuMeter, NULL::VARCHAR AS SkuPriceId, NULL::VARCHAR AS SkuPriceDetails,
    'res-' || (i % 100000)::VARCHAR AS ResourceId, 'res-' || (i % 100000)::VARCHAR AS ResourceName,
    'Instance' AS ResourceType,
    (['us-east-1', 'us-west-2', 'eu-west-1', 'us-central1', 'europe-west4', 'asia-southeast1'])[1 + i % 6] AS RegionId,
    NULL::VARCHAR AS RegionName, NULL::VARCHAR AS AvailabilityZone,
    CASE WHEN i % 7 = 0 THEN 'commit-' || (i % 5)::VARCHAR END AS CommitmentDiscountId,
    NULL::VARCHAR AS CommitmentDiscountName, NULL::VARCHAR AS CommitmentDiscountCategory,
    NULL::VARCHAR AS CommitmentDiscountType,
    CASE WHEN i % 7 = 0 THEN (CASE WHEN i % 70 = 0 THEN 'Unused' ELSE 'Used' END) END AS CommitmentDiscountStatus,
    NULL::DECIMAL(38, 10) AS CommitmentDiscountQuantity, NULL::VARCHAR AS CommitmentDiscountUnit,
    NULL::VARCHAR AS CapacityReservationId, NULL::VARCHAR AS CapacityReservationStatus,
    '{"team":"t' || (i % 12)::VARCHAR || '","env":"' || (['prod', 'staging', 'dev'])[1 + i % 3] || '"}' AS Tags,
    (['p5.48xlarge', 'g6.xlarge', 'p4d.24xlarge', 'a3-highgpu-8g', 'g2-standard-4', 'm6i.large'])[1 + i % 6]
      AS x_InstanceType,
    (['h100-sxm', 'l4', 'a100-40gb', 'h100-sxm', 'l4', NULL])[1 + i % 6] AS x_GpuModel,
    ([8, 1, 8, 8, 1, 0])[1 + i % 6]::INTEGER AS x_GpuCount,
    ([8, 1, 8, 8, 1, NULL])[1 + i % 6]::DECIMAL(38, 10) AS x_GpuHours,
    CASE WHEN i % 11 = 0 THEN 'spot' ELSE 'on-demand' END AS x_PurchaseOption
  FROM range({start}, {stop}) t(i)
) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 122880)
"""

#: Peak resident memory of this process in MiB. Linux: VmHWM, the high-water mark of this process's own
#: memory map, which starts afresh at exec. ``ru_maxrss`` would not do: Linux carries the parent's peak
#: over fork and exec into it, so every child would report at least the generating parent's size.
PEAK = """
import resource
def peak_mib():
    try:
        with open("/proc/self/status") as status:
            kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        return kib / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

BARE = PEAK + """
import duckdb, json, sys, time
from finops.reconcile.aggregation import aggregation_sql
paths, mode = json.loads(sys.argv[1]), sys.argv[2]
relation = f"read_parquet({paths})"
sql = aggregation_sql(relation, "2026-05") if mode == "group" else f"SELECT sum(BilledCost), sum(EffectiveCost) FROM {relation}"
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
start = time.perf_counter()
rows = con.execute(sql).fetchall()
print(json.dumps({"seconds": time.perf_counter() - start, "rows": len(rows),
                  "sums": [str(v) for v in rows[0]] if mode == "sum" else None,
                  "peak_mib": peak_mib()}))
"""

RECONCILE = PEAK + """
import json, sys, time
from pathlib import Path
from finops.money import Money
from finops.reconcile import BudgetLine, MappingRule, Plan, reconcile_month
services = ["AmazonEC2", "AmazonS3", "Compute Engine", "AmazonSageMaker", "BigQuery", "Cloud Storage", "AWSLambda"]
plan = Plan(budget=tuple(BudgetLine("2026-05", s, "cc", "OPEX", "", Money.of(1_000_000, "USD")) for s in services),
            mapping=tuple(MappingRule(i + 1, s, service_name=s, tag_key="env", tag_value="prod" if i % 2 else "*")
                          for i, s in enumerate(services)))
start = time.perf_counter()
rec = reconcile_month(plan, [Path(p) for p in json.loads(sys.argv[1])], "2026-05")
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rec.bill_rows,
                  "billed": str(rec.billed_cost.amount), "effective": str(rec.effective_cost.amount),
                  "peak_mib": peak_mib()}))
"""


def measure(script: str, *args: str) -> dict:
    """Run ``script`` in a fresh interpreter (so its peak RSS is its own) and return its JSON line."""
    out = subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the generated bill")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each query; the best time counts")
    parser.add_argument("--keep", type=Path, help="write the Parquet file here and keep it (reused if it exists)")
    parser.add_argument("--parts", type=int, default=1, help="split the rows into this many part files")
    args = parser.parse_args()

    import duckdb

    folder = Path(tempfile.mkdtemp(prefix="finops-bench-"))
    base = args.keep or folder / f"focus-{args.rows}.parquet"
    paths = [base] if args.parts == 1 else [base.with_name(f"{base.stem}-part{k + 1}-of-{args.parts}.parquet")
                                            for k in range(args.parts)]
    start = time.perf_counter()
    for k, path in enumerate(paths):
        if not path.exists():
            bounds = {"{start}": args.rows * k // args.parts, "{stop}": args.rows * (k + 1) // args.parts}
            sql = GENERATE.replace("{path}", str(path))
            for name, value in bounds.items():
                sql = sql.replace(name, str(value))
            duckdb.connect().execute(sql)
    size = sum(path.stat().st_size for path in paths) / 2**20
    print(f"{args.rows:,} FOCUS rows in {len(paths)} Parquet file(s), {size:,.0f} MiB "
          f"(ready in {time.perf_counter() - start:.1f} s)")
    files = json.dumps([str(path) for path in paths])

    runs = {}
    for name, script, extra in (("bare SUM", BARE, ["sum"]), ("bare GROUP BY", BARE, ["group"]),
                                ("reconcile_month", RECONCILE, [])):
        results = [measure(script, files, *extra) for _ in range(args.repeat)]
        best = min(results, key=lambda r: r["seconds"])
        best["peak_mib"] = max(r["peak_mib"] for r in results)
        runs[name] = best
        rows = "bill rows read" if name == "reconcile_month" else "result rows"
        print(f"{name:>16}: {best['seconds']:7.3f} s (best of {args.repeat})   peak RSS {best['peak_mib']:6.0f} MiB"
              f"   {rows} {best['rows']:,}")

    ratio = runs["reconcile_month"]["seconds"] / runs["bare GROUP BY"]["seconds"]
    peak = runs["reconcile_month"]["peak_mib"]
    print(f"reconcile / bare GROUP BY = {ratio:.2f}x (goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")
    print(f"reconcile / bare SUM      = {runs['reconcile_month']['seconds'] / runs['bare SUM']['seconds']:.2f}x")
    print(f"peak memory {peak:.0f} MiB (goal < 2048 MiB: {'met' if peak < 2048 else 'NOT met'})")
    rec = runs["reconcile_month"]
    same = [Decimal(rec["billed"]), Decimal(rec["effective"])] == [Decimal(v) for v in runs["bare SUM"]["sums"]]
    print(f"totals: BilledCost {rec['billed']}, EffectiveCost {rec['effective']} "
          f"({'equal to' if same else 'DIFFERENT from'} DuckDB's bare SUM, exactly)")
    if not args.keep:
        for path in paths:
            path.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
