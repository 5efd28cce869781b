"""Under a mutation run (``scripts/mutation.sh``), the kernel tables and composed step kernels are built again
in every test: mutmut 3 forks each mutant's run from a process that has already run the tests once, so the
``functools.cache`` of ``finops.sizing.kernels`` would hand every mutant the unmutated objects and the
mutants of :class:`KernelTable` and :meth:`ModelKernels.of` could never fail a test. Outside a mutation
run nothing is cleared (the tables load once per process)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _fresh_kernel_caches_under_mutation():
    if os.environ.get("MUTANT_UNDER_TEST"):
        from finops.sizing import kernels
        for cached in (kernels._archive, kernels._table, kernels.step_kernels):
            cached.cache_clear()
    yield
