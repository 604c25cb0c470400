"""Which accelerator instance types can run a workload: memory per accelerator, container architecture, price.

One place for the question "what else could this model run on?", asked by the rules (a bigger type when the
model does not fit) and by `explain` (a fallback type when AWS had no capacity):

- **Memory per accelerator.** An inference component copy gets ``resources.accelerators`` devices, and its
  weights must fit in *those* devices: ml.p2.8xlarge has 96 GiB of accelerator memory in total, but a copy
  on one of its accelerators gets one 12 GiB K80, where a 16 GB model does not load. A single-model endpoint
  spreads its model over every device of the instance, so there the instance's total counts.
- **Architecture.** A container is built for CUDA (NVIDIA GPUs) or for the Neuron SDK (AWS Inferentia /
  Trainium), and an image for one does not run on the other. First-generation Inferentia (inf1) uses the
  Neuron SDK, Inferentia2 and Trainium use NeuronX: their images differ too. The image name says which
  (``...-neuronx-...``, ``...-cu128``); without a hint the configured instance type decides.
- **CUDA generation.** CUDA 12 removed support for Kepler GPUs (the K80 of ml.p2), so a CUDA 12 image
  does not run there (CUDA 12.0 release notes, "Kepler architecture support removed").
- **Price.** Cheapest first, from the catalog's on-demand prices, and compared with the configured type
  so a suggestion says truthfully whether it is cheaper or more expensive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from fastscale.infra.base import catalog
from fastscale.infra.config import EndpointSpec, InferenceComponentSpec, ModelSpec

#: Share of the accelerator memory available to a model that its weights may take; the rest is left for the
#: KV cache and activations. vLLM (the LMI default) claims 90% of GPU memory by default, and weights above
#: that leave it no KV cache at all.
WEIGHTS_MAX_SHARE = 0.90

#: A GB as users and model hubs quote weights (10^9 bytes) expressed in GiB, the unit of accelerator memory.
GIB_PER_GB = 1e9 / 2**30

#: Container architectures: what an image is built for.
CUDA, NEURON, NEURONX = "cuda", "neuron", "neuronx"

#: The architecture each accelerator runs (catalog accelerator names).
_ARCHITECTURE_OF_ACCELERATOR = {"AWS Inferentia": NEURON, "AWS Inferentia2": NEURONX, "AWS Trainium": NEURONX,
                                "AWS Trainium2": NEURONX}

#: The newest CUDA major version each GPU still runs (absent: no limit known). CUDA 12.0 release notes:
#: "Kepler architecture support removed".
_LAST_CUDA_MAJOR = {"NVIDIA K80": 11}

_NEURONX_HINT = re.compile(r"neuronx", re.IGNORECASE)
_NEURON_HINT = re.compile(r"neuron", re.IGNORECASE)
# "-cu128", "cu124-", "cuda12.1", "-gpu-": the CUDA builds of the AWS deep learning containers and others.
_CUDA_VERSION = re.compile(r"(?:^|[^a-z0-9])cu(?:da)?-?(\d{2,3})(?:\.\d+)?(?=\Z|[^0-9])", re.IGNORECASE)
_GPU_HINT = re.compile(r"(?:^|[^a-z0-9])(?:gpu|cuda|cu\d{2,3})(?:\Z|[^a-z])", re.IGNORECASE)


def gb_to_gib(gb: float) -> float:
    return gb * GIB_PER_GB


def accelerator_architecture(spec: catalog.InstanceSpec) -> str:
    """The container architecture an instance's accelerators run: cuda, neuron (inf1) or neuronx."""
    if spec.accelerator_kind == "nvidia-gpu":
        return CUDA
    return _ARCHITECTURE_OF_ACCELERATOR.get(spec.accelerator_name, NEURONX)


def image_architecture(image: str | None) -> str | None:
    """What the image name says it is built for, or None when it gives no hint."""
    if not image:
        return None
    name = image.rsplit("/", 1)[-1]  # the repository and tag; the registry host says nothing
    if _NEURONX_HINT.search(name):
        return NEURONX
    if _NEURON_HINT.search(name):
        return NEURON
    if _CUDA_VERSION.search(name) or _GPU_HINT.search(name):
        return CUDA
    return None


def cuda_major(image: str | None) -> int | None:
    """CUDA major version from an image tag such as ``...-cu128`` (12) or ``...cu118...`` (11)."""
    found = _CUDA_VERSION.search((image or "").rsplit("/", 1)[-1])
    if not found:
        return None
    digits = found.group(1)  # "128" -> 12.8, "12" -> 12, "92" -> 9.2
    if len(digits) == 3 or digits.startswith("1"):
        return int(digits[:2])
    return int(digits[0])


