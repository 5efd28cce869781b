"""Three months of hourly bills (March, April, May 2026) with seven commitments, and their figures read back
from the files with ``csv`` and ``Decimal`` (never with the code under test).

Each month is delivered in two CSV files (the first half of the month's hours and the second), as AWS
and Google Cloud deliver long months. Beside the commitments, every hour has on-demand p5 usage
(AmazonEC2, USD), on-demand SageMaker usage (USD) and on-demand Compute Engine usage (EUR), with amounts that
drift from hour to hour; S3 storage is billed once a day (a service no commitment covers); each month has a
tax line and a credit on AmazonEC2 (charges of a committed service that are not usage) and a software
licence bought on the AWS Marketplace (a purchase that is no commitment: a one-off cost).

The commitments (AWS in USD, Google Cloud in EUR; plan currency USD at 1.08 USD per EUR):

* ``ri-up-1``: an AWS reservation of two p5 instances, 1 year all upfront (``x_PurchaseTerm`` ``1yr``), the
  first instance bought 10 March 00:00 and the second 20 March 00:00, 10,950 USD each (1.25 an hour x 8,760
  hours), each purchase on an invoice of its own (as AWS bills upfront fees at once); each instance's hours
  amortize 1.25, every sixth one unused.
* ``sp-up-2``: an AWS SageMaker savings plan bought 15 April 00:00, 3 years all upfront (``3yr``): 1.20 an
  hour x 26,280 hours = 31,536 USD, spread over two instance types (0.80 on ml.p5, 0.40 on ml.g5); every
  fourth hour unused.
* ``cud-fee-3``: a Google Cloud committed use discount named ``ResourceBasedCUD-3yr`` (its purchase rows
  carry no term: the name says 36 months), paid by a monthly fee equal to its amortization (0.90 EUR an hour).
* ``ri-old-4``: an AWS reservation bought before the history began (no purchase row in any month), named
  ``EC2ReservedInstance-3yr-AllUpfront``; 1.75 USD an hour, every fifth hour unused.
* ``cud-old-5``: a Google Cloud commitment bought before the history began, without type or name (no term
  anywhere), 0.40 EUR an hour in March and April, no row in May.
* ``cud-end-6``: a Google Cloud CUD (``x_Plan`` ``TWELVE_MONTH``) whose project was closed at the end of March:
  rows in March only, its March fee 0.50 EUR above its amortization (0.30 EUR an hour).
* ``cud-done-7``: the same with a fee equal to its amortization (0.20 EUR an hour): nothing is left after March.
* ``ri-late-8``: an AWS reservation (``EC2ReservedInstance-1yr-AllUpfront``) covering hours from 25 March,
  1.25 USD an hour, whose purchase row (25 March, 10,950 USD, ``1yr``) comes late, on April's invoice: in
  March it is an estimate, from April bought in the bills.
"""

from __future__ import annotations

import csv
import hashlib
import os
import pickle
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import finops
from finops.reconcile.commitment_schedule import EarlierCommitment

from .conftest import write_bill

#: month -> (its first hour, its hours)
MONTHS: dict[str, tuple[datetime, int]] = {
    "2026-03": (datetime(2026, 3, 1, tzinfo=timezone.utc), 744),
    "2026-04": (datetime(2026, 4, 1, tzinfo=timezone.utc), 720),
    "2026-05": (datetime(2026, 5, 1, tzinfo=timezone.utc), 744),
}
#: Plan currency USD: billing currency -> USD per unit (the rate table a run is given).
RATES: dict[str, Decimal] = {"USD": Decimal(1), "EUR": Decimal("1.08")}
PLAN_CURRENCY = "USD"

_AWS = {"ProviderName": "AWS", "PublisherName": "AWS", "InvoiceIssuerName": "AWS", "InvoiceId": "A-1",
        "BillingCurrency": "USD"}
