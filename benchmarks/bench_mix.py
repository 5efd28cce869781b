"""Speed and accuracy of the commitment mix optimizer; prints its figures.

Goals: an 8,760-hour single pool under 50 ms; 60 independent pools (20 instance types x
3 regions) under 0.5 s; the coupled 60-pool case (one savings plan shared by all pools) within 1 % of
the full hourly LP and at least 10x faster than it.

    python benchmarks/bench_mix.py [--hours 8760] [--representatives 48] [--skip-full]
"""

from __future__ import annotations

import argparse
import statistics
import time
from decimal import Decimal

import numpy as np

from finops.mix import MixOption, WorkloadShape, generate_profile, optimize_mix
from finops.mix.lp import Pool, hourly_lp_bound, optimize_pools
from finops.mix.recommenders import compare_recommenders

REGIONS = {"us-east-1": (1.00, 0), "eu-west-1": (1.08, -6), "ap-northeast-1": (1.15, -14)}


def options_for(on_demand: float, owned: bool = False) -> tuple[MixOption, ...]:
    rows = [MixOption("on-demand", "on_demand", Decimal(f"{on_demand:.4f}")),
            MixOption("ri-1y", "reserved", Decimal(f"{on_demand * 0.62:.4f}")),
            MixOption("spot", "spot", Decimal(f"{on_demand * 0.40:.4f}"), max_share=0.3, availability=0.9)]
    if owned:
        rows.append(MixOption("owned", "owned", Decimal(f"{on_demand * 0.30:.4f}"),
                              variable_cost=Decimal(f"{on_demand * 0.04:.4f}"), max_units=40))
    return tuple(rows)


def pools(hours: int, seed: int = 0) -> list[Pool]:
    rng = np.random.default_rng(seed)
    result = []
    for i in range(20):
        price = float(rng.uniform(1.0, 98.0))
        for region, (multiplier, shift) in REGIONS.items():
            shape = WorkloadShape(peak_units=float(rng.uniform(5, 120)), trough_ratio=float(rng.uniform(0.2, 0.6)),
                                  peak_hour=(14 + shift) % 24, annual_growth=float(rng.uniform(0.0, 0.8)),
                                  noise=0.05, seed=int(rng.integers(1 << 30)))
            on_demand = price * multiplier
            result.append(Pool(f"type{i:02d}/{region}", generate_profile(shape, hours), options_for(on_demand),
                               plan_rate=Decimal(f"{on_demand * 0.72:.4f}")))
    return result


def timed(function, repeat: int = 1):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=8760)
    parser.add_argument("--representatives", type=int, default=48)
    parser.add_argument("--skip-full", action="store_true", help="skip the full hourly LP (slow)")
    args = parser.parse_args()

    demand = generate_profile(WorkloadShape(peak_units=400, annual_growth=0.5, noise=0.05, seed=1), args.hours)
    single = options_for(6.88, owned=True)
    result, seconds = timed(lambda: optimize_mix(demand, single), repeat=20)
    print(f"single pool, {args.hours:,} hours, 5 options: {seconds * 1e3:.1f} ms (goal < 50 ms); "
          f"units {result.units}, savings {result.savings.rounded()} of {result.on_demand_only_cost.rounded()}")

    fleet = pools(args.hours)
    independent, seconds = timed(lambda: optimize_pools(fleet), repeat=5)
    print(f"60 independent pools: {seconds:.3f} s (goal < 0.5 s); total {independent.total_cost.rounded()}")

    coupled, fast = timed(lambda: optimize_pools(fleet, shared_plan=True, representatives=args.representatives))
    print(f"60 pools sharing a savings plan, {coupled.solved_hours} representative hours: {fast:.2f} s; plan "
          f"{coupled.plan_per_hour}/h ({coupled.plan_used:.1%} used), exact cost {coupled.total_cost.rounded()} "
          f"(independent pools, no plan: {independent.total_cost.rounded()})")
    if not args.skip_full:
        bound, slow = timed(lambda: hourly_lp_bound(fleet, shared_plan=True))
        gap = float(coupled.total_cost.amount) / bound - 1
        print(f"full hourly LP ({args.hours:,} hours x 60 pools, fractional units): {slow:.1f} s, cost {bound:,.2f}; "
              f"compressed answer within {gap:.3%} of it (goal < 1 %), {slow / fast:.0f}x faster (goal >= 10x)")

    growing = generate_profile(WorkloadShape(peak_units=40, trough_ratio=0.7, weekend_ratio=0.9, annual_growth=1.0,
                                             noise=0.05, seed=2), args.hours)
    cloud = options_for(6.88)[:2]
    print("recommenders on a profile doubling over the year (1y RI vs on-demand), costed over the whole year:")
    for row in compare_recommenders(growing, cloud):
        share = float(row.extra_cost.amount / row.result.total_cost.amount) if row.name != "ours" else 0.0
        print(f"  {row.name:8s} units {row.units['ri-1y']:4d}  cost {row.result.total_cost.rounded()}  "
              f"extra {row.extra_cost.rounded()} ({share:.1%})")


if __name__ == "__main__":
    main()
