"""Tokens from the bill: the charges of a token API (Amazon Bedrock, Vertex AI) counted as tokens per plan line.

A charge is a token charge when its ``ConsumedUnit`` or its ``SkuMeter`` (AWS: the usage type, as the connectors
fill it; Google Cloud: the SKU description) speaks of tokens: ``ConsumedUnit`` ``Tokens`` or ``1K Tokens``, a
usage type ``USE1-Llama3-3-70B-input-tokens`` or ``USE1-MP:USE1_InputTokenCount-Units``. Its kind (cached input,
output, input) is read from ``SkuMeter`` and ``ChargeDescription`` by :data:`TOKEN_KINDS`, first match wins (a
cache read is input too, so ``cache`` is tried first); its count is ``ConsumedQuantity`` times the tokens one unit
stands for (:data:`TOKENS_PER_UNIT`).

The aggregation groups charges by :data:`TOKEN_KIND_SQL` (one more dimension of the scan), and
:func:`line_tokens` sums each plan line's tokens from those groups. A plan line's actual tokens are then the bill's
unless a Usage row gives them (the Usage row overrides: serving logs may count what the bill does not, such as a
fleet's own tokens).

>>> from decimal import Decimal
>>> tokens_of("1K Tokens", Decimal("2.5")), tokens_of("Tokens", Decimal(7)), tokens_of("Hours", Decimal(1))
(Decimal('2500.0'), Decimal('7'), None)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, Protocol, get_args

from ..errors import InputError, Location

__all__ = [
    "TOKENS_PER_UNIT",
    "TOKEN_KINDS",
    "TOKEN_KIND_SQL",
    "TOKEN_ROW_SQL",
    "LineTokens",
    "TokenKind",
    "line_tokens",
    "tokens_of",
    "unit_error",
    "unit_problem",
]

TokenKind = Literal["cached", "output", "input", "tokens"]

#: Words of ``SkuMeter`` or ``ChargeDescription`` (lowercased) -> the kind of token they count, tried in this order;
#: ``tokens`` when none matches. Sources: AWS Bedrock usage types (``...-input-tokens``, ``...-output-tokens``,
#: ``...-cache-read-input-token-count``, https://docs.aws.amazon.com/bedrock/latest/userguide/bedrock-pricing.html);
#: Google Cloud SKU descriptions (``... Input Tokens``, ``... Output Tokens``, ``... Cached Input Tokens``).
TOKEN_KINDS: tuple[tuple[str, TokenKind], ...] = (("cache", "cached"), ("output", "output"), ("input", "input"))

#: ``ConsumedUnit`` (lowercased, spaces kept) -> tokens per unit. A unit that is a plain count (``Units``,
#: ``Count``) counts tokens one by one when ``SkuMeter`` says they are tokens (AWS marketplace usage types such as
#: ``InputTokenCount-Units``). FOCUS Unit Format writes a scaled unit as ``1000 Tokens``; exports also write ``1K``.
TOKENS_PER_UNIT: dict[str, Decimal] = {
    "tokens": Decimal(1), "token": Decimal(1), "units": Decimal(1), "unit": Decimal(1), "count": Decimal(1),
    "1k tokens": Decimal(1000), "1000 tokens": Decimal(1000), "k tokens": Decimal(1000),
    "1m tokens": Decimal(10**6), "1000000 tokens": Decimal(10**6), "million tokens": Decimal(10**6),
}

#: SQL (over FOCUS columns) true for a token charge. ILIKE compares without lowering a copy of each value (the scan
#: reads every charge); the remote engines' dialects write it as their own case-insensitive match.
TOKEN_ROW_SQL = "(ConsumedUnit ILIKE '%token%' OR SkuMeter ILIKE '%token%')"
#: SQL: the :data:`TokenKind` of a token charge, NULL for any other charge.
TOKEN_KIND_SQL = ("CASE WHEN " + TOKEN_ROW_SQL + " THEN CASE "
                  + " ".join(f"WHEN SkuMeter ILIKE '%{word}%' OR ChargeDescription ILIKE '%{word}%' THEN '{kind}'"
                             for word, kind in TOKEN_KINDS)
                  + " ELSE 'tokens' END END")
_KINDS: tuple[str, ...] = get_args(TokenKind)
_MILLION = Decimal(10**6)


def tokens_of(unit: str | None, quantity: Decimal) -> Decimal | None:
    """Tokens in ``quantity`` of ``unit`` (:data:`TOKENS_PER_UNIT`); ``None`` for a unit that does not count tokens."""
    per_unit = TOKENS_PER_UNIT.get(" ".join((unit or "").lower().split()))
    return None if per_unit is None else quantity * per_unit


class _TokenGroup(Protocol):
    plan_line: str | None
    token_kind: str | None
    consumed_unit: str | None
    consumed_quantity: Decimal
    charge_category: str | None


@dataclass(frozen=True)
class LineTokens:
    """Millions of tokens a plan line's charges were billed for, by kind."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)
    cached: Decimal = Decimal(0)
    other: Decimal = Decimal(0)  # token charges that do not say which kind

    @property
    def total(self) -> Decimal:
        return self.input + self.output + self.cached + self.other


def line_tokens(groups: Iterable[_TokenGroup], unmapped: str) -> dict[str, LineTokens]:
    """Plan line -> millions of tokens of its Usage token charges (unmapped ones under ``unmapped``). A token charge
    whose unit counts no tokens (``None`` from :func:`tokens_of`) is left to the caller's check.

    >>> from types import SimpleNamespace as G
    >>> line_tokens([G(plan_line="chat", token_kind="input", consumed_unit="1K Tokens", consumed_quantity=Decimal(500),
    ...                charge_category="Usage")], "Unmapped")["chat"].input
    Decimal('0.5')
    """
    sums: dict[str, dict[str, Decimal]] = defaultdict(lambda: dict.fromkeys(_KINDS, Decimal(0)))
    for g in groups:
        if g.token_kind is None or g.charge_category != "Usage":
            continue
        tokens = tokens_of(g.consumed_unit, g.consumed_quantity)
        if tokens is not None:
            sums[unmapped if g.plan_line is None else g.plan_line][g.token_kind] += tokens / _MILLION
    return {line: LineTokens(s["input"], s["output"], s["cached"], s["tokens"]) for line, s in sums.items()}


def unit_problem(groups: Iterable[_TokenGroup]) -> Mapping[str, str] | None:
    """The first token charge group with a quantity but no unit that counts tokens, as ``{"unit": ...}``; None if
    every token charge's unit counts tokens."""
    for g in groups:
        if g.token_kind is not None and g.consumed_quantity and tokens_of(g.consumed_unit, Decimal(1)) is None:
            return {"unit": g.consumed_unit or ""}
    return None


def unit_error(unit: str | None, where: Location, charge: str = "a token charge") -> InputError:
    """The error of a token ``charge`` whose ``ConsumedUnit`` (``unit``; empty: none) counts no tokens, at ``where``:
    its tokens would be left out of the line's unit cost.

    >>> unit_error("Hours", Location(file="athena:t", column="ConsumedUnit")).message
    "a token charge has the unit 'Hours', which does not say how many tokens it counts"
    """
    what = f"has the unit {unit!r}, which" if unit else "has no ConsumedUnit; it"
    return InputError(f"{charge} {what} does not say how many tokens it counts", where=where,
                      hint="export the bill with ConsumedUnit (Tokens, 1K Tokens or 1M Tokens) on token rows")
