"""FS031: an EBS-backed instance type without a customer managed KMS key."""

from __future__ import annotations

KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def test_nvme_type_or_a_key_passes(run_rule, single_model):
    assert run_rule("FS031", single_model) == []  # ml.g6.2xlarge: local NVMe, no volume to encrypt
    ep = single_model["endpoints"][0]
    ep["instance_type"], ep["kms_key_arn"] = "ml.inf2.8xlarge", KEY
    assert run_rule("FS031", single_model) == []


def test_ebs_type_without_a_key_is_a_warning(run_rule, hits, single_model):
    single_model["endpoints"][0]["instance_type"] = "ml.inf2.8xlarge"  # Inferentia2: EBS only
    found = run_rule("FS031", single_model)
    assert hits(found) == [("FS031", "warning", "endpoints[0].kms_key_arn")]
    assert "set kms_key_arn" in found[0].hint and "us-east-1" in found[0].hint
