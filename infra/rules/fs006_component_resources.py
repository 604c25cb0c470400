"""A copy of an inference component must fit on one instance, within the API's limits.

SageMaker places each copy of a component on a single instance, so the devices, memory and CPU cores one
copy reserves can never exceed what one instance has: such a component never gets a copy placed. The
API also has floors (at least 1 accelerator device when set, 128 MB of memory, 0.25 CPU cores) and the
memory ceiling (`max_memory_mb`) cannot be below the floor (`memory_mb`).

Memory is compared with the instance's whole host memory (fastscale's choice: AWS publishes no figure for
what an instance keeps for itself), so a request close to the limit may still not be placeable. CPU instance types are only known by name, so on
those only the accelerator count (zero) is checked.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentComputeResourceRequirements.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import components

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.2xlarge
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 2, memory_mb: 16384}
"""


# Floors of InferenceComponentComputeResourceRequirements in the SageMaker API.
MIN_ACCELERATORS = 1
MIN_MEMORY_MB = 128
MIN_CPUS = 0.25


@stack_rule(
    "FS006",
    "component-resources-do-not-fit",
    Severity.ERROR,
    "A component's accelerators, memory or CPUs per copy exceed one instance or the API's limits.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, ep, comp in components(stack):
        res, rpath, t = comp.workload.resources, f"{path}.resources", ep.instance_type
        assert res is not None, "a component reserves resources"
        if res.accelerators is not None and res.accelerators < MIN_ACCELERATORS:
            yield Hit(
                f"{rpath}.accelerators",
                f"accelerators is {res.accelerators}: the API needs at least {MIN_ACCELERATORS} device per copy when it is set.",
                "set accelerators: 1 or more, or remove the key for a CPU-only component",
            )
        if res.memory_mb < MIN_MEMORY_MB:
            yield Hit(
                f"{rpath}.memory_mb",
                f"memory_mb is {res.memory_mb}: the API needs at least {MIN_MEMORY_MB} MB per copy.",
                f"set memory_mb to at least {MIN_MEMORY_MB} (what the model server needs in host memory)",
            )
        if res.max_memory_mb is not None and res.max_memory_mb < res.memory_mb:
            yield Hit(
                f"{rpath}.max_memory_mb",
                f"max_memory_mb ({res.max_memory_mb}) is below memory_mb ({res.memory_mb}): a copy's memory ceiling "
                "cannot be lower than its reservation.",
                f"set max_memory_mb to {res.memory_mb} or more, or remove it",
            )
        if res.cpus is not None and res.cpus < MIN_CPUS:
            yield Hit(
                f"{rpath}.cpus",
                f"cpus is {fmt_num(res.cpus)}: the API needs at least {MIN_CPUS} CPU cores per copy.",
                f"set cpus to at least {MIN_CPUS}, or remove it",
            )

        if not catalog.is_known_instance_type(t):
            continue  # FS001 reports the instance type; nothing to compare with
        spec = catalog.get(t)
        devices = spec.accelerator_count if spec is not None else 0
        if res.accelerators is not None and res.accelerators > devices:
            yield Hit(
                f"{rpath}.accelerators",
                f"one copy asks for {res.accelerators} accelerator devices but {t} has {devices}: a copy must fit on "
                "one instance, so no copy of this component could ever be placed.",
                f"set accelerators to at most {devices}" if devices else
                "use an accelerator instance type, or remove accelerators for a CPU-only component",
            )
        if spec is None:
            continue  # CPU types: memory and vCPUs are not in the catalog
        instance_mb = int(spec.memory_gib * 1024)
        for key, value in (("memory_mb", res.memory_mb), ("max_memory_mb", res.max_memory_mb)):
            if value is not None and value > instance_mb:
                yield Hit(
                    f"{rpath}.{key}",
                    f"{key} is {value} MB but {t} has {instance_mb} MB ({fmt_num(spec.memory_gib)} GiB) of host memory: "
                    "a copy must fit on one instance, so no copy could be placed.",
                    f"set {key} below {instance_mb} (leave room for SageMaker's own agents), or pick a larger instance type",
                )
        if res.cpus is not None and res.cpus > spec.vcpus:
            yield Hit(
                f"{rpath}.cpus",
                f"cpus is {fmt_num(res.cpus)} but {t} has {spec.vcpus} vCPUs: a copy must fit on one instance, "
                "so no copy could be placed.",
                f"set cpus to at most {spec.vcpus}",
            )
