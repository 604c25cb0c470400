"""Where a workload's artifacts live: container image references and S3 model-data URIs.

One parser for each, shared by the validation rules (is the image cacheable?), the stacks (which ECR
repository and S3 prefix the execution role may read) and the AWS preflight (does it exist?).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Private ECR registry hosts: IPv4 (…dkr.ecr.<region>.amazonaws.com), FIPS, China (.com.cn) and dual-stack
# (…dkr-ecr.<region>.on.aws). ECR Public (public.ecr.aws) is not a private registry and is not cached.
_ECR_HOST_RE = re.compile(
    r"^(?P<account>\d{12})\.(?:dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?"
    r"|dkr-ecr(?:-fips)?\.(?P<region_ds>[a-z0-9-]+)\.on\.aws)$"
)


@dataclass(frozen=True)
class ImageRef:
    """A container image reference split the way Docker reads it: registry/repository[:tag][@digest]."""

    registry: str | None
    repository: str
    tag: str | None
    digest: str | None
    ecr_account: str | None = None
    ecr_region: str | None = None

    @property
    def is_ecr(self) -> bool:
        return self.ecr_region is not None

    @property
    def reference(self) -> str:
        """How the image is addressed in messages: the digest when there is one, else the tag."""
        return self.digest or f":{self.tag or 'latest'}"

    @property
    def image_id(self) -> dict[str, str]:
        """ECR `imageIds` entry. A digest pins exactly what is pulled, so it wins over a tag."""
        return {"imageDigest": self.digest} if self.digest else {"imageTag": self.tag or "latest"}

    @property
    def pinned(self) -> bool:
        """A digest pins exactly; a tag other than 'latest' is taken as a deliberate version."""
        if self.digest:
            return True
        return bool(self.tag and self.tag.lower() != "latest")


def parse_image(uri: str) -> ImageRef:
    rest, _, digest = uri.strip().partition("@")
    registry = None
    first, slash, remainder = rest.partition("/")
    # Docker's rule: the first component is a registry host when it has a dot or a port, or is localhost.
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, rest = first, remainder
    repository, tag = rest, None
    last_slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > last_slash:
        repository, tag = rest[:colon], rest[colon + 1 :] or None
    account = region = None
    if registry is not None:
        m = _ECR_HOST_RE.match(registry.lower())
        if m:
            account, region = m["account"], m["region"] or m["region_ds"]
    return ImageRef(registry, repository, tag, digest or None, account, region)


@dataclass(frozen=True)
class S3Location:
    bucket: str
    key: str

    @property
    def is_prefix(self) -> bool:
        """An uncompressed model is a prefix (ends in '/'); anything else names one object."""
        return self.key == "" or self.key.endswith("/")


def parse_s3_uri(uri: str) -> S3Location | None:
    """'s3://bucket/key' -> S3Location; None for anything that is not an S3 URI with a bucket."""
    if not uri.startswith("s3://"):
        return None
    bucket, _, key = uri[len("s3://") :].partition("/")
    return S3Location(bucket, key) if bucket else None