_GCP = {"ProviderName": "Google Cloud", "PublisherName": "Google Cloud", "InvoiceIssuerName": "Google Cloud",
        "InvoiceId": "G-1", "BillingCurrency": "EUR"}
_P5 = {**_AWS, "ServiceName": "AmazonEC2", "x_InstanceType": "p5.48xlarge"}
_SAGEMAKER = {**_AWS, "ServiceName": "AmazonSageMaker", "x_InstanceType": "ml.p5.48xlarge"}
_A3 = {**_GCP, "ServiceName": "Compute Engine", "x_InstanceType": "a3-highgpu-8g"}


def _at(month: str, day: int) -> datetime:
    return MONTHS[month][0] + timedelta(days=day - 1)


@dataclass(frozen=True)
class Coverage:
    """One instance's hours on a commitment: from ``start`` to ``end`` (exclusive), ``hourly`` amortized each
    hour, every ``unused_every``-th hour (counted from ``start``) unused; ``instance_type`` when it is not the
    commitment's."""

    start: datetime
    end: datetime
    hourly: Decimal
    unused_every: int
    instance_type: str | None = None


@dataclass(frozen=True)
class Purchase:
    """A purchase row: when, BilledCost, ChargeFrequency, SkuPriceDetails, and the month of its invoice (its
    BillingPeriodStart) when that is not the month of ``at``."""

    at: datetime
    billed: Decimal
    frequency: str
    details: str = ""
    invoice_month: str | None = None


@dataclass(frozen=True)
class Commitment:
    cid: str
    fields: dict[str, Any]
    coverage: tuple[Coverage, ...]
    #: one-time purchases (at their hour)
    purchases: tuple[Purchase, ...] = ()
    #: a monthly fee: (fee above the month's amortization, SkuPriceDetails), one row at each month's start
    #: while it covers hours
    fee: tuple[Decimal, str] | None = None


_FOREVER = datetime(2030, 1, 1, tzinfo=timezone.utc)
COMMITMENTS: tuple[Commitment, ...] = (
    Commitment("arn:aws:ec2:us-east-1:111:reservation/ri-up-1",
               {**_P5, "CommitmentDiscountType": "Reserved Instance", "CommitmentDiscountName": "p5-prod"},
               (Coverage(_at("2026-03", 10), _FOREVER, Decimal("1.25"), 6),
                Coverage(_at("2026-03", 20), _FOREVER, Decimal("1.25"), 6)),
               purchases=(Purchase(_at("2026-03", 10), Decimal(10950), "One-Time",
                                   '{"x_PurchaseTerm":"1yr","x_PaymentOption":"All Upfront"}'),
                          Purchase(_at("2026-03", 20), Decimal(10950), "One-Time",
                                   '{"x_PurchaseTerm":"1yr","x_PaymentOption":"All Upfront"}'))),
    Commitment("arn:aws:savingsplans::111:savingsplan/sp-up-2",
               {**_SAGEMAKER, "CommitmentDiscountType": "Savings Plan",
                "CommitmentDiscountName": "SageMakerSavingsPlans"},
               (Coverage(_at("2026-04", 15), _FOREVER, Decimal("0.80"), 4),
                Coverage(_at("2026-04", 15), _FOREVER, Decimal("0.40"), 4, "ml.g5.12xlarge")),
               purchases=(Purchase(_at("2026-04", 15), Decimal(31536), "One-Time",
                                   '{"x_PurchaseTerm":"3yr","x_PaymentOption":"All Upfront"}'),)),
    Commitment("//compute.googleapis.com/projects/p/regions/us-central1/commitments/cud-fee-3",
               {**_A3, "CommitmentDiscountType": "Committed Use Discount",
                "CommitmentDiscountName": "ResourceBasedCUD-3yr"},
               (Coverage(_at("2026-03", 1), _FOREVER, Decimal("0.90"), 7),), fee=(Decimal(0), "")),
    Commitment("arn:aws:ec2:us-east-1:111:reservation/ri-old-4",
               {**_P5, "CommitmentDiscountType": "Reserved Instance",
                "CommitmentDiscountName": "EC2ReservedInstance-3yr-AllUpfront"},
               (Coverage(_at("2026-03", 1), _FOREVER, Decimal("1.75"), 5),)),
    Commitment("//compute.googleapis.com/projects/p/regions/us-central1/commitments/cud-old-5",
               {**_A3, "CommitmentDiscountType": "", "CommitmentDiscountName": ""},
               (Coverage(_at("2026-03", 1), _at("2026-05", 1), Decimal("0.40"), 3),)),
    Commitment("//compute.googleapis.com/projects/q/regions/europe-west4/commitments/cud-end-6",
               {**_A3, "CommitmentDiscountType": "Committed Use Discount", "CommitmentDiscountName": "cud-end"},
               (Coverage(_at("2026-03", 1), _at("2026-04", 1), Decimal("0.30"), 8),),
               fee=(Decimal("0.50"), '{"x_Plan":"TWELVE_MONTH"}')),
    Commitment("//compute.googleapis.com/projects/q/regions/europe-west4/commitments/cud-done-7",
               {**_A3, "CommitmentDiscountType": "Committed Use Discount", "CommitmentDiscountName": "cud-done"},
               (Coverage(_at("2026-03", 1), _at("2026-04", 1), Decimal("0.20"), 9),),
               fee=(Decimal(0), '{"x_Plan":"TWELVE_MONTH"}')),
    Commitment("arn:aws:ec2:us-east-1:111:reservation/ri-late-8",
               {**_P5, "CommitmentDiscountType": "Reserved Instance",
                "CommitmentDiscountName": "EC2ReservedInstance-1yr-AllUpfront"},
               (Coverage(_at("2026-03", 25), _FOREVER, Decimal("1.25"), 10),),
               purchases=(Purchase(_at("2026-03", 25), Decimal(10950), "One-Time", '{"x_PurchaseTerm":"1yr"}',
                                   invoice_month="2026-04"),)),
)


