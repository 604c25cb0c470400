"""Where AWS calls may go, and with which credentials: an endpoint URL (an AWS emulator) is refused when it names a
link-local or metadata host, or a remote host nobody trusted (``infra.base.network``); an emulator target whose
environment names no credentials gets the emulator's dummy keys instead of whatever a default profile holds.

:mod:`.factory` applies both before it builds a client.
"""

from __future__ import annotations

import os

from fastscale.infra.aws.clients.errors import AwsError
from fastscale.infra.base.network import refused_reason, remote_reason
from fastscale.infra.project.emulator import DUMMY_CREDENTIALS


def emulator_credentials(endpoint_url: str | None) -> dict[str, str]:
    """The emulator's dummy credentials, as environment variables, for an emulator target whose environment
    names no credentials (neither ``AWS_ACCESS_KEY_ID`` nor ``AWS_PROFILE``): a rehearsal then needs no
    AWS setup, and credentials found elsewhere (a default profile, instance metadata) are not used for it.
    Empty for a real target, or when the environment chose credentials itself."""
    if not endpoint_url or os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return {}
    return dict(DUMMY_CREDENTIALS)


class EndpointRefused(AwsError):
    """An endpoint URL fastscale must not send signed requests to; bad input (exit code 2)."""

    exit_code = 2


def refuse_endpoint(url: str, trust_remote: bool) -> None:
    """The last guard before a client is built: a link-local or metadata host never, a remote one only
    when trusted. Validation (the config's schema, rule FS096, the command line) refuses both first."""
    reason = refused_reason(url) or (None if trust_remote else remote_reason(url, "endpoint URL"))
    if reason is not None:
        raise EndpointRefused(reason, code="EndpointRefused")

