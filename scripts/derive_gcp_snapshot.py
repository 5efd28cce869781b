"""Derive the bundled GCP price snapshot from a Cyclenerd ``pricing.yml`` dump (never used at run time).

Usage::

    python scripts/derive_gcp_snapshot.py PATH/TO/gcp-pricing-2026-07-30.yml [OUT.csv.gz]

The dump (https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator, Apache-2.0) prices every
machine type in every region: ``hour`` (on-demand), ``hour_spot``, and monthly ``month_1y`` /
``month_3y`` for resource-based committed use. Only the GPU machine series are kept (A2, A3, A4, G2 and G4;
the dump holds no A4 machine and no TPU, so none are written). G4 carries the NVIDIA RTX PRO 6000 Blackwell
Server Edition (dump key ``rtx6000``): g4-standard-48/-96/-192/-384 with 1/2/4/8 whole GPUs are kept;
g4-standard-6/-12/-24 are fractional vGPU shapes (1/8, 1/4, 1/2 of a GPU,
https://cloud.google.com/compute/docs/accelerator-optimized-machines) and are left out, because the price
book's ``gpu_count`` is a whole number of GPUs. Committed monthly prices become hourly
with the dump's own convention, **730 hours per month** (``month == hour * 730`` for every on-demand
row, checked below). GCP bills commitments monthly with nothing upfront, so ``payment_option`` is
``no_upfront`` and ``upfront_cost`` 0. Every row carries the dump's date and the source.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import yaml

from finops.money import MONEY_CONTEXT, to_decimal
from finops.price_book import PriceBook, PriceRow

HOURS_PER_MONTH = Decimal(730)
SERIES = ("a2-", "a3-", "a4-", "g2-", "g4-")
#: The dump's accelerator keys -> accelerator ids of ``finops/catalog/data/accelerators.csv``.
GPU_KEYS = {"a100": "a100-40gb", "a100-80gb": "a100-80gb", "h100-80gb": "h100-sxm", "h100-80gb-mega": "h100-sxm",
            "l4": "l4", "b200": "b200", "h200": "h200", "rtx6000": "rtx-pro-6000"}
#: Dump price field -> (pricing model, payment option, divisor to an hourly price).
PRICE_FIELDS = (("hour", "on_demand", "", Decimal(1)), ("hour_spot", "spot", "", Decimal(1)),
                ("month_1y", "cud_1y", "no_upfront", HOURS_PER_MONTH),
                ("month_3y", "cud_3y", "no_upfront", HOURS_PER_MONTH))
NANO = Decimal("0.000000001")


def derive(dump: dict, date: str, source: str) -> PriceBook:
    rows = []
    for name, machine in sorted(dump["compute"]["instance"].items()):
        if not name.startswith(SERIES):
            continue
        gpus = [(GPU_KEYS[k], v) for k, v in machine.items() if k in GPU_KEYS]
        if len(gpus) != 1 or int(gpus[0][1]) != gpus[0][1]:
            continue  # no known accelerator, or a fractional one (the G4 vGPU shapes)
        gpu_model, count = gpus[0][0], int(gpus[0][1])
        for region, cost in sorted(machine["cost"].items()):
            if "hour" in cost and "month" in cost:
                implied = MONEY_CONTEXT.divide(to_decimal(cost["month"]), to_decimal(cost["hour"]))
                assert abs(implied - HOURS_PER_MONTH) < Decimal("0.001"), (name, region, implied)
            for field, model, option, divisor in PRICE_FIELDS:
                if field not in cost:
                    continue
                hourly = MONEY_CONTEXT.divide(to_decimal(cost[field]), divisor).quantize(NANO)
                rows.append(PriceRow("gcp", region, name, gpu_model, count, model, option, hourly,  # type: ignore[arg-type]
                                     Decimal(0), "USD", date, source))
    return PriceBook(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", type=Path, help="the Cyclenerd pricing.yml dump")
    parser.add_argument("out", type=Path, nargs="?", default=Path("finops/data/prices/gcp-2026-07-30.csv.gz"),
                        help="the snapshot to write (default: %(default)s)")
    args = parser.parse_args(argv)
    out = args.out
    dump = yaml.load(args.dump.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    generated = str(dump["about"]["generated"])  # e.g. "Thu Jul 30 06:13:17 2026"
    date = datetime.strptime(generated, "%a %b %d %H:%M:%S %Y").date().isoformat()
    source = (f"Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml generated {date} (Apache-2.0); "
              "CUD = monthly / 730 h")
    book = derive(dump, date, source)
    book.write_csv(out)
    print(f"wrote {len(book)} rows for {len({r.instance_type for r in book})} machine types to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
