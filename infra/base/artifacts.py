"""Where a workload's artifacts live: container image references and S3 model-data URIs.

One parser for each, shared by the validation rules (is the image cacheable?), the stacks (which ECR
repository and S3 prefix the execution role may read) and the AWS preflight (does it exist?).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastscale.infra.base.aws_facts import IMAGE_MAX_LEN, MODEL_DATA_MAX_LEN

# Private ECR registry hosts: IPv4 (…dkr.ecr.<region>.amazonaws.com), FIPS, China (.com.cn) and dual-stack
# (…dkr-ecr.<region>.on.aws). ECR Public (public.ecr.aws) is not a private registry and is not cached.
_ECR_HOST_RE = re.compile(
    r"(?P<account>\d{12})\.(?:dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?"
    r"|dkr-ecr(?:-fips)?\.(?P<region_ds>[a-z0-9-]+)\.on\.aws)"
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
        m = _ECR_HOST_RE.fullmatch(registry.lower())
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


# --------------------------------------------------------------------------------------------- what AWS accepts

# The image reference grammar of the OCI distribution specification (and Docker's reference package):
#   reference := name [":" tag] ["@" digest];  name := [domain "/"] path-component ["/" path-component]*
# A path component is lower-case letters and digits, separated by ".", "_", "__" or runs of "-"; a domain is
# a host name (or bracketed IPv6 address) with an optional port; a tag is a word character and up to 127
# word characters, "." or "-"; a digest is algorithm ":" at least 32 hex digits.
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_IMAGE_RE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<algorithm>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*):(?P<hex>[0-9a-fA-F]{32,}))?"
)
#: Characters that appear somewhere in a valid reference; anything else is named in the message.
_IMAGE_ODD_RE = re.compile(r"[^A-Za-z0-9._:/@\[\]-]")


def image_problem(uri: str) -> str | None:
    """Why ``uri`` is not a container image reference SageMaker can pull, or None when it is one."""
    if not uri or uri != uri.strip() or any(c.isspace() for c in uri):
        return "it is empty or contains whitespace"
    if len(uri) > IMAGE_MAX_LEN:
        return f"it is {len(uri)} characters long, more than the {IMAGE_MAX_LEN} SageMaker accepts"
    if _IMAGE_ODD_RE.search(uri):
        odd = sorted(set(_IMAGE_ODD_RE.findall(uri)))
        shown = " ".join(repr(c) for c in odd[:8])
        return f"it contains characters no image reference holds ({shown})"
    if uri.startswith(("/", ".")) or "/." in uri or "./" in uri:
        return "it is a file path, not registry/repository[:tag][@digest]"
    m = _IMAGE_RE.fullmatch(uri)
    if m is None:
        ref = parse_image(uri)
        if ref.repository != ref.repository.lower():
            return "the repository name has upper-case letters; repository names are lower case"
        if ref.digest is not None and not re.fullmatch(r"[A-Za-z][\w+.-]*:[0-9a-fA-F]{32,}", ref.digest):
            return "the digest is not algorithm:hex, e.g. sha256: and 64 hex digits"
        return "it is not registry/repository[:tag][@digest]"
    if m["algorithm"] == "sha256" and len(m["hex"]) != 64:
        return f"a sha256 digest has 64 hex digits, this one {len(m['hex'])}"
    return None


#: S3 bucket names (general purpose buckets): 3-63 lower-case letters, digits, dots and hyphens, starting
#: and ending with a letter or digit.
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def model_data_problem(uri: str) -> str | None:
    """Why ``uri`` is not model data SageMaker can load with the execution role fastscale grants, or None.

    botocore's `Url` pattern also admits https://, but the API reference calls `ModelDataUrl` "the S3 path
    where the model artifacts ... are stored", `ModelDataSource` takes an `S3Uri`, and the execution role
    fastscale writes grants S3 reads of s3:// locations only: s3:// is the one form that works."""
    scheme, sep, _ = uri.partition("://")
    if not sep or scheme.lower() != "s3":
        if scheme.lower() in ("https", "http") and sep:
            return "it is a web URL; SageMaker loads model data from Amazon S3 by its s3:// URI"
        kind = f"a {scheme}:// URL" if sep and scheme else "not a URL"
        return f"it is {kind}; SageMaker loads model data only from Amazon S3 (s3://bucket/key)"
    if len(uri) > MODEL_DATA_MAX_LEN:
        return f"it is {len(uri)} characters long, more than the {MODEL_DATA_MAX_LEN} SageMaker accepts"
    if not uri.startswith("s3://"):
        return "the scheme must be written s3:// in lower case"
    loc = parse_s3_uri(uri)
    if loc is None or not _BUCKET_RE.fullmatch(loc.bucket) or ".." in loc.bucket:
        return "the bucket name is not a valid S3 bucket name (3-63 lower-case letters, digits, '.' and '-')"
    if any(ord(c) < 32 or ord(c) == 127 for c in loc.key):
        return "the key contains control characters"
    return None
