"""FOCUS rows as Python records, their cell conversions, and the atomic Parquet writer (every connector's).

A FOCUS record is a ``dict`` over :data:`NAMES` (the FOCUS 1.2 columns of :mod:`finops.focus`, then the
``x_`` GPU columns): text as ``str``, money and quantities as exact :class:`~decimal.Decimal`, periods as
naive UTC :class:`~datetime.datetime`, ``x_GpuCount`` as ``int``, unknown as ``None``.

>>> timestamp("2026-05-01T01:00:00Z"), timestamp("2026-05-03 10:00:00 UTC"), decimal_or_none(0.1), decimal_or_none("")
(datetime.datetime(2026, 5, 1, 1, 0), datetime.datetime(2026, 5, 3, 10, 0), Decimal('0.1'), None)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Self

from finops.errors import InputError, Location
from finops.files import replacing
from finops.focus import COLUMNS, GPU_COLUMNS, SUCCESSORS, outside_vocabulary
from finops.money import MONEY_CONTEXT, to_decimal
from finops.outputs import check_replaceable

__all__ = [
    "KINDS",
    "NAMES",
    "FocusParquetWriter",
    "cell",
    "conform",
    "decimal_or_none",
    "export_value",
    "focus_unit",
    "gpu_columns",
    "json_text",
    "record",
    "service_subcategory",
    "timestamp",
    "unreadable_cell",
    "write_focus_parquet",
]

NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS + GPU_COLUMNS)
KINDS: dict[str, str] = {c.name: c.kind for c in COLUMNS + GPU_COLUMNS}
_SCALE = Decimal("1e-10")  # DECIMAL(38, 10), as finops.focus declares money


def timestamp(value: Any) -> datetime | None:
    """A naive UTC datetime from ISO text (``Z``, an offset or BigQuery's `` UTC`` suffix allowed) or a datetime;
    ``None`` if empty."""
    if value is None or value == "":
        return None
    parsed = value if isinstance(value, datetime) else _parse_iso(str(value).strip())
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


@lru_cache(maxsize=65536)
def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.removesuffix(" UTC"))  # bills repeat the same few hours: parse each once


def decimal_or_none(value: Any) -> Decimal | None:
    """An exact decimal from a number or numeric text; ``None`` for an empty cell.

    Bill exports write plain decimals, so text with a comma (``12,5``: a decimal comma or a thousands
    separator, which cannot be told apart) is refused rather than read as 125."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and "," in value:
        raise InputError(f"{value!r} has a comma; bill exports write plain decimals such as 12.5")
    return to_decimal(value)


def json_text(value: Any) -> str | None:
    """A FOCUS JSON cell (``Tags``, ``SkuPriceDetails``) as text: JSON text as is; a mapping, a list of
    ``(key, value)`` pairs (an Arrow map) or of ``{key, value}`` records (a BigQuery label list) as one JSON
    object with sorted keys; ``None`` when empty.

    >>> json_text([("team", "llm")]), json_text([{"key": "env", "value": "prod"}]), json_text([])
    ('{"team": "llm"}', '{"env": "prod"}', None)
    """
    if value is None or value == "" or (not isinstance(value, str) and len(value) == 0):
        return None
    if isinstance(value, str):
        return value
    pairs = value.items() if isinstance(value, Mapping) else (
        (item["key"], item.get("value")) if isinstance(item, Mapping) else item for item in value)
    return json.dumps({str(k): v for k, v in pairs}, sort_keys=True, default=str)


def cell(name: str, value: Any) -> Any:
    """A FOCUS export cell typed by its column's kind (text, decimal, timestamp, JSON, integer); a column of a closed
    FOCUS vocabulary holds one of its values (:func:`outside_vocabulary`).

    >>> cell("BilledCost", "1.50"), cell("ChargePeriodStart", "2026-05-01T00:00:00Z"), cell("RegionId", "")
    (Decimal('1.50'), datetime.datetime(2026, 5, 1, 0, 0), None)
    """
    typed = _typed(KINDS[name], value)
    problem = outside_vocabulary(name, typed)
    if problem is not None:
        raise problem
    return typed


def export_value(raw: Mapping[str, Any], name: str) -> Any:
    """The value of FOCUS 1.2 column ``name`` in a provider's FOCUS export row of any version 1.0 to 1.4: the column
    itself, else the first non-empty column that succeeds it (:data:`finops.focus.SUCCESSORS`: a 1.4 export has
    ``ServiceProviderName`` where 1.2 had ``ProviderName``). ``Tags`` carry a 1.3 ``AllocatedTags`` laid over them
    (the split share of a shared cost keeps the origin charge's tags and adds its workload's).

    >>> export_value({"ServiceProviderName": "AWS"}, "ProviderName")
    'AWS'
    >>> export_value({"Tags": '{"env": "prod"}', "AllocatedTags": '{"team": "a"}'}, "Tags")
    '{"env": "prod", "team": "a"}'
    """
    for column in SUCCESSORS.get(name, (name,)):
        value = raw.get(column)
        if value not in (None, ""):
            break
    else:
        value = None
    allocated = raw.get("AllocatedTags") if name == "Tags" else None
    if allocated in (None, "", "{}", {}):
        return value
    merged = {**_json_object(value), **_json_object(allocated)}
    return json.dumps(merged, sort_keys=True)


def _json_object(value: Any) -> dict[str, Any]:
    """Tags in any form :func:`json_text` reads (JSON text, a mapping, an Arrow map, a BigQuery label list)."""
    text = json_text(value)
    parsed = json.loads(text) if text else {}
    if not isinstance(parsed, dict):
        raise InputError(f"{text[:60]!r} is not a JSON object of tags", hint="FOCUS Tags are a JSON object")
    return parsed


def _typed(kind: str, value: Any) -> Any:
    if kind == "decimal":
        return decimal_or_none(value)
    if kind == "timestamp":
        return timestamp(value)
    if kind == "json":
        return json_text(value)
    if kind == "integer":
        return None if value in (None, "") else int(value)
    return None if value in (None, "") else str(value)


_KIND_WORDS = {"decimal": "a plain decimal number such as 12.5", "timestamp": "an ISO 8601 date-time",
               "json": "a JSON object", "integer": "a whole number", "string": "text"}


def unreadable_cell(values: Mapping[str, Any], kinds: Mapping[str, str], *, file: str | None = None,
                    row: int | None = None) -> InputError | None:
    """The error naming the first cell of ``values`` (an export row) that does not read as its kind in
    ``kinds`` (column -> ``decimal`` / ``timestamp`` / ``json`` / ``integer`` / ``string``), or ``None``.

    Mappers call it only after a row failed, so the happy path converts each cell once.

    >>> str(unreadable_cell({"cost": "1.5", "start": "yesterday"}, {"cost": "decimal", "start": "timestamp"},
    ...                     file="part-1.csv.gz", row=4))
    "part-1.csv.gz, row 4, column start: 'yesterday' is not an ISO 8601 date-time. Hint: fix the cell or export the file again"
    """
    for column, kind in kinds.items():
        value = values.get(column)
        try:
            problem = outside_vocabulary(column, _typed(kind, value))
        except (ValueError, TypeError, InputError):
            return InputError(f"{value!r} is not {_KIND_WORDS[kind]}", where=Location(file=file, row=row, column=column),
                              hint="fix the cell or export the file again")
        if problem is not None:
            return InputError(problem.message, where=Location(file=file, row=row, column=column), hint=problem.hint)
    return None


#: The amounts a FOCUS row cannot do without (FOCUS requires both on every row, 0 for none).
REQUIRED_AMOUNTS = ("BilledCost", "EffectiveCost")


def currency_code(value: Any, column: str) -> str:
    """A row's billing currency (``column``) as its ISO 4217 code, upper case: every bill row is billed in one, so
    an empty one (or a word, a sign) is refused naming the column, not written as a charge in no currency.

    >>> currency_code("usd", "BillingCurrency")
    'USD'
    >>> currency_code("", "BillingCurrency")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: column BillingCurrency: BillingCurrency must be a 3-letter ISO 4217 code, got ''. Hint: every row of a bill carries its currency, e.g. USD; export the month again
    """
    given = str(value or "")
    code = given.strip().upper()
    if len(code) != 3 or not code.isalpha():
        raise InputError(f"{column} must be a 3-letter ISO 4217 code, got {given[:40]!r}", where=Location(column=column),
                         hint="every row of a bill carries its currency, e.g. USD; export the month again")
    return code


def with_money_checked(row: dict[str, Any]) -> dict[str, Any]:
    """A FOCUS export row (typed cells) with its amounts present and its currency a code (:func:`currency_code`);
    an empty amount is refused naming its column, never read as 0."""
    for name in REQUIRED_AMOUNTS:
        if row.get(name) is None:
            raise InputError(f"{name} is empty", where=Location(column=name),
                             hint="FOCUS requires an amount on every row (0 for none); export the month again")
    row["BillingCurrency"] = currency_code(row.get("BillingCurrency"), "BillingCurrency")
    return row


def record(**values: Any) -> dict[str, Any]:
    """A FOCUS record with every column, ``None`` where not given."""
    unknown = set(values) - set(NAMES)
    if unknown:
        raise KeyError(f"not FOCUS columns: {sorted(unknown)}")
    return {name: values.get(name) for name in NAMES}


#: Provider unit text -> FOCUS 1.2 Unit Format ("Hours", "GiB-Hours", "B-Seconds"; Appendix "Unit Format").
#: CUR's ``pricing_unit`` and the GCP export's ``usage.unit`` / ``usage.pricing_unit``; unlisted units are kept.
FOCUS_UNITS: dict[str, str] = {
    "Hrs": "Hours", "Hour": "Hours", "hour": "Hours", "hours": "Hours", "h": "Hours", "seconds": "Seconds",
    "second": "Seconds", "byte-seconds": "B-Seconds", "gibibyte hour": "GiB-Hours", "gibibyte month": "GiB-Months",
    "gibibyte": "GiB", "GB-Mo": "GB-Months", "GB-month": "GB-Months", "requests": "Requests", "count": "Count",
    "Quantity": "Quantity", "month": "Months",
}


def focus_unit(unit: str | None) -> str | None:
    """A unit in FOCUS Unit Format (:data:`FOCUS_UNITS`); ``None`` for no unit.

    >>> focus_unit("Hrs"), focus_unit("gibibyte hour"), focus_unit("vCPU-Hours"), focus_unit("")
    ('Hours', 'GiB-Hours', 'vCPU-Hours', None)
    """
    return FOCUS_UNITS.get(unit, unit) if unit else None


#: FOCUS 1.2 nullability rules applied to every record (rule id -> (column made null, when)); each ``when``
#: reads the record as it is after the rules before it.
_NULL_WHEN: tuple[tuple[str, str, Any], ...] = (
    ("PricingQuantity-C-004", "PricingQuantity", lambda r: r["ChargeCategory"] == "Tax"),
    ("SkuId-C-004", "SkuId", lambda r: r["ChargeCategory"] == "Tax"),
    ("ConsumedQuantity-C-004", "ConsumedQuantity",
     lambda r: r["ChargeCategory"] != "Usage" or r["CommitmentDiscountStatus"] == "Unused"),
    ("ConsumedUnit-C-005", "ConsumedUnit", lambda r: r["ConsumedQuantity"] is None),
    ("PricingUnit-C-005", "PricingUnit", lambda r: r["PricingQuantity"] is None),
    ("ListUnitPrice-C-004", "ListUnitPrice", lambda r: r["ChargeCategory"] == "Tax"),
    ("PricingCategory-C-003", "PricingCategory", lambda r: r["ChargeCategory"] == "Tax"),
    ("ContractedUnitPrice-C-005", "ContractedUnitPrice", lambda r: r["ChargeCategory"] == "Tax"),
    ("RegionName-C-004", "RegionName", lambda r: r["RegionId"] is None),
    ("SkuPriceDetails-C-004", "SkuPriceDetails", lambda r: r["SkuPriceId"] is None),
    ("SkuMeter-C-004", "SkuMeter", lambda r: r["SkuId"] is None),
    ("CommitmentDiscountStatus-C-003", "CommitmentDiscountStatus", lambda r: r["CommitmentDiscountId"] is None),
    ("CommitmentDiscountStatus (Used/Unused describe usage)", "CommitmentDiscountStatus",
     lambda r: r["ChargeCategory"] != "Usage"),
)
#: The pricing-currency twins FOCUS 1.2 fills when the pricing currency is the billing currency.
_PRICING_CURRENCY_TWINS = {"PricingCurrencyEffectiveCost": "EffectiveCost",
                           "PricingCurrencyListUnitPrice": "ListUnitPrice",
                           "PricingCurrencyContractedUnitPrice": "ContractedUnitPrice"}


def conform(row: dict[str, Any]) -> dict[str, Any]:
    """A FOCUS record made to follow the FOCUS 1.2 nullability rules (:data:`_NULL_WHEN`: no quantity, SKU or
    unit price on a Tax row, consumed quantity only on used Usage rows, a unit only with its quantity, a
    region name only with its id, price details only with a price id) and with the pricing-currency
    columns equal to the billing-currency ones when the two currencies are the same (else left as given);
    units in FOCUS Unit Format (:func:`focus_unit`).
    Money columns are never changed. Idempotent.

    Source: FOCUS 1.2 column requirements (https://focus.finops.org/focus-specification/v1-2/), as the
    FinOps Foundation's focus-validator 2.2.1 checks them (model-1.2.0.1, rule ids above).

    >>> r = conform(record(ChargeCategory="Tax", PricingQuantity=Decimal(1), PricingUnit="Units", SkuId="tax",
    ...                    BillingCurrency="USD", PricingCurrency="USD", EffectiveCost=Decimal(7)))
    >>> r["PricingQuantity"], r["PricingUnit"], r["SkuId"], r["PricingCurrencyEffectiveCost"]
    (None, None, None, Decimal('7'))
    """
    row["PricingUnit"], row["ConsumedUnit"] = focus_unit(row["PricingUnit"]), focus_unit(row["ConsumedUnit"])
    for _rule, column, when in _NULL_WHEN:
        if row[column] is not None and when(row):
            row[column] = None
    if row["PricingCurrency"] is None or row["PricingCurrency"] == row["BillingCurrency"]:
        row["PricingCurrency"] = row["BillingCurrency"]
        for twin, column in _PRICING_CURRENCY_TWINS.items():
            if row[twin] is None:
                row[twin] = row[column]
    return row


def service_subcategory(subcategories: Mapping[str, str], service: str | None, category: str) -> str:
    """FOCUS 1.2 ServiceSubcategory of a service: from a provider's table, else ``Other (<ServiceCategory>)``
    (an allowed value under every category), so each ServiceName has one subcategory.

    >>> service_subcategory({"AmazonEC2": "Virtual Machines"}, "AmazonEC2", "Compute"), service_subcategory({}, "X", "Other")
    ('Virtual Machines', 'Other (Other)')
    """
    return subcategories.get(service or "", f"Other ({category})")


def gpu_columns(instance_type: str | None, hours: Decimal | None, purchase_option: str | None,
                gpu: tuple[str, int] | None) -> dict[str, Any]:
    """The ``x_`` columns: GPU-hours = instance-hours x GPUs per instance (``None`` without a GPU or hours).

    >>> gpu_columns("p5.48xlarge", Decimal("10"), "on_demand", ("h100-sxm", 8))["x_GpuHours"]
    Decimal('80')
    """
    gpu_hours = MONEY_CONTEXT.multiply(hours, Decimal(gpu[1])) if gpu and hours is not None else None
    return {"x_InstanceType": instance_type or None, "x_GpuModel": gpu[0] if gpu else None,
            "x_GpuCount": gpu[1] if gpu else None, "x_GpuHours": gpu_hours, "x_PurchaseOption": purchase_option or None}


def _arrow_schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "json": pa.string(), "decimal": pa.decimal128(38, 10),
             "timestamp": pa.timestamp("us"), "integer": pa.int32()}
    return pa.schema([(name, types[KINDS[name]]) for name in NAMES])


