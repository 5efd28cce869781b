"""The engine versions the performance model was measured on, and the check of a version a user names.

The model's constants are fitted per engine, not per version; what it knows about a version is which
measurements came from it: the calibration rows (``engine_version`` of
``finops/data/calibration/aiconfigurator-silicon.csv.gz``), the measured kernel tables (the version of
each table in ``finops/data/kernels/*.npz``) and the published rows of other accelerators
(``published_other_accelerators.csv``). ``finops estimate --engine-version`` and ``finops size
--engine-version`` name the version a user runs: one none of those came from is an input error that
lists what is covered (leaving the option out gives the estimate anyway, extrapolated and marked by
``calibrated``).

>>> "0.12.0" in covered_versions("vllm"), version_covered("vllm", "0.12"), version_covered("vllm", "0.1")
(True, True, False)
"""

from __future__ import annotations

import ast
import re
from functools import cache

from ..errors import InputError
from .calibration import bundled_rows
from .engine_constants import ENGINES
from .kernels import kernel_gpus, tables_meta
from .published import published_rows

__all__ = ["check_engine_version", "covered_versions", "version_covered"]


@cache
def _calibration_versions() -> tuple[tuple[str, str], ...]:
    return tuple(sorted({(r["engine"], r["engine_version"]) for r in bundled_rows() if r["engine_version"]}))


def _kernel_versions() -> set[tuple[str, str]]:
    found = set()
    for gpu in kernel_gpus():
        versions = ast.literal_eval(str((tables_meta(gpu) or {}).get("versions", "{}")))
        found.update((table.split("/")[0], version) for table, version in versions.items())
    return found


@cache
def covered_versions(engine: str) -> tuple[str, ...]:
    """The versions of ``engine`` that some bundled measurement came from, in version order."""
    # a published row's version follows the engine's name; a row run through another library names it instead
    published = {(r.engine, version) for r in published_rows()
                 if (version := r.engine_version.split()[1])[:1].isdigit()}
    every = set(_calibration_versions()) | _kernel_versions() | published
    return tuple(sorted((version for name, version in every if name == engine), key=_natural))


def _natural(version: str) -> list[tuple[int, str]]:
    """Sort key: numbers as numbers (0.6 before 0.10)."""
    return [(int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", version) if part]


def version_covered(engine: str, version: str) -> bool:
    """True when ``version`` is a covered version of ``engine`` or names a series of them (``0.12``
    covers ``0.12.0``; a dot boundary, so ``0.1`` does not)."""
    wanted = version.strip()
    return any(v == wanted or v.startswith(wanted + ".") for v in covered_versions(engine))


def check_engine_version(engine: str, version: str | None) -> None:
    """Raise an :class:`InputError` listing the covered versions when ``version`` is not one of them.

    >>> check_engine_version("trtllm", "0.8")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: trtllm 0.8 is not covered: no calibration row, kernel table or published row was measured on it. Hint: covered trtllm versions: 0.9.0, 0.13.0, 1.0, 1.0.0, 1.0.0rc3, 1.1.0rc2.post2, 1.2.0rc6.post1, 1.2.0rc6.post2, 1.2.0rc6.post3, 1.3.0rc20; or leave --engine-version out (the estimate then extrapolates: see its calibrated field)
    """
    if version is None or engine not in ENGINES or version_covered(engine, version):
        return   # an unknown engine is estimate's error to report
    raise InputError(f"{engine} {version.strip()} is not covered: no calibration row, kernel table or published row "
                     "was measured on it",
                     hint=f"covered {engine} versions: {', '.join(covered_versions(engine)) or 'none'}; or leave "
                          "--engine-version out (the estimate then extrapolates: see its calibrated field)")
