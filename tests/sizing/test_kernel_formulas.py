"""The prefill and decode formulas of ``finops.sizing.kernels`` on hand-made tables whose answer is known in
closed form, off the grid points and beyond them (the tests of the bundled tables sit on grid points).

A table that holds a power law, ``t(x) = a x^p`` as log ms on a grid, interpolates exactly in log-log space,
so the expected seconds below are the power law itself, computed here, and beyond a grid's top the module's
rules: linear (tokens, batch, KV length) or quadratic (prompt attention) from the top point. Where a
mutation would extrapolate a power law exactly (a shifted cell index), an uneven table is used instead and
the oracle is ``numpy.interp`` on the logarithms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from finops.sizing.kernels import BATCH_GRID, LENGTH_GRID, PROMPT_GRID, TOKEN_GRID, decode_seconds, prefill_seconds

TOKEN_A, TOKEN_P = 0.02, 0.5          # tokens(m) = 0.02 ms x m^0.5
CONTEXT_E, CONTEXT_P = 1e-4, 1.5      # prompt attention(s) = 1e-4 ms x s^1.5
LOGITS_S = 3e-4                        # the prompt's first-token logits GEMM, seconds
DECODE_A, DECODE_P = 0.5, 0.3         # decode GEMMs(b) = 0.5 ms x b^0.3
GEN_G, GEN_PB, GEN_PS = 1e-3, 0.8, 0.9  # generation attention(b, s) = 1e-3 ms x b^0.8 x s^0.9


def _log_ms(grid: np.ndarray, a: float, p: float) -> np.ndarray:
    return np.log(a * grid ** p)


def _tokens_s(m: float) -> float:
    """Seconds of a step of ``m`` tokens: the power law up to the grid's top, linear above it."""
    top = TOKEN_GRID[-1]
    return TOKEN_A * min(m, top) ** TOKEN_P * max(m / top, 1.0) * 1e-3


def _attention_s(seq: float) -> float:
    """Seconds of a prompt's attention over ``seq`` tokens: 0 below one token, quadratic above the grid."""
    if seq < 1:
        return 0.0
    top = PROMPT_GRID[-1]
    return CONTEXT_E * min(seq, top) ** CONTEXT_P * max(seq / top, 1.0) ** 2 * 1e-3


@pytest.mark.parametrize("new, isl, budget, batch", [
    (1000, 1000, 8192, 0),        # alone, one chunk
    (3000, 3000, 1024, 0),        # three chunks of 1,000 tokens
    (500, 2000, 8192, 16),        # a cached prefix of 1,500 tokens, beside 16 decoding sequences
    (100, 101, 8192, 1),          # one cached token, beside one sequence
    (20000, 20000, 8192, 4),      # a prompt beyond the attention grid (16,384): quadratic from its top
    (90000, 90000, 100000, 0),    # one chunk beyond the token grid (65,536): linear from its top
    (0, 512, 8192, 0),            # nothing new: one token is still prefilled
])
def test_a_prefill_is_its_chunks_beyond_the_batch_plus_its_new_attention_plus_the_logits(new, isl, budget, batch):
    """``chunks x (tokens(b + new / chunks) - tokens(b)) + attn(isl) - attn(isl - new) + logits`` with
    ``chunks = ceil(new / budget)``, ``new`` at least 1 and no ``tokens(b)`` when nothing decodes."""
    tokens = _log_ms(TOKEN_GRID, TOKEN_A, TOKEN_P)
    context = _log_ms(PROMPT_GRID, CONTEXT_E, CONTEXT_P)
    fresh = max(new, 1)
    chunks = max(math.ceil(fresh / budget), 1)
    beside = _tokens_s(batch) if batch > 0 else 0.0
    expected = (chunks * (_tokens_s(batch + fresh / chunks) - beside) + _attention_s(isl) - _attention_s(isl - fresh)
                + LOGITS_S)
    got = float(prefill_seconds(tokens, context, LOGITS_S, new, isl, budget, batch))
    assert got == pytest.approx(expected, rel=1e-9)


