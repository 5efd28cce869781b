"""``finops.money``'s contract beyond exact sums: each bad number names itself, where it was and what to
do; rounding is half-up at any size; currency codes are three letters; negation and the error texts.
(Written against the mutants ``scripts/mutation.sh money`` left alive.)"""

from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError, Location
from finops.money import Money, quantize, to_decimal

WHERE = Location(file="plan.xlsx", sheet="Budget", row=7, column="Amount")


# bad value -> (message, hint or None)
BAD_NUMBERS = [
    (True, "expected a number, got True", None),
    ("12,5", "expected a number, got '12,5'",
     "use '.' for decimals; ',' only between groups of three digits"),
    ("1,23,456", "expected a number, got '1,23,456'",
     "use '.' for decimals; ',' only between groups of three digits"),
    ("twelve", "expected a number, got 'twelve'", None),
    ([12], "expected a number, got list [12]", None),
    (None, "expected a number, got NoneType None", None),
    ("NaN", "expected a finite number, got 'NaN'", None),
    (float("inf"), "expected a finite number, got inf", None),
]


@pytest.mark.parametrize("bad,message,hint", BAD_NUMBERS)
def test_a_bad_number_says_what_where_and_what_to_do(bad, message, hint):
    with pytest.raises(InputError) as caught:
        to_decimal(bad, where=WHERE)
    assert caught.value.message == message
    assert caught.value.where == WHERE
    assert caught.value.hint == hint
    assert str(caught.value).startswith(f"plan.xlsx, sheet Budget, row 7, column Amount: {message}")


@pytest.mark.parametrize("amount,expected", [
    ("2.675", "2.68"), ("2.665", "2.67"), ("-2.675", "-2.68"), ("0.005", "0.01"), ("0.0049", "0.00"),
    # 30 significant digits after rounding: beyond Python's default context (28), within money's
    ("1234567890123456789012345678.905", "1234567890123456789012345678.91"),
])
def test_rounding_is_half_up_to_the_cent_at_any_size(amount, expected):
    assert quantize(Decimal(amount)) == Decimal(expected)
    assert Money.of(amount, "USD").rounded().amount == Decimal(expected)


@pytest.mark.parametrize("code", ["USDX", "US", "U$D", "12A", ""])
def test_currency_must_be_three_letters(code):
    with pytest.raises(InputError) as caught:
        Money.of(1, code)
    assert caught.value.message == f"currency must be a 3-letter ISO 4217 code, got {code!r}"


def test_currency_code_is_normalized():
    assert Money.of(1, " usd ").currency == "USD"


def test_negation_keeps_the_currency():
    assert -Money.of("12.30", "EUR") == Money(Decimal("-12.30"), "EUR")
    assert -Money.of("-5", "JPY") == Money(Decimal("5"), "JPY")


@pytest.mark.parametrize("operation,verb", [(lambda a, b: a + b, "add"), (lambda a, b: a - b, "subtract")])
def test_mixed_currencies_and_non_money_name_the_operation(operation, verb):
    with pytest.raises(CurrencyMismatchError) as mismatch:
        operation(Money.of(1, "USD"), Money.of(1, "EUR"))
    assert mismatch.value.message == f"cannot {verb} USD and EUR without a rate table"
    assert mismatch.value.hint == "convert one side explicitly first"
    with pytest.raises(TypeError, match=f"^cannot {verb} Money and int$"):
        operation(Money.of(1, "USD"), 1)
