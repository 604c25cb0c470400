"""AWS's failures in words a user can act on: error codes classified (not found, throttling, access, an operation
the endpoint does not offer), one line per failure naming the call, the resource and what to do
(:func:`describe_failure`), and :func:`translate_errors`, which turns whatever botocore raises into one
:class:`AwsError`.

Reads the bounds of :mod:`.calls` to say how often a call was tried; every public function of ``infra.aws`` that
talks to AWS is wrapped in :func:`translate_errors`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

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

from fastscale.infra.aws.clients.calls import (
    CALL_TIME_LIMIT_ENV,
    CONNECT_TIMEOUT,
    EMULATOR_ATTR,
    EMULATOR_KEY,
    MAX_ATTEMPTS,
    MAX_BACKOFF_SECONDS,
    REQUEST_KEY,
    CallTimeLimitExceeded,
    call_time_limit,
)


class AwsError(Exception):
    """AWS could not do what was asked: a one-line message a user can act on (see :func:`describe_failure`).

    ``code`` is AWS's error code (or the botocore exception's name), ``operation`` the API call, when known.
    """

    def __init__(self, message: str, code: str = "", operation: str = ""):
        super().__init__(message)
        self.code = code
        self.operation = operation


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
        emulator = exc.response.get(EMULATOR_KEY)
        if emulator:
            return _emulator_failure(exc, str(emulator), op, about, status, tries)
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
        emulator = getattr(exc, EMULATOR_ATTR, None)
        if emulator:
            return (f"cannot reach the emulator: is `fastscale emulator` running at {emulator}? "
                    f"({_one_line(str(exc))}; each call is tried up to {MAX_ATTEMPTS} times)")
        return (f"cannot reach AWS: {_one_line(str(exc))} (each call is tried up to {MAX_ATTEMPTS} times within "
                f"{call_time_limit():g} s, {CONNECT_TIMEOUT} s to connect); check the network, proxy settings and "
                "AWS_ENDPOINT_URL")
    return f"AWS client error: {_one_line(str(exc))}"


def _emulator_failure(exc: ClientError, url: str, op: str, about: str, status: Any, tries: str) -> str:
    """A failed call to an emulator (fastscale's ``endpoint_url``), in words that never blame AWS."""
    code = error_code(exc)
    page = code.isdigit()  # an HTML error page, not an error of the API
    what = f"HTTP {status}" if page else _one_line(describe_error(exc)) or f"HTTP {status}"
    if code in UNSUPPORTED_CODES or status == 501:
        return (f"the emulator at {url} does not implement {op}{about} ({what}): this cannot be rehearsed on it; "
                "it works against AWS")
    if isinstance(status, int) and status >= 500:
        return (f"the emulator at {url} failed on {op}{about} {tries} ({what}{', no AWS error in the answer' if page else ''}): "
                "an emulator answers so for a call it does not implement, or when it fails itself; this is the "
                "emulator, not AWS")
    if is_access_error(exc):
        return f"the emulator at {url} refused {op}{about}: {what}"
    return f"the emulator at {url} rejected {op}{about}: {what}"


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
