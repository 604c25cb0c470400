"""An override may not set an attribute fastscale owns.

Some attributes hold the stack together, and an override of them would break it quietly:

- the ownership tags (`tags`, `tags_all`): teardown, `sweep` and `verify-cleanup` prove a resource belongs to
  the stack by them, so overriding them could make a resource undeletable by fastscale or, worse, make
  another project's resource look like this one's (set the config's `tags` instead);
- names (`name`, `name_prefix`, `endpoint_config_name`, `inference_component_name`): verification,
  teardown and the auto-scaling resource ids find the resources by them, and the endpoint configuration's
  and models' names change with their content so updates replace them safely;
- `region`, on every type: hashicorp/aws 6 places each resource in its own region, where `status`,
  verify-cleanup, `sweep` and the stack's other resources, all in the config's `region`, never look;
- the wiring between the stack's resources: the variant's name, model and endpoint references, a shadow
  variant's model (one the stack does not make would serve a copy of the traffic), the execution role
  (bring your own with `execution_role_arn`), the cut-over count and the component's copy count (auto
  scaling owns it after creation).

An override that replaces a whole block holding one of them (`production_variants.0: {...}`) is refused too.
docs/overrides.md lists every owned attribute per type.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model import overrides
from fastscale.infra.rules import Hit, Severity, rule
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
      aws_sagemaker_endpoint:
        tags:
          fastscale:project: other
"""


@rule("FS103", "override-owned-attribute", Severity.ERROR,
      "An override sets an attribute fastscale owns (names, ownership tags, references between resources).")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for where, type_, path, problem in overrides.path_problems(config):
        if problem.kind == "owned":
            yield Hit(key_path(key_path(f"{where}.overrides", type_), path), problem.message, problem.hint)