def short(cid: str) -> str:
    """``ri-up-1`` for ``arn:aws:ec2:...:reservation/ri-up-1``."""
    return cid.rsplit("/", 1)[-1]


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _hour(at: datetime) -> dict[str, str]:
    return {"ChargePeriodStart": _stamp(at), "ChargePeriodEnd": _stamp(at + timedelta(hours=1))}


def _purchase_row(c: Commitment, month: str, start: datetime, end: datetime, billed: Decimal, frequency: str,
                  details: str) -> dict[str, Any]:
    """A purchase row on ``month``'s invoice."""
    first, hours = MONTHS[month]
    return {**c.fields, "BillingPeriodStart": _stamp(first), "BillingPeriodEnd": _stamp(first + timedelta(hours=hours)),
            "ChargePeriodStart": _stamp(start), "ChargePeriodEnd": _stamp(end),
            "ChargeCategory": "Purchase", "ChargeFrequency": frequency, "CommitmentDiscountId": c.cid,
            "InvoiceId": f"{c.fields['InvoiceId']}-{start:%m%d}",
            "CommitmentDiscountCategory": "Spend", "PricingCategory": "Standard", "BilledCost": billed,
            "EffectiveCost": 0, "ListCost": billed, "ContractedCost": billed, "SkuPriceDetails": details,
            "ConsumedQuantity": "", "ConsumedUnit": "", "x_InstanceType": ""}


