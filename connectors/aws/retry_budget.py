"""How long a command's AWS calls may keep retrying: ``FINOPS_AWS_RETRY_TIMEOUT`` seconds (default 120), one
deadline for the whole command (:mod:`connectors.retry_deadline`).

botocore retries by itself (``standard`` mode here: up to 5 attempts, throttling, 5xx and connection
errors; :mod:`connectors.aws.session`), but its attempts are bounded one by one, not together: each may
spend its connect and read timeouts, and before each retry it sleeps ``rand(0, 1) x min(s x 2^(i-1), 20)``
seconds after the ``i``-th attempt (``s`` = 1 s for throttling, 0.05 s otherwise), raised towards the
service's ``x-amz-retry-after`` by up to 5 s more (botocore ``retries/standard.py``,
``ExponentialBackoff``). With botocore's own timeouts (60 s to connect, 60 s to read) five attempts against
a server that accepts and never answers take over ten minutes, and a bound per call lets a pull of many
pages take pages x budget.

So one budget bounds the command:

* its deadline starts at the start of the command's first call that fails (throttling, 5xx, an endpoint
  that refuses or does not answer) and holds for every later call, page and client of the command;
  calls that succeed spend none of it;
* each attempt's timeouts come from the budget: ``connect = min(10, budget / 4)`` and
  ``read = min(60, budget / 2)`` seconds (10 s and 60 s at the default);
* a retry is made only while the longest sleep botocore may take before it (:func:`longest_backoff`, for
  that failure and its ``x-amz-retry-after``) and a whole attempt still end by the deadline; otherwise the
  last error is raised at once (:func:`connectors.aws.session.translated` turns it into a
  :class:`~finops.errors.TransientProviderError` saying what to do);
* finding the credentials (the instance metadata service, SSO, a ``credential_process``) is bounded by
  the time left (:func:`connectors.aws.session.AwsSession.client`).

The command therefore stops retrying within the budget; what can pass it is one attempt already under way
at the deadline, the first of a call (at most its timeouts; a refused port, a few milliseconds). A read
that trickles a byte within every read timeout is not bounded (botocore's timeouts are per socket read).

>>> budget = RetryBudget(120)
>>> budget.connect_s, budget.read_s, budget.retry_allowed(left_s=90, backoff_s=0.1)
(10.0, 60.0, True)
>>> budget.retry_allowed(left_s=60, backoff_s=0.1)
False
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

from finops.errors import InputError

from ..retry_deadline import deadline, time_left

__all__ = ["RETRY_TIMEOUT_ENV", "THROTTLING_CODES", "RetryBudget", "longest_backoff"]

RETRY_TIMEOUT_ENV = "FINOPS_AWS_RETRY_TIMEOUT"
#: Error codes AWS uses for throttling (botocore's standard retry mode retries these too, on the 1 s scale).
THROTTLING_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException", "TooManyRequestsException",
    "ProvisionedThroughputExceededException", "TransactionInProgressException", "RequestLimitExceeded",
    "BandwidthLimitExceeded", "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
    "EC2ThrottledException",
})
_DEFAULT_S = 120.0
_CONNECT_S, _READ_S = 10.0, 60.0
#: botocore's cap on one backoff, its scales (throttling, other) and the most ``x-amz-retry-after`` may add.
_MAX_BACKOFF_S, _THROTTLING_SCALE_S, _OTHER_SCALE_S, _RETRY_AFTER_EXTRA_S = 20.0, 1.0, 0.05, 5.0
_RETRY_AFTER_HEADER = "x-amz-retry-after"
_STARTED = "finops_call_started"


def longest_backoff(attempts: int, *, throttled: bool = True, retry_after_s: float | None = None) -> float:
    """The longest sleep botocore's standard mode takes after ``attempts`` failed attempts: ``min(s x
    2^(attempts-1), 20)`` (``s`` = 1 s when throttled, else 0.05 s), raised towards ``retry_after_s`` (the
    service's ``x-amz-retry-after``) by at most 5 s; unknown, the most a header may add.

    >>> [longest_backoff(n) for n in (1, 2, 3, 4, 5, 6)]
    [6.0, 7.0, 9.0, 13.0, 21.0, 25.0]
    >>> longest_backoff(3, throttled=False, retry_after_s=0.5), longest_backoff(1, throttled=False, retry_after_s=0)
    (0.5, 0.05)
    """
    scale = _THROTTLING_SCALE_S if throttled else _OTHER_SCALE_S
    most = min(scale * 2.0 ** (attempts - 1), _MAX_BACKOFF_S)
    if retry_after_s is None:
        return most + _RETRY_AFTER_EXTRA_S
    return max(most, min(retry_after_s, most + _RETRY_AFTER_EXTRA_S))


def _failure(response: Any, caught: BaseException | None) -> dict[str, Any] | None:
    """``longest_backoff``'s keywords for an attempt that failed in a way botocore retries (a connection
    error, throttling, a 5xx), else ``None`` (a success, or an error no retry changes)."""
    if caught is not None:
        return {"throttled": False, "retry_after_s": 0.0}
    if not response:
        return None
    http, parsed = response
    status = int(getattr(http, "status_code", 0) or 0)
    code = (parsed or {}).get("Error", {}).get("Code") if isinstance(parsed, dict) else None
    throttled = status == 429 or code in THROTTLING_CODES
    if not (throttled or status >= 500):
        return None
    header = (getattr(http, "headers", None) or {}).get(_RETRY_AFTER_HEADER)
    try:
        retry_after_s = int(header) / 1000.0 if header is not None else 0.0
    except (TypeError, ValueError, OverflowError):  # botocore ignores a header it cannot read
        retry_after_s = 0.0
    return {"throttled": throttled, "retry_after_s": max(retry_after_s, 0.0)}


@dataclass(frozen=True)
class RetryBudget:
    """Seconds a command's AWS calls may keep retrying after the first failure; the timeouts follow from it."""

    seconds: float = _DEFAULT_S

    @classmethod
    def from_env(cls) -> RetryBudget:
        """The budget of ``FINOPS_AWS_RETRY_TIMEOUT`` (seconds), else 120 s."""
        text = os.environ.get(RETRY_TIMEOUT_ENV, "").strip()
        if not text:
            return cls()
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise InputError(f"{RETRY_TIMEOUT_ENV} must be a positive number of seconds, got {text!r}",
                             hint=f"for example {RETRY_TIMEOUT_ENV}=120, or unset it for the default")
        return cls(seconds)

    @property
    def connect_s(self) -> float:
        return min(_CONNECT_S, self.seconds / 4)

    @property
    def read_s(self) -> float:
        return min(_READ_S, self.seconds / 2)

    def time_left(self) -> float:
        """Seconds to the command's deadline (all of the budget while nothing has failed)."""
        return time_left(RETRY_TIMEOUT_ENV, self.seconds)

    def retry_allowed(self, left_s: float, backoff_s: float) -> bool:
        """Whether a retry after a sleep of at most ``backoff_s``, and its whole attempt, end within ``left_s``."""
        return backoff_s + self.connect_s + self.read_s <= left_s

    def bound(self, client: Any) -> Any:
        """``client`` with the command's deadline held on every call: a retry that would end past it refused."""
        events = client.meta.events

        def started(context: dict[str, Any], **_: Any) -> None:
            context[_STARTED] = time.monotonic()

        def within(attempts: int, request_dict: dict[str, Any], response: Any = None,
                   caught_exception: BaseException | None = None, **_: Any) -> bool | None:
            failure = _failure(response, caught_exception)
            if failure is None:
                return None  # botocore's retry handler decides (a success is kept as it is)
            if os.environ.get("AWS_RETRY_MODE", "standard").strip().lower() != "standard":
                failure = {}  # legacy and adaptive modes sleep otherwise: the longest sleep of any failure
            ends = deadline(RETRY_TIMEOUT_ENV, self.seconds, since=request_dict.get("context", {}).get(_STARTED))
            if self.retry_allowed(ends - time.monotonic(), longest_backoff(attempts, **failure)):
                return None
            return False  # no retry: botocore raises the last error

        events.register("before-call", started)
        # botocore's retry handler answers on needs-retry.<service>; handlers of the more specific name run
        # first, and the first answer that is not None decides, so this one goes first on that same name
        events.register_first(f"needs-retry.{client.meta.service_model.service_id.hyphenize()}", within)
        return client
