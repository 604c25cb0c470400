"""EndpointAlarms and StackDashboard, read back from the synthesized Terraform JSON."""

from __future__ import annotations

import json

import pytest

from fastscale.infra.base import catalog
from fastscale.infra.config import Alarms, load_config
from fastscale.infra.model.naming import all_endpoint_names, dashboard_name, tags
from tests.conftest import EXAMPLES
from tests.stacks.test_scaling import (
    MULTI_MODEL,
    SINGLE_MODEL,
    by_name,
    modified,
    resources,
    synth_constructs,
    synth_example,
)

SNS = "arn:aws:sns:us-east-1:123456789012:assist-oncall"

DEFAULT_GPU_PERCENT = Alarms().gpu_memory_percent


def alarms(tf) -> dict[str, dict]:
    return by_name(tf, "aws_cloudwatch_metric_alarm", "alarm_name")


def operational(config) -> list[str]:
    return [n for names in all_endpoint_names(config) for n in names.alarms.values()]


# --------------------------------------------------------------------------------------------- single model


@pytest.fixture(scope="module")
def single():
    return load_config(SINGLE_MODEL), synth_example(SINGLE_MODEL)


def test_single_model_latency_alarm_converts_ms_to_microseconds(single):
    config, tf = single
    (names,) = all_endpoint_names(config)
    alarm = alarms(tf)[names.alarms["model-latency"]]
    assert (alarm["namespace"], alarm["metric_name"], alarm["statistic"]) == ("AWS/SageMaker", "ModelLatency", "Average")
    assert alarm["dimensions"] == {"EndpointName": "chat-prod-qwen3", "VariantName": "AllTraffic"}
    assert config.endpoints[0].alarms.model_latency_ms == 20000
    assert alarm["threshold"] == 20_000_000  # microseconds
    assert alarm["comparison_operator"] == "GreaterThanThreshold"


