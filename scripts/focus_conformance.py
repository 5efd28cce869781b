"""Helper of ``scripts/focus_conformance.sh`` (run with the project's Python).

``write DIR``: the FOCUS Parquet files the connectors write from the repository's bill fixtures (AWS CUR 2.0,
legacy CUR and FOCUS export, GCP detailed / standard / FOCUS exports), one per fixture, into ``DIR``.

``check REPORT...``: read focus-validator console reports and list the rules that fail; exit 1 when a rule
fails that is not one of the validator's own bugs (:data:`VALIDATOR_BUGS`, explained in ``docs/focus.md``),
counting a parent rule (``AND failed - failed child rules: [...]``) as known when all its failing children are.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: focus-validator 2.2.1 (model 1.2.0.1) rules that fail on conformant rows; docs/focus.md says why.
VALIDATOR_BUGS = {
    "InvoiceId-C-004-C": "no condition: demands a null InvoiceId on every row",
    "InvoiceId-C-005-C": "no condition: demands a non-null InvoiceId on every row",
    "CommitmentDiscountStatus-C-004-C": "condition inverted: checks rows whose CommitmentDiscountId is null",
    "CapacityReservationStatus-C-004-C": "condition written as 'AND' instead of CheckFunction: ignored, every row checked",
    "BilledCost-C-005-C": "treats ProviderName != InvoiceIssuerName as a marketplace charge "
                          "('AWS' vs 'Amazon Web Services, Inc.')",
}
_FAIL = re.compile(r"❌ (\S+): FAIL\s+\(violations=(\d+), msg=(.*)")
_CHILDREN = re.compile(r"failed child rules: \[([^\]]*)\]")


def write(folder: Path) -> list[Path]:
    """Map each fixture with its connector and write its FOCUS Parquet file; the paths written."""
    sys.path.insert(0, str(ROOT))
    from connectors.aws import catalog_gpu
    from connectors.aws.cur import focus_rows_from_cur
    from connectors.aws.focus_export import focus_rows_from_focus
    from connectors.focus_table import write_focus_parquet
    from connectors.gcp.bills import pull_bills

    folder.mkdir(parents=True, exist_ok=True)
    aws, gcp = ROOT / "tests" / "aws" / "data", ROOT / "tests" / "gcp" / "fixtures"
    written = []
    for name, mapper in (("cur2-2026-05.csv", focus_rows_from_cur), ("legacy-cur-focus-converters-excerpt.csv",
                                                                     focus_rows_from_cur),
                         ("focus-1.2-aws-sample-40.csv", focus_rows_from_focus)):
        with (aws / name).open(newline="") as handle:
            rows = mapper(list(csv.DictReader(handle)), gpu_of=catalog_gpu, file=name)
        written.append(write_focus_parquet(rows, folder / f"aws-{Path(name).stem}.parquet"))
    for name in ("billing_export_detailed.jsonl", "billing_export_standard.csv", "focus_export_sample.csv"):
        written.append(pull_bills(str(gcp / name), "2026-05", folder / f"gcp-{Path(name).stem}.parquet"))
    return written


def failures(report: str) -> dict[str, tuple[int, str]]:
    """Failing rule -> (violations, message) in one console report."""
    return {m.group(1): (int(m.group(2)), m.group(3)) for m in _FAIL.finditer(report)}


def unexplained(failed: dict[str, tuple[int, str]]) -> list[str]:
    """The failing rules that are neither validator bugs nor parents failing only through them."""
    known = set(VALIDATOR_BUGS)
    changed = True
    while changed:  # a parent is known once every failing child it names is
        changed = False
        for rule, (_, message) in failed.items():
            children = _CHILDREN.search(message)
            if rule not in known and children and all(c.strip() in known for c in children.group(1).split(",")):
                known.add(rule)
                changed = True
    return sorted(rule for rule in failed if rule not in known)


def check(reports: list[Path]) -> int:
    status = 0
    for path in reports:
        failed = failures(path.read_text(encoding="utf-8", errors="replace"))
        left = unexplained(failed)
        bugs = sorted(set(failed) & set(VALIDATOR_BUGS))
        print(f"{path.name}: {len(failed)} failing rules; validator bugs: {', '.join(bugs) or 'none'}; "
              f"ours: {', '.join(left) or 'none'}")
        status = status or (1 if left else 0)
    return status


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "write":
        for written in write(Path(arguments[0])):
            print(written)
    else:
        sys.exit(check([Path(a) for a in arguments]))
