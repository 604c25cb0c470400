import pytest

GOOD = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-for-inference"


def test_reservation_in_the_region_passes(run_rule, single_model):
    single_model["endpoints"][0]["capacity"] = {"reservation_arn": GOOD}
    assert run_rule("FS041", single_model) == []


@pytest.mark.parametrize("arn", [
    "training-plan/p5",  # not an ARN
    "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0abc",  # not SageMaker
    "arn:aws:sagemaker:us-east-1:1234:training-plan/p5",  # account is not 12 digits
    "arn:aws:sagemaker:us-east-1:123456789012:a-much-too-long-type/p5",  # type over 14 characters
])
def test_malformed_arns_fail(run_rule, hits, single_model, arn):
    single_model["endpoints"][0]["capacity"] = {"reservation_arn": arn}
    found = run_rule("FS041", single_model)
    assert hits(found) == [("FS041", "error", "endpoints[0].capacity.reservation_arn")]
    assert "is not an ML reservation ARN" in found[0].message


def test_reservation_in_another_region_fails(run_rule, single_model):
    single_model["endpoints"][0]["capacity"] = {"reservation_arn": GOOD.replace("us-east-1", "us-west-2")}
    (finding,) = run_rule("FS041", single_model)
    assert "us-west-2" in finding.message and "us-east-1" in finding.hint
