from __future__ import annotations

import pytest

from fastscale.infra.base import regions


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "af-south-1", "ap-southeast-7", "cn-north-1",
                                    "cn-northwest-1", "us-gov-west-1", "us-gov-east-1"])
def test_real_regions_of_every_supported_partition_pass(run_rule, single_model, region):
    single_model["region"] = region
    assert run_rule("FS075", single_model) == []


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("us-eats-1", "us-east-1"),  # commercial
        ("eu-wset-1", "eu-west-1"),
        ("ap-southeast-7x", "ap-southeast-7"),  # an opt-in region
        ("US-EAST-1", "us-east-1"),
        ("cn-nrth-1", "cn-north-1"),  # China
        ("us-gov-wst-1", "us-gov-west-1"),  # GovCloud
    ],
)
def test_a_misspelt_region_is_an_error_with_the_right_suggestion(run_rule, hits, single_model, typo, meant):
    single_model["region"] = typo
    found = run_rule("FS075", single_model)
    assert hits(found) == [("FS075", "error", "region")]
    assert found[0].hint.startswith(f"did you mean {meant}")
    assert "is not an AWS region" in found[0].message


def test_nothing_close_gets_a_generic_hint(run_rule, single_model):
    single_model["region"] = "mars"
    (finding,) = run_rule("FS075", single_model)
    assert "did you mean" not in finding.hint and "us-east-1" in finding.hint


def test_a_region_of_a_partition_fastscale_does_not_build_for_is_refused(run_rule, single_model):
    single_model["region"] = "us-iso-east-1"  # SageMaker runs there; fastscale's ARNs and hosts do not fit
    (finding,) = run_rule("FS075", single_model)
    assert "aws-iso partition" in finding.message


def test_the_regions_come_from_botocore():
    import boto3

    session = boto3.session.Session()
    expected = {r for p in regions.SUPPORTED_PARTITIONS for r in session.get_available_regions("sagemaker", partition_name=p)}
    assert set(regions.sagemaker_regions()) == expected


def test_s3_state_region_is_checked(run_rule, hits, single_model):
    single_model["state"] = {"backend": "s3", "bucket": "demo-tfstate", "key": "k", "region": "eu-cental-1"}
    found = run_rule("FS075", single_model)
    assert hits(found) == [("FS075", "error", "state.region")]
    assert found[0].hint.startswith("did you mean eu-central-1")
    single_model["state"]["region"] = "eu-central-1"
    assert run_rule("FS075", single_model) == []


def test_an_emulator_project_is_held_to_the_same_regions(run_rule, hits, single_model):
    single_model["endpoint_url"] = "http://localhost:4566"
    single_model["state"] = {"backend": "s3", "bucket": "demo-tfstate", "key": "k", "endpoint_url": "http://localhost:4566"}
    assert run_rule("FS075", single_model) == []
    single_model["region"] = "local"
    assert hits(run_rule("FS075", single_model)) == [("FS075", "error", "region")]
