"""The hostile desk's one runner: a case is inputs -> the exit code, the place the message names, and the
files that must stay as they were. Every ``test_*.py`` beside this module is a table of :class:`Case`
rows checked by :func:`check`; a new family is a new file with its own table, nothing here changes.

What :func:`check` holds every case to:

- the exit code is the case's (2 bad input, 1 failed, 130 interrupted, 0 done);
- no traceback, and at most one ``error:`` line, the first line of stderr when there is one;
- every text of ``names`` (the file, row, column, cell or option at fault) is on stderr or stdout;
- no text of ``hidden`` (a password, a token) is anywhere in the output;
- every file of the folder the case built is byte for byte as it was (``unchanged``), and nothing new is
  left in it besides ``may_write`` (names relative to the folder);
- a case may give its own ``verify(folder, out, err)`` for what the table cannot say.

Cases run in this process through :func:`finops.cli.main` (fast); a case with ``subprocess=True`` runs the
``finops`` console entry in a fresh interpreter (signals, memory, start-up).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.reconcile.conftest import write_bill, write_plan

__all__ = ["AWS_CUR_SAMPLE", "AWS_EXPORT_DATA", "AWS_FOCUS_SAMPLE", "MONTH", "OPTIONS_CSV", "SERVING_CSV", "Case", "aws_export", "bill", "check",
           "gcp_jsonl_pull", "plan", "reconcile_argv", "snapshot", "text_file", "write_bill", "write_plan"]

MONTH = "2026-05"
REPO = Path(__file__).resolve().parents[2]
#: The detailed GCP billing export fixture, JSONL (the nested BigQuery shape).
GCP_DETAILED_EXPORT = REPO / "tests" / "gcp" / "fixtures" / "billing_export_detailed.jsonl"
#: A mix options CSV of one on-demand option.
OPTIONS_CSV = "name,kind,hourly_cost\nod,on_demand,2.0\n"
#: A serving-lines CSV of the plan line ``gpu`` (docs/loop.md).
SERVING_CSV = ("PlanLine,Engine,Model,Gpu,Precision,TP,LabelKey,LabelValue\n"
               "gpu,vllm,llama-3.1-8b,h100-sxm,fp8,1,namespace,x\n")


#: The FOCUS 1.2 sample of 40 AWS rows, and a CUR 2.0 month of line items (tests/aws/data/SOURCES.md).
AWS_FOCUS_SAMPLE = REPO / "tests" / "aws" / "data" / "focus-1.2-aws-sample-40.csv"
AWS_CUR_SAMPLE = REPO / "tests" / "aws" / "data" / "cur2-2026-05.csv"
#: Where May's data file sits in an AWS Data Export (connectors/aws/exports.py), and its manifest.
AWS_EXPORT_DATA = "gpu-focus/data/BILLING_PERIOD=2026-05/gpu-focus-00001.parquet"
_AWS_EXPORT_MANIFEST = "gpu-focus/metadata/BILLING_PERIOD=2026-05/gpu-focus-Manifest.json"


@dataclass(frozen=True)
class Case:
    """One hostile input: ``build(folder)`` makes the inputs in a fresh folder and returns the argv."""

    build: Callable[[Path], Sequence[object]]
    exit: int = 2
    names: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    unchanged: bool = True
    may_write: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    subprocess: bool = False
    timeout_s: float = 120
    verify: Callable[[Path, str, str], None] | None = None


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder`` (hidden ones too), links as their target."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run_here(argv: list[str], env: dict[str, str], capsys, monkeypatch) -> tuple[int, str, str]:
    from finops.cli import main

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run_fresh(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", "from finops.cli import main; import sys; sys.exit(main())", *argv],
                          capture_output=True, text=True, timeout=timeout_s, cwd=REPO, check=False,
                          env={**os.environ, "COLUMNS": "200", **env})
    return done.returncode, done.stdout, done.stderr


def check(case: Case, folder: Path, capsys, monkeypatch) -> tuple[str, str]:
    """Build the case in ``folder``, run it, and hold it to the promises above; returns (stdout, stderr)."""
    argv = [str(a) for a in case.build(folder)]
    before = snapshot(folder)
    if case.subprocess:
        code, out, err = _run_fresh(argv, case.env, case.timeout_s)
    else:
        code, out, err = _run_here(argv, case.env, capsys, monkeypatch)
    shown = out + err
    assert code == case.exit, f"exit {code}, expected {case.exit}\n{err}"
    assert "Traceback" not in shown, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) <= 1, err
    if errors:
        assert err.splitlines()[0] == errors[0], err
    for name in case.names:
        assert name in shown, f"{name!r} not named:\n{err}"
    for secret in case.hidden:
        assert secret not in shown, f"{secret!r} shown:\n{shown}"
    if case.unchanged:
        after = snapshot(folder)
        changed = {p for p in before if after.get(p) != before[p]}
        new = {p for p in after if p not in before and not any(p.startswith(w) for w in case.may_write)}
        assert not changed, f"inputs changed: {sorted(changed)}"
        assert not new, f"left behind: {sorted(new)}"
        assert not any(p for p in folder.rglob("*") if p.is_dir() and not any(p.iterdir())
                       and not (p.relative_to(folder).parts[0] in case.may_write)), "an empty folder left behind"
    if case.verify is not None:
        case.verify(folder, out, err)
    return out, err


def text_file(folder: Path, name: str, text: str) -> Path:
    """``text`` written to ``folder/name`` (its folders made); returns the path."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plan(folder: Path, name: str = "plan.xlsx", *, line: str = "gpu", amount: object = 100,
         mapping: Sequence[Sequence[object]] | None = None) -> Path:
    """A one-line plan: ``line`` budgeted ``amount`` USD in May, every AWS charge mapped to it."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(folder / name, budget=[(MONTH, line, "cc", "OPEX", "AWS", amount, "USD", None)],
                      mapping=mapping if mapping is not None else [(1, line, "AWS", "", "", "", "", "", "")])


def bill(folder: Path, name: str = "bill.csv", rows: int = 3, **values: str) -> Path:
    """A FOCUS CSV bill of ``rows`` May charges of 10.00 USD, with ``values`` set on every row."""
    return write_bill(folder / name, [{"InvoiceId": f"I{i}", **values} for i in range(rows)])


def reconcile_argv(folder: Path, plan_path: Path, *bills: Path, out: Path | None = None,
                   extra: Sequence[object] = ()) -> list[object]:
    """``finops reconcile`` of May with ``--quiet``, into ``out`` (default ``folder/out``)."""
    return ["reconcile", "--plan", plan_path, "--month", MONTH, "--bills", *bills,
            "--out", out if out is not None else folder / "out", "--quiet", *extra]


def gcp_jsonl_pull(change: Callable[[list[dict[str, object]]], None]) -> Callable[[Path], Sequence[object]]:
    """``bills pull`` of May from the detailed GCP export fixture as JSONL (its nested shape kept), its rows
    changed by ``change``, into ``focus.parquet``."""
    import json

    def build(folder: Path) -> Sequence[object]:
        rows = [json.loads(line) for line in GCP_DETAILED_EXPORT.read_text().splitlines() if line.strip()]
        change(rows)
        (folder / "export.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
        return ["bills", "pull", "--provider", "gcp", "--source", folder / "export.jsonl", "--month", MONTH,
                "--out", folder / "focus.parquet"]
    return build


def aws_export(folder: Path, change: Callable[[list[dict[str, str]]], None] | None = None,
               sample: Path = AWS_FOCUS_SAMPLE) -> Path:
    """A local copy of a Data Export of May in ``folder/exports``: ``sample`` (the AWS FOCUS 1.2 sample, or a CUR
    2.0 month), its rows changed by ``change``, as its one Parquet data file, every cell as the export's text;
    returns the copy's root."""
    import csv
    import json

    import duckdb

    rows = list(csv.DictReader(sample.open(newline="")))
    if change is not None:
        change(rows)
    root = folder / "exports"
    staged = text_file(folder, "staged.csv", "")
    with staged.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (root / AWS_EXPORT_DATA).parent.mkdir(parents=True)
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{staged}', all_varchar=true)) TO '{root / AWS_EXPORT_DATA}' "
               "(FORMAT parquet)")
    staged.unlink()
    text_file(root, _AWS_EXPORT_MANIFEST, json.dumps({"dataFiles": [f"s3://b/p/{AWS_EXPORT_DATA}"]}))
    return root
