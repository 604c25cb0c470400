"""The S3 state backend's bucket must be a valid S3 bucket name.

General-purpose bucket names have 3-63 characters: lowercase letters, digits, dots and hyphens, starting
and ending with a letter or digit, no `..`, not shaped like an IP address, and not using the prefixes
(`xn--`, `sthree-`, `amzn-s3-demo-`) or suffixes (`-s3alias`, `--ol-s3`, `.mrap`, `--x-s3`, `--table-s3`)
AWS reserves. A common slip is writing `s3://bucket`: the field wants the bare name. Caught here,
`terraform init` does not fail half-way with a cryptic backend error.

AWS sources: https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-east-1
state: {backend: s3, bucket: "s3://Team_State", key: demo/terraform.tfstate}
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_IP_RE = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def bucket_problem(name: str) -> str | None:
    """Why `name` is not a valid general-purpose bucket name, or None."""
    if "://" in name or "/" in name:
        return "it must be the bare bucket name, without s3:// or a path"
    if not 3 <= len(name) <= 63:
        return f"it has {len(name)} characters; bucket names have 3 to 63"
    if not _BUCKET_RE.fullmatch(name):
        return "bucket names use lowercase letters, digits, dots and hyphens, and start and end with a letter or digit"
    if ".." in name:
        return "bucket names cannot contain two adjacent dots"
    if _IP_RE.fullmatch(name):
        return "bucket names cannot look like an IP address"
    for prefix in _RESERVED_PREFIXES:
        if name.startswith(prefix):
            return f"the prefix '{prefix}' is reserved by AWS"
    for suffix in _RESERVED_SUFFIXES:
        if name.endswith(suffix):
            return f"the suffix '{suffix}' is reserved by AWS"
    return None


def _suggest(name: str) -> str:
    bare = name.split("://", 1)[-1].split("/", 1)[0].lower()
    bare = re.sub(r"[^a-z0-9.-]+", "-", bare).strip(".-")
    bare = re.sub(r"\.{2,}", ".", bare)[:63].strip(".-")
    return bare if len(bare) >= 3 and bucket_problem(bare) is None else "my-team-terraform-state"


@rule("FS029", "invalid-state-bucket", Severity.ERROR, "The S3 state backend's bucket is not a valid S3 bucket name.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    state = config.state
    if not isinstance(state, S3State):
        return
    problem = bucket_problem(state.bucket)
    if problem is None:
        return
    yield Hit(
        "state.bucket",
        f"{state.bucket!r} is not a valid S3 bucket name: {problem}. terraform init would fail to configure the backend.",
        f"use the bucket's bare name, e.g. bucket: {_suggest(state.bucket)}",
    )
