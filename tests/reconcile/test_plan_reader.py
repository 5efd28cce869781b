"""Reading the plan workbook: the template's tables, located errors, hostile files refused fast."""

from __future__ import annotations

import time
import zipfile
from datetime import date
from decimal import Decimal

import openpyxl
import pytest

from finops.errors import InputError
from templates import demo_plan, plan_reader
from templates.plan_reader import read_plan

from .conftest import write_plan

BILLION_LAUGHS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>&lol9;</t></si></sst>
"""


def test_reads_the_template_built_by_the_workbook_face(template_plan):
    plan = read_plan(template_plan)
    assert len(plan.budget) == len(demo_plan.BUDGET)
    assert len(plan.assets) == len(demo_plan.ASSETS)
    assert len(plan.mapping) == len(demo_plan.MAPPING)
    assert len(plan.usage) == len(demo_plan.USAGE)
    first = plan.budget[0]
    assert (first.month, first.plan_line, first.category, first.amount.amount, first.amount.currency,
            first.planned_mtokens) == ("2026-05", "aws-inference-prod", "OPEX", Decimal(demo_plan.BUDGET[0][5]), "USD",
                                       Decimal(1200))
    l40s = plan.assets[2]
    assert (l40s.purchase_date, l40s.in_service_date, l40s.life_months) == (date(2026, 4, 20), date(2026, 5, 4), 48)
    assert plan.assets[0].in_service_date == plan.assets[0].purchase_date  # blank = purchase date
    rule = plan.mapping[0]
    assert (rule.rule, rule.sub_account, rule.instance_type, rule.tag_key) == (1, "prod-platform", None, None)


def test_month_typed_as_a_date_and_numbers_typed_as_text_are_normalized(tmp_path):
    path = write_plan(tmp_path / "p.xlsx", budget=[(date(2026, 5, 1), "gpu", "cc", "opex", "AWS", "1,250.50", "usd",
                                                    None)])
    line = read_plan(path).budget[0]
    assert (line.month, line.category, line.amount.amount, line.amount.currency) == (
        "2026-05", "OPEX", Decimal("1250.50"), "USD")


def test_missing_table_and_missing_column(tmp_path):
    book = openpyxl.Workbook()
    book.save(tmp_path / "empty.xlsx")
    with pytest.raises(InputError, match="table tblBudget not found"):
        read_plan(tmp_path / "empty.xlsx")
    path = write_plan(tmp_path / "p.xlsx", budget=[("2026-05", "gpu", "cc", "OPEX", "AWS", 1, "USD", None)])
    book = openpyxl.load_workbook(path)
    book["Budget"]["F2"] = "Amt"
    book.save(path)
    with pytest.raises(InputError) as err:
        read_plan(path)
    assert "no column Amount" in str(err.value) and err.value.where.sheet == "Budget"


def _rewrite(src, dst, part, content):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item, content if item.filename == part else zin.read(item.filename))


def test_xml_bomb_is_rejected_quickly(tmp_path, template_plan):
    bomb = tmp_path / "bomb.xlsx"
    _rewrite(template_plan, bomb, "xl/sharedStrings.xml", BILLION_LAUGHS)
    start = time.perf_counter()
    with pytest.raises(InputError, match="declares a DTD or XML entities"):
        read_plan(bomb)
    assert time.perf_counter() - start < 2.0


def test_oversized_part_is_rejected_before_parsing(template_plan, monkeypatch):
    monkeypatch.setattr(plan_reader, "MAX_PART_BYTES", 10_000)
    with pytest.raises(InputError, match="inflates to"):
        read_plan(template_plan)


def test_not_a_workbook(tmp_path):
    fake = tmp_path / "plan.xlsx"
    fake.write_text("Month,PlanLine\n")
    with pytest.raises(InputError, match="not an Excel workbook"):
        read_plan(fake)


def test_the_plan_is_never_modified(simple_plan):
    plan = simple_plan
    before = plan.read_bytes(), plan.stat().st_mtime_ns
    read_plan(plan)
    assert (plan.read_bytes(), plan.stat().st_mtime_ns) == before
