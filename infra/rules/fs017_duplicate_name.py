"""Endpoint names and component names must be unique within the file.

Two endpoints with the same name would be one AWS endpoint that Terraform tries to create twice; two
components with the same name clash the same way, even on different endpoints, since a component's AWS name
(`{project}-{component}`) does not include its endpoint's. fastscale compares endpoint and component names
without regard to case (fastscale's choice, as `teardown` lists SageMaker resources the same way), so `Chat`
and `chat` clash too.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import components

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:2.0
"""


@stack_rule("FS017", "duplicate-name", Severity.ERROR, "Two endpoints, or two inference components, have the same name.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    seen: dict[str, str] = {}
    for ep in stack.endpoints:
        key = ep.key.lower()
        if key in seen:
            yield Hit(
                f"{ep.path}.name",
                f"endpoint name '{ep.key}' is already used by {seen[key]}: both would be the same SageMaker endpoint.",
                f"rename it, e.g. '{ep.key}-2'",
            )
        else:
            seen[key] = f"{ep.path}.name"
    seen = {}
    for path, _ep, c in components(stack):
        key = c.key.lower()
        if key in seen:
            yield Hit(
                f"{path}.name",
                f"component name '{c.key}' is already used by {seen[key]}: inference component names are unique "
                "per account and region, so the second would fail to create.",
                f"rename it, e.g. '{c.key}-2'",
            )
        else:
            seen[key] = f"{path}.name"
