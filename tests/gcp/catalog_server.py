"""A local HTTP server speaking the Cloud Billing Catalog REST API v1 (stdlib ``http.server``, one thread).

Routes, as the real service (https://cloud.google.com/billing/docs/reference/rest/v1/services/list and
``services.skus/list``):

- ``GET /v1/services``                    -> ``{"services": [...], "nextPageToken": "..."}``
- ``GET /v1/services/{id}/skus``          -> ``{"skus": [...], "nextPageToken": "..."}``

Pages are ``page_size`` items long whatever the client asks (the real service may also return fewer);
``pageToken`` is opaque to the client. ``failures`` scripts error responses: a list of
``(path_fragment, page_token_or_None, status)`` consumed in order the first time a request matches,
answered with Google's JSON error body. ``always_fail`` answers every request with that status.
``fail_delay_s`` holds every error response that long (a slow, failing backend).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from .local_server import JsonHandler, LocalServer

_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
                 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class CatalogState:
    services: list[dict[str, Any]]
    skus: dict[str, list[dict[str, Any]]]
    page_size: int = 2
    failures: list[tuple[str, str | None, int]] = field(default_factory=list)
    always_fail: int | None = None
    fail_delay_s: float = 0.0
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)


def _page(items: list[dict[str, Any]], token: str, size: int, key: str) -> dict[str, Any]:
    start = int(token.removeprefix("page-")) if token else 0
    body: dict[str, Any] = {key: items[start:start + size]}
    body["nextPageToken"] = f"page-{start + size}" if start + size < len(items) else ""
    return body


class _Handler(JsonHandler):
    state: CatalogState

    def _error(self, status: int) -> None:
        time.sleep(self.state.fail_delay_s)
        name = _STATUS_NAMES.get(status, "UNKNOWN")
        self.send_json(status, {"error": {"code": status, "message": f"scripted {name}", "status": name}})

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        state = self.state
        state.requests.append((url.path, query))
        token = query.get("pageToken", [""])[0]
        if state.always_fail:
            return self._error(state.always_fail)
        for i, (fragment, page, status) in enumerate(state.failures):
            if fragment in url.path and (page is None or page == token):
                del state.failures[i]
                return self._error(status)
        parts = url.path.strip("/").split("/")
        if parts == ["v1", "services"]:
            return self.send_json(200, _page(state.services, token, state.page_size, "services"))
        if len(parts) == 4 and parts[:2] == ["v1", "services"] and parts[3] == "skus":
            skus = state.skus.get(f"services/{parts[2]}")
            if skus is None:
                return self._error(404)
            return self.send_json(200, _page(skus, token, state.page_size, "skus"))
        return self._error(404)


class CatalogServer(LocalServer):
    """Context manager: ``with CatalogServer(state) as endpoint:`` gives ``http://127.0.0.1:PORT``."""

    def __init__(self, state: CatalogState) -> None:
        super().__init__(type("Handler", (_Handler,), {"state": state}))
