"""How each attribute of the awscc endpoint configuration reaches a live endpoint, pinned per attribute.

awscc's `awscc_sagemaker_endpoint_config` is generated from the CloudFormation resource schema of
AWS::SageMaker::EndpointConfig, where every property but `Tags` is create-only ("Update requires:
Replacement"; `Tags`: "No interruption": AWS CloudFormation User Guide, AWS::SageMaker::EndpointConfig,
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-sagemaker-endpointconfig.html).
No awscc provider runs offline here, so instead of a plan this checks what fastscale writes against the
recorded awscc schema (tests/contract/provider_schemas.json):

- every top-level attribute of the schema is classed below, so a new attribute in a provider upgrade
  fails this test until someone decides its class;
- a change of a create-only attribute renames the configuration (a new configuration, then a blue/green
  update of the endpoint), because the name carries a digest of them;
- a change of tags alone, or of the cut-over count alone, keeps the name: tags are updated in place by
  Cloud Control, and the count is in `ignore_changes`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.contract.schema_check import resource_schema
from tests.stacks.conftest import component_config

IN_PLACE = "in place"
NEW_CONFIGURATION = "new configuration (blue/green update of the endpoint)"
NOT_WRITTEN = "not written by fastscale"

#: Every top-level attribute of awscc_sagemaker_endpoint_config, by how a change reaches the live endpoint.
CLASSES = {
    "tags": IN_PLACE,
    "endpoint_config_name": NEW_CONFIGURATION,  # the digest itself
    "production_variants": NEW_CONFIGURATION,
    "execution_role_arn": NEW_CONFIGURATION,
    "kms_key_id": NEW_CONFIGURATION,
    "metrics_config": NEW_CONFIGURATION,
    "async_inference_config": NOT_WRITTEN,
    "data_capture_config": NOT_WRITTEN,
    "enable_network_isolation": NOT_WRITTEN,
    "explainer_config": NOT_WRITTEN,
    "shadow_production_variants": NOT_WRITTEN,
    "vpc_config": NOT_WRITTEN,  # the VPC is on each model (stacks.endpoint)
}

KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def base() -> dict[str, Any]:
    data = component_config()
    data["endpoints"][0]["metrics_publish_frequency"] = 10
    return data


def edit(change) -> dict[str, Any]:
    data = copy.deepcopy(base())
    change(data, data["endpoints"][0])
    return data


#: One config edit per attribute fastscale writes, with the attribute it reaches.
EDITS = {
    "tags": lambda d, ep: d.update(tags={"team": "search"}),
    "production_variants.instance_type": lambda d, ep: ep.update(instance_type="ml.g6e.12xlarge"),
    "production_variants.managed_instance_scaling": lambda d, ep: ep.update(instances={"initial": 1, "min": 1, "max": 3}),
    "production_variants.routing_config": lambda d, ep: ep.update(routing="random"),
    "production_variants.scale_in_policy": lambda d, ep: ep.update(scale_in={"strategy": "CONSOLIDATION"}),
    "kms_key_id": lambda d, ep: ep.update(kms_key_arn=KEY),
    "execution_role_arn": lambda d, ep: ep.update(execution_role_arn="arn:aws:iam::123456789012:role/own"),
    "metrics_config.metric_publish_frequency_in_seconds": lambda d, ep: ep.update(metrics_publish_frequency=30),
    "metrics_config.enable_enhanced_metrics": lambda d, ep: ep.update(enhanced_metrics=True),
    "metrics_config.enable_detailed_observability": lambda d, ep: ep.update(detailed_observability=True),
    "instances.initial (the cut-over count)": lambda d, ep: ep.update(instances={**ep["instances"], "initial": 2}),
}
EXPECTED = {name: IN_PLACE if name.startswith(("tags", "instances.initial")) else NEW_CONFIGURATION for name in EDITS}


def test_every_attribute_of_the_schema_has_a_class():
    schema = resource_schema("awscc_sagemaker_endpoint_config")
    assert schema is not None
    assert set(schema["attributes"]) == set(CLASSES)


@pytest.fixture(scope="module")
def names(tmp_path_factory):
    from fastscale.infra.config import parse_config
    from tests.stacks.conftest import synth

    root = tmp_path_factory.mktemp("awscc-classes")

    def name_of(data: dict[str, Any], label: str) -> tuple[str, dict[str, Any]]:
        doc = synth(parse_config(data), root / label.replace(" ", "_").replace("(", "").replace(")", "")).doc
        [(_, body)] = doc["resource"]["awscc_sagemaker_endpoint_config"].items()
        return body["endpoint_config_name"], body

    return name_of


@pytest.mark.parametrize("attribute", list(EDITS))
def test_each_edit_is_in_place_or_a_new_configuration(names, attribute):
    before, _ = names(base(), "base")
    after, body = names(edit(EDITS[attribute]), attribute)
    top = attribute.split(".")[0].split(" ")[0]
    if top in CLASSES:
        assert CLASSES[top] == EXPECTED[attribute] or top == "production_variants"
    found = IN_PLACE if after == before else NEW_CONFIGURATION
    assert found == EXPECTED[attribute], (attribute, before, after)
    if attribute == "metrics_config.enable_enhanced_metrics":
        assert body["metrics_config"] == {"enable_enhanced_metrics": True, "metric_publish_frequency_in_seconds": 10,
                                          "enable_detailed_observability": False}
    if attribute.startswith("instances.initial"):  # the count reaches the variable's default, nothing else
        assert body["production_variants"][0]["initial_instance_count"].startswith("${var.cutover_instances_")
        assert "production_variants[0].initial_instance_count" in body["lifecycle"]["ignore_changes"]
