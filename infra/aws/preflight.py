"""``fastscale validate --check-aws`` and ``fastscale plan``: will AWS be able to do what the config asks?

Artifacts (``check_artifacts``, validate --check-aws): do the container images and model data exist?

A missing image tag or an S3 typo is only discovered by SageMaker after the endpoint has spent minutes
provisioning a GPU instance, and then surfaces as a generic "failed to pull" / health-check failure.
Asking ECR and S3 first costs two calls per artifact.

Findings: FS900 (image) and FS901 (model data), severity error when the artifact is missing. When AWS
does not let the caller look (no ecr:DescribeImages on someone else's registry, no s3:ListBucket), the
finding is a warning saying the check could not be made, since the endpoint's role may still have access.
Images outside ECR and non-S3 model data are left to the static rules.

Quotas (``check_quotas``, validate --check-aws, plan and deploy): an endpoint's variant never grows past
the account's Service Quotas value "<instance type> for endpoint usage" (service code ``sagemaker``), and
scale-out stops there without an error anyone sees. FS902 is an error when the maximum instances of every
endpoint whose first-choice type it is, summed over the config, exceed that type's quota; a warning when
a fallback pool's type has no quota at all (SageMaker could never fall back to it) or less than the
endpoints falling back to it may ask for, and when the quotas could not be read. Against an AWS emulator
(``endpoint_url``) that has no Service Quotas API (moto, and fastscale's own emulator, which says so) the
finding is one warning saying exactly that: there are no quotas to check outside a real account.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    UNSUPPORTED_CODES,
    AwsClients,
    ClientsArg,
    describe_error,
    error_code,
    is_access_error,
    paginate,
    resolve,
    translate_errors,
)
from fastscale.infra.base.artifacts import parse_image, parse_s3_uri
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Finding, Severity

IMAGE_CODE = "FS900"
MODEL_DATA_CODE = "FS901"
QUOTA_CODE = "FS902"

#: Service Quotas: SageMaker's service code and the name of its per-instance-type endpoint quotas.
QUOTA_SERVICE_CODE = "sagemaker"
ENDPOINT_QUOTA_SUFFIX = " for endpoint usage"

# What ECR's BatchGetImage may answer; these are the media types SageMaker can pull.
_MANIFEST_TYPES = [
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
]


@translate_errors
def check_artifacts(stack: ResolvedStack, clients: ClientsArg = None) -> list[Finding]:
    """FS900 for every ECR image that does not exist, FS901 for every S3 model location that does not.

    Raises :class:`AwsError` (with what to do about it) when AWS cannot be asked at all: no credentials,
    no connection, or a refusal of more than the per-artifact look-ups, which become warnings."""
    aws = resolve(clients, stack)
    findings: list[Finding] = []
    images: dict[str, Finding | None] = {}  # the same image is often shared: ask once
    data: dict[str, Finding | None] = {}
    for ep in stack.endpoints:
        for workload in ep.workloads:  # as they run on the endpoint's own type
            base = f"{ep.path}.{workload.path}"
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


# --------------------------------------------------------------------------------------------- quotas


def _by_type(quotas: Iterable[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for quota in quotas:
        name = quota.get("QuotaName", "")
        if name.endswith(ENDPOINT_QUOTA_SUFFIX) and "Value" in quota:
            out[name[: -len(ENDPOINT_QUOTA_SUFFIX)]] = quota["Value"]
    return out


def endpoint_quotas(aws: AwsClients, instance_types: Iterable[str]) -> dict[str, float]:
    """Instance type -> the account's "<type> for endpoint usage" quota in the region, read from
    ListServiceQuotas (every page). That call leaves out quotas whose applied value is not available, so
    types it does not list are looked up among the AWS defaults (ListAWSDefaultServiceQuotas)."""
    api = aws.get("quotas")
    out = _by_type(paginate(api, "list_service_quotas", "Quotas", ServiceCode=QUOTA_SERVICE_CODE))
    if set(instance_types) - set(out):
        defaults = _by_type(paginate(api, "list_aws_default_service_quotas", "Quotas", ServiceCode=QUOTA_SERVICE_CODE))
        out = {**defaults, **out}
    return out


#: How emulators answer a Service Quotas call they do not implement: moto 5.2.5 with an HTTP 500 page
#: ("not implemented") for ListServiceQuotas and NoSuchResourceException for SageMaker's defaults;
#: fastscale's emulator with UnknownOperationException.
_NO_API_CODES = UNSUPPORTED_CODES | {"NoSuchResourceException"}


def _lacks_quotas_api(exc: ClientError) -> bool:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return error_code(exc) in _NO_API_CODES or status in (404, 500, 501)


def _short(exc: ClientError) -> str:
    code = error_code(exc)
    if code.isdigit():  # an HTML error page, not an AWS error
        return f"HTTP {code} from {exc.operation_name}"
    return f"{code} from {exc.operation_name}"


def _count(n: float) -> str:
    return f"{n:g}"


@translate_errors
def check_quotas(stack: ResolvedStack, clients: ClientsArg = None) -> list[Finding]:
    """FS902 findings: maximum instances per first-choice instance type against the account's quotas, and
    fallback types without quota. Raises ClientError / AwsError only when AWS cannot be used at all."""
    primary: dict[str, list[tuple[str, int]]] = {}  # type -> [(endpoint path, instances.max)]
    fallback: dict[str, list[tuple[str, int]]] = {}  # type -> [(fallback pool path, instances.max)]
    for ep in stack.endpoints:
        primary.setdefault(ep.instance_type, []).append((ep.path, ep.instances.max))
        for pool in ep.pools[1:]:
            fallback.setdefault(pool.instance_type, []).append((f"{ep.path}.{pool.path}", ep.instances.max))

    aws = resolve(clients, stack.region)
    try:
        quotas = endpoint_quotas(aws, [*primary, *fallback])
    except ClientError as exc:
        if stack.endpoint_url and _lacks_quotas_api(exc):
            return [
                Finding(
                    QUOTA_CODE,
                    Severity.WARNING,
                    "endpoints",
                    f"the emulator at {stack.endpoint_url} has no Service Quotas API ({_short(exc)}); "
                    "quotas not checked",
                    "nothing to fix for a rehearsal: instance quotas exist only in a real account, where plan, "
                    "deploy and `validate --check-aws` check them",
                )
            ]
        if not is_access_error(exc):
            raise
        return [
            Finding(
                QUOTA_CODE,
                Severity.WARNING,
                "endpoints",
                f"could not read the Service Quotas of SageMaker in {stack.region}: {describe_error(exc)}",
                "grant servicequotas:ListServiceQuotas to check instance quotas before deploying",
            )
        ]

    findings: list[Finding] = []
    for instance_type, users in primary.items():
        quota = quotas.get(instance_type)
        need = sum(m for _, m in users)
        name = f'"{instance_type}{ENDPOINT_QUOTA_SUFFIX}"'
        if quota is None:
            findings.append(Finding(
                QUOTA_CODE, Severity.WARNING, f"{users[0][0]}.instance_type",
                f"no Service Quotas quota named {name} in {stack.region}: the instance limit could not be checked",
                "check the quota in the Service Quotas console before deploying",
            ))
        elif need > quota:
            who = ", ".join(f"{path} max {m}" for path, m in users)
            findings.append(Finding(
                QUOTA_CODE, Severity.ERROR, f"{users[0][0]}.instances.max",
                f"up to {need} {instance_type} instances ({who}) but the account's quota {name} in {stack.region} is "
                f"{_count(quota)}: scale-out would stop at {_count(quota)} instance(s) without an error",
                f"request a quota increase to at least {need} in Service Quotas, or lower instances.max",
            ))
    for instance_type, users in fallback.items():
        quota = quotas.get(instance_type, 0.0)
        need = max(m for _, m in users)
        name = f'"{instance_type}{ENDPOINT_QUOTA_SUFFIX}"'
        for path, _ in users:
            if quota <= 0:
                message = (
                    f"the fallback pool {instance_type} has no quota in {stack.region} ({name} is "
                    f"{_count(quota) if instance_type in quotas else 'not listed'}): SageMaker could never fall back to it"
                )
            elif quota < need:
                message = (
                    f"the quota {name} is {_count(quota)}, fewer than the up to {need} instances that may fall back "
                    "to this pool"
                )
            else:
                continue
            findings.append(Finding(
                QUOTA_CODE, Severity.WARNING, f"{path}.instance_type", message,
                f"request a quota of at least {need} for {instance_type} in Service Quotas, or drop this fallback",
            ))
    return findings
