"""A local AWS emulator for rehearsing a deploy: moto's server, answering as AWS does where moto does not.

``fastscale emulator`` runs it in the foreground; the end-to-end tests run the same server in a thread. It
is moto (``pip install 'fastscale[emulator]'``) with these differences, each checked against moto 5.2.5 and
botocore's service models (docs/emulator.md has them as a table, with the AWS source of each):

- **Members AWS leaves out.** moto answers optional structures and lists that were never set as ``{}`` or
  ``[]`` (``VpcConfig`` and ``Containers`` on DescribeModel, ``DataCaptureConfig`` on DescribeEndpointConfig
  and DescribeEndpoint, ...). AWS leaves them out: an empty ``DataCaptureConfig`` on DescribeEndpoint is not
  even a valid ``DataCaptureConfigSummary`` (four of its members are required), and the SageMaker Python
  SDK 3.x fails on it; the aws provider reads an empty block as one the config lacks and plans to replace
  the model and the endpoint configuration. Every SageMaker ``Describe*`` answer here leaves out a member
  that is empty, unless the service model marks it required (:func:`without_empty`).
- **AWS's defaults.** ``ProductionVariant.InitialVariantWeight`` "defaults to 1.0" (API reference), so
  DescribeEndpointConfig answers 1.0 for a variant created without it, and DescribeEndpoint's variants carry
  ``CurrentWeight`` / ``DesiredWeight`` (equal outside an UpdateEndpointWeightsAndCapacities), and the
  variant's ``ManagedInstanceScaling`` and ``RoutingConfig`` as configured; a set data capture is answered as
  the ``DataCaptureConfigSummary`` AWS answers, not as the request's structure. ``PrimaryContainer.Mode`` is
  ``SingleModel``, its documented default, when the model was made without one (as the SageMaker Python SDK
  makes it). The table in docs/emulator.md lists what is not filled, and why.
- **Application Auto Scaling tags.** moto accepts ``RegisterScalableTarget`` but drops its ``Tags`` and has
  no ``TagResource``, ``UntagResource`` or ``ListTagsForResource``. The hashicorp/aws provider reads a
  scalable target's tags after creating it, so without them the create fails half-way and every later
  refresh fails too. Here a target keeps the tags it was registered with (only when it is created, as
  AWS documents for ``RegisterScalableTarget.Tags``) and the three tag calls work on it; an ARN that
  names no target is ``ResourceNotFoundException``, as in the API reference.
- **Endpoint configuration ARNs.** moto 5.2.5 keeps an endpoint configuration's ARN as a one-element tuple,
  so the Resource Groups Tagging API (``GetResources``, which the SageMaker Python SDK 3.x's resource reuse
  calls to find what it made by its ``sagemaker.amazonaws.com/model-source`` tag) answers
  ``"('arn:...',)"`` for it. Here it is the ARN, as AWS answers it and DescribeEndpointConfig does.
- **UpdateEndpoint.** moto has none; the provider calls it to move an endpoint to a new endpoint
  configuration. Here the endpoint runs the named configuration and its variants at once, as AWS does once
  an update has finished, and it fails as AWS's does when the update would change the instance type of a
  variant registered as an auto scaling target ("If the update would change the instance type for any
  model that is a target for auto scaling, the update fails", SageMaker developer guide,
  endpoint-scaling-update).
- **DescribeScalingActivities** (moto has none): an empty list. Nothing in the emulator scales (no metric
  moves, no alarm fires), so no activity is ever recorded; a real account's history is what `explain` reads.
- **DescribeAlarmHistory** (moto has none): the state changes made with SetAlarmState, recorded as AWS
  records them (``StateUpdate`` items with the old and new state in ``HistoryData``); the emulator's alarms
  change state in no other way.
- **A call the emulator does not implement** is answered with ``UnknownOperationException`` (``InvalidAction``
  for query-protocol services), HTTP 400 as AWS answers an unknown operation, and a message naming the call
  (``the emulator does not implement ...``), instead of moto's HTTP 500 page that reads like an AWS outage.
  Service Quotas is one such API (moto has no ListServiceQuotas): fastscale's quota preflight says the
  emulator has none. A service moto has no backend for at all (Cloud Control) is still moto's HTTP 500.

Everything else is moto's own behaviour (docs/emulator.md lists what cannot be rehearsed). The additions are
methods on moto's response classes, installed by :func:`extended` for as long as a server runs; the
end-to-end tests use this same server.

This module imports moto only inside its functions: fastscale itself does not need it.
"""

