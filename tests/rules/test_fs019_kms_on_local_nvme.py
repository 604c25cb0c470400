KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def test_kms_on_ebs_only_type_passes(run_rule, single_model):
    assert run_rule("FS019", single_model) == []  # no key at all
    ep = single_model["endpoints"][0]
    ep["instance_type"], ep["kms_key_arn"] = "ml.inf2.8xlarge", KEY  # Inferentia2: EBS only
    assert run_rule("FS019", single_model) == []


def test_kms_on_nvme_type_is_an_error(run_rule, hits, single_model):
    single_model["endpoints"][0]["kms_key_arn"] = KEY  # ml.g6.2xlarge has local NVMe
    found = run_rule("FS019", single_model)
    assert hits(found) == [("FS019", "error", "endpoints[0].kms_key_arn")]
    assert "remove kms_key_arn" in found[0].hint
