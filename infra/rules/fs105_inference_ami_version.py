"""`inference_ami_version` must be an AMI SageMaker has, on an instance family that AMI serves.

`inference_ami_version` is the variant's InferenceAmiVersion: which AMI (NVIDIA driver and CUDA, or Neuron
driver) the endpoint's instances run. botocore's ProductionVariantInferenceAmiVersion lists the values and the
SageMaker API reference (ProductionVariant, InferenceAmiVersion) says what each is: the `gpu` AMIs NVIDIA
driver 535 / CUDA 12.2 (gpu-2, gpu-2-1), 550 / 12.4 (gpu-3-1), 580 / 13.0 (gpu-4-1), and `neuron-2` (Neuron
driver 2.19) for "Inferentia2 and Trainium". The instance families each AMI serves are one table,
`INFERENCE_AMIS` in `infra/base/aws_facts.py`, with its sources:

- gpu-2 and gpu-2-1: the families AWS lists, ml.g4dn, ml.g5, ml.g6, ml.p3, ml.p4d, ml.p4de and ml.p5 (the API
  reference's "Supported instance types" for gpu-2, as published from August 2024 to February 2025; the
  developer guide's GPU-driver table, sagemaker/latest/dg/inference-gpu-drivers.html, puts gpu-2-1 on the
  same driver-535 row);
- neuron-2: Inferentia2 and Trainium, so ml.inf2, ml.trn1, ml.trn1n and ml.trn2, not ml.inf1;
- gpu-3-1 and gpu-4-1: AWS's API reference names no families, only "Accelerator: GPU". fastscale's choice:
  the NVIDIA families whose GPUs the AMI's driver runs. Kepler (ml.p2's K80) left NVIDIA's drivers after the
  470 branch and Blackwell needs 570 or newer, so gpu-4-1 serves every NVIDIA family but ml.p2, and gpu-3-1
  neither ml.p2 nor the Blackwell families (ml.g7, ml.g7e, ml.p6-b200, ml.p6-b300, ml.p6e-gb200). A
  refusal here is certain (the driver cannot run the GPU); a family the driver runs but SageMaker does not
  offer the AMI on passes, and CreateEndpointConfig refuses it at deploy.

The message names the AMI, the instance type's family and the families the AMI serves, and the hint the
AMIs that serve the family. One AMI serves the whole variant, fallback instance types included, so each of
them is checked. A type missing from fastscale's accelerator catalog is left to FS001/FS002.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from fastscale.infra.base import aws_facts, catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

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


def _families(ami: aws_facts.InferenceAmi) -> str:
    return ", ".join(f"ml.{family}.*" for family in ami.families)


@stack_rule("FS105", "inference-ami-version", Severity.ERROR,
            "inference_ami_version is not a SageMaker inference AMI, or not one for the instance type's family.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    amis = aws_facts.INFERENCE_AMIS
    for ep in stack.endpoints:
        path, name = ep.path, ep.inference_ami_version
        if name is None:
            continue
        ami = amis.get(name)
        if ami is None:
            close = difflib.get_close_matches(name, list(amis), n=1)
            yield Hit(
                f"{path}.inference_ami_version",
                f"{name!r} is not an InferenceAmiVersion SageMaker accepts, so the deploy would fail.",
                (f"did you mean {close[0]}? " if close else "") + f"one of: {', '.join(amis)}",
            )
            continue
        for pool in ep.pools:
            spec = catalog.get(pool.instance_type)
            if spec is None or spec.family in ami.families:
                continue
            whose = "AWS lists" if ami.aws_lists_families else "fastscale allows (the AMI's driver runs their GPUs)"
            why = (f"{name} serves the instance families {_families(ami)} ({whose}), and {pool.instance_type} "
                   f"({pool.path}) is ml.{spec.family}.*")
            if spec.accelerator_kind not in ami.accelerators:
                why += f", with {spec.accelerator_kind} accelerators: its instances could not start."
            elif ami.aws_lists_families:
                why += ": AWS does not list the AMI for that family."
            else:
                why += f", whose {spec.accelerator_name} GPUs the AMI's NVIDIA driver does not run."
            fitting = [other for other, entry in amis.items() if spec.family in entry.families]
            use = f"use one of {', '.join(fitting)}, or " if fitting else ""
            yield Hit(f"{path}.inference_ami_version", why,
                      f"{use}leave inference_ami_version unset for SageMaker's default")
