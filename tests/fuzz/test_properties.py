"""Property suite (hypothesis) over every reader and numeric flag: the result is a value or an
:class:`~finops.errors.InputError`, and through the command line exit 0, 1 or 2 with no traceback and no
partial file. Derandomized and bounded (a few dozen examples each) so CI stays within its time budget.
"""

from __future__ import annotations

import math
import tempfile
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finops.depreciation import parse_month
from finops.errors import InputError
from finops.mix import read_demand_csv, read_options_csv
from finops.money import MAX_AMOUNT, Money, to_decimal
from finops.reconcile.plan import usage_from_csv
from templates.plan_reader import read_plan

from .conftest import BASE_ROW, run_cli, snapshot, write_bill, write_plan

BOUNDED = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FEW = settings(BOUNDED, max_examples=12)

#: Text that looks like numbers, months and CSV, and the odd cases around them.
NUMBERISH = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["nan", "inf", "-inf", "1e308", "-1e308", "1e999999999", "1,234.5", "12,5", "0x10", "１２",
                     "", " ", "-0", "1e-400", "9" * 40, "3.14159265358979323846264338327950288"]),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.floats().map(repr),
    st.integers().map(str),
)
CSV_BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.lists(NUMBERISH, min_size=1, max_size=4), max_size=6).map(
        lambda rows: "\n".join(",".join(row) for row in rows).encode("utf-8")),
)


def _file(folder: str, name: str, data: bytes) -> Path:
    path = Path(folder) / name
    path.write_bytes(data)
    return path


@BOUNDED
@given(NUMBERISH)
def test_amounts_are_exact_and_finite_or_refused(text):
    try:
        value = to_decimal(text)
    except InputError:
        return
    assert isinstance(value, Decimal) and value.is_finite()
    try:
        money = Money.of(text, "USD")
    except InputError:
        assert abs(value) >= MAX_AMOUNT
        return
    assert str(money).endswith(" USD")  # any amount prints, rounded to the cent


@BOUNDED
@given(st.one_of(st.text(max_size=12), st.from_regex(r"\A[0-9０-９]{4}[-－][0-9０-９]{2}\Z")))
def test_months_are_ascii_labels_or_refused(text):
    try:
        label = parse_month(text)
    except InputError:
        return
    assert label.isascii() and len(label) == 7 and 1 <= int(label[5:]) <= 12


@BOUNDED
@given(st.sampled_from(["demand", "options", "usage"]), CSV_BYTES)
def test_csv_readers_return_rows_or_an_input_error(kind, data):
    header = {"demand": b"hour,units\n", "options": b"name,kind,hourly_cost\n",
              "usage": b"Month,PlanLine,ActualMTokens\n"}[kind]
    reader = {"demand": read_demand_csv, "options": read_options_csv, "usage": usage_from_csv}[kind]
    with tempfile.TemporaryDirectory() as folder:
        for body in (data, header + data):
            try:
                reader(_file(folder, f"{kind}.csv", body))
            except InputError:
                pass


@pytest.fixture(scope="module")
def plan_bytes(tmp_path_factory) -> bytes:
    path = write_plan(tmp_path_factory.mktemp("plan") / "plan.xlsx",
                      budget=[("2026-05", "gpu", "cc", "OPEX", "AWS", 100, "USD", None)],
                      mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")])
    return path.read_bytes()


@BOUNDED
@given(st.data())
def test_a_damaged_workbook_reads_or_fails_with_an_input_error(plan_bytes, data):
    damaged = bytearray(plan_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        damaged[data.draw(st.integers(0, len(damaged) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        damaged = damaged[:data.draw(st.integers(0, len(damaged)))]
    with tempfile.TemporaryDirectory() as folder:
        try:
            read_plan(_file(folder, "plan.xlsx", bytes(damaged)))
        except InputError:
            pass


@BOUNDED
@given(st.dictionaries(st.sampled_from(["xl/workbook.xml", "xl/worksheets/sheet1.xml", "[Content_Types].xml"]),
                       st.one_of(st.binary(max_size=200), st.just(b'<!DOCTYPE a [<!ENTITY b "c">]><a/>')),
                       max_size=2))
def test_a_workbook_with_foreign_parts_reads_or_fails_with_an_input_error(plan_bytes, parts):
    with tempfile.TemporaryDirectory() as folder:
        source = _file(folder, "source.xlsx", plan_bytes)
        target = Path(folder) / "plan.xlsx"
        with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w") as out:
            for info in package.infolist():
                out.writestr(info.filename, parts.get(info.filename, package.read(info.filename)))
        try:
            read_plan(target)
        except InputError:
            pass


#: Bill columns worth varying, and the odd values to put in them.
BILL_COLUMNS = ["BilledCost", "EffectiveCost", "ChargePeriodStart", "Tags", "BillingCurrency", "ChargeCategory",
                "ConsumedQuantity"]


@FEW
@given(st.lists(st.dictionaries(st.sampled_from(BILL_COLUMNS), NUMBERISH, max_size=3), min_size=1, max_size=3),
       st.sampled_from(["csv", "csv.gz"]))
def test_reconcile_of_any_bill_exits_0_1_or_2_and_writes_whole_or_nothing(capsys, plan_bytes, rows, suffix):
    with tempfile.TemporaryDirectory() as folder:
        plan = _file(folder, "plan.xlsx", plan_bytes)
        bill = write_bill(Path(folder) / f"bill.{suffix}", [{**BASE_ROW, **row} for row in rows])
        before = snapshot(Path(folder))
        code, _, _ = run_cli(["reconcile", "--plan", plan, "--month", "2026-05", "--bills", bill, "--out",
                              Path(folder) / "out", "--quiet"], capsys)
        after = snapshot(Path(folder))
        if code == 2:
            assert after == before
        else:
            assert {"out/budget-review-2026-05.xlsx", "out/reconcile-history.duckdb"} <= set(after)


FLAG_VALUES = st.one_of(NUMBERISH.filter(lambda text: not text.startswith("-")),
                        st.integers(-10, 10**12).map(str))


@FEW
@given(st.sampled_from(["--hours", "--peak", "--trough", "--weekend", "--growth", "--batch-share", "--noise",
                        "--peak-hour", "--campaign"]), FLAG_VALUES)
def test_mix_generate_flags_exit_0_or_2_and_write_whole_or_nothing(capsys, option, value):
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "demand.csv"
        argv = ["mix", "generate", "--peak", "4", "--hours", "48", option, value, "--out", out]
        if option == "--campaign":
            argv[-3] = f"0:1:{value}"
        code, _, err = run_cli(argv, capsys)
        assert code in (0, 2), err
        if code == 2:
            assert not list(Path(folder).iterdir())
        else:
            units = read_demand_csv(out)
            assert len(units) > 0 and all(math.isfinite(u) for u in units)


@FEW
@given(st.sampled_from(["--gpus", "--months", "--gpu-price", "--electricity", "--pue", "--node-power-kw",
                        "--residual-share", "--life-months", "--start", "--support"]), FLAG_VALUES)
def test_tco_flags_exit_0_1_or_2(capsys, option, value):
    run_cli(["tco", "--no-cloud", option, value, "--json"], capsys)
