"""An override must target a resource type its entry synthesizes.

`overrides:` sets raw provider attributes on the resources of one endpoint or one inference component
(docs/overrides.md). An endpoint's can target its endpoint configuration (`aws_sagemaker_endpoint_configuration`,
or `awscc_sagemaker_endpoint_config` when the endpoint sets what only awscc's configuration has: metrics,
capacity, scale-in or prefix/KV-aware routing settings, or an AMI or instance type hashicorp/aws's validation
does not know), its `aws_sagemaker_endpoint`, and on a single-model
endpoint its `aws_sagemaker_model`s; a component's, its `awscc_sagemaker_inference_component` and its
`aws_sagemaker_model`s. An override of any other type would change nothing, silently, so it is refused.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model import overrides
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import key_path

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
    overrides:
      awscc_sagemaker_endpoint_config:
        production_variants.0.enable_ssm_access: true
"""


@stack_rule("FS101", "override-target", Severity.ERROR,
            "An override targets a resource type its endpoint or component does not synthesize.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        entries = [(ep.path, overrides.endpoint_targets(ep.awscc_config, ep.model is not None), ep.overrides)]
        entries += [(f"{ep.path}.{c.path}", overrides.component_targets(), c.overrides) for c in ep.components]
        for where, targets, entry in entries:
            for type_ in entry:
                problem = overrides.target_problem(type_, targets, where)
                if problem is not None:
                    yield Hit(key_path(f"{where}.overrides", type_), problem.message, problem.hint)
