"""The bad inputs of issue 14, one row each: exit 2, one message naming what is wrong, and no file written.

Each case builds its inputs in a fresh folder, runs the command line, and checks that the folder holds
exactly what it held before (nothing half-written, no temporary left) and that stderr names the fault.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from .conftest import EXAMPLES, run_cli, snapshot, write_bill, write_plan

MONTH = "2026-05"


def _plan(folder: Path, name: str = "plan.xlsx") -> Path:
    return write_plan(folder / name, budget=[(MONTH, "gpu", "cc", "OPEX", "AWS", 100, "USD", None)],
                      mapping=[(1, "gpu", "AWS", "", "", "", "", "", "")])


def _bill(folder: Path, name: str = "bill.csv", **row: str) -> Path:
    return write_bill(folder / name, [{"InvoiceId": f"I{i}", **row} for i in range(400)])


def _rezip(source: Path, target: Path, edit: Callable[[str, bytes], bytes]) -> Path:
    with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in package.infolist():
            out.writestr(info.filename, edit(info.filename, package.read(info.filename)))
    return target


def _damaged_workbook(folder: Path, damage: Callable[[bytearray, zipfile.ZipInfo], None]) -> Path:
    """A plan whose bytes ``damage`` edits, given the entry of ``xl/workbook.xml``."""
    plan = _plan(folder)
    data = bytearray(plan.read_bytes())
    with zipfile.ZipFile(plan) as package:
        damage(data, package.getinfo("xl/workbook.xml"))
    plan.write_bytes(bytes(data))
    return plan


def _flip_a_compressed_byte(data: bytearray, info: zipfile.ZipInfo) -> None:
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + 5] ^= 0xFF


def _understate_in_directory(data: bytearray, info: zipfile.ZipInfo) -> None:
    """The central directory says the member is half as long as it is."""
    entry = data.find(b"PK\x01\x02")
    while data[entry + 46:entry + 46 + len(info.filename)] != info.filename.encode():
        entry = data.find(b"PK\x01\x02", entry + 4)
    data[entry + 24:entry + 28] = (info.file_size // 2).to_bytes(4, "little")  # uncompressed size


def _late_dtd(folder: Path) -> Path:
    plan = _plan(folder, "source.xlsx")
    late = _rezip(plan, folder / "plan.xlsx", lambda name, data: data.replace(
        b"<workbook", b" " * 70_000 + b'<!DOCTYPE x [<!ENTITY a "b">]><workbook', 1)
        if name == "xl/workbook.xml" else data)
    plan.unlink()
    return late


def _damaged_gzip(folder: Path, truncate: bool) -> Path:
    bill = write_bill(folder / "bill.csv.gz", [{"InvoiceId": f"I{i}"} for i in range(3000)])
    data = bytearray(bill.read_bytes())
    if truncate:
        bill.write_bytes(bytes(data[:len(data) * 2 // 3]))
    else:
        data[-6] ^= 0xFF  # the CRC: DuckDB alone would read this file without a word
        bill.write_bytes(bytes(data))
    return bill


def _damaged_parquet(folder: Path, truncate: bool) -> Path:
    import duckdb

    source = _bill(folder, "source.csv")
    bill = folder / "bill.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{source}', all_varchar = true)) TO '{bill}' (FORMAT parquet)")
    source.unlink()
    data = bytearray(bill.read_bytes())
    if truncate:
        data = data[:len(data) // 2]
    else:
        middle = slice(len(data) // 3, len(data) // 3 + 64)
        data[middle] = bytes(b ^ 0xFF for b in data[middle])
    bill.write_bytes(bytes(data))
    return bill


def _padded(folder: Path, parts: int, part_bytes: int) -> Path:
    """A plan with ``parts`` extra parts of ``part_bytes`` spaces each (deflated to almost nothing)."""
    plan = _plan(folder, "source.xlsx")
    padded = folder / "plan.xlsx"
    with zipfile.ZipFile(plan) as package, zipfile.ZipFile(padded, "w", zipfile.ZIP_DEFLATED) as out:
        for info in package.infolist():
            out.writestr(info.filename, package.read(info.filename))
        for i in range(parts):
            out.writestr(f"xl/media/pad{i}.xml", b" " * part_bytes)
    plan.unlink()
    return padded


def _options(folder: Path, hourly: str = "1.60") -> Path:
    lines = (EXAMPLES / "options.csv").read_text().splitlines()
    lines[1] = lines[1].replace("1.60", hourly)
    return (folder / "options.csv").write_text("\n".join(lines) + "\n") and folder / "options.csv"


def _demand(folder: Path, body: bytes | None = None) -> Path:
    path = folder / "demand.csv"
    path.write_bytes(body if body is not None else
                     ("hour,units\n" + "".join(f"{h},{1 + h % 5}\n" for h in range(8760))).encode())
    return path


def _reconcile(folder: Path, plan: Path, bill: Path, *extra: str) -> list[object]:
    return ["reconcile", "--plan", plan, "--month", MONTH, "--bills", bill, "--out", folder / "out", "--quiet",
            *extra]


#: case -> (build the inputs and return argv, what stderr must name)
CASES: dict[str, tuple[Callable[[Path], list[object]], str]] = {
    "plan with a flipped byte in xl/workbook.xml": (
        lambda d: _reconcile(d, _damaged_workbook(d, _flip_a_compressed_byte), _bill(d)), "damaged"),
    "plan whose zip directory understates a member": (
        lambda d: _reconcile(d, _damaged_workbook(d, _understate_in_directory), _bill(d)), "damaged"),
    "plan with a DTD after 64 KB, --in-place": (
        lambda d: _reconcile(d, _late_dtd(d), _bill(d), "--in-place"), "DTD"),
    "plan with more than 10,000 parts": (
        lambda d: _reconcile(d, _padded(d, 10_001, 1), _bill(d)), "more than 10,000"),
    "plan whose parts together inflate past 256 MiB (each under 200 MiB)": (
        lambda d: _reconcile(d, _padded(d, 2, 130 * 1024 * 1024), _bill(d)), "inflates past"),
    "gzip bill with a bad checksum": (
        lambda d: _reconcile(d, _plan(d), _damaged_gzip(d, truncate=False)), "bill.csv.gz"),
    "truncated gzip bill": (
        lambda d: _reconcile(d, _plan(d), _damaged_gzip(d, truncate=True)), "truncated"),
    "truncated Parquet bill": (
        lambda d: _reconcile(d, _plan(d), _damaged_parquet(d, truncate=True)), "bill.parquet"),
    "Parquet bill with damaged data": (
        lambda d: _reconcile(d, _plan(d), _damaged_parquet(d, truncate=False)), "bill.parquet"),
    "an amount too large for the history once converted": (
        lambda d: _reconcile(d, _plan(d), write_bill(d / "bill.csv", [
            {"BilledCost": "9e26", "EffectiveCost": "9e26", "BillingCurrency": "EUR"}, {}]), "--rate", "EUR=1e8"),
        "too large"),
    "empty mandatory EffectiveCost": (
        lambda d: _reconcile(d, _plan(d), write_bill(d / "bill.csv", [{}, {"EffectiveCost": ""}])),
        "row 3, column EffectiveCost"),
    "Tags that are not JSON": (
        lambda d: _reconcile(d, _plan(d), write_bill(d / "bill.csv", [{}, {}, {"Tags": "team=ml"}])),
        "row 4, column Tags"),
    "Tags that are a JSON array": (
        lambda d: _reconcile(d, _plan(d), write_bill(d / "bill.csv", [{"Tags": "[1, 2]"}])), "JSON object"),
    "reconcile --rate EUR=1e308": (
        lambda d: _reconcile(d, _plan(d), _bill(d), "--rate", "EUR=1e308"), "rate"),
    "reconcile --month 2026-13": (
        lambda d: ["reconcile", "--plan", _plan(d), "--month", "2026-13", "--bills", _bill(d), "--out", d / "out"],
        "2026-13"),
    "mix CSV with bytes that are not UTF-8": (
        lambda d: ["mix", "--demand", _demand(d, b"hour,units\n0,1\n1,\xff\xfe\n"), "--options", _options(d)],
        "row 3"),
    "mix CSV with a field over 131,072 characters": (
        lambda d: ["mix", "--demand", _demand(d, b"hour,units\n0," + b"1" * 140_000 + b"\n"),
                   "--options", _options(d)], "field limit"),
    "mix CSV with an unterminated quote": (
        lambda d: ["mix", "--demand", _demand(d, b'hour,units\n0,"1\n1,2\n'), "--options", _options(d)],
        "unexpected end of data"),
    "mix options hourly_cost 1e308": (
        lambda d: ["mix", "--demand", _demand(d), "--options", _options(d, "1e308")], "column hourly_cost"),
    "mix generate --hours 99999999999": (
        lambda d: ["mix", "generate", "--hours", "99999999999", "--peak", "3", "--out", d / "d.csv"], "--hours"),
    "mix generate --out onto a folder": (
        lambda d: ["mix", "generate", "--peak", "3", "--out", d], "folder"),
    "mix generate --peak nan": (
        lambda d: ["mix", "generate", "--peak", "nan", "--out", d / "d.csv"], "--peak"),
    "mix generate --peak inf": (
        lambda d: ["mix", "generate", "--peak", "inf", "--out", d / "d.csv"], "--peak"),
    "tco --gpu-price 1e308": (lambda d: ["tco", "--gpu-price", "1e308", "--no-cloud"], "--gpu-price"),
    "tco --electricity 1e308": (lambda d: ["tco", "--electricity", "1e308", "--no-cloud"], "--electricity"),
    "tco --months 100000000": (lambda d: ["tco", "--months", "100000000", "--no-cloud"], "--months"),
    "tco --start 9999-06": (lambda d: ["tco", "--start", "9999-06", "--no-cloud"], "--start"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_with_one_message_and_writes_nothing(case, tmp_path, capsys):
    build, named = CASES[case]
    argv = build(tmp_path)
    before = snapshot(tmp_path)
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    assert named in err, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [err.splitlines()[0]], err
    assert snapshot(tmp_path) == before, "a failed run wrote or left a file"


def test_a_full_width_month_is_the_same_month(tmp_path, capsys):
    plan, bill = _plan(tmp_path), _bill(tmp_path)
    for month in ("２０２６-０５", "2026-05"):
        code, _, err = run_cli(["reconcile", "--plan", plan, "--month", month, "--bills", bill, "--out",
                                tmp_path / "out", "--quiet"], capsys)
        assert code == 0, err
    import duckdb

    con = duckdb.connect(str(tmp_path / "out" / "reconcile-history.duckdb"), read_only=True)
    assert con.execute("SELECT month FROM months").fetchall() == [("2026-05",)]
    con.close()
    assert sorted(p.name for p in (tmp_path / "out").glob("budget-review-*")) == ["budget-review-2026-05.xlsx"]


def test_json_money_keeps_every_digit(tmp_path, capsys):
    plan = _plan(tmp_path)
    bill = write_bill(tmp_path / "bill.csv", [{"BilledCost": "12345678901234567.91",
                                               "EffectiveCost": "12345678901234567.91"}])
    code, out, err = run_cli(["reconcile", "--plan", plan, "--month", MONTH, "--bills", bill, "--out",
                              tmp_path / "out", "--json"], capsys)
    assert code == 0, err
    assert "12345678901234567.91" in out and "e+16" not in out
    totals = json.loads(out, parse_float=Decimal)
    assert Decimal("12345678901234567.91") in totals.values()


def test_gzip_bill_reads_as_its_csv(tmp_path, capsys):
    plan = _plan(tmp_path)
    bill = _bill(tmp_path)
    with gzip.open(tmp_path / "b.csv.gz", "wb") as handle:
        handle.write(bill.read_bytes())
    code, _, err = run_cli(_reconcile(tmp_path, plan, tmp_path / "b.csv.gz"), capsys)
    assert code == 0, err
