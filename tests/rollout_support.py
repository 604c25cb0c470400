"""Stacks of Terraform's built-in ``terraform_data`` whose changes are shaped like a live SageMaker stack's,
and the one step that turns their real plan into a SageMaker plan.

What is real: Terraform plans the change, and decides the ``actions`` (update in place, delete then create,
create before destroy), ``action_reason``, ``before`` / ``after`` values, which of them are known only after
apply, and that a replacement was forced. A resource's ``input`` holds the attributes the SageMaker resource
would have (``endpoint_config_name``, ``specification``, ``deployment_config`` as the aws and awscc providers
write them); its ``triggers_replace`` holds the attributes that force a new resource in the real provider, by
the same names.

What :func:`as_sagemaker` rewrites, and nothing else: the resource type (by the resource's name; the address
stays ``terraform_data.<name>``, as in Terraform's own progress events), the values (``input`` becomes the
resource's attributes, in the changes, the prior state and the planned values), and ``replace_paths``:
Terraform reports ``["triggers_replace"]``, which becomes the names of the trigger attributes whose value
changed.
"""

from __future__ import annotations

import copy
from typing import Any

ENDPOINT = "aws_sagemaker_endpoint"
COMPONENT = "awscc_sagemaker_inference_component"
ENDPOINT_CONFIG = "aws_sagemaker_endpoint_configuration"
ALARM = "aws_cloudwatch_metric_alarm"

#: terraform_data resource name -> the SageMaker resource type it stands for.
TYPES = {
    "endpoint_config": ENDPOINT_CONFIG,
    "endpoint": ENDPOINT,
    "chat": COMPONENT,
    "summarize": COMPONENT,
    "embed": COMPONENT,
    "latency_alarm": ALARM,
    "renamed": ENDPOINT,
    "added": ENDPOINT,
    "retired_alarm": ALARM,
}


def _unwrap(value: Any) -> Any:
    if value is True:
        return True
    return value.get("input") if isinstance(value, dict) else None


def as_sagemaker(plan: dict[str, Any], types: dict[str, str] | None = None) -> dict[str, Any]:
    """The real plan of a terraform_data stack, with each resource typed and valued as its SageMaker twin."""
    types = TYPES if types is None else types
    out = copy.deepcopy(plan)
    for rc in out.get("resource_changes", []):
        if rc["type"] != "terraform_data" or rc["name"] not in types:
            continue
        rc["type"] = types[rc["name"]]  # the address stays Terraform's, as its progress events name it
        change = rc["change"]
        before_triggers = (change.get("before") or {}).get("triggers_replace") or {}
        after_triggers = (change.get("after") or {}).get("triggers_replace") or {}
        for key in ("before", "after"):
            change[key] = _unwrap(change.get(key))
        unknown = _unwrap(change.get("after_unknown"))
        if unknown is True:
            unknown = {k: True for k in change.get("after") or {}}
        change["after_unknown"] = unknown or {}
        if change.get("replace_paths"):
            paths = [p for p in change["replace_paths"] if p[:1] != ["triggers_replace"]]
            paths += [[k] for k in sorted(set(before_triggers) | set(after_triggers))
                      if before_triggers.get(k) != after_triggers.get(k)]
            change["replace_paths"] = paths
    # The state before the plan and the values after it, typed and valued the same way.
    for section in (out.get("prior_state", {}).get("values"), out.get("planned_values")):
        for resource in ((section or {}).get("root_module") or {}).get("resources", []):
            if resource.get("type") == "terraform_data" and resource.get("name") in types:
                resource["type"] = types[resource["name"]]
                resource["values"] = _unwrap(resource.get("values"))
                resource["sensitive_values"] = _unwrap(resource.get("sensitive_values")) or {}
    return out


def twin(value: dict[str, Any], replace_on: tuple[str, ...] = (), cbd: bool = False) -> dict[str, Any]:
    """A terraform_data resource standing for a SageMaker one: ``value`` its attributes, ``replace_on`` those
    that force a new resource in the real provider, ``cbd`` its create_before_destroy."""
    body: dict[str, Any] = {"input": value}
    if replace_on:
        body["triggers_replace"] = {k: value[k] for k in replace_on}
    if cbd:
        body["lifecycle"] = {"create_before_destroy": True}
    return body


def rolling(batch: int, wait: int, alarms: tuple[str, ...]) -> dict[str, Any]:
    """A component's deployment_config as awscc writes it (nested attributes: objects)."""
    return {
        "rolling_update_policy": {"maximum_batch_size": {"type": "COPY_COUNT", "value": batch}, "wait_interval_in_seconds": wait,
                                  "maximum_execution_timeout_in_seconds": 3600, "rollback_maximum_batch_size": None},
        "auto_rollback_configuration": {"alarms": [{"alarm_name": a} for a in alarms]},
    }


def canary(percent: int, bake: int, alarms: tuple[str, ...]) -> list[dict[str, Any]]:
    """An endpoint's deployment_config as the aws provider writes it (blocks: one-element lists)."""
    return [{
        "blue_green_update_policy": [{
            "traffic_routing_configuration": [{"type": "CANARY", "wait_interval_in_seconds": bake,
                                               "canary_size": [{"type": "CAPACITY_PERCENT", "value": percent}],
                                               "linear_step_size": []}],
            "termination_wait_in_seconds": 0, "maximum_execution_timeout_in_seconds": 3600,
        }],
        "rolling_update_policy": [],
        "auto_rollback_configuration": [{"alarms": [{"alarm_name": a} for a in alarms]}],
    }]


