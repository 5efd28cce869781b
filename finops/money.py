"""Money: exact decimals with their currency, through one module.

Floats are for physics (FLOPs, bytes, seconds). Anything summed into a report is a
:class:`decimal.Decimal` created by :func:`to_decimal` and carried in a :class:`Money` with its ISO 4217
currency code. Adding two currencies raises :class:`~finops.errors.CurrencyMismatchError`; there is no
silent conversion.

>>> Money.of("9000", "CNY") * 9 * 36 + Money.of(160000, "CNY") * 9
Money(amount=Decimal('4356000'), currency='CNY')
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import Decimal

from .errors import CurrencyMismatchError, InputError, Location

__all__ = ["CENT", "MAX_AMOUNT", "MONEY_CONTEXT", "Money", "Number", "quantize", "to_decimal", "to_price"]

#: The one decimal context for money: 34 significant digits, banker's rounding off, traps on.
MONEY_CONTEXT = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_UP,
                                traps=[decimal.InvalidOperation, decimal.DivisionByZero, decimal.Overflow])
#: What :func:`quantize` rounds in: :data:`MONEY_CONTEXT` (half-up, same traps) with no limit on digits,
#: so an amount of any size rounds to the cent (quantize's result never has more digits than it needs).
_ROUNDING_CONTEXT = MONEY_CONTEXT.copy()
_ROUNDING_CONTEXT.prec = decimal.MAX_PREC
CENT = Decimal("0.01")
#: Amounts given as money must be smaller than this: what a bill's ``DECIMAL(38, 10)`` holds.
MAX_AMOUNT = Decimal(10) ** 28
_GROUPED = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")

Number = int | float | str | Decimal


def to_decimal(value: Number, *, where: Location | None = None) -> Decimal:
    """Convert a number or numeric text to an exact :class:`Decimal`.

    Floats go through their shortest ``repr`` so ``0.1`` becomes ``Decimal('0.1')``, not the binary
    expansion. Text may carry thousands separators and surrounding spaces.

    >>> to_decimal(0.1), to_decimal("1,234.50"), to_decimal(3)
    (Decimal('0.1'), Decimal('1234.50'), Decimal('3'))
    """
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, bool):
        raise InputError(f"expected a number, got {value!r}", where=where)
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, float):
        result = Decimal(repr(value))
    elif isinstance(value, str):
        text = value.strip()
        if "," in text:  # thousands separators only where they group by three: "12,5" is not 125
            if not _GROUPED.fullmatch(text):
                raise InputError(f"expected a number, got {value!r}", where=where,
                                 hint="use '.' for decimals; ',' only between groups of three digits")
            text = text.replace(",", "")
        try:
            result = MONEY_CONTEXT.create_decimal(text)
        except decimal.DecimalException:  # not a number, or an exponent past the context's (1e999999)
            raise InputError(f"expected a number, got {value[:40]!r}", where=where) from None
    else:
        raise InputError(f"expected a number, got {type(value).__name__} {value!r}", where=where)
    if not result.is_finite():
        raise InputError(f"expected a finite number, got {value!r}", where=where)
    return result


def to_price(value: Number, *, where: Location | None = None, what: str = "price", zero: bool = False) -> Decimal:
    """A price from a price list or a price book, as an exact :class:`Decimal`: more than 0 (0 too with
    ``zero``, for a part of a price that may be nothing, such as the hourly fee of an all-upfront
    reservation or an upfront payment). Every price source reads its prices through this one check.

    A price is what a unit costs. A credit, refund or discount is not a price: bills carry it as its own
    charge (FOCUS ``ChargeCategory`` Credit), never a price list, and a negative price would rank
    the option it belongs to as the cheapest.

    >>> to_price("3.06"), to_price(0, zero=True)
    (Decimal('3.06'), Decimal('0'))
    >>> to_price("-3.06", what="PricePerUnit")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: PricePerUnit must be more than 0, got '-3.06'. Hint: a price list holds what a unit costs; credits and refunds are charges of their own in the bill, not prices
    """
    try:
        price = to_decimal(value, where=where)
    except InputError:
        raise InputError(f"{what} {str(value)[:40]!r} is not a number", where=where,
                         hint="a price is a plain number, e.g. 38.528") from None
    if price < 0 or (price == 0 and not zero):
        bound = "0 or more" if zero else "more than 0"
        raise InputError(f"{what} must be {bound}, got {str(value)!r}", where=where,
                         hint="a price list holds what a unit costs; credits and refunds are charges of their own "
                              "in the bill, not prices")
    if price >= MAX_AMOUNT:
        raise InputError(f"{what} {str(value)!r} is out of range", where=where,
                         hint="prices have at most 28 digits before the decimal point")
    return price


def quantize(amount: Decimal, step: Decimal = CENT) -> Decimal:
    """Round half-up to ``step`` (cents by default), for display and invoices only.

    Amounts of any size round, beyond the 34 digits of :data:`MONEY_CONTEXT` too:

    >>> quantize(Decimal("2.675")), quantize(Decimal("1E+32"))
    (Decimal('2.68'), Decimal('100000000000000000000000000000000.00'))
    """
    return amount.quantize(step, context=_ROUNDING_CONTEXT)


@dataclass(frozen=True, order=True)
class Money:
    """An exact amount in one currency.

    >>> Money.of(1, "USD") + Money.of("0.10", "USD")
    Money(amount=Decimal('1.10'), currency='USD')
    >>> Money.of(1, "USD") + Money.of(1, "EUR")
    Traceback (most recent call last):
    ...
    finops.errors.CurrencyMismatchError: cannot add USD and EUR without a rate table. Hint: convert one side explicitly first
    """

    amount: Decimal
    currency: str

    @classmethod
    def of(cls, amount: Number, currency: str) -> Money:
        """Money from loose input: a 3-letter code and an amount below :data:`MAX_AMOUNT`.

        >>> Money.of("1e28", "USD")
        Traceback (most recent call last):
        ...
        finops.errors.InputError: amount '1e28' is out of range. Hint: money amounts have at most 28 digits before the decimal point (what a FOCUS bill's DECIMAL(38, 10) holds)
        """
        code = currency.strip().upper()
        if len(code) != 3 or not code.isalpha():
            raise InputError(f"currency must be a 3-letter ISO 4217 code, got {currency!r}")
        value = to_decimal(amount)
        if abs(value) >= MAX_AMOUNT:
            raise InputError(f"amount {amount!r} is out of range", hint="money amounts have at most 28 digits "
                             "before the decimal point (what a FOCUS bill's DECIMAL(38, 10) holds)")
        return cls(value, code)

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls.of(0, currency)

    def _same(self, other: Money, verb: str) -> None:
        if not isinstance(other, Money):
            raise TypeError(f"cannot {verb} Money and {type(other).__name__}")
        if other.currency != self.currency:
            raise CurrencyMismatchError(
                f"cannot {verb} {self.currency} and {other.currency} without a rate table",
                hint="convert one side explicitly first",
            )

    def __add__(self, other: Money) -> Money:
        self._same(other, "add")
        return Money(MONEY_CONTEXT.add(self.amount, other.amount), self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other, "subtract")
        return Money(MONEY_CONTEXT.subtract(self.amount, other.amount), self.currency)

    def __mul__(self, factor: Number) -> Money:
        return Money(MONEY_CONTEXT.multiply(self.amount, to_decimal(factor)), self.currency)

    __rmul__ = __mul__

    def __truediv__(self, divisor: Number) -> Money:
        return Money(MONEY_CONTEXT.divide(self.amount, to_decimal(divisor)), self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def rounded(self) -> Money:
        return Money(quantize(self.amount), self.currency)

    def __str__(self) -> str:
        return f"{quantize(self.amount):,} {self.currency}"

    @staticmethod
    def total(values: list[Money] | tuple[Money, ...], currency: str) -> Money:
        """Sum values that must all be in ``currency``; an empty list sums to zero."""
        result = Money.zero(currency)
        for value in values:
            result = result + value
        return result
