"""The Cloud Billing Catalog API seam: services and SKUs through ``google-cloud-billing`` (I/O only).

The real ``CloudCatalogClient`` with ``transport="rest"`` talks to ``cloudbilling.googleapis.com``,
or to the endpoint named by ``FINOPS_GCP_CATALOG_ENDPOINT`` (for example ``http://127.0.0.1:8080``
for a local server or a proxy). Credentials are Application Default Credentials; a local endpoint
(``localhost``/``127.0.0.1``) is called anonymously. Pagination follows ``nextPageToken``; throttling
(429) and unavailability (500, 503, 504) are retried by the client's own ``Retry`` with exponential
backoff, for every page, until the command's deadline (``FINOPS_GCP_RETRY_TIMEOUT``,
:meth:`RetrySettings.until_deadline`). What still fails is translated here, and only here, into
:class:`~finops.errors.TransientProviderError` (retryable) or :class:`~finops.errors.ProviderError`.

SKUs are yielded as plain dicts in the REST JSON shape, so :mod:`connectors.gcp.skus` stays pure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from finops.errors import DependencyError, InputError, ProviderError, TransientProviderError

__all__ = ["CATALOG_ENDPOINT_ENV", "RETRY_TIMEOUT_ENV", "RetrySettings", "find_services", "iter_skus", "make_client",
           "translate_errors"]

CATALOG_ENDPOINT_ENV = "FINOPS_GCP_CATALOG_ENDPOINT"
RETRY_TIMEOUT_ENV = "FINOPS_GCP_RETRY_TIMEOUT"
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
_HINT_AUTH = ("set up Application Default Credentials (`gcloud auth application-default login` or "
              "GOOGLE_APPLICATION_CREDENTIALS) allowed to read what is asked for")


@dataclass(frozen=True)
class RetrySettings:
    """Backoff for retryable responses: ``initial`` doubling up to ``maximum`` seconds, ``timeout`` in all."""

    initial: float = 1.0
    maximum: float = 30.0
    multiplier: float = 2.0
    timeout: float = 120.0

    @classmethod
    def from_env(cls) -> RetrySettings:
        """Defaults, with the total retry budget from ``FINOPS_GCP_RETRY_TIMEOUT`` (seconds) if set."""
        budget = os.environ.get(RETRY_TIMEOUT_ENV)
        if not budget:
            return cls()
        try:
            timeout = float(budget)
        except ValueError:
            raise InputError(f"{RETRY_TIMEOUT_ENV} must be a number of seconds, got {budget!r}") from None
        return cls(initial=min(1.0, timeout / 10), maximum=min(30.0, timeout / 2), timeout=timeout)

    def retry(self) -> Any:
        """A ``google.api_core.retry.Retry`` retrying 429, 500, 503 and 504 until the command's deadline."""
        from google.api_core import exceptions, retry

        predicate = retry.if_exception_type(exceptions.TooManyRequests, exceptions.InternalServerError,
                                            exceptions.ServiceUnavailable, exceptions.GatewayTimeout)
        return retry.Retry(predicate=self.until_deadline(predicate), initial=self.initial, maximum=self.maximum,
                           multiplier=self.multiplier, timeout=self.timeout)

    def until_deadline(self, predicate: Callable[[BaseException], bool]) -> Callable[[BaseException], bool]:
        """``predicate``, within one deadline for the whole command (:mod:`connectors.retry_deadline`): it starts
        at the command's first retryable failure and holds for every later call, page and query; past it a
        retryable failure raises ``RetryError``, as a retry that ran out of time does. A ``Retry``'s own
        ``timeout`` counts from its call's first attempt, so a paginated list (a retry per page) or a query
        re-run by the job retry (whose calls retry on their own) would otherwise add up budgets."""
        from google.api_core.exceptions import RetryError

        from ..retry_deadline import deadline

        def retryable(exc: BaseException) -> bool:
            if not predicate(exc):
                return False
            if time.monotonic() >= deadline(RETRY_TIMEOUT_ENV, self.timeout):
                raise RetryError(f"retries stopped at the command's {self.timeout:g} s budget ({RETRY_TIMEOUT_ENV})",
                                 exc) from exc
            return True
        return retryable