def test_single_model_error_and_gpu_alarms(single):
    config, tf = single
    (names,) = all_endpoint_names(config)
    errors = alarms(tf)[names.alarms["5xx-errors"]]
    assert (errors["metric_name"], errors["statistic"], errors["threshold"]) == ("Invocation5XXErrors", "Sum", 5)
    assert errors["comparison_operator"] == "GreaterThanOrEqualToThreshold"
    gpu = alarms(tf)[names.alarms["gpu-memory"]]
    assert (gpu["namespace"], gpu["metric_name"]) == ("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
    assert gpu["dimensions"] == {"EndpointName": "chat-prod-qwen3", "VariantName": "AllTraffic"}
    assert gpu["threshold"] == DEFAULT_GPU_PERCENT  # one L4 on ml.g6.2xlarge


def test_gpu_threshold_scales_with_the_gpus_of_a_single_model_instance():
    def four_gpus(data):
        data["endpoints"][0]["instance_type"] = "ml.g6.12xlarge"

    config = modified(SINGLE_MODEL, four_gpus)
    gpus = catalog.get("ml.g6.12xlarge").accelerator_count
    assert gpus == 4
    (names,) = all_endpoint_names(config)
    gpu = alarms(synth_constructs(config))[names.alarms["gpu-memory"]]
    # GPUMemoryUtilization is summed over the GPUs (0-400% on four): the per-GPU threshold times four
    assert gpu["threshold"] == DEFAULT_GPU_PERCENT * gpus


def test_alarm_period_and_evaluation_periods_come_from_the_config():
    def slow(data):
        data["endpoints"][0]["alarms"] = {"period": 300, "evaluation_periods": 2}

    for path in (SINGLE_MODEL, MULTI_MODEL):
        config = modified(path, slow)
        tf = synth_constructs(config)
        for name in operational(config):
            alarm = alarms(tf)[name]
            assert alarm["evaluation_periods"] == alarm["datapoints_to_alarm"] == 2
            periods = [alarm["period"]] if "period" in alarm else [q["metric"]["period"] for q in alarm["metric_query"] if "metric" in q]
            assert periods and set(periods) == {300}, name


def test_invalid_alarm_period_is_refused():
    def odd(data):
        data["endpoints"][0]["alarms"] = {"period": 45}

    with pytest.raises(ValueError, match="period 45 s is not 10, 20, 30 or a multiple of 60"):
        synth_constructs(modified(SINGLE_MODEL, odd))


def test_an_alarm_is_one_metric_or_metric_math_never_both_nor_neither():
    """CloudWatch rejects both mixes; the alarm resource refuses them when it is made, before anything renders."""
    from fastscale.stacks.resources.base import Ref, StackContent
    from fastscale.stacks.resources.cloudwatch import CloudwatchMetricAlarm
    from fastscale.stacks.resources.generated.aws import CloudwatchMetricAlarmProps, MetricQuery

    common = dict(alarm_name="a", comparison_operator="GreaterThanThreshold", evaluation_periods=1, threshold=1)
    single = dict(metric_name="Invocations", namespace="AWS/SageMaker", statistic="Sum", period=60)
    math = dict(metric_query=[MetricQuery(id="e", expression="1", return_data=True)])
    content = StackContent("s")
    CloudwatchMetricAlarm(content, "one", CloudwatchMetricAlarmProps(**common, **single))
    CloudwatchMetricAlarm(content, "math", CloudwatchMetricAlarmProps(**common, **math))
    CloudwatchMetricAlarm(content, "ref", CloudwatchMetricAlarmProps(**common, **dict(single, period=Ref("${var.p}"))))
    for i, wrong in enumerate(({}, {**single, **math})):
        with pytest.raises(ValueError, match="alarm a: set either a single metric or metric_query, not both or neither"):
            CloudwatchMetricAlarm(content, f"wrong-{i}", CloudwatchMetricAlarmProps(**common, **wrong))
    with pytest.raises(ValueError, match="period 90 s is not"):
        CloudwatchMetricAlarm(content, "odd", CloudwatchMetricAlarmProps(**common, **dict(single, period=90)))
    assert [e.logical_id for e in content.elements] == ["one", "math", "ref"]


# --------------------------------------------------------------------------------------------- components


@pytest.fixture(scope="module")
def multi():
    return load_config(MULTI_MODEL), synth_example(MULTI_MODEL)


def test_component_endpoint_alarms_combine_every_component(multi):
    config, tf = multi
    (names,) = all_endpoint_names(config)
    for kind, metric, stat, combine in (
        ("model-latency", "ModelLatency", "Average", "MAX"),
        ("5xx-errors", "Invocation5XXErrors", "Sum", "SUM"),
    ):
        alarm = alarms(tf)[names.alarms[kind]]
        assert "metric_name" not in alarm and "statistic" not in alarm, "metric math alarms take no single metric"
        fetched = [q for q in alarm["metric_query"] if "metric" in q]
        assert {q["metric"]["dimensions"]["InferenceComponentName"] for q in fetched} == {c.name for c in names.components}
        assert {(q["metric"]["namespace"], q["metric"]["metric_name"], q["metric"]["stat"]) for q in fetched} == {
            ("AWS/SageMaker", metric, stat)
        }
        assert not any(q["return_data"] for q in fetched)
        (expression,) = [q for q in alarm["metric_query"] if "expression" in q]
        assert expression["return_data"] is True
        assert expression["expression"] == f"{combine}([{', '.join(q['id'] for q in fetched)}])"
    assert alarms(tf)[names.alarms["model-latency"]]["threshold"] == 10_000 * 1000


def test_component_endpoint_gpu_alarm_uses_the_normalized_metric(multi):
    config, tf = multi
    (names,) = all_endpoint_names(config)
    gpu = alarms(tf)[names.alarms["gpu-memory"]]
    assert (gpu["namespace"], gpu["metric_name"]) == ("/aws/sagemaker/Endpoints", "GPUMemoryUtilizationNormalized")
    assert gpu["threshold"] == DEFAULT_GPU_PERCENT, "normalized: 0-100 whatever the GPU count"


def test_stuck_at_zero_alarm_per_scale_to_zero_component(multi):
    config, tf = multi
    (names,) = all_endpoint_names(config)
    minutes = config.endpoints[0].alarms.stuck_at_zero_minutes
    for c in names.components:
        alarm = alarms(tf)[c.stuck_at_zero_alarm]
        assert (alarm["metric_name"], alarm["statistic"], alarm["dimensions"]) == (
            "NoCapacityInvocationFailures", "Sum", {"InferenceComponentName": c.name}
        )
        assert alarm["period"] == 60
        assert alarm["evaluation_periods"] == alarm["datapoints_to_alarm"] == minutes
        assert (alarm["threshold"], alarm["comparison_operator"]) == (1, "GreaterThanOrEqualToThreshold")


def test_more_components_than_a_math_alarm_can_watch_is_a_clear_error():
    def many(data):
        comps = data["endpoints"][0]["inference_components"]
        base = comps[0]
        data["endpoints"][0]["inference_components"] = [{**base, "name": f"m{i}"} for i in range(11)]

    with pytest.raises(ValueError, match="11 inference components, but a CloudWatch metric math alarm can watch at most 10"):
        synth_constructs(modified(MULTI_MODEL, many))


# --------------------------------------------------------------------------------------------- actions, tags, switches


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_alarm_names_are_exactly_the_shared_names(path):
    """Cleanup deletes alarms by the names in infra.model.naming: the stack must create exactly those."""
    config = load_config(path)
    expected = {n for names in all_endpoint_names(config) for n in names.all_alarm_names}
    assert set(alarms(synth_example(path))) == expected


def test_sns_topic_notified_on_alarm_and_recovery(multi):
    config, tf = multi
    assert config.endpoints[0].alarms.sns_topic_arn == SNS
    (names,) = all_endpoint_names(config)
    notifying = operational(config) + [c.stuck_at_zero_alarm for c in names.components]
    for name in notifying:
        assert alarms(tf)[name]["alarm_actions"] == [SNS], name
        assert alarms(tf)[name]["ok_actions"] == [SNS], name


def test_no_sns_topic_no_actions(single):
    config, tf = single
    assert config.endpoints[0].alarms.sns_topic_arn is None
    for name in operational(config):
        assert "alarm_actions" not in alarms(tf)[name] and "ok_actions" not in alarms(tf)[name]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_alarm_is_tagged(path):
    config = load_config(path)
    tf = synth_example(path)
    for names in all_endpoint_names(config):
        for name in names.all_alarm_names:
            assert alarms(tf)[name]["tags"] == tags(config, names.spec)


def test_alarms_switched_off_creates_no_operational_alarm():
    def off(data):
        data["endpoints"][0]["alarms"] = {"enabled": False, "sns_topic_arn": SNS}

    config = modified(MULTI_MODEL, off)
    tf = synth_constructs(config)
    (names,) = all_endpoint_names(config)
    # the scale-from-zero alarms remain (they drive scaling) and each component's own 5xx and latency
    # alarms (its updates roll back on them); none of them notifies
    rollback = {f"{c.name}-{kind}" for c in names.components for kind in ("5xx-errors", "model-latency")}
    assert set(alarms(tf)) == {c.scale_from_zero_alarm for c in names.components} | rollback
    assert not any(SNS in json.dumps(a) for a in alarms(tf).values())


def test_alarms_and_automatic_rollback_switched_off_leave_only_the_scaling_alarms():
    def off(data):
        data["endpoints"][0]["alarms"] = {"enabled": False}
        data["endpoints"][0]["deployment"] = {"auto_rollback": False}

    config = modified(MULTI_MODEL, off)
    (names,) = all_endpoint_names(config)
    assert set(alarms(synth_constructs(config))) == {c.scale_from_zero_alarm for c in names.components}


def test_single_model_endpoint_without_operational_alarms_keeps_its_rollback_alarms():
    def off(data):
        data["endpoints"][0]["alarms"] = {"enabled": False, "sns_topic_arn": SNS}

    config = modified(SINGLE_MODEL, off)
    tf = synth_constructs(config)
    assert set(alarms(tf)) == {"chat-prod-qwen3-5xx-errors", "chat-prod-qwen3-model-latency"}
    assert not any(SNS in json.dumps(a) for a in alarms(tf).values())


# --------------------------------------------------------------------------------------------- dashboard


def dashboard(tf) -> tuple[str, dict]:
    (body,) = resources(tf, "aws_cloudwatch_dashboard").values()
    return body["dashboard_name"], json.loads(body["dashboard_body"])


def metric_lines(board: dict, metric: str) -> list[tuple[list, dict]]:
    """(metric array, widget properties) of every graphed line of `metric`."""
    out = []
    for widget in board["widgets"]:
        for line in widget["properties"].get("metrics", []):
            if line[1] == metric:
                out.append((line, widget["properties"]))
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_dashboard_body_is_json_with_every_workload(path):
    config = load_config(path)
    name, board = dashboard(synth_example(path))
    assert name == dashboard_name(config)
    for widget in board["widgets"]:
        assert widget["x"] >= 0 and widget["x"] + widget["width"] <= 24
        if widget["type"] == "metric":
            assert widget["properties"]["region"] == config.region
    for names in all_endpoint_names(config):
        if names.components:
            lines = metric_lines(board, "ConcurrentRequestsPerCopy")
            assert {line[3] for line, _ in lines} == {c.name for c in names.components}
            for metric in ("NoCapacityInvocationFailures", "Invocations", "ModelLatency", "CPUUtilizationNormalized"):
                shown = {line[3] for line, _ in metric_lines(board, metric)}
                assert {c.name for c in names.components} <= shown, metric
        else:
            lines = metric_lines(board, "ConcurrentRequestsPerModel")
            assert [line[2:6] for line, _ in lines] == [["EndpointName", names.endpoint, "VariantName", "AllTraffic"]]
        # the concurrency metrics are read at their own 10-second resolution
        assert lines and all(props["period"] == 10 for _, props in lines)


def test_dashboard_draws_scaling_targets(multi):
    config, tf = multi
    _, board = dashboard(tf)
    (_, props), *_ = metric_lines(board, "ConcurrentRequestsPerCopy")
    drawn = {a["label"]: a["value"] for a in props["annotations"]["horizontal"]}
    assert drawn == {f"target assist-{c.name}": c.autoscaling.target_concurrency for c in config.endpoints[0].inference_components}


def test_dashboard_region_follows_the_config():
    def eu(data):
        data["region"] = "eu-west-1"

    _, board = dashboard(synth_constructs(modified(SINGLE_MODEL, eu)))
    regions = {w["properties"]["region"] for w in board["widgets"] if w["type"] == "metric"}
    assert regions == {"eu-west-1"}


def test_dashboard_switched_off():
    def off(data):
        data["dashboard"] = {"enabled": False}

    assert not resources(synth_constructs(modified(MULTI_MODEL, off)), "aws_cloudwatch_dashboard")


# --------------------------------------------------------------------------------------------- fixes from review


def test_neuron_instances_get_no_gpu_memory_alarm_and_verification_expects_none():
    inferentia = next(p for p in EXAMPLES if p.stem == "inferentia")
    config = load_config(inferentia)
    assert catalog.get(config.endpoints[0].instance_type).accelerator_kind == "inferentia"
    (names,) = all_endpoint_names(config)
    assert set(names.alarms) == {"model-latency", "5xx-errors"}  # what verify and cleanup look for, too
    tf = synth_example(inferentia)
    assert not any("GPU" in a.get("metric_name", "") for a in alarms(tf).values())
    assert set(alarms(tf)) >= set(names.alarms.values())


def test_trainium_is_neuron_too_and_gpu_types_keep_the_alarm():
    def on(instance_type):
        def change(data):
            data["endpoints"][0]["instance_type"] = instance_type
        return change

    trainium = next(i.instance_type for i in catalog.all_instances() if i.accelerator_kind == "trainium")
    (names,) = all_endpoint_names(modified(SINGLE_MODEL, on(trainium)))
    assert "gpu-memory" not in names.alarms
    (names,) = all_endpoint_names(modified(SINGLE_MODEL, on("ml.g6.12xlarge")))
    assert "gpu-memory" in names.alarms


def test_alarm_descriptions_state_the_real_evaluation_window(single):
    config, tf = single
    (names,) = all_endpoint_names(config)
    alarm_config = config.endpoints[0].alarms
    assert (alarm_config.period, alarm_config.evaluation_periods) == (60, 5)
    window = "in each of 5 consecutive 60 s periods (5 min)"
    for kind in ("model-latency", "5xx-errors", "gpu-memory"):
        alarm = alarms(tf)[names.alarms[kind]]
        assert alarm["alarm_description"].endswith(window), alarm["alarm_description"]
        assert (alarm["period"], alarm["evaluation_periods"], alarm["datapoints_to_alarm"]) == (60, 5, 5)
    assert alarms(tf)[names.alarms["5xx-errors"]]["alarm_description"] == (
        f"{names.endpoint} returned 5 or more 5xx errors {window}"
    )


def test_evaluation_window_wording():
    from fastscale.stacks.resources.cloudwatch import evaluation_window

    assert evaluation_window(60, 1, 1) == "in one 60 s period"
    assert evaluation_window(10, 3, 3) == "in each of 3 consecutive 10 s periods (30 s)"
    assert evaluation_window(300, 4, 2) == "in 2 of 4 consecutive 300 s periods (20 min)"