def _hours_rows(month: str) -> Iterator[tuple[datetime, dict[str, Any]]]:
    """Every row of the month with the hour that decides its file."""
    start, hours = MONTHS[month]
    end = start + timedelta(hours=hours)
    for h in range(hours):
        at = start + timedelta(hours=h)
        drift = Decimal(h % 13) / 1000 + Decimal(h % 5) / 100
        yield at, {**_P5, **_hour(at), "ResourceId": "i-od", "BilledCost": Decimal("98.32") + drift,
                   "EffectiveCost": Decimal("98.32") + drift, "ListCost": Decimal("98.32") + drift,
                   "ContractedCost": Decimal("98.32") + drift}
        yield at, {**_SAGEMAKER, **_hour(at), "ResourceId": "ml-od", "BilledCost": Decimal("31.20") - drift,
                   "EffectiveCost": Decimal("31.20") - drift, "ListCost": Decimal("31.20") - drift}
        yield at, {**_A3, **_hour(at), "ResourceId": "vm-od", "BilledCost": Decimal("40.05") + drift,
                   "EffectiveCost": Decimal("40.05") + drift, "ListCost": Decimal("40.05") + drift}
        if h % 24 == 0:
            yield at, {**_AWS, **_hour(at), "ServiceName": "AmazonS3", "ResourceId": "bucket", "ConsumedUnit": "GB-Mo",
                       "BilledCost": Decimal("12.5") + drift, "EffectiveCost": Decimal("12.5") + drift,
                       "ListCost": Decimal("12.5") + drift}
        for c in COMMITMENTS:
            for n, cover in enumerate(c.coverage):
                if not cover.start <= at < cover.end:
                    continue
                covered = int((at - cover.start) / timedelta(hours=1))
                status = "Unused" if covered % cover.unused_every == 0 else "Used"
                yield at, {**c.fields, **_hour(at), "ResourceId": f"{short(c.cid)}-{n}",
                           "x_InstanceType": cover.instance_type or c.fields["x_InstanceType"],
                           "CommitmentDiscountId": c.cid, "CommitmentDiscountStatus": status,
                           "CommitmentDiscountCategory": "Usage", "PricingCategory": "Committed",
                           "BilledCost": 0, "EffectiveCost": cover.hourly, "ContractedCost": cover.hourly,
                           "ListCost": 0 if status == "Unused" else Decimal("3.10") + cover.hourly,
                           "ConsumedQuantity": 0 if status == "Unused" else 1}
    for c in COMMITMENTS:
        for p in c.purchases:
            if (p.invoice_month or p.at.strftime("%Y-%m")) == month:
                yield p.at, _purchase_row(c, month, p.at, p.at + timedelta(hours=1), p.billed, p.frequency, p.details)
        if c.fee is not None:
            covered = sum((min(cover.end, end) - max(cover.start, start)) // timedelta(hours=1) * cover.hourly
                          for cover in c.coverage if cover.start < end and cover.end > start)
            if covered:
                extra, details = c.fee
                yield start, _purchase_row(c, month, start, end, covered + extra, "Recurring", details)
    for kind, amount in (("Tax", Decimal("412.07")), ("Credit", Decimal("-250"))):
        yield end - timedelta(hours=1), {**_P5, **_hour(end - timedelta(hours=1)), "ChargeCategory": kind,
                                         "BilledCost": amount, "EffectiveCost": amount, "ListCost": amount,
                                         "ChargeFrequency": "One-Time", "x_InstanceType": ""}
    licence = Decimal("600.00") + Decimal(hours) / 100
    yield start, {**_AWS, **_hour(start), "ServiceName": "AWS Marketplace", "ChargeCategory": "Purchase",
                  "ChargeFrequency": "Recurring", "ResourceId": "licence", "BilledCost": licence,
                  "EffectiveCost": licence, "ListCost": licence, "ConsumedUnit": ""}


def write_month(folder: Path, month: str) -> list[Path]:
    """The month's bill in two CSV files: charges of its first 15 days, then the rest."""
    start = MONTHS[month][0]
    halves: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for at, row in _hours_rows(month):
        halves[at >= start + timedelta(days=15)].append(row)
    return [write_bill(folder / f"{month}-{part}.csv", rows) for part, rows in zip("ab", halves, strict=True)]


