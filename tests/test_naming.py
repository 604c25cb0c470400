"""Names are shared by the stacks and by verification; these pin the scheme both rely on."""

from __future__ import annotations

from fastscale.infra import naming
from fastscale.infra.config import load_config
from tests.conftest import ROOT


def test_component_endpoint_names():
    config = load_config(ROOT / "examples" / "multi-model.yaml")
    (ep,) = naming.all_endpoint_names(config)
    assert ep.endpoint == "assist-shared"
    assert ep.endpoint_config_prefix == "assist-shared-"
    assert ep.model is None, "component endpoints have one model per component"
    assert ep.execution_role == "assist-shared-sagemaker"
    assert ep.resource_id == "endpoint/assist-shared/variant/AllTraffic"
    first = ep.components[0]
    assert first.name == "assist-qwen3-8b"
    assert first.resource_id == "inference-component/assist-qwen3-8b"
    # copies.min 0 -> a scale-from-zero policy and its alarm exist, and are named
    assert first.scale_from_zero_policy and first.scale_from_zero_alarm
    assert first.scale_from_zero_alarm in ep.all_alarm_names


def test_single_model_endpoint_names():
    config = load_config(ROOT / "examples" / "qwen3-8b.yaml")
    (ep,) = naming.all_endpoint_names(config)
    assert ep.model.startswith("chat-prod-qwen3-") and len(ep.model) == len("chat-prod-qwen3-") + naming.MODEL_DIGEST_LEN
    assert ep.target_tracking_policy == "chat-prod-qwen3-target-tracking"
    assert ep.components == []
    assert set(ep.alarms) == set(naming.OPERATIONAL_ALARMS)


def test_no_scale_from_zero_names_without_min_zero(base_config):
    from fastscale.infra.config import parse_config

    base_config["endpoints"][0].pop("model")
    base_config["endpoints"][0]["inference_components"] = [
        {"name": "a", "image": "x", "resources": {"memory_mb": 1}, "copies": {"initial": 1, "min": 1, "max": 2}}
    ]
    (ep,) = naming.all_endpoint_names(parse_config(base_config))
    assert ep.components[0].scale_from_zero_policy is None
    assert ep.components[0].scale_from_zero_alarm is None


def test_user_brought_role_is_not_named(base_config):
    from fastscale.infra.config import parse_config

    base_config["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    (ep,) = naming.all_endpoint_names(parse_config(base_config))
    assert ep.execution_role is None


def test_tags_keep_fastscale_keys(base_config):
    from fastscale.infra.config import parse_config

    base_config["tags"] = {"team": "ml", naming.TAG_STACK: "spoofed"}
    config = parse_config(base_config)
    tags = naming.tags(config, config.endpoints[0])
    assert tags["team"] == "ml"
    assert tags[naming.TAG_STACK] == "demo", "cleanup finds resources by this tag: users cannot override it"
    assert tags[naming.TAG_ENDPOINT] == "demo-chat"


def test_model_name_changes_only_with_what_replaces_the_model(base_config):
    """A new image must give a new model name (the old model still exists while the new one is created)."""
    from fastscale.infra.config import parse_config

    def model(cfg):
        return naming.all_endpoint_names(parse_config(cfg))[0].model

    before = model(base_config)
    base_config["endpoints"][0]["instances"]["max"] = 4  # scaling only: same model
    assert model(base_config) == before
    base_config["endpoints"][0]["model"]["image"] = base_config["endpoints"][0]["model"]["image"].replace("0.33.0", "0.34.0")
    assert model(base_config) != before
    base_config["project"] = "p" * 60
    assert len(model(base_config)) <= naming.SAGEMAKER_NAME_MAX
