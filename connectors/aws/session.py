"""The one network seam to AWS: boto3 clients with botocore's retries, errors translated on the way out.

Clients come from a boto3 session, so the standard credential chain applies (environment, ``AWS_PROFILE``
or ``profile=``, shared config and SSO, instance roles). ``AWS_ENDPOINT_URL`` and the per-service
``AWS_ENDPOINT_URL_<SERVICE>`` are honoured by botocore itself. Retries are botocore's ``standard`` mode
(exponential backoff with jitter on throttling and 5xx) unless ``AWS_RETRY_MODE`` / ``AWS_MAX_ATTEMPTS``
say otherwise; there is no retry loop here. One deadline bounds the retries of the whole command, every
call, page and client, and finding the credentials (``FINOPS_AWS_RETRY_TIMEOUT``, default 120 s:
:mod:`connectors.aws.retry_budget`).

Every botocore error is translated by :func:`translated` into the :mod:`finops.errors` tree, keeping the
original as ``__cause__``: throttling, 5xx and unreachable endpoints become
:class:`~finops.errors.TransientProviderError`, the rest :class:`~finops.errors.ProviderError`. Messages
carry the service, operation and AWS error code, never credentials (any credential text a foreign
message might hold is redacted).

>>> redact("signature for AKIAEXAMPLE failed", ["AKIAEXAMPLE"])
'signature for *** failed'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from finops.errors import DependencyError, InputError, ProviderError, TransientProviderError

from .retry_budget import RETRY_TIMEOUT_ENV, THROTTLING_CODES, RetryBudget

__all__ = ["AwsSession", "pages", "redact", "translated"]

#: Error codes that mean the caller's identity or permissions are wrong.
ACCESS_CODES = frozenset({
    "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
    "InvalidClientTokenId", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
    "AuthFailure", "InvalidSignatureException",
})
_DEFAULT_RETRY_MODE = "standard"
_DEFAULT_MAX_ATTEMPTS = 5


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class AwsSession:
    """Where AWS clients come from. ``profile=None`` means the standard chain (``AWS_PROFILE`` included)."""

    profile: str | None = None

    def _boto_session(self) -> Any:
        try:
            import boto3
        except ImportError:  # pragma: no cover - the aws extra is installed in development
            raise DependencyError("boto3", "aws") from None
        with translated("session", "create"):
            return boto3.session.Session(profile_name=self.profile)

    def client(self, service: str, region: str | None = None) -> Any:
        """A client for ``service`` (``pricing``, ``ec2``, ``s3``, ...) with botocore retries configured."""
        from botocore.config import Config

        retries: dict[str, Any] = {}
        if not os.environ.get("AWS_RETRY_MODE"):
            retries["mode"] = _DEFAULT_RETRY_MODE
        if not os.environ.get("AWS_MAX_ATTEMPTS"):
            retries["total_max_attempts"] = _DEFAULT_MAX_ATTEMPTS
        budget = RetryBudget.from_env()
        config = Config(retries=retries or None, connect_timeout=budget.connect_s, read_timeout=budget.read_s,
                        user_agent_extra="llm-finops")
        session = self._boto_session()
        _find_credentials(session, budget)
        with translated(service, "client"):
            return budget.bound(session.client(service, region_name=region or session.region_name or "us-east-1",
                                               config=config))


def _find_credentials(session: Any, budget: RetryBudget) -> None:
    """Resolve ``session``'s credentials (botocore keeps them on the session for its clients) within the time
    left to the command's deadline (past it, as long as one connection may take, like the first attempt of a
    call): the chain may call the instance metadata service, SSO or STS, or run a ``credential_process``,
    none of which the retry budget's timeouts reach. The lookup runs in a daemon thread; one still running
    then is left behind and the command stops."""
    import threading

    found: dict[str, BaseException] = {}

    def look_up() -> None:
        try:
            session.get_credentials()
        except BaseException as exc:  # noqa: BLE001 - handed over to the calling thread
            found["error"] = exc

    left = max(budget.time_left(), budget.connect_s)  # past the deadline, as long as one connection may take
    worker = threading.Thread(target=look_up, name="finops-aws-credentials", daemon=True)
    worker.start()
    worker.join(left)
    if worker.is_alive():
        raise TransientProviderError(
            f"AWS credentials: still looking for them after {left:g} s, the time left of "
            f"{RETRY_TIMEOUT_ENV}={budget.seconds:g} s (the profile's credential_process, SSO, or the instance "
            "metadata service does not answer)",
            hint="check AWS_PROFILE and its credential source (or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), "
                 f"or allow longer with {RETRY_TIMEOUT_ENV}=SECONDS")
    if "error" in found:
        error = found["error"]
        mapped = _translate(error, "session", "credentials", []) if isinstance(error, Exception) else None
        if mapped is not None:
            raise mapped from error
        raise ProviderError(f"AWS credentials: the profile's credential source failed ({type(error).__name__}: "
                            f"{redact(str(error), [])[:200]})",
                            hint="check AWS_PROFILE and its credential_process or SSO setup") from error


def _secrets_of(client: Any) -> list[str]:
    credentials = getattr(getattr(client, "_request_signer", None), "_credentials", None)
    if credentials is None:
        return []
    return [getattr(credentials, "access_key", None), getattr(credentials, "secret_key", None),
            getattr(credentials, "token", None)]


@contextmanager
def translated(service: str, operation: str, client: Any = None) -> Iterator[None]:
    """Run AWS calls, turning botocore errors into :mod:`finops.errors` (cause kept, secrets redacted)."""
    try:
        yield
    except ImportError:
        raise DependencyError("boto3", "aws") from None
    except Exception as exc:
        mapped = _translate(exc, service, operation, _secrets_of(client))
        if mapped is None:
            raise
        raise mapped from exc


def _translate(exc: Exception, service: str, operation: str, secrets: list[str]) -> Exception | None:
    from botocore import exceptions as bex

    what = f"AWS {service} {operation}"
    if isinstance(exc, bex.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        detail = redact(str(error.get("Message", "")), secrets)
        message = f"{what} failed: {code} (HTTP {status})" + (f": {detail}" if detail else "")
        if code in THROTTLING_CODES or status == 429 or status >= 500:
            return TransientProviderError(message + ", after botocore's retries",
                                          hint=f"try again later, or allow more with AWS_MAX_ATTEMPTS and {RETRY_TIMEOUT_ENV}")
        if code in ACCESS_CODES or status in (401, 403):
            return ProviderError(message, hint=f"check the credentials (AWS_PROFILE) and that the IAM policy allows "
                                               f"{service}:{_action(operation)}")
        return ProviderError(message, hint="check the request parameters (region, bucket, prefix)")
    if isinstance(exc, (bex.NoCredentialsError, bex.PartialCredentialsError, bex.ProfileNotFound,
                        bex.NoRegionError, bex.SSOTokenLoadError, bex.TokenRetrievalError)):
        return ProviderError(f"{what}: {type(exc).__name__}: {redact(str(exc), secrets)}",
                             hint="configure AWS credentials: AWS_PROFILE, `aws configure` or `aws sso login`")
    if isinstance(exc, (bex.EndpointConnectionError, bex.ConnectTimeoutError, bex.ReadTimeoutError,
                        bex.ConnectionClosedError)):
        return TransientProviderError(f"{what}: cannot reach the AWS endpoint ({type(exc).__name__}), after "
                                      f"botocore's retries within the command's {RETRY_TIMEOUT_ENV}={RetryBudget.from_env().seconds:g} s",
                                      hint="check the network and AWS_ENDPOINT_URL, then try again")
    if isinstance(exc, bex.ParamValidationError):
        return InputError(f"{what}: invalid parameters: {redact(str(exc), secrets)}",
                          hint="check the values given to --regions, --instance-types, --source and --month")
    if isinstance(exc, bex.BotoCoreError):
        return ProviderError(f"{what}: {type(exc).__name__}: {redact(str(exc), secrets)}",
                             hint="check the AWS configuration (region, endpoint, credentials) and try again")
    return None


def _action(operation: str) -> str:
    """``get_products`` -> ``GetProducts`` (the IAM action name)."""
    return "".join(part.capitalize() for part in operation.split("_"))


def pages(client: Any, service: str, operation: str, *, token: str = "nextToken",
          **params: Any) -> Iterator[dict[str, Any]]:
    """Every page of ``operation``, through botocore's paginator when it has one, else by passing the
    response's ``token`` (``nextToken``, ``NextPageToken``...) back until there is none.

    Errors at any page are translated; the caller collects pages before writing anything, so a failure
    part-way leaves no partial output.
    """
    with translated(service, operation, client):
        if client.can_paginate(operation):
            yield from client.get_paginator(operation).paginate(**params)
            return
        call = getattr(client, operation)
        next_token: str | None = None
        while True:
            page = call(**params, **({token: next_token} if next_token else {}))
            yield page
            next_token = page.get(token)
            if not next_token:
                return
