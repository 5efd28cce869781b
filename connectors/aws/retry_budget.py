"""How long one AWS call may take, its retries included: ``FINOPS_AWS_RETRY_TIMEOUT`` seconds (default 120).

botocore retries by itself (``standard`` mode here: up to 5 attempts, throttling, 5xx and connection
errors; :mod:`connectors.aws.session`), but its attempts are bounded one by one, not together: each may
spend its connect and read timeouts, and before each retry it sleeps ``rand(0, 1) x min(s x 2^(i-1), 20)``
seconds after the ``i``-th attempt (``s`` = 1 s for throttling, 0.05 s otherwise), up to 5 s more when the
service sends ``x-amz-retry-after`` (botocore ``retries/standard.py``, ``ExponentialBackoff``). With
botocore's own timeouts (60 s to connect, 60 s to read) five attempts against a server that accepts and
never answers take over ten minutes.

So one budget bounds the whole call:

* each attempt's timeouts come from the budget: ``connect = min(10, budget / 4)`` and
  ``read = min(60, budget / 2)`` seconds (10 s and 60 s at the default);
* a retry is made only while the time spent, the longest sleep botocore may take before it
  (:func:`longest_backoff`) and a whole attempt still fit in the budget; otherwise the last error is
  raised at once (:func:`connectors.aws.session.translated` turns it into a
  :class:`~finops.errors.TransientProviderError` saying what to do).

A call therefore ends within the budget: its first attempt takes at most three quarters of it (the two
timeouts), and every retry is made only when it ends within it. Not counted: finding the credentials
before the first attempt (the instance metadata service, SSO).
A refused port fails each attempt at once: five attempts in well under a second. A silent server costs one
read timeout per attempt: at the default, one attempt and 60 s. A read that trickles a byte within every
read timeout is not bounded by it (botocore's timeouts are per socket read).

>>> budget = RetryBudget(120)
>>> budget.connect_s, budget.read_s, budget.retry_allowed(elapsed_s=30, attempts=2)
(10.0, 60.0, True)
>>> budget.retry_allowed(elapsed_s=60, attempts=1)
False
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

from finops.errors import InputError

__all__ = ["RETRY_TIMEOUT_ENV", "RetryBudget", "longest_backoff"]

RETRY_TIMEOUT_ENV = "FINOPS_AWS_RETRY_TIMEOUT"
_DEFAULT_S = 120.0
_CONNECT_S, _READ_S = 10.0, 60.0
#: botocore's cap on one backoff and the most ``x-amz-retry-after`` may add to it (retries/standard.py).
_MAX_BACKOFF_S, _RETRY_AFTER_EXTRA_S = 20.0, 5.0
_STARTED = "finops_call_started"


def longest_backoff(attempts: int) -> float:
    """The longest sleep botocore's standard mode takes after ``attempts`` failed attempts (a throttled one,
    whose scale is 1 s, with the most a retry-after header adds).

    >>> [longest_backoff(n) for n in (1, 2, 3, 4, 5, 6)]
    [6.0, 7.0, 9.0, 13.0, 21.0, 25.0]
    """
    return min(2.0 ** (attempts - 1), _MAX_BACKOFF_S) + _RETRY_AFTER_EXTRA_S


@dataclass(frozen=True)
class RetryBudget:
    """Seconds one AWS call may take, retries included; the per-attempt timeouts follow from it."""

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

    def retry_allowed(self, elapsed_s: float, attempts: int) -> bool:
        """Whether a retry after ``attempts`` attempts, ``elapsed_s`` seconds into the call, ends in the budget."""
        return elapsed_s + longest_backoff(attempts) + self.connect_s + self.read_s <= self.seconds

    def bound(self, client: Any) -> Any:
        """``client`` with the budget held on every call: the call's start noted, a retry past it refused."""
        events = client.meta.events

        def started(context: dict[str, Any], **_: Any) -> None:
            context[_STARTED] = time.monotonic()

        def within(attempts: int, request_dict: dict[str, Any], **_: Any) -> bool | None:
            begun = request_dict.get("context", {}).get(_STARTED)
            if begun is None or self.retry_allowed(time.monotonic() - begun, attempts):
                return None  # botocore's retry handler decides
            return False  # no retry: botocore raises the last error (a successful response is kept as it is)

        events.register("before-call", started)
        # botocore's retry handler answers on needs-retry.<service>; handlers of the more specific name run
        # first, and the first answer that is not None decides, so this one goes first on that same name
        events.register_first(f"needs-retry.{client.meta.service_model.service_id.hyphenize()}", within)
        return client