def live_stack(version: int = 1) -> dict[str, Any]:
    """Version 1 is what is live; version 2 changes every kind of thing at once:

    - the endpoint configuration gets a new variant (replaced, created before the old one is destroyed),
      so the endpoint switches to it: an update of ``endpoint_config_name`` (known only after apply), with
      a canary deployment configuration;
    - component ``chat`` runs a new model (rolling update policy), ``embed`` too (no deployment
      configuration: SageMaker's default), ``summarize`` moves to another endpoint (replaced: downtime);
    - an alarm's threshold changes (in place); endpoint ``renamed`` gets a new name (replaced: downtime);
      endpoint ``added`` is new; alarm ``retired_alarm`` goes.
    """
    v2 = version >= 2
    alarms = ("demo-chat-5xx-errors", "demo-chat-model-latency")
    resources = {
        "endpoint_config": twin({"name_prefix": "demo-chat-", "production_variants": "g6-x2" if v2 else "g6-x1"},
                                 ("production_variants",), cbd=True),
        "endpoint": twin({"name": "demo-chat", "endpoint_config_name": "${terraform_data.endpoint_config.id}",
                           "deployment_config": canary(25, 600, alarms), "tags": {"fastscale:stack": "demo"}}, ("name",)),
        "chat": twin({"inference_component_name": "demo-chat-ic", "endpoint_name": "demo-chat",
                       "specification": {"model_name": "demo-chat-bbbb2222" if v2 else "demo-chat-aaaa1111"},
                       "deployment_config": rolling(1, 120, ("demo-chat-model-latency",))},
                      ("inference_component_name", "endpoint_name")),
        "embed": twin({"inference_component_name": "demo-embed", "endpoint_name": "demo-chat",
                        "specification": {"model_name": "demo-embed-dddd4444" if v2 else "demo-embed-cccc3333"}},
                       ("inference_component_name", "endpoint_name")),
        "summarize": twin({"inference_component_name": "demo-summarize", "endpoint_name": "demo-other" if v2 else "demo-chat",
                            "specification": {"model_name": "demo-summarize-eeee5555"}},
                           ("inference_component_name", "endpoint_name")),
        "latency_alarm": twin({"alarm_name": "demo-chat-model-latency", "threshold": 2000 if v2 else 1500}, ("alarm_name",)),
        "renamed": twin({"name": "demo-batch-v2" if v2 else "demo-batch", "endpoint_config_name": "demo-batch-1"}, ("name",)),
    }
    if v2:
        resources["added"] = twin({"name": "demo-new", "endpoint_config_name": "demo-new-1"}, ("name",))
    else:
        resources["retired_alarm"] = twin({"alarm_name": "demo-old"}, ("alarm_name",))
    return {"resource": {"terraform_data": resources}}


def tags_only_stack(version: int = 1) -> dict[str, Any]:
    """Only an endpoint's tags change between the versions."""
    return {"resource": {"terraform_data": {
        "endpoint": twin({"name": "demo-chat", "endpoint_config_name": "demo-chat-1",
                           "tags": {"team": "b" if version >= 2 else "a"}}, ("name",)),
    }}}


def replaced_endpoint_stack(version: int = 1) -> dict[str, Any]:
    """Version 2 renames the endpoint: Terraform replaces it."""
    return {"resource": {"terraform_data": {
        "endpoint": twin({"name": "demo-chat-v2" if version >= 2 else "demo-chat", "endpoint_config_name": "demo-chat-1"},
                          ("name",)),
    }}}


#: The rollback alarms of :func:`rolling_endpoint_stack`'s endpoint.
ENDPOINT_ALARMS = ("demo-chat-5xx-errors", "demo-chat-model-latency")


def rolling_endpoint_stack(version: int = 1) -> dict[str, Any]:
    """Version 2 switches the endpoint demo-chat to a new configuration, with a canary deployment
    configuration and two rollback alarms: SageMaker rolls it out while it keeps serving."""
    return {"resource": {"terraform_data": {
        "endpoint": twin({"name": "demo-chat", "endpoint_config_name": f"demo-chat-{version}",
                           "deployment_config": canary(25, 600, ENDPOINT_ALARMS)}, ("name",)),
    }}}


def renamed_component_endpoint_stack(version: int = 1) -> dict[str, Any]:
    """Version 2 renames an endpoint of inference components, wired as stacks.endpoint wires it: the
    component depends on the endpoint and is replaced whenever the `terraform_data` holding the endpoint's
    name changes (the component itself, as awscc's, has no attribute that forces a replacement)."""
    name = "demo-shared-v2" if version >= 2 else "demo-shared"
    chat = twin({"inference_component_name": "demo-chat", "endpoint_name": name})
    chat["depends_on"] = ["terraform_data.shared"]
    chat["lifecycle"] = {"replace_triggered_by": ["terraform_data.shared_name"]}
    return {"resource": {"terraform_data": {
        "shared": twin({"name": name, "endpoint_config_name": "demo-shared-1"}, ("name",)),
        "shared_name": {"input": name},
        "chat": chat,
    }}}


def drifted_model_stack(version: int = 1) -> dict[str, Any]:
    """Version 2 gives model demo-chat-aaaa1111 another VPC without renaming it (what a live model changed
    outside the stack looks like): Terraform replaces it, creating the new one first under the same name."""
    return {"resource": {"terraform_data": {
        "model": twin({"name": "demo-chat-aaaa1111", "vpc_config": "subnet-b" if version >= 2 else "subnet-a"},
                       ("vpc_config",), cbd=True),
    }}}
