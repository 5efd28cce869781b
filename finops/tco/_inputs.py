"""Checks shared by the TCO modules (:mod:`finops.checks`), and the one calendar convention of the package:
a month is :data:`HOURS_PER_MONTH` = 8,760 / 12 = 730 hours, as cloud price pages quote monthly figures
(AWS and GCP both use 730 hours a month).
"""

from __future__ import annotations

from ..checks import money, number, positive, share, whole

__all__ = ["HOURS_PER_MONTH", "HOURS_PER_YEAR", "money", "number", "positive", "share", "whole"]

HOURS_PER_MONTH = 730
HOURS_PER_YEAR = 8760
