"""Names must be legal once fastscale has built the AWS resource names from them.

fastscale names resources through `infra.model.naming`: endpoint and model `{project}-{endpoint}`, endpoint
configuration `{project}-{endpoint}-` + the 26-character suffix Terraform's `name_prefix` appends,
inference component `{project}-{component}`, execution role `{project}-{endpoint}-sagemaker-{region}`.
SageMaker names allow letters, digits and single or repeated hyphens between them
(`^[a-zA-Z0-9](-*[a-zA-Z0-9])*$`) and at most 63 characters; IAM role names at most 64. The endpoint
configuration is the tightest: `{project}-{endpoint}` can have at most 36 characters (the role name then
has at most 62, with the longest region name of 15 characters). `project`, endpoint names and component names
must each match the SageMaker pattern on their own, since they are joined with a hyphen.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model import naming
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import SAGEMAKER_NAME_RE

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: qwen3_8b_instruct
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

_PATTERN_HINT = "use letters, digits and hyphens only, starting and ending with a letter or digit"


def _pattern_hit(path: str, what: str, value: str) -> Hit:
    suggestion = "-".join(part for part in "".join(c if c.isalnum() and c.isascii() else "-" for c in value).split("-") if part)
    example = f" (e.g. '{suggestion}')" if suggestion and suggestion != value else ""
    return Hit(
        path,
        f"{what} {value!r} is not a legal SageMaker name part: names allow only letters, digits and hyphens "
        "between them, so creating the resources would fail.",
        _PATTERN_HINT + example,
    )


def _length_hit(path: str, own: str, project: str, derived: list[tuple[str, str, int, int]]) -> Hit | None:
    """`derived` holds (label, shown name, length, limit); report once, for the tightest limit, how short `own` must be."""
    over = [(label, shown, length, limit) for label, shown, length, limit in derived if length > limit]
    if not over:
        return None
    excess = max(length - limit for _, _, length, limit in over)
    allowed = len(own) - excess
    details = "; ".join(f"{label} {shown} has {length} characters (max {limit})" for label, shown, length, limit in over)
    if allowed >= 1:
        hint = f"shorten '{own}' to at most {allowed} characters"
    else:
        hint = f"shorten project and name together to at most {len(project) + allowed} characters (project '{project}' has {len(project)})"
    return Hit(path, f"the names built from it are too long for AWS: {details}.", hint)


def _named(label: str, name: str, limit: int) -> tuple[str, str, int, int]:
    return label, f"'{name}'", len(name), limit


@stack_rule("FS016", "invalid-name", Severity.ERROR, "A project, endpoint or component name makes an illegal or too long AWS resource name.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    project = stack.project
    if not SAGEMAKER_NAME_RE.fullmatch(project):
        yield _pattern_hit("project", "project", project)
    for ep in stack.endpoints:
        path = ep.path
        if not SAGEMAKER_NAME_RE.fullmatch(ep.key):
            yield _pattern_hit(f"{path}.name", "endpoint name", ep.key)
        suffix = naming.NAME_PREFIX_SUFFIX_LEN
        derived = [
            _named("endpoint name", ep.name, naming.SAGEMAKER_NAME_MAX),
            (
                "endpoint configuration name",
                f"'{ep.endpoint_config_prefix}' + Terraform's {suffix}-character suffix",
                len(ep.endpoint_config_prefix) + suffix,
                naming.SAGEMAKER_NAME_MAX,
            ),
        ]
        if ep.model is not None:
            derived.append(_named("model name", ep.model.model, naming.SAGEMAKER_NAME_MAX))
        if ep.execution_role is not None:
            derived.append(_named("IAM role name", ep.execution_role, naming.IAM_ROLE_NAME_MAX))
        hit = _length_hit(f"{path}.name", ep.key, project, derived)
        if hit:
            yield hit
        for c in ep.components:
            cpath = f"{path}.{c.path}.name"
            if not SAGEMAKER_NAME_RE.fullmatch(c.key):
                yield _pattern_hit(cpath, "component name", c.key)
            hit = _length_hit(
                cpath, c.key, project, [_named("inference component name", c.name, naming.SAGEMAKER_NAME_MAX)]
            )
            if hit:
                yield hit
