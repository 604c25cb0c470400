"""The Terraform resource types a fastscale stack creates: the one list the rest is derived from or checked
against.

Derived from it: the provider schemas `scripts/extract_provider_schemas.py` extracts, the props classes
`scripts/gen_resource_props.py` generates. Checked against it (`tests/test_resource_types.py`): the resource
classes of `stacks/resources/` (one per type), the teardown inventory's kinds (`infra/aws/inventory/kinds.py`:
every provider type belongs to exactly one kind), the committed provider schemas
(`tests/contract/provider_schemas.json`) and the hand-written schemas of the built-in types
(`tests/contract/schema_check.py`). A type added here and nowhere else, or anywhere else and not here, fails
that test; docs/extending.md lists the steps.
"""

from __future__ import annotations

#: Provider resource types, by the provider's local name (the prefix of its types).
PROVIDER_RESOURCE_TYPES: dict[str, tuple[str, ...]] = {
    "aws": (
        "aws_appautoscaling_policy",
        "aws_appautoscaling_target",
        "aws_cloudwatch_dashboard",
        "aws_cloudwatch_metric_alarm",
        "aws_iam_role",
        "aws_iam_role_policy",
        "aws_sagemaker_endpoint",
        "aws_sagemaker_endpoint_configuration",
        "aws_sagemaker_model",
    ),
    "awscc": (
        "awscc_sagemaker_endpoint_config",
        "awscc_sagemaker_inference_component",
    ),
}

#: Terraform's built-in resource types (provider terraform.io/builtin/terraform, part of the binary): they live
#: in the state only, with nothing in AWS to inventory or delete, and have no provider schema to extract.
BUILTIN_RESOURCE_TYPES: tuple[str, ...] = ("terraform_data",)

#: Every resource type a synthesized stack may hold.
RESOURCE_TYPES: frozenset[str] = frozenset(
    {t for types in PROVIDER_RESOURCE_TYPES.values() for t in types} | set(BUILTIN_RESOURCE_TYPES)
)
