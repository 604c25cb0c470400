"""Where AWS calls may go, and with which credentials: an endpoint URL (an AWS emulator) is refused when it names
a link-local, metadata or other cloud-internal host, or a remote host the command line did not trust
(``infra.base.network``); and every call to an endpoint URL is signed with the dummy credentials of
``infra.base.credentials`` unless the command line said ``--send-credentials-to-endpoint-url``.

:mod:`.factory` applies both before it builds a client.
"""

from __future__ import annotations

import os

import boto3
import botocore.session

from fastscale.infra.aws.clients.errors import AwsError
from fastscale.infra.base.credentials import DUMMY_ACCESS_KEY_ID, DUMMY_SECRET_ACCESS_KEY
from fastscale.infra.base.network import refused_reason, remote_reason

#: Settings of a dummy-credential session that would otherwise come from the environment or ``~/.aws``: no
#: profile and empty shared files (so no ``credential_process`` and no profile's endpoint or role), no
#: endpoint URL but the one given, and the legacy defaults mode ("auto" asks instance metadata for the region).
_ISOLATED_SETTINGS: dict[str, object] = {
    "profile": None,
    "config_file": os.devnull,
    "credentials_file": os.devnull,
    "ignore_configured_endpoint_urls": True,
    "defaults_mode": "legacy",
}


def dummy_session(region: str | None) -> boto3.session.Session:
    """A boto3 session that signs with the dummy credentials and looks for no others: the credential chain
    (environment, profiles, ``credential_process``, web identity, container and instance metadata) is never
    consulted, since the keys are given, and nothing else of the environment's AWS setup is read."""
    core = botocore.session.Session()
    store = core.get_component("config_store")
    for name, value in _ISOLATED_SETTINGS.items():
        store.set_config_variable(name, value)  # an override, which wins over the environment even as None
    return boto3.session.Session(botocore_session=core, region_name=region, aws_access_key_id=DUMMY_ACCESS_KEY_ID,
                                 aws_secret_access_key=DUMMY_SECRET_ACCESS_KEY)


class EndpointRefused(AwsError):
    """An endpoint URL fastscale must not send requests to; bad input (exit code 2)."""

    exit_code = 2


def refuse_endpoint(url: str, trust_remote: bool) -> None:
    """The last guard before a client is built: a cloud-internal host never, a remote one only when the
    command line trusted it. Validation (the config's schema, rule FS096, the command line) refuses both first."""
    reason = refused_reason(url) or (None if trust_remote else remote_reason(url, "endpoint URL"))
    if reason is not None:
        raise EndpointRefused(reason, code="EndpointRefused")
