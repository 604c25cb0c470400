from __future__ import annotations

import http.server
import json
import threading

import boto3
import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from fastscale.infra.aws import clients as c


def _err(code: str, message: str = "") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "Op")


def test_clients_use_bounded_adaptive_retries_and_timeouts():
    sm = c.client("sagemaker", "eu-west-1")
    assert sm.meta.region_name == "eu-west-1"
    assert sm.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 5}
    assert c.MAX_BACKOFF_SECONDS == 15
    assert (sm.meta.config.connect_timeout, sm.meta.config.read_timeout) == (5, 20)
    assert c.client("autoscaling", "us-east-1").meta.service_model.service_name == "application-autoscaling"


def test_overrides_win_and_other_services_are_built_once():
    fake_sm = boto3.client("sagemaker", region_name="us-east-1")
    aws = c.resolve({"sagemaker": fake_sm}, "us-west-2")
    assert aws.sagemaker is fake_sm
    assert aws.cloudwatch is aws.cloudwatch
    assert aws.cloudwatch.meta.region_name == "us-west-2"
    assert aws.get("ecr", "eu-west-1").meta.region_name == "eu-west-1"
    assert c.resolve(aws, "us-east-1") is aws


@pytest.mark.parametrize(
    "code,message,expected",
    [
        ("ValidationException", "Could not find endpoint \"arn:...:endpoint/x\".", True),
        ("ValidationException", "Could not find inference component x", True),
        ("ValidationException", "Cannot delete endpoint with inference component associated", False),
        ("NoSuchEntity", "Role x not found", True),
        ("ObjectNotFoundException", "", True),
        ("ValidationException", "No scalable target found for service namespace: sagemaker", True),
        ("ThrottlingException", "Rate exceeded", False),
    ],
)
def test_not_found_classification(code, message, expected):
    assert c.is_not_found(_err(code, message)) is expected


def test_translate_errors_turns_every_botocore_failure_into_aws_error():
    @c.translate_errors
    def no_creds():
        raise NoCredentialsError()

    @c.translate_errors
    def denied():
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "DescribeEndpoint")

    @c.translate_errors
    def other():
        raise _err("ValidationException", "bad")

    with pytest.raises(c.AwsError, match="credentials"):
        no_creds()
    with pytest.raises(c.AwsError, match="DescribeEndpoint.*not allowed"):
        denied()
    with pytest.raises(c.AwsError, match=r"^AWS rejected Op: ValidationException: bad$") as rejected:
        other()
    assert (rejected.value.code, rejected.value.operation) == ("ValidationException", "Op")


# --------------------------------------------------------------------------------------------- retries over HTTP


class _AlwaysFailing(http.server.BaseHTTPRequestHandler):
    """An AWS JSON-protocol endpoint that answers every request with the server's configured error."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.hits += 1  # type: ignore[attr-defined]
        status, code = self.server.answer  # type: ignore[attr-defined]
        body = json.dumps({"__type": code, "message": "injected"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_endpoint(monkeypatch):
    from botocore.retries import adaptive, standard

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AlwaysFailing)
    server.hits = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
    # botocore's real retry loop runs; only its sleeps (random back-off, the adaptive rate limiter's token
    # bucket) are taken out to keep the test fast. Measured with them: 6-11 s per throttled call.
    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0.0)
    monkeypatch.setattr(adaptive.ClientRateLimiter, "on_sending_request", lambda self, request, **kwargs: None)
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "status,code,needle",
    [
        (400, "ThrottlingException", "AWS throttled DescribeEndpoint (EndpointName=chat) after 5 attempts"),
        (503, "ServiceUnavailable", "server error on DescribeEndpoint (EndpointName=chat) after 5 attempts (HTTP 503"),
    ],
    ids=["throttling", "5xx"],
)
def test_throttling_and_server_errors_give_up_after_the_bounded_attempts(failing_endpoint, status, code, needle):
    failing_endpoint.answer = (status, code)

    @c.translate_errors
    def describe():
        return c.client("sagemaker", "us-east-1").describe_endpoint(EndpointName="chat")

    with pytest.raises(c.AwsError) as failed:
        describe()
    assert failing_endpoint.hits == c.MAX_ATTEMPTS == 5
    assert needle in str(failed.value)
    assert failed.value.code == code and failed.value.operation == "DescribeEndpoint"
