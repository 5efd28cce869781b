"""Every botocore failure kind is translated at the seam (table: foreign error -> finops error), the cause
is kept, and anything that is not a botocore error passes through untouched."""

from __future__ import annotations

import pytest
from botocore import exceptions as bex

from connectors.aws.session import translated
from finops.errors import InputError, ProviderError, TransientProviderError


def _client_error(code: str, status: int) -> bex.ClientError:
    return bex.ClientError({"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
                           "GetProducts")


@pytest.mark.parametrize("foreign, expected, text", [
    (_client_error("ThrottlingException", 400), TransientProviderError, "ThrottlingException (HTTP 400)"),
    (_client_error("SlowDown", 503), TransientProviderError, "SlowDown"),
    (_client_error("InternalError", 500), TransientProviderError, "HTTP 500"),
    (_client_error("AccessDeniedException", 403), ProviderError, "AccessDeniedException"),
    (_client_error("NoSuchBucket", 404), ProviderError, "NoSuchBucket"),
    (bex.NoCredentialsError(), ProviderError, "NoCredentialsError"),
    (bex.ProfileNotFound(profile="p"), ProviderError, "ProfileNotFound"),
    (bex.EndpointConnectionError(endpoint_url="http://x"), TransientProviderError, "cannot reach"),
    (bex.ReadTimeoutError(endpoint_url="http://x"), TransientProviderError, "cannot reach"),
    (bex.ParamValidationError(report="bad"), InputError, "invalid parameters"),
])
def test_botocore_errors_become_finops_errors(foreign, expected, text):
    with pytest.raises(expected) as info, translated("pricing", "get_products"):
        raise foreign
    assert type(info.value) is expected and text in str(info.value)
    assert info.value.__cause__ is foreign
    assert info.value.hint


def test_other_errors_pass_through():
    with pytest.raises(KeyError), translated("pricing", "get_products"):
        raise KeyError("not ours")
