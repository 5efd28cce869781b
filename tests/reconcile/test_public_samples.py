"""The FinOps Foundation's anonymized FOCUS 1.0 AWS sample (an excerpt, literal ``NULL`` cells kept) read and
reconciled: its version is recognized and every total equals DuckDB's, run directly on the file.

Fixture: ``tests/aws/data/focus-1.0-sample-aws-excerpt.csv``, see ``tests/aws/data/README.md`` and SOURCES.md.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from finops.money import Money
from finops.reconcile import reconcile_month
from finops.reconcile.bills import focus_version, open_bills
from finops.reconcile.plan import BudgetLine, MappingRule, Plan

SAMPLE = Path(__file__).parents[1] / "aws" / "data" / "focus-1.0-sample-aws-excerpt.csv"


def _direct(expression: str, where: str = "TRUE") -> Decimal:
    """``expression`` summed by DuckDB straight from the CSV text (NULL cells as NULL), not through our reader."""
    with duckdb.connect() as con:
        (value,) = con.execute(
            f"SELECT {expression} FROM read_csv(?, all_varchar = true, nullstr = 'NULL') "
            f"WHERE BillingPeriodStart LIKE '2024-09-01%' AND {where}", [str(SAMPLE)]).fetchone()
    return Decimal(value or 0)


@pytest.fixture
def rec():
    plan = Plan(budget=(BudgetLine("2024-09", "AWS", "cc", "OPEX", "aws", Money.of(100, "USD")),),
                mapping=(MappingRule(1, "AWS", provider_name="AWS"),))
    return reconcile_month(plan, [SAMPLE], "2024-09")


def test_the_sample_is_read_as_focus_1_0():
    with duckdb.connect() as con:
        (bill,) = open_bills(con, [SAMPLE])
        assert focus_version(bill.path, bill.columns) == "1.0"
        # the literal NULL cells read as NULL, not as the text 'NULL'
        assert con.execute("SELECT count(*) FROM focus_bills WHERE ChargeClass IS NOT NULL "
                           "OR CommitmentDiscountId = 'NULL'").fetchone()[0] == 0


def test_totals_to_the_cent_against_duckdb_on_the_file(rec):
    billed = _direct("SUM(CAST(BilledCost AS DECIMAL(38, 10)))")
    effective = _direct("SUM(CAST(EffectiveCost AS DECIMAL(38, 10)))")
    assert rec.billed_cost.amount == billed and rec.effective_cost.amount == effective
    assert rec.billed_cost.rounded().amount == billed.quantize(Decimal("0.01"))
    assert rec.bill_rows == _direct("COUNT(*)") == 64
    used = _direct("SUM(CAST(EffectiveCost AS DECIMAL(38, 10)))", "CommitmentDiscountStatus = 'Used'")
    assert rec.commitments.used.amount == used
    invoices = {i.invoice_id: i.billed_cost.amount for i in rec.invoices}
    assert invoices == {"": billed}  # FOCUS 1.0 has no InvoiceId column
