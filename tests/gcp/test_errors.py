"""Foreign errors at the catalog seam become the product's error tree, retryable or terminal, cause kept."""

from __future__ import annotations

import pytest
import requests
from google.api_core import exceptions
from google.auth import exceptions as auth_exceptions

from connectors.gcp.catalog import make_client, translate_errors
from finops.errors import ProviderError, TransientProviderError


@pytest.mark.parametrize("foreign, expected, retryable", [
    (exceptions.TooManyRequests("slow down"), TransientProviderError, True),
    (exceptions.ServiceUnavailable("down"), TransientProviderError, True),
    (exceptions.InternalServerError("oops"), TransientProviderError, True),
    (exceptions.GatewayTimeout("late"), TransientProviderError, True),
    (exceptions.RetryError("deadline", cause=None), TransientProviderError, True),
    (requests.exceptions.ConnectionError("refused"), TransientProviderError, True),
    (exceptions.Forbidden("no"), ProviderError, False),
    (exceptions.Unauthorized("who"), ProviderError, False),
    (exceptions.NotFound("GET http://x/v1/services/nope/skus: not found"), ProviderError, False),
    (exceptions.BadRequest("bad page token"), ProviderError, False),
    (auth_exceptions.RefreshError("token expired"), ProviderError, False),
])
def test_every_foreign_error_is_translated(foreign, expected, retryable):
    with pytest.raises(expected) as info, translate_errors("listing SKUs"):
        raise foreign
    assert type(info.value) is expected and info.value.retryable is retryable
    assert info.value.__cause__ is foreign and info.value.hint
    assert "http://" not in str(info.value)


def test_missing_application_default_credentials_is_a_provider_error(monkeypatch, tmp_path):
    monkeypatch.delenv("FINOPS_GCP_CATALOG_ENDPOINT", raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(ProviderError, match="no Google Cloud credentials") as info:
        make_client()
    assert "gcloud auth application-default login" in info.value.hint
