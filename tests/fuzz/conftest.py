"""Shared for the bad-input, property and kill suites: the reconcile builders, a folder snapshot, and one
way to run the command line that checks the boundary's promise (exit 0, 1 or 2, one message, no traceback)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from finops.cli import main
from tests.reconcile.conftest import BASE_ROW, write_bill, write_plan  # noqa: F401 - re-exported

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mix"


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder`` (hidden ones too)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """Run ``finops argv`` in this process; assert the boundary held; return (code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, captured.err)
    assert "Traceback" not in captured.out + captured.err, captured.err
    if code == 2:
        assert captured.err.strip(), argv
    return code, captured.out, captured.err
