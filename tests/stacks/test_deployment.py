"""Every single-model endpoint and inference component carries its update settings, and the alarms its
updates roll back on are alarm resources of the same stack, referenced so Terraform creates them first."""

from __future__ import annotations

import re

import pytest

from fastscale.infra.config import load_config
from fastscale.infra.model.deployment import rollouts
from fastscale.stacks.testing import Match, Template
from tests.conftest import EXAMPLES
from tests.stacks.conftest import synth
from tests.stacks.test_scaling import MULTI_MODEL, SINGLE_MODEL, modified


@pytest.fixture
def synth_example(tmp_path):
    """The whole stack of a config (a loaded or modified one), as JSON."""
    count = iter(range(100))
    return lambda config: synth(config, tmp_path / f"out{next(count)}").doc

REF = re.compile(r"^\$\{aws_cloudwatch_metric_alarm\.(?P<id>[^.}]+)\.alarm_name\}$")


def watched_alarms(doc: dict, body: dict) -> list[str]:
    """The alarm names a deployment_config rolls back on, resolved through the references."""
    alarms = doc["resource"]["aws_cloudwatch_metric_alarm"]
    names = []
    for item in body["deployment_config"]["auto_rollback_configuration"]["alarms"]:
        m = REF.match(item["alarm_name"])
        assert m, f"{item['alarm_name']} is not a reference to an alarm of the stack"
        names.append(alarms[m["id"]]["alarm_name"])
    return names


def updated(doc: dict) -> dict[str, dict]:
    """Resource name -> body of every single-model endpoint and inference component."""
    out = {}
    components = doc["resource"].get("awscc_sagemaker_inference_component", {})
    for body in components.values():
        out[body["inference_component_name"]] = body
    if not components:
        for body in doc["resource"]["aws_sagemaker_endpoint"].values():
            out[body["name"]] = body
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_rolls_back_on_alarms_of_its_own_stack(path, synth_example):
    config = load_config(path)
    doc = synth_example(config)
    expected = {r.target: [a.name for a in r.alarms] for r in rollouts(config)}
    bodies = updated(doc)
    if config.endpoint_url:  # emulators neither store nor roll out a deployment configuration (docs/emulator.md)
        assert bodies and all("deployment_config" not in body for body in bodies.values())
        return
    assert set(bodies) == set(expected) and bodies
    for target, body in bodies.items():
        watched = watched_alarms(doc, body)
        assert watched == expected[target]
        # the component's own alarms (one component's errors never roll another back), the endpoint's otherwise
        assert watched == [f"{target}-5xx-errors", f"{target}-model-latency"]


def test_a_component_alarm_watches_that_component_and_depends_on_nothing(synth_example):
    template = Template(synth_example(load_config(MULTI_MODEL)))
    # referenced by the component: a dependency back on the endpoint or component would be a cycle
    template.has_resource_properties("aws_cloudwatch_metric_alarm", {
        "alarm_name": "assist-qwen3-8b-5xx-errors",
        "dimensions": Match.exact({"InferenceComponentName": "assist-qwen3-8b"}),
        "metric_name": "Invocation5XXErrors", "statistic": "Sum", "threshold": 5,
        "depends_on": Match.absent(),
    })
    template.has_resource_properties("aws_cloudwatch_metric_alarm", {
        "alarm_name": "assist-qwen3-8b-model-latency", "metric_name": "ModelLatency", "threshold": 10_000_000,
        "depends_on": Match.absent(),
    })


def test_single_model_rollback_alarms_do_not_depend_on_the_endpoint_they_watch(synth_example):
    doc = synth_example(load_config(SINGLE_MODEL))
    alarms = {a["alarm_name"]: a for a in doc["resource"]["aws_cloudwatch_metric_alarm"].values()}
    assert "depends_on" not in alarms["chat-prod-qwen3-5xx-errors"]
    assert "depends_on" not in alarms["chat-prod-qwen3-model-latency"]
    assert alarms["chat-prod-qwen3-gpu-memory"]["depends_on"], "alarms no update watches still come after the endpoint"


