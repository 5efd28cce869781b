"""``finops plan next`` end to end: demand, fleet and mix follow the observed month.

The observed months are drawn by the sample-metrics generator (``scripts/make_sample_metrics.py``) at
1x and 2x the demo traffic; the expected relations come from that scale, not from the code under
test: twice the requests in every hour give twice the planned tokens and peak, and a larger fleet.
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import json
from pathlib import Path
from types import ModuleType

import openpyxl
import pytest

from finops.cli import main
from finops.reconcile.sample_bills import sample_bill_paths
from templates.builder import DEFAULT_TEMPLATE

LINES = ("aws-inference-prod", "gcp-inference-prod")
#: The plan's bytes before any run of this module.
TEMPLATE_DIGEST = hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest()


def _metrics(folder: Path, generator: ModuleType, scale: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for spec in generator.SPECS:
        if spec.plan_line in LINES:
            path = folder / f"{spec.plan_line}.json.gz"
            path.write_bytes(gzip.compress(json.dumps(generator.answer(generator.line_results(spec, generator.MONTH, scale=scale)))
                                           .encode()))
            paths.append(path)
    return paths


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory, serving_csv: Path) -> Path:
    rows = serving_csv.read_text().splitlines()
    path = tmp_path_factory.mktemp("serving") / "serving.csv"
    path.write_text("\n".join([rows[0]] + [r for r in rows[1:] if r.split(",")[0] in LINES]) + "\n")
    return path


@functools.lru_cache(maxsize=8)
def _book(path: Path, mtime: float) -> openpyxl.Workbook:
    return openpyxl.load_workbook(path, data_only=True, read_only=True)


def _sheet(path: Path, name: str) -> list[dict[str, object]]:
    ws = _book(path, path.stat().st_mtime)[name]
    rows = list(ws.iter_rows(min_row=3, values_only=True))
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def _run(tmp: Path, metrics: list[Path], serving: Path, bills: list[Path], *extra: str) -> int:
    args = ["plan", "next", "--plan", str(DEFAULT_TEMPLATE), "--history", str(tmp / "history"), "--month", "2026-05",
            "--serving", str(serving), "--growth", "1.0", "--out", str(tmp / "next.xlsx"), *extra]
    for m in metrics:
        args += ["--metrics", str(m)]
    for b in bills:
        args += ["--bills", str(b)]
    return main(args)


@pytest.fixture(scope="module")
def single_and_double(tmp_path_factory: pytest.TempPathFactory, generator: ModuleType, serving: Path):
    out = {}
    for scale in (1.0, 2.0):
        tmp = tmp_path_factory.mktemp(f"x{scale:g}")
        assert _run(tmp, _metrics(tmp / "metrics", generator, scale), serving, []) == 0
        out[scale] = tmp / "next.xlsx"
    return out


def test_doubling_the_traffic_doubles_demand_and_raises_the_fleet(single_and_double) -> None:
    one, two = single_and_double[1.0], single_and_double[2.0]
    demand1, demand2 = _sheet(one, "Demand"), _sheet(two, "Demand")
    for line in LINES:
        peak1, peak2 = max(r[line] for r in demand1), max(r[line] for r in demand2)
        assert peak2 == pytest.approx(2 * peak1, rel=1e-4)
    budget1 = {r["PlanLine"]: r for r in _sheet(one, "Budget") if r["Month"] == "2026-06"}
    budget2 = {r["PlanLine"]: r for r in _sheet(two, "Budget") if r["Month"] == "2026-06"}
    assert budget1["gcp-inference-prod"]["PlannedMTokens"] == pytest.approx(1_940, rel=1e-4)
    assert budget2["gcp-inference-prod"]["PlannedMTokens"] == pytest.approx(2 * 1_940, rel=1e-4)
    fleet1 = {r["PlanLine"]: r for r in _sheet(one, "Fleet")}
    fleet2 = {r["PlanLine"]: r for r in _sheet(two, "Fleet")}
    for line in LINES:
        assert fleet2[line]["GpusNext"] > fleet1[line]["GpusNext"]
        assert fleet2[line]["MonthlyCost"] > fleet1[line]["MonthlyCost"]
    changes = _sheet(two, "Changes")
    assert any(r["What"] == "GPUs" and r["PlanLine"] == "gcp-inference-prod" for r in changes)


def _unused_reservation(folder: Path) -> Path:
    """A FOCUS bill with one reserved instance bought for aws-inference-prod in us-east-1, wholly unused."""
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    purchase = next(r for r in rows if r["ChargeCategory"] == "Purchase" and r["CommitmentDiscountUnit"] == "Hours")
    ri = "arn:aws:ec2:us-east-1::reservation/test0000unused01"
    bought = {**purchase, "CommitmentDiscountId": ri, "RegionId": "us-east-1", "SubAccountName": "prod-platform",
              "ServiceName": "AmazonEC2", "ChargePeriodStart": "2026-05-01 00:00:00",
              "ChargePeriodEnd": "2026-05-01 01:00:00", "CommitmentDiscountQuantity": "8760"}
    unused = {**bought, "ChargeCategory": "Usage", "CommitmentDiscountStatus": "Unused", "BilledCost": "0",
              "EffectiveCost": "744.00", "ChargeFrequency": "Usage-Based"}
    path = folder / "unused-ri.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([bought, unused])
    return path


def test_an_unused_commitment_is_counted_as_capacity(tmp_path: Path, generator: ModuleType, serving: Path) -> None:
    metrics = _metrics(tmp_path / "metrics", generator, 1.0)
    gcp_bill = sample_bill_paths()[1]
    without, with_ri = tmp_path / "without", tmp_path / "with"
    assert _run(without, metrics, serving, [gcp_bill]) == 0
    assert _run(with_ri, metrics, serving, [gcp_bill, _unused_reservation(tmp_path)]) == 0
    before = {r["PlanLine"]: r for r in _sheet(without / "next.xlsx", "Fleet")}["aws-inference-prod"]
    after = {r["PlanLine"]: r for r in _sheet(with_ri / "next.xlsx", "Fleet")}["aws-inference-prod"]
    assert (before["SunkCommitted"], after["SunkCommitted"]) == (0, 1)
    assert before["GpusNext"] == after["GpusNext"]            # the same fleet...
    assert after["MonthlyCost"] < before["MonthlyCost"]       # ...of which one instance is already paid for


def test_the_input_plan_is_never_modified(single_and_double, tmp_path: Path, serving: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    # the module's runs read DEFAULT_TEMPLATE; its bytes are those of the committed template's build
    assert hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest() == TEMPLATE_DIGEST
    code = main(["plan", "next", "--plan", str(DEFAULT_TEMPLATE), "--history", str(tmp_path / "h"), "--month",
                 "2026-05", "--serving", str(serving), "--metrics", "x.json", "--out", str(DEFAULT_TEMPLATE)])
    assert code == 2 and "never modified" in capsys.readouterr().err
    assert hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest() == TEMPLATE_DIGEST


def test_next_plan_carries_its_serving_lines(single_and_double, tmp_path: Path, generator: ModuleType) -> None:
    # the written plan is a plan again: a second run reads the serving lines from its Serving sheet
    nxt = single_and_double[1.0]
    code = main(["plan", "next", "--plan", str(nxt), "--history", str(tmp_path / "h"), "--month", "2026-05",
                 *sum((["--metrics", str(p)] for p in _metrics(tmp_path / "m", generator, 1.0)), []),
                 "--out", str(tmp_path / "again.xlsx")])
    assert code == 0
    assert [r["PlanLine"] for r in _sheet(tmp_path / "again.xlsx", "Serving")] == list(LINES)


@pytest.mark.parametrize(("extra", "message"), [
    (["--prometheus", "http://127.0.0.1:1"], "one of them"),
    (["--growth", "0"], "--growth must be a number above 0"),
])
def test_bad_options_exit_2(tmp_path: Path, generator: ModuleType, serving: Path, extra: list[str], message: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    metrics = _metrics(tmp_path / "metrics", generator, 1.0)[:1]
    assert _run(tmp_path, metrics, serving, [], *extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "next.xlsx").exists()


def test_a_prometheus_that_does_not_answer_exits_2_naming_it(tmp_path: Path, serving: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from .replay_server import free_port

    url = f"http://127.0.0.1:{free_port()}"
    code = main(["plan", "next", "--plan", str(DEFAULT_TEMPLATE), "--history", str(tmp_path / "h"), "--month",
                 "2026-05", "--serving", str(serving), "--prometheus", url, "--out", str(tmp_path / "n.xlsx")])
    assert code == 2 and f"Prometheus at {url} did not answer" in capsys.readouterr().err


def _reservations(folder: Path) -> Path:
    """Two reserved instances bought on 2026-05-01 for aws-inference-prod, all upfront at 1.00 USD an hour:
    one for a year (8760 h, 8760.00 USD), one for 1109 h (1109.00 USD), which ends 365 h into June."""
    with gzip.open(sample_bill_paths()[0], "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    purchase = next(r for r in rows if r["ChargeCategory"] == "Purchase" and r["CommitmentDiscountUnit"] == "Hours")
    bought = [{**purchase, "CommitmentDiscountId": f"arn:aws:ec2:us-east-1::reservation/test{hours}", "RegionId": "us-east-1",
               "SubAccountName": "prod-platform", "ServiceName": "AmazonEC2", "ChargePeriodStart": "2026-05-01 00:00:00",
               "ChargePeriodEnd": "2026-05-01 01:00:00", "CommitmentDiscountQuantity": str(hours),
               "ChargeFrequency": "One-Time", "BilledCost": f"{hours}.00"} for hours in (8760, 1109)]
    path = folder / "reservations.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(bought)
    return path


def test_the_budget_carries_the_amortization_of_commitments_already_bought(tmp_path: Path, generator: ModuleType,
                                                                           serving: Path) -> None:
    # hand-worked: June's first 730 hours; 8760.00 x 730 / 8760 = 730.00, and the second runs 1109 - 744 = 365 h
    # into June: 1109.00 x 365 / 1109 = 365.00; together 1095.00 on top of the mix's cost of what is new
    metrics = _metrics(tmp_path / "metrics", generator, 1.0)
    assert _run(tmp_path, metrics, serving, [sample_bill_paths()[1], _reservations(tmp_path)]) == 0
    fleet = {r["PlanLine"]: r for r in _sheet(tmp_path / "next.xlsx", "Fleet")}["aws-inference-prod"]
    assert fleet["SunkCommitted"] == 2 and fleet["SunkAmortization"] == 1095.00
    budget = {r["PlanLine"]: r for r in _sheet(tmp_path / "next.xlsx", "Budget") if r["Month"] == "2026-06"}
    assert budget["aws-inference-prod"]["Amount"] == pytest.approx(fleet["MonthlyCost"] + 1095.00, abs=0.011)
    change = next(r for r in _sheet(tmp_path / "next.xlsx", "Changes")
                  if r["PlanLine"] == "aws-inference-prod" and r["What"] == "monthly cost")
    assert "plus 1,095.00 USD amortization of commitments already bought" in change["Why"]
