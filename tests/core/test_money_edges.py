"""Money's edges that the contract tests leave open: rounding that carries a digit, amounts past any
fixed precision, and how much of a bad number a message quotes.

Expected values are worked by hand: half-up to the cent of 999.995 is 1000.00 (the carry adds a digit);
a 45-digit amount keeps every digit and rounds its last.
"""
from decimal import Decimal

import pytest

from finops.errors import InputError
from finops.money import quantize, to_decimal


@pytest.mark.parametrize("amount,expected", [
    ("999.995", "1000.00"),                      # the carry makes the result one digit longer
    ("-99999999999999999999999999999999.995", "-100000000000000000000000000000000.00"),  # 34 -> 35 digits
    ("123456789012345678901234567890123456789012.345", "123456789012345678901234567890123456789012.35"),
    ("1E+400", "1" + "0" * 400 + ".00"),
])
def test_rounding_keeps_every_digit_and_carries(amount, expected):
    assert quantize(Decimal(amount)) == Decimal(expected)
    assert str(quantize(Decimal(amount))) == expected


def test_rounding_to_a_coarser_step():
    assert quantize(Decimal("12.345"), Decimal("0.1")) == Decimal("12.3")
    assert quantize(Decimal("12.35"), Decimal("0.1")) == Decimal("12.4")
    assert quantize(Decimal("12.5"), Decimal("1")) == Decimal("13")


def test_a_long_bad_number_is_quoted_to_its_first_forty_characters():
    text = "x" * 39 + "YZ" + "z" * 20  # character 40 is Y, 41 is Z
    with pytest.raises(InputError) as caught:
        to_decimal(text)
    assert caught.value.message == f"expected a number, got {'x' * 39 + 'Y'!r}"
