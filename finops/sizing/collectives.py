"""Collectives by link: what a tensor-parallel all-reduce costs on the fabric it runs on.

An all-reduce of ``S`` bytes over ``n`` accelerators on a link (:mod:`finops.catalog.links`) takes::

    t(S, n) = steps(n) x hop_latency + 2 (n - 1) / n x S / (bandwidth(n) x eta)

``steps``: 2 through a switch or a full mesh (one-shot), ``2 (n - 1)`` around a ring; ``bandwidth(n)``: the
link's rate per accelerator, or on a mesh that of the ``n - 1`` peer links a group uses; ``eta``
(:data:`COLLECTIVE_EFFICIENCY`) the share of the link rate a collective's bus bandwidth reaches.

The engines' fitted constants (per-layer step overhead, decode all-reduce bandwidth, prefill link share) were
measured on NVLink 4 and 5 through NVSwitch, so they already hold what a collective costs there. On any other
link the model adds the difference, per all-reduce, between that link and the reference link
(:data:`REFERENCE_LINK`)::

    extra(S, n) = t_link(S, n) - t_reference(S, n) = latency_extra + S x seconds_per_byte_extra

which is 0 on a calibrated link, positive on PCIe or a ring, and negative where a link is faster than the
reference. Two all-reduces run per layer (after attention and after the MLP) on ``b x hidden x 2`` bytes in
a decode step of ``b`` sequences and on ``new x hidden x 2`` bytes in a prefill of ``new`` tokens.
Where measured kernel tables time a configuration, their all-reduce was measured on that system's own link
and no difference is added.

>>> from finops.catalog import get_link
>>> round(allreduce_seconds(get_link("pcie-gen4"), 2 ** 20, 4) * 1e6, 1)   # 6 steps x 4 us + 1.5 MiB at 24 GB/s
89.5
>>> link_extra(get_link("nvlink-4"), 4), link_extra(get_link("pcie-gen4"), 1)
((0.0, 0.0), (0.0, 0.0))
"""

from __future__ import annotations

from ..catalog import Link, get_link

__all__ = ["COLLECTIVE_EFFICIENCY", "REFERENCE_LINK", "allreduce_seconds", "link_extra"]

#: Share of a link's rate an all-reduce's bus bandwidth reaches on large messages: NCCL's all-reduce bus
#: bandwidth on 8 x H100 NVSwitch is about 360-480 of 450 GB/s each way in nccl-tests, on PCIe rings about
#: 20-25 of 32 GB/s; 0.75 is the round middle of both.
COLLECTIVE_EFFICIENCY = 0.75
#: The link the engines' constants describe (AIConfigurator's H100 and H200 systems).
REFERENCE_LINK = "nvlink-4"


def allreduce_seconds(link: Link, message_bytes: float, ranks: int) -> float:
    """Seconds of one all-reduce of ``message_bytes`` over ``ranks`` accelerators on ``link`` (module formula)."""
    if ranks <= 1:
        return 0.0
    latency, per_byte = _terms(link, ranks)
    return latency + message_bytes * per_byte


def _terms(link: Link, ranks: int) -> tuple[float, float]:
    """(seconds of latency, seconds per byte) of one all-reduce over ``ranks``."""
    if ranks <= 1:
        return 0.0, 0.0
    share = 2.0 * (ranks - 1) / ranks
    return (link.steps(ranks) * link.hop_latency_us * 1e-6,
            share / (link.bandwidth_gbps(ranks) * 1e9 * COLLECTIVE_EFFICIENCY))


def link_extra(link: Link, ranks: int) -> tuple[float, float]:
    """``(latency_extra, seconds_per_byte_extra)`` of one all-reduce over ``ranks`` on ``link`` against the
    reference link (module formula); ``(0.0, 0.0)`` on a calibrated link or a group of one."""
    if link.calibrated or ranks <= 1:
        return 0.0, 0.0
    own, ref = _terms(link, ranks), _terms(get_link(REFERENCE_LINK), ranks)
    return own[0] - ref[0], own[1] - ref[1]
