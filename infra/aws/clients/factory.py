"""The clients: :func:`client` builds one boto3 client (bounded by :mod:`.calls`, aimed by :mod:`.endpoints`),
:class:`AwsClients` builds them lazily for one region, and :func:`resolve` turns the ``clients=`` argument of the
public functions (``None``, an :class:`AwsClients`, or service name -> client, as tests pass moto-backed or
Stubber-wrapped ones) into an :class:`AwsClients`. Also the paging helpers every reader uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import boto3
from botocore.client import BaseClient

from fastscale.infra.aws.clients.calls import client_config, instrument, mark_emulator
from fastscale.infra.aws.clients.endpoints import dummy_session, refuse_endpoint

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


def client(
    service: str,
    region: str | None,
    session: boto3.session.Session | None = None,
    endpoint_url: str | None = None,
    *,
    send_credentials: bool = False,
) -> BaseClient:
    """A boto3 client with adaptive retries; ``service`` is a boto3 service name or one of SERVICE_ALIASES.
    ``endpoint_url`` sends its calls to an AWS emulator instead of AWS; without a ``session`` of the caller's
    they are signed with the dummy credentials (:func:`.endpoints.dummy_session`) unless ``send_credentials``
    (the command line's ``--send-credentials-to-endpoint-url``)."""
    name = SERVICE_ALIASES.get(service, service)
    if session is None and endpoint_url and not send_credentials:
        session = dummy_session(region)
    if session is None:
        api = boto3.client(name, region_name=region, config=client_config(), endpoint_url=endpoint_url)
    else:
        api = session.client(name, region_name=region, config=client_config(), endpoint_url=endpoint_url)
    return mark_emulator(instrument(api), endpoint_url) if endpoint_url else instrument(api)


class AwsClients:
    """Lazily built clients for one region; ``overrides`` (service name -> client) take precedence.
    ``endpoint_url`` (an AWS emulator) applies to every client built here; it must name a loopback or
    private address unless ``send_credentials`` (the command line's ``--send-credentials-to-endpoint-url``),
    see ``infra.base.network``, and its calls carry dummy credentials unless that flag was given too."""

    def __init__(
        self,
        region: str,
        *,
        session: boto3.session.Session | None = None,
        overrides: Mapping[str, BaseClient] | None = None,
        endpoint_url: str | None = None,
        send_credentials: bool = False,
    ):
        if endpoint_url:
            refuse_endpoint(endpoint_url, send_credentials)
            if session is None and not send_credentials:
                session = dummy_session(region)  # one for every client built here
        self.region = region
        self.endpoint_url = endpoint_url
        self.send_credentials = send_credentials
        self._session = session
        self._overrides = {SERVICE_ALIASES.get(k, k): v for k, v in (overrides or {}).items()}
        self._cache: dict[tuple[str, str], BaseClient] = {}

    def get(self, service: str, region: str | None = None) -> BaseClient:
        name = SERVICE_ALIASES.get(service, service)
        if name in self._overrides:
            given = instrument(self._overrides[name])
            return mark_emulator(given, self.endpoint_url) if self.endpoint_url else given
        key = (name, region or self.region)
        if key not in self._cache:
            self._cache[key] = client(name, key[1], self._session, self.endpoint_url,
                                      send_credentials=self.send_credentials)
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


class ClientTarget(Protocol):
    """Where clients go: a region and the emulator URL (the resolved stack, or the config it came from)."""

    @property
    def region(self) -> str: ...
    @property
    def endpoint_url(self) -> str | None: ...
    @property
    def sends_credentials_to_endpoint(self) -> bool: ...


def for_config(target: ClientTarget) -> AwsClients:
    """Clients for a resolved stack (or the config it came from): its region, and its emulator
    (``endpoint_url``) when it has one."""
    return AwsClients(target.region, endpoint_url=target.endpoint_url,
                      send_credentials=target.sends_credentials_to_endpoint)


def resolve(clients: ClientsArg, target: str | ClientTarget) -> AwsClients:
    """Turn the ``clients=`` argument of the public functions into an AwsClients; ``target`` is the config or
    the resolved stack (its region and emulator URL) or just a region."""
    if isinstance(clients, AwsClients):
        return clients
    if isinstance(target, str):
        return AwsClients(target, overrides=clients)
    return AwsClients(target.region, overrides=clients, endpoint_url=target.endpoint_url,
                      send_credentials=target.sends_credentials_to_endpoint)


def paginate(api: BaseClient, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Yield every item under ``key`` across all pages of ``operation``."""
    for page in api.get_paginator(operation).paginate(**params):
        yield from page.get(key, [])


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
