"""What a command may write where: the name's suffix says the format written, and a file already there is
replaced only when this tool wrote it.

Two rules every writer of a single file follows (the budget review keeps the same rule for its workbook,
``templates.review_writer.check_replaceable``):

- :func:`check_suffix`: ``--out c.txt`` for a JSON calibration, or ``--out x.csv`` for Parquet bills, would write
  one format under another's name, read back later as a damaged file of the wrong kind: refused before any work.
- :func:`check_replaceable`: a file of that name that this tool did not write (a sheet someone saved as
  ``demand.csv``, a load-test result named ``calibration.json``) is never replaced: refused, naming it. A file
  this tool wrote is known by its first bytes (:data:`WRITTEN_HERE`: the demand CSV's header, the calibration's
  first key), read no further than :data:`finops.limits.MAX_LINE_BYTES`. Rerunning a command over its own output
  replaces it, as the user means.

>>> check_suffix(Path("c.txt"), (".json",), "the calibration is written as JSON")
Traceback (most recent call last):
finops.errors.InputError: c.txt: the calibration is written as JSON, not as .txt. Hint: give --out a name ending in .json, for example --out c.json
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .errors import InputError, Location
from .files import refuse_input, replaceable_target
from .limits import read_line

__all__ = ["WRITTEN_HERE", "check_replaceable", "check_suffix"]

def _header_of(columns: Callable[[], tuple[str, ...]]) -> Callable[[list[str]], bool]:
    """Whether a CSV's first line is the header ``columns()`` names (looked up when asked: no import at start-up)."""
    return lambda lines: lines[:1] == [",".join(columns())]


def _price_book_columns() -> tuple[str, ...]:
    from .price_book import COLUMNS

    return COLUMNS


def _focus_columns() -> tuple[str, ...]:
    from .focus import COLUMNS, GPU_COLUMNS

    return tuple(column.name for column in COLUMNS + GPU_COLUMNS)


def _unmapped_columns() -> tuple[str, ...]:
    from .reconcile.aggregation import UNMAPPED_CSV_COLUMNS

    return UNMAPPED_CSV_COLUMNS


def _token_price_columns() -> tuple[str, ...]:
    from dataclasses import fields

    from .token_prices import TokenPrice

    return tuple(f.name for f in fields(TokenPrice))


#: Each kind of file this tool writes -> whether its first two lines (spaces and line ends dropped; a gzip file's
#: inflated) are one of them. The demand CSV (:func:`finops.mix.write_demand_csv`) starts ``hour,<unit>``; the
#: calibration JSON (``Calibration.write``, indented) is an object whose first key is ``source``; a price book and a
#: token price list start with their header. A price book in Parquet is known by its columns (:data:`_PARQUET`), and
#: so are the FOCUS bills ``bills pull`` writes (Parquet only: a text file there is never one).
WRITTEN_HERE: dict[str, Callable[[list[str]], bool]] = {
    "demand CSV": lambda lines: lines[:1] in (["hour,units"], ["hour,accelerators"], ["hour,instances"]),
    "calibration": lambda lines: "".join(lines).startswith('{"source":'),
    "price book": _header_of(_price_book_columns),
    "token price list": _header_of(_token_price_columns),
    "list of unmapped charges": _header_of(_unmapped_columns),
    "FOCUS bill": lambda lines: False,
    "next plan": lambda lines: False,
}
#: The kinds written as Parquet too -> their columns, read from the file's footer.
_PARQUET: dict[str, Callable[[], tuple[str, ...]]] = {"price book": _price_book_columns, "FOCUS bill": _focus_columns}
#: The kinds written as a workbook -> the name of a table only this tool's workbook of that kind holds: the next plan
#: ``plan next`` writes carries its Fleet table (templates/plan_next_writer.py).
_WORKBOOK_TABLE: dict[str, bytes] = {"next plan": b'name="tblFleet"'}
_GZIP_MAGIC, _PARQUET_MAGIC, _ZIP_MAGIC = b"\x1f\x8b", b"PAR1", b"PK"
#: How much of a workbook's table part is read to find its name (a table part starts with it).
_TABLE_HEAD_BYTES = 4096


def _written_here(target: Path, kind: str) -> bool:
    """Whether ``target`` is a ``kind`` file this tool wrote (:data:`WRITTEN_HERE`, :data:`_PARQUET`)."""
    import gzip

    try:
        with target.open("rb") as raw:
            magic = raw.read(4)
        if magic == _PARQUET_MAGIC and kind in _PARQUET:
            import pyarrow.parquet as pq

            return tuple(pq.read_schema(target).names) == _PARQUET[kind]()
        if magic[:2] == _ZIP_MAGIC and kind in _WORKBOOK_TABLE:
            import zipfile

            with zipfile.ZipFile(target) as package:
                return any(_WORKBOOK_TABLE[kind] in package.open(name).read(_TABLE_HEAD_BYTES)
                           for name in package.namelist() if name.startswith("xl/tables/"))
        with (gzip.open(target) if magic[:2] == _GZIP_MAGIC else target.open("rb")) as handle:
            lines = [read_line(handle, target, row).decode("utf-8-sig") for row in (1, 2)]
    except Exception:  # noqa: BLE001 - unreadable, damaged, not text, one endless line: not a file this tool wrote
        return False
    return WRITTEN_HERE[kind](["".join(line.split()) for line in lines])


def check_suffix(target: Path, suffixes: tuple[str, ...], written_as: str, option: str = "--out") -> None:
    """An :class:`InputError` naming ``target`` when its name does not end in one of ``suffixes`` (any case):
    ``written_as`` says what is written there."""
    if Path(target).is_dir():
        raise InputError(f"{option} is a folder; {written_as[0].lower()}{written_as[1:]} to a file",
                         where=Location(file=str(target)), hint=f"give {option} a file name inside that folder")
    name = Path(target).name.lower()
    if not any(name.endswith(suffix) for suffix in suffixes):
        found = Path(target).suffix or "a name without a suffix"
        raise InputError(f"{written_as}, not as {found}", where=Location(file=str(target)),
                         hint=f"give {option} a name ending in {' or '.join(suffixes)}, for example "
                              f"{option} {Path(target).stem or 'out'}{suffixes[0]}")


def check_replaceable(target: Path, kind: str, option: str = "--out") -> None:
    """An :class:`InputError` naming ``target`` when a file is there that is not a ``kind`` file this tool wrote
    (:data:`WRITTEN_HERE`: a folder is not), or one of the run's inputs (:func:`finops.files.refuse_input`, named as
    such); an absent target, or one of this tool's own, passes."""
    target = Path(target)
    refuse_input(target, option)
    if not target.is_dir():  # a device or a named pipe is refused before anything opens it; a folder below
        replaceable_target(target)
    if not target.exists():
        return
    if not _written_here(target, kind):
        what = "a folder" if target.is_dir() else "a file"
        raise InputError(f"{what} is there and it is not a {kind} this tool wrote; it is never replaced",
                         where=Location(file=str(target)),
                         hint=f"move or rename that file, or give {option} another name")
