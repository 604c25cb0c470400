"""boto3 clients and AWS error classification shared by verification, cleanup, sweep and preflight.

Every client is built by :func:`client` with adaptive retries: a deploy, a verification and a sweep each
make many describe calls in a burst, and SageMaker / Application Auto Scaling throttle such bursts.
Adaptive mode both retries and slows the client down instead of failing the run. The retries are bounded
(:data:`MAX_ATTEMPTS` attempts, at most :data:`MAX_BACKOFF_SECONDS` s of back-off in all, connections
given up after :data:`CONNECT_TIMEOUT` s) so that an account that keeps throttling, or an endpoint that
cannot be reached, fails the command within about a minute instead of looking hung; the long waits that
need patience (endpoints becoming InService) poll through throttling on their own.

Every call also has a **total time limit** (:data:`CALL_TIME_LIMIT` seconds, or
``FASTSCALE_AWS_CALL_TIMEOUT``): no new attempt starts when it could not finish within the limit, so a
server that accepts connections and never answers ends the call in about that time (not 5 x 60 s), with
one line naming the call and the endpoint. While a call waits longer than :data:`WAIT_NOTICE_SECONDS`,
one line per attempt on stderr says what it waits for (service, operation, endpoint, attempt); stdout (and
so ``--json``) is never written to.

Every public function that talks to AWS is wrapped in :func:`translate_errors`: whatever botocore raises
leaves it as one :class:`AwsError` whose message is one line naming the error code, the operation and the
resource it was about (:func:`describe_failure`).

Functions that talk to AWS take ``clients=``: ``None`` (build real clients for the config's region), an
:class:`AwsClients`, or a mapping of service name to an already built client (tests pass moto-backed or
Stubber-wrapped clients that way).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    CredentialRetrievalError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
    TokenRetrievalError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from fastscale.infra.base.network import refused_reason, remote_reason
from fastscale.infra.project.emulator import DUMMY_CREDENTIALS

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig

#: Attempts per call, the first included. botocore's back-off before retry n is random(0, 2**(n-1)) s,
#: so 5 attempts wait at most 1 + 2 + 4 + 8 = 15 s (7.5 s on average) before giving up, where 11
#: attempts (``max_attempts`` 10) waited up to 131 s.
MAX_ATTEMPTS = 5
MAX_BACKOFF_SECONDS = sum(2**n for n in range(MAX_ATTEMPTS - 1))
#: Seconds to open a connection (AWS answers in well under one) and to wait for an answer. Every call
#: fastscale makes is a describe, list, tag or delete call that AWS answers in about a second.
CONNECT_TIMEOUT = 5
READ_TIMEOUT = 20
#: Seconds one call may take, all attempts and back-off included (``FASTSCALE_AWS_CALL_TIMEOUT``).
CALL_TIME_LIMIT = 60
CALL_TIME_LIMIT_ENV = "FASTSCALE_AWS_CALL_TIMEOUT"
#: A call that has waited this long says so on stderr, once per attempt (sooner when the read timeout is short).
WAIT_NOTICE_SECONDS = 3.0

RETRY_CONFIG = Config(
    retries={"mode": "adaptive", "total_max_attempts": MAX_ATTEMPTS},
    connect_timeout=CONNECT_TIMEOUT,
    read_timeout=READ_TIMEOUT,
)


def call_time_limit() -> float:
    """The total seconds a call may take: ``FASTSCALE_AWS_CALL_TIMEOUT`` when it is a positive number."""
    raw = os.environ.get(CALL_TIME_LIMIT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return CALL_TIME_LIMIT
    return value if value > 0 and value == value and value != float("inf") else CALL_TIME_LIMIT


def _timeouts(limit: float) -> tuple[float, float]:
    """(connect, read) timeouts of one attempt that fit in ``limit`` seconds."""
    connect = min(CONNECT_TIMEOUT, max(limit / 2, 0.5))
    return connect, max(min(READ_TIMEOUT, limit - connect), 0.5)


def _client_config() -> Config:
    limit = call_time_limit()
    connect, read = _timeouts(limit)
    if (connect, read) == (CONNECT_TIMEOUT, READ_TIMEOUT):
        return RETRY_CONFIG
    return RETRY_CONFIG.merge(Config(connect_timeout=connect, read_timeout=read))


class CallTimeLimitExceeded(BotoCoreError):  # type: ignore[misc,unused-ignore]  # botocore: no hints
    """A call's attempts did not get an answer within its total time limit (the limit ends the retries)."""

    fmt = ("no answer from {endpoint} to {operation} within {limit:g} s ({attempts} attempt(s), {connect:g} s to "
           "connect, {read:g} s to answer)")


