"""Operational alarms per endpoint and one CloudWatch dashboard per stack.

Which metrics and dimensions SageMaker AI publishes ("SageMaker AI metrics in Amazon CloudWatch"):

* Invocation metrics (namespace AWS/SageMaker: ModelLatency, Invocation5XXErrors, ...) carry
  `EndpointName, VariantName` for a single-model endpoint and `InferenceComponentName` for inference
  components; the per-component dimension is the one documented for component endpoints, so their latency
  and error alarms are metric math over every component of the endpoint (one alarm per endpoint, as named
  by `infra.model.naming`). A metric math alarm can reference at most 10 metrics.
* Instance utilization (namespace /aws/sagemaker/Endpoints, dims EndpointName, VariantName):
  `GPUMemoryUtilization` is summed over the GPUs of an instance (0-100 x GPUs), so the threshold is scaled
  by the GPU count; endpoints hosting inference components also get `GPUMemoryUtilizationNormalized`
  (0-100), used as is. Neuron (Inferentia / Trainium) instances publish no GPU metrics, so they get no
  GPU-memory alarm (one would stay OK for lack of data forever, and still be billed).

Every alarm description states the window the alarm really evaluates: how many datapoints of which period
must breach, and the time that spans.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from fastscale.infra.base import catalog
from fastscale.infra.base.aws_facts import (
    ERRORS_5XX_METRIC,
    GPU_MEMORY_METRIC,
    GPU_MEMORY_NORMALIZED_METRIC,
    MAX_METRICS_PER_MATH_ALARM,
    MICROSECONDS_PER_MS,
    MODEL_LATENCY_METRIC,
    NO_CAPACITY_METRIC,
    NS_COMPONENT_COPIES,
    NS_ENDPOINT_INSTANCES,
    NS_INVOCATIONS,
)
from fastscale.infra.config import EndpointSpec, FastscaleConfig
from fastscale.infra.model.deployment import STUCK_AT_ZERO_PERIOD_S
from fastscale.infra.model.naming import (
    ComponentNames,
    EndpointNames,
    all_endpoint_names,
    dashboard_marker,
    dashboard_name,
    tags,
)
from fastscale.stacks.resources.base import Group, Resource, Scope
from fastscale.stacks.resources.cloudwatch import CloudwatchDashboard, CloudwatchMetricAlarm, evaluation_window
from fastscale.stacks.resources.generated.aws import (
    CloudwatchDashboardProps,
    CloudwatchMetricAlarmProps,
    MetricQuery,
    MetricQueryMetric,
)
from fastscale.templates import render

#: Invocation metrics are published every minute unless enhanced metrics choose otherwise; the dashboard
#: reads the 10-second concurrency metrics at their own resolution.
HIGH_RESOLUTION_WIDGET_PERIOD_S = 10
STANDARD_WIDGET_PERIOD_S = 60


class EndpointAlarms(Group):
    """Model latency, 5xx errors and GPU memory alarms of one endpoint, plus a stuck-at-zero alarm per
    component that can scale to zero, and the 5xx and latency alarms of each component whose updates roll
    back on them (`infra.model.deployment`). With `alarms.enabled` false only the alarms automatic rollback
    watches are created, and they notify no one.

    Notifications go to `alarms.sns_topic_arn` on ALARM and on return to OK, when it is set.
    The alarms stay reachable as `self.alarms` (keyed by alarm name). An alarm named in
    `rollback_alarms` depends on nothing: the endpoint or component whose update it watches references it,
    so it is created first.
    """

    def __init__(
        self,
        scope: Scope,
        id: str,
        *,
        config: FastscaleConfig,
        names: EndpointNames,
        endpoint: Resource,
        components: Mapping[str, Resource],
        rollback_alarms: Collection[str] = (),
    ) -> None:
        super().__init__(scope, id)
        self.alarms: dict[str, CloudwatchMetricAlarm] = {}
        spec = names.spec
        if not (names.alarms or any(c.alarms for c in names.components)):
            return
        self._names = names
        self._tags = tags(config, spec)
        topic = spec.alarms.sns_topic_arn if spec.alarms.enabled else None
        self._actions = [topic] if topic else None
        # Created after the endpoint and so destroyed before it: alarms go first on teardown.
        self._depends = [endpoint]
        self._rollback = set(rollback_alarms)

        if spec.alarms.enabled and spec.uses_inference_components and len(names.components) > MAX_METRICS_PER_MATH_ALARM:
            raise ValueError(
                f"endpoint {names.endpoint}: {len(names.components)} inference components, but a CloudWatch "
                f"metric math alarm can watch at most {MAX_METRICS_PER_MATH_ALARM}; disable `alarms` for this "
                "endpoint or split its components across endpoints"
            )

        if "model-latency" in names.alarms:
            self._latency()
        if "5xx-errors" in names.alarms:
            self._errors()
        if "gpu-memory" in names.alarms:
            self._gpu_memory()
        for c in names.components:
            if c.stuck_at_zero_alarm:
                self._stuck_at_zero(c, components.get(c.name))
            self._component_alarms(c)

    # ----------------------------------------------------------------------------------------- alarms

    def _latency(self) -> None:
        spec, names = self._names.spec, self._names
        threshold_us = spec.alarms.model_latency_ms * MICROSECONDS_PER_MS
        common: dict[str, Any] = dict(
            alarm_name=names.alarms["model-latency"],
            alarm_description=(
                f"Average ModelLatency of {names.endpoint} above {spec.alarms.model_latency_ms:g} ms "
                f"({threshold_us:.0f} microseconds, the metric's unit)"
                + (", worst component," if spec.uses_inference_components else "")
                + f" {self._window()}"
            ),
            comparison_operator="GreaterThanThreshold",
            threshold=threshold_us,
        )
        if spec.uses_inference_components:
            self._alarm("model-latency", **common, **self._per_component(MODEL_LATENCY_METRIC, "Average", "MAX"))
        else:
            self._alarm("model-latency", **common, **self._variant_metric(NS_INVOCATIONS, MODEL_LATENCY_METRIC, "Average"))

    def _errors(self) -> None:
        spec, names = self._names.spec, self._names
        common: dict[str, Any] = dict(
            alarm_name=names.alarms["5xx-errors"],
            alarm_description=(
                f"{names.endpoint} returned {spec.alarms.errors_5xx} or more 5xx errors {self._window()}"
            ),
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=spec.alarms.errors_5xx,
        )
        if spec.uses_inference_components:
            self._alarm("5xx-errors", **common, **self._per_component(ERRORS_5XX_METRIC, "Sum", "SUM"))
        else:
            self._alarm("5xx-errors", **common, **self._variant_metric(NS_INVOCATIONS, ERRORS_5XX_METRIC, "Sum"))

    def _gpu_memory(self) -> None:
        spec, names = self._names.spec, self._names
        percent = spec.alarms.gpu_memory_percent
        if spec.uses_inference_components:
            metric, threshold = GPU_MEMORY_NORMALIZED_METRIC, percent
            detail = "normalized over the instance's GPUs"
        else:
            # GPUMemoryUtilization adds up the GPUs of an instance (400% on four GPUs): scale the threshold.
            gpus = _gpu_count(spec)
            metric, threshold = GPU_MEMORY_METRIC, percent * gpus
            detail = f"{threshold:g}% summed over {gpus} GPU(s)"
        self._alarm(
            "gpu-memory",
            alarm_name=names.alarms["gpu-memory"],
            alarm_description=(
                f"GPU memory of an instance of {names.endpoint} at or above {percent:g}% ({detail}) {self._window()}"
            ),
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=threshold,
            **self._variant_metric(NS_ENDPOINT_INSTANCES, metric, "Maximum"),
        )

    def _stuck_at_zero(self, c: ComponentNames, component: Resource | None) -> None:
        minutes = self._names.spec.alarms.stuck_at_zero_minutes
        self._alarm(
            f"{c.spec.name}-stuck-at-zero",
            alarm_name=c.stuck_at_zero_alarm,
            alarm_description=(
                f"Requests to {c.name} have failed for lack of capacity for {minutes} minutes in a row: "
                "scale from zero is not bringing a copy up (capacity, quota or a failing container)"
            ),
            namespace=NS_INVOCATIONS,
            metric_name=NO_CAPACITY_METRIC,
            dimensions={"InferenceComponentName": c.name},
            statistic="Sum",
            period=STUCK_AT_ZERO_PERIOD_S,
            evaluation_periods=minutes,
            datapoints_to_alarm=minutes,
            threshold=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            depends_on=[component] if component is not None else None,
        )

    def _component_alarms(self, c: ComponentNames) -> None:
        """The component's own latency and 5xx alarms, on its `InferenceComponentName` metrics: what its
        rolling updates roll back on."""
        spec = self._names.spec
        dims = {"InferenceComponentName": c.name}
        metric: dict[str, Any] = dict(namespace=NS_INVOCATIONS, dimensions=dims, period=spec.alarms.period)
        if "model-latency" in c.alarms:
            threshold_us = spec.alarms.model_latency_ms * MICROSECONDS_PER_MS
            self._alarm(
                f"{c.spec.name}-model-latency",
                alarm_name=c.alarms["model-latency"],
                alarm_description=(
                    f"Average ModelLatency of {c.name} above {spec.alarms.model_latency_ms:g} ms "
                    f"({threshold_us:.0f} microseconds, the metric's unit) {self._window()}; rolls its updates back"
                ),
                comparison_operator="GreaterThanThreshold",
                threshold=threshold_us,
                metric_name=MODEL_LATENCY_METRIC,
                statistic="Average",
                **metric,
            )
        if "5xx-errors" in c.alarms:
            self._alarm(
                f"{c.spec.name}-5xx-errors",
                alarm_name=c.alarms["5xx-errors"],
                alarm_description=(
                    f"{c.name} returned {spec.alarms.errors_5xx} or more 5xx errors {self._window()}; rolls its "
                    "updates back"
                ),
                comparison_operator="GreaterThanOrEqualToThreshold",
                threshold=spec.alarms.errors_5xx,
                metric_name=ERRORS_5XX_METRIC,
                statistic="Sum",
                **metric,
            )

    # ----------------------------------------------------------------------------------------- helpers

    def _window(self) -> str:
        """The evaluation window in words, e.g. "in each of 5 consecutive 60 s periods (5 min)"."""
        alarms = self._names.spec.alarms
        return evaluation_window(alarms.period, alarms.evaluation_periods, alarms.evaluation_periods)

    def _variant_metric(self, namespace: str, metric: str, statistic: str) -> dict:
        return dict(
            namespace=namespace,
            metric_name=metric,
            dimensions={"EndpointName": self._names.endpoint, "VariantName": self._names.variant},
            statistic=statistic,
            period=self._names.spec.alarms.period,
        )

    def _per_component(self, metric: str, stat: str, combine: str) -> dict:
        """Metric math: `combine` (MAX / SUM) over the metric of every component of the endpoint."""
        period = self._names.spec.alarms.period
        queries = [
            MetricQuery(
                id=f"m{i}",
                label=c.name,
                return_data=False,
                metric=MetricQueryMetric(
                    namespace=NS_INVOCATIONS,
                    metric_name=metric,
                    dimensions={"InferenceComponentName": c.name},
                    stat=stat,
                    period=period,
                ),
            )
            for i, c in enumerate(self._names.components)
        ]
        ids = ", ".join(q.id for q in queries)
        queries.append(MetricQuery(id="e", expression=f"{combine}([{ids}])", label=f"{combine} {metric}", return_data=True))
        return dict(metric_query=queries)

    def _alarm(self, id_: str, *, depends_on: list[Resource] | None = None, **props) -> CloudwatchMetricAlarm:
        alarms = self._names.spec.alarms
        props.setdefault("evaluation_periods", alarms.evaluation_periods)
        props.setdefault("datapoints_to_alarm", props["evaluation_periods"])
        if props["alarm_name"] in self._rollback:
            depends_on = []  # referenced by what it watches: it must come first
        alarm = CloudwatchMetricAlarm(
            self,
            id_,
            CloudwatchMetricAlarmProps(
                # An idle endpoint publishes no latency, errors or failures: that is fine, not unknown.
                treat_missing_data="notBreaching",
                alarm_actions=self._actions,
                ok_actions=self._actions,
                tags=self._tags,
                **props,
            ),
            depends_on=self._depends if depends_on is None else depends_on,
        )
        self.alarms[props["alarm_name"]] = alarm
        return alarm


def _gpu_count(spec: EndpointSpec) -> int:
    instance = catalog.get(spec.instance_type)
    # Unknown types are reported by validation; one GPU keeps the threshold as configured.
    return instance.accelerator_count if instance is not None else 1


# --------------------------------------------------------------------------------------------- dashboard


class StackDashboard(Group):
    """One CloudWatch dashboard for every endpoint of the stack (when `dashboard.enabled`).

    Per endpoint: 10-second concurrency (per copy or per model) against the scaling target, copy and
    instance counts, invocations, capacity failures (components) and model latency.
    """

    def __init__(
        self,
        scope: Scope,
        id: str,
        *,
        config: FastscaleConfig,
    ) -> None:
        super().__init__(scope, id)
        self.dashboard: CloudwatchDashboard | None = None
        if not config.dashboard.enabled:
            return
        self.dashboard = CloudwatchDashboard(
            self,
            "dashboard",
            CloudwatchDashboardProps(dashboard_name=dashboard_name(config), dashboard_body=dashboard_body(config)),
        )


def dashboard_body(config: FastscaleConfig) -> str:
    """The dashboard JSON, rendered from templates/dashboard.json.j2 and normalized (compact, checked)."""
    endpoints = []
    for names in all_endpoint_names(config):
        spec = names.spec
        # Copy and instance counts have no metric of their own: every copy / instance reports its utilization
        # once per publish interval, so the sample count over that interval counts them.
        count_period = spec.metrics_publish_frequency or STANDARD_WIDGET_PERIOD_S
        if spec.model is not None:
            workloads = [("target", spec.model.autoscaling)]
        else:
            workloads = [(f"target {c.name}", c.spec.autoscaling) for c in names.components]
        endpoints.append(
            {
                "endpoint": names.endpoint,
                "variant": names.variant,
                "instance_type": spec.instance_type,
                "components": [{"name": c.name} for c in names.components],
                # The scaling target drawn on the concurrency graph (its unit: concurrent requests per copy /
                # per model). With `metric: invocations` the policy tracks another metric, so no line.
                "targets": [
                    {"label": label, "value": a.target_concurrency}
                    for label, a in workloads
                    if a.enabled and a.metric == "high_resolution"
                ],
                "count_period": count_period,
            }
        )
    text = render(
        "dashboard.json.j2",
        region=config.region,
        project=config.project,
        marker=dashboard_marker(config),
        endpoints=endpoints,
        ns_invocations=NS_INVOCATIONS,
        ns_instances=NS_ENDPOINT_INSTANCES,
        ns_copies=NS_COMPONENT_COPIES,
        high_res_period=HIGH_RESOLUTION_WIDGET_PERIOD_S,
        period=STANDARD_WIDGET_PERIOD_S,
    )
    # Parse before handing it to Terraform: a template slip fails synthesis here, not at apply time.
    return json.dumps(json.loads(text), separators=(",", ":"))