def test_canary_and_rolling_settings_reach_the_endpoint(synth_example):
    def canary(data):
        data["endpoints"][0]["deployment"] = {
            "blue_green": {"traffic": "CANARY", "step": {"type": "CAPACITY_PERCENT", "value": 25}, "bake_time": 900,
                           "termination_wait": 300, "timeout": 7200},
            "rollback_alarms": ["5xx-errors"],
        }

    (body,) = updated(synth_example(modified(SINGLE_MODEL, canary))).values()
    policy = body["deployment_config"]["blue_green_update_policy"]
    assert policy == {
        "maximum_execution_timeout_in_seconds": 7200,
        "termination_wait_in_seconds": 300,
        "traffic_routing_configuration": {"canary_size": {"type": "CAPACITY_PERCENT", "value": 25}, "type": "CANARY",
                                          "wait_interval_in_seconds": 900},
    }

    def rolling(data):
        data["endpoints"][0]["deployment"] = {"rolling": {"batch": {"value": 1}, "rollback_batch": {"value": 2}},
                                              "auto_rollback": False}

    (body,) = updated(synth_example(modified(SINGLE_MODEL, rolling))).values()
    assert body["deployment_config"] == {"rolling_update_policy": {
        "maximum_batch_size": {"type": "INSTANCE_COUNT", "value": 1},
        "rollback_maximum_batch_size": {"type": "INSTANCE_COUNT", "value": 2},
        # no rollback alarms: the bake time still covers the latency and 5xx alarms' window plus a period
        "wait_interval_in_seconds": 360,
    }}


def test_a_component_overrides_the_endpoint_settings(synth_example):
    def override(data):
        ep = data["endpoints"][0]
        ep["deployment"] = {"components": {"batch": {"type": "CAPACITY_PERCENT", "value": 50}, "bake_time": 600}}
        ep["inference_components"][1]["deployment"] = {"rollback_alarms": ["stuck-at-zero"],
                                                        "rolling": {"bake_time": 900}}

    bodies = updated(synth_example(modified(MULTI_MODEL, override)))
    qwen, llama = bodies["assist-qwen3-8b"], bodies["assist-llama3-8b"]
    assert qwen["deployment_config"]["rolling_update_policy"] == {
        "maximum_batch_size": {"type": "CAPACITY_PERCENT", "value": 50}, "wait_interval_in_seconds": 600}
    assert llama["deployment_config"]["rolling_update_policy"] == {
        "maximum_batch_size": {"type": "COPY_COUNT", "value": 1}, "wait_interval_in_seconds": 900}
    doc = synth_example(modified(MULTI_MODEL, override))
    assert watched_alarms(doc, updated(doc)["assist-llama3-8b"]) == ["assist-llama3-8b-stuck-at-zero"]
    names = {a["alarm_name"] for a in doc["resource"]["aws_cloudwatch_metric_alarm"].values()}
    assert "assist-llama3-8b-5xx-errors" not in names, "no alarm of its own that nothing watches"


def test_default_bake_time_follows_the_alarm_window(synth_example):
    def slow(data):
        data["endpoints"][0]["alarms"] = {"period": 120, "evaluation_periods": 4}

    (body,) = updated(synth_example(modified(SINGLE_MODEL, slow))).values()
    routing = body["deployment_config"]["blue_green_update_policy"]["traffic_routing_configuration"]
    assert routing["wait_interval_in_seconds"] == 120 * 4 + 120


def test_an_emulator_target_gets_no_deployment_configuration(synth_example):
    """Emulators drop it; read back empty, it would make every deploy replace the endpoint."""

    def emulated(data):
        data["endpoint_url"] = "http://localhost:4566"
        data["endpoints"][0].pop("metrics_publish_frequency", None)  # an awscc resource: refused with an emulator

    doc = synth_example(modified(SINGLE_MODEL, emulated))
    (body,) = doc["resource"]["aws_sagemaker_endpoint"].values()
    assert "deployment_config" not in body
    names = {a["alarm_name"] for a in doc["resource"]["aws_cloudwatch_metric_alarm"].values()}
    assert {"chat-prod-qwen3-5xx-errors", "chat-prod-qwen3-model-latency"} <= names
