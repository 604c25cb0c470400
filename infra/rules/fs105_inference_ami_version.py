"""`inference_ami_version` must be an AMI SageMaker has, for the instance's kind of accelerator.

`inference_ami_version` is the variant's InferenceAmiVersion: which AMI (NVIDIA driver and CUDA, or Neuron
driver) the endpoint's instances run. botocore's ProductionVariantInferenceAmiVersion lists the values, and
its documentation the accelerator each is for: the `gpu` AMIs (driver 535 / CUDA 12.2, 550 / 12.4,
580 / CUDA 13.0) for NVIDIA GPU instances, `neuron-2` (Neuron driver 2.19) for Inferentia2 and Trainium
(SageMaker API reference, ProductionVariant; "Best practices to minimize interruptions during GPU driver
upgrades" in the SageMaker developer guide for the instance families of each driver). One AMI serves the whole
variant, fallback instance types included, so each of them is checked. A type missing from fastscale's
accelerator catalog is left to FS001/FS002.
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
            if spec is None or spec.accelerator_kind in amis[ami]:
                continue
            fitting = [name for name, kinds in amis.items() if spec.accelerator_kind in kinds]
            yield Hit(
                f"{path}.inference_ami_version",
                f"{ami} is an AMI for {' / '.join(amis[ami])} instances, and {pool.instance_type} "
                f"({pool.path}) has {spec.accelerator_kind} accelerators: its instances could not start.",
                f"use one of {', '.join(fitting)}, or leave inference_ami_version unset for SageMaker's default",
            )
