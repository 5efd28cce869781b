"""The ways to buy capacity for one pool: owned, reserved, savings plan, CUD, provisioned throughput,
on-demand, spot (the kinds and their commitment basis: :mod:`finops.commitments`).

A :class:`MixOption` prices one *unit* (a GPU, a server, an instance: whatever the demand profile
counts). Committed kinds are paid every hour of the horizon, used or not (upfront already amortized
over the term, as FOCUS ``EffectiveCost`` does): a resource commitment (``owned``, ``reserved``,
``cud``, ``provisioned_throughput``) in whole units at ``hourly_cost`` each; a savings plan, a spend
commitment, as ``S`` per hour at its discounted rate ``hourly_cost``, covering ``S / hourly_cost``
units each hour (in one pool, found in steps of one unit's rate); ``variable_cost`` is paid only for unit-hours actually served
(power for owned servers). Flexible kinds (``on_demand``, ``spot``) cost ``hourly_cost`` per
unit-hour used; spot serves at most ``availability x min(max_share x demand, max_units)`` each hour.

The options CSV (``finops mix --options``) has columns ``name``, ``kind``, ``hourly_cost`` and the
optional ``max_share``, ``max_units``, ``variable_cost``, ``upfront``, ``term_hours``,
``availability``, ``currency`` (default USD).

>>> od = MixOption("p5-od", "on_demand", to_decimal("6.88"))
>>> ri = MixOption("p5-1y", "reserved", to_decimal("4.30"), term_hours=8760)
>>> ri.committed, od.committed
(True, False)
>>> check_options([od, ri], hours=8760)
'USD'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import get_args

import numpy as np

from ..commitments import COMMITTED_KINDS, OptionKind
from ..errors import CurrencyMismatchError, InputError, Location, UnknownNameError
from ..money import MAX_AMOUNT, to_decimal, to_price
from ..registry import Registry
from ._csv import read_table

__all__ = ["COMMITTED_KINDS", "MixOption", "OptionKind", "check_options", "read_options_csv"]

_KINDS: Registry[str] = Registry("option kind", {k: k for k in get_args(OptionKind)},
                                 aliases={"ri": "reserved", "sp": "savings_plan", "committed_use": "cud",
                                          "pt": "provisioned_throughput",
                                          "ondemand": "on_demand", "od": "on_demand", "preemptible": "spot"})
_REQUIRED = ("name", "kind", "hourly_cost")


@dataclass(frozen=True)
class MixOption:
    """One way to buy a unit of capacity; see the module docstring for the meaning of each field."""

    name: str
    kind: OptionKind
    hourly_cost: Decimal
    currency: str = "USD"
    variable_cost: Decimal = Decimal(0)
    upfront: Decimal = Decimal(0)
    term_hours: int | None = None
    max_share: float | None = None
    max_units: int | None = None
    availability: float = 1.0
    origin: Location | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = self.origin
        checks: list[tuple[bool, str, str]] = [
            (self.kind in get_args(OptionKind), "kind", f"unknown kind {self.kind!r}"),
            (self.hourly_cost >= 0, "hourly_cost", "hourly_cost must be >= 0"),
            (self.hourly_cost > 0 or self.upfront > 0 or self.kind == "owned", "hourly_cost",
             "costs nothing (hourly_cost 0, no upfront): a free option would cover all demand at no cost; only "
             + "owned capacity already paid for may cost 0"),
            (self.variable_cost >= 0, "variable_cost", "variable_cost must be >= 0"),
            (self.upfront >= 0, "upfront", "upfront must be >= 0"),
            (self.term_hours is None or self.term_hours > 0, "term_hours", "term_hours must be > 0"),
            (self.max_share is None or 0 <= self.max_share <= 1, "max_share", "max_share must be in [0, 1]"),
            (self.max_units is None or self.max_units >= 0, "max_units", "max_units must be >= 0"),
            (0 <= self.availability <= 1, "availability", "availability must be in [0, 1]"),
            (self.committed or self.variable_cost == 0, "variable_cost",
             "variable_cost applies to committed kinds only (on-demand and spot are all variable)"),
            (self.kind == "spot" or self.max_share is None, "max_share", "max_share applies to spot only"),
            (self.kind != "on_demand" or self.max_units is None, "max_units",
             "on-demand capacity is unlimited; drop max_units"),
        ]
        for ok, column, message in checks:
            if not ok:
                at = Location(file=where.file, row=where.row, column=column) if where else Location(column=column)
                raise InputError(f"option {self.name!r}: {message}", where=at)

    @property
    def committed(self) -> bool:
        """Paid every hour of the horizon, used or not (:data:`finops.commitments.COMMITTED_KINDS`)."""
        return self.kind in COMMITTED_KINDS

    def spot_capacity(self, demand: np.ndarray) -> np.ndarray:
        """Unit-hours this spot option can serve in hours of ``demand`` units each.

        >>> MixOption("s", "spot", Decimal(1), max_share=0.3, max_units=5, availability=0.9).spot_capacity(
        ...     np.array([10.0, 100.0])).tolist()
        [2.7, 4.5]
        """
        cap = demand
        if self.max_share is not None:
            cap = self.max_share * cap
        if self.max_units is not None:
            cap = np.minimum(cap, float(self.max_units))
        return self.availability * cap


def check_options(options: Sequence[MixOption], *, hours: int) -> str:
    """Check a set of options fits together and a horizon of ``hours``; return their one currency.

    Rules: at least one on-demand option (the flexible cost of last resort), unique names, one
    currency, no term longer than the horizon, committed variable costs below every flexible price
    (so committed capacity is always dispatched first).
    """
    def at(option: MixOption, column: str) -> Location:
        return Location(file=option.origin.file, row=option.origin.row, column=column) if option.origin \
            else Location(column=column)

    if not options:
        raise InputError("no options given", hint="list at least an on_demand option")
    if not any(o.kind == "on_demand" for o in options):
        raise InputError("no on_demand option", where=at(options[0], "kind"),
                         hint="add a row with kind on_demand: the price paid for demand nothing else covers")
    currency = options[0].currency
    seen: set[str] = set()
    for option in options:
        if option.name in seen:
            raise InputError(f"option name {option.name!r} appears twice", where=at(option, "name"))
        seen.add(option.name)
        if option.currency != currency:
            raise CurrencyMismatchError(f"option {option.name!r} is in {option.currency}, others in {currency}",
                                        where=at(option, "currency"), hint="convert all options to one currency")
        if option.term_hours is not None and option.term_hours > hours:
            raise InputError(f"option {option.name!r} has a term of {option.term_hours} hours, longer than the "
                             f"{hours}-hour demand profile", where=at(option, "term_hours"),
                             hint="give a profile covering the whole term, or use the ladder for multi-year terms")
    cheapest_flexible = min(o.hourly_cost for o in options if not o.committed)
    for option in options:
        if option.committed and option.variable_cost >= cheapest_flexible:
            raise InputError(f"option {option.name!r}: variable_cost {option.variable_cost} is not below the "
                             f"cheapest flexible price {cheapest_flexible}", where=at(option, "variable_cost"),
                             hint="committed capacity must be cheaper to run than to rent; drop this option")
    return currency


#: The columns of an options CSV that hold prices (:func:`~finops.money.to_price`).
_PRICE_COLUMNS = ("hourly_cost", "variable_cost", "upfront")


def read_options_csv(path: str | Path) -> list[MixOption]:
    """Read an options CSV; every bad cell fails naming the file, row and column.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "o.csv")
    >>> _ = open(p, "w").write("name,kind,hourly_cost,max_share\\nod,on_demand,6.88,\\nspot,spot,2.5,0.3\\n")
    >>> [(o.name, o.kind, o.hourly_cost, o.max_share) for o in read_options_csv(p)]
    [('od', 'on_demand', Decimal('6.88'), None), ('spot', 'spot', Decimal('2.5'), 0.3)]
    """
    path = Path(path)
    return [_option(path, line, row) for line, row in read_table(path, "options", _REQUIRED)]


def _option(path: Path, line: int, row: dict[str, str]) -> MixOption:
    def where(column: str) -> Location:
        return Location(file=str(path), row=line, column=column)

    def number(column: str) -> Decimal | None:
        text = row.get(column)  # None: a column the file does not have
        value = to_decimal(text, where=where(column)) if text else None
        if value is not None and abs(value) >= MAX_AMOUNT:
            raise InputError(f"{text!r} is out of range", where=where(column),
                             hint="numbers here have at most 28 digits before the decimal point")
        if value is not None and column in _PRICE_COLUMNS:  # the one price check; 0 is a price here (owned hours)
            to_price(value, where=where(column), what=column, zero=True)
        return value

    def whole(column: str) -> int | None:
        value = number(column)
        if value is not None and value != value.to_integral_value():
            raise InputError(f"expected a whole number, got {row[column]!r}", where=where(column))
        return None if value is None else int(value)

    if not row["name"]:
        raise InputError("empty name", where=where("name"))
    try:
        kind = _KINDS.canonical(row["kind"])
    except UnknownNameError as exc:
        close = list(dict.fromkeys(_KINDS.canonical(s).replace("-", "_") for s in exc.suggestions))
        raise UnknownNameError("option kind", exc.name, close, known=list(get_args(OptionKind)),
                               where=where("kind")) from None
    hourly = number("hourly_cost")
    if hourly is None:
        raise InputError("empty hourly_cost", where=where("hourly_cost"))
    max_share, availability = number("max_share"), number("availability")
    return MixOption(
        name=row["name"], kind=kind.replace("-", "_"), hourly_cost=hourly,  # type: ignore[arg-type]
        currency=row.get("currency", "").upper() or "USD", variable_cost=number("variable_cost") or Decimal(0),
        upfront=number("upfront") or Decimal(0), term_hours=whole("term_hours"),
        max_share=None if max_share is None else float(max_share), max_units=whole("max_units"),
        availability=1.0 if availability is None else float(availability),
        origin=Location(file=str(path), row=line))
