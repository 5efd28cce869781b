"""The fixed cost of a run, the part that does not grow with the bill (docs/reconcile.md, Speed; docs/results.md).

The history is read and recorded in one DuckDB database per run, attached for each call and free between
calls; the comments of the review a re-run replaces are read in openpyxl's read-only mode; the review's parts
are assembled in memory and are the same parts XlsxWriter writes through temporary files."""

from __future__ import annotations

import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import openpyxl
import xlsxwriter
import xlsxwriter.packager

import templates.review_writer
from finops.cli.reconcile import reconcile_to_workbook
from finops.reconcile.history import HISTORY_FILE, History
from finops.reconcile.sample_bills import SAMPLE_MONTH, sample_bill_paths
from templates.review.comments import comments_in_review
from templates.review_writer import write_review

from .test_review_comments import type_comments

RUN_AT = datetime(2026, 6, 2, 7, 30, 0)


def _connects(monkeypatch) -> list[tuple[Any, ...]]:
    """Every ``duckdb.connect`` from now on (its arguments), each still connecting."""
    calls: list[tuple[Any, ...]] = []
    connect = duckdb.connect

    def counted(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        calls.append(args)
        return connect(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", counted)
    return calls


def test_a_rerun_starts_one_duckdb_for_its_history_and_one_for_its_scan(template_plan, tmp_path, monkeypatch):
    """A re-run reads its history four times (months and commitments for the forecast, comments, the trend),
    then checks and records it: all of it in one database, not one per read (each costs about 11 ms to start)."""
    out = tmp_path / "out"
    first, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    calls = _connects(monkeypatch)
    again, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    assert calls == [(), ()]  # the scan's in-memory database and the history's, nothing opened by path
    assert again.totals() == first.totals()
    assert [m.month for m in History(out / HISTORY_FILE).months()] == [SAMPLE_MONTH]


def test_the_history_file_is_free_between_calls_and_recorded_whole(template_plan, tmp_path):
    out = tmp_path / "out"
    rec, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    path = out / HISTORY_FILE
    history = History(path)
    assert [m.month for m in history.months()] == [SAMPLE_MONTH]
    writer = duckdb.connect(str(path))  # would fail on the file's lock while the History still held it
    try:
        writer.execute("UPDATE months SET planned = planned + 1")
    finally:
        writer.close()
    assert history.months()[0].planned == rec.planned.amount + 1  # read again from the file, not kept
    history.record(rec, RUN_AT)
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".reconcile-history.duckdb")) == []
    reader = duckdb.connect(str(path), read_only=True)  # detached means written out: no WAL left to replay
    try:
        assert reader.execute("SELECT planned FROM months").fetchall() == [(rec.planned.amount,)]
    finally:
        reader.close()
    assert not Path(f"{path}.wal").exists()


def test_the_comments_of_the_review_replaced_are_read_in_read_only_mode(template_plan, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _, review = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    lines = History(out / HISTORY_FILE).months()[0].lines
    first = sorted(lines)[0]
    type_comments(review, {first: "  checked with finance  "})
    opened: list[dict[str, Any]] = []
    load = openpyxl.load_workbook

    def recorded(*args: Any, **kwargs: Any) -> Any:
        opened.append(kwargs)
        return load(*args, **kwargs)

    monkeypatch.setattr(openpyxl, "load_workbook", recorded)
    comments = comments_in_review(review)
    assert comments[first] == "checked with finance"
    assert set(comments) == set(lines)
    assert [text for line, text in comments.items() if line != first] == [""] * (len(lines) - 1)
    assert opened == [{"read_only": True}]


def test_the_review_parts_made_in_memory_are_those_written_through_files(template_plan, tmp_path, monkeypatch):
    rec, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, tmp_path / "out", run_at=RUN_AT)

    def no_temporary_files(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the review's parts went through a temporary file")

    with monkeypatch.context() as patched:
        patched.setattr(xlsxwriter.packager.tempfile, "mkstemp", no_temporary_files)
        in_memory = write_review(rec, tmp_path / "memory", run_at=RUN_AT, plan_name="plan.xlsx")
    workbook = xlsxwriter.Workbook
    monkeypatch.setattr(templates.review_writer.xlsxwriter, "Workbook",
                        lambda path, options: workbook(path, {**options, "in_memory": False}))
    on_disk = write_review(rec, tmp_path / "disk", run_at=RUN_AT, plan_name="plan.xlsx")
    with zipfile.ZipFile(in_memory) as memory, zipfile.ZipFile(on_disk) as disk:
        assert memory.namelist() == disk.namelist() and len(memory.namelist()) > 10
        assert [name for name in memory.namelist() if memory.read(name) != disk.read(name)] == []


def test_a_history_in_a_folder_whose_name_holds_a_quote(template_plan, tmp_path):
    """The file is attached by its path written into the ATTACH statement: a quote in it is escaped."""
    out = tmp_path / "finance's reviews"
    rec, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    again, _ = reconcile_to_workbook(template_plan, sample_bill_paths(), SAMPLE_MONTH, out, run_at=RUN_AT)
    assert [(m.month, m.planned) for m in History(out / HISTORY_FILE).months()] == [(SAMPLE_MONTH, rec.planned.amount)]
    assert again.totals() == rec.totals()
