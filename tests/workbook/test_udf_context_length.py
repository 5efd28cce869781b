"""The add-in's estimate and sizing functions take the engine's extended context, as ``finops estimate`` does.

Llama-2's native context is 4,096 tokens (its config's ``max_position_embeddings``): a 5,000 + 500 token
request runs past it. Without ``context_length`` (the argument, or the Workloads row's ``ContextLength``)
every function answers the core's refusal as one short line in the cell; with it, the same figures the core
computes on that context, and the estimate says it is beyond the native context.
"""

from __future__ import annotations

import numpy as np
import pytest

from addin import udfs
from finops.sizing import Workload, estimate, memory_fit, size_workload

LLAMA2 = ("llama-2-7b", "h100-sxm", "fp16", 1, 5000, 500)
REFUSAL = "exceed llama-2-7b's native context of 4096"
HEADERS = ["Workload", "Model", "Gpu", "Precision", "TP", "Concurrency", "ISL", "OSL", "ContextLength"]


def _refused(answer: object, says: str = REFUSAL) -> bool:
    return isinstance(answer, str) and answer.startswith("#FINOPS: ") and says in answer and len(answer) < 200


@pytest.mark.parametrize("call", [
    pytest.param(lambda ctx: udfs.LLM_ESTIMATE(*LLAMA2, "ttft_ms", None, None, None, None, ctx), id="LLM_ESTIMATE"),
    pytest.param(lambda ctx: udfs.LLM_TTFT_MS(*LLAMA2, 8, None, None, None, ctx), id="LLM_TTFT_MS"),
    pytest.param(lambda ctx: udfs.LLM_TPOT_MS(*LLAMA2, 8, None, None, None, ctx), id="LLM_TPOT_MS"),
    pytest.param(lambda ctx: udfs.LLM_TOKENS_PER_S(*LLAMA2, 8, None, None, None, ctx), id="LLM_TOKENS_PER_S"),
    pytest.param(lambda ctx: udfs.LLM_MAX_CONCURRENCY(*LLAMA2, ctx), id="LLM_MAX_CONCURRENCY"),
    pytest.param(lambda ctx: udfs.LLM_SIZE("llama-2-7b", 5000, 500, 20, None, None, "h100-sxm", "fp16", None, 1,
                                           None, None, ctx), id="LLM_SIZE"),
    pytest.param(lambda ctx: udfs.LLM_SIZING(HEADERS, ["w", *LLAMA2[:4], 20, 5000, 500, ctx], "Gpus"),
                 id="LLM_SIZING"),
    pytest.param(lambda ctx: udfs.LLM_RANKING(HEADERS, ["w", *LLAMA2[:4], 20, 5000, 500, ctx], 2), id="LLM_RANKING"),
])
def test_past_the_native_context_a_cell_refuses_without_the_context_length_and_answers_with_it(call):
    for blank in (None, "", [[None]]):    # an omitted argument, an empty cell, an empty one-cell range
        assert _refused(call(blank)), call(blank)
    assert _refused(call(5000), "exceed the context length of 5000")    # shorter than the request: refused too
    answer = call(5500)
    assert not (isinstance(answer, str) and answer.startswith("#")), answer
    assert call([[5500.0]]) == call(np.array([[5500]], dtype=object)) == answer    # as Excel hands a range over


def test_the_estimate_on_an_extended_context_is_the_cores_and_says_it_is_beyond_native():
    core = estimate(*LLAMA2[:2], precision="fp16", tp=1, isl=5000, osl=500, concurrency=8, context_length=5500)
    assert core.beyond_native_context
    assert udfs.LLM_TTFT_MS(*LLAMA2, 8, None, None, None, 5500) == core.ttft_ms
    assert udfs.LLM_TPOT_MS(*LLAMA2, 8, None, None, None, 5500) == core.tpot_ms
    assert udfs.LLM_ESTIMATE(*LLAMA2, "beyond_native_context", 8, None, None, None, 5500) == "yes"
    # within the native context an extended engine changes nothing, and the flag says so
    short = ("llama-2-7b", "h100-sxm", "fp16", 1, 2048, 512)
    assert udfs.LLM_ESTIMATE(*short, "beyond_native_context", 8, None, None, None, 5500) == "no"
    assert udfs.LLM_TTFT_MS(*short, 8, None, None, None, 5500) == udfs.LLM_TTFT_MS(*short, 8)


