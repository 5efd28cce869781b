"""Scale-up links: the fabric a tensor-parallel group's collectives run on, as data.

``finops/catalog/data/links.csv`` holds one row per link: its topology, bandwidth per accelerator and
direction, the latency of one step of a collective, and whether the engines' fitted constants already
describe it (``calibrated``: measured on it). Accelerators name their link (``accelerators.csv``,
``link``). Topologies:

* ``switch``: every accelerator reaches every other at its full rate through a switch (NVSwitch); a
  small all-reduce is one-shot, two steps whatever the group size.
* ``mesh``: one direct link to each peer (AMD Infinity Fabric): a group of ``n`` uses ``n - 1`` links.
* ``ring``: neighbours only (PCIe peer-to-peer, TPU ICI torus, NeuronLink): a ring all-reduce takes
  ``2 (n - 1)`` steps.

>>> get_link("nvlink-4").topology, get_link("pcie-gen4").gbps_per_direction
('switch', 32.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..errors import InputError, Location
from ..registry import Registry
from ._table import parse, read_rows

__all__ = ["TOPOLOGIES", "Link", "get_link", "links"]

#: How accelerators on a link reach each other (module docstring).
TOPOLOGIES: tuple[str, ...] = ("switch", "mesh", "ring")
_FILE = "links.csv"


@dataclass(frozen=True)
class Link:
    """One row of ``links.csv``: a scale-up link and how a collective runs on it."""

    id: str
    name: str
    topology: str
    gbps_per_direction: float   # per accelerator (mesh: per peer link), one direction, GB/s
    hop_latency_us: float       # one step of a collective
    calibrated: bool            # the engines' constants were fitted on this link
    source: str
    as_of: str

    def steps(self, ranks: int) -> int:
        """Steps of an all-reduce over ``ranks`` accelerators (latency terms): 2 through a switch or a full
        mesh (one-shot), ``2 (n - 1)`` around a ring; none alone.

        >>> get_link("nvlink-4").steps(8), get_link("pcie-gen4").steps(8), get_link("pcie-gen4").steps(1)
        (2, 14, 0)
        """
        if ranks <= 1:
            return 0
        return 2 if self.topology in ("switch", "mesh") else 2 * (ranks - 1)

    def bandwidth_gbps(self, ranks: int) -> float:
        """GB/s one accelerator moves each way in a collective over ``ranks``: the link's rate, or on a
        mesh the rate of the ``ranks - 1`` peer links it uses.

        >>> get_link("infinity-fabric-mi300").bandwidth_gbps(8), get_link("infinity-fabric-mi300").bandwidth_gbps(2)
        (448.0, 64.0)
        """
        return self.gbps_per_direction * (max(ranks - 1, 1) if self.topology == "mesh" else 1)


@cache
def links() -> Registry[Link]:
    """Every catalog link, by id."""
    items: dict[str, Link] = {}
    for line, row in read_rows(_FILE):
        if row["topology"] not in TOPOLOGIES:
            raise InputError(f"unknown topology {row['topology']!r}", where=Location(file=_FILE, row=line,
                             column="topology"), hint=f"use one of: {', '.join(TOPOLOGIES)}")
        items[row["id"]] = Link(
            id=row["id"], name=row["name"], topology=row["topology"],
            gbps_per_direction=parse(row["gbps_per_direction"], float, file=_FILE, line=line,
                                     column="gbps_per_direction"),
            hop_latency_us=parse(row["hop_latency_us"], float, file=_FILE, line=line, column="hop_latency_us"),
            calibrated=parse(row["calibrated"], bool, file=_FILE, line=line, column="calibrated"),
            source=row["source"], as_of=row["as_of"])
    return Registry("link", items)


def get_link(name: str) -> Link:
    """The link ``name`` (an id of ``links.csv``)."""
    return links()[name]