@dataclass
class CsvCommitment:
    """One commitment's month read from the files (USD): paid = BilledCost of its Purchase rows (upfront: of
    its One-Time ones), amortized /
    unused = EffectiveCost of its Used and Unused rows / of its Unused rows, bought = first ChargePeriodStart
    of its Purchase rows."""

    paid: Decimal = Decimal(0)
    upfront: Decimal = Decimal(0)
    amortized: Decimal = Decimal(0)
    unused: Decimal = Decimal(0)
    bought: datetime | None = None


@dataclass
class CsvMonth:
    """The month's figures read from the files with csv and Decimal, in USD: billed / effective (BilledCost /
    EffectiveCost of every row), one_off (EffectiveCost of the Purchase rows), purchases (BilledCost
    of commitment purchases), used / unused (EffectiveCost of Used / Unused rows), savings (ListCost -
    EffectiveCost of Used rows), eligible (EffectiveCost of the Usage rows, not Unused, in the services that
    have Used rows), and per commitment id its :class:`CsvCommitment`."""

    billed: Decimal = Decimal(0)
    effective: Decimal = Decimal(0)
    one_off: Decimal = Decimal(0)
    purchases: Decimal = Decimal(0)
    used: Decimal = Decimal(0)
    unused: Decimal = Decimal(0)
    savings: Decimal = Decimal(0)
    eligible: Decimal = Decimal(0)
    commitments: dict[str, CsvCommitment] = field(default_factory=lambda: defaultdict(CsvCommitment))


def csv_month(paths: list[Path]) -> CsvMonth:
    """:class:`CsvMonth` of the files."""
    rows = []
    for path in paths:
        with path.open(newline="") as handle:
            rows += list(csv.DictReader(handle))
    sums = CsvMonth()
    services = {row["ServiceName"] for row in rows if row["CommitmentDiscountStatus"] == "Used"}
    for row in rows:
        rate = RATES[row["BillingCurrency"]]
        billed, effective = Decimal(row["BilledCost"]) * rate, Decimal(row["EffectiveCost"]) * rate
        status, cid = row["CommitmentDiscountStatus"], row["CommitmentDiscountId"]
        sums.billed += billed
        sums.effective += effective
        if row["ChargeCategory"] == "Purchase":
            sums.one_off += effective
        if row["ChargeCategory"] == "Usage" and row["ServiceName"] in services and status != "Unused":
            sums.eligible += effective
        if not cid:
            continue
        one = sums.commitments[cid]
        if row["ChargeCategory"] == "Purchase":
            sums.purchases += billed
            one.paid += billed
            one.upfront += billed if row["ChargeFrequency"] == "One-Time" else 0
            start = datetime.fromisoformat(row["ChargePeriodStart"])
            one.bought = start if one.bought is None else min(one.bought, start)
        if status in ("Used", "Unused"):
            one.amortized += effective
        if status == "Used":
            sums.used += effective
            sums.savings += Decimal(row["ListCost"]) * rate - effective
        if status == "Unused":
            sums.unused += effective
            one.unused += effective
    return sums