from __future__ import annotations

import errno
import importlib
import json
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# The credentials a client of the emulator uses (any work): the ones fastscale sends to every endpoint URL.
from fastscale.infra.base.credentials import DUMMY_CREDENTIALS

#: The extra that installs the emulator, and the command that installs it.
EXTRA = "emulator"
INSTALL_COMMAND = "pip install 'fastscale[emulator]'"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5000  # moto's own default
#: Region a client of the emulator uses.
DEFAULT_REGION = "us-east-1"


class EmulatorUnavailable(Exception):
    """moto's server is not installed: the message names the install command."""


def require_moto() -> None:
    """Raise :class:`EmulatorUnavailable` unless moto's server (and its web framework) can be imported."""
    try:
        importlib.import_module("moto.server")
        importlib.import_module("flask")
    except ImportError as exc:
        raise EmulatorUnavailable(
            f"the emulator needs moto's server, which is not installed ({exc.name or exc}): run {INSTALL_COMMAND}"
        ) from None


# --------------------------------------------------------------------------------------------- additions

#: What the emulator answers a call it does not implement with (HTTP 400, as AWS answers an unknown operation);
#: query-protocol services (IAM, STS) call the same thing ``InvalidAction``.
NOT_IMPLEMENTED_CODE = "UnknownOperationException"
NOT_IMPLEMENTED_QUERY_CODE = "InvalidAction"
#: The start of that answer's message.
NOT_IMPLEMENTED_MESSAGE = "the emulator does not implement"
#: ``ProductionVariant.InitialVariantWeight`` when a variant is created without one: "If unspecified, it
#: defaults to 1.0" (SageMaker API reference, ProductionVariant).
DEFAULT_VARIANT_WEIGHT = 1.0
#: ``ContainerDefinition.Mode`` when a model is created without one (API reference, ContainerDefinition).
DEFAULT_CONTAINER_MODE = "SingleModel"
#: The role a SageMaker scalable target registered without ``RoleARN`` runs with: Application Auto Scaling's
#: service-linked role for SageMaker (Application Auto Scaling user guide, service-linked role ARN reference).
SAGEMAKER_SCALING_ROLE = ("arn:aws:iam::{account}:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
                          "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint")
_SUSPENDED = ("DynamicScalingInSuspended", "DynamicScalingOutSuspended", "ScheduledScalingSuspended")
#: The variant's own settings AWS answers on DescribeEndpoint's ProductionVariantSummary as configured.
_SUMMARY_FROM_CONFIG = ("ManagedInstanceScaling", "RoutingConfig")


def _json_error(code: str, message: str) -> Exception:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError(code, message)


def _service_error(code: str, message: str) -> Exception:
    """An error moto serializes in the protocol of the service that was called (defined here, outside moto's
    packages, so that moto does not look for a service model named after the module)."""
    from moto.core.exceptions import ServiceException

    class EmulatorError(ServiceException):
        pass

    return EmulatorError(code, message)


def not_implemented_message(service: str, operation: str) -> str:
    """The message of the answer to a call the emulator does not implement."""
    return f"{NOT_IMPLEMENTED_MESSAGE} {operation} ({service}); it answers only what moto and fastscale emulate"


