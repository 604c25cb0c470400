"""Helpers shared by the rule modules: walking the config with exact paths (for the rules on what it says as
written), units and numbers in messages.

Kept private (leading underscore) so the registry does not import it as a rule module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from fastscale.infra.base.aws_facts import METRICS_PUBLISH_FREQUENCIES
from fastscale.infra.config import EndpointSpec, FastscaleConfig, InferenceComponentSpec, ModelOverride, ModelSpec
from fastscale.infra.model import capacity, instance_fit
from fastscale.infra.model.capacity import Pool

#: A single model or an inference component: what rules about serving apply to.
Workload = ModelSpec | InferenceComponentSpec

#: SageMaker's pattern for endpoint, endpoint-configuration, model and inference-component names.
SAGEMAKER_NAME_RE = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*")

#: MetricsConfig.MetricPublishFrequencyInSeconds values the API accepts.
VALID_FREQUENCIES = METRICS_PUBLISH_FREQUENCIES

#: A GB as users and model hubs quote weights (10^9 bytes) expressed in GiB, the unit of accelerator memory.
GIB_PER_GB = instance_fit.GIB_PER_GB


def endpoints(config: FastscaleConfig) -> Iterator[tuple[str, EndpointSpec]]:
    """(path, endpoint) for every endpoint, e.g. ('endpoints[0]', spec)."""
    for i, ep in enumerate(config.endpoints):
        yield f"endpoints[{i}]", ep


def workloads(config: FastscaleConfig) -> Iterator[tuple[str, EndpointSpec, Workload]]:
    """(path, endpoint, workload) for every single model and every inference component.

    The path names the workload itself: 'endpoints[0].model' or 'endpoints[1].inference_components[2]'.
    """
    for ep_path, ep in endpoints(config):
        for sub, workload in ep.workloads():
            yield f"{ep_path}.{sub}", ep, workload


def fallback_pools(config: FastscaleConfig) -> Iterator[tuple[str, EndpointSpec, Pool]]:
    """(path, endpoint, capacity.Pool) for every fallback pool; the path names the pool entry,
    e.g. 'endpoints[0].capacity.fallback[1]'."""
    for ep_path, ep in endpoints(config):
        for pool in capacity.pools(ep)[1:]:
            yield f"{ep_path}.{pool.path}", ep, pool


def environments(config: FastscaleConfig) -> Iterator[tuple[str, dict[str, str]]]:
    """(path, environment) for every container environment the stack writes: each workload's own, and
    each fallback pool's override for it, e.g. 'endpoints[0].capacity.fallback[1].model.environment'."""
    for path, _ep, workload in workloads(config):
        yield f"{path}.environment", dict(workload.environment)
    for ep_path, ep in endpoints(config):
        for i, pool in enumerate(ep.capacity.fallback):
            pool_path = f"{ep_path}.capacity.fallback[{i}]"
            if pool.model is not None and pool.model.environment is not None:
                yield f"{pool_path}.model.environment", dict(pool.model.environment)
            for name, override in pool.components.items():
                if override.environment is not None:
                    yield f"{key_path(f'{pool_path}.components', name)}.environment", dict(override.environment)


def artifact_holders(config: FastscaleConfig) -> Iterator[tuple[str, Workload | ModelOverride]]:
    """(path, holder) for every place an `image` or `model_data` is written: each workload, and each fallback
    pool's override of it, e.g. 'endpoints[0].capacity.fallback[1].components.chat'. An override's unset
    keys are None (inherited)."""
    for path, _ep, workload in workloads(config):
        yield path, workload
    for ep_path, ep in endpoints(config):
        for i, pool in enumerate(ep.capacity.fallback):
            pool_path = f"{ep_path}.capacity.fallback[{i}]"
            if pool.model is not None:
                yield f"{pool_path}.model", pool.model
            for name, override in pool.components.items():
                yield key_path(f"{pool_path}.components", name), override


def config_strings(
    config: FastscaleConfig, wanted: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, str | None, str]]:
    """(path, key, text) for every string of the config: each field's value, and each mapping's keys and
    values (tags, environment, secrets, overrides). ``key`` is the mapping key when ``text`` is that key
    itself, else None. Defaults are included: they are written like anything else. With ``wanted``, only
    the strings it accepts; a path is spelled only for those, so a config of thousands of entries is
    walked quickly."""
    # Each node of the dumped config (plain dicts and lists) is (parent node, key or list index).
    nodes: list[tuple[int, str | int]] = [(-1, "")]

    def path_of(node: int) -> str:
        parts: list[str | int] = []
        while node > 0:
            node, part = nodes[node]
            parts.append(part)
        path = ""
        for part in reversed(parts):
            path = f"{path}[{part}]" if isinstance(part, int) else (key_path(path, part) if path else part)
        return path

    stack: list[tuple[int, object]] = [(0, config.model_dump())]
    while stack:
        node, value = stack.pop()
        if isinstance(value, str):
            if wanted is None or wanted(value):
                yield path_of(node), None, value
        elif isinstance(value, dict):
            for key, item in value.items():
                nodes.append((node, key))
                if wanted is None or wanted(key):
                    yield path_of(len(nodes) - 1), key, key
                stack.append((len(nodes) - 1, item))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                nodes.append((node, i))
                stack.append((len(nodes) - 1, item))


def key_path(parent: str, key: str) -> str:
    """Path of a user-chosen mapping key: dotted when it is a plain identifier, quoted otherwise."""
    if key.isascii() and key.isidentifier():  # [A-Za-z_][A-Za-z0-9_]*, without a regex: called per string
        return f"{parent}.{key}"
    return f'{parent}["{key}"]'


gb_to_gib = instance_fit.gb_to_gib


def fmt_num(x: float) -> str:
    """1.0 -> '1', 0.25 -> '0.25': numbers in messages read like the YAML the user wrote."""
    return f"{x:g}"


def fmt_amount(x: float, decimals: int = 1) -> str:
    """A computed quantity with fixed decimals, or three significant digits once it is absurdly large
    (1e300 GB must read as 9.31e+299 GiB, not as a 300-digit number)."""
    return f"{x:.{decimals}f}" if abs(x) < 1e9 else f"{x:.3g}"


# --------------------------------------------------------------------------------------------- model fit

#: Share of the accelerator memory a model's weights may take (one definition, in infra.model.instance_fit).
WEIGHTS_MAX_SHARE = instance_fit.WEIGHTS_MAX_SHARE


def cheapest_instance_for(weights_gib: float, architecture: str) -> str | None:
    """The cheapest catalog type whose accelerators together hold the weights with headroom and run containers
    of ``architecture`` (infra.model.instance_fit decides, for every caller)."""
    return instance_fit.cheapest_instance_for(weights_gib, architecture)

