"""The two bundled sample bills (:func:`~finops.reconcile.sample_bills.sample_bill_paths`): AWS first, then
Google Cloud, 1,000 rows each, every row of May 2026 (:data:`SAMPLE_MONTH`) and in USD, read with csv."""

from __future__ import annotations

import csv
import gzip

from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths


def test_the_two_samples_aws_first():
    paths = sample_bill_paths()
    assert [p.name for p in paths] == ["focus-1.2-aws-1000.csv.gz", "focus-1.2-gcp-1000.csv.gz"]
    assert [p.parent.parts[-3:] for p in paths] == [("finops", "data", "bills")] * 2
    providers = []
    for path in paths:
        with gzip.open(path, "rt", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert len(rows) == 1_000
        assert {row["BillingPeriodStart"][:7] for row in rows} == {SAMPLE_MONTH}
        assert {row["BillingCurrency"] for row in rows} == {"USD"}
        providers.append({row["ProviderName"] for row in rows})
    assert providers == [{"AWS"}, {"Google Cloud"}]