def _column(name: str, values: list[Any]) -> Any:
    """One Arrow column; decimals rounded to the 10 places of ``DECIMAL(38, 10)`` only when they have more."""
    import pyarrow as pa

    kind = KINDS[name]
    if kind != "decimal":
        return values
    decimals = [None if v is None else to_decimal(v) for v in values]
    try:
        return pa.array(decimals, pa.decimal128(38, 10))
    except pa.ArrowInvalid:  # more than 10 decimal places somewhere: round half-up, as money.quantize does
        return pa.array([None if d is None else d.quantize(_SCALE, context=MONEY_CONTEXT) for d in decimals],
                        pa.decimal128(38, 10))


def _table(rows: list[Mapping[str, Any]]) -> Any:
    import pyarrow as pa

    columns = {name: _column(name, [row.get(name) for row in rows]) for name in NAMES}
    return pa.Table.from_pydict(columns, schema=_arrow_schema())


class FocusParquetWriter:
    """Write FOCUS records to ``out`` chunk by chunk, atomically: into a temporary file in the same folder,
    renamed into place only when the ``with`` block ends without an error (else deleted), so a reader
    sees the old file or the whole new one, never a part. A file already at ``out`` is replaced only when it
    is a FOCUS bill this tool wrote (:func:`finops.outputs.check_replaceable`), never an input of the run.

    >>> import tempfile, pyarrow.parquet as pq
    >>> folder = tempfile.mkdtemp()
    >>> with FocusParquetWriter(Path(folder) / "bills.parquet") as writer:
    ...     writer.write([record(BilledCost=Decimal("1.5"))])
    ...     writer.write([record(BilledCost=Decimal("2.5"))])
    >>> pq.read_table(Path(folder) / "bills.parquet").column("BilledCost").to_pylist()
    [Decimal('1.5000000000'), Decimal('2.5000000000')]
    """

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.rows = 0
        self._writer: Any = None
        self._replacing = ExitStack()

    def __enter__(self) -> Self:
        import pyarrow.parquet as pq

        check_replaceable(self.out, "FOCUS bill")  # an earlier pull's file is replaced, nobody else's Parquet
        temporary = self._replacing.enter_context(replacing(self.out))  # finops.files: whole or not at all
        self._writer = pq.ParquetWriter(str(temporary), _arrow_schema(), write_page_checksum=True)  # checked on read
        return self

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append a chunk of records (an empty chunk writes nothing)."""
        chunk = [conform(dict(row)) for row in rows]
        if chunk:
            self._writer.write_table(_table(chunk))
            self.rows += len(chunk)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            self._writer.close()
        except BaseException as closing:
            self._replacing.__exit__(type(closing), closing, closing.__traceback__)
            raise
        self._replacing.__exit__(kind, error, trace)  # type: ignore[arg-type]


def write_focus_parquet(rows: Iterable[Mapping[str, Any]], out: str | Path) -> Path:
    """Write FOCUS records to ``out`` atomically in one go (see :class:`FocusParquetWriter`)."""
    with FocusParquetWriter(out) as writer:
        writer.write(rows)
    return writer.out
