"""CUR 2.0 line items -> FOCUS 1.2 rows: one table of line item -> expected FOCUS figures, and the month's
totals (BilledCost = the CUR's unblended total, EffectiveCost = its amortized total).

The fixture ``data/cur2-2026-05.csv`` is a hand-built CUR 2.0 month (see ``data/README.md``) with
on-demand, spot, an RI (upfront fee, monthly fee with unused hours, covered usage), a Compute Savings Plan
(recurring fee with unused commitment, covered usage and its negations), tax and a credit.
"""

from __future__ import annotations

import csv
from decimal import Decimal

import pytest

from connectors.aws.cur import focus_rows_from_cur
from finops.errors import InputError
from finops.focus import MANDATORY

D = Decimal


@pytest.fixture
def cur_rows(data):
    with (data / "cur2-2026-05.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def focus(cur_rows, gpu_of):
    return focus_rows_from_cur(cur_rows, gpu_of=gpu_of, file="cur2-2026-05.csv")


def _by_description(rows, text, status=None):
    return [r for r in rows if text in r["ChargeDescription"] and r["CommitmentDiscountStatus"] == status]


def test_totals_tie_out_to_unblended_and_amortized(focus, cur_rows):
    # the invoice: every line item's unblended cost, negations included, summed from the CSV text
    invoice = sum(D(r["line_item_unblended_cost"]) for r in cur_rows)
    assert sum(r["BilledCost"] for r in focus) == invoice == D("92631.11")
    # amortized, net basis (the export has the net columns): on-demand net 495.36 (550.40 less the 10 % EDP,
    # whose own line is then 0) + spot 1.75 + RI used 2 x 350 h x 15/h (10/h upfront 87,600 / 8,760 h + 5/h
    # recurring) + RI unused 44 h x 15 + SP used 424 + 250 + SP unused 744 - 674 + tax 120 - credit 50
    assert sum(r["EffectiveCost"] for r in focus) == D("495.36") + D("1.75") + 700 * 15 + 44 * 15 + 674 + 70 + 120 - 50
    assert len(focus) == 14  # 14 line items - 2 negations + 2 unused-commitment rows


def test_every_mandatory_column_is_filled(focus):
    for row in focus:  # FOCUS 1.2: ChargeClass is null unless the row corrects an earlier period; a Tax row has
        # no PricingQuantity (PricingQuantity-C-004) and so no PricingUnit (PricingUnit-C-005)
        may_be_null = {"ChargeClass"} | ({"PricingQuantity", "PricingUnit"} if row["ChargeCategory"] == "Tax" else set())
        missing = [c for c in MANDATORY if row[c] is None and c not in may_be_null]
        assert missing == [], (row["ChargeDescription"], missing)


@pytest.mark.parametrize("text, status, expected", [
    ("On Demand Linux p5.48xlarge", None,
     {"ChargeCategory": "Usage", "BilledCost": D("550.4"), "EffectiveCost": D("495.36"), "PricingCategory": "Standard",
          "x_InstanceType": "p5.48xlarge", "x_GpuModel": "h100-sxm", "x_GpuCount": 8, "x_GpuHours": D("80"),
          "x_PurchaseOption": "on_demand", "PricingUnit": "Hours", "RegionId": "us-east-1"}),
    ("g6.xlarge spot", None,
     {"ChargeCategory": "Usage", "BilledCost": D("1.75"), "EffectiveCost": D("1.75"), "PricingCategory": "Dynamic",
          "x_PurchaseOption": "spot", "x_GpuHours": D("5"), "ListCost": D("4.024")}),
    ("Sign up charge", None,
     {"ChargeCategory": "Purchase", "ChargeFrequency": "One-Time", "BilledCost": D("87600"), "EffectiveCost": D("0"),
          "CommitmentDiscountType": "Reserved Instance", "x_PurchaseOption": "reserved_1y", "x_GpuHours": None}),
    ("hourly fee per Linux/UNIX (Amazon VPC), p4d.24xlarge instance", None,
     {"ChargeCategory": "Purchase", "ChargeFrequency": "Recurring", "BilledCost": D("3720"), "EffectiveCost": D("0")}),
    ("Unused Reserved Instance", "Unused",
     {"ChargeCategory": "Usage", "BilledCost": D("0"), "EffectiveCost": D("660"), "PricingQuantity": D("44"),
          "CommitmentDiscountCategory": "Usage", "x_GpuHours": None}),
    ("USD 0.0 hourly fee", "Used",
     {"ChargeCategory": "Usage", "BilledCost": D("0"), "EffectiveCost": D("5250"), "ListCost": D("7686"),
          "ContractedCost": D("7686"), "PricingCategory": "Committed", "x_PurchaseOption": "reserved_1y",
          "x_GpuModel": "a100-40gb", "x_GpuHours": D("2800"),
          "CommitmentDiscountId": "arn:aws:ec2:us-east-1:222222222222:reserved-instances/4b2a1c3d-ri-p4d"}),
    ("No Upfront Compute Savings Plan", None,
     {"ChargeCategory": "Purchase", "ChargeFrequency": "Recurring", "BilledCost": D("744"), "EffectiveCost": D("0"),
          "CommitmentDiscountCategory": "Spend", "x_PurchaseOption": "savings_plan_1y"}),
    ("Unused Savings Plan", "Unused", {"BilledCost": D("0"), "EffectiveCost": D("70")}),
    ("Compute Savings Plan covered g6e", "Used",
     {"BilledCost": D("0"), "CommitmentDiscountType": "Savings Plan", "x_PurchaseOption": "savings_plan_1y",
          "x_GpuModel": "l40s", "RegionId": "us-east-2"}),
    ("Tax for product", None, {"ChargeCategory": "Tax", "BilledCost": D("120"), "EffectiveCost": D("120"),
                                   "PricingCategory": None, "x_PurchaseOption": None}),
    ("Activate credit", None, {"ChargeCategory": "Credit", "BilledCost": D("-50"), "EffectiveCost": D("-50")}),
    ("Enterprise Discount Program", None, {"ChargeCategory": "Credit", "BilledCost": D("-55.04"), "EffectiveCost": D("0")}),
])
def test_line_item_to_focus(focus, text, status, expected):
    rows = _by_description(focus, text, status)
    assert rows, f"no FOCUS row for {text!r}"
    for row in rows:
        assert {k: row[k] for k in expected} == expected


def test_negations_are_dropped_and_tags_kept(focus):
    assert not [r for r in focus if "Negation" in r["ChargeDescription"]]
    on_demand, = _by_description(focus, "On Demand Linux p5.48xlarge")
    assert on_demand["Tags"] == '{"user_cost_center": "cc-42", "user_team": "llm-serving"}'
    assert on_demand["ChargePeriodStart"].isoformat() == "2026-05-01T00:00:00"


def test_unknown_line_item_type_names_file_and_row(cur_rows, gpu_of):
    cur_rows[2]["line_item_line_item_type"] = "MysteryFee"
    with pytest.raises(InputError) as info:
        focus_rows_from_cur(cur_rows, gpu_of=gpu_of, file="cur.csv")
    assert "cur.csv, row 3, column line_item_line_item_type" in str(info.value)
    assert "MysteryFee" in str(info.value)
