"""Pricing and ranking of the configurations a search finds feasible.

A feasible configuration at its fewest SLO-meeting replicas is deployed (seed 003's rule,
:func:`~finops.sizing.demand.devices_needed`) and priced: GPU -> instance types
(:mod:`finops.catalog.instances`) -> the cheapest row of each type under the pricing model, over regions
and payment options; a TP group stays inside one instance and whole instances are paid for (Cloud TPUs
are priced per chip, so a slice is ``tp`` chips). Monthly cost is ``hourly x 730``; cost per million
output tokens is given on two labelled bases: at the peak load running 24/7 (:func:`per_million`) and at
the workload's average load with the fleet still sized for the peak (:func:`per_million_at_average`).

Ranking by monthly cost, a configuration none of whose counts below ``n`` replicas is feasible costs at
least the price of ``n`` deployed replicas (deployment and instance counts only grow with replicas), so
once ``top`` options are known the search can drop a configuration whose floor is above the
``top``-th cost (:class:`Ranking`).

>>> index = price_index(PriceBook.bundled(), "on_demand")
>>> cost = index.cost("h100-sxm", 2, 4)           # four TP2 groups: one 8-GPU instance
>>> cost.instances, cost.monthly == cost.hourly * HOURS_PER_MONTH
(1, True)
"""

from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from ..money import Money
from ..price_book import PriceBook, PriceRow
from .demand import devices_needed
from .workload import Workload

__all__ = ["HOURS_PER_MONTH", "Cost", "PriceIndex", "Quote", "Ranking", "cheapest_rows", "hosting", "per_million",
           "per_million_at_average", "price_index", "quote"]

HOURS_PER_MONTH = 730


@lru_cache(maxsize=8)
def price_index(book: PriceBook, pricing_model: str) -> PriceIndex:
    """The hosting costs under one price book and pricing model (searches with the same book share it)."""
    return PriceIndex(cheapest_rows(book, pricing_model))


class Cost(NamedTuple):
    """The cheapest way to host some TP groups: the price row, how many instances, hourly and monthly."""

    price: PriceRow
    instances: int
    hourly: Money
    monthly: Money

    @classmethod
    def of(cls, price: PriceRow, instances: int) -> Cost:
        hourly = Money(price.hourly_cost * instances, price.currency)
        return cls(price, instances, hourly, hourly * HOURS_PER_MONTH)


class PriceIndex:
    """Cheapest hosting of ``replicas`` TP groups of a GPU (:func:`hosting`), worked out once per
    (GPU, TP, replicas); the instance types hosting each GPU are looked up lazily."""

    _LIMIT = 100_000     # remembered costs before starting over

    def __init__(self, cheapest: dict[tuple[str, str], PriceRow]) -> None:
        self.cheapest = cheapest
        self.hosts: dict[str, list[tuple[Any, PriceRow]]] = {}
        self.costs: dict[tuple[str, int, int], Cost | None] = {}

    def cost(self, gpu: str, tp: int, replicas: int) -> Cost | None:
        key = (gpu, tp, replicas)
        if key not in self.costs:
            if len(self.costs) >= self._LIMIT:
                self.costs.clear()
            priced = hosting(tp, replicas, self._hosts(gpu))
            self.costs[key] = None if priced is None else Cost.of(*priced)
        return self.costs[key]

    def _hosts(self, gpu: str) -> list[tuple[Any, PriceRow]]:
        if gpu not in self.hosts:
            from ..catalog.instances import instances_for_gpu  # part of the catalog, read only when pricing

            pairs = [(inst, self.cheapest.get((inst.provider.lower(), inst.instance_type.lower())))
                     for inst in instances_for_gpu(gpu)]
            self.hosts[gpu] = [(inst, row) for inst, row in pairs if row is not None]
        return self.hosts[gpu]


def cheapest_rows(book: PriceBook, pricing_model: str) -> dict[tuple[str, str], PriceRow]:
    """The cheapest row per (provider, instance type) under ``pricing_model``, over regions and payments."""
    cheapest: dict[tuple[str, str], PriceRow] = {}
    for row in book:
        if row.pricing_model != pricing_model:
            continue
        key = (row.provider.lower(), row.instance_type.lower())
        held = cheapest.get(key)
        if held is None or (row.hourly_cost, row.region) < (held.hourly_cost, held.region):
            cheapest[key] = row
    return cheapest