@dataclass(frozen=True)
class Need:
    """What one workload needs from an instance type."""

    architecture: str | None  # None: any (the image says nothing and no instance type decides)
    devices: int | None  # accelerators per copy; None: the whole instance (a single-model endpoint)
    weights_gib: float | None  # None: unknown, then at least the memory per device it has now
    min_device_gib: float = 0.0  # used when the weights are unknown
    cuda_major: int | None = None
    host_memory_mib: float = 0.0  # a component copy's reserved host memory (MinMemoryRequiredInMb)
    cpus: float = 0.0  # a component copy's reserved CPU cores

    def fits(self, spec: catalog.InstanceSpec) -> bool:
        if self.architecture is not None and accelerator_architecture(spec) != self.architecture:
            return False
        last = _LAST_CUDA_MAJOR.get(spec.accelerator_name)
        if self.cuda_major is not None and last is not None and self.cuda_major > last:
            return False
        devices = spec.accelerator_count if self.devices is None else self.devices
        if devices < 1 or devices > spec.accelerator_count:
            return False
        if self.host_memory_mib > spec.memory_gib * 1024 or self.cpus > spec.vcpus:
            return False
        if self.weights_gib is None:
            return spec.accelerator_memory_gib >= self.min_device_gib
        return self.weights_gib <= devices * spec.accelerator_memory_gib * WEIGHTS_MAX_SHARE


def need_of(ep: EndpointSpec, workload: ModelSpec | InferenceComponentSpec) -> Need:
    """What ``workload`` needs, judged against the endpoint's configured instance type where the config is silent."""
    current = catalog.get(ep.instance_type)
    arch = image_architecture(workload.image) or (accelerator_architecture(current) if current else None)
    devices = (workload.resources.accelerators or 1) if isinstance(workload, InferenceComponentSpec) else None
    size = workload.model_size_gb
    return Need(
        architecture=arch,
        devices=devices,
        weights_gib=None if size is None else gb_to_gib(size),
        min_device_gib=current.accelerator_memory_gib if current else 0.0,
        cuda_major=cuda_major(workload.image) if arch == CUDA else None,
        host_memory_mib=workload.resources.memory_mb if isinstance(workload, InferenceComponentSpec) else 0.0,
        cpus=(workload.resources.cpus or 0.0) if isinstance(workload, InferenceComponentSpec) else 0.0,
    )


def types_that_fit(needs: Iterable[Need], *, exclude: Iterable[str] = ()) -> list[catalog.InstanceSpec]:
    """Catalog types that satisfy every need, cheapest first (name breaks a tie)."""
    wanted, skip = list(needs), set(exclude)
    fits = [s for s in catalog.all_instances() if s.instance_type not in skip and all(n.fits(s) for n in wanted)]
    return sorted(fits, key=lambda s: (s.price_per_hour_usd, s.instance_type))


def cheapest_instance_for(weights_gib: float, architecture: str) -> str | None:
    """The cheapest type of this architecture whose accelerators together hold the weights with headroom."""
    found = types_that_fit([Need(architecture=architecture, devices=None, weights_gib=weights_gib)])
    return found[0].instance_type if found else None


@dataclass(frozen=True)
class Candidate:
    """A type that could stand in for the configured one, and how its price compares."""

    instance_type: str
    price_per_hour_usd: float
    configured: str
    configured_price: float | None

    @property
    def comparison(self) -> str:
        """'cheaper', 'more expensive' or 'the same price' than the configured type (on-demand, us-east-1)."""
        if self.configured_price is None:
            return "price not comparable"
        if self.price_per_hour_usd < self.configured_price:
            return "cheaper"
        if self.price_per_hour_usd > self.configured_price:
            return "more expensive"
        return "the same price"

    @property
    def price_note(self) -> str:
        """'$1.408/h, more expensive than ml.g6.2xlarge at $1.222/h'."""
        if self.configured_price is None:
            return f"${self.price_per_hour_usd:g}/h"
        than = "as" if self.comparison == "the same price" else "than"
        return f"${self.price_per_hour_usd:g}/h, {self.comparison} {than} {self.configured} at ${self.configured_price:g}/h"

    def describe(self) -> str:
        """'ml.g5.xlarge ($1.408/h, more expensive than ml.g6.2xlarge at $1.222/h)'."""
        return f"{self.instance_type} ({self.price_note})"


def fallback_candidates(ep: EndpointSpec, *, exclude: Iterable[str] = (), n: int = 3) -> list[Candidate]:
    """Types that run every workload of the endpoint (per-accelerator memory, architecture), cheapest first.

    The configured type and ``exclude`` (pools already configured) are left out; so is another size of the
    configured family, which usually shares its capacity shortage.
    """
    current = catalog.get(ep.instance_type)
    needs = [need_of(ep, w) for _, w in ep.workloads()]
    if not needs:
        return []
    family = current.family if current else None
    out = [s for s in types_that_fit(needs, exclude=[ep.instance_type, *exclude]) if s.family != family]
    return [Candidate(s.instance_type, s.price_per_hour_usd, ep.instance_type,
                      current.price_per_hour_usd if current else None) for s in out[:n]]
