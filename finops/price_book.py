"""The price book: one schema for every provider's GPU prices.

A :class:`PriceRow` is the effective cost of one instance-hour (or TPU chip-hour) under one pricing
model, with any upfront payment already amortized into ``hourly_cost`` over the term (as FOCUS
``EffectiveCost`` does) and also kept apart in ``upfront_cost``. Money is :class:`~decimal.Decimal`.

The connectors (``connectors.aws``, ``connectors.gcp``) produce rows; this module only holds, filters,
reads and writes them. The bundled, dated snapshots live in ``finops/data/prices/``; a pulled price
book is used instead when ``FINOPS_PRICE_BOOK`` names its file.

>>> book = PriceBook([PriceRow("gcp", "us-central1", "a3-highgpu-8g", "h100-sxm", 8, "on_demand", "",
...                            Decimal("88.25"), Decimal(0), "USD", "2026-07-30", "example")])
>>> book.lookup("gcp", "a3-highgpu-8g", "on_demand", "us-central1").per_gpu_hour
Decimal('11.03125')
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields, replace
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from .errors import InputError, Location
from .files import write_atomically
from .limits import MAX_INFLATED_BYTES, inflate
from .money import MONEY_CONTEXT, to_price
from .registry import normalize_key

__all__ = ["PAYMENT_OPTIONS", "PRICE_BOOK_ENV", "PRICING_MODELS", "PaymentOption", "PriceBook", "PriceRow",
           "PricingModel"]

PricingModel = Literal["on_demand", "spot", "reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y",
                       "cud_1y", "cud_3y"]
PRICING_MODELS: tuple[str, ...] = get_args(PricingModel)
PaymentOption = Literal["", "no_upfront", "partial_upfront", "all_upfront"]
PAYMENT_OPTIONS: tuple[str, ...] = get_args(PaymentOption)
PRICE_BOOK_ENV = "FINOPS_PRICE_BOOK"

_TERM_HOURS = {"1y": 8760, "3y": 26280}
_FILE_HINT = "point FINOPS_PRICE_BOOK at a file written by `finops prices pull --out FILE` (.parquet, .csv or .csv.gz)"


@dataclass(frozen=True)
class PriceRow:
    """One price: an instance type, in a region, under a pricing model and payment option."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    pricing_model: PricingModel
    payment_option: PaymentOption
    hourly_cost: Decimal
    upfront_cost: Decimal
    currency: str
    effective_date: str
    source: str

    def __post_init__(self) -> None:
        """Every row is priced: ``hourly_cost`` more than 0 (upfront amortized in), ``upfront_cost`` 0 or more
        (:func:`~finops.money.to_price`, whatever source built the row)."""
        what = f"the {self.pricing_model} price of {self.provider} {self.instance_type} in {self.region} ({self.source})"
        to_price(self.hourly_cost, what=f"hourly cost in {what}")
        to_price(self.upfront_cost, what=f"upfront cost in {what}", zero=True)

    @property
    def per_gpu_hour(self) -> Decimal:
        """Effective cost per GPU-hour (per chip-hour for TPUs)."""
        return MONEY_CONTEXT.divide(self.hourly_cost, Decimal(max(self.gpu_count, 1)))

    @property
    def term_hours(self) -> int:
        """Hours in the commitment term (0 for on-demand and spot)."""
        return _TERM_HOURS.get(self.pricing_model[-2:], 0) if self.pricing_model[-1] == "y" else 0

    def to_record(self) -> dict[str, object]:
        return asdict(self)


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(PriceRow))


