"""Every enum-like value the stacks write must be one the AWS APIs accept.

The Terraform provider passes predefined metric types, scalable dimensions, comparison operators,
statistics ... straight through to the API, so a typo would only surface as a failed `terraform apply`
in a real account. This walks the whole synthesized `EndpointStack` of every example (plus variants that
switch on the settings the examples leave off) and checks each value against botocore's service models.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest

from fastscale.infra.config import FastscaleConfig, load_config
from fastscale.infra.model.detection import SCALING_METRICS
from fastscale.infra.model.resolved import resolve
from tests.conftest import EXAMPLES
from tests.stacks.test_scaling import MULTI_MODEL, SINGLE_MODEL, modified


@functools.cache
def service(name: str):
    return botocore.session.get_session().get_service_model(name)


def enum(service_name: str, shape: str) -> frozenset[str]:
    values = service(service_name).shape_for(shape).enum
    assert values, f"{service_name} {shape} is no longer an enum in botocore"
    return frozenset(values)


def treat_missing_data_values() -> frozenset[str]:
    # Not an enum in the model: the accepted values are listed in the parameter's documentation.
    doc = service("cloudwatch").operation_model("PutMetricAlarm").input_shape.members["TreatMissingData"].documentation
    m = re.search(r"Valid Values:\s*<code>([^<]+)</code>", doc)
    assert m, "botocore no longer documents the TreatMissingData values"
    return frozenset(v.strip() for v in m.group(1).split("|"))


# (resource type or "dashboard", attribute) -> the values the API accepts
ALLOWED = {
    ("aws_appautoscaling_target", "service_namespace"): enum("application-autoscaling", "ServiceNamespace"),
    ("aws_appautoscaling_target", "scalable_dimension"): enum("application-autoscaling", "ScalableDimension"),
    ("aws_appautoscaling_policy", "service_namespace"): enum("application-autoscaling", "ServiceNamespace"),
    ("aws_appautoscaling_policy", "scalable_dimension"): enum("application-autoscaling", "ScalableDimension"),
    ("aws_appautoscaling_policy", "policy_type"): enum("application-autoscaling", "PolicyType"),
    ("aws_appautoscaling_policy", "predefined_metric_type"): enum("application-autoscaling", "MetricType"),
    ("aws_appautoscaling_policy", "adjustment_type"): enum("application-autoscaling", "AdjustmentType"),
    ("aws_appautoscaling_policy", "metric_aggregation_type"): enum("application-autoscaling", "MetricAggregationType"),
    ("aws_cloudwatch_metric_alarm", "comparison_operator"): enum("cloudwatch", "ComparisonOperator"),
    ("aws_cloudwatch_metric_alarm", "statistic"): enum("cloudwatch", "Statistic"),
    ("aws_cloudwatch_metric_alarm", "stat"): enum("cloudwatch", "Statistic"),
    ("aws_cloudwatch_metric_alarm", "unit"): enum("cloudwatch", "StandardUnit"),
    ("aws_cloudwatch_metric_alarm", "treat_missing_data"): treat_missing_data_values(),
    ("dashboard", "stat"): enum("cloudwatch", "Statistic"),
}

# Attributes every run below must have met at least once, so the check cannot pass by finding nothing.
MUST_SEE = {
    ("aws_appautoscaling_target", "service_namespace"),
    ("aws_appautoscaling_target", "scalable_dimension"),
    ("aws_appautoscaling_policy", "policy_type"),
    ("aws_appautoscaling_policy", "predefined_metric_type"),
    ("aws_appautoscaling_policy", "adjustment_type"),
    ("aws_appautoscaling_policy", "metric_aggregation_type"),
    ("aws_cloudwatch_metric_alarm", "comparison_operator"),
    ("aws_cloudwatch_metric_alarm", "statistic"),
    ("aws_cloudwatch_metric_alarm", "stat"),
    ("aws_cloudwatch_metric_alarm", "treat_missing_data"),
    ("dashboard", "stat"),
}


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of every key at any depth of nested dicts and lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def dashboard_stats(body: dict) -> Iterator[str]:
    for widget in body["widgets"]:
        props = widget["properties"]
        if "stat" in props:
            yield props["stat"]
        for line in props.get("metrics", []):
            if isinstance(line[-1], dict) and "stat" in line[-1]:
                yield line[-1]["stat"]


def is_token(value: Any) -> bool:
    return isinstance(value, str) and "${" in value


def collect(tf: dict) -> list[tuple[tuple[str, str], Any, str]]:
    """((resource type, attribute), value, where) for every checked attribute of the stack."""
    found = []
    for rtype, instances in tf.get("resource", {}).items():
        for logical_id, body in instances.items():
            for key, value in walk(body):
                if (rtype, key) in ALLOWED and not is_token(value):
                    found.append(((rtype, key), value, f"{rtype}.{logical_id}.{key}"))
            if rtype == "aws_cloudwatch_dashboard":
                for stat in dashboard_stats(json.loads(body["dashboard_body"])):
                    found.append((("dashboard", "stat"), stat, f"{rtype}.{logical_id}.dashboard_body"))
    return found


def alarm_periods(tf: dict) -> Iterator[tuple[int, int, str]]:
    """(period, evaluation periods, alarm) for every alarm, metric math alarms included."""
    for logical_id, alarm in tf.get("resource", {}).get("aws_cloudwatch_metric_alarm", {}).items():
        periods = [alarm["period"]] if "period" in alarm else [
            q["metric"]["period"] for q in alarm["metric_query"] if "metric" in q
        ]
        for period in periods:
            yield period, alarm["evaluation_periods"], logical_id


def _invocations_everywhere(data: dict) -> None:
    for ep in data["endpoints"]:
        for workload in [ep["model"]] if "model" in ep else ep["inference_components"]:
            workload.setdefault("autoscaling", {})["metric"] = "invocations"


def stack_json(config: FastscaleConfig, outdir) -> dict:
    from fastscale.stacks.app import build_app

    _, stack = build_app(resolve(config), outdir)
    return stack.to_terraform()


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> list[tuple[str, dict]]:
    """Every example, plus the 1-minute metric types the examples do not use."""
    out = tmp_path_factory.mktemp("enums")
    built = [(p.stem, stack_json(load_config(p), out)) for p in EXAMPLES]
    for path in (SINGLE_MODEL, MULTI_MODEL):
        built.append((f"{path.stem}+invocations", stack_json(modified(path, _invocations_everywhere), out)))
    return built


def test_every_enum_value_is_accepted_by_the_api(synthesized):
    seen = set()
    problems = []
    for name, tf in synthesized:
        for key, value, where in collect(tf):
            seen.add(key)
            if value not in ALLOWED[key]:
                problems.append(f"{name}: {where} = {value!r} is not one of {sorted(ALLOWED[key])}")
    assert problems == []
    assert seen >= MUST_SEE, f"never checked: {sorted(MUST_SEE - seen)}"


def test_every_scaling_metric_fastscale_knows_is_synthesized_and_valid(synthesized):
    written = {
        value
        for _, tf in synthesized
        for key, value, _ in collect(tf)
        if key == ("aws_appautoscaling_policy", "predefined_metric_type")
    }
    known = {m.predefined_metric_type for m in SCALING_METRICS.values()}
    assert written == known
    assert known <= ALLOWED[("aws_appautoscaling_policy", "predefined_metric_type")]


def test_alarm_periods_are_accepted_by_cloudwatch(synthesized):
    doc = service("cloudwatch").operation_model("PutMetricAlarm").input_shape.members["Period"].documentation
    assert "10, 20, 30, and any multiple of 60" in doc  # the rule checked below, as the API documents it
    count = 0
    for name, tf in synthesized:
        for period, evaluations, alarm in alarm_periods(tf):
            assert period in (10, 20, 30) or period % 60 == 0, f"{name}: {alarm} period {period}"
            assert period * evaluations <= 7 * 24 * 3600, f"{name}: {alarm} evaluates over more than 7 days"
            count += 1
    assert count > 0
