"""TCO figures against their published references, and how long the TCO calls take.

Run: python benchmarks/bench_tco.py
Prints the cited H100 reference case (owned cost per GPU-hour straight-line and with a 10 % cost of
capital) beside the published figures (about 1.6 and 1.9 USD) and AWS p5 on-demand (6.88 USD), seed
003's TCO, and the time of an owned schedule and of a full comparison against the bundled price book.
"""

from __future__ import annotations

import time

from finops.money import Money
from finops.price_book import PriceBook
from finops.tco import cloud_rows, compare_options, owned_tco, reference_case, tco


def _timed(call, repeat: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - start) / repeat * 1e3


def main() -> None:
    case = reference_case("h100-sxm-8gpu")
    straight = case.node.cost_per_gpu_hour(cost_of_capital=False).amount
    levelized = case.node.cost_per_gpu_hour().amount
    print(f"H100 8-GPU owned, straight-line : {straight:.4f} USD/GPU-h (published ~{case.published_per_gpu_hour.amount}, "
          f"{straight / case.published_per_gpu_hour.amount - 1:+.1%})")
    print(f"H100 8-GPU owned, 10 % capital  : {levelized:.4f} USD/GPU-h (published "
          f"~{case.published_per_gpu_hour_with_capital.amount}, "
          f"{levelized / case.published_per_gpu_hour_with_capital.amount - 1:+.1%})")
    print(f"AWS p5 on-demand                : {case.cloud_on_demand_per_gpu_hour.amount} USD/GPU-h "
          f"({case.cloud_on_demand_per_gpu_hour.amount / levelized:.1f}x the owned levelized cost)")
    seed = tco(Money.of(160_000, "CNY") * 9, Money.of(9_000, "CNY") * 9, 36)
    print(f"seed 003 TCO                    : {seed} (expected 4,356,000.00 CNY)")
    book = PriceBook.bundled()
    rows = cloud_rows(book, gpu_model=case.gpu_model, cited=case.cloud_price_row())
    print(f"owned_tco, 8 nodes x 120 months : {_timed(lambda: owned_tco(case.node, 8, 120)):.1f} ms")
    print(f"compare_options, 64 GPUs, 36 mo : {_timed(lambda: compare_options(64, 36, case.node, rows)):.1f} ms "
          f"({len(rows)} price rows)")
    print(f"cloud_rows over {len(book):,} prices  : {_timed(lambda: cloud_rows(book, gpu_model='h100-sxm')):.1f} ms")


if __name__ == "__main__":
    main()
