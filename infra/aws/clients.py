"""boto3 clients and AWS error classification shared by verification, cleanup, sweep and preflight.

Every client is built by :func:`client` with adaptive retries (10 attempts): a deploy, a verification and
a sweep each make many describe calls in a burst, and SageMaker / Application Auto Scaling throttle such
bursts. Adaptive mode both retries and slows the client down instead of failing the run.

Functions that talk to AWS take ``clients=``: ``None`` (build real clients for the config's region), an
:class:`AwsClients`, or a mapping of service name to an already built client (tests pass moto-backed or
Stubber-wrapped clients that way).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    TokenRetrievalError,
)

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig

RETRY_CONFIG = Config(retries={"mode": "adaptive", "max_attempts": 10})

#: Short names used in this package -> boto3 service names.
SERVICE_ALIASES = {
    "sagemaker": "sagemaker",
    "autoscaling": "application-autoscaling",
    "cloudwatch": "cloudwatch",
    "iam": "iam",
    "tagging": "resourcegroupstaggingapi",
    "ecr": "ecr",
    "s3": "s3",
}


def client(
    service: str,
    region: str | None,
    session: boto3.session.Session | None = None,
    endpoint_url: str | None = None,
) -> BaseClient:
    """A boto3 client with adaptive retries; ``service`` is a boto3 service name or one of SERVICE_ALIASES.
    ``endpoint_url`` sends its calls to an AWS emulator instead of AWS."""
    name = SERVICE_ALIASES.get(service, service)
    if session is None:
        return boto3.client(name, region_name=region, config=RETRY_CONFIG, endpoint_url=endpoint_url)
    return session.client(name, region_name=region, config=RETRY_CONFIG, endpoint_url=endpoint_url)


class AwsClients:
    """Lazily built clients for one region; ``overrides`` (service name -> client) take precedence.
    ``endpoint_url`` (an AWS emulator) applies to every client built here."""

    def __init__(
        self,
        region: str,
        *,
        session: boto3.session.Session | None = None,
        overrides: Mapping[str, BaseClient] | None = None,
        endpoint_url: str | None = None,
    ):
        self.region = region
        self.endpoint_url = endpoint_url
        self._session = session
        self._overrides = {SERVICE_ALIASES.get(k, k): v for k, v in (overrides or {}).items()}
        self._cache: dict[tuple[str, str], BaseClient] = {}

    def get(self, service: str, region: str | None = None) -> BaseClient:
        name = SERVICE_ALIASES.get(service, service)
        if name in self._overrides:
            return self._overrides[name]
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


ClientsArg = AwsClients | Mapping[str, BaseClient] | None


def for_config(config: FastscaleConfig) -> AwsClients:
    """Clients for a config: its region, and its emulator (``endpoint_url``) when it has one."""
    return AwsClients(config.region, endpoint_url=config.endpoint_url)


def resolve(clients: ClientsArg, target: str | FastscaleConfig) -> AwsClients:
    """Turn the ``clients=`` argument of the public functions into an AwsClients; ``target`` is the config
    (its region and emulator URL) or just a region."""
    if isinstance(clients, AwsClients):
        return clients
    if isinstance(target, str):
        return AwsClients(target, overrides=clients)
    return AwsClients(target.region, overrides=clients, endpoint_url=target.endpoint_url)


# --------------------------------------------------------------------------------------------- errors


class AwsError(Exception):
    """AWS could not be used at all (no credentials, access denied, no network): a user-facing message."""


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


F = TypeVar("F", bound=Callable[..., Any])


def translate_errors(fn: F) -> F:
    """Turn "cannot use AWS at all" failures into AwsError with a message a user can act on."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (NoCredentialsError, PartialCredentialsError, TokenRetrievalError) as exc:
            raise AwsError(
                f"no usable AWS credentials ({exc}); configure a profile or set AWS_PROFILE / AWS_ACCESS_KEY_ID"
            ) from None
        except NoRegionError:
            raise AwsError("no AWS region: set `region` in the config") from None
        except EndpointConnectionError as exc:
            raise AwsError(f"cannot reach AWS: {exc}") from None
        except ClientError as exc:
            if is_access_error(exc):
                op = exc.operation_name
                raise AwsError(f"AWS refused {op}: {describe_error(exc)}") from None
            raise

    return wrapper  # type: ignore[return-value]


def paginate(api: BaseClient, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Yield every item under ``key`` across all pages of ``operation``."""
    for page in api.get_paginator(operation).paginate(**params):
        yield from page.get(key, [])


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
