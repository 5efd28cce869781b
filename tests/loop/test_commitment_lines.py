"""Commitments get their plan line from the reconcile's own mapping (the compiled SQL CASE).

The purchase row is mapped, with the instance type read as the reconcile reads it.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from finops.reconcile.mapping import UNMAPPED
from finops.reconcile.plan import MappingRule
from finops.reconcile.sample_bills import sample_bill_paths
from finops.serving.commitments import sunk_commitments


def _bill(folder: Path) -> Path:
    """Two reserved instances, the instance type only in SkuPriceDetails: p5 tagged Team-ML, m6i team-web."""
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    purchase = next(r for r in rows
                    if r["ChargeCategory"] == "Purchase" and r["CommitmentDiscountUnit"] == "Hours")
    base = {**purchase, "RegionId": "us-east-1", "ChargePeriodStart": "2026-05-01 00:00:00",
            "ChargePeriodEnd": "2026-05-01 01:00:00", "CommitmentDiscountQuantity": "8760",
            "SkuPriceDetails": json.dumps({"InstanceType": "p5.48xlarge"})}
    tagged = {**base, "CommitmentDiscountId": "ri-tagged", "Tags": json.dumps({"Owner": "Team-ML"})}
    plain = {**base, "CommitmentDiscountId": "ri-plain", "Tags": json.dumps({"Owner": "team-web"}),
             "SkuPriceDetails": json.dumps({"InstanceType": "m6i.large"})}
    path = folder / "ris.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([tagged, plain])
    return path


def test_rules_in_order_tags_and_instance_type_as_the_reconcile_reads_them(tmp_path: Path) -> None:
    rules = [MappingRule(2, "gpu", instance_type="P5.*"),
             MappingRule(1, "ml", tag_key="owner", tag_value="team-m?")]
    got = {c.commitment_id: (c.plan_line, c.instance_type, c.units)
           for c in sunk_commitments([_bill(tmp_path)], rules)}
    assert got == {"ri-tagged": ("ml", "p5.48xlarge", 1), "ri-plain": (UNMAPPED, "m6i.large", 1)}
    reordered = [MappingRule(1, "gpu", instance_type="p5.*"), MappingRule(2, "ml", tag_key="owner")]
    assert {c.commitment_id: c.plan_line for c in sunk_commitments([_bill(tmp_path)], reordered)} == {
        "ri-tagged": "gpu", "ri-plain": "ml"}
