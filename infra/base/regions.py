"""AWS regions and partitions, from the endpoint data botocore ships (`botocore/data/endpoints.json`).

One place answers "is this a region where SageMaker AI runs", "which partition is it in" and "what is the
closest real region to this typo", so a misspelt region fails `validate` instead of a deploy, and no rule
suggests a host or an ARN in a region that does not exist. The data is read from the installed botocore
(the same file `boto3.session.Session().get_available_regions('sagemaker', partition_name=...)` reads), so
a botocore upgrade brings new regions without a change here. Reading the file directly instead of through
botocore's loader keeps `validate` from importing botocore at all.
"""

from __future__ import annotations

import difflib
import gzip
import importlib.util
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The partitions fastscale builds stacks for: its ARNs, ECR hosts and IAM policies are written for these.
#: botocore also knows the isolated partitions (aws-iso*, aws-eusc); SageMaker runs there, fastscale does not.
SUPPORTED_PARTITIONS = ("aws", "aws-cn", "aws-us-gov")

#: The service key of the SageMaker API in botocore's endpoint data.
_SAGEMAKER_SERVICE = "api.sagemaker"


@dataclass(frozen=True)
class Partition:
    id: str  # aws, aws-cn, aws-us-gov, ...
    name: str  # AWS Standard, AWS China, ...
    dns_suffix: str  # amazonaws.com, amazonaws.com.cn, ...
    region_regex: str
    regions: tuple[str, ...]  # every region of the partition
    sagemaker_regions: tuple[str, ...]  # the regions where the SageMaker API has an endpoint

    @property
    def supported(self) -> bool:
        return self.id in SUPPORTED_PARTITIONS


def _endpoint_data() -> bytes:
    # Located without importing botocore (find_spec does not run the package): `validate` stays light.
    spec = importlib.util.find_spec("botocore")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("botocore is not installed: fastscale needs its endpoint data (pip install boto3)")
    folder = Path(list(spec.submodule_search_locations)[0]) / "data"
    plain = folder / "endpoints.json"
    if plain.is_file():
        return plain.read_bytes()
    return gzip.decompress((folder / "endpoints.json.gz").read_bytes())  # botocore may ship it compressed


@cache
def partitions() -> tuple[Partition, ...]:
    """Every partition botocore knows, with its regions, in botocore's order."""
    data = json.loads(_endpoint_data())
    out = []
    for part in data["partitions"]:
        regions = tuple(sorted(part["regions"]))
        service = part["services"].get(_SAGEMAKER_SERVICE, {}).get("endpoints", {})
        out.append(Partition(
            id=part["partition"],
            name=part["partitionName"],
            dns_suffix=part["dnsSuffix"],
            region_regex=part["regionRegex"],
            regions=regions,
            sagemaker_regions=tuple(r for r in regions if r in service),
        ))
    return tuple(out)


def partition_named(partition_id: str) -> Partition | None:
    return next((p for p in partitions() if p.id == partition_id), None)


def partition_of_region(region: str) -> Partition | None:
    """The partition that lists ``region``, else the one whose region pattern it matches (a typo such as
    `cn-nrth-1` still belongs to aws-cn), else None."""
    for part in partitions():
        if region in part.regions:
            return part
    for part in partitions():
        if re.match(part.region_regex, region):
            return part
    return None


def partition_of(region: str) -> str:
    """The partition id of a region (aws, aws-cn, aws-us-gov, ...); `aws` when nothing matches."""
    part = partition_of_region(region)
    return part.id if part is not None else "aws"


def sagemaker_regions() -> list[str]:
    """Every region of a supported partition where SageMaker AI runs."""
    return [r for p in partitions() if p.supported for r in p.sagemaker_regions]


@cache
def _sagemaker_region_set() -> frozenset[str]:
    return frozenset(sagemaker_regions())


def is_sagemaker_region(region: str) -> bool:
    """A region of a supported partition where SageMaker AI runs: where fastscale can deploy."""
    return region in _sagemaker_region_set()


def is_region(region: str) -> bool:
    """Any region of any partition botocore knows (for services other than SageMaker, such as S3)."""
    return any(region in p.regions for p in partitions())


def suggest(region: str, candidates: list[str] | None = None, n: int = 3) -> list[str]:
    """The closest real regions to a misspelt one (`us-eats-1` -> us-east-1), closest first."""
    pool = candidates if candidates is not None else sagemaker_regions()
    return difflib.get_close_matches(region.strip().lower(), pool, n=n, cutoff=0.6)


def shown(region: str) -> str:
    """The region as hints quote it in ARNs and hosts: itself when real, else a placeholder, so no hint
    names a region that does not exist."""
    return region if is_sagemaker_region(region) else "<region>"


def ecr_host(account: str, region: str) -> str:
    """The private ECR registry host of ``account`` in ``region`` (China's ends in .amazonaws.com.cn)."""
    part = partition_of_region(region)
    suffix = part.dns_suffix if part is not None else "amazonaws.com"
    return f"{account}.dkr.ecr.{region}.{suffix}"