def test_the_kv_cache_holds_sequences_of_the_extended_context():
    """Llama-2 7B in FP16 caches 2 x 32 layers x 4,096 x 2 bytes = 0.5 MiB a token: a 5,500-token sequence takes
    344 blocks of 16 tokens, 2.6875 GiB, so an H100 (80 GB, 90 % for vLLM, less 12.6 GiB of weights and the
    runtime) holds about 20 of them."""
    slots = udfs.LLM_MAX_CONCURRENCY(*LLAMA2, 5500)
    assert slots == memory_fit(*LLAMA2[:2], precision="fp16", tp=1, isl=5000, osl=500, context_length=5500).max_concurrency
    assert 18 <= slots <= 22


def test_a_workloads_row_with_a_context_length_sizes_as_the_core_sizes_that_workload():
    row = ["w", *LLAMA2[:4], 20, 5000, 500, 5500]
    sized = size_workload(Workload(name="w", model="llama-2-7b", isl=5000, osl=500, concurrency=20,
                                   context_length=5500), gpu="h100-sxm", precision="fp16", tp=1)
    option = sized.choice.option
    assert option is not None and sized.best is not None
    assert udfs.LLM_SIZING(HEADERS, row, "Gpus") == option.gpus
    assert udfs.LLM_SIZING(HEADERS, row, "MonthlyCost") == pytest.approx(float(option.monthly_cost.amount))
    assert udfs.LLM_RANKING(HEADERS, row, 1)[1][:3] == [sized.best.gpu, sized.best.precision, sized.best.tp]


def test_the_sizing_answers_say_when_the_request_runs_past_the_native_context():
    """LLM_SIZE, LLM_RANKING and LLM_SIZING flag a request beyond the model's native context, as ``estimate`` does:
    ``yes`` for 5,000 + 500 tokens on Llama-2 (native 4,096) served on 5,500, ``no`` for 2,048 + 512 on the same
    engine. The flag is the request's, so a choice that misses its targets still shows it."""
    def column(table, name):
        return [row[table[0].index(name)] for row in table[1:]]

    past = udfs.LLM_SIZE("llama-2-7b", 5000, 500, 20, None, None, "h100-sxm", "fp16", None, 2, None, None, 5500)
    within = udfs.LLM_SIZE("llama-2-7b", 2048, 512, 20, None, None, "h100-sxm", "fp16", None, 2, None, None, 5500)
    assert column(past, "beyond_native_context") == ["yes", "yes"]
    assert column(within, "beyond_native_context") == ["no", "no"]
    row = ["w", *LLAMA2[:4], 20, 5000, 500, 5500]
    assert column(udfs.LLM_RANKING(HEADERS, row, 2), "beyond_native_context") == ["yes", "yes"]
    assert udfs.LLM_SIZING(HEADERS, row, "BeyondNativeContext") == "yes"
    assert udfs.LLM_SIZING(HEADERS, ["w", *LLAMA2[:4], 20, 2048, 512, 5500], "BeyondNativeContext") == "no"
    assert udfs.LLM_SIZING(HEADERS, ["w", *LLAMA2[:4], 20, 2048, 512, None], "BeyondNativeContext") == "no"
    # a target no H100 configuration meets: the choice is unpriced, the flag still the request's
    missed = ["w", *LLAMA2[:4], 20, 5000, 500, 5500, 1]
    assert udfs.LLM_SIZING([*HEADERS, "TtftTargetMs"], missed, "MeetsTargets") == "no"
    assert udfs.LLM_SIZING([*HEADERS, "TtftTargetMs"], missed, "BeyondNativeContext") == "yes"
    sized = size_workload(Workload(name="w", model="llama-2-7b", isl=5000, osl=500, concurrency=20,
                                   context_length=5500), gpu="h100-sxm", precision="fp16", tp=1)
    assert sized.best is not None and sized.best.beyond_native_context
