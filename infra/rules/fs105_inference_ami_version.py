"""`inference_ami_version` must be an AMI SageMaker has, for the instance type AWS lists it for.

`inference_ami_version` is the variant's InferenceAmiVersion: which AMI (NVIDIA driver and CUDA, or Neuron
driver) the endpoint's instances run. botocore's ProductionVariantInferenceAmiVersion lists the values; the
SageMaker API reference (ProductionVariant, InferenceAmiVersion) says what each is for: the `gpu` AMIs
(driver 535 / CUDA 12.2, 550 / 12.4, 580 / CUDA 13.0) for NVIDIA GPU instances, `neuron-2` (Neuron driver
2.19) for "Inferentia2 and Trainium" only, so ml.inf2, ml.trn1, ml.trn1n and ml.trn2 and not ml.inf1. Where
AWS lists the instance families of an AMI, the type must be in a listed family: gpu-2 "Supported instance
types: ml.g4dn.*, ml.g5.*, ml.g6.*, ml.p3.*, ml.p4d.*, ml.p4de.*, ml.p5.*" (the same reference, as published
from August 2024 to February 2025), and gpu-2-1, on the same driver-535 row of the developer guide's "Best
practices to minimize interruptions during GPU driver upgrades" (sagemaker/latest/dg/inference-gpu-drivers.html).
For gpu-3-1 and gpu-4-1 the current reference lists no families and fastscale checks only that the type is an
NVIDIA GPU type: see that page for their families. One AMI serves the whole variant, fallback instance types
included, so each of them is checked. A type missing from fastscale's accelerator catalog is left to
FS001/FS002.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from fastscale.infra.base import aws_facts, catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model import capacity
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.inf2.xlarge
    inference_ami_version: al2-ami-sagemaker-inference-gpu-3-1
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


def _fits(ami: str, spec: catalog.InstanceSpec) -> bool:
    """Whether AWS documents `ami` for the instance type: its accelerator, and its family where AWS lists them."""
    families = aws_facts.INFERENCE_AMI_FAMILIES[ami]
    return spec.accelerator_kind in aws_facts.INFERENCE_AMI_ACCELERATORS[ami] and (
        families is None or spec.family in families)


@rule("FS105", "inference-ami-version", Severity.ERROR,
      "inference_ami_version is not a SageMaker inference AMI, or not one for the instance type's accelerator.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    amis = aws_facts.INFERENCE_AMI_ACCELERATORS
    for path, ep in endpoints(config):
        ami = ep.inference_ami_version
        if ami is None:
            continue
        if ami not in amis:
            close = difflib.get_close_matches(ami, list(amis), n=1)
            yield Hit(
                f"{path}.inference_ami_version",
                f"{ami!r} is not an InferenceAmiVersion SageMaker accepts, so the deploy would fail.",
                (f"did you mean {close[0]}? " if close else "") + f"one of: {', '.join(amis)}",
            )
            continue
        for pool in capacity.pools(ep):
            spec = catalog.get(pool.instance_type)
            if spec is None:
                continue
            if _fits(ami, spec):
                continue
            families = aws_facts.INFERENCE_AMI_FAMILIES[ami]
            fitting = [name for name in amis if _fits(name, spec)]
            if spec.accelerator_kind not in amis[ami]:
                why = (f"{ami} is an AMI for {' / '.join(amis[ami])} instances, and {pool.instance_type} "
                       f"({pool.path}) has {spec.accelerator_kind} accelerators: its instances could not start.")
            else:
                why = (f"AWS lists {ami} for the instance families {', '.join(f'ml.{f}.*' for f in families or ())}, "
                       f"and {pool.instance_type} ({pool.path}) is not among them: SageMaker does not support it there.")
            use = f"use one of {', '.join(fitting)}, or " if fitting else ""
            yield Hit(f"{path}.inference_ami_version", why,
                      f"{use}leave inference_ami_version unset for SageMaker's default")
