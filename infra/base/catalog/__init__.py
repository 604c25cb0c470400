"""Accelerator instance catalog: what each SageMaker accelerator instance type offers, and which types exist.

Two committed data files back it:

- ``sagemaker_instance_types.json``: every value of botocore's SageMaker ``ProductionVariantInstanceType`` enum,
  written by ``scripts/update_instance_types.py``. Validation reads this list instead of loading botocore's
  multi-megabyte SageMaker service model, so ``fastscale validate`` stays fast.
- ``accelerators.json``: one entry per GPU / Inferentia / Trainium instance type in that enum (devices, device
  memory, vCPUs, RAM, network, local NVMe, on-demand price), with the sources the figures come from. Its prices
  are one Region's (``price_region``), as of ``as_of``; ``scripts/update_prices.py`` (``make prices``) reads them
  again from the AWS Price List (:mod:`.refresh` rewrites the file).

Both are read on first use and then kept, so importing this module costs nothing.
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = [
    "ACCELERATOR_KINDS",
    "CatalogError",
    "InstanceSpec",
    "all_instances",
    "as_of",
    "check_accelerators",
    "family_of",
    "get",
    "is_accelerator",
    "is_known_instance_type",
    "known_instance_types",
    "price_region",
    "suggest",
]

ACCELERATOR_KINDS = ("nvidia-gpu", "inferentia", "trainium")

_ACCELERATORS_FILE = "accelerators.json"
_INSTANCE_TYPES_FILE = "sagemaker_instance_types.json"


class CatalogError(RuntimeError):
    """The packaged catalog data is malformed: a defect in fastscale, not in the user's configuration."""


@dataclass(frozen=True, slots=True)
class InstanceSpec:
    """One SageMaker accelerator instance type.

    ``accelerator_count`` counts GPUs, or Neuron devices (chips) for Inferentia and Trainium, the unit EC2 reports
    and SageMaker's ``NumberOfAcceleratorDevicesRequired`` names. ``accelerator_memory_gib`` is per device.
    ``network_gbps`` is the "up to" ceiling when ``network_burst`` is true. ``nvme_gb`` is the total local
    instance store (0 when EBS-only). ``price_per_hour_usd`` is SageMaker real-time inference on-demand in
    us-east-1; ``price_is_estimate`` marks types for which no published SageMaker rate was found.
    """

    instance_type: str
    family: str
    accelerator_kind: str
    accelerator_name: str
    accelerator_count: int
    accelerator_memory_gib: float
    vcpus: int
    memory_gib: float
    network_gbps: float
    network_burst: bool
    local_nvme: bool
    nvme_gb: float
    price_per_hour_usd: float
    price_is_estimate: bool

    @property
    def total_accelerator_memory_gib(self) -> float:
        return self.accelerator_count * self.accelerator_memory_gib


def family_of(instance_type: str) -> str:
    """``"ml.g6.2xlarge"`` -> ``"g6"``, ``"ml.p6-b200.48xlarge"`` -> ``"p6-b200"`` (the ``ml.`` prefix is optional)."""
    name = instance_type.strip().lower()
    name = name.removeprefix("ml.")
    family, dot, size = name.partition(".")
    if not family or not dot or not size:
        raise ValueError(f"{instance_type!r} is not an instance type name like 'ml.g6.2xlarge'")
    return family


def get(instance_type: str) -> InstanceSpec | None:
    """The spec of an accelerator instance type, or None for CPU and unknown types."""
    return _specs().get(instance_type)


def all_instances() -> tuple[InstanceSpec, ...]:
    """Every accelerator instance type, sorted by name."""
    return tuple(_specs().values())


def is_accelerator(instance_type: str) -> bool:
    return instance_type in _specs()


def publishes_gpu_metrics(instance_type: str) -> bool:
    """Whether SageMaker publishes GPU utilization metrics (GPUUtilization, GPUMemoryUtilization, ...) for
    the type: NVIDIA GPU instances do; Neuron (Inferentia / Trainium) devices are not GPUs and publish none.
    An unknown type counts as a GPU type (validation reports it on its own)."""
    instance = get(instance_type)
    return instance is None or instance.accelerator_kind == "nvidia-gpu"


def is_known_instance_type(instance_type: str) -> bool:
    """Whether SageMaker accepts this type for an endpoint variant (CPU types included)."""
    return instance_type in known_instance_types()


