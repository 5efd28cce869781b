"""Demand profiles from FOCUS bills: GPU-hours spread over each charge period, summed per hour."""

import csv
import gzip
from datetime import datetime, timedelta, timezone

import pytest

from finops.cli import main
from finops.errors import InputError
from finops.mix import read_demand_csv
from finops.mix.usage import UsageProfile, profile_from_bills
from finops.reconcile.sample_bills import sample_bill_paths


@pytest.fixture
def bill(tmp_path):
    source = next(p for p in sample_bill_paths() if "aws" in p.name)
    with gzip.open(source, "rt", newline="") as handle:
        reader = csv.DictReader(handle)
        usage = next(r for r in reader if r["ChargeCategory"] == "Usage")
        header = list(reader.fieldnames) + [c for c in ("x_InstanceType", "x_GpuHours") if c not in reader.fieldnames]
    rows = []
    for start, end, gpu_hours, instance in [("2026-05-01T00:00:00Z", "2026-05-01T01:00:00Z", "8", "p5.48xlarge"),
                                            ("2026-05-01T00:00:00Z", "2026-05-01T03:00:00Z", "24", "p5.48xlarge"),
                                            ("2026-05-01T05:00:00Z", "2026-05-01T06:00:00Z", "16", "p4d.24xlarge")]:
        rows.append({**usage, "ChargePeriodStart": start, "ChargePeriodEnd": end, "x_GpuHours": gpu_hours,
                     "x_InstanceType": instance})
    path = tmp_path / "bill.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("instance_type, expected", [
    (None, [16.0, 8.0, 8.0, 0.0, 0.0, 16.0]),
    ("p5.48xlarge", [16.0, 8.0, 8.0]),
    ("P4D.24XLARGE", [16.0]),
    ("g5.xlarge", []),
])
def test_profile_from_bills(bill, instance_type, expected):
    profile = profile_from_bills([bill], instance_type=instance_type)
    assert profile.units.tolist() == expected
    if expected:
        assert profile.hours()[0].isoformat().startswith("2026-05-01T0")


def test_profile_command_writes_a_demand_csv(bill, tmp_path, capsys):
    out = tmp_path / "demand.csv"
    assert main(["mix", "profile", "--bills", str(bill), "--instance-type", "p5.48xlarge", "--out", str(out)]) == 0
    assert read_demand_csv(out).tolist() == [16.0, 8.0, 8.0]
    assert main(["mix", "profile", "--bills", str(bill), "--instance-type", "p5.48xlarge", "--out", str(out),
                 "--gpus-per-unit", "8"]) == 0
    assert read_demand_csv(out).tolist() == [2.0, 1.0, 1.0]
    assert out.read_text().splitlines()[1].startswith("2026-05-01T00:00:00")
    assert main(["mix", "profile", "--bills", str(bill), "--instance-type", "g5.xlarge", "--out", str(out)]) == 2
    assert "no GPU usage" in capsys.readouterr().err


def test_the_same_bill_as_csv_and_parquet_is_refused_not_counted_twice(bill, tmp_path, capsys):
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    copy = tmp_path / "bill.parquet"
    pq.write_table(pa_csv.read_csv(bill), copy)
    assert profile_from_bills([copy]).units.tolist() == profile_from_bills([bill]).units.tolist()
    out = tmp_path / "demand.csv"
    assert main(["mix", "profile", "--bills", str(bill), "--bills", str(copy), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "same charges as" in err and "bill.csv" in err and "bill.parquet" in err and not out.exists()
    second_half = tmp_path / "other.csv"  # another bill (the same rows a day later) is added, not refused
    second_half.write_text(bill.read_text().replace("2026-05-01T", "2026-05-02T"))
    assert profile_from_bills([bill, second_half]).units.sum() == 2 * profile_from_bills([bill]).units.sum()


def test_each_hour_of_the_profile_is_stamped_from_its_start(bill):
    profile = profile_from_bills([bill])
    start = datetime(2026, 5, 1, tzinfo=timezone.utc)
    assert [h.astimezone(timezone.utc) for h in profile.hours()] == [start + timedelta(hours=h) for h in range(6)]
    assert UsageProfile(None, profile.units[:0]).hours() == []


def test_a_region_keeps_its_pool_only(bill):
    region = next(iter({r["RegionId"] for r in csv.DictReader(bill.open(newline=""))}))
    assert profile_from_bills([bill], region=region.upper()).units.tolist() == [16.0, 8.0, 8.0, 0.0, 0.0, 16.0]
    assert profile_from_bills([bill], region="xx-nowhere-1").units.tolist() == []
    assert profile_from_bills([bill], instance_type="p5.48xlarge", region=region, gpus_per_unit=8).units.tolist() == [
        2.0, 1.0, 1.0]


def test_gpus_per_unit_is_at_least_one(bill):
    with pytest.raises(InputError) as caught:
        profile_from_bills([bill], gpus_per_unit=0)
    assert caught.value.message == "gpus per unit must be at least 1, got 0"