def make_client(endpoint: str | None = None) -> Any:
    """A ``CloudCatalogClient`` over REST, pointed at ``endpoint`` or ``FINOPS_GCP_CATALOG_ENDPOINT``."""
    try:
        from google.cloud import billing_v1
    except ImportError as exc:  # pragma: no cover - the gcp extra is installed in tests
        raise DependencyError("google-cloud-billing", "gcp") from exc
    endpoint = endpoint or os.environ.get(CATALOG_ENDPOINT_ENV) or None
    options = {"api_endpoint": endpoint} if endpoint else None
    credentials = None
    if endpoint and (urlparse(endpoint if "://" in endpoint else f"//{endpoint}").hostname or "") in _LOCAL_HOSTS:
        from google.auth.credentials import AnonymousCredentials

        credentials = AnonymousCredentials()
    try:
        return billing_v1.CloudCatalogClient(transport="rest", client_options=options, credentials=credentials)
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError and friends
        raise ProviderError("no Google Cloud credentials for the Cloud Billing Catalog API",
                            hint=_HINT_AUTH) from exc


def find_services(client: Any, display_names: tuple[str, ...], settings: RetrySettings) -> dict[str, str]:
    """Display name -> resource name (``services/6F81-5844-456A``) for the wanted public services."""
    from google.cloud import billing_v1

    found: dict[str, str] = {}
    with translate_errors("listing Cloud Billing services"):
        for service in client.list_services(request=billing_v1.ListServicesRequest(page_size=5000),
                                            retry=settings.retry()):
            if service.display_name in display_names:
                found[service.display_name] = service.name
    return found


def iter_skus(client: Any, service: str, settings: RetrySettings, currency: str = "USD",
              keep: Callable[[str, str], bool] | None = None) -> Iterator[dict[str, Any]]:
    """The public SKUs of ``service`` (all pages), each as a REST-shaped dict with camelCase keys.

    ``keep(description, resource_group)`` selects SKUs before they are converted (most of a
    catalog's tens of thousands of SKUs are not wanted, and conversion is the costly part).
    """
    from google.cloud import billing_v1

    request = billing_v1.ListSkusRequest(parent=service, currency_code=currency, page_size=5000)
    with translate_errors(f"listing SKUs of {service}"):
        for sku in client.list_skus(request=request, retry=settings.retry()):
            if keep is None or keep(sku.description, sku.category.resource_group):
                yield billing_v1.Sku.to_dict(sku, preserving_proto_field_name=False, use_integers_for_enums=False)


class translate_errors:
    """Turn google-api-core / transport errors from one Google API (the Cloud Billing Catalog unless
    ``api`` says otherwise; its endpoint override is ``endpoint_env``) into the product's error tree,
    keeping the cause."""

    def __init__(self, doing: str, api: str = "Cloud Billing Catalog API",
                 endpoint_env: str = CATALOG_ENDPOINT_ENV) -> None:
        self.doing, self.api, self.endpoint_env = doing, api, endpoint_env

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None or isinstance(exc, (ProviderError, GeneratorExit)):
            return False
        from google.api_core import exceptions
        from google.auth import exceptions as auth_exceptions

        api, doing = self.api, self.doing
        if isinstance(exc, exceptions.RetryError) and _unreachable(exc.cause):
            raise TransientProviderError(f"cannot reach the {api} while {doing} (retried with backoff)",
                                         hint=f"check the network or {self.endpoint_env}") from exc
        if isinstance(exc, exceptions.RetryError):
            raise TransientProviderError(f"{api} kept failing while {doing}",
                                         hint="the client retried with backoff until the command's "
                                              f"{RETRY_TIMEOUT_ENV}; try again later") from exc
        if isinstance(exc, (exceptions.TooManyRequests, exceptions.ServerError)):
            raise TransientProviderError(f"{api} error {exc.code} while {doing}",
                                         hint="throttled or unavailable; try again later") from exc
        if isinstance(exc, (exceptions.Unauthorized, exceptions.Forbidden, auth_exceptions.GoogleAuthError)):
            raise ProviderError(f"{api} refused the credentials while {doing}", hint=_HINT_AUTH) from exc
        if isinstance(exc, exceptions.GoogleAPICallError):
            reason = str(exc.message).split(": ", 1)[-1]  # drop the "GET <url>: " prefix
            raise ProviderError(f"{api} error {exc.code} while {doing}: {reason}",
                                hint=f"check the names asked for, and {self.endpoint_env} if set") from exc
        if _unreachable(exc):
            raise TransientProviderError(f"cannot reach the {api} while {doing}",
                                         hint=f"check the network or {self.endpoint_env}") from exc
        return False


def _unreachable(exc: BaseException | None) -> bool:
    """Whether an error is a network failure (no connection, DNS, TLS), not an answer from the API; a
    ``RetryError`` (possibly nested: BigQuery's job retry around its call retry) by its last cause."""
    from google.api_core import exceptions

    while isinstance(exc, exceptions.RetryError):
        exc = exc.cause
    return isinstance(exc, OSError) or type(exc).__module__.startswith(("requests", "urllib3"))
