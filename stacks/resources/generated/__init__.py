"""Typed props of the resource types fastscale uses, one module per provider (`aws`, `awscc`), generated from
the provider schemas by scripts/gen_resource_props.py (tests/stacks/test_generated_props.py fails while they
are stale). The resource classes that take them are in `stacks.resources.sagemaker`, `awscc`, `autoscaling`,
`cloudwatch` and `iam`.
"""
