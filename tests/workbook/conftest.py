"""Fixtures: one fresh template build per session, and its formulas evaluated in Python with the UDFs.

The ``formulas`` package plays Excel: it parses every cell formula of the built file and calls our
UDFs for the ``LLM_*`` / ``FINOPS_*`` names. :func:`excel_call` is the stand-in for xlwings' own
argument conversion (a range arrives as a list of lists, an empty cell as ``None``; a spilled result
goes back as a 2-D array).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import formulas
import numpy as np
import pytest
import schedula as sh
from formulas.functions import wrap_ranges_func

from addin import udfs
from finops.price_book import PriceBook
from templates import build_template

#: Run by test_libreoffice.py with LibreOffice's Python (it imports ``uno``), never collected here.
collect_ignore = ["libreoffice_probe.py"]


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is sh.EMPTY:
        return None
    return value.item() if hasattr(value, "item") else value


def excel_call(function: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a UDF as the formulas package needs it, converting arguments as xlwings does."""

    @functools.wraps(function)
    def call(*args: Any) -> Any:
        result = function(*[_plain(a.tolist()) if hasattr(a, "tolist") else _plain(a) for a in args])
        return np.asarray(result, dtype=object) if isinstance(result, list) else result

    return wrap_ranges_func(call)


def register_udfs() -> None:
    registry = formulas.get_functions()
    for name, function in udfs.UDFS.items():
        registry[name] = excel_call(function)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(tmp_path_factory.mktemp("template") / "plan.xlsx")


class Evaluated:
    """A built workbook compiled by ``formulas``: read any cell, recompute with changed inputs."""

    def __init__(self, path: Path, prices: PriceBook) -> None:
        register_udfs()
        self.path, self.prices = path, prices
        self.book = path.name
        self.model = formulas.ExcelModel().loads(str(path)).finish()
        self.solution = self.model.calculate()

    def key(self, sheet: str, cell: str) -> str:
        return f"'[{self.book}]{sheet.upper()}'!{cell}"

    def value(self, sheet: str, cell: str, solution: Any = None) -> Any:
        """A cell's computed value; the anchor of a spilled array is stored under its whole range."""
        solution = solution or self.solution
        key = self.key(sheet, cell)
        if key not in solution:
            key = next(k for k in solution if k.startswith(key + ":"))
        found = solution[key]
        return _plain(np.asarray(found.value if hasattr(found, "value") else found).tolist())[0][0]

    def block(self, sheet: str, ref: str) -> list[list[Any]]:
        """The computed rows of an array formula written over ``ref`` (e.g. ``"E12:I19"``)."""
        found = self.solution[self.key(sheet, ref)]
        return _plain(np.asarray(found.value if hasattr(found, "value") else found, dtype=object).tolist())

    def recalculate(self, changes: dict[tuple[str, str], Any]) -> Any:
        return self.model.calculate(inputs={self.key(s, c): v for (s, c), v in changes.items()})


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    """A build whose Prices sheet holds one region only (same formulas, a quarter of the cells to compile)."""
    book = PriceBook.bundled().filter(region="us-central1")
    return Evaluated(build_template(tmp_path_factory.mktemp("evaluated") / "plan.xlsx", prices=book), book)