def _row_from_record(record: dict[str, object], where: Location) -> PriceRow:
    missing = [c for c in COLUMNS if c not in record]
    if missing:
        raise InputError(f"the price book's header lacks columns {', '.join(missing)}",
                         where=replace(where, row=None, column=None),   # the header's fault, not this row's
                         hint=f"a price book has columns {', '.join(COLUMNS)}")
    model = str(record["pricing_model"])
    if model not in PRICING_MODELS:
        raise InputError(f"unknown pricing_model {model!r}", where=where, hint=f"one of {', '.join(PRICING_MODELS)}")
    option = str(record["payment_option"] or "")
    if option not in PAYMENT_OPTIONS:
        raise InputError(f"unknown payment_option {option!r}", where=where,
                         hint=f"one of {', '.join(repr(p) for p in PAYMENT_OPTIONS)}")
    try:
        count = int(record["gpu_count"])  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"gpu_count must be an integer, got {record['gpu_count']!r}", where=where) from None
    _check_instance(record, count, where)
    currency = str(record["currency"] or "").strip().upper()
    if len(currency) != 3 or not currency.isalpha():  # "usd" is USD; "US$" or "" prices in no currency
        raise InputError(f"currency must be a 3-letter ISO 4217 code, got {str(record['currency'])[:40]!r}",
                         where=replace(where, column="currency"), hint="for example USD")
    return PriceRow(
        provider=str(record["provider"]), region=str(record["region"]), instance_type=str(record["instance_type"]),
        gpu_model=str(record["gpu_model"]), gpu_count=count, pricing_model=model,  # type: ignore[arg-type]
        payment_option=option,  # type: ignore[arg-type]
        hourly_cost=to_price(str(record["hourly_cost"]), where=replace(where, column="hourly_cost"), what="hourly_cost"),
        upfront_cost=to_price(str(record["upfront_cost"] or 0), where=replace(where, column="upfront_cost"),
                              what="upfront_cost", zero=True),
        currency=currency, effective_date=str(record["effective_date"])[:10],
        source=str(record["source"]),
    )


def _check_instance(record: dict[str, object], count: int, where: Location) -> None:
    """A row's GPUs and date as a price can be used: at least one GPU an instance (the price per GPU-hour divides
    by it), the GPUs of the instance catalog when the catalog knows the instance (a p5.48xlarge priced as 4 GPUs
    would halve every fleet's instances and double the price of each GPU-hour), and an ISO date as
    ``effective_date`` (the date a price is compared by)."""
    from datetime import date

    from .catalog.instances import instance

    if count < 1:
        raise InputError(f"gpu_count must be 1 or more, got {count}", where=replace(where, column="gpu_count"),
                         hint="the GPUs of one instance, e.g. 8 for p5.48xlarge")
    try:
        known = instance(str(record["provider"]), str(record["instance_type"]))
    except InputError:
        known = None  # an instance the catalog does not hold: the row says what it is
    if known is not None and known.gpu_count != count:
        raise InputError(f"{record['instance_type']} has {known.gpu_count} GPUs, the row says {count}",
                         where=replace(where, column="gpu_count"),
                         hint=f"write gpu_count {known.gpu_count} (the instance catalog, finops/catalog)")
    try:
        date.fromisoformat(str(record["effective_date"])[:10])
    except ValueError:
        raise InputError(f"effective_date must be a date YYYY-MM-DD, got {str(record['effective_date'])[:40]!r}",
                         where=replace(where, column="effective_date"), hint="for example 2026-07-30") from None


#: What one price of a book is for, and who quotes it: one source (an offer file's SKU and term, a page) quotes
#: one price for one key. Two sources may price one key (AWS's standard and convertible reserved instances).
PRICE_KEY = ("provider", "region", "instance_type", "pricing_model", "payment_option", "source")


