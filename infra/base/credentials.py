"""Which AWS credentials a call to an endpoint URL carries: dummy ones, unless the command line says
``--send-credentials-to-endpoint-url``.

An ``endpoint_url`` (``infra.base.network`` judges its host) sends every AWS call to an emulator, and the
config that names it is what a pull request changes. The runner's real credentials (a CI job's role, a
developer's profile) belong to AWS alone, so every request to an endpoint URL is signed with the fixed
dummy pair below, and nothing looks for credentials anywhere else: not the environment, not the shared
config and credentials files (their ``credential_process`` never runs), not a web identity token, not the
ECS, EKS or EC2 metadata endpoints. Emulators such as moto and LocalStack accept any credentials.

Two consumers, one rule:

- fastscale's own boto3 calls build their session from these keys alone (``infra.aws.clients.endpoints``);
- Terraform, its providers and its S3 backend run in :func:`emulator_environment`: every ``AWS_*`` variable
  of the runner's environment removed but the region and the CA bundle, then the dummy keys, empty shared
  files, the SDK's metadata lookups turned off and ``AWS_ENDPOINT_URL`` set.

Without an endpoint URL nothing here applies: calls go to AWS with the credentials AWS's SDKs find.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: The credentials every call to an endpoint URL carries (no session token). They say what they are.
DUMMY_ACCESS_KEY_ID = "testing"
DUMMY_SECRET_ACCESS_KEY = "testing"
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": DUMMY_ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET_ACCESS_KEY}

#: The ``AWS_*`` variables an emulator run keeps: they neither hold nor choose credentials.
KEPT_AWS_VARIABLES = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CA_BUNDLE"})


def emulator_environment(endpoint_url: str, environ: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """What to change in ``environ`` (default: this process's) for a process whose AWS calls go to
    ``endpoint_url`` with the dummy credentials: ``None`` removes a variable.

    Every ``AWS_*`` variable but :data:`KEPT_AWS_VARIABLES` is removed (keys, session token, profile, the
    shared files, web identity and role, the ECS/EKS container credential endpoints, the metadata endpoint,
    per-service endpoint URLs, ...), whatever SDK release reads which of them. The shared config and
    credentials files are then ``/dev/null``, so neither the default profile nor a ``credential_process`` in
    ``~/.aws`` is read, and ``AWS_EC2_METADATA_DISABLED`` stops the SDK from asking the instance metadata
    service."""
    env = os.environ if environ is None else environ
    changes: dict[str, str | None] = {name: None for name in env
                                      if name.upper().startswith("AWS_") and name.upper() not in KEPT_AWS_VARIABLES}
    changes.update(DUMMY_CREDENTIALS)
    changes.update({
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": endpoint_url,
    })
    return changes


def terraform_environment(endpoint_url: str | None, send_credentials: bool) -> dict[str, str | None]:
    """The changes to Terraform's environment for a target: none for AWS; for an emulator,
    :func:`emulator_environment`, or with ``send_credentials`` (the command line's opt-in) only
    ``AWS_ENDPOINT_URL``, so the runner's own credentials go with it."""
    if not endpoint_url:
        return {}
    if send_credentials:
        return {"AWS_ENDPOINT_URL": endpoint_url}
    return emulator_environment(endpoint_url)
