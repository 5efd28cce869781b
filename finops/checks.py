"""Checks of loose numbers and money, each failure an :class:`InputError` naming the field (the TCO and
commitment functions share them).
"""

from __future__ import annotations

from decimal import Decimal

from .errors import CurrencyMismatchError, InputError
from .money import Money, Number, to_decimal

__all__ = ["money", "number", "positive", "share", "whole"]


def number(value: Number, field: str) -> Decimal:
    """``value`` as a Decimal; a non-number fails naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise InputError(f"{field} must be a number, got {value!r}")
    try:
        return to_decimal(value)
    except InputError:
        raise InputError(f"{field} must be a finite number, got {value!r}") from None


def positive(value: Number, field: str, *, allow_zero: bool = False) -> Decimal:
    """``value`` > 0 (or >= 0 with ``allow_zero``)."""
    result = number(value, field)
    if result < 0 or (result == 0 and not allow_zero):
        raise InputError(f"{field} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return result


def share(value: Number, field: str, *, below_one: bool = False, above_zero: bool = False) -> Decimal:
    """A share in [0, 1], e.g. 0.8 for 80 %; ``below_one`` / ``above_zero`` exclude the ends."""
    result = number(value, field)
    if result < 0 or result > 1 or (below_one and result == 1) or (above_zero and result == 0):
        interval = f"{'(' if above_zero else '['}0, 1{')' if below_one else ']'}"
        raise InputError(f"{field} must be a share in {interval}, got {value!r}", hint="write 80 % as 0.8")
    return result


def whole(value: int, field: str, *, minimum: int = 1) -> int:
    """A whole number >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{field} must be a whole number >= {minimum}, got {value!r}")
    return value


def money(value: Money, field: str, currency: str | None = None, *, allow_negative: bool = False) -> Money:
    """A :class:`Money`, in ``currency`` if given, not negative unless allowed."""
    if not isinstance(value, Money):
        raise InputError(f"{field} must be Money, got {type(value).__name__} {value!r}",
                         hint="use Money.of(amount, currency)")
    if currency is not None and value.currency != currency:
        raise CurrencyMismatchError(f"{field} is in {value.currency} but the rest is in {currency}",
                                    hint="convert one side explicitly first")
    if value.amount < 0 and not allow_negative:
        raise InputError(f"{field} must not be negative, got {value}")
    return value
