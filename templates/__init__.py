"""The workbook face: the planning template built from the core (XlsxWriter), the plan's readers and the
review's writers. The command line reaches them only through :mod:`templates.workbooks`, registered as the
``xlsx`` format of :mod:`finops.workbooks`.

``build_template`` is imported on first use, so reading a plan or writing a review (``finops
reconcile``) loads neither the template's sheet writers nor the add-in they describe.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_template"]


def __getattr__(name: str) -> Any:
    if name == "build_template":
        from .builder import build_template

        return build_template
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