@functools.cache
def known_instance_types() -> frozenset[str]:
    doc = _read_json(_INSTANCE_TYPES_FILE)
    try:
        values = doc["instance_types"]
    except (KeyError, TypeError) as exc:
        raise CatalogError(f"{_INSTANCE_TYPES_FILE} has no 'instance_types' list") from exc
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise CatalogError(f"{_INSTANCE_TYPES_FILE}: 'instance_types' must be a list of strings")
    return frozenset(values)


def suggest(instance_type: str, n: int = 3) -> list[str]:
    """Known instance types that look like ``instance_type``, best first, for "did you mean" hints."""
    if n <= 0:
        return []
    known = known_instance_types()
    wanted = instance_type.strip().lower()
    if wanted and not wanted.startswith("ml."):
        # A missing prefix is the commonest slip ("g6.2xlarge"); compare against the prefixed name so the
        # intended type ranks first instead of merely close.
        wanted = "ml." + wanted
    if wanted in known and wanted != instance_type:
        rest = difflib.get_close_matches(wanted, sorted(known - {wanted}), n=n - 1, cutoff=0.6)
        return [wanted, *rest]
    return difflib.get_close_matches(wanted, sorted(known - {instance_type}), n=n, cutoff=0.6)


def as_of() -> str:
    """The date the catalog's figures (prices above all) were compiled, ISO format."""
    date: str = _accelerators_doc().as_of
    return date


def price_region() -> str:
    """The AWS Region whose on-demand rates ``price_per_hour_usd`` holds (the catalog has one Region's prices)."""
    region: str = _accelerators_doc().region
    return region


# --- loading -----------------------------------------------------------------------------------------------


def _read_text(name: str) -> str:
    try:
        return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CatalogError(f"catalog data file {name} is missing from the installed package") from exc


def _read_json(name: str) -> Any:
    text = _read_text(name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{name} is not valid JSON: {exc}") from exc


@functools.cache
def _accelerators_doc() -> Any:
    return _parse_accelerators(_read_text(_ACCELERATORS_FILE))


@functools.cache
def _specs() -> dict[str, InstanceSpec]:
    return {spec.instance_type: spec for spec in sorted(_accelerators_doc().instances, key=lambda s: s.instance_type)}


def check_accelerators(text: str) -> None:
    """Raise :class:`CatalogError` unless ``text`` is an ``accelerators.json`` the catalog would load."""
    _parse_accelerators(text)


def _parse_accelerators(text: str) -> Any:
    """Validate ``accelerators.json`` text and return its document (``as_of``, ``instances``, ...).

    pydantic is imported here, not at module import, so a CLI command that never looks at the catalog pays nothing.
    Strict JSON validation rejects a misspelt or missing field and a number written as a string.
    """
    import pydantic

    class _Document(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

        as_of: str
        region: str
        price_basis: str
        sources: list[dict[str, str]]
        notes: list[str]
        excluded_families: dict[str, str]
        price_estimates: dict[str, str]
        instances: list[InstanceSpec]

    try:
        doc = _Document.model_validate_json(text, strict=True)
    except pydantic.ValidationError as exc:
        raise CatalogError(f"{_ACCELERATORS_FILE} is malformed:\n{exc}") from exc

    seen: set[str] = set()
    for spec in doc.instances:
        where = f"{_ACCELERATORS_FILE}: {spec.instance_type}"
        if spec.instance_type in seen:
            raise CatalogError(f"{where} is listed twice")
        seen.add(spec.instance_type)
        if spec.accelerator_kind not in ACCELERATOR_KINDS:
            raise CatalogError(f"{where}: accelerator_kind {spec.accelerator_kind!r} is not one of {ACCELERATOR_KINDS}")
        if spec.family != family_of(spec.instance_type):
            raise CatalogError(f"{where}: family {spec.family!r} does not match the type name")
        # An estimate without its method would be a number nobody can check or refresh.
        if spec.price_is_estimate != (spec.instance_type in doc.price_estimates):
            raise CatalogError(f"{where}: price_is_estimate must be true exactly when price_estimates explains it")
    unknown = set(doc.price_estimates) - seen
    if unknown:
        raise CatalogError(f"{_ACCELERATORS_FILE}: price_estimates names types it does not list: {sorted(unknown)}")
    return doc
