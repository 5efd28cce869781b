"""Fixtures of the loop tests: the bundled sample metrics and the generator that drew them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
METRICS = ROOT / "finops" / "data" / "metrics"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_sample_metrics", ROOT / "scripts" / "make_sample_metrics.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules.setdefault("make_sample_metrics", module)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="session")
def generator() -> ModuleType:
    """``scripts/make_sample_metrics.py``, which wrote the bundled files (and writes scaled months)."""
    return _load_generator()


@pytest.fixture(scope="session")
def metric_files() -> list[Path]:
    return sorted(METRICS.glob("2026-05-*.json.gz"))


@pytest.fixture(scope="session")
def serving_csv() -> Path:
    return METRICS / "serving-lines.csv"
