"""How many instances a new endpoint configuration starts with: never fewer than the live fleet.

An endpoint update (blue/green or rolling) moves the endpoint to a new endpoint configuration, and SageMaker
sizes the new fleet by that configuration's ``InitialInstanceCount``: ``UpdateEndpoint`` takes the new
configuration's variant properties unless ``RetainAllVariantProperties`` is set, and hashicorp/aws's
``aws_sagemaker_endpoint`` cannot send it (its arguments are the name, the configuration name, the
deployment configuration and tags). An endpoint that auto scaling has taken to 4 instances would cut over
to ``instances.initial`` (1) and have to scale out again under load.

So the stack reads the count from a Terraform variable per endpoint (default ``instances.initial``), and
``plan`` / ``deploy`` set it in a ``*.auto.tfvars.json`` file in the run's own Terraform directory
(``infra.terraform.workdir``) to the live count when that
is higher, capped by ``instances.max``: ``max(initial, min(live, max))``. The endpoint configuration
ignores changes of the count (``lifecycle.ignore_changes``), so a new live count alone never starts an
update; when the configuration is replaced for another reason, Terraform creates the new one with the
variable's value of that moment (checked with a real plan in tests/contract/test_cutover_plan.py).

Pure: the live counts are read by ``infra.aws.cutover``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fastscale.infra.config import EndpointSpec, FastscaleConfig
    from fastscale.infra.model.resolved import ResolvedStack

#: Where the count sits in both endpoint configuration resources (one production variant per endpoint).
IGNORE_PATH = "production_variants[0].initial_instance_count"
#: The file beside the run directory's copy of the stack's JSON that holds the counts this `plan` or `deploy` read
#: (Terraform loads every `*.auto.tfvars.json` of the working directory by itself).
TFVARS_FILE = "fastscale-cutover.auto.tfvars.json"


class _Instances(Protocol):
    @property
    def initial(self) -> int: ...
    @property
    def max(self) -> int: ...


class Fleet(Protocol):
    """An endpoint's instance counts: the config's `EndpointSpec` or the resolved endpoint."""

    @property
    def instances(self) -> _Instances: ...


def variable_name(ep: EndpointSpec) -> str:
    return f"cutover_instances_{ep.name}"


def variables(config: FastscaleConfig) -> dict[str, dict[str, Any]]:
    """The stack's Terraform variables, one per endpoint, defaulting to ``instances.initial``."""
    return {
        variable_name(ep): {
            "type": "number",
            "default": ep.instances.initial,
            "description": f"Instances a new endpoint configuration of '{ep.name}' starts with (set by fastscale "
            "plan/deploy to the live count when higher, capped by instances.max)",
        }
        for ep in config.endpoints
    }


def cutover_count(ep: Fleet, live: int | None) -> int:
    """``max(initial, min(live, max))``: the live fleet, within the config's bounds, never below initial."""
    initial = ep.instances.initial
    if live is None:
        return initial
    return max(initial, min(live, ep.instances.max))


def tfvars(stack: ResolvedStack, live: Mapping[str, int | None]) -> dict[str, int]:
    """The variables' values for the live counts, by each endpoint's name in AWS (``ResolvedEndpoint.name``: an
    adopted endpoint's live name, as ``infra.aws.cutover.live_instance_counts`` reads them)."""
    return {ep.cutover_variable: cutover_count(ep, live.get(ep.name)) for ep in stack.endpoints}