def _priced_once(numbered: Iterable[tuple[int, PriceRow]], file: str) -> list[PriceRow]:
    """The rows of a price-book file, each key (:data:`PRICE_KEY`, any case) priced once: a second row of a key
    is refused naming both rows. Two prices of one instance from one source (two pulls appended, a row pasted
    and edited) would otherwise both be offered, the cheaper one ranked first."""
    first: dict[tuple[str, ...], int] = {}
    rows = []
    for number, row in numbered:
        key = tuple(normalize_key(str(getattr(row, name) or "")) for name in PRICE_KEY)
        if key in first:
            what = " ".join(str(getattr(row, name)) for name in PRICE_KEY[:-1] if getattr(row, name))
            raise InputError(f"{what} is priced twice by one source: here ({row.hourly_cost} {row.currency} an "
                             f"hour) and in row {first[key]}",
                             where=Location(file=file, row=number, column="hourly_cost"),
                             hint="keep one row for each provider, region, instance type, pricing model, payment "
                                  "option and source: the price in force")
        first[key] = number
        rows.append(row)
    return rows


def _decoded_bytes(table: Any) -> int:
    """The bytes ``table``'s values take once decoded: a dictionary-encoded text column counts each row's value,
    though the file and the encoded table hold it once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pa.types.is_dictionary(chunk.type):
                total += pc.sum(pc.binary_length(chunk.dictionary).take(chunk.indices)).as_py() or 0
            elif pa.types.is_string(chunk.type) or pa.types.is_binary(chunk.type):
                total += pc.sum(pc.binary_length(chunk)).as_py() or 0
            else:
                total += chunk.nbytes
    return total


class PriceBook:
    """An immutable collection of :class:`PriceRow` with filtering and exact lookup."""

    def __init__(self, rows: Iterable[PriceRow]) -> None:
        self.rows: tuple[PriceRow, ...] = tuple(rows)

    def __iter__(self) -> Iterator[PriceRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __add__(self, other: PriceBook) -> PriceBook:
        return PriceBook(self.rows + other.rows)

    def filter(self, *, provider: str | None = None, region: str | None = None, instance_type: str | None = None,
               pricing_model: str | None = None, gpu_model: str | None = None) -> PriceBook:
        """Rows matching every given field (case-insensitive)."""
        wanted = {"provider": provider, "region": region, "instance_type": instance_type,
                  "pricing_model": pricing_model, "gpu_model": gpu_model}
        wanted = {k: normalize_key(v) for k, v in wanted.items() if v}
        return PriceBook(r for r in self.rows if all(normalize_key(getattr(r, k)) == v for k, v in wanted.items()))

    def lookup(self, provider: str, instance_type: str, pricing_model: str, region: str,
               payment_option: str | None = None) -> PriceRow:
        """The one price for these keys. With several payment options and none asked for, the lowest
        effective ``hourly_cost`` wins (upfront is amortized into it, so that is the cheapest option)."""
        if pricing_model not in PRICING_MODELS:
            raise InputError(f"unknown pricing model {pricing_model!r}", hint=f"one of {', '.join(PRICING_MODELS)}")
        matches = self.filter(provider=provider, instance_type=instance_type, pricing_model=pricing_model,
                              region=region).rows
        if payment_option is not None:
            matches = tuple(r for r in matches if r.payment_option == payment_option)
        if not matches:
            raise InputError(f"no {pricing_model} price for {provider} {instance_type} in {region}",
                             hint="check `finops prices show`, or pull fresh prices with `finops prices pull`")
        return min(matches, key=lambda r: (r.hourly_cost, r.payment_option))

    # ---- files -------------------------------------------------------------------------------------
    @classmethod
    def read_csv(cls, path: str | Path, text: str | None = None) -> PriceBook:
        """Read a price-book CSV (optionally gzip-compressed); errors name the file and row."""
        path = Path(path)
        if text is None:
            raw = path.read_bytes()
            try:
                text = (inflate(raw, path) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8-sig")  # Excel's BOM
            except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as error:
                raise InputError(f"price book {path.name} is not a UTF-8 CSV ({type(error).__name__})",
                                 where=Location(file=str(path)), hint=_FILE_HINT) from error
        reader = csv.DictReader(io.StringIO(text))
        return cls(_priced_once(((i, _row_from_record(rec, Location(file=path.name, row=i)))
                                 for i, rec in enumerate(reader, start=2)), path.name))

    def write_csv(self, path: str | Path) -> Path:
        """Write atomically (a temporary file renamed into place)."""
        path = Path(path)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow(row.to_record())
        data = buffer.getvalue().encode("utf-8")
        if path.suffix == ".gz":
            data = gzip.compress(data, mtime=0)
        return write_atomically(path, data)

    @classmethod
    def read_parquet(cls, path: str | Path) -> PriceBook:
        import pyarrow as pa
        import pyarrow.parquet as pq  # edge dependency, imported only here

        try:
            names = pq.read_schema(path).names
            table = pq.read_table(path, read_dictionary=[n for n in names if n in COLUMNS])  # text kept encoded
        except pa.ArrowException as error:
            raise InputError(f"price book {Path(path).name} is not a readable Parquet file",
                             where=Location(file=str(path)), hint=_FILE_HINT) from error
        if _decoded_bytes(table) > MAX_INFLATED_BYTES:  # a few kB of dictionary pages can stand for gigabytes
            raise InputError(f"this price book inflates to more than {MAX_INFLATED_BYTES // 1024 ** 2} MiB of "
                             "values", where=Location(file=str(path)),
                             hint="a price book is a few MiB; this one is damaged or crafted: pull it again")
        return cls(_priced_once(((i + 1, _row_from_record(rec, Location(file=Path(path).name, row=i + 1)))
                                 for i, rec in enumerate(table.to_pylist())), Path(path).name))

    def write_parquet(self, path: str | Path) -> Path:
        """Write atomically; money columns are decimal128(18, 6) (a micro-unit, as price lists quote)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        money = pa.decimal128(18, 6)
        schema = pa.schema([(c, money if c in ("hourly_cost", "upfront_cost") else
                             (pa.int32() if c == "gpu_count" else pa.string())) for c in COLUMNS])
        records = [{**r.to_record(), "hourly_cost": r.hourly_cost.quantize(Decimal("0.000001")),
                    "upfront_cost": r.upfront_cost.quantize(Decimal("0.000001"))} for r in self.rows]
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(records, schema=schema), sink)
        return write_atomically(Path(path), sink.getvalue().to_pybytes())

    @classmethod
    def read(cls, path: str | Path) -> PriceBook:
        """Read a ``.parquet`` or ``.csv`` / ``.csv.gz`` price book."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"price book {path} does not exist", hint="run `finops prices pull --out FILE` first")
        if not path.name.endswith((".parquet", ".csv", ".csv.gz")):
            raise InputError(f"price book {path} is neither .parquet nor .csv / .csv.gz", where=Location(file=str(path)),
                             hint=_FILE_HINT)
        book = cls.read_parquet(path) if path.suffix == ".parquet" else cls.read_csv(path)
        if not book.rows:  # an empty file, or a header alone: nothing to price with, not "no price book"
            raise InputError("the price book holds no prices", where=Location(file=str(path)),
                             hint="write one with `finops prices pull --out FILE`, or leave it out for the bundled "
                                  "snapshot")
        return book

    @classmethod
    def bundled(cls) -> PriceBook:
        """The dated snapshots shipped in ``finops/data/prices`` (offline default)."""
        folder = resources.files("finops").joinpath("data", "prices")
        rows: list[PriceRow] = []
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith((".csv", ".csv.gz")):
                raw = entry.read_bytes()
                text = (inflate(raw, entry.name) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
                rows.extend(cls.read_csv(entry.name, text=text).rows)
        return cls(rows)

    @classmethod
    def current(cls) -> PriceBook:
        """The pulled price book named by ``FINOPS_PRICE_BOOK`` if set, else the bundled snapshot."""
        configured = os.environ.get(PRICE_BOOK_ENV)
        return cls.read(configured) if configured else cls.bundled()
