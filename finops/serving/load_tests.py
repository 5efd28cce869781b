"""Load-test results read into the loop: measured throughput and latency of a serving line's configuration.

A load test is named against a serving plan line (``PLANLINE=FILE``); the line gives the engine, model,
GPU, precision and TP it ran, and the file is read by ``finops calibrate``'s own reader
(:func:`finops.sizing.load_test_results.read_load_test`: ``vllm bench serve --save-result`` JSON,
AIPerf/GenAI-Perf ``profile_export*.json``, GuideLLM reports). Per point (a concurrency ``c``):

    tokens/s per GPU = c x osl / (TTFT + (osl - 1) x TPOT) / tp         (calibration.throughput)

measured from the file's mean TTFT and TPOT, predicted from the performance model's at the same
point (:func:`~finops.sizing.calibration.predict`). The file's ratio is the geometric mean of the
points' measured / predicted, an observation of the throughput correction beside the month's
production ratio (:mod:`finops.sizing.corrections`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..sizing.calibration import Measurement, predict, throughput
from ..sizing.load_test_results import read_load_test
from .serving_lines import ServingLine

__all__ = ["LoadTestResult", "load_test_ratios", "parse_load_test_option", "read_load_tests"]


@dataclass(frozen=True)
class LoadTestResult:
    """One load-test file of one serving line: its points, measured and predicted throughput per GPU-hour."""

    line: ServingLine
    file: str
    points: tuple[Measurement, ...]
    measured_tokens_per_gpu_hour: tuple[float, ...]
    predicted_tokens_per_gpu_hour: tuple[float, ...]

    @property
    def plan_line(self) -> str:
        return self.line.plan_line

    @property
    def ratio(self) -> float:
        """Geometric mean over the points of measured / predicted throughput."""
        logs = [math.log(m / p) for m, p in zip(self.measured_tokens_per_gpu_hour, self.predicted_tokens_per_gpu_hour)]
        return math.exp(sum(logs) / len(logs))

    def source(self, month: str) -> str:
        """The observation's label in the correction table."""
        return f"{month} load test {self.file}"


def parse_load_test_option(value: str) -> tuple[str, Path]:
    """``'PLANLINE=FILE'`` -> ``(plan line, path)``.

    >>> parse_load_test_option("aws-inference-prod=bench.json")
    ('aws-inference-prod', PosixPath('bench.json'))
    """
    line, sep, path = value.partition("=")
    if not sep or not line.strip() or not path.strip():
        raise InputError(f"--load-test takes PLANLINE=FILE, got {value!r}",
                         hint="for example --load-test aws-inference-prod=vllm-bench.json")
    return line.strip(), Path(path.strip())


def read_load_tests(tests: Sequence[tuple[str, Path]], lines: Sequence[ServingLine]) -> tuple[LoadTestResult, ...]:
    """Read every ``(plan line, file)`` against the serving line of that name (with the bundled model)."""
    from ..sizing.engine_constants import Calibration

    calibration = Calibration.bundled()
    by_name = {line.plan_line: line for line in lines}
    out = []
    for plan_line, path in tests:
        line = by_name.get(plan_line)
        if line is None:
            raise InputError(f"--load-test names plan line {plan_line!r}, which is not a serving line",
                             hint=f"serving lines: {', '.join(by_name) or 'none'}")
        rows = read_load_test(path, engine=line.engine, model=line.model, gpu=line.gpu, precision=line.precision,
                              tp=line.tp)
        measured = throughput(rows, np.array([r.ttft_ms for r in rows]), np.array([r.tpot_ms for r in rows]))
        predicted = throughput(rows, *predict(rows, calibration))
        per_gpu_hour = 3600.0 / line.tp
        out.append(LoadTestResult(line, Path(path).name, tuple(rows),
                                  tuple(float(v) * per_gpu_hour for v in measured),
                                  tuple(float(v) * per_gpu_hour for v in predicted)))
    return tuple(out)


def load_test_ratios(results: Sequence[LoadTestResult]) -> dict[str, dict[tuple[str, str, str], float]]:
    """``{file: {(engine, gpu, model): ratio}}``: one observation per file."""
    out: dict[str, dict[tuple[str, str, str], float]] = {}
    for r in results:
        out.setdefault(r.file, {})[(r.line.engine, r.line.gpu, r.line.model)] = r.ratio
    return out
