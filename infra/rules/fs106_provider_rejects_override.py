"""An override must not give hashicorp/aws's endpoint configuration a variant value the provider refuses.

hashicorp/aws checks some values of a production variant itself, at `terraform validate` and `plan`, before
any AWS call: the routing strategy (LEAST_OUTSTANDING_REQUESTS or RANDOM), the inference AMI (its own list,
without the al2023 gpu-4-1 AMI), the instance type (a list fixed per release), the volume size (1-512 GB),
the model download and container startup health-check timeouts (60-3600 s) and the initial instance count
(at least 1). fastscale's own settings never write a value outside these into hashicorp/aws's configuration
(what it cannot take makes the configuration awscc's), but an override
(`aws_sagemaker_endpoint_configuration: {production_variants.0.<attribute>: ...}`) writes what it is given.
Such a value is refused here, with the provider's own bounds (`infra/base/aws_facts.py`, measured on the
provider mirror's hashicorp/aws 5.100.0 by tests/contract/test_terraform_validate.py), so the deploy does
not stop at `plan`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastscale.infra.base import aws_facts
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
        production_variants.0.volume_size_in_gb: 99999
"""

_VARIANTS = ("production_variants", "shadow_production_variants")


def _leaves(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every leaf of an override's value (a block or list set whole is walked)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(f"{path}.{key}", item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(f"{path}.{i}", item)
    else:
        yield path, value


def _refusal(attribute: str, value: Any) -> tuple[str, str] | None:
    """(what hashicorp/aws accepts, a fix) when it refuses `value` for `attribute` of a variant, else None."""
    if attribute in aws_facts.AWS_PROVIDER_VARIANT_RANGES and isinstance(value, int) and not isinstance(value, bool):
        low, high = aws_facts.AWS_PROVIDER_VARIANT_RANGES[attribute]
        if value < low or (high is not None and value > high):
            accepted = f"{low} to {high}" if high is not None else f"at least {low}"
            return accepted, f"set it to {low if value < low else high}"
    if attribute in aws_facts.AWS_PROVIDER_VARIANT_ENUMS and isinstance(value, str):
        accepted_values = aws_facts.AWS_PROVIDER_VARIANT_ENUMS[attribute]
        if value not in accepted_values:
            return f"one of {', '.join(accepted_values)}", (
                "use the endpoint's own setting instead (`routing`, `inference_ami_version`), which makes the "
                "endpoint configuration awscc's when hashicorp/aws cannot take the value")
    if attribute == "instance_type" and value in aws_facts.AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES:
        return "the instance types of its own list, which lacks this one", (
            "set the endpoint's instance_type instead: fastscale then uses awscc's endpoint configuration")
    return None


@rule("FS106", "provider-rejects-override", Severity.ERROR,
      "An override gives hashicorp/aws's endpoint configuration a variant value the provider refuses.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for where, targets, entry, _ep in overrides.entries(config):
        if overrides.ENDPOINT_CONFIG_AWS not in targets:
            continue
        for path, value in entry.get(overrides.ENDPOINT_CONFIG_AWS, {}).items():
            for leaf, leaf_value in _leaves(path, value):
                parts = [p for p in leaf.split(".") if not p.isdigit()]
                if not parts or parts[0] not in _VARIANTS:
                    continue
                refused = _refusal(parts[-1], leaf_value)
                if refused is None:
                    continue
                accepted, fix = refused
                yield Hit(
                    key_path(key_path(f"{where}.overrides", overrides.ENDPOINT_CONFIG_AWS), path),
                    f"{leaf} = {leaf_value!r}: hashicorp/aws accepts {accepted} there and refuses this value at "
                    "terraform validate/plan, so the deploy would stop.",
                    fix,
                )
