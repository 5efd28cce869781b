"""Shared rich consoles and JSON output for the command modules."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.console import Console

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_json(path: Path, payload: Any) -> Path:
    """Write ``payload`` as JSON to ``path`` (Decimals become numbers) and return the path."""
    path.write_text(json.dumps(payload, default=_default, indent=2) + "\n", encoding="utf-8")
    return path


def print_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (Decimals become numbers), nothing else."""
    print(json.dumps(payload, default=_default, indent=2, sort_keys=False))
