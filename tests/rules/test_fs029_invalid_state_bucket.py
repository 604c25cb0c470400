import pytest


def _s3(data, bucket):
    data["state"] = {"backend": "s3", "bucket": bucket, "key": "demo/terraform.tfstate"}
    return data


@pytest.mark.parametrize("bucket", ["team-terraform-state", "abc", "state.example.com", "a" * 63])
def test_valid_buckets_pass(run_rule, single_model, bucket):
    assert run_rule("FS029", _s3(single_model, bucket)) == []


def test_local_state_is_not_checked(run_rule, single_model):
    assert run_rule("FS029", single_model) == []


@pytest.mark.parametrize(
    ("bucket", "why"),
    [
        ("s3://team-state", "without s3://"),
        ("team-state/prefix", "without s3://"),
        ("ab", "3 to 63"),
        ("a" * 64, "3 to 63"),
        ("Team_State", "lowercase"),
        ("-state", "start and end"),
        ("team-state\n", "start and end"),
        ("state..bucket", "adjacent dots"),
        ("192.168.1.10", "IP address"),
        ("xn--state", "'xn--'"),
        ("state-s3alias", "'-s3alias'"),
    ],
)
def test_invalid_buckets_are_errors(run_rule, hits, single_model, bucket, why):
    found = run_rule("FS029", _s3(single_model, bucket))
    assert hits(found) == [("FS029", "error", "state.bucket")]
    assert why in found[0].message


def test_hint_suggests_the_bare_name(run_rule, single_model):
    (finding,) = run_rule("FS029", _s3(single_model, "s3://team-state/env/prod"))
    assert finding.hint.endswith("bucket: team-state")
