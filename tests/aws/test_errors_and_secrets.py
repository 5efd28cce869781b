"""Over the wire (a local server speaking the AWS JSON protocol, reached through AWS_ENDPOINT_URL): a 5xx
mid-pagination is retried by botocore and the result is complete; throttling that outlives the retries
fails with a clear error and writes nothing; credentials never appear in output, logs or errors;
profiles from the standard chain are honoured."""

from __future__ import annotations

import json
import logging

import pytest

from connectors.aws import AwsSession
from connectors.aws.pricing import fetch_product_documents
from finops.cli import main
from finops.errors import ProviderError, TransientProviderError


@pytest.fixture
def pages(data):
    return json.loads((data / "get_products_p5.json").read_text())["pages"]


def _bodies(server):
    return [r["body"].get("NextToken") for r in server.requests]


def test_server_error_mid_pagination_is_retried_and_complete(json_server, pages):
    json_server.responses = [(200, pages[0]),
                             (503, {"__type": "ServiceUnavailableException", "message": "try later"}),
                             (200, pages[1])]
    client = AwsSession().client("pricing", "us-east-1")
    documents = fetch_product_documents(client, ["p5.48xlarge"])
    assert [d["product"]["attributes"]["regionCode"] for d in documents] == ["us-east-1", "us-west-2"]
    assert _bodies(json_server) == [None, "page-2", "page-2"]  # the failed page asked again, same token
    assert all(r["target"] == "AWSPriceListService.GetProducts" for r in json_server.requests)


def test_throttling_past_the_retries_fails_clearly_and_writes_nothing(json_server, pages, tmp_path, capsys,
                                                                      caplog, secrets):
    throttled = (400, {"__type": "ThrottlingException", "message": "Rate exceeded"})
    json_server.responses = [(200, pages[0]), throttled, throttled, throttled]
    caplog.set_level(logging.INFO)
    code = main(["prices", "pull", "--provider", "aws", "--instance-types", "p5.48xlarge",
                 "--out", str(tmp_path / "book.parquet")])
    captured = capsys.readouterr()
    assert code == 2
    assert "ThrottlingException" in captured.err and "after botocore's retries" in captured.err
    assert "Traceback" not in captured.err
    assert len(json_server.requests) == 4  # page 1, then page 2 tried AWS_MAX_ATTEMPTS = 3 times
    assert list(tmp_path.iterdir()) == []
    everything = captured.out + captured.err + caplog.text
    assert all(secret not in everything for secret in secrets)


def test_an_error_message_echoing_the_key_is_redacted(json_server, secrets, capsys, tmp_path):
    access_key, _ = secrets
    json_server.responses = [(400, {"__type": "UnrecognizedClientException",
                                    "message": f"The security token included in the request is invalid: {access_key}"})]
    with pytest.raises(ProviderError) as info:
        fetch_product_documents(AwsSession().client("pricing", "us-east-1"), ["p5.48xlarge"])
    assert not isinstance(info.value, TransientProviderError)
    assert access_key not in str(info.value) and "***" in str(info.value)
    assert "pricing:GetProducts" in info.value.hint
    # the key did go over the wire, in the signature, as it must
    assert access_key in json_server.requests[0]["headers"]["Authorization"]


def test_no_credentials_is_a_provider_error_with_what_to_do(json_server, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ProviderError) as info:
        fetch_product_documents(AwsSession().client("pricing", "us-east-1"), ["p5.48xlarge"])
    assert "NoCredentialsError" in str(info.value) and "aws configure" in info.value.hint
    assert json_server.requests == []


def test_a_named_profile_from_the_shared_files_signs_the_requests(json_server, monkeypatch, tmp_path, pages):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    credentials = tmp_path / "credentials"
    credentials.write_text("[finops-test]\naws_access_key_id = AKIAPROFILEKEY000001\n"
                           "aws_secret_access_key = profileSecret0123456789\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    json_server.responses = [(200, pages[1])]
    fetch_product_documents(AwsSession(profile="finops-test").client("pricing", "us-east-1"), ["p5.48xlarge"])
    assert "Credential=AKIAPROFILEKEY000001/" in json_server.requests[0]["headers"]["Authorization"]
    monkeypatch.setenv("AWS_PROFILE", "finops-test")
    json_server.responses = [(200, pages[1])]
    fetch_product_documents(AwsSession().client("pricing", "us-east-1"), ["p5.48xlarge"])
    assert "Credential=AKIAPROFILEKEY000001/" in json_server.requests[1]["headers"]["Authorization"]


def test_an_unknown_profile_is_a_provider_error(aws_env):
    with pytest.raises(ProviderError, match="ProfileNotFound"):
        AwsSession(profile="no-such-profile").client("pricing", "us-east-1")
