"""The whole config file: project, region, tags, endpoints, Terraform state, dashboard, providers and the
emulator URL."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    PrivateAttr,
    field_validator,
)

from fastscale.infra.base.network import endpoint_url_problem
from fastscale.infra.base.provider_versions import DEFAULT_AWS, DEFAULT_AWSCC, Constraint, ConstraintError
from fastscale.infra.config.common import TagKey, TagValue, _Strict
from fastscale.infra.config.endpoint import EndpointSpec

# --------------------------------------------------------------------------------------------- state


class LocalState(_Strict):
    """Terraform state in a local file."""

    backend: Literal["local"] = "local"
    path: str | None = Field(
        None,
        description="State file path, relative to the project root (the directory fastscale runs in) and "
        "inside it: no absolute path, no `..`, no symbolic link on the way (rule FS095). Default: "
        "terraform.<project>.<region>.tfstate in the project root, never inside the synth output directory. "
        "The state holds every environment value in plain text (mode 0600).",
    )


class S3State(_Strict):
    """Terraform state in Amazon S3, locked so two applies never run at once."""

    backend: Literal["s3"]
    bucket: str = Field(..., description="State bucket (create it first, with versioning).")
    key: str = Field(..., description="Object key of the state file.")
    region: str | None = Field(None, description="Bucket region (default: the project region).")
    use_lockfile: bool = Field(True, description="S3-native state locking (Terraform >= 1.10).")
    dynamodb_table: str | None = Field(None, description="Legacy DynamoDB lock table.")
    encrypt: bool = Field(True, description="Server-side encryption of the state object.")
    kms_key_id: str | None = Field(None, description="KMS key for the state object.")
    endpoint_url: str | None = Field(
        None,
        description="S3 endpoint of an AWS emulator holding the state bucket. Required when the project's "
        "`endpoint_url` is set, so state never goes to real S3 while resources go to an emulator; without "
        "`endpoint_url` it needs --send-credentials-to-endpoint-url (rule FS096). The same hosts as "
        "`endpoint_url` are accepted, and its requests carry the same dummy credentials.",
    )

    _url = field_validator("endpoint_url")(lambda v: check_endpoint_url(v))


State = Annotated[LocalState | S3State, Field(discriminator="backend")]


class Dashboard(_Strict):
    """The stack's CloudWatch dashboard: concurrency, copies, instances, invocations, failures, latency."""

    enabled: bool = Field(True, description="Create the dashboard.")


class Providers(_Strict):
    """Terraform provider version constraints (Terraform syntax), e.g. to match an internal provider mirror."""

    aws: str = Field(DEFAULT_AWS, description="Version constraint for hashicorp/aws. Checked against the oldest "
                     "release that has every attribute the stack writes (rule FS071).")
    awscc: str = Field(DEFAULT_AWSCC, description="Version constraint for hashicorp/awscc (inference components, "
                       "metrics configuration). Checked like `aws`.")

    @field_validator("aws", "awscc")
    @classmethod
    def _constraint(cls, value: str) -> str:
        try:
            constraint = Constraint.parse(value)
        except ConstraintError as exc:
            raise ValueError(f"{exc}; for example '~> 6.25' or '>= 6.21.0, < 7.0'") from None
        if not constraint.admits_any():
            raise ValueError(f"'{value}' admits no version at all")
        return value


def check_endpoint_url(value: str | None) -> str | None:
    """An emulator URL: http(s)://host[:port][/path] in printable ASCII, nothing else (no credentials, query
    or fragment), whose host is not cloud-internal (``infra.base.network``)."""
    if value is None:
        return None
    problem = endpoint_url_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value.rstrip("/")


# --------------------------------------------------------------------------------------------- root


class FastscaleConfig(_Strict):
    """A fastscale project: one Terraform stack holding every endpoint below."""

    project: str = Field(..., description="Prefix of every resource name, and the stack name.")
    region: str = Field(..., description="AWS region, e.g. us-east-1.")
    tags: dict[TagKey, TagValue] = Field(
        default_factory=dict, max_length=50, description="Added to every resource that takes tags (at most 50)."
    )
    endpoints: list[EndpointSpec] = Field(..., min_length=1, description="The endpoints of this project (at least one).")
    state: State = Field(default_factory=LocalState, description="Terraform backend: `local` (default) or `s3` with locking.")
    dashboard: Dashboard = Field(default_factory=Dashboard, description="One CloudWatch dashboard for the whole stack.")
    providers: Providers = Field(default_factory=Providers, description="Terraform provider version constraints.")
    endpoint_url: str | None = Field(
        None,
        description="Send every AWS call — Terraform's providers and fastscale's own boto3 calls — to this URL "
        "instead of AWS: an emulator such as LocalStack or moto (docs/emulator.md). The command-line option "
        "--endpoint-url overrides it. Never set it for a real account. The calls carry the dummy credentials "
        "testing/testing, never yours, unless the command line says --send-credentials-to-endpoint-url. Only "
        "loopback (localhost, 127.0.0.1, ::1) and private addresses (10.x, 172.16-31.x, 192.168.x, fc00::/7) are "
        "accepted; any other host needs that flag too, and link-local, metadata and other cloud-internal "
        "addresses (169.254.0.0/16, fd00:ec2::/32) are always refused (docs/emulator.md).",
    )

    _url = field_validator("endpoint_url")(lambda v: check_endpoint_url(v))
    # Set only from the command line (`--send-credentials-to-endpoint-url`), never from the file: the file is
    # what an untrusted change edits. Rule FS096 and the AWS clients read it.
    _credentials_to_endpoint: bool = PrivateAttr(default=False)

    @property
    def sends_credentials_to_endpoint(self) -> bool:
        """Whether the command line said `--send-credentials-to-endpoint-url`: AWS calls to `endpoint_url` (and
        `state.endpoint_url`) then carry the runner's real AWS credentials, and those URLs may name remote hosts.
        Without it they carry dummy credentials (``infra.base.credentials``)."""
        return self._credentials_to_endpoint

    def sending_credentials_to_endpoint(self, send: bool = True) -> FastscaleConfig:
        """A copy of this config with the command line's `--send-credentials-to-endpoint-url` applied."""
        copy = self.model_copy()
        copy._credentials_to_endpoint = send
        return copy