def test_prefill_rows_stack_as_they_come_alone():
    """Several prompts in one call (a fit's or a search's rows) give what each gives alone."""
    tokens = _log_ms(TOKEN_GRID, TOKEN_A, TOKEN_P)
    context = _log_ms(PROMPT_GRID, CONTEXT_E, CONTEXT_P)
    new, isl, budget, batch = np.array([700, 5000, 300]), np.array([900, 5000, 4000]), np.array([512, 2048, 8192]), \
        np.array([0.0, 3.0, 40.0])
    stacked = prefill_seconds(np.tile(tokens, (3, 1)), np.tile(context, (3, 1)), LOGITS_S, new, isl, budget, batch)
    alone = [float(prefill_seconds(tokens, context, LOGITS_S, *args)) for args in zip(new, isl, budget, batch)]
    assert stacked == pytest.approx(alone, rel=1e-12)


def _decode_s(b: float, ctx: float) -> float:
    """Seconds of a decode step: GEMMs(b) + attention(b, ctx), each linear beyond its grid's top."""
    b = max(b, 1.0)
    gemms = DECODE_A * min(b, TOKEN_GRID[-1]) ** DECODE_P * max(b / TOKEN_GRID[-1], 1.0)
    attention = (GEN_G * min(b, BATCH_GRID[-1]) ** GEN_PB * min(ctx, LENGTH_GRID[-1]) ** GEN_PS
                 * max(b / BATCH_GRID[-1], 1.0) * max(ctx / LENGTH_GRID[-1], 1.0))
    return (gemms + attention) * 1e-3


@pytest.mark.parametrize("batch, ctx", [
    (5, 1500),          # inside both grids, off their points
    (1, 1),             # the grids' first points
    (0.5, 700),         # below one sequence: one
    (3000, 3000),       # a batch beyond the attention grid (2,048)
    (24, 200_000),      # a context beyond the length grid (131,072)
    (5000, 250_000),    # both beyond
])
def test_a_decode_step_interpolates_its_gemms_and_attention_in_log_space(batch, ctx):
    decode_tokens = _log_ms(TOKEN_GRID, DECODE_A, DECODE_P)
    generation = (np.log(GEN_G) + GEN_PB * np.log(BATCH_GRID)[:, None] + GEN_PS * np.log(LENGTH_GRID)[None, :]).ravel()
    assert float(decode_seconds(decode_tokens, generation, batch, ctx)) == pytest.approx(_decode_s(batch, ctx), rel=1e-9)


def _uneven_token_table() -> np.ndarray:
    """Log ms on the token grid, increasing but not a power law."""
    return np.log(np.cumsum(np.random.default_rng(7).uniform(0.01, 1.0, len(TOKEN_GRID))))


@pytest.mark.parametrize("x", [1.0, 1.5, 2.5, 777.0, 50_000.0, TOKEN_GRID[-1], 70_000.0])
def test_an_uneven_token_table_reads_as_numpy_interpolates_its_logarithms(x):
    """First cell, last cell, the top and above it (linear): the cell a value falls in. A prefill of ``x``
    tokens alone in one chunk, less its attention (no logits here), is the token table at ``x``."""
    table = _uneven_token_table()
    inside = np.exp(np.interp(np.log(min(x, TOKEN_GRID[-1])), np.log(TOKEN_GRID), table))
    expected = inside * max(x / TOKEN_GRID[-1], 1.0) * 1e-3
    got = float(prefill_seconds(table, _log_ms(PROMPT_GRID, CONTEXT_E, CONTEXT_P), 0.0, x, x, 1e9)) - _attention_s(x)
    assert got == pytest.approx(expected, rel=1e-9)


def test_below_one_token_the_uneven_table_reads_its_first_point():
    """Half a new token still computes one: the table's first point, clamped."""
    table = _uneven_token_table()
    got = float(prefill_seconds(table, _log_ms(PROMPT_GRID, CONTEXT_E, CONTEXT_P), 0.0, 0.5, 1.0, 1e9))
    assert got - _attention_s(1.0) == pytest.approx(math.exp(table[0]) * 1e-3, rel=1e-9)
