"""The one network seam to Prometheus: a GET of an HTTP API path, bounded and retried.

:class:`Transport` is the interface (``get(path, params) -> bytes``); :class:`HttpTransport` speaks HTTP
with the standard library's ``urllib``: a timeout per request, :data:`RETRIES` tries with doubling
backoff on a refused connection, a timeout or a 5xx/429 answer, and the bearer token read from the
environment variable :data:`TOKEN_ENV` (never put into a message; any message that could hold it is
redacted). Errors leave as the :mod:`finops.errors` tree with the cause kept: no answer and 5xx become
:class:`~finops.errors.TransientProviderError`, other HTTP errors :class:`~finops.errors.ProviderError`
with Prometheus' own ``error`` text.

Credentials written into the URL (``https://user:password@host``) are sent as HTTP basic authentication and
taken out of the URL the transport keeps and shows; the query of the URL is kept for the requests, and every
message shows the URL with its secrets redacted (:func:`finops.errors.redacted`). An answer is read up to
:data:`finops.limits.MAX_INFLATED_BYTES`; a larger one is refused.

>>> HttpTransport("http://127.0.0.1:9090/").base_url
'http://127.0.0.1:9090'
>>> HttpTransport("https://bob:s3cret@prom.example/").base_url
'https://prom.example'
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Protocol

from finops.errors import InputError, ProviderError, TransientProviderError, redacted
from finops.limits import MAX_INFLATED_BYTES

__all__ = ["RETRIES", "TIMEOUT_S", "TOKEN_ENV", "HttpTransport", "Transport"]

#: Environment variable holding the bearer token, when the server wants one.
TOKEN_ENV = "FINOPS_PROMETHEUS_TOKEN"
TIMEOUT_S = 10.0
RETRIES = 3
_BACKOFF_S = 0.5


class Transport(Protocol):
    """GET ``path`` (``/api/v1/...``) with query ``params``; the body of a 200 answer."""

    def get(self, path: str, params: Mapping[str, str]) -> bytes: ...


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _api_error(body: bytes) -> str:
    try:
        return str(json.loads(body).get("error", "")).strip()
    except (ValueError, AttributeError):
        return ""


class HttpTransport:
    """HTTP(S) to one Prometheus server at ``base_url``."""

    def __init__(self, base_url: str, *, timeout_s: float = TIMEOUT_S, retries: int = RETRIES,
                 backoff_s: float = _BACKOFF_S) -> None:
        try:
            parsed = urllib.parse.urlsplit(base_url.strip())
            parsed.port  # noqa: B018 - a port that is not a number raises here, not at the first request
        except ValueError:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise InputError(f"--prometheus must be an http(s) URL, got {redacted(base_url)!r}",
                             hint="for example --prometheus http://prometheus.monitoring:9090")
        self._basic = None
        if parsed.username is not None:  # user:password@ in the URL: basic authentication, out of the URL
            pair = f"{urllib.parse.unquote(parsed.username)}:{urllib.parse.unquote(parsed.password or '')}"
            self._basic = "Basic " + base64.b64encode(pair.encode()).decode()
            parsed = parsed._replace(netloc=parsed.netloc.rpartition("@")[2])
        self._query = urllib.parse.parse_qsl(parsed.query)  # e.g. ?access_token=...: sent, never shown
        self.base_url = urllib.parse.urlunsplit(parsed._replace(query="", fragment="")).rstrip("/")
        self.timeout_s, self.retries, self.backoff_s = timeout_s, max(1, retries), backoff_s

    def get(self, path: str, params: Mapping[str, str]) -> bytes:
        token = os.environ.get(TOKEN_ENV) or None
        url = f"{self.base_url}{path}?{urllib.parse.urlencode([*self._query, *params.items()])}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        elif self._basic:
            request.add_header("Authorization", self._basic)
        last: Exception | None = None
        for attempt in range(self.retries):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                    body = answer.read(MAX_INFLATED_BYTES + 1)
                if len(body) > MAX_INFLATED_BYTES:
                    raise ProviderError(f"Prometheus at {self.base_url} answered {path} with more than "
                                        f"{MAX_INFLATED_BYTES // 1024 // 1024} MiB",
                                        hint="ask for fewer series or a coarser --step")
                return body
            except urllib.error.HTTPError as exc:
                body = exc.read(1 << 16)
                if exc.code >= 500 or exc.code == 429:
                    last = exc
                    continue
                detail = _redact(_api_error(body) or exc.reason or "", token)
                hint = (f"set {TOKEN_ENV} to a token the server accepts" if exc.code in (401, 403)
                        else "check the URL and the query")
                raise ProviderError(f"Prometheus at {self.base_url} answered HTTP {exc.code} to {path}"
                                    + (f": {detail}" if detail else ""), hint=hint) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = exc
        reason = getattr(last, "reason", None) or last
        raise TransientProviderError(
            f"Prometheus at {self.base_url} did not answer {path} after {self.retries} tries: "
            + _redact(str(reason), token),
            hint="check that the server runs and the URL is right; try again later") from last
