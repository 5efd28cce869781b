"""A month is its invoices: two adjacent months pulled from AWS and GCP exports and reconciled tie out to their
invoices, and nothing falls between them, even a charge whose usage starts in the month before its invoice.

The exports are built here (GCP detailed export rows as JSONL, AWS CUR 2.0 line items); each invoice's
total is summed from those raw rows (cost + credits; unblended cost), outside the code under test.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.aws.cur import focus_rows_from_cur
from connectors.focus_table import write_focus_parquet
from connectors.gcp.bills import pull_bills
from finops.money import Money
from finops.reconcile import reconcile_month
from finops.reconcile.plan import BudgetLine, MappingRule, Plan

D = Decimal
MONTHS = ("2026-04", "2026-05")


def _gcp_row(invoice_month: str, start: str, cost: str, credit: str | None = None) -> dict:
    credits = [{"type": "SUSTAINED_USAGE_DISCOUNT", "amount": float(credit), "name": "Sustained usage discount",
                "id": "", "full_name": ""}] if credit else []
    return {"billing_account_id": "01A2B3-C4D5E6-F70819", "cost": float(cost), "currency": "USD",
            "cost_type": "regular", "invoice": {"month": invoice_month}, "usage_start_time": start,
            "usage_end_time": start, "service": {"description": "Compute Engine"},
            "sku": {"description": "Nvidia L4 GPU running in Americas", "id": "L4"},
            "location": {"location": "us-central1", "region": "us-central1"},
            "usage": {"amount_in_pricing_units": 1.0, "pricing_unit": "hour"}, "credits": credits}


GCP_ROWS = [
    _gcp_row("202604", "2026-04-02 05:00:00 UTC", "120.50", "-12.05"),
    _gcp_row("202604", "2026-04-29 10:00:00 UTC", "80.25"),
    # usage from 30 April 23:00 UTC, invoiced in May: by usage month it is April's, but April's pull lacks it
    _gcp_row("202605", "2026-04-30 23:00:00 UTC", "33.33", "-3.33"),
    _gcp_row("202605", "2026-05-01 00:00:00 UTC", "200.00", "-20.00"),
    _gcp_row("202605", "2026-05-31 23:00:00 UTC", "15.10"),
]


def _cur(month: str, start: str, cost: str, invoice: str) -> dict:
    return {"line_item_line_item_type": "Usage", "line_item_unblended_cost": cost,
            "line_item_usage_start_date": start, "line_item_usage_end_date": start, "bill_invoice_id": invoice,
            "bill_billing_period_start_date": f"{month}-01T00:00:00Z", "line_item_product_code": "AmazonEC2",
            "line_item_usage_type": "BoxUsage:p5.48xlarge", "line_item_line_item_description": "p5 hour",
            "line_item_currency_code": "USD"}


AWS_ROWS = {
    "2026-04": [_cur("2026-04", "2026-04-10T00:00:00Z", "550.40", "INV-APR"),
                _cur("2026-04", "2026-04-30T23:00:00Z", "55.04", "INV-APR")],
    # a late charge: May's invoice, April usage
    "2026-05": [_cur("2026-05", "2026-04-30T22:00:00Z", "10.01", "INV-MAY"),
                _cur("2026-05", "2026-05-15T00:00:00Z", "1100.80", "INV-MAY")],
}


def _gcp_invoice(month: str) -> Decimal:
    key = month.replace("-", "")
    return sum((D(str(r["cost"])) + sum((D(str(c["amount"])) for c in r["credits"]), D(0))
                for r in GCP_ROWS if r["invoice"]["month"] == key), D(0))


def _aws_invoice(month: str) -> Decimal:
    return sum((D(r["line_item_unblended_cost"]) for r in AWS_ROWS[month]), D(0))


@pytest.fixture
def pulled(tmp_path: Path) -> dict[str, list[Path]]:
    export = tmp_path / "gcp-export.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in GCP_ROWS))
    files = {}
    for month in MONTHS:
        gcp = pull_bills(str(export), month, tmp_path / f"gcp-{month}.parquet")
        aws = write_focus_parquet(focus_rows_from_cur(AWS_ROWS[month], gpu_of=lambda t: ("h100-sxm", 8)),
                                  tmp_path / f"aws-{month}.parquet")
        files[month] = [aws, gcp]
    return files


def _plan() -> Plan:
    return Plan(budget=tuple(BudgetLine(m, "Cloud", "cc", "OPEX", "cloud", Money.of(1000, "USD")) for m in MONTHS),
                mapping=(MappingRule(1, "Cloud", provider_name="AWS"), MappingRule(2, "Cloud", provider_name="Google Cloud")))


def test_two_adjacent_months_tie_out_to_their_invoices(pulled):
    total = D(0)
    for month in MONTHS:
        rec = reconcile_month(_plan(), pulled[month], month)
        invoices = {(i.provider_name, i.invoice_id): i.billed_cost.amount for i in rec.invoices}
        assert invoices == {("AWS", f"INV-{'APR' if month == '2026-04' else 'MAY'}"): _aws_invoice(month),
                            ("Google Cloud", month.replace("-", "")): _gcp_invoice(month)}
        assert rec.billed_cost.amount == _aws_invoice(month) + _gcp_invoice(month)
        total += rec.billed_cost.amount
    everything = sum((D(str(r["cost"])) + sum((D(str(c["amount"])) for c in r["credits"]), D(0)) for r in GCP_ROWS),
                     D(0)) + sum((_aws_invoice(m) for m in MONTHS), D(0))
    assert total == everything  # nothing falls between the two months


def test_usage_month_accrual_is_an_option_and_shows_why_it_is_not_the_default(pulled):
    # by usage month, the charges of May's invoices that ran in April belong to April, whose pull lacks them
    edge = D("33.33") - D("3.33") + D("10.01")
    april = reconcile_month(_plan(), pulled["2026-04"], "2026-04", basis="usage")
    may = reconcile_month(_plan(), pulled["2026-05"], "2026-05", basis="usage")
    invoiced = sum((_aws_invoice(m) + _gcp_invoice(m) for m in MONTHS), D(0))
    assert april.billed_cost.amount + may.billed_cost.amount == invoiced - edge
    # with both months' files, usage-month accrual puts the edge charges in April
    both = pulled["2026-04"] + pulled["2026-05"]
    assert reconcile_month(_plan(), both, "2026-04", basis="usage").billed_cost.amount == \
        _aws_invoice("2026-04") + _gcp_invoice("2026-04") + edge


def test_the_cli_takes_the_basis(pulled, tmp_path, capsys, simple_plan):
    from finops.cli import main

    args = ["reconcile", "--plan", str(simple_plan), "--month", "2026-05", "--out", str(tmp_path / "o"), "--json"]
    files = [str(p) for p in pulled["2026-05"]]
    assert main([*args, "--bills", *files]) in (0, 1)
    invoice_basis = json.loads(capsys.readouterr().out)
    assert main([*args, "--basis", "usage", "--bills", *files]) in (0, 1)
    usage_basis = json.loads(capsys.readouterr().out)
    edge = D("33.33") - D("3.33") + D("10.01")
    assert D(str(invoice_basis["actual_billed_cost"])) - D(str(usage_basis["actual_billed_cost"])) == edge
    assert main([*args, "--basis", "accrual", "--bills", *files]) == 2
    assert "--basis must be invoice or usage" in capsys.readouterr().err
