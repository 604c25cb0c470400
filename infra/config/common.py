"""What every config section shares: the strict base model and the string types of names, tags,
environment values and overrides."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    JsonValue,
    StringConstraints,
)

_ENV_NAME_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _env_name(name: str) -> str:
    if not _ENV_NAME_RE.fullmatch(name):
        raise ValueError(
            f"{name[:64]!r} is not a valid environment variable name for SageMaker: letters, digits and _ only, "
            "not starting with a digit"
        )
    return name


#: botocore's limits on SageMaker environment maps and tags (EnvironmentKey/Value, TagKey/Value).
EnvName = Annotated[str, StringConstraints(max_length=1024), AfterValidator(_env_name)]
EnvValue = Annotated[str, StringConstraints(max_length=1024)]
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128)]
TagValue = Annotated[str, StringConstraints(max_length=256)]

#: `overrides:` of an endpoint or component: Terraform resource type -> dotted attribute path -> value.
OverrideType = Annotated[str, StringConstraints(min_length=1, max_length=128)]
OverridePath = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
Overrides = dict[OverrideType, dict[OverridePath, JsonValue]]
_OVERRIDES_HELP = (
    "Raw provider attributes of the resources this entry synthesizes: {<terraform resource type>: {<dotted "
    "attribute path>: value}}, e.g. {aws_sagemaker_endpoint_configuration: {production_variants.0."
    "enable_ssm_access: true}}. Added or replacing what fastscale writes; checked against the provider schema; "
    "strings sent literally (never evaluated by Terraform). See docs/overrides.md for the types each entry "
    "can target and the attributes fastscale keeps."
)


class _Strict(BaseModel):
    """Base for every config section: unknown keys are errors, so a typo never silently does nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)