def _call_action(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """moto's dispatch, with a clear "not implemented" error where moto raises NotImplementedError (an HTTP 500
    page in its server, which reads like an outage)."""

    def call_action(self: Any) -> Any:
        from moto.core.responses import ActionResult
        from moto.core.utils import get_service_model

        try:
            return original(self)
        except NotImplementedError:
            model = get_service_model(self.boto3_service_name)
            operation = self._get_action()
            code = NOT_IMPLEMENTED_QUERY_CODE if model.protocol == "query" else NOT_IMPLEMENTED_CODE
            error = _service_error(code, not_implemented_message(model.service_id or model.service_name, operation))
            with warnings.catch_warnings():  # moto warns that the code is not one of the service's modelled errors
                warnings.simplefilter("ignore", UserWarning)
                _, headers, body = self.serialized(ActionResult(error))
            return 400, headers, body

    return call_action


# -- Application Auto Scaling


def _targets(backend: Any) -> Iterator[Any]:
    for by_resource in backend.targets.values():
        yield from by_resource.values()


def _target_by_arn(backend: Any, arn: str) -> Any:
    for target in _targets(backend):
        if target.arn == arn:
            return target
    raise _json_error("ResourceNotFoundException", f"No scalable target found for ARN {arn}")


def _tags_of(target: Any) -> dict[str, str]:
    tags: dict[str, str] | None = getattr(target, "fastscale_tags", None)
    if tags is None:
        tags = {}
        target.fastscale_tags = tags
    return tags


def _register_scalable_target(original: Callable[[Any], str]) -> Callable[[Any], str]:
    def register(self: Any) -> str:
        backend = self.applicationautoscaling_backend
        key = (self._get_param("ScalableDimension"), self._get_param("ResourceId"))
        existed = any((t.scalable_dimension, t.resource_id) == key for t in _targets(backend))
        answer = original(self)
        if not existed:  # AWS applies Tags only when the target is created
            target = _target_by_arn(backend, json.loads(answer)["ScalableTargetARN"])
            _tags_of(target).update(self._get_param("Tags") or {})
        return answer

    return register


def _tag_resource(self: Any) -> str:
    target = _target_by_arn(self.applicationautoscaling_backend, self._get_param("ResourceARN"))
    _tags_of(target).update(self._get_param("Tags") or {})
    return "{}"


def _untag_resource(self: Any) -> str:
    target = _target_by_arn(self.applicationautoscaling_backend, self._get_param("ResourceARN"))
    tags = _tags_of(target)
    for key in self._get_param("TagKeys") or []:
        tags.pop(key, None)
    return "{}"


def _list_tags_for_resource(self: Any) -> str:
    target = _target_by_arn(self.applicationautoscaling_backend, self._get_param("ResourceARN"))
    return json.dumps({"Tags": dict(_tags_of(target))})


def _describe_scaling_activities(self: Any) -> str:
    """No activity: nothing in the emulator scales, so there is none to record (see the module docstring)."""
    if not self._get_param("ServiceNamespace"):
        raise _json_error("ValidationException", "ServiceNamespace is required")
    return json.dumps({"ScalingActivities": []})


def _without_nulls(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _scalable_target(target: dict[str, Any], account: str) -> dict[str, Any]:
    """One target as AWS answers it: the service-linked role SageMaker targets run with when none was given,
    and scaling not suspended unless it was (moto answers both as ``null``)."""
    out = _without_nulls(target)
    if target.get("ServiceNamespace") == "sagemaker":
        out.setdefault("RoleARN", SAGEMAKER_SCALING_ROLE.format(account=account))
    out.setdefault("SuspendedState", dict.fromkeys(_SUSPENDED, False))
    return out


def _describe_scalable_targets(original: Callable[[Any], str]) -> Callable[[Any], str]:
    def describe(self: Any) -> str:
        body = _without_nulls(json.loads(original(self)))
        body["ScalableTargets"] = [_scalable_target(t, self.current_account) for t in body["ScalableTargets"]]
        return json.dumps(body)

    return describe


def _describe_scaling_policies(original: Callable[[Any], str]) -> Callable[[Any], str]:
    """moto's answer without the ``null`` ``NextToken`` it writes on the last page (AWS leaves it out)."""

    def describe(self: Any) -> str:
        return json.dumps(_without_nulls(json.loads(original(self))))

    return describe


# -- SageMaker


def registered_variants(account: str, region: str) -> set[str]:
    """The resource ids (``endpoint/<endpoint>/variant/<variant>``) registered as scalable targets."""
    from moto.applicationautoscaling.models import applicationautoscaling_backends

    backend = applicationautoscaling_backends[account][region]
    return {t.resource_id for t in _targets(backend) if t.service_namespace == "sagemaker"}


def _instance_types(config: dict[str, Any]) -> dict[str, str | None]:
    return {v["VariantName"]: v.get("InstanceType") for v in config["ProductionVariants"]}


def _update_endpoint(self: Any) -> Any:
    """UpdateEndpoint: the endpoint now runs the named configuration, its variants and its data capture (what
    DescribeEndpoint then answers, as AWS's does), unless the update changes the instance type of a variant
    registered for auto scaling, which AWS refuses."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.exceptions import ValidationError

    backend = self.sagemaker_backend
    name = self._get_param("EndpointName")
    backend.describe_endpoint(name)  # moto's own "Could not find endpoint" error
    endpoint = backend.endpoints[name]
    config = backend.describe_endpoint_config(self._get_param("EndpointConfigName"))
    old = _instance_types(backend.describe_endpoint_config(endpoint.endpoint_config_name))
    registered = registered_variants(self.current_account, self.region)
    for variant, instance_type in _instance_types(config).items():
        if variant in old and old[variant] != instance_type and f"endpoint/{name}/variant/{variant}" in registered:
            raise ValidationError(
                f"The update would change the instance type of variant {variant}, which is a target for auto "
                "scaling: deregister the variant as a scalable target before the update")
    endpoint.endpoint_config_name = config["EndpointConfigName"]
    endpoint.production_variants = endpoint._process_production_variants(config["ProductionVariants"])
    endpoint.data_capture_config = config.get("DataCaptureConfig") or {}
    endpoint.last_modified_time = _now()
    return ActionResult({"EndpointArn": endpoint.arn})


def _now() -> Any:
    from moto.core.utils import utcnow

    return utcnow()


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == []


def without_empty(value: Any, shape: Any) -> Any:
    """``value`` (an answer, shaped by the botocore ``shape``) without the members that are ``None``, ``{}``,
    ``[]`` or, for a structure, empty in every member, at any depth; members the shape marks required stay."""
    if shape.type_name == "structure" and isinstance(value, dict):
        out = {}
        for key, member in value.items():
            member_shape = shape.members.get(key)
            kept = without_empty(member, member_shape) if member_shape is not None else member
            if not _empty(kept) or key in shape.required_members:
                out[key] = kept
        return out
    if shape.type_name == "list" and isinstance(value, list):
        return [without_empty(item, shape.member) for item in value]
    return value


def _edited(original: Callable[[Any], Any], edit: Callable[[Any, dict[str, Any]], dict[str, Any]]) -> Callable[[Any], Any]:
    """moto's describe call, its answer's body changed by ``edit(response, body)``, then without empty members."""

    def describe(self: Any) -> Any:
        from moto.core.responses import ActionResult
        from moto.core.utils import get_service_model

        result = original(self)
        body = getattr(result, "result", None)
        if not isinstance(body, dict):
            return result
        shape = get_service_model(self.boto3_service_name).operation_model(self._get_action()).output_shape
        return ActionResult(without_empty(edit(self, body), shape))

    return describe


def _model_answer(self: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``PrimaryContainer.Mode`` as AWS answers it when the model was made without one."""
    container = body.get("PrimaryContainer")
    if not isinstance(container, dict) or "Mode" in container:
        return body
    return {**body, "PrimaryContainer": {"Mode": DEFAULT_CONTAINER_MODE, **container}}


def _with_weight(variant: dict[str, Any]) -> dict[str, Any]:
    return variant if "InitialVariantWeight" in variant else {**variant, "InitialVariantWeight": DEFAULT_VARIANT_WEIGHT}


def _config_answer(self: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Every variant with its weight, as AWS answers a variant created without one."""
    return {**body, "ProductionVariants": [_with_weight(v) for v in body.get("ProductionVariants") or []]}


def _capture_summary(capture: dict[str, Any]) -> dict[str, Any]:
    """A configuration's ``DataCaptureConfig`` as DescribeEndpoint's ``DataCaptureConfigSummary``."""
    enabled = capture.get("EnableCapture", True)  # "defaults to enabled" (API reference, DataCaptureConfig)
    summary = {"EnableCapture": enabled, "CaptureStatus": "Started" if enabled else "Stopped",
               "CurrentSamplingPercentage": capture.get("InitialSamplingPercentage"),
               "DestinationS3Uri": capture.get("DestinationS3Uri"), "KmsKeyId": capture.get("KmsKeyId")}
    return {k: v for k, v in summary.items() if v is not None}


def _endpoint_answer(self: Any, body: dict[str, Any]) -> dict[str, Any]:
    """DescribeEndpoint's variants with the weights and settings of the configuration the endpoint runs, and
    its data capture as the summary AWS answers."""
    config = self.sagemaker_backend.endpoint_configs.get(body.get("EndpointConfigName"))
    configured = {v["VariantName"]: v for v in (config.production_variants if config is not None else [])}
    variants = []
    for summary in body.get("ProductionVariants") or []:
        source = _with_weight(configured.get(summary["VariantName"], {}))
        weight = source["InitialVariantWeight"]
        extra = {k: source[k] for k in _SUMMARY_FROM_CONFIG if k in source}
        variants.append({**summary, "CurrentWeight": weight, "DesiredWeight": weight, **extra})
    answer = {**body, "ProductionVariants": variants}
    capture = body.get("DataCaptureConfig")
    if capture:
        answer["DataCaptureConfig"] = _capture_summary(capture)
    return answer


#: SageMaker describe calls fastscale, Terraform's provider and the SDKs read: response method -> its edit.
_DESCRIBE_EDITS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "describe_model": _model_answer,
    "describe_endpoint_config": _config_answer,
    "describe_endpoint": _endpoint_answer,
}


def _endpoint_config_init(original: Callable[..., None]) -> Callable[..., None]:
    """moto's endpoint configuration with its ARN as a string (moto 5.2.5 stores a one-element tuple)."""

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.arn = self.endpoint_config_arn

    return init


# -- CloudWatch


def _history(backend: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] | None = getattr(backend, "fastscale_history", None)
    if items is None:
        items = []
        backend.fastscale_history = items
    return items


def _set_alarm_state(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """SetAlarmState, recorded in the alarm's history as AWS records a state change."""

    def set_state(self: Any) -> Any:
        backend = self.cloudwatch_backend
        name = self._get_param("AlarmName")
        alarm = backend.alarms.get(name)
        old = getattr(alarm, "state_value", None)
        answer = original(self)
        new, reason = self._get_param("StateValue"), self._get_param("StateReason")
        when = _timestamp(_now())
        _history(backend).append({
            "AlarmName": name, "AlarmType": "MetricAlarm", "Timestamp": when, "HistoryItemType": "StateUpdate",
            "HistorySummary": f"Alarm updated from {old} to {new}",
            "HistoryData": json.dumps({"version": "1.0", "oldState": {"stateValue": old},
                                       "newState": {"stateValue": new, "stateReason": reason}}),
        })
        return answer

    return set_state


def _describe_alarm_history(self: Any) -> Any:
    """The recorded state changes, filtered as the call asks (one page)."""
    from moto.core.responses import ActionResult

    name, kind = self._get_param("AlarmName"), self._get_param("HistoryItemType")
    start, end = self._get_param("StartDate"), self._get_param("EndDate")
    items = [i for i in _history(self.cloudwatch_backend)
             if (not name or i["AlarmName"] == name) and (not kind or i["HistoryItemType"] == kind)
             and (start is None or i["Timestamp"] >= _timestamp(start))
             and (end is None or i["Timestamp"] <= _timestamp(end))]
    if self._get_param("ScanBy") != "TimestampAscending":
        items.reverse()  # newest first unless asked otherwise, as AWS answers
    return ActionResult({"AlarmHistoryItems": items})


def _timestamp(value: Any) -> Any:
    from datetime import UTC, datetime

    if isinstance(value, datetime):  # moto's own clock is naive UTC
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _additions() -> list[tuple[Any, str, Callable[..., Any]]]:
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse as Aas
    from moto.cloudwatch.responses import CloudWatchResponse
    from moto.core.responses import BaseResponse
    from moto.sagemaker.models import FakeEndpointConfig
    from moto.sagemaker.responses import SageMakerResponse

    return [
        (BaseResponse, "call_action", _call_action(BaseResponse.call_action)),
        (Aas, "register_scalable_target", _register_scalable_target(Aas.register_scalable_target)),
        (Aas, "tag_resource", _tag_resource),
        (Aas, "untag_resource", _untag_resource),
        (Aas, "list_tags_for_resource", _list_tags_for_resource),
        (Aas, "describe_scaling_activities", _describe_scaling_activities),
        (Aas, "describe_scalable_targets", _describe_scalable_targets(Aas.describe_scalable_targets)),
        (Aas, "describe_scaling_policies", _describe_scaling_policies(Aas.describe_scaling_policies)),
        (SageMakerResponse, "update_endpoint", _update_endpoint),
        (FakeEndpointConfig, "__init__", _endpoint_config_init(FakeEndpointConfig.__init__)),
        *((SageMakerResponse, name, _edited(getattr(SageMakerResponse, name), edit))
          for name, edit in _DESCRIBE_EDITS.items()),
        (CloudWatchResponse, "set_alarm_state", _set_alarm_state(CloudWatchResponse.set_alarm_state)),
        (CloudWatchResponse, "describe_alarm_history", _describe_alarm_history),
    ]


_MISSING = object()
_lock = threading.Lock()
_depth = 0
_saved: list[tuple[Any, str, Any]] = []


@contextmanager
def extended() -> Iterator[None]:
    """moto with fastscale's additions while the block runs (nested blocks share one installation)."""
    global _depth
    require_moto()
    with _lock:
        if _depth == 0:
            for cls, name, method in _additions():
                _saved.append((cls, name, cls.__dict__.get(name, _MISSING)))
                setattr(cls, name, method)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for cls, name, original in reversed(_saved):
                    if original is _MISSING:
                        delattr(cls, name)
                    else:
                        setattr(cls, name, original)
                _saved.clear()


# --------------------------------------------------------------------------------------------- server


#: How many hosts' backends the emulator's dispatcher remembers (a client sends a handful: one per service and region).
_HOSTS_REMEMBERED = 256


def _dispatcher(create_app: Callable[..., Any]) -> Any:
    """moto's WSGI dispatcher that remembers which of moto's backends serves a host. moto looks that up again for
    every request, listing the directory of its package and matching the host against each service's URL
    patterns, always with the same answer for a host: 600 SageMaker and Application Auto Scaling calls from boto3
    in the emulator's process took 3.4 s of CPU with the lookups, 2.4 s without them. The Host header is the
    client's to choose: at most :data:`_HOSTS_REMEMBERED` hosts are kept, any further one is looked up each time."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    class Dispatcher(DomainDispatcherApplication):
        def __init__(self, create_app: Callable[..., Any]) -> None:
            super().__init__(create_app)
            self.backends: dict[str | None, Any] = {}

        def get_backend_for_host(self, host: str | None) -> Any:  # called under the dispatcher's lock
            if host in self.backends:
                return self.backends[host]
            backend = super().get_backend_for_host(host)
            if len(self.backends) < _HOSTS_REMEMBERED:
                self.backends[host] = backend
            return backend

    return Dispatcher(create_app)


@dataclass
class Emulator:
    """moto's server with fastscale's additions, bound to ``host``:``port`` (0: any free port).

    :meth:`bind` opens the socket (a port in use is an ``OSError`` there, not a hang); :meth:`serve_forever`
    then serves in the calling thread, :meth:`start` in a background thread."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    _server: Any = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _stack: Any = field(default=None, repr=False)

    def bind(self) -> Emulator:
        from contextlib import ExitStack

        from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        stack = ExitStack()
        stack.enter_context(extended())
        try:
            self._server = make_server(self.host, self.port, _dispatcher(create_backend_app),
                                       threaded=True, request_handler=MotoRequestHandler)
        except SystemExit:  # werkzeug exits (after printing why) when the address is in use
            stack.close()
            raise OSError(errno.EADDRINUSE, f"{self.host}:{self.port} is already in use") from None
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        self.port = int(self._server.server_port)
        return self

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def serve_forever(self) -> None:
        if self._server is None:
            self.bind()
        self._server.serve_forever()

    def start(self) -> Emulator:
        if self._server is None:
            self.bind()
        self._thread = threading.Thread(target=self._server.serve_forever, name="fastscale-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
                self._thread.join()
            self._server.server_close()
            self._server = None
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def environment(url: str, region: str = DEFAULT_REGION) -> dict[str, str]:
    """The environment a shell needs to use the emulator: fastscale's target, dummy credentials, a region.

    ``FASTSCALE_ENDPOINT_URL`` is what fastscale's ``--endpoint-url`` reads (a config's ``endpoint_url``
    does the same); ``AWS_ENDPOINT_URL`` points the AWS CLI and SDKs of the same shell at it too."""
    return {
        "FASTSCALE_ENDPOINT_URL": url,
        "AWS_ENDPOINT_URL": url,
        **DUMMY_CREDENTIALS,
        "AWS_DEFAULT_REGION": region,
    }


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "EXTRA",
    "INSTALL_COMMAND",
    "NOT_IMPLEMENTED_CODE",
    "NOT_IMPLEMENTED_MESSAGE",
    "NOT_IMPLEMENTED_QUERY_CODE",
    "Emulator",
    "EmulatorUnavailable",
    "environment",
    "extended",
    "require_moto",
]
