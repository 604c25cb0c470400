"""Every resource fastscale synthesizes fits the real provider schemas (aws 6.25.0, awscc 1.106.0).

The typed resource layer writes attribute names by hand; this is what stands between a misspelled or
misshapen attribute and a `terraform plan` that fails in a user's account.
"""

from __future__ import annotations

import json

import pytest

from fastscale.infra.config import load_config, parse_config
from tests.conftest import EXAMPLES
from tests.contract.schema_check import check_stack
from tests.stacks.conftest import synth, variant_configs

VARIANTS = variant_configs()


@pytest.fixture(scope="module")
def stacks(tmp_path_factory):
    root = tmp_path_factory.mktemp("contract")
    out = {p.stem: synth(load_config(p), root / p.stem) for p in EXAMPLES}
    out.update({name: synth(parse_config(data), root / name) for name, data in VARIANTS.items()})
    return out


@pytest.mark.parametrize("name", [p.stem for p in EXAMPLES] + list(VARIANTS))
def test_stack_fits_provider_schemas(stacks, name):
    stack = stacks[name]
    assert check_stack(stack.doc) == {}
    # the check ran over the endpoint's own resources, not an empty document
    assert {"aws_sagemaker_endpoint", "aws_sagemaker_model"} <= set(stack.doc["resource"])


def test_variants_cover_both_configuration_resources_and_all_optional_blocks(stacks):
    """The variants exist to reach what the examples do not (kms_key_arn: examples/inferentia.yaml)."""
    text = json.dumps({name: stacks[name].doc for name in VARIANTS})
    for needle in ('"vpc_config"', '"kms_key_id"', '"max_memory_required_in_mb"',
                   '"Gzip"', '"RANDOM"', '"enable_caching": false', '"s3"', '"volume_size_in_gb"',
                   '"instance_pools"', '"model_name_override"', '"capacity_reservation_config"', '"scale_in_policy"',
                   '"specifications"', '"scheduling_config"', '"variant_instance_provision_timeout_in_seconds"',
                   '"model_access_config"'):
        assert needle in text, needle
    types = {t for name in VARIANTS for t in stacks[name].doc["resource"]}
    assert {"aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config"} <= types
