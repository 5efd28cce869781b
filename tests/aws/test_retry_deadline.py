"""One retry deadline per command (connectors/retry_deadline.py), as the AWS clients hold it: scopes, the
failures that start it, and a client made after it passed, over the AWS JSON wire protocol."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from connectors.aws.retry_budget import RETRY_TIMEOUT_ENV, _failure, longest_backoff
from connectors.retry_deadline import deadline, one_deadline, time_left
from finops.errors import TransientProviderError

pytest.importorskip("boto3")

GOOD = (200, {"FormatVersion": "aws_v1", "PriceList": []})
UNAVAILABLE = (503, {"__type": "ServiceUnavailableException", "Message": "try later"})


def test_a_scope_keeps_the_first_failure_and_nested_scopes_join_it():
    with one_deadline():
        assert time_left("B", 120) == 120  # nothing failed: the whole budget
        first = deadline("B", 120, since=50.0)
        with one_deadline():
            assert deadline("B", 120, since=90.0) == first == 170.0
        assert deadline("B", 120) == 170.0
        assert deadline("OTHER", 10, since=60.0) == 70.0  # each provider its own
    assert deadline("B", 120, since=90.0) == 210.0  # outside a scope: the call alone


def test_the_scope_ends_with_the_command():
    with one_deadline():
        deadline("B", 5, since=0.0)
        assert time_left("B", 5) < 0
    with one_deadline():
        assert time_left("B", 5) == 5


def _http(status: int, headers: dict[str, str] | None = None) -> SimpleNamespace:
    return SimpleNamespace(status_code=status, headers=headers or {})


#: (HTTP status, error code, x-amz-retry-after) -> longest_backoff's keywords, or None for no retryable failure.
FAILURES = [
    (200, None, None, None),
    (400, "ValidationException", None, None),
    (403, "AccessDeniedException", None, None),
    (400, "ThrottlingException", None, {"throttled": True, "retry_after_s": 0.0}),
    (429, "TooManyRequests", "1500", {"throttled": True, "retry_after_s": 1.5}),
    (503, "ServiceUnavailable", "500", {"throttled": False, "retry_after_s": 0.5}),
    (500, "InternalFailure", "soon", {"throttled": False, "retry_after_s": 0.0}),
    (502, None, "-3", {"throttled": False, "retry_after_s": 0.0}),
]


@pytest.mark.parametrize(("status", "code", "header", "expected"), FAILURES)
def test_the_failures_that_start_the_deadline_are_those_botocore_retries(status, code, header, expected):
    parsed = {"Error": {"Code": code}} if code else {}
    assert _failure((_http(status, {"x-amz-retry-after": header} if header else {}), parsed), None) == expected


def test_a_connection_error_starts_it_with_the_short_scale():
    assert _failure(None, ConnectionError("refused")) == {"throttled": False, "retry_after_s": 0.0}
    # botocore waits rand x 0.05 x 2^(i-1) after a connection error: 0.05 s, then 0.1 s at most
    assert [longest_backoff(n, throttled=False, retry_after_s=0.0) for n in (1, 2)] == [0.05, 0.1]


def _get_products(json_server, failed_s_ago: float | None = None) -> int:
    """One get_products through a new client, in a command whose first failure was ``failed_s_ago`` (None:
    none yet); the number of requests it made."""
    from connectors.aws.session import AwsSession, translated

    before = len(json_server.requests)
    with one_deadline():
        client = AwsSession().client("pricing", "us-east-1")
        if failed_s_ago is not None:
            deadline(RETRY_TIMEOUT_ENV, 4.0, since=time.monotonic() - failed_s_ago)
        with translated("pricing", "get_products", client):
            client.get_products(ServiceCode="AmazonEC2")
    return len(json_server.requests) - before


def test_a_client_made_after_the_deadline_passed_makes_no_retry(json_server, monkeypatch):
    """The deadline is the command's, not the call's or the client's: once an earlier failure has spent it,
    a new client's failing call is not retried; in a fresh command the same failure is."""
    monkeypatch.setenv(RETRY_TIMEOUT_ENV, "4")
    json_server.responses = [UNAVAILABLE, GOOD]
    assert _get_products(json_server) == 2  # retried: the deadline has 4 s to go
    json_server.responses = [UNAVAILABLE, GOOD]
    with pytest.raises(TransientProviderError, match="ServiceUnavailableException"):
        _get_products(json_server, failed_s_ago=4.0)
    assert len(json_server.requests) == 3


def test_a_retry_is_made_only_when_it_ends_by_the_deadline(json_server, monkeypatch):
    """With 4 s of budget, an attempt takes up to 1 s to connect and 2 s to read: a retry after a failure
    starts only while 3 s and the wait before it (at most 0.05 s after a 503 without retry-after) are left."""
    monkeypatch.setenv(RETRY_TIMEOUT_ENV, "4")
    json_server.responses = [UNAVAILABLE, GOOD]
    assert _get_products(json_server, failed_s_ago=0.5) == 2  # 3.5 s left: a retry fits
    json_server.responses = [UNAVAILABLE, GOOD]
    with pytest.raises(TransientProviderError):
        _get_products(json_server, failed_s_ago=1.0)  # 3 s left, less the wait: it would not
    assert len(json_server.requests) == 3


def test_in_another_retry_mode_a_retry_leaves_room_for_the_longest_sleep_of_any_failure(json_server, monkeypatch):
    """botocore's legacy mode sleeps rand x 2^(i-1) s whatever the failure: the 0.05 s scale of standard mode does
    not hold there, so a retry needs room for a throttled sleep and its retry-after (6 s after one attempt)."""
    monkeypatch.setenv(RETRY_TIMEOUT_ENV, "4")
    monkeypatch.setenv("AWS_RETRY_MODE", "legacy")
    json_server.responses = [UNAVAILABLE, GOOD]
    with pytest.raises(TransientProviderError):
        _get_products(json_server, failed_s_ago=0.0)  # 4 s left, 3 s an attempt: 6 s of sleep does not fit
    assert len(json_server.requests) == 1
