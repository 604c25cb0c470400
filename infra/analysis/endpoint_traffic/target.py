"""Which live endpoint (and inference component) ``--from-endpoint`` reads, and which workload of the file its
traffic is replayed on.

``--from-endpoint NAME`` is the endpoint's name in AWS, or the name of an endpoint of the file (whose name in
AWS fastscale knows: ``infra.model.naming``). ``--component C`` names a component of the file; its metrics are
read under its name in AWS.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastscale.infra.analysis.endpoint_traffic.capture import TrafficInputError
from fastscale.infra.config import EndpointSpec, FastscaleConfig
from fastscale.infra.model.naming import component_name_of, endpoint_name_of


@dataclass(frozen=True)
class LiveTarget:
    endpoint: str  # the endpoint's name in AWS
    component: str | None  # the inference component's name in AWS (its metrics are per component)
    config_endpoint: str | None  # the workload to replay the traffic on: the file's endpoint ...
    config_component: str | None  # ... and component
    components_on_endpoint: int  # inference components of the file's endpoint (0: single model, or unknown)
    notes: tuple[str, ...] = ()


def _matching(config: FastscaleConfig, name: str) -> EndpointSpec | None:
    return next((ep for ep in config.endpoints if name in (ep.name, endpoint_name_of(config.project, ep))), None)


def live_target(config: FastscaleConfig, name: str, endpoint: str | None = None, component: str | None = None) -> LiveTarget:
    """The live names to read and the file's workload to replay on; TrafficInputError when they disagree."""
    name = name.strip()
    if not name:
        raise TrafficInputError("give the endpoint's name", "--from-endpoint")
    ep = _matching(config, name)
    notes: list[str] = []
    if ep is not None:
        live = endpoint_name_of(config.project, ep)
        if endpoint is not None and endpoint != ep.name:
            raise TrafficInputError(
                f"{name} is the file's endpoint {ep.name!r}, not --endpoint {endpoint!r}: leave --endpoint out or "
                "make them agree", "--endpoint")
    else:
        live = name
        if endpoint is not None:
            ep = next((e for e in config.endpoints if e.name == endpoint), None)
        elif len(config.endpoints) == 1:
            ep = config.endpoints[0]
        if ep is not None:
            notes.append(f"{name} is not an endpoint of the file: its traffic is replayed on the file's endpoint "
                         f"{ep.name!r}")
    if ep is None:
        return LiveTarget(live, None, endpoint, component, 0, tuple(notes))
    if not ep.inference_components:
        if component is not None:
            raise TrafficInputError(f"the file's endpoint {ep.name!r} hosts a single model, not inference component "
                                    f"{component!r}", "--component")
        return LiveTarget(live, None, ep.name, None, 0, tuple(notes))
    names = [c.name for c in ep.inference_components]
    if component is None:
        if len(names) > 1:
            raise TrafficInputError(f"{ep.name!r} hosts {len(names)} inference components ({', '.join(names)}): choose "
                                    "the one whose traffic to read with --component", "--component")
        component = names[0]
    chosen = next((c for c in ep.inference_components if c.name == component), None)
    if chosen is None:
        raise TrafficInputError(f"no inference component {component!r} on the file's endpoint {ep.name!r} (components: "
                                f"{', '.join(names)})", "--component")
    return LiveTarget(live, component_name_of(config.project, chosen), ep.name, chosen.name, len(names), tuple(notes))
