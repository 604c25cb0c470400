"""``fastscale validate --check-aws``: do the container images and model data the config names exist?

A missing image tag or an S3 typo is only discovered by SageMaker after the endpoint has spent minutes
provisioning a GPU instance, and then surfaces as a generic "failed to pull" / health-check failure.
Asking ECR and S3 first costs two calls per artifact.

Findings: FS900 (image) and FS901 (model data), severity error when the artifact is missing. When AWS
does not let the caller look (no ecr:DescribeImages on someone else's registry, no s3:ListBucket), the
finding is a warning saying the check could not be made, since the endpoint's role may still have access.
Images outside ECR and non-S3 model data are left to the static rules.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from fastscale.infra.artifacts import parse_image, parse_s3_uri
from fastscale.infra.aws.clients import (
    AwsClients,
    ClientsArg,
    describe_error,
    error_code,
    is_access_error,
    resolve,
    translate_errors,
)
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Finding, Severity

IMAGE_CODE = "FS900"
MODEL_DATA_CODE = "FS901"

# What ECR's BatchGetImage may answer; these are the media types SageMaker can pull.
_MANIFEST_TYPES = [
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
]


@translate_errors
def check_artifacts(config: FastscaleConfig, clients: ClientsArg = None) -> list[Finding]:
    """FS900 for every ECR image that does not exist, FS901 for every S3 model location that does not.

    Raises :class:`AwsError` (with what to do about it) when AWS cannot be asked at all: no credentials,
    no connection, or a refusal of more than the per-artifact look-ups, which become warnings."""
    aws = resolve(clients, config)
    findings: list[Finding] = []
    images: dict[str, Finding | None] = {}  # the same image is often shared: ask once
    data: dict[str, Finding | None] = {}
    for i, ep in enumerate(config.endpoints):
        for wpath, workload in ep.workloads():
            base = f"endpoints[{i}].{wpath}"
            if workload.image not in images:
                images[workload.image] = _check_image(aws, workload.image, f"{base}.image")
            if workload.model_data and workload.model_data not in data:
                data[workload.model_data] = _check_model_data(aws, workload.model_data, f"{base}.model_data")
    findings += [f for f in images.values() if f]
    findings += [f for f in data.values() if f]
    return findings


def _check_image(aws: AwsClients, uri: str, path: str) -> Finding | None:
    image = parse_image(uri)
    if not image.is_ecr:
        return None  # images outside private ECR are the rules' concern (FS003), not looked up here
    ecr = aws.get("ecr", image.ecr_region)
    where = f"repository {image.repository} of registry {image.ecr_account} in {image.ecr_region}"
    try:
        ecr.describe_images(registryId=image.ecr_account, repositoryName=image.repository, imageIds=[image.image_id])
        return None
    except ClientError as exc:
        code = error_code(exc)
        if code == "ImageNotFoundException":
            return _missing_image(path, uri, f"image {image.reference} does not exist in {where}")
        if code == "RepositoryNotFoundException":
            return _missing_image(path, uri, f"{where} does not exist")
        if not is_access_error(exc):
            raise
    # Registries of other accounts (e.g. AWS Deep Learning Containers) allow pulls but not
    # DescribeImages; BatchGetImage is part of a pull, so it answers for them.
    try:
        got = ecr.batch_get_image(
            registryId=image.ecr_account,
            repositoryName=image.repository,
            imageIds=[image.image_id],
            acceptedMediaTypes=_MANIFEST_TYPES,
        )
    except ClientError as exc:
        if error_code(exc) == "RepositoryNotFoundException":
            return _missing_image(path, uri, f"{where} does not exist")
        if not is_access_error(exc):
            raise
        return Finding(
            IMAGE_CODE,
            Severity.WARNING,
            path,
            f"could not check that {uri} exists: {describe_error(exc)}",
            "grant ecr:DescribeImages (or ecr:BatchGetImage) on the repository to check it before deploying",
        )
    if got.get("images"):
        return None
    reasons = ", ".join(f.get("failureCode", "") for f in got.get("failures", [])) or "not found"
    return _missing_image(path, uri, f"image {image.reference} does not exist in {where} ({reasons})")


def _missing_image(path: str, uri: str, why: str) -> Finding:
    return Finding(
        IMAGE_CODE,
        Severity.ERROR,
        path,
        f"{uri}: {why}; SageMaker would fail to pull it after provisioning the instance",
        "push the image (or fix the tag / digest) before deploying",
    )


def _check_model_data(aws: AwsClients, uri: str, path: str) -> Finding | None:
    location = parse_s3_uri(uri)
    if location is None:
        return None
    bucket, key = location.bucket, location.key
    s3 = aws.get("s3")
    try:
        if not key or key.endswith("/"):
            listing = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
            if listing.get("KeyCount", 0) == 0:
                return _missing_data(path, f"no objects under {uri}", "upload the model files under this prefix, or fix the URI")
            return None
        try:
            s3.head_object(Bucket=bucket, Key=key)
            return None
        except ClientError as exc:
            if error_code(exc) not in ("404", "NoSuchKey", "NotFound"):
                raise
        # Uncompressed models are a prefix: say so when the URI only lacks its trailing slash.
        listing = s3.list_objects_v2(Bucket=bucket, Prefix=key + "/", MaxKeys=1)
        if listing.get("KeyCount", 0) > 0:
            return _missing_data(
                path, f"{uri} is not an object but a prefix with objects under it", f"end the URI with '/': {uri}/"
            )
        return _missing_data(path, f"object {uri} does not exist", "upload the model archive, or fix the URI")
    except ClientError as exc:
        code = error_code(exc)
        if code == "NoSuchBucket":
            return _missing_data(path, f"bucket {bucket} does not exist", "create the bucket and upload the model, or fix the URI")
        if code in ("403", "Forbidden") or is_access_error(exc):
            return Finding(
                MODEL_DATA_CODE,
                Severity.WARNING,
                path,
                f"could not check that {uri} exists: access denied",
                "grant s3:ListBucket and s3:GetObject on the model location to check it before deploying",
            )
        raise


def _missing_data(path: str, why: str, hint: str) -> Finding:
    return Finding(MODEL_DATA_CODE, Severity.ERROR, path, f"{why}; the model download would fail after the instance starts", hint)