def _say_waiting(message: str) -> None:
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: nobody to tell
        pass


#: Where "still waiting" lines go; stderr by default (never stdout, which may carry --json).
wait_reporter: Callable[[str], None] = _say_waiting


class _Call:
    """One API call in flight on this thread: what it is, when it started, its attempts, its notice timer."""

    def __init__(self, service: str, operation: str, endpoint: str, limit: float):
        self.service, self.operation, self.endpoint = service, operation, endpoint
        self.limit = limit
        self.connect, self.read = _timeouts(limit)
        self.started = time.monotonic()
        self.attempts = 0
        self.timer: threading.Timer | None = None

    def notice(self, attempt: int) -> None:
        waited = time.monotonic() - self.started
        wait_reporter(f"waiting for {self.service} {self.operation} at {self.endpoint} (attempt {attempt} of "
                      f"{MAX_ATTEMPTS}, {waited:.0f} s so far; gives up after {self.limit:g} s)")

    def stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


_in_flight = threading.local()


def _call_started(model: Any, context: dict[str, Any], **_: Any) -> None:
    service = model.service_model.service_name
    endpoint = context.get(_ENDPOINT_KEY, "AWS")
    _in_flight.call = _Call(service, model.name, endpoint, call_time_limit())


def _attempt_starting(request: Any, **_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is None:
        return
    call.stop_timer()
    if call.attempts and time.monotonic() - call.started + call.connect + call.read > call.limit:
        # Another attempt could not finish in time: end the call here (botocore does not retry this error).
        raise CallTimeLimitExceeded(endpoint=call.endpoint, operation=call.operation, limit=call.limit,
                                    attempts=call.attempts, connect=call.connect, read=call.read)
    call.attempts += 1
    # Within the attempt's own read timeout, so even a short limit shows what it waits for.
    call.timer = threading.Timer(min(WAIT_NOTICE_SECONDS, call.read / 2), call.notice, args=(call.attempts,))
    call.timer.daemon = True
    call.timer.start()


def _attempt_ended(**_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is not None:
        call.stop_timer()


def _call_ended(**_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is not None:
        call.stop_timer()
        _in_flight.call = None

#: Short names used in this package -> boto3 service names.
SERVICE_ALIASES = {
    "sagemaker": "sagemaker",
    "autoscaling": "application-autoscaling",
    "cloudwatch": "cloudwatch",
    "iam": "iam",
    "tagging": "resourcegroupstaggingapi",
    "ecr": "ecr",
    "s3": "s3",
    "quotas": "service-quotas",
    "logs": "logs",
}


def emulator_credentials(endpoint_url: str | None) -> dict[str, str]:
    """The emulator's dummy credentials, as environment variables, for an emulator target whose environment
    names no credentials (neither ``AWS_ACCESS_KEY_ID`` nor ``AWS_PROFILE``): a rehearsal then needs no
    AWS setup, and credentials found elsewhere (a default profile, instance metadata) are not used for it.
    Empty for a real target, or when the environment chose credentials itself."""
    if not endpoint_url or os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return {}
    return dict(DUMMY_CREDENTIALS)


def client(
    service: str,
    region: str | None,
    session: boto3.session.Session | None = None,
    endpoint_url: str | None = None,
) -> BaseClient:
    """A boto3 client with adaptive retries; ``service`` is a boto3 service name or one of SERVICE_ALIASES.
    ``endpoint_url`` sends its calls to an AWS emulator instead of AWS (see :func:`emulator_credentials`)."""
    name = SERVICE_ALIASES.get(service, service)
    keys: dict[str, Any] = {}
    dummy = emulator_credentials(endpoint_url) if session is None else {}
    if dummy:
        keys = {"aws_access_key_id": dummy["AWS_ACCESS_KEY_ID"], "aws_secret_access_key": dummy["AWS_SECRET_ACCESS_KEY"]}
    if session is None:
        return instrument(boto3.client(name, region_name=region, config=_client_config(), endpoint_url=endpoint_url,
                                       **keys))
    return instrument(session.client(name, region_name=region, config=_client_config(), endpoint_url=endpoint_url))


#: Key of the failed response under which :func:`instrument` records what the request was about.
REQUEST_KEY = "FastscaleRequest"
#: Request parameters that name what a call is about, in the order they are shown.
_RESOURCE_PARAM = re.compile(r"(Name|Arn|ResourceId|Id|NameEquals|Bucket|Key|RepositoryName|ImageIds)$")


def _remember_resource(params: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
    found = [
        f"{key}={value}"
        for key, value in params.items()
        if isinstance(value, str) and _RESOURCE_PARAM.search(key) and key != "NextToken"
    ]
    if found:
        context[REQUEST_KEY] = ", ".join(found[:3])


def _attach_resource(parsed: dict[str, Any], context: Mapping[str, Any], **_: Any) -> None:
    if isinstance(parsed, dict) and "Error" in parsed and REQUEST_KEY in context:
        parsed[REQUEST_KEY] = context[REQUEST_KEY]


#: Key of a call's context under which :func:`instrument` records the endpoint it goes to.
_ENDPOINT_KEY = "FastscaleEndpoint"


def instrument(api: BaseClient) -> BaseClient:
    """Make a failed call's error say which resource it was about (botocore's ClientError only names the
    operation), bound every call's total time and report long waits on stderr. Idempotent; applied to every
    client handed out, real, moto-backed or Stubber-wrapped."""
    events = api.meta.events
    events.register("before-parameter-build.*.*", _remember_resource, unique_id="fastscale-resource")
    events.register("after-call.*.*", _attach_resource, unique_id="fastscale-resource-attach")
    endpoint = api.meta.endpoint_url

    def remember_endpoint(context: dict[str, Any], **_: Any) -> None:
        context[_ENDPOINT_KEY] = endpoint

    events.register("before-parameter-build.*.*", remember_endpoint, unique_id="fastscale-endpoint")
    events.register("before-call.*.*", _call_started, unique_id="fastscale-call-started")
    # First among the before-send handlers, so a call past its limit ends before any handler sends it.
    events.register_first("before-send.*.*", _attempt_starting, unique_id="fastscale-attempt")
    events.register("response-received.*.*", _attempt_ended, unique_id="fastscale-attempt-ended")
    events.register("after-call.*.*", _call_ended, unique_id="fastscale-call-ended")
    events.register("after-call-error.*.*", _call_ended, unique_id="fastscale-call-failed")
    return api


class AwsClients:
    """Lazily built clients for one region; ``overrides`` (service name -> client) take precedence.
    ``endpoint_url`` (an AWS emulator) applies to every client built here; it must name a loopback or
    private address unless ``trust_remote_endpoint`` (the command line's opt-in), see ``infra.base.network``."""

    def __init__(
        self,
        region: str,
        *,
        session: boto3.session.Session | None = None,
        overrides: Mapping[str, BaseClient] | None = None,
        endpoint_url: str | None = None,
        trust_remote_endpoint: bool = False,
    ):
        if endpoint_url:
            refuse_endpoint(endpoint_url, trust_remote_endpoint)
        self.region = region
        self.endpoint_url = endpoint_url
        self._session = session
        self._overrides = {SERVICE_ALIASES.get(k, k): v for k, v in (overrides or {}).items()}
        self._cache: dict[tuple[str, str], BaseClient] = {}

    def get(self, service: str, region: str | None = None) -> BaseClient:
        name = SERVICE_ALIASES.get(service, service)
        if name in self._overrides:
            return instrument(self._overrides[name])
        key = (name, region or self.region)
        if key not in self._cache:
            self._cache[key] = client(name, key[1], self._session, self.endpoint_url)
        return self._cache[key]

    @property
    def sagemaker(self) -> BaseClient:
        return self.get("sagemaker")

    @property
    def autoscaling(self) -> BaseClient:
        return self.get("application-autoscaling")

    @property
    def cloudwatch(self) -> BaseClient:
        return self.get("cloudwatch")

    @property
    def iam(self) -> BaseClient:
        return self.get("iam")

    @property
    def tagging(self) -> BaseClient:
        return self.get("resourcegroupstaggingapi")

    @property
    def logs(self) -> BaseClient:
        return self.get("logs")


ClientsArg = AwsClients | Mapping[str, BaseClient] | None


def for_config(config: FastscaleConfig) -> AwsClients:
    """Clients for a config: its region, and its emulator (``endpoint_url``) when it has one."""
    return AwsClients(config.region, endpoint_url=config.endpoint_url,
                      trust_remote_endpoint=config.remote_endpoint_trusted)


def resolve(clients: ClientsArg, target: str | FastscaleConfig) -> AwsClients:
    """Turn the ``clients=`` argument of the public functions into an AwsClients; ``target`` is the config
    (its region and emulator URL) or just a region."""
    if isinstance(clients, AwsClients):
        return clients
    if isinstance(target, str):
        return AwsClients(target, overrides=clients)
    return AwsClients(target.region, overrides=clients, endpoint_url=target.endpoint_url,
                      trust_remote_endpoint=target.remote_endpoint_trusted)



# --------------------------------------------------------------------------------------------- errors


class AwsError(Exception):
    """AWS could not do what was asked: a one-line message a user can act on (see :func:`describe_failure`).

    ``code`` is AWS's error code (or the botocore exception's name), ``operation`` the API call, when known.
    """

    def __init__(self, message: str, code: str = "", operation: str = ""):
        super().__init__(message)
        self.code = code
        self.operation = operation


class EndpointRefused(AwsError):
    """An endpoint URL fastscale must not send signed requests to; bad input (exit code 2)."""

    exit_code = 2


def refuse_endpoint(url: str, trust_remote: bool) -> None:
    """The last guard before a client is built: a link-local or metadata host never, a remote one only
    when trusted. Validation (the config's schema, rule FS096, the command line) refuses both first."""
    reason = refused_reason(url) or (None if trust_remote else remote_reason(url, "endpoint URL"))
    if reason is not None:
        raise EndpointRefused(reason, code="EndpointRefused")


#: Codes meaning "slow down"; waits keep polling through them instead of aborting.
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "SlowDown",
        "PriorRequestNotComplete",
    }
)

#: Codes meaning the caller's identity cannot do this at all; retrying never helps.
ACCESS_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "UnauthorizedOperation",
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
        "SignatureDoesNotMatch",
        "InvalidSignatureException",
    }
)