#: short id -> (provider, kind, payment, purchase date, term, end date, {month: source}); a month missing from
#: the sources is one where the commitment is not listed. In a month whose source is ``estimate`` the purchase
#: date is not known and the end is the first month seen + term (:func:`estimated_end`).
STORY: dict[str, tuple[str, str, str, date | None, int | None, date | None, dict[str, str]]] = {
    "ri-up-1": ("AWS", "Reserved Instance", "upfront", date(2026, 3, 10), 12, date(2027, 3, 10),
                {"2026-03": "bills", "2026-04": "history", "2026-05": "history"}),
    "sp-up-2": ("AWS", "Savings Plan", "upfront", date(2026, 4, 15), 36, date(2029, 4, 15),
                {"2026-04": "bills", "2026-05": "history"}),
    "cud-fee-3": ("Google Cloud", "Committed Use Discount", "monthly fee", date(2026, 3, 1), 36, date(2029, 3, 1),
                  {"2026-03": "bills", "2026-04": "history", "2026-05": "history"}),
    "ri-old-4": ("AWS", "Reserved Instance", "upfront", None, 36, date(2029, 3, 1),
                 {"2026-03": "estimate", "2026-04": "estimate", "2026-05": "estimate"}),
    "cud-old-5": ("Google Cloud", "", "upfront", None, None, None, {"2026-03": "", "2026-04": ""}),
    "cud-end-6": ("Google Cloud", "Committed Use Discount", "monthly fee", date(2026, 3, 1), 12, date(2027, 3, 1),
                  {"2026-03": "bills", "2026-04": "history", "2026-05": "history"}),
    "cud-done-7": ("Google Cloud", "Committed Use Discount", "monthly fee", date(2026, 3, 1), 12, date(2027, 3, 1),
                   {"2026-03": "bills"}),
    "ri-late-8": ("AWS", "Reserved Instance", "upfront", date(2026, 3, 25), 12, date(2027, 3, 25),
                  {"2026-03": "estimate", "2026-04": "bills", "2026-05": "history"}),
}
CID = {short(c.cid): c.cid for c in COMMITMENTS}


def estimated_end(first_month: str, term: int) -> date:
    """The 1st of the first month seen + term (every estimated term here is whole years)."""
    return date(int(first_month[:4]) + term // 12, int(first_month[5:]), 1)


def earlier_from_csv(months: dict[str, CsvMonth], month: str) -> dict[str, EarlierCommitment]:
    """What the history keeps of the months before ``month``: sums of the files' paid and amortized, the first
    month seen and its amortization, the story's purchase date, term and payment."""
    kept: dict[str, EarlierCommitment] = {}
    for before in [m for m in MONTHS if m < month]:
        for cid, sums in months[before].commitments.items():
            provider, kind, payment, bought, term, _, sources = STORY[short(cid)]
            old = kept.get(cid)
            bought = (old.purchase_date if old else None) or (None if sources[before] == "estimate" else bought)
            kept[cid] = EarlierCommitment(
                cid, provider, kind, payment, bought, term, (old.paid if old else 0) + sums.paid,
                (old.amortized if old else 0) + sums.amortized, old.first_month if old else before,
                old.first_amortized if old else sums.amortized, (old.upfront if old else 0) + sums.upfront)
    return kept


T = TypeVar("T")
#: What decides what :func:`kept_between_runs` builds: this module, the bill writer, finops and the plan reader.
_SOURCES = (Path(__file__).parent, Path(finops.__file__).parent, Path(finops.__file__).parent.parent / "templates")


#: Where :func:`kept_between_runs` keeps its values: pytest's cache folder of this checkout (git-ignored, the
#: user's own, not the shared system temporary folder a pickle could be planted in).
_KEPT = Path(__file__).resolve().parents[2] / ".pytest_cache" / "finops-kept"


def kept_between_runs(key: str, build: Callable[[Path], T]) -> T:
    """``build(folder)`` (``folder``: a temporary folder for its files), kept as a pickle in :data:`_KEPT` under
    ``key`` and a digest of every source file that could change it (:data:`_SOURCES`). A mutation run runs
    these tests in a new process for each mutant: the bills are written and aggregated once per run (about 4 s
    each time otherwise), and again whenever a source changes. The value is built on the run's first use (for
    mutmut, its clean run), so a mutant of the code that builds it is caught by other tests, not these."""
    digest = hashlib.sha256(key.encode())
    for root in _SOURCES:
        for source in sorted(root.rglob("*.py")):
            digest.update(source.read_bytes())
    _KEPT.mkdir(mode=0o700, parents=True, exist_ok=True)
    kept = _KEPT / f"{key}-{digest.hexdigest()[:24]}.pickle"
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    with tempfile.TemporaryDirectory() as folder:
        value = build(Path(folder))
    partial = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
    partial.write_bytes(pickle.dumps(value))
    os.replace(partial, kept)  # whole or not at all, if two runs build it at once
    return value
