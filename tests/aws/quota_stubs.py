"""Service Quotas answers for the quota preflight tests (moto 5.2.5 has no ListServiceQuotas)."""

from __future__ import annotations

from typing import Any

from tests.aws.factories import ACCOUNT, REGION, stubbed

SERVICE = {"ServiceCode": "sagemaker"}


def quota(instance_type: str, value: float, code: str = "L-0000") -> dict[str, Any]:
    return {
        "ServiceCode": "sagemaker",
        "ServiceName": "Amazon SageMaker",
        "QuotaArn": f"arn:aws:servicequotas:{REGION}:{ACCOUNT}:sagemaker/{code}",
        "QuotaCode": code,
        "QuotaName": f"{instance_type} for endpoint usage",
        "Value": value,
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
    }


def quotas_client(*pages: list[dict[str, Any]], defaults: list[dict[str, Any]] | None = None) -> tuple[Any, Any]:
    """A service-quotas client answering ListServiceQuotas with ``pages`` (NextToken between them) and, when
    ``defaults`` is given, ListAWSDefaultServiceQuotas with them."""
    client, stub = stubbed("service-quotas")
    for i, page in enumerate(pages):
        answer: dict[str, Any] = {"Quotas": page}
        if i < len(pages) - 1:
            answer["NextToken"] = f"page-{i + 1}"
        stub.add_response("list_service_quotas", answer, {**SERVICE, **({"NextToken": f"page-{i}"} if i else {})})
    if defaults is not None:
        stub.add_response("list_aws_default_service_quotas", {"Quotas": defaults}, SERVICE)
    return client, stub
