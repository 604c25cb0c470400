"""A local AWS emulator for rehearsing a deploy: moto's server, plus what fastscale needs that moto lacks.

``fastscale emulator`` runs it in the foreground; the end-to-end tests run the same server in a thread. It
is moto (``pip install 'fastscale[emulator]'``) with five differences, each checked against moto 5.2.5:

- **Application Auto Scaling tags.** moto accepts ``RegisterScalableTarget`` but drops its ``Tags`` and has
  no ``TagResource``, ``UntagResource`` or ``ListTagsForResource``. The hashicorp/aws provider reads a
  scalable target's tags after creating it, so without them the create fails half-way and every later
  refresh fails too. Here a target keeps the tags it was registered with (only when it is created, as
  AWS documents for ``RegisterScalableTarget.Tags``) and the three tag calls work on it; an ARN that
  names no target is ``ResourceNotFoundException``, as in the API reference.
- **UpdateEndpoint.** moto has none; the provider calls it to move an endpoint to a new endpoint
  configuration. Here the endpoint runs the named configuration and its variants at once, as AWS does once
  an update has finished.
- **Empty optional structures.** moto answers a model made without a VPC with an empty ``VpcConfig``, and
  an endpoint configuration without data capture with an empty ``DataCaptureConfig``; AWS leaves both out.
  The provider reads each as a block the config lacks and, since neither can change in place, plans to
  replace the model (under the same name) and the endpoint configuration on every deploy. Here they are
  left out, as AWS does (``_OMITTED_WHEN_EMPTY``).
- **The container's mode.** moto leaves ``PrimaryContainer.Mode`` out of ``DescribeModel`` when the model
  was made without one (as the SageMaker Python SDK makes it); AWS answers ``SingleModel``, its default
  (API reference, ``ContainerDefinition.Mode``). The provider reads a missing mode as a change that forces a
  new model, so a model made outside Terraform and imported (``fastscale adopt``) would plan a replacement a
  real account does not get. Here the default is answered.
- **Service Quotas.** moto answers ``ListServiceQuotas`` with an HTTP 500 page (not implemented), which
  reads like an AWS outage. Here it is ``UnknownOperationException`` saying the emulator has no Service
  Quotas API, so fastscale's quota preflight says that instead.

Everything else is moto's own behaviour (docs/emulator.md lists what cannot be rehearsed). The additions are
methods on moto's response classes, installed by :func:`extended` for as long as a server runs.

This module imports moto only inside its functions: fastscale itself does not need it.
"""

from __future__ import annotations

import errno
import importlib
import json
import threading
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
#: What the emulator answers a Service Quotas call with (also what fastscale's preflight recognises).
NO_QUOTAS_CODE = "UnknownOperationException"
NO_QUOTAS_MESSAGE = "this AWS emulator has no Service Quotas API"


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


def _json_error(code: str, message: str) -> Exception:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError(code, message)


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


def _update_endpoint(self: Any) -> Any:
    """UpdateEndpoint: the endpoint now runs the named configuration and its variants."""
    from moto.core.responses import ActionResult

    backend = self.sagemaker_backend
    name = self._get_param("EndpointName")
    backend.describe_endpoint(name)  # moto's own "Could not find endpoint" error
    endpoint = backend.endpoints[name]
    config = backend.describe_endpoint_config(self._get_param("EndpointConfigName"))
    endpoint.endpoint_config_name = config["EndpointConfigName"]
    endpoint.production_variants = endpoint._process_production_variants(config["ProductionVariants"])
    return ActionResult({"EndpointArn": endpoint.arn})


#: Optional structures moto answers empty where AWS leaves them out: describe call -> their fields.
_OMITTED_WHEN_EMPTY = {
    "describe_model": ("VpcConfig",),
    "describe_endpoint_config": ("DataCaptureConfig", "AsyncInferenceConfig", "ExplainerConfig"),
}


def _edited(original: Callable[[Any], Any], edit: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Callable[[Any], Any]:
    """moto's describe call, its answer changed by `edit` (the body -> a new body, or None to keep it)."""

    def describe(self: Any) -> Any:
        from moto.core.responses import ActionResult

        result = original(self)
        body = getattr(result, "result", None)
        changed = edit(body) if isinstance(body, dict) else None
        return result if changed is None else ActionResult(changed)

    return describe


def _leave_out_empty(fields: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """The answer without the `fields` moto gives empty (`{}`, or every member empty)."""

    def edit(body: dict[str, Any]) -> dict[str, Any] | None:
        empty = [f for f in fields if isinstance(body.get(f), dict) and not any(body[f].values())]
        return {k: v for k, v in body.items() if k not in empty} if empty else None

    return edit


def _with_default_mode(body: dict[str, Any]) -> dict[str, Any] | None:
    """The answer with the primary container's ``Mode`` AWS gives when none was set."""
    container = body.get("PrimaryContainer")
    if not isinstance(container, dict) or "Mode" in container:
        return None
    return {**body, "PrimaryContainer": {"Mode": "SingleModel", **container}}


def _no_service_quotas(self: Any) -> str:
    raise _json_error(NO_QUOTAS_CODE, f"{NO_QUOTAS_MESSAGE}: ListServiceQuotas is not emulated")


def _additions() -> list[tuple[Any, str, Callable[..., Any]]]:
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse
    from moto.sagemaker.responses import SageMakerResponse
    from moto.servicequotas.responses import ServiceQuotasResponse

    return [
        (ApplicationAutoScalingResponse, "register_scalable_target",
         _register_scalable_target(ApplicationAutoScalingResponse.register_scalable_target)),
        (ApplicationAutoScalingResponse, "tag_resource", _tag_resource),
        (ApplicationAutoScalingResponse, "untag_resource", _untag_resource),
        (ApplicationAutoScalingResponse, "list_tags_for_resource", _list_tags_for_resource),
        (SageMakerResponse, "update_endpoint", _update_endpoint),
        (SageMakerResponse, "describe_model", _edited(_edited(
            SageMakerResponse.describe_model, _leave_out_empty(_OMITTED_WHEN_EMPTY["describe_model"])),
            _with_default_mode)),
        (SageMakerResponse, "describe_endpoint_config", _edited(
            SageMakerResponse.describe_endpoint_config, _leave_out_empty(_OMITTED_WHEN_EMPTY["describe_endpoint_config"]))),
        (ServiceQuotasResponse, "list_service_quotas", _no_service_quotas),
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

        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        stack = ExitStack()
        stack.enter_context(extended())
        try:
            self._server = make_server(self.host, self.port, DomainDispatcherApplication(create_backend_app),
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
    "NO_QUOTAS_CODE",
    "NO_QUOTAS_MESSAGE",
    "Emulator",
    "EmulatorUnavailable",
    "environment",
    "extended",
    "require_moto",
]
