"""What moto's server (5.2.5) lacks for a live-stack lifecycle, added as handler methods on its response
classes for the length of a test module, each doing what AWS does:

- SageMaker ``UpdateEndpoint`` (moto has none): the endpoint switches to the named configuration, as AWS
  does once an update finishes, and it **fails as AWS does** when the update would change the instance type
  of a variant that is registered as an auto scaling target: "If the update would change the instance type
  for any model that is a target for auto scaling, the update fails" (SageMaker developer guide,
  https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html). Every call is recorded
  in ``CALLS`` with the registered targets it saw, so a test can show the rule was really exercised.
- SageMaker ``DescribeModel`` / ``DescribeEndpointConfig`` leave out what was never set: moto answers an
  empty ``VpcConfig`` and ``DataCaptureConfig``, which hashicorp/aws reads as drift and so replaces the
  model and configuration on every plan (AWS answers neither when none was set).
- Application Auto Scaling tags (``RegisterScalableTarget`` ``Tags``, ``ListTagsForResource``,
  ``TagResource``, ``UntagResource``): hashicorp/aws reads a scalable target's tags back after creating it,
  so without them no auto-scaled endpoint can be deployed on the emulator.

Used by tests/e2e (in the threaded server, which shares this process's memory).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

#: Every UpdateEndpoint the emulator received: endpoint, old and new instance types, registered targets, outcome.
CALLS: list[dict[str, Any]] = []
#: Tags per scalable target ARN.
_TAGS: dict[str, dict[str, str]] = {}

AUTOSCALING_RULE = (
    "The update would change the instance type of variant {variant}, which is a target for auto scaling: "
    "deregister the variant as a scalable target before the update (shim of the AWS rule)"
)


def _variant_types(backend: Any, config_name: str) -> dict[str, str | None]:
    config = backend.describe_endpoint_config(config_name)
    return {v["VariantName"]: v.get("InstanceType") for v in config["ProductionVariants"]}


def update_endpoint(self: Any) -> Any:
    """UpdateEndpoint on moto's SageMaker backend, with AWS's auto scaling rule."""
    from moto.applicationautoscaling.models import applicationautoscaling_backends
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.responses import ActionResult

    backend = self.sagemaker_backend
    name = self._get_param("EndpointName")
    backend.describe_endpoint(name)  # the emulator's own "Could not find" error
    endpoint = backend.endpoints[name]
    new_name = self._get_param("EndpointConfigName")
    config = backend.describe_endpoint_config(new_name)
    old, new = _variant_types(backend, endpoint.endpoint_config_name), _variant_types(backend, new_name)
    scaling = applicationautoscaling_backends[self.current_account][self.region]
    registered = {t.resource_id for t in scaling.describe_scalable_targets("sagemaker", None, None)}
    call = {"endpoint": name, "old": old, "new": new, "registered": sorted(registered), "ok": True}
    CALLS.append(call)
    for variant, instance_type in new.items():
        changed = variant in old and old[variant] != instance_type
        if changed and f"endpoint/{name}/variant/{variant}" in registered:
            call["ok"] = False
            raise ValidationError(AUTOSCALING_RULE.format(variant=variant))
    endpoint.endpoint_config_name = config["EndpointConfigName"]
    endpoint.production_variants = endpoint._process_production_variants(config["ProductionVariants"])
    return ActionResult({"EndpointArn": endpoint.arn})


def _leaving_out_empty(original: Any, *keys: str) -> Any:
    def describe(self: Any) -> Any:
        from moto.core.responses import ActionResult

        result = original(self)
        body = dict(result.result)
        for key in keys:
            if not any((body.get(key) or {}).values()):
                body.pop(key, None)
        return ActionResult(body)

    return describe


def _register_scalable_target(original: Any) -> Any:
    def register(self: Any) -> str:
        body = original(self)
        tags = self._get_param("Tags")
        if tags:
            _TAGS.setdefault(json.loads(body)["ScalableTargetARN"], {}).update(tags)
        return body

    return register


def list_tags_for_resource(self: Any) -> str:
    return json.dumps({"Tags": _TAGS.get(self._get_param("ResourceARN"), {})})


def tag_resource(self: Any) -> str:
    _TAGS.setdefault(self._get_param("ResourceARN"), {}).update(self._get_param("Tags") or {})
    return json.dumps({})


def untag_resource(self: Any) -> str:
    tags = _TAGS.get(self._get_param("ResourceARN"), {})
    for key in self._get_param("TagKeys") or []:
        tags.pop(key, None)
    return json.dumps({})


@contextmanager
def shims() -> Iterator[None]:
    """The handlers above on moto's response classes, removed afterwards."""
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse
    from moto.sagemaker.responses import SageMakerResponse

    patch = pytest.MonkeyPatch()
    patch.setattr(SageMakerResponse, "update_endpoint", update_endpoint, raising=False)
    patch.setattr(SageMakerResponse, "describe_model", _leaving_out_empty(SageMakerResponse.describe_model, "VpcConfig"))
    patch.setattr(SageMakerResponse, "describe_endpoint_config",
                  _leaving_out_empty(SageMakerResponse.describe_endpoint_config, "DataCaptureConfig"))
    patch.setattr(ApplicationAutoScalingResponse, "register_scalable_target",
                  _register_scalable_target(ApplicationAutoScalingResponse.register_scalable_target))
    for name, handler in (("list_tags_for_resource", list_tags_for_resource), ("tag_resource", tag_resource),
                          ("untag_resource", untag_resource)):
        patch.setattr(ApplicationAutoScalingResponse, name, handler, raising=False)
    try:
        yield
    finally:
        patch.undo()
        CALLS.clear()
        _TAGS.clear()