def hosting(tp: int, replicas: int, hosts: list[tuple[Any, PriceRow]]) -> tuple[PriceRow, int] | None:
    """Cheapest (price row, instance count) hosting ``replicas`` TP groups of ``tp`` GPUs."""
    best: tuple[Decimal, PriceRow, int] | None = None
    for inst, row in hosts:
        if inst.instance_type == inst.gpu_model:   # priced per chip (Cloud TPU): slices of any size
            count = replicas * tp
        elif inst.gpu_count >= tp:
            count = math.ceil(replicas / (inst.gpu_count // tp))
        else:
            continue
        cost = row.hourly_cost * count
        if best is None or (cost, row.instance_type) < (best[0], best[1].instance_type):
            best = (cost, row, count)
    return None if best is None else (best[1], best[2])


class Quote(NamedTuple):
    """A feasible row at its fewest SLO-meeting replicas, deployed and priced (what ranking needs)."""

    row: int
    flat: dict[str, Any]
    i: int
    replicas_at_slo: int
    replicas: int
    output_tokens_per_s: float
    price: PriceRow
    instances: int
    hourly: Money
    cost: Money             # what the ranking orders by: monthly cost or cost per million output tokens


class Ranking:
    """Feasible rows priced as they are found, and the rows still worth evaluating.

    Ranking by monthly cost, a row whose first feasible count is at least ``n`` replicas costs at least
    the price of ``n`` deployed replicas (deployment and instance counts only grow with replicas), so
    once ``top`` options are known a row whose bound is above the ``top``-th cost cannot enter the
    ranking and leaves the search. A row that no instance can host matters only until its GPU is known
    to serve the workload (``unpriced``).
    """

    def __init__(self, table: Any, rows: np.ndarray, grid: np.ndarray, workload: Workload, prices: PriceIndex,
                 top: int, *, by_month: bool) -> None:
        self.table, self.rows, self.grid, self.workload, self.prices = table, rows, grid, workload, prices
        self.top, self.by_month = top, by_month
        self.quotes: dict[int, Quote] = {}
        self.unpriced: set[str] = set()
        self.settled: set[int] = set()
        self.deployed: dict[int, int] = {}   # replicas at the SLOs -> deployed (spare, redundancy): few distinct
        self.least: dict[int, int] = {}      # the same rule on a bare replica count: a floor for the bound

    def settle(self, picks: list[tuple[dict[str, Any], int] | None]) -> set[str]:
        """Price every newly found row; the GPUs found feasible without a price so far."""
        for k, pick in enumerate(picks):
            if pick is None or k in self.settled:
                continue
            self.settled.add(k)
            row = int(self.rows[k])
            found = quote(self.table, row, *pick, self.workload, self.prices, self.deployed, self.by_month)
            if found is None:
                self.unpriced.add(self.table.gpus[row])
            else:
                self.quotes[k] = found
        return self.unpriced

    def best(self) -> list[Quote]:
        tps, gpus, precisions = self.table.tps, self.table.gpus, self.table.precisions
        return sorted(self.quotes.values(), key=lambda q: (q.cost.amount, q.replicas * tps[q.row], gpus[q.row],
                                                           precisions[q.row], tps[q.row]))[:self.top]

    def _floor(self, k: int, column: int) -> Cost | None:
        """The least a row can cost when none of its counts below grid ``column`` is feasible."""
        fewest = int(self.grid[k, column])
        if fewest not in self.least:
            self.least[fewest] = devices_needed(fewest, 1.0, self.workload.spare, self.workload.redundancy)
        row = int(self.rows[k])
        return self.prices.cost(self.table.gpus[row], self.table.tps[row], self.least[fewest])

    def worth(self, picks: list[tuple[dict[str, Any], int] | None], active: np.ndarray,
              columns: np.ndarray) -> np.ndarray:
        """Which ``active`` rows (none feasible below their grid column in ``columns``) can still enter the
        ranking."""
        self.settle(picks)
        keep = np.ones(active.size, dtype=bool)
        if not self.by_month or len(self.quotes) < self.top:
            return keep
        worst = sorted(q.cost.amount for q in self.quotes.values())[self.top - 1]
        for n, k in enumerate(active):
            bound = self._floor(int(k), int(columns[n]))
            keep[n] = self.table.gpus[int(self.rows[k])] not in self.unpriced if bound is None \
                else bound.monthly.amount <= worst
        return keep


def quote(table: Any, row: int, flat: dict[str, Any], i: int, workload: Workload, prices: PriceIndex,
          deployed_for: dict[int, int], by_month: bool) -> Quote | None:
    """Price a row at ``at_slo`` replicas. Seed 003's rule on the served throughput,
    ``ceil(ceil(R / (R / at_slo)) x (1 + spare)) + redundancy``, depends on ``at_slo`` alone while
    ``R / (R / at_slo)`` rounds back to ``at_slo`` (its error, a few units in the last place, stays far
    below the rule's 9-decimal rounding up to 10^5 replicas), so it is worked out once per count."""
    at_slo = int(flat["replicas"][i])
    out_tps = float(flat["rate"][i]) * workload.osl * at_slo
    deployed = deployed_for.get(at_slo) if at_slo <= 100_000 else None
    if deployed is None:
        deployed = devices_needed(out_tps, out_tps / at_slo, workload.spare, workload.redundancy)
        if at_slo <= 100_000:
            deployed_for[at_slo] = deployed
    cost = prices.cost(table.gpus[row], table.tps[row], deployed)
    if cost is None:
        return None
    return Quote(row, flat, i, at_slo, deployed, out_tps, cost.price, cost.instances, cost.hourly,
                 cost.monthly if by_month else per_million(cost.hourly, out_tps))


def per_million(hourly: Money, output_tokens_per_s: float) -> Money:
    """Cost per million output tokens at the peak load, running 24/7: the hourly cost over the millions
    served in an hour at the peak (seed 003: ``C_per_token = C_hour / T_tokens/hour``)."""
    return hourly / Decimal(repr(output_tokens_per_s * 3600 / 1e6))


def per_million_at_average(hourly: Money, peak_output_tokens_per_s: float, peak_to_average: float) -> Money:
    """Cost per million output tokens at the workload's average load, the fleet fixed at its peak size.

    Seed 003's ``C_per_token = C_hour / T_tokens/hour`` with the tokens the fleet actually serves: the
    deployment is sized for the peak and paid every hour (seed 003's "deterministic capacity", 确定性容量),
    so the monthly cost is the same and the month serves ``peak tokens/s / peak_to_average x 3,600 x 730``
    tokens: the cost per million is the peak-load figure x ``peak_to_average``.

    >>> str(per_million_at_average(Money.of(36, "USD"), 10_000, 2.5))   # 1.00 at the peak, 2.50 on average
    '2.50 USD'
    """
    if peak_to_average < 1:
        raise InputError(f"peak_to_average is peak over average, at least 1, got {peak_to_average}",
                         hint="e.g. 2.5 for a peak 2.5 times the average (the Mix sheet's Peak/average)")
    return per_million(hourly, peak_output_tokens_per_s / peak_to_average)
