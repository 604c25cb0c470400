"""An override's attribute path must exist in the provider schema, and its value must have the attribute's type.

Overrides are sent to Terraform as they are written, so a misspelt attribute would only fail at `plan`, with
the provider's message about a JSON file the user never wrote. fastscale checks each dotted path against the
schema of the targeted type (hashicorp/aws 6.25.0, hashicorp/awscc 1.106.0, shipped with fastscale in
infra/model/override_schema.json): every part an attribute, a list stepped into by a numeric index
(`production_variants.0`), a single nested block by its attributes without an index, a map by its key; then
the value's type (string, number, bool, list, mapping of attributes). An unknown name comes with the closest
attribute there is. An index may name an element fastscale writes or the next one; fastscale counts them in
`production_variants`, `instance_pools` and `specifications`, and accepts only index 0 on other lists.
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
      aws_sagemaker_endpoint_configuration:
        production_variants.0.enable_ssm_acess: true
"""


@rule("FS102", "override-unknown-attribute", Severity.ERROR,
      "An override's attribute path is not in the provider schema, or its value has the wrong type.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for where, type_, path, problem in overrides.path_problems(config):
        if problem.kind == "unknown":
            yield Hit(key_path(key_path(f"{where}.overrides", type_), path), problem.message, problem.hint)
