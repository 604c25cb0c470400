"""Names are shared by the stacks and by verification; these pin the scheme both rely on."""

from __future__ import annotations

from fastscale.infra.config import load_config
from fastscale.infra.model import naming
from tests.conftest import ROOT


def test_component_endpoint_names():
    config = load_config(ROOT / "examples" / "multi-model.yaml")
    (ep,) = naming.all_endpoint_names(config)
    assert ep.endpoint == "assist-shared"
    assert ep.endpoint_config_prefix == "assist-shared-"
    assert ep.model is None, "component endpoints have one model per component"
    assert ep.execution_role == f"assist-shared-sagemaker-{config.region}"
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


def test_the_generated_role_is_one_per_region_and_its_models_follow_it(base_config):
    from fastscale.infra.config import parse_config

    east = parse_config({**base_config, "region": "us-east-1"})
    west = parse_config({**base_config, "region": "eu-west-1"})
    (e,), (w,) = naming.all_endpoint_names(east), naming.all_endpoint_names(west)
    assert e.execution_role == f"{e.endpoint}-sagemaker-us-east-1" and w.execution_role == f"{w.endpoint}-sagemaker-eu-west-1"
    # A model names its role's ARN and cannot change in place: its name follows the role's.
    assert e.model != w.model and e.model.rsplit("-", 1)[0] == w.model.rsplit("-", 1)[0]


def test_a_brought_role_keeps_model_names_across_regions(base_config):
    from fastscale.infra.config import parse_config

    base_config["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    east = parse_config({**base_config, "region": "us-east-1"})
    west = parse_config({**base_config, "region": "eu-west-1"})
    assert naming.all_endpoint_names(east)[0].model == naming.all_endpoint_names(west)[0].model


def test_the_longest_names_fs016_allows_fit_iam_in_the_longest_region():
    import botocore.session

    from fastscale.infra.rules.fs016_invalid_name import check

    session = botocore.session.get_session()
    regions = {r for p in session.get_available_partitions() for r in session.get_available_regions("sagemaker", p)}
    longest = max(regions, key=len)
    # FS016 lets `{project}-{endpoint}` have 36 characters (the endpoint configuration's limit).
    endpoint = "e" * (36 - len("p-"))
    assert len(naming.execution_role_name(f"p-{endpoint}", longest)) <= naming.IAM_ROLE_NAME_MAX
    from fastscale.infra.config import parse_config

    config = parse_config({"project": "p", "region": "us-east-1", "endpoints": [
        {"name": endpoint, "instance_type": "ml.g6.2xlarge", "model": {"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"}}]})
    assert check.run(config) == []
