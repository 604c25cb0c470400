import pytest

from fastscale.infra.base.limits import MAX_VOLUME_GB
from fastscale.infra.rules.fs060_image_larger_than_storage import instance_storage_gb


def test_realistic_image_passes(run_rule, single_model):
    single_model["endpoints"][0]["model"]["image_size_gb"] = 17.7  # the LMI container
    assert run_rule("FS060", single_model) == []


def test_storage_is_the_instance_store_or_the_largest_volume():
    # the larger of the instance store and the largest ML volume: the bound never refuses a possible image
    assert instance_storage_gb("ml.g6.2xlarge") == MAX_VOLUME_GB  # 450 GB NVMe
    assert instance_storage_gb("ml.g6.12xlarge") == 3760  # 4 x 940 GB NVMe
    assert instance_storage_gb("ml.inf2.xlarge") == MAX_VOLUME_GB  # EBS only
    assert instance_storage_gb("ml.m5.large") is None


@pytest.mark.parametrize("size", [1e300, 100_000])
def test_image_beyond_storage_is_an_error(run_rule, hits, components, size):
    components["endpoints"][0]["inference_components"][1]["image_size_gb"] = size
    findings = run_rule("FS060", components)
    assert hits(findings) == [("FS060", "error", "endpoints[0].inference_components[1].image_size_gb")]
    assert "ml.g6.12xlarge" in findings[0].message and "could never be pulled" in findings[0].message