#: Codes meaning the endpoint does not offer this operation (an emulator, a partition or region without it).
UNSUPPORTED_CODES = frozenset(
    {
        "UnknownOperationException",
        "UnknownOperation",
        "InvalidAction",
        "NotImplemented",
        "NotImplementedException",
        "UnsupportedOperation",
        "UnsupportedOperationException",
    }
)

_NOT_FOUND_CODES = frozenset(
    {
        "ResourceNotFound",
        "ResourceNotFoundException",
        "NoSuchEntity",
        "ObjectNotFoundException",
        "NoSuchKey",
        "NoSuchBucket",
        "NotFound",
        "404",
    }
)

# SageMaker reports a missing resource as ValidationException "Could not find endpoint|model|...";
# Application Auto Scaling does the same for a missing scalable target in some answers.
_NOT_FOUND_MESSAGES = ("Could not find", "No scalable target found")


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def error_message(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Message", ""))


def is_not_found(exc: ClientError) -> bool:
    code = error_code(exc)
    if code in _NOT_FOUND_CODES:
        return True
    return code == "ValidationException" and any(m in error_message(exc) for m in _NOT_FOUND_MESSAGES)


def is_throttling(exc: ClientError) -> bool:
    return error_code(exc) in THROTTLING_CODES


def is_access_error(exc: ClientError) -> bool:
    return error_code(exc) in ACCESS_CODES


def describe_error(exc: ClientError) -> str:
    return f"{error_code(exc)}: {error_message(exc)}".strip(": ")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def describe_failure(exc: BaseException) -> str:
    """One line for a botocore failure: what happened, to which call and resource, and what to do."""
    if isinstance(exc, ClientError):
        op = exc.operation_name or "the call"
        meta = exc.response.get("ResponseMetadata", {})
        status = meta.get("HTTPStatusCode")
        attempts = int(meta.get("RetryAttempts", 0) or 0) + 1
        resource = exc.response.get(REQUEST_KEY)
        about = f" ({resource})" if resource else ""
        what = _one_line(describe_error(exc)) or f"HTTP {status}"
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        if is_throttling(exc):
            return (f"AWS throttled {op}{about} {tries} ({what}); fastscale retries {MAX_ATTEMPTS} times with "
                    f"at most {MAX_BACKOFF_SECONDS} s of back-off: wait a minute and run again, or ask for a "
                    "higher request-rate quota")
        if error_code(exc) in UNSUPPORTED_CODES or status == 501:
            return (f"the AWS endpoint does not support {op}{about} ({what}); check the region, and "
                    "AWS_ENDPOINT_URL if it points at an emulator")
        if is_access_error(exc):
            return f"AWS refused {op}{about}: {what}; the identity in use needs permission for {op}"
        if isinstance(status, int) and status >= 500:
            return (f"AWS failed with a server error on {op}{about} {tries} (HTTP {status}, {what}); "
                    "this is on AWS's side: run again later")
        return f"AWS rejected {op}{about}: {what}"
    if isinstance(exc, (NoCredentialsError, PartialCredentialsError, TokenRetrievalError,
                        CredentialRetrievalError, ProfileNotFound)):
        return (f"no usable AWS credentials ({_one_line(str(exc))}); configure a profile or set AWS_PROFILE / "
                "AWS_ACCESS_KEY_ID")
    if isinstance(exc, NoRegionError):
        return "no AWS region: set `region` in the config"
    if isinstance(exc, CallTimeLimitExceeded):
        return f"{_one_line(str(exc))}; check that it is up, or allow more time with {CALL_TIME_LIMIT_ENV}"
    if isinstance(exc, (BotoConnectionError, ConnectionClosedError, HTTPClientError)):
        return (f"cannot reach AWS: {_one_line(str(exc))} (each call is tried up to {MAX_ATTEMPTS} times within "
                f"{call_time_limit():g} s, {CONNECT_TIMEOUT} s to connect); check the network, proxy settings and "
                "AWS_ENDPOINT_URL")
    return f"AWS client error: {_one_line(str(exc))}"


def as_aws_error(exc: ClientError | BotoCoreError) -> AwsError:
    code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
    operation = exc.operation_name if isinstance(exc, ClientError) else ""
    return AwsError(describe_failure(exc), code=code, operation=operation or "")


F = TypeVar("F", bound=Callable[..., Any])


def translate_errors(fn: F) -> F:
    """Whatever botocore raises leaves ``fn`` as one :class:`AwsError` with a one-line message."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise as_aws_error(exc) from None

    return wrapper  # type: ignore[return-value]


def paginate(api: BaseClient, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Yield every item under ``key`` across all pages of ``operation``."""
    for page in api.get_paginator(operation).paginate(**params):
        yield from page.get(key, [])


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
